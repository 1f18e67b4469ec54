"""Preferred inter-pod (anti-)affinity scoring: per topology pair sums of term weights.

For every existing pod, on the topology pair (key, value) of the node it runs on:

* + weight of each preferred affinity term of the incoming pod the existing pod matches,
* - weight of each preferred anti-affinity term of the incoming pod the existing pod matches,
* + hardPodAffinityWeight for each required affinity term of the existing pod the incoming pod matches,
* + / - weight of each preferred affinity / anti-affinity term of the existing pod the incoming pod matches.

A node's raw score is the sum over the topology keys it carries; NormalizeScore maps the range of raw
scores onto [0, MAX_NODE_SCORE].
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import cast

from plugins_intree.interpodaffinity._sums import Contribution, KeptSumsCache
from plugins_intree.interpodaffinity._terms import MEMO_LIMIT, NO_LABELS, memo_key, weighted_terms_key
from scheduling_framework.api.pod import Pod
from scheduling_framework.interfaces import MAX_NODE_SCORE, NodeScore
from scheduling_framework.node_info import NodeInfo, PodInfo, WeightedAffinityTerm

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

ScoreMap = dict[str, dict[str, int]]


class PreScoreState:
    """The topology scores PreScore computed; read-only afterwards, so clones share it."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: ScoreMap) -> None:
        self.topology_score = topology_score

    def clone(self) -> PreScoreState:
        return self

    def __repr__(self) -> str:
        return f"PreScoreState({self.topology_score})"


def _add(scores: ScoreMap, key: str, value: str, amount: int) -> None:
    per_key = scores.get(key)
    if per_key is None:
        per_key = scores[key] = {}
    per_key[value] = per_key.get(value, 0) + amount


def topology_scores(pod: Pod, preferred_affinity: Sequence[WeightedAffinityTerm],
                    preferred_anti_affinity: Sequence[WeightedAffinityTerm], ns_labels: Mapping[str, str],
                    nodes: Sequence[NodeInfo], all_pods: bool, hard_pod_affinity_weight: int,
                    kept: KeptSumsCache | None = None) -> ScoreMap | None:
    """The score map for ``pod`` over ``nodes``; None when no term applied anywhere (nothing to score).

    ``all_pods`` says whether every pod of a node is visited (the incoming pod has preferred terms) or
    only the pods that have pod (anti-)affinity of their own. ``kept`` keeps the sums across cycles
    (re-adding only the nodes that changed); the map equals the plain pass below (each (key, value) that
    received an addition, with the sum of its amounts), pinned by
    tests/test_perf_equivalence.py::test_interpodaffinity_kept_sums_equal_plain.
    """
    scores: ScoreMap = {}
    # A node's additions depend on its pods and on the incoming pod's namespace, labels, namespace labels
    # and terms: remembered per NodeInfo (and replayed in order) while the node does not change.
    meta = pod.metadata
    node_memo_key = memo_key(PRE_SCORE_STATE_KEY, meta.namespace, tuple(sorted(meta.labels.items())),
                             tuple(sorted(ns_labels.items())), weighted_terms_key(preferred_affinity),
                             weighted_terms_key(preferred_anti_affinity), all_pods, hard_pod_affinity_weight)
    if kept is not None:
        def contribution(ni: NodeInfo) -> Contribution:
            node = ni.node
            if node is None or not node.metadata.labels:
                return ()
            return tuple(((key, value), amount) for key, value, amount in _additions(
                pod, preferred_affinity, preferred_anti_affinity, ns_labels, ni, node.metadata.labels, all_pods,
                hard_pod_affinity_weight, node_memo_key))

        return kept.get(node_memo_key, contribution).view(nodes, _score_map)
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        node_labels = node.metadata.labels
        if not node_labels:
            continue
        additions = _additions(pod, preferred_affinity, preferred_anti_affinity, ns_labels, ni, node_labels, all_pods,
                               hard_pod_affinity_weight, node_memo_key)
        for topology_key, value, amount in additions:
            _add(scores, topology_key, value, amount)
    # Entries are only ever added (a sum may come back to 0 but stays), so an empty map means no term
    # applied on any node, which is when upstream skips scoring.
    return scores or None


