"""TaintToleration: filters nodes whose NoSchedule/NoExecute taints the pod does not tolerate, and
prefers nodes with fewer untolerated PreferNoSchedule taints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plugins_intree.tainttoleration.tolerations import (
    COMPARISON_OPERATORS_GATE,
    feature_enabled,
    find_untolerated_do_not_schedule,
    tolerations_tolerate,
)
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.taints import Toleration
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import MAX_NODE_SCORE, NodeScore
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
#: Filter reason; upstream logs which taint was untolerated but keeps it out of the status.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """Scale scores from [0, max(scores)] to [0, max_priority]; ``reverse`` flips them (upstream helper)."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        v = max_priority * s.score // max_count
        s.score = max_priority - v if reverse else v


def default_normalize_values(max_priority: int, reverse: bool, scores: list[int]) -> list[int]:
    """:func:`default_normalize_score` on plain scores, returning new ones."""
    max_count = max(scores, default=0)
    if max_count <= 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    if reverse:
        return [max_priority - max_priority * s // max_count for s in scores]
    return [max_priority * s // max_count for s in scores]


class TaintToleration:
    """Filter, PreScore, Score and NormalizeScore (reversed: fewer untolerated taints score higher)."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        # With the gate off, Lt/Gt tolerations never match (upstream's default).
        self.enable_comparison_operators = feature_enabled(handle, COMPARISON_OPERATORS_GATE)

    # Filter -------------------------------------------------------------------------------
    def filter_signature(self, state: CycleState, pod: Pod) -> tuple[Toleration, ...]:
        """Filter reads of the pod only its tolerations."""
        return pod.spec.tolerations

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        taints = node.spec.taints
        if not taints:
            return None
        taint, err = find_untolerated_do_not_schedule(taints, pod.spec.tolerations,
                                                      self.enable_comparison_operators)
        if taint is None:
            return None
        if err is not None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, err)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

    # PreScore / Score ---------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        # An empty effect tolerates every effect, PreferNoSchedule included.
        prefer: tuple[Toleration, ...] = tuple(
            t for t in pod.spec.tolerations if not t.effect or t.effect == "PreferNoSchedule")
        state.write(PRE_SCORE_STATE_KEY, prefer)
        return None

    def score_signature(self, state: CycleState, pod: Pod) -> tuple[Toleration, ...] | None:
        """Score reads the PreferNoSchedule tolerations PreScore kept (None without them: not signed)."""
        tolerations: tuple[Toleration, ...] | None = state.get(PRE_SCORE_STATE_KEY)
        return tolerations

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            tolerations: tuple[Toleration, ...] = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return 0, Status(Code.ERROR, f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        if node is None:
            return 0, Status(Code.ERROR, "node not found")
        count = 0
        cmp_ops = self.enable_comparison_operators
        for taint in node.spec.taints:
            if taint.effect != "PreferNoSchedule":
                continue
            # A value that fails to parse counts as not tolerated.
            if not tolerations_tolerate(tolerations, taint, cmp_ops)[0]:
                count += 1
        return count, None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        tolerations: tuple[Toleration, ...] | None = state.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            return None
        cmp_ops = self.enable_comparison_operators
        out: list[int] = []
        append = out.append
        for ni in nodes:
            node = ni.node
            if node is None:
                return None
            count = 0
            for taint in node.spec.taints:
                if taint.effect != "PreferNoSchedule":
                    continue
                if not tolerations_tolerate(tolerations, taint, cmp_ops)[0]:
                    count += 1
            append(count)
        return out

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_values(self, state: CycleState, pod: Pod, node_names: list[str], scores: list[int]) -> list[int]:
        """``normalize_score`` on plain scores, for the framework."""
        return default_normalize_values(MAX_NODE_SCORE, True, scores)
