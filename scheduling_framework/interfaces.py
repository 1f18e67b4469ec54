"""The plugin contract: one Protocol per extension point, and the small result types they exchange.

A plugin is any object with a ``name`` attribute and one or more of the methods below; the framework
finds the extension points a plugin implements by the methods it has. Plugins return ``None`` for
success, or a Status. Filter and Score may be called for different nodes concurrently; a plugin must not
mutate shared state from them except through CycleState.

Status codes, as the framework reads them:
- PreEnqueue: anything but success keeps the pod out of the active queue (gated).
- PreFilter: SKIP = this plugin's Filter is not run this cycle; UNSCHEDULABLE(_AND_UNRESOLVABLE) rejects
  the pod on every node; ERROR fails the cycle.
- Filter: UNSCHEDULABLE = the node does not fit but preemption might help; UNSCHEDULABLE_AND_UNRESOLVABLE =
  preemption cannot help on this node; ERROR fails the cycle.
- PostFilter: SUCCESS with a nominated node ends PostFilter; UNSCHEDULABLE tries the next plugin.
- PreScore: SKIP = this plugin's Score is not run this cycle.
- Score: returns an integer in [MIN_NODE_SCORE, MAX_NODE_SCORE] after normalization.
  Optional, for speed: a Score plugin may also define ``score_nodes(state, pod, nodes)`` returning one
  ``(int, Status or None)`` per node, and its score extension ``normalize_values(...)``; the framework
  uses them when the class that defines ``score`` / ``normalize_score`` defines them too, with results
  that must equal the per-node calls. It may also define ``score_constant(state, pod)``, asked once per
  cycle: an int ``c`` promises that ``score`` gives ``(c, None)`` on every node for this pod and that its
  NormalizeScore leaves a column of ``c`` unchanged, so the framework fills the column without calling
  them (None: score as usual).
- QueueSort: ``less(a, b)``. Optional, for speed: ``sort_key(qpi)`` returning a value such that ``less(a, b)``
  exactly when ``sort_key(a) < sort_key(b)`` (PrioritySort: ``(-priority, timestamp)``); the scheduling queue
  then compares keys instead of calling ``less``, when the class that defines ``less`` defines it too.
- Reserve/Permit/PreBind/Bind: non-success fails the binding; Permit WAIT holds the pod up to a timeout;
  Bind SKIP passes to the next bind plugin.

Optional: a class attribute ``deterministic = True`` promises that the plugin's verdicts follow from what the
scheduler holds (cluster, objects, nominations, the pod, the order nodes are visited in), so that a retry after
an ERROR with nothing changed would err again and is not run (scheduler.decides_from_state; in-tree plugins are
taken as deterministic, third-party ones as not unless they say so).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.status import Status

if TYPE_CHECKING:
    from datetime import datetime

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


class PreFilterResult:
    """The set of nodes a PreFilter plugin allows; ``node_names is None`` means all nodes."""

    __slots__ = ("node_names",)

    def __init__(self, node_names: Iterable[str] | None = None) -> None:
        self.node_names: set[str] | None = None if node_names is None else set(node_names)

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """Intersection; a result that allows all nodes is the identity."""
        if other is None or other.all_nodes():
            return PreFilterResult(self.node_names)
        if self.all_nodes():
            return PreFilterResult(other.node_names)
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.node_names is None
        if not isinstance(other, PreFilterResult):
            return NotImplemented
        return self.node_names == other.node_names

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PreFilterResult({sorted(self.node_names) if self.node_names is not None else 'all'})"


@attrs.frozen(slots=True)
class PostFilterResult:
    """What PostFilter achieved: the node nominated for the pod (``""`` = none) and the mode."""

    nominated_node_name: str = ""
    mode: str = "Override"  # "Override" sets the nominated node; "Noop" leaves it as it was
    victims: tuple[str, ...] = ()  # namespace/name of the pods evicted to make room


class NodeScore:
    """A node's score from one plugin; mutable so NormalizeScore can rewrite scores in place."""

    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeScore):
            return NotImplemented
        return self.name == other.name and self.score == other.score

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NodeScore({self.name!r}, {self.score})"


class QueuedPodInfo:
    """A pod in the scheduling queue: what QueueSort compares and the queue tracks."""

    __slots__ = ("pod_info", "timestamp", "attempts", "initial_attempt_timestamp", "unschedulable_plugins",
                 "pending_plugins", "gated", "gating_plugin")

    def __init__(self, pod: Pod | PodInfo, timestamp: datetime | float = 0.0) -> None:
        self.pod_info = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        self.timestamp: Any = timestamp
        self.attempts = 0
        self.initial_attempt_timestamp: Any = None
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gated = False
        self.gating_plugin = ""

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.key}, attempts={self.attempts})"


# --- the handle plugins receive -----------------------------------------------------------------


class SharedLister(Protocol):
    def get(self, node_name: str) -> NodeInfo: ...
    def list(self) -> builtins.list[NodeInfo]: ...
    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfo]: ...
    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfo]: ...


# --- extension point protocols ------------------------------------------------------------------


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: dict[str, Status]) -> tuple[PostFilterResult | None,
                                                                          Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


# Extension point key (as in KubeSchedulerConfiguration) -> the method that marks a plugin as implementing it.
POINT_METHODS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}


def points_of_class(obj: Any) -> frozenset[str]:
    """The extension points a plugin class or instance implements, by its methods."""
    return frozenset(p for p, m in POINT_METHODS.items() if callable(getattr(obj, m, None)))