def _score_map(sums: dict[Hashable, int], _: dict[Hashable, int]) -> ScoreMap | None:
    scores: ScoreMap = {}
    for pair, amount in sums.items():
        topology_key, value = cast("tuple[str, str]", pair)
        _add(scores, topology_key, value, amount)
    return scores or None


def _additions(pod: Pod, preferred_affinity: Sequence[WeightedAffinityTerm],
               preferred_anti_affinity: Sequence[WeightedAffinityTerm], ns_labels: Mapping[str, str],
               ni: NodeInfo, node_labels: Mapping[str, str], all_pods: bool, hard_pod_affinity_weight: int,
               node_memo_key: str) -> tuple[tuple[str, str, int], ...]:
    """_node_additions, remembered on the NodeInfo under ``node_memo_key``."""
    memo = ni.memo
    additions: tuple[tuple[str, str, int], ...] | None = memo.get(node_memo_key)
    if additions is None:
        additions = _node_additions(pod, preferred_affinity, preferred_anti_affinity, ns_labels, ni, node_labels,
                                    all_pods, hard_pod_affinity_weight)
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[node_memo_key] = additions
    return additions


def _node_additions(pod: Pod, preferred_affinity: Sequence[WeightedAffinityTerm],
                    preferred_anti_affinity: Sequence[WeightedAffinityTerm], ns_labels: Mapping[str, str],
                    ni: NodeInfo, node_labels: Mapping[str, str], all_pods: bool,
                    hard_pod_affinity_weight: int) -> tuple[tuple[str, str, int], ...]:
    """The (topology key, value, amount) additions the node's pods make to the score map, in order."""
    out: list[tuple[str, str, int]] = []
    pods: Sequence[PodInfo] = ni.pods if all_pods else ni.pods_with_affinity
    for existing in pods:
        if preferred_affinity:
            _collect_terms(out, preferred_affinity, existing.pod, NO_LABELS, node_labels, 1)
        if preferred_anti_affinity:
            _collect_terms(out, preferred_anti_affinity, existing.pod, NO_LABELS, node_labels, -1)
        if hard_pod_affinity_weight > 0 and existing.required_affinity_terms:
            for t in existing.required_affinity_terms:
                if t.matches(pod, ns_labels):
                    tv = node_labels.get(t.topology_key)
                    if tv is not None:
                        out.append((t.topology_key, tv, hard_pod_affinity_weight))
        if existing.preferred_affinity_terms:
            _collect_terms(out, existing.preferred_affinity_terms, pod, ns_labels, node_labels, 1)
        if existing.preferred_anti_affinity_terms:
            _collect_terms(out, existing.preferred_anti_affinity_terms, pod, ns_labels, node_labels, -1)
    return tuple(out)


def _collect_terms(out: list[tuple[str, str, int]], terms: Sequence[WeightedAffinityTerm], pod: Pod,
                   ns_labels: Mapping[str, str], node_labels: Mapping[str, str], multiplier: int) -> None:
    for w in terms:
        t = w.term
        if t.matches(pod, ns_labels):
            tv = node_labels.get(t.topology_key)
            if tv is not None:
                out.append((t.topology_key, tv, w.weight * multiplier))


def node_score(state: PreScoreState, node_labels: Mapping[str, str]) -> int:
    score = 0
    for key, per_value in state.topology_score.items():
        tv = node_labels.get(key)
        if tv is not None:
            score += per_value.get(tv, 0)
    return score


def normalize(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Map raw scores linearly onto [0, MAX_NODE_SCORE] (min -> 0, max -> 100); all equal -> 0."""
    if not state.topology_score or not scores:
        return
    lo = min(s.score for s in scores)
    hi = max(s.score for s in scores)
    diff = hi - lo
    for s in scores:
        s.score = int(MAX_NODE_SCORE * ((s.score - lo) / diff)) if diff > 0 else 0


def normalize_values(state: PreScoreState, scores: list[int]) -> list[int]:
    """:func:`normalize` on plain scores, returning new ones."""
    if not state.topology_score or not scores:
        return list(scores)
    lo = min(scores)
    hi = max(scores)
    diff = hi - lo
    if diff > 0:
        return [int(MAX_NODE_SCORE * ((v - lo) / diff)) for v in scores]
    return [0] * len(scores)
