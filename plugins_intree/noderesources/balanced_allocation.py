"""NodeResourcesBalancedAllocation: favour nodes whose resource utilizations end up close to each other.

A node's balance is ``(1 - std) * 100`` where ``std`` is the standard deviation of its utilization fractions
(requested / allocatable, capped at 1) over the configured resources. Since Kubernetes 1.36 the score rewards
the *change* the pod brings: ``50 + (50 + balance_with_pod - balance_without_pod) / 2``, so a pod that leaves
the balance as it was scores 75, one that evens it out scores more and one that skews it less. Up to 1.35 the
score is the node's balance with the pod, whatever it was before (the framework handle's
``kubernetes_version`` picks the formula). Best-effort pods (requesting none of the resources) are not scored
at all: PreScore returns Skip, so they do not pile onto one node.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from plugins_intree.noderesources._args import coerce_args
from plugins_intree.noderesources.dra_capacity import DraCapacity, dra_capacity_for
from plugins_intree.noderesources.resource_allocation import CPU_MEMORY, NodesScorer, ResourceAllocationScorer
from plugins_intree.noderesources.shape_score import div_trunc
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resize import RequestRules
from scheduling_framework.config.args import NodeResourcesBalancedAllocationArgs, ResourceSpec
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.features import features_of, gate_enabled
from scheduling_framework.interfaces import MAX_NODE_SCORE
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status
from scheduling_framework.versions import at_least, release_of

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
#: the first release whose score is the change in balance (upstream PR #135573); older ones score the balance.
SCORES_CHANGE_SINCE: Final = "1.36"


def balance_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``(1 - std) * 100`` over the resources with non-zero allocatable, truncated like Go's int64()."""
    fractions: list[float] = []
    total = 0.0
    for req, cap in zip(requested, allocatable, strict=True):
        if cap == 0:
            continue
        # convert before dividing, as float64(a) / float64(b) does
        fraction = float(req) / float(cap)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / n)
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_scorer(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
    """The score of the change in balance the pod brings, in [50, 100]."""
    with_pod = balance_score(requested, allocatable)
    without_pod = balance_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + div_trunc(half + with_pod - without_pod, 2)


def balance_with_pod_scorer(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
    """The score up to Kubernetes 1.35: the node's balance with the pod, ``(1 - std) * 100``."""
    return balance_score(requested, allocatable)


def balance_with_pod_nodes_scorer(resources: Sequence[ResourceSpec]) -> NodesScorer | None:
    """``balance_with_pod_scorer`` for many nodes over cpu and memory (None for other resource lists)."""
    if tuple(r.name for r in resources) != CPU_MEMORY:
        return None
    max_score = float(MAX_NODE_SCORE)
    one_fraction = int((1 - 0.0) * max_score)

    def nodes_scorer(node_infos: Sequence[NodeInfo], requests: Sequence[int]) -> list[int]:
        req_cpu, req_mem = requests[0], requests[1]
        out: list[int] = []
        append = out.append
        for ni in node_infos:
            alloc = ni.allocatable
            cap_cpu = float(alloc.milli_cpu)
            cap_mem = float(alloc.memory)
            if not (cap_cpu and cap_mem):
                append(one_fraction)
                continue
            used = ni.requested
            # an int over a float divides as float(int) / float: the float() calls are left out, and abs() too
            f_cpu = (used.milli_cpu + req_cpu) / cap_cpu
            if f_cpu > 1:
                f_cpu = 1.0
            f_mem = (used.memory + req_mem) / cap_mem
            if f_mem > 1:
                f_mem = 1.0
            d = (f_cpu - f_mem) / 2
            append(int((1 - (d if d >= 0 else -d)) * max_score))
        return out

    return nodes_scorer


def balanced_nodes_scorer(resources: Sequence[ResourceSpec]) -> NodesScorer | None:
    """``balanced_resource_scorer`` for many nodes, reading cpu and memory straight from each (None for
    other resource lists)."""
    if tuple(r.name for r in resources) != CPU_MEMORY:
        return None
    half = MAX_NODE_SCORE // 2
    max_score = float(MAX_NODE_SCORE)
    # with a single fraction (or none) there is no deviation, with the pod or without
    one_fraction = int((1 - 0.0) * max_score)
    no_change = half + div_trunc(half + one_fraction - one_fraction, 2)

    def nodes_scorer(node_infos: Sequence[NodeInfo], requests: Sequence[int]) -> list[int]:
        req_cpu, req_mem = requests[0], requests[1]
        out: list[int] = []
        append = out.append
        for ni in node_infos:
            alloc = ni.allocatable
            cap_cpu = float(alloc.milli_cpu)
            cap_mem = float(alloc.memory)
            if not (cap_cpu and cap_mem):
                append(no_change)
                continue
            used = ni.requested
            used_cpu = used.milli_cpu
            used_mem = used.memory
            # the fractions balance_score computes, capped at 1, with the pod and without it (an int over a
            # float divides as float(int) / float: the float() calls are left out, and abs() too)
            f_cpu = (used_cpu + req_cpu) / cap_cpu
            if f_cpu > 1:
                f_cpu = 1.0
            f_mem = (used_mem + req_mem) / cap_mem
            if f_mem > 1:
                f_mem = 1.0
            d = (f_cpu - f_mem) / 2
            with_pod = int((1 - (d if d >= 0 else -d)) * max_score)
            f_cpu = used_cpu / cap_cpu
            if f_cpu > 1:
                f_cpu = 1.0
            f_mem = used_mem / cap_mem
            if f_mem > 1:
                f_mem = 1.0
            d = (f_cpu - f_mem) / 2
            without_pod = int((1 - (d if d >= 0 else -d)) * max_score)
            change = half + with_pod - without_pod
            # div_trunc(change, 2) inlined: Go's truncating division
            append(half + (change // 2 if change >= 0 else -(-change // 2)))
        return out

    return nodes_scorer


class _PreScoreState:
    __slots__ = ("pod_requests", "dra")

    def __init__(self, pod_requests: tuple[int, ...], dra: DraCapacity | None = None) -> None:
        self.pod_requests = pod_requests
        self.dra = dra  # DRAExtendedResource: what DRA serves of the scored resources a DeviceClass backs

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation:
    """The NodeResourcesBalancedAllocation plugin (PreScore, Score)."""

    name = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | Mapping[str, Any] | None = None,
                 handle: Any = None) -> None:
        ba_args = coerce_args(NAME, args, NodeResourcesBalancedAllocationArgs)
        self.args = ba_args
        self.handle = handle
        self.scores_change = at_least(release_of(handle), SCORES_CHANGE_SINCE)
        self._dra_extended_resource = gate_enabled(handle, "DRAExtendedResource")
        self._consumable_capacity = gate_enabled(handle, "DRAConsumableCapacity")
        self._scored_resources = tuple(r.name for r in ba_args.resources)
        rules = RequestRules.for_gates(features_of(handle))
        if self.scores_change:
            self.scorer = ResourceAllocationScorer(NAME, ba_args.resources, balanced_resource_scorer,
                                                   use_requested=True,
                                                   nodes_scorer=balanced_nodes_scorer(ba_args.resources), rules=rules)
        else:
            self.scorer = ResourceAllocationScorer(NAME, ba_args.resources, balance_with_pod_scorer,
                                                   use_requested=True,
                                                   nodes_scorer=balance_with_pod_nodes_scorer(ba_args.resources),
                                                   rules=rules)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_requests(pod)
        if self.scorer.is_best_effort(requests):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests, self._dra_capacity()))
        return None

    def _dra_capacity(self) -> DraCapacity | None:
        return dra_capacity_for(self.handle, self._dra_extended_resource, self._scored_resources,
                                self._consumable_capacity)

    def score_signature(self, state: CycleState, pod: Pod) -> tuple[int, ...] | None:
        """Score reads the requests PreScore kept (the resources and formula are the plugin's own); a score that
        counts devices served through DRA also reads the cluster's claims: no signature then."""
        s = state.get(PRE_SCORE_STATE_KEY)
        return tuple(s.pod_requests) if isinstance(s, _PreScoreState) and s.dra is None else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return self.scorer.score(node_info, s.pod_requests, s.dra)
        requests = self.scorer.pod_requests(pod)
        if self.scorer.is_best_effort(requests):
            return 0, None
        return self.scorer.score(node_info, requests, self._dra_capacity())

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState) or s.dra is not None:
            return None
        return self.scorer.score_nodes(nodes, s.pod_requests)

    def score_extensions(self) -> None:
        return None

    def __repr__(self) -> str:
        return "BalancedAllocation()"
