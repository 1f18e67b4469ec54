"""PodTopologySpread: spread pods over topology domains as their topologySpreadConstraints ask.

Hard constraints (whenUnsatisfiable: DoNotSchedule) filter nodes; soft ones (ScheduleAnyway) score them.
A pod without constraints gets the cluster defaults (PodTopologySpreadArgs), selecting the pods of the
same Services / ReplicationController / ReplicaSet / StatefulSet, read from the handle's object store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugins_intree.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    NAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SpreadConstraint,
    StateNotFoundError,
    default_selector,
    filter_constraints,
)
from plugins_intree.podtopologyspread.domains import DomainCountsCache, DomainLayoutCache
from plugins_intree.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    calc_pre_filter_state,
    filter_domain,
    filter_limits,
    filter_node,
    update_with_pod,
)
from plugins_intree.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    calc_pre_score_state,
    normalize_scores,
    normalize_values,
    score_domains,
    score_node,
)
from scheduling_framework.api.pod import Pod, TopologySpreadConstraint
from scheduling_framework.config.args import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import PluginError, ValidationError
from scheduling_framework.interfaces import NodeScore, PreFilterResult
from scheduling_framework.state.node_info import NodeInfo, PodInfo, node_labels
from scheduling_framework.status import Code, Status


def _coerce_args(args: Any) -> PodTopologySpreadArgs:
    if args is None:
        return PodTopologySpreadArgs()
    if isinstance(args, PodTopologySpreadArgs):
        return args
    if isinstance(args, Mapping):
        try:
            return PodTopologySpreadArgs.from_dict(args)
        except ValidationError as e:
            raise PluginError(NAME, f"invalid args: {e}") from e
    raise PluginError(NAME, f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}")


class PodTopologySpread:
    """PreFilter, Filter (with PreFilterExtensions), PreScore, Score and NormalizeScore."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        a = _coerce_args(args)
        self._handle = handle
        # per-domain matching-pod counts of earlier cycles, re-counted only where nodes changed
        self._domain_counts = DomainCountsCache()
        self._layouts = DomainLayoutCache()
        self.system_defaulted = a.defaulting_type == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            try:
                self.default_constraints = tuple(
                    TopologySpreadConstraint.from_dict(c, f"defaultConstraints[{i}]")
                    for i, c in enumerate(a.default_constraints))
            except ValidationError as e:
                raise PluginError(NAME, f"invalid args: {e}") from e

    # --- constraints ---------------------------------------------------------------------------

    def constraints_for(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """The pod's constraints with this whenUnsatisfiable, or the defaults when the pod declares none."""
        own = pod.spec.topology_spread_constraints
        labels = pod.metadata.labels
        if own:
            return filter_constraints(own, labels, action)
        constraints = filter_constraints(self.default_constraints, labels, action)
        if not constraints:
            return constraints
        selector = default_selector(pod, getattr(self._handle, "objects", None))
        if selector.is_empty():
            return []
        for c in constraints:
            c.selector = selector
        return constraints

    # --- PreFilter / Filter ----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self.constraints_for(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status(Code.SKIP)
        snapshot = getattr(self._handle, "snapshot", None)
        index = snapshot.pod_index() if snapshot is not None and hasattr(snapshot, "pod_index") else None
        state.write(PRE_FILTER_STATE_KEY, calc_pre_filter_state(pod, constraints, nodes, self._domain_counts, index,
                                                                self._layouts))
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def _pre_filter_state(self, state: CycleState) -> PreFilterState:
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            raise StateNotFoundError(PRE_FILTER_STATE_KEY) from None
        if not isinstance(s, PreFilterState):
            raise TypeError(f"{s!r} convert to podtopologyspread.preFilterState error")
        return s

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        try:
            s = self._pre_filter_state(state)
        except (LookupError, TypeError) as e:
            return Status.from_error(e)
        update_with_pod(s, pod_info_to_add.pod, pod_to_schedule, node_info.node, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        try:
            s = self._pre_filter_state(state)
        except (LookupError, TypeError) as e:
            return Status.from_error(e)
        update_with_pod(s, pod_info_to_remove.pod, pod_to_schedule, node_info.node, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Fast path (the usual case: the state PreFilter wrote, a node): the verdict of the node's domain,
        # computed once per domain per cycle; equal to the plain path below (filter_node), pinned by
        # tests/test_perf_equivalence.py::test_spread_filter_per_domain_equals_per_node.
        s = state.get(PRE_FILTER_STATE_KEY)
        node = node_info.node
        if type(s) is PreFilterState and node is not None:
            check = s.single_check
            if check is None:
                return filter_domain(s, node.metadata.labels)
            # filter_domain's one-constraint branch, inlined (it runs for every node of every cycle)
            key, counts, limit = check
            value = node.metadata.labels.get(key)
            if value is None:
                return s.rejections[0]
            return s.rejections[1] if counts.get(value, 0) > limit else None
        try:
            s = self._pre_filter_state(state)
        except (LookupError, TypeError) as e:
            return Status.from_error(e)
        node = node_info.node
        if node is None:
            return Status.from_error(LookupError("node not found"))
        if not s.constraints:
            return None
        return filter_node(s, node)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Status | None] | None:
        """``[filter(state, pod, ni) for ni in nodes]`` for the usual case (the state PreFilter wrote, every node
        present), each domain's verdict computed once; None otherwise (the framework then calls ``filter``).
        Pinned by tests/test_perf_equivalence.py::test_batch_filters_equal_plain."""
        s = state.get(PRE_FILTER_STATE_KEY)
        label_sets = node_labels(nodes) if type(s) is PreFilterState else None
        if label_sets is None:
            return None
        check = s.single_check
        if check is None and s.single_key is not None:
            filter_limits(s)  # the one constraint's limit, and with it single_check
            check = s.single_check
        if check is None:
            return [filter_domain(s, labels) for labels in label_sets]
        key, counts, limit = check
        values = [labels.get(key) for labels in label_sets]
        lacking, too_many = s.rejections[0], s.rejections[1]
        verdicts = {v: lacking if v is None else (too_many if counts.get(v, 0) > limit else None)
                    for v in set(values)}
        return list(map(verdicts.__getitem__, values))

    # --- PreScore / Score / NormalizeScore --------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        snapshot = getattr(self._handle, "snapshot", None)
        all_nodes: Sequence[NodeInfo] = snapshot.list() if snapshot is not None else nodes
        if not all_nodes:
            return Status(Code.SKIP)
        constraints = self.constraints_for(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status(Code.SKIP)
        # Only the system defaults tolerate nodes without every topology key (e.g. no zone label), so
        # hostname spreading still applies to them.
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        index = snapshot.pod_index() if snapshot is not None and hasattr(snapshot, "pod_index") else None
        state.write(PRE_SCORE_STATE_KEY, calc_pre_score_state(pod, constraints, nodes, all_nodes, require_all,
                                                              self._domain_counts, index))
        return None

    def _pre_score_state(self, state: CycleState) -> PreScoreState:
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            raise StateNotFoundError(PRE_SCORE_STATE_KEY, "error ") from None
        if not isinstance(s, PreScoreState):
            raise TypeError(f"{s!r}  convert to podtopologyspread.preScoreState error")
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            s = self._pre_score_state(state)
        except (LookupError, TypeError) as e:
            return 0, Status.from_error(e)
        return score_node(s, node_info), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        # per domain rather than per node: equal to [score_node(s, ni) for ni in nodes], pinned by
        # tests/test_perf_equivalence.py::test_spread_score_per_domain_equals_per_node
        return score_domains(s, nodes)

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        try:
            s = self._pre_score_state(state)
        except (LookupError, TypeError) as e:
            return Status.from_error(e)
        normalize_scores(s, scores)
        return None

    def normalize_values(self, state: CycleState, pod: Pod, node_names: list[str],
                         scores: list[int]) -> list[int] | None:
        """``normalize_score`` on plain scores, for the framework (None: use normalize_score)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        return normalize_values(s, node_names, scores)
