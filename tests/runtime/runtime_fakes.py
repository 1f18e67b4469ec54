"""Fake plugins, builders and a private registry for the runtime tests (not a test module).

``InjPlugin`` mirrors upstream's framework_test.go TestPlugin: every extension point method returns an
injected status code (``None`` = success). Frameworks are built from KubeSchedulerConfiguration dicts
whose profile disables every default (``multiPoint.disabled: ["*"]``) and enables exactly the plugins a
test names at exactly the points it names, through a private Registry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore, PreFilterResult
from scheduling_framework.registry import Registry
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.status import Code, Status

API_VERSION = "kubescheduler.config.k8s.io/v1"
INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"
SCORE_FAILURE_REASON = "injecting failure."
ERR_REASON_FAKE = "Nodes failed the fake plugin"

QUEUE_SORT = "PrioritySort"
DEFAULT_BINDER = "DefaultBinder"

# Extension point key -> (method name, upstream point name used in messages).
POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
          "permit", "preBind", "bind", "postBind")


def status(code: Code | None, reason: str = INJECT_REASON) -> Status | None:
    """An injected status: None for "not injected" (success as Go's nil), else Status(code, reason)."""
    if code is None:
        return None
    return Status(code, reason)


class InjPlugin:
    """Implements every extension point; each returns the code injected for it (None = success).

    Records every call in ``calls`` as (point, detail) so tests can check order and skipping.
    """

    def __init__(self, name: str, **inj: Any) -> None:
        self.name = name
        self.inj = inj
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def _rec(self, point: str, detail: str = "") -> None:
        with self._lock:
            self.calls.append((point, detail))

    def points_called(self) -> list[str]:
        return [p for p, _ in self.calls]

    # PreEnqueue / QueueSort
    def pre_enqueue(self, pod: Pod) -> Status | None:
        self._rec("PreEnqueue", pod.name)
        return status(self.inj.get("pre_enqueue"))

    def less(self, a: Any, b: Any) -> bool:
        return False

    # PreFilter + extensions
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        self._rec("PreFilter", pod.name)
        return self.inj.get("pre_filter_result"), status(self.inj.get("pre_filter"))

    def pre_filter_extensions(self) -> InjPlugin:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        self._rec("AddPod", pi.pod.name)
        return status(self.inj.get("add_pod"))

    def remove_pod(self, state: CycleState, pod: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        self._rec("RemovePod", pi.pod.name)
        return status(self.inj.get("remove_pod"))

    # Filter / PostFilter
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self._rec("Filter", node_info.name)
        per_node = self.inj.get("filter_nodes")
        if per_node is not None:
            return status(per_node.get(node_info.name), self.inj.get("filter_reason", INJECT_FILTER_REASON))
        return status(self.inj.get("filter"), INJECT_FILTER_REASON)

    def post_filter(self, state: CycleState, pod: Pod, m: Mapping[str, Status]) -> tuple[Any, Status | None]:
        self._rec("PostFilter", pod.name)
        return self.inj.get("post_filter_result"), status(self.inj.get("post_filter"))

    # PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        self._rec("PreScore", pod.name)
        return status(self.inj.get("pre_score"))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        self._rec("Score", node_info.name)
        code = self.inj.get("score")
        if code is not None and code != Code.SUCCESS:
            return 0, Status(code, SCORE_FAILURE_REASON)
        per_node = self.inj.get("score_nodes")
        if per_node is not None:
            return per_node[node_info.name], None
        return self.inj.get("score_res", 0), None

    def score_extensions(self) -> InjPlugin | None:
        return self if self.inj.get("normalize_ext") else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        self._rec("NormalizeScore", pod.name)
        code = self.inj.get("normalize")
        if code is not None and code != Code.SUCCESS:
            return Status(code, SCORE_FAILURE_REASON)
        for ns in scores:
            ns.score = self.inj.get("normalize_res", 0)
        return None

    # Reserve / Permit
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._rec("Reserve", node_name)
        return status(self.inj.get("reserve"))

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._rec("Unreserve", node_name)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        self._rec("Permit", node_name)
        return status(self.inj.get("permit")), self.inj.get("permit_timeout", 0.0)

    # PreBind / Bind / PostBind
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._rec("PreBind", node_name)
        return status(self.inj.get("pre_bind"))

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._rec("Bind", node_name)
        return status(self.inj.get("bind"))

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._rec("PostBind", node_name)

    def __repr__(self) -> str:
        return f"InjPlugin({self.name!r})"


class Journal:
    """A shared, ordered log of plugin calls across several plugins."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def add(self, plugin: str, what: str) -> None:
        with self._lock:
            self.entries.append((plugin, what))

    def of(self, what: str) -> list[str]:
        return [p for p, w in self.entries if w == what]


class ReservePlugin:
    """Reserve/Unreserve recording into a shared Journal; ``fail`` makes Reserve return that code."""

    def __init__(self, name: str, journal: Journal, fail: Code | None = None) -> None:
        self.name = name
        self.journal = journal
        self.fail = fail

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.journal.add(self.name, "Reserve")
        return status(self.fail)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.journal.add(self.name, "Unreserve")


# --- registries and configs ------------------------------------------------------------------


def base_registry() -> Registry:
    reg = Registry()
    reg.register(QUEUE_SORT, "plugins_intree.queuesort.plugin:PrioritySort")
    reg.register(DEFAULT_BINDER, "plugins_intree.defaultbinder.plugin:DefaultBinder")
    return reg


def instance_factory(plugin: Any) -> Callable[[Any, Any], Any]:
    def factory(args: Any, handle: Any) -> Any:
        return plugin

    return factory


PointSpec = Mapping[str, Sequence[Any]]


def _name_of(entry: Any) -> str:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, tuple):
        return _name_of(entry[0])
    return str(entry.name)


def config(points: PointSpec, *, plugin_config: Iterable[Mapping[str, Any]] = (),
           percentage_of_nodes_to_score: int | None = None, profile_percentage: int | None = None,
           scheduler_name: str = "default-scheduler", extra_profiles: Sequence[Mapping[str, Any]] = (),
           queue_sort: bool = True, bind: bool = True) -> dict[str, Any]:
    """A KubeSchedulerConfiguration dict: every default disabled, then exactly ``points`` enabled.

    ``points`` maps a point key ("filter", "score", ...) to plugin instances, names, or (plugin, weight).
    PrioritySort and DefaultBinder are added at queueSort / bind unless the test names its own.
    """
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    for key, entries in points.items():
        enabled = []
        for e in entries:
            item: dict[str, Any] = {"name": _name_of(e)}
            if isinstance(e, tuple):
                item["weight"] = e[1]
            enabled.append(item)
        plugins[key] = {"enabled": enabled}
    if queue_sort and "queueSort" not in points:
        plugins["queueSort"] = {"enabled": [{"name": QUEUE_SORT}]}
    if bind and "bind" not in points:
        plugins["bind"] = {"enabled": [{"name": DEFAULT_BINDER}]}
    prof: dict[str, Any] = {"schedulerName": scheduler_name, "plugins": plugins}
    pcs = list(plugin_config)
    if pcs:
        prof["pluginConfig"] = pcs
    if profile_percentage is not None:
        prof["percentageOfNodesToScore"] = profile_percentage
    cfg: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration",
                           "profiles": [prof, *extra_profiles]}
    if percentage_of_nodes_to_score is not None:
        cfg["percentageOfNodesToScore"] = percentage_of_nodes_to_score
    return cfg


def registry_for(points: PointSpec, extra: Iterable[tuple[str, Any]] = ()) -> Registry:
    """The base registry plus every plugin instance named in ``points`` (each registered once)."""
    reg = base_registry()
    seen: set[str] = {QUEUE_SORT, DEFAULT_BINDER}
    for entries in points.values():
        for e in entries:
            pl = e[0] if isinstance(e, tuple) else e
            if isinstance(pl, str):
                continue
            if pl.name not in seen:
                seen.add(pl.name)
                reg.register(pl.name, instance_factory(pl))
    for name, factory in extra:
        if name not in seen:
            seen.add(name)
            reg.register(name, factory)
    return reg


def build(points: PointSpec, **kwargs: Any) -> Framework:
    """A Framework with exactly ``points`` enabled (see :func:`config`); Framework kwargs pass through."""
    cfg_keys = {"plugin_config", "percentage_of_nodes_to_score", "profile_percentage", "queue_sort", "bind"}
    cfg_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in cfg_keys}
    return Framework.from_config(config(points, **cfg_kwargs), registry_for(points), **kwargs)


def scheduler(points: PointSpec, *, seed: int = 0, bind_in_thread: bool = True, binder: Any = None,
              explain: bool = False, clock: Any = None, **cfg_kwargs: Any) -> Scheduler:
    return Scheduler(config(points, **cfg_kwargs), registry_for(points), seed=seed,
                     bind_in_thread=bind_in_thread, binder=binder, explain=explain, clock=clock)


# --- objects --------------------------------------------------------------------------------


def make_pod(name: str, *, uid: str | None = None, priority: int | None = None, cpu: str | None = None,
             memory: str | None = None, node: str = "", nominated: str = "", namespace: str = "default",
             scheduler_name: str | None = None, labels: Mapping[str, str] | None = None) -> Pod:
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    container: dict[str, Any] = {"name": "c", "image": "pause"}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict[str, Any] = {"containers": [container]}
    if priority is not None:
        spec["priority"] = priority
    if node:
        spec["nodeName"] = node
    if scheduler_name is not None:
        spec["schedulerName"] = scheduler_name
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or name}
    if labels:
        meta["labels"] = dict(labels)
    manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if nominated:
        manifest["status"] = {"nominatedNodeName": nominated}
    return Pod.from_dict(manifest)


def make_node(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
              labels: Mapping[str, str] | None = None) -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": dict(labels or {"kubernetes.io/hostname": name})},
                           "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods}}})


def node_infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n)) for n in names]
