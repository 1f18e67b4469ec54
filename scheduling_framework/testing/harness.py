"""A framework in one call: plugins + args + weights + fake nodes and pods -> run any extension point.

:func:`framework_for` builds a KubeSchedulerConfiguration profile enabling the given plugins, registers
plugin classes passed directly in a private :class:`~scheduling_framework.Registry` (merged with every
installed plugin package, the in-tree ones included), and loads the fake cluster into a reference
:class:`~scheduling_framework.Scheduler`. The returned :class:`FrameworkHarness` runs one extension point
at a time (``pre_filter``, ``filter``, ``score``, ...) or whole cycles (``schedule``, ``schedule_all``) and
answers in plain data: dicts and lists of strings and ints, the shapes ``schedule --output json`` prints.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self, TypeAlias

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.config import KubeSchedulerConfiguration, load_config
from scheduling_framework.config.args import args_to_dict
from scheduling_framework.config.types import API_VERSION, KIND
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, PluginError, SchedulingFrameworkError, SnapshotError
from scheduling_framework.ingest.cluster import refuse_duplicates
from scheduling_framework.interfaces import points_of_class
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.runtime.algorithm import CycleError, absent_nodes_status
from scheduling_framework.runtime.framework import Framework, ScoreDetail
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status
from scheduling_framework.testing.builders import NodeBuilder, NodeLike, PodLike, as_node, as_pod

#: The origin ``scheduling-framework plugins`` would show for plugins registered by a test.
TEST_ORIGIN = "test (scheduling_framework.testing)"
DEFAULT_QUEUE_SORT = "PrioritySort"
DEFAULT_BINDER = "DefaultBinder"

#: A plugin to enable: its registered name, a plugin class (registered under its ``name``), a plugin
#: instance (used as is), or a ``(name, factory)`` pair.
PluginSpec: TypeAlias = "str | type[Any] | tuple[str, Callable[[Any, Any], Any]] | Any"
ObjectLike: TypeAlias = KubeObject | Mapping[str, Any] | Any  # Any: a client object (api.clients)


def _status_dict(st: Status | None) -> dict[str, Any]:
    return {"code": str(Code.SUCCESS)} if st is None else st.to_dict()


def _as_object(obj: ObjectLike) -> KubeObject:
    """A KubeObject from itself, a manifest dict or a client object (UnsupportedObjectError otherwise)."""
    if isinstance(obj, KubeObject):
        return obj
    return KubeObject.from_dict(obj)


# --- registry and configuration ----------------------------------------------------------------


def _instance_factory(plugin: Any) -> Callable[[Any, Any], Any]:
    def factory(args: Any, handle: Any) -> Any:
        return plugin

    # Registry.points_of reads this instead of calling the factory to learn the points.
    factory.extension_points = points_of_class(plugin)  # type: ignore[attr-defined]
    return factory


def _resolve(spec: PluginSpec) -> tuple[str, Callable[[Any, Any], Any] | None]:
    """(name, factory to register or None for a plugin already registered by name)."""
    if isinstance(spec, str):
        return spec, None
    if isinstance(spec, tuple):
        if len(spec) != 2 or not isinstance(spec[0], str) or not callable(spec[1]):
            raise PluginError(str(spec[0]) if spec else "?", f"expected a (name, factory) pair, got {spec!r}")
        return spec[0], spec[1]
    if inspect.isclass(spec):
        name = getattr(spec, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(spec.__qualname__, f"class {spec.__qualname__} has no `name` class attribute (a "
                                                 f"non-empty str): set name = {spec.__name__!r} on the class")
        return name, spec
    name = getattr(spec, "name", None)
    if isinstance(name, str) and name:
        return name, _instance_factory(spec)
    raise PluginError(type(spec).__name__, f"cannot enable {spec!r}: expected a plugin name, a plugin class or "
                                           f"instance with a `name` attribute, or a (name, factory) pair")


def build_registry(plugins: Iterable[PluginSpec] = (), base: Registry | None = None) -> tuple[Registry, list[str]]:
    """A private registry: ``base`` (every installed plugin package) plus the plugins given directly.

    A plugin given directly replaces one of the same name (the test means its own version). Returns the
    registry and the names of ``plugins`` in order.
    """
    base = base if base is not None else default_registry()
    reg = Registry()
    reg.merge(base)
    reg.load_errors = list(base.load_errors)
    names: list[str] = []
    for spec in plugins:
        name, factory = _resolve(spec)
        if factory is not None:
            if name in reg:
                reg.unregister(name)
            reg.register(name, factory, origin=TEST_ORIGIN)
        if name in names:
            raise ConfigError(f'plugin "{name}" is listed twice in plugins')
        names.append(name)
    return reg, names


def config_for(plugins: Sequence[str], registry: Registry, *, args: Mapping[str, Any] | None = None,
               weights: Mapping[str, int] | None = None, with_defaults: bool = False,
               scheduler_name: str = "default-scheduler",
               percentage_of_nodes_to_score: int | None = None) -> dict[str, Any]:
    """A KubeSchedulerConfiguration document with one profile enabling ``plugins`` through multiPoint.

    Without ``with_defaults`` every default plugin is disabled (``"*"``) and PrioritySort / DefaultBinder
    are added when no listed plugin sorts the queue / binds; with it, the plugins join the default profile.
    ``weights`` sets Score weights (1 when unset, whatever the default profile says).
    """
    weights = dict(weights or {})
    enabled: list[dict[str, Any]] = []
    for name in plugins:
        ref: dict[str, Any] = {"name": name}
        if name in weights:
            ref["weight"] = weights.pop(name)
        enabled.append(ref)
    for name, w in weights.items():
        if not with_defaults:
            raise ConfigError(f'weights: plugin "{name}" is not enabled (plugins: {", ".join(plugins) or "none"})')
        enabled.append({"name": name, "weight": w})
    multi: dict[str, Any] = {"enabled": enabled}
    if not with_defaults:
        points: set[str] = set()
        for name in plugins:
            if name in registry:
                points |= registry.points_of(name) or frozenset()
        if "queueSort" not in points:
            enabled.insert(0, {"name": DEFAULT_QUEUE_SORT})
        if "bind" not in points:
            enabled.append({"name": DEFAULT_BINDER})
        multi["disabled"] = [{"name": "*"}]
    profile: dict[str, Any] = {"schedulerName": scheduler_name, "plugins": {"multiPoint": multi}}
    if args:
        profile["pluginConfig"] = [{"name": n, "args": args_to_dict(a)} for n, a in args.items()]
    doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}
    if percentage_of_nodes_to_score is not None:
        doc["percentageOfNodesToScore"] = percentage_of_nodes_to_score
    return doc


# --- the harness -------------------------------------------------------------------------------


class FrameworkHarness:
    """A built profile over a fake cluster. Extension point methods answer in plain data.

    Running one extension point never changes the cluster; :meth:`schedule` and :meth:`schedule_all`
    run real cycles (binding included), so a scheduled pod is on its node for the next call.
    ``state`` is the CycleState of the last call, for reading what a plugin wrote.
    """

    def __init__(self, scheduler: Scheduler, registry: Registry, config: KubeSchedulerConfiguration,
                 profile: str | None = None, pending: Iterable[Pod] = ()) -> None:
        self.scheduler = scheduler
        self.registry = registry
        self.config = config
        self.profile_name = profile if profile is not None else config.profiles[0].scheduler_name
        self.framework: Framework = scheduler.profile(self.profile_name)
        self.state = CycleState()
        self._pending: list[Pod] = list(pending)

    # the cluster ---------------------------------------------------------------------------------
    def plugin(self, name: str) -> Any:
        """The plugin instance the framework runs under ``name``."""
        pl = self.framework.plugins.get(name)
        if pl is None:
            raise PluginError(name, f"not enabled in profile {self.profile_name!r} "
                                    f"(enabled: {', '.join(self.framework.plugins)})")
        return pl

    def add_node(self, *nodes: NodeLike) -> Self:
        for n in nodes:
            self.scheduler.add_node(as_node(n))
        return self

    def update_node(self, node: NodeLike) -> Self:
        self.scheduler.update_node(as_node(node))
        return self

    def remove_node(self, name: str) -> Self:
        self.scheduler.remove_node(name)
        return self

    def add_pod(self, *pods: PodLike) -> Self:
        """Running pods (``spec.nodeName`` set) join their node; pending ones wait for :meth:`schedule_all`."""
        for p in pods:
            pod = as_pod(p)
            if pod.spec.node_name:
                self.scheduler.add_pod(pod)
            else:
                self._pending.append(pod)
        return self

    def delete_pod(self, pod: PodLike | str) -> Self:
        """Remove a running pod, given as the pod or its ``namespace/name``."""
        key = pod if isinstance(pod, str) else as_pod(pod).key
        for p in self.scheduler.cache.pods():
            if p.key == key:
                self.scheduler.delete_pod(p)
                return self
        raise SnapshotError(f"pod {key} is not running in the fake cluster "
                            f"(running: {', '.join(sorted(self.placements())) or 'none'})")

    def add_object(self, *objects: ObjectLike) -> Self:
        for o in objects:
            self.scheduler.add_object(_as_object(o))
        return self

    def node_names(self) -> list[str]:
        """Node names in the order the framework visits them (upstream's zone-interleaved order)."""
        return [ni.name for ni in self._refresh().snapshot.list()]

    def node_info(self, name: str) -> NodeInfo:
        """The NodeInfo of ``name`` as plugins see it now."""
        return self._refresh().snapshot.get(name)

    def placements(self) -> dict[str, str]:
        """``{"namespace/name": node}`` for every pod running in the fake cluster."""
        return {p.key: p.spec.node_name for p in self.scheduler.cache.pods()}

    # one extension point at a time -------------------------------------------------------------
    def _refresh(self) -> Framework:
        self.scheduler.cache.update_snapshot(self.scheduler.snapshot)
        return self.framework

    def _new_state(self, state: CycleState | None) -> CycleState:
        self.state = state if state is not None else CycleState()
        return self.state

    def _infos(self, fwk: Framework, names: Iterable[str]) -> list[NodeInfo]:
        return [fwk.snapshot.get(n) for n in names]

    @staticmethod
    def _assumed(pod: PodLike, node_name: str) -> Pod:
        p = as_pod(pod)
        return p if p.spec.node_name == node_name else p.with_node_name(node_name)

    def pre_enqueue(self, pod: PodLike) -> dict[str, Any]:
        """PreEnqueue: ``{"code": "Success"}`` or the status of the plugin that gated the pod."""
        return _status_dict(self._refresh().run_pre_enqueue_plugins(as_pod(pod)))

    def pre_filter(self, pod: PodLike, state: CycleState | None = None) -> dict[str, Any]:
        """PreFilter: the merged status, ``nodes`` (the PreFilterResult, None = all nodes) and ``skipped``
        (plugins whose Filter will not run)."""
        fwk = self._refresh()
        state = self._new_state(state)
        res, st, _ = fwk.run_pre_filter_plugins(state, as_pod(pod))
        out = _status_dict(st)
        out["nodes"] = None if res is None or res.node_names is None else sorted(res.node_names)
        out["skipped"] = sorted(state.skip_filter_plugins)
        return out

    def _filter(self, fwk: Framework, state: CycleState, pod: Pod) -> dict[str, Status | None]:
        nodes = fwk.snapshot.list()
        res, st, with_nodes = fwk.run_pre_filter_plugins(state, pod, nodes)
        if st is not None and not st.is_success():
            return {ni.name: st for ni in nodes}
        allowed = None if res is None else res.node_names
        absent = absent_nodes_status(with_nodes)
        out: dict[str, Status | None] = {}
        for ni in nodes:
            if allowed is not None and ni.name not in allowed:
                out[ni.name] = absent
            else:
                out[ni.name] = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
        return out

    def filter(self, pod: PodLike, state: CycleState | None = None) -> dict[str, dict[str, Any]]:
        """PreFilter then Filter on every node: ``{node: {"code", "plugin", "reasons"}}``.

        A PreFilter rejection gives every node that status; nodes outside a PreFilterResult are
        UnschedulableAndUnresolvable, as in a cycle. Every node is evaluated (no percentageOfNodesToScore).
        """
        fwk = self._refresh()
        return {n: _status_dict(st) for n, st in self._filter(fwk, self._new_state(state), as_pod(pod)).items()}

    def feasible_nodes(self, pod: PodLike, state: CycleState | None = None) -> list[str]:
        """The nodes that pass PreFilter and Filter, in visiting order."""
        return [n for n, st in self.filter(pod, state).items() if st["code"] == str(Code.SUCCESS)]

    def post_filter(self, pod: PodLike, state: CycleState | None = None) -> dict[str, Any]:
        """PreFilter, Filter, then PostFilter with the rejected nodes' statuses (as after a failed cycle).

        Preemption evicts its victims from the fake cluster, as it would in a cycle.
        """
        fwk = self._refresh()
        state = self._new_state(state)
        p = as_pod(pod)
        failed = {n: st for n, st in self._filter(fwk, state, p).items() if st is not None and not st.is_success()}
        res, st = fwk.run_post_filter_plugins(state, p, failed)
        out = _status_dict(st)
        out["nominatedNode"] = (res.nominated_node_name or None) if res is not None else None
        out["victims"] = list(res.victims) if res is not None else []
        return out

    def _score_nodes(self, fwk: Framework, state: CycleState, pod: Pod, nodes: Iterable[str] | None) -> list[NodeInfo]:
        if nodes is not None:
            return self._infos(fwk, nodes)
        statuses = self._filter(fwk, state, pod)
        return self._infos(fwk, (n for n, st in statuses.items() if st is None or st.is_success()))

    def pre_score(self, pod: PodLike, nodes: Iterable[str] | None = None,
                  state: CycleState | None = None) -> dict[str, Any]:
        """PreScore over ``nodes`` (default: the feasible nodes, after PreFilter and Filter):
        the status and ``skipped`` (plugins whose Score will not run)."""
        fwk = self._refresh()
        state = self._new_state(state)
        p = as_pod(pod)
        st = fwk.run_pre_score_plugins(state, p, self._score_nodes(fwk, state, p, nodes))
        out = _status_dict(st)
        out["skipped"] = sorted(state.skip_score_plugins)
        return out

    def score(self, pod: PodLike, nodes: Iterable[str] | None = None,
              state: CycleState | None = None) -> dict[str, dict[str, dict[str, int]]]:
        """PreScore, Score and NormalizeScore: ``{node: {plugin: {"raw", "normalized", "weighted"}}}``.

        ``nodes`` defaults to the feasible nodes (PreFilter and Filter run first); given, exactly those
        nodes are scored without filtering. Unlike a cycle, a single feasible node is scored too.
        Raises :class:`~scheduling_framework.runtime.CycleError` when a plugin fails (an ERROR status).
        """
        fwk = self._refresh()
        state = self._new_state(state)
        p = as_pod(pod)
        infos = self._score_nodes(fwk, state, p, nodes)
        if not infos:
            return {}
        st = fwk.run_pre_score_plugins(state, p, infos)
        if st is not None and not st.is_success():
            raise CycleError(st)
        detail = ScoreDetail()
        scores, st = fwk.run_score_plugins(state, p, infos, detail)
        if st is not None and not st.is_success():
            raise CycleError(st)
        out: dict[str, dict[str, dict[str, int]]] = {}
        for i, nps in enumerate(scores):
            out[nps.name] = {pl: {"raw": detail.raw[pl][i], "normalized": detail.normalized[pl][i],
                                  "weighted": detail.normalized[pl][i] * detail.weights[pl]}
                             for pl in detail.plugins}
        return out

    def total_scores(self, pod: PodLike, nodes: Iterable[str] | None = None,
                     state: CycleState | None = None) -> dict[str, int]:
        """``{node: sum of weighted scores}`` (see :meth:`score`)."""
        return {n: sum(s["weighted"] for s in per.values()) for n, per in self.score(pod, nodes, state).items()}

    def reserve(self, pod: PodLike, node_name: str, state: CycleState | None = None) -> dict[str, Any]:
        """Reserve (the pod as assumed on ``node_name``)."""
        fwk = self._refresh()
        return _status_dict(fwk.run_reserve_plugins_reserve(self._new_state(state), self._assumed(pod, node_name),
                                                            node_name))

    def unreserve(self, pod: PodLike, node_name: str, state: CycleState | None = None) -> None:
        self._refresh().run_reserve_plugins_unreserve(self._new_state(state), self._assumed(pod, node_name),
                                                      node_name)

    def permit(self, pod: PodLike, node_name: str, state: CycleState | None = None) -> dict[str, Any]:
        """Permit: ``{"code": "Wait", ...}`` leaves the pod in ``framework.waiting_pods``."""
        fwk = self._refresh()
        return _status_dict(fwk.run_permit_plugins(self._new_state(state), self._assumed(pod, node_name), node_name))

    def pre_bind(self, pod: PodLike, node_name: str, state: CycleState | None = None) -> dict[str, Any]:
        fwk = self._refresh()
        return _status_dict(fwk.run_pre_bind_plugins(self._new_state(state), self._assumed(pod, node_name),
                                                     node_name))

    def bind(self, pod: PodLike, node_name: str, state: CycleState | None = None) -> dict[str, Any]:
        """Bind: ``{"code": "Skip"}`` when every bind plugin skipped. The fake cluster is not changed."""
        fwk = self._refresh()
        return _status_dict(fwk.run_bind_plugins(self._new_state(state), self._assumed(pod, node_name), node_name))

    def post_bind(self, pod: PodLike, node_name: str, state: CycleState | None = None) -> None:
        self._refresh().run_post_bind_plugins(self._new_state(state), self._assumed(pod, node_name), node_name)

    # whole cycles --------------------------------------------------------------------------------
    def _check_pending(self, pod: Pod) -> None:
        if pod.spec.node_name:
            raise SchedulingFrameworkError(f"pod {pod.key} has spec.nodeName {pod.spec.node_name!r}: only pending "
                                           f"pods are scheduled (add_pod() places a running one)")
        running = self.scheduler.cache.get_pod(pod.uid)
        if running is not None:
            raise SnapshotError(f"pod {pod.key} is already running on node {running.spec.node_name!r}: "
                                f"delete_pod() it first, or give the new pod another name")

    def _drain(self) -> None:
        """Leave the queue empty between calls, so each call schedules exactly the pods it was given."""
        q = self.scheduler.queue
        for infos in q.pending_pods().values():
            for qpi in infos:
                q.delete(qpi.pod)
                self.scheduler.nominator.delete_nominated_pod_if_exists(qpi.pod)

    def schedule(self, pod: PodLike) -> dict[str, Any]:
        """One scheduling cycle and, when it succeeds, the binding cycle (Reserve ... PostBind).

        Returns the pod's entry of ``schedule --explain --output json``: ``outcome``, ``node``, ``message``,
        ``nominatedNode``, ``victims``, ``filter``, ``scores``, ``totalScores``. A scheduled pod stays on
        its node; an unschedulable one is dropped (it is not retried).
        """
        p = as_pod(pod)
        self._check_pending(p)
        sched = self.scheduler
        sched.results.pop(p.key, None)
        sched.add_pod(p)
        sched.schedule_one()
        sched.wait_for_bindings()
        self._drain()
        return sched.results[p.key].to_dict(explain=True)

    def schedule_all(self, pods: Iterable[PodLike] | None = None) -> list[dict[str, Any]]:
        """Schedule pods as the CLI does: queue-sort order, each placement visible to the next, retries
        after cluster events (preemption included). Default: the pending pods given to the harness.

        Returns one result (see :meth:`schedule`) per pod, in the order given.
        """
        if pods is None:
            todo, self._pending = self._pending, []
        else:
            todo = [as_pod(p) for p in pods]
        for p in todo:
            self._check_pending(p)
        sched = self.scheduler
        for p in todo:
            sched.results.pop(p.key, None)
        for p in todo:
            sched.add_pod(p)
        sched.run()
        self._drain()
        return [sched.results[p.key].to_dict(explain=True) for p in todo]

    def __repr__(self) -> str:
        return f"FrameworkHarness({self.profile_name!r}, plugins={list(self.framework.plugins)})"


def framework_for(plugins: Iterable[PluginSpec] = (), *, args: Mapping[str, Any] | None = None,
                  weights: Mapping[str, int] | None = None, nodes: Iterable[NodeLike] = (),
                  pods: Iterable[PodLike] = (), objects: Iterable[ObjectLike] = (),
                  config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None,
                  with_defaults: bool = False, profile: str | None = None, seed: int = 0, binder: Any = None,
                  percentage_of_nodes_to_score: int | None = None) -> FrameworkHarness:
    """Build a framework for ``plugins`` over a fake cluster, in one call.

    ``plugins``: names of registered plugins (``"NodeResourcesFit"``), plugin classes (registered under
    their ``name``), plugin instances, or ``(name, factory)`` pairs. ``args``: plugin name -> its args
    (what ``pluginConfig`` would hold). ``weights``: plugin name -> Score weight. ``config``: a whole
    KubeSchedulerConfiguration instead (path, dict or loaded); then ``plugins`` only registers classes.
    ``pods``: running pods (``spec.nodeName`` set) join their nodes; pending ones are what
    :meth:`FrameworkHarness.schedule_all` schedules by default. ``seed`` makes ties reproducible.
    Errors (unknown plugin, bad args, a factory that fails) are raised here, naming the plugin; two nodes,
    pods or objects that are one object to the API server raise ManifestValidationError naming both
    (``pods[2]`` and ``pods[0]``), as ``Scheduler.load`` does.
    """
    registry, names = build_registry(plugins)
    if config is not None:
        if args or weights or with_defaults or percentage_of_nodes_to_score is not None:
            raise ConfigError("framework_for: args, weights, with_defaults and percentage_of_nodes_to_score "
                              "go into the config when a config is given")
        cfg = config if isinstance(config, KubeSchedulerConfiguration) else load_config(config)
    else:
        cfg = load_config(config_for(names, registry, args=args, weights=weights, with_defaults=with_defaults,
                                     percentage_of_nodes_to_score=percentage_of_nodes_to_score))
    sched = Scheduler(cfg, registry, seed=seed, explain=True, binder=binder)
    for fwk in sched.profiles.values():
        for key, plugin in fwk.plugins.items():
            # The framework files statuses and score weights under the plugin's own name.
            if plugin.name != key:
                raise PluginError(key, f"the plugin instance is named {plugin.name!r} but registered and configured "
                                       f"as {key!r}: its `name` must be the name it is registered under")
    all_pods = [as_pod(p) for p in pods]
    node_list = [as_node(n) for n in nodes]
    object_list = [_as_object(o) for o in objects]
    # positions in the lists given (pending pods included), not in the bound pods load sees
    refuse_duplicates(node_list, all_pods, object_list)
    sched.load(node_list, [p for p in all_pods if p.spec.node_name], object_list, _checked=True)
    return FrameworkHarness(sched, registry, cfg, profile, pending=[p for p in all_pods if not p.spec.node_name])


class FakeCluster:
    """Nodes, pods and other objects to build frameworks over (the ``fake_cluster`` pytest fixture)."""

    def __init__(self, nodes: Iterable[NodeLike] = (), pods: Iterable[PodLike] = (),
                 objects: Iterable[ObjectLike] = ()) -> None:
        self.nodes: list[Node] = [as_node(n) for n in nodes]
        self.pods: list[Pod] = [as_pod(p) for p in pods]
        self.objects: list[KubeObject] = [_as_object(o) for o in objects]

    @classmethod
    def from_yaml(cls, text: str) -> FakeCluster:
        """Nodes, Pods and other objects from multi-document YAML (or ``kind: List``)."""
        from scheduling_framework.ingest.cluster import cluster_from_text

        c = cluster_from_text(text)
        return cls(c.nodes, c.pods, c.objects)

    def add_node(self, *nodes: NodeLike) -> Self:
        self.nodes.extend(as_node(n) for n in nodes)
        return self

    def add_nodes(self, count: int, template: NodeBuilder | None = None, prefix: str = "node-") -> Self:
        """Add ``count`` nodes named ``<prefix>1`` ... built from ``template`` (default: 4 CPUs, 8Gi, 110 pods)."""
        from scheduling_framework.testing.builders import make_node

        base = template if template is not None else make_node().capacity(cpu="4", memory="8Gi", pods=110)
        taken = {n.name for n in self.nodes}
        i = 0
        while count > 0:
            i += 1
            if f"{prefix}{i}" not in taken:
                self.nodes.append(base.clone().name(f"{prefix}{i}").obj())
                count -= 1
        return self

    def add_pod(self, *pods: PodLike) -> Self:
        self.pods.extend(as_pod(p) for p in pods)
        return self

    def add_object(self, *objects: ObjectLike) -> Self:
        self.objects.extend(_as_object(o) for o in objects)
        return self

    def framework(self, plugins: Iterable[PluginSpec] = (), **kwargs: Any) -> FrameworkHarness:
        """:func:`framework_for` over this cluster (a snapshot of it: later additions are not seen)."""
        return framework_for(plugins, nodes=self.nodes, pods=self.pods, objects=self.objects, **kwargs)

    def __repr__(self) -> str:
        return f"FakeCluster({len(self.nodes)} nodes, {len(self.pods)} pods, {len(self.objects)} objects)"
