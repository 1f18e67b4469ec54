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

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from functools import partial
from typing import cast

from plugins_intree.interpodaffinity._kept_terms import KeptTerms, NodeTerm, group_terms
from plugins_intree.interpodaffinity._sums import Contribution, KeptSums, KeptSumsCache
from plugins_intree.interpodaffinity._terms import (
    MEMO_LIMIT,
    NO_LABELS,
    memo_key,
    term_id,
    term_namespaces,
    weighted_terms_key,
)
from scheduling_framework.api.pod import Pod
from scheduling_framework.interfaces import MAX_NODE_SCORE, NodeScore
from scheduling_framework.state.node_info import AffinityTerm, NodeInfo, WeightedAffinityTerm
from scheduling_framework.state.pod_index import KEPT_BEYOND, PodIndex

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
                    kept: KeptSumsCache | None = None, term_sums: TermSums | None = None,
                    all_nodes: Sequence[NodeInfo] | None = None, index: PodIndex | None = None,
                    existing: ExistingTermSums | None = None) -> ScoreMap | None:
    """The score map for ``pod`` over ``nodes``; None when no term applied anywhere (nothing to score).

    ``all_pods`` says whether every pod of a node is visited (the incoming pod has preferred terms) or
    only the pods that have pod (anti-)affinity of their own. ``kept`` keeps the sums across cycles
    (re-adding only the nodes that changed); the map equals the plain pass below (each (key, value) that
    received an addition, with the sum of its amounts), pinned by
    tests/test_perf_equivalence.py::test_interpodaffinity_kept_sums_equal_plain.
    """
    scores: ScoreMap = {}
    ctx = _Pass(pod, ns_labels, preferred_affinity, preferred_anti_affinity, hard_pod_affinity_weight)
    if index is not None and existing is not None and all_nodes is not None:
        # The incoming pod's terms counted from the pods the index lists for their selectors, the existing pods'
        # terms from their sums kept across cycles: what the passes below give, without visiting every node.
        # Pinned by tests/test_perf_equivalence.py::test_interpodaffinity_index_scores_equal_plain.
        indexed_map = _scores_from_index(ctx, index, existing, all_nodes)
        if indexed_map is not _UNAVAILABLE:
            return cast("ScoreMap | None", indexed_map)
    # A node's additions depend on its pods and on the incoming pod's namespace, labels, namespace labels
    # and terms: remembered per NodeInfo (and replayed in order) while the node does not change.
    meta = pod.metadata
    node_memo_key = memo_key(PRE_SCORE_STATE_KEY, meta.namespace, tuple(sorted(meta.labels.items())),
                             tuple(sorted(ns_labels.items())), weighted_terms_key(preferred_affinity),
                             weighted_terms_key(preferred_anti_affinity), all_pods, hard_pod_affinity_weight)
    # Pods that repeat a signature (replicas of one template) reuse the per-signature sums below; a pod
    # with a new signature (the usual case in a real cluster's dump) is summed per term.
    if term_sums is not None and all_nodes is not None and (all_pods or not (ctx.affinity or ctx.anti_affinity)) \
            and not term_sums.seen_before(node_memo_key):
        kept_map = term_sums.scores(ctx, all_nodes)
        if kept_map is not _UNAVAILABLE:
            return cast("ScoreMap | None", kept_map)
        kept = None  # the per-term sums start at the next cycle; this one makes the plain pass
    if kept is not None:
        def contribution(ni: NodeInfo) -> Contribution:
            node = ni.node
            if node is None or not node.metadata.labels:
                return ()
            return tuple(((key, value), amount) for key, value, amount in _additions(
                ctx, ni, node.metadata.labels, all_pods, node_memo_key))

        done, kept_scores = kept.get(node_memo_key, contribution).view(nodes, _score_map)
        if done:
            return kept_scores
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        node_labels = node.metadata.labels
        if not node_labels:
            continue
        additions = _additions(ctx, ni, node_labels, all_pods, node_memo_key)
        for topology_key, value, amount in additions:
            _add(scores, topology_key, value, amount)
    # Entries are only ever added (a sum may come back to 0 but stays), so an empty map means no term
    # applied on any node, which is when upstream skips scoring.
    return scores or None


def _scores_from_index(ctx: _Pass, index: PodIndex, existing: ExistingTermSums,
                       all_nodes: Sequence[NodeInfo]) -> ScoreMap | object | None:
    nodes = all_nodes if type(all_nodes) is list else list(all_nodes)
    additions: list[tuple[str, dict[int, int], int]] = []
    found: dict[str, dict[int, int]] = {}
    for sign, terms in ((1, ctx.affinity), (-1, ctx.anti_affinity)):
        for tid, w in terms:
            t = w.term
            per_pos = found.get(tid)
            if per_pos is None:
                got = index.match_counts(nodes, t.selector, term_namespaces(t), False, KEPT_BEYOND)
                if got is None:
                    return _UNAVAILABLE
                per_pos = found[tid] = got
            if per_pos:
                additions.append((t.topology_key, per_pos, sign * w.weight))
    scores: ScoreMap = {}
    for topology_key, per_pos, factor in additions:
        for pos, count in per_pos.items():
            node = nodes[pos].node
            if node is None:
                continue
            value = node.metadata.labels.get(topology_key)
            if value is not None:
                _add(scores, topology_key, value, factor * count)
    existing.add_matching(scores, ctx, nodes)
    return scores or None


def _score_map(sums: dict[Hashable, int], _: dict[Hashable, int]) -> ScoreMap | None:
    scores: ScoreMap = {}
    for pair, amount in sums.items():
        topology_key, value = cast("tuple[str, str]", pair)
        _add(scores, topology_key, value, amount)
    return scores or None


class _Pass:
    """One incoming pod's scoring pass: its terms with their canonical keys, and which existing terms (by
    canonical key) match it, found once per pass instead of once per existing pod."""

    __slots__ = ("pod", "ns_labels", "affinity", "anti_affinity", "hard_weight", "matches")

    def __init__(self, pod: Pod, ns_labels: Mapping[str, str], preferred_affinity: Sequence[WeightedAffinityTerm],
                 preferred_anti_affinity: Sequence[WeightedAffinityTerm], hard_weight: int) -> None:
        self.pod = pod
        self.ns_labels = ns_labels
        self.affinity = tuple((term_id(w.term), w) for w in preferred_affinity)
        self.anti_affinity = tuple((term_id(w.term), w) for w in preferred_anti_affinity)
        self.hard_weight = hard_weight
        self.matches: dict[Hashable, bool] = {}


#: The NodeInfo memo entry holding this plugin's per-node facts that do not depend on the incoming pod.
_NODE_FACTS = "InterPodAffinity/node-facts"


def _node_facts(ni: NodeInfo) -> dict[Hashable, object]:
    memo = ni.memo
    facts: dict[Hashable, object] | None = memo.get(_NODE_FACTS)
    if facts is None:
        facts = memo[_NODE_FACTS] = {}
    return facts


def _additions(ctx: _Pass, ni: NodeInfo, node_labels: Mapping[str, str], all_pods: bool,
               node_memo_key: str) -> tuple[tuple[str, str, int], ...]:
    """_node_additions, remembered on the NodeInfo under ``node_memo_key``."""
    memo = ni.memo
    additions: tuple[tuple[str, str, int], ...] | None = memo.get(node_memo_key)
    if additions is None:
        additions = _node_additions(ctx, ni, node_labels, all_pods)
        if len(memo) >= MEMO_LIMIT:
            facts = memo.get(_NODE_FACTS)
            memo.clear()
            if facts is not None:
                memo[_NODE_FACTS] = facts
        memo[node_memo_key] = additions
    return additions


def _node_additions(ctx: _Pass, ni: NodeInfo, node_labels: Mapping[str, str],
                    all_pods: bool) -> tuple[tuple[str, str, int], ...]:
    """The (topology key, value, amount) additions the node's pods make to the score map.

    Upstream adds one amount per (existing pod, term) that matches; the same sums are made here from two
    facts kept per node while it does not change: how many of its pods each of the incoming pod's terms
    matches (terms with equal canonical keys match the same pods), and the existing pods' own terms grouped
    by canonical key and topology value with their amounts added up. A (key, value) pair is added when a
    term matched, even when its amounts cancel out, as the per-pod additions do.
    """
    out: list[tuple[str, str, int]] = []
    facts = _node_facts(ni)
    for sign, terms in ((1, ctx.affinity), (-1, ctx.anti_affinity)):
        for key, w in terms:
            t = w.term
            count = _matching_pods(ni, facts, key, t, all_pods)
            if count:
                tv = node_labels.get(t.topology_key)
                if tv is not None:
                    out.append((t.topology_key, tv, sign * w.weight * count))
    for tkey, term, topology_key, value, amount in _existing_terms(ni, facts, node_labels, ctx.hard_weight):
        matched = ctx.matches.get(tkey)
        if matched is None:
            matched = ctx.matches[tkey] = term.matches(ctx.pod, ctx.ns_labels)
        if matched:
            out.append((topology_key, value, amount))
    return tuple(out)


def _matching_pods(ni: NodeInfo, facts: dict[Hashable, object], tid: str, term: AffinityTerm, all_pods: bool) -> int:
    """How many of the node's pods (or of its pods with affinity) an incoming term of canonical key ``tid``
    matches; kept in the node's facts."""
    count_key = (tid, all_pods)
    count = facts.get(count_key)
    if count is None:
        pods = ni.pods if all_pods else ni.pods_with_affinity
        count = facts[count_key] = sum(1 for e in pods if term.matches(e.pod, NO_LABELS))
    return cast("int", count)


ExistingTerm = NodeTerm


def _existing_terms(ni: NodeInfo, facts: dict[Hashable, object], node_labels: Mapping[str, str],
                    hard_weight: int) -> tuple[ExistingTerm, ...]:
    """The node's pods' own terms that can add to a score: hard affinity (when weighted), preferred affinity
    and anti-affinity, grouped by (canonical key, topology key, topology value), amounts summed."""
    fact_key = ("existing-terms", hard_weight)
    kept = facts.get(fact_key)
    if kept is not None:
        return cast("tuple[ExistingTerm, ...]", kept)

    def weighted() -> Iterator[tuple[AffinityTerm, int]]:
        for existing in ni.pods_with_affinity:
            if hard_weight > 0:
                for t in existing.required_affinity_terms:
                    yield t, hard_weight
            for w in existing.preferred_affinity_terms:
                yield w.term, w.weight
            for w in existing.preferred_anti_affinity_terms:
                yield w.term, -w.weight

    terms = group_terms(weighted(), node_labels)
    facts[fact_key] = terms
    return terms


_UNAVAILABLE: object = object()
#: Incoming-pod signatures TermSums remembers, to send repeated ones to the per-signature sums.
SIGNATURES_KEPT = 64


class TermSums:
    """The scoring pass's sums kept per term across cycles, so that a pass costs what the terms cost, not
    what the nodes cost.

    Over every node: which canonical term keys the existing pods' own terms carry (how many nodes carry each),
    per such key the (topology key, value) amounts those terms add, and per incoming term key the number of
    pods it matches per topology value. Each is a :class:`KeptSums` (re-evaluated only on the nodes that
    changed). A pass then matches each distinct existing term once and adds the kept sums of the terms that
    matched and of the incoming pod's own terms. Equal to the per-node pass, pinned by
    tests/test_perf_equivalence.py::test_interpodaffinity_term_sums_equal_plain.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._present: dict[int, KeptSums] = {}  # per hard weight: term key -> nodes carrying it
        self._terms: dict[str, AffinityTerm] = {}  # a term of each key seen (equal keys match the same pods)
        self._sums = KeptSumsCache(limit)
        self._signatures: dict[str, None] = {}

    def scores(self, ctx: _Pass, nodes: Sequence[NodeInfo]) -> ScoreMap | object | None:
        hw = ctx.hard_weight
        present = self._present.get(hw)
        if present is None:
            present = self._present[hw] = KeptSums(lambda ni: self._keys_on(ni, hw))
        ok, keys = present.view(nodes, _keys_of)
        if not ok or keys is None:  # first call, or another number of nodes: counted afresh
            ok, keys = present.view(nodes, _keys_of)
            if not ok or keys is None:
                return _UNAVAILABLE
        scores: ScoreMap = {}
        pending: list[tuple[KeptSums, int]] = []
        for tid in keys:
            term = self._terms[tid]
            if term.matches(ctx.pod, ctx.ns_labels):
                pending.append((self._sums.get(("existing", tid, hw), _existing_contribution(tid, hw)), 1))
        for sign, terms in ((1, ctx.affinity), (-1, ctx.anti_affinity)):
            for tid, w in terms:
                t = w.term
                ks = self._sums.get(("count", tid, t.topology_key), _count_contribution(tid, t))
                pending.append((ks, sign * w.weight))
        for ks, factor in pending:
            add = _adder(scores, factor)
            ok, _ = ks.view(nodes, add)
            if not ok:  # new this cycle, or another number of nodes: counted afresh
                ok, _ = ks.view(nodes, add)
                if not ok:
                    return _UNAVAILABLE
        return scores or None

    def seen_before(self, signature: str) -> bool:
        """Whether an incoming pod with this signature was scored recently (then the per-signature sums,
        which add one map per pass where the per-term ones add one per matching term, are the cheaper)."""
        seen = self._signatures
        if signature in seen:
            return True
        seen[signature] = None
        if len(seen) > SIGNATURES_KEPT:
            del seen[next(iter(seen))]
        return False

    def _keys_on(self, ni: NodeInfo, hw: int) -> Contribution:
        node = ni.node
        if node is None or not node.metadata.labels:
            return ()
        by_id = _existing_by_id(ni, node.metadata.labels, hw)
        terms = self._terms
        for tid, (term, _) in by_id.items():
            if tid not in terms:
                terms[tid] = term
        return tuple((tid, 1) for tid in by_id)


def _keys_of(sums: dict[Hashable, int], occurrences: dict[Hashable, int]) -> list[str]:
    return [cast("str", k) for k in occurrences]


def _adder(scores: ScoreMap, factor: int) -> Callable[[dict[Hashable, int], dict[Hashable, int]], None]:
    """A KeptSums view that adds its sums, times ``factor``, into ``scores`` (the sums and the occurrences
    have the same keys: the (topology key, value) pairs that received an addition)."""
    def add(sums: dict[Hashable, int], _: dict[Hashable, int]) -> None:
        for pair, amount in sums.items():
            topology_key, value = cast("tuple[str, str]", pair)
            per_key = scores.get(topology_key)
            if per_key is None:
                per_key = scores[topology_key] = {}
            per_key[value] = per_key.get(value, 0) + amount * factor
    return add


def _existing_by_id(ni: NodeInfo, node_labels: Mapping[str, str],
                    hw: int) -> dict[str, tuple[AffinityTerm, Contribution]]:
    """The node's existing terms by canonical key: a term of that key and its ((topology key, value), amount)."""
    facts = _node_facts(ni)
    fact_key = ("existing-by-id", hw)
    kept = facts.get(fact_key)
    if kept is None:
        grouped: dict[str, tuple[AffinityTerm, list[tuple[Hashable, int]]]] = {}
        for tid, term, topology_key, value, amount in _existing_terms(ni, facts, node_labels, hw):
            entry = grouped.get(tid)
            if entry is None:
                entry = grouped[tid] = (term, [])
            entry[1].append(((topology_key, value), amount))
        kept = facts[fact_key] = {tid: (term, tuple(pairs)) for tid, (term, pairs) in grouped.items()}
    return cast("dict[str, tuple[AffinityTerm, Contribution]]", kept)


def _existing_contribution(tid: str, hw: int) -> Callable[[NodeInfo], Contribution]:
    def contribution(ni: NodeInfo) -> Contribution:
        node = ni.node
        if node is None or not node.metadata.labels:
            return ()
        entry = _existing_by_id(ni, node.metadata.labels, hw).get(tid)
        return () if entry is None else entry[1]
    return contribution


def _count_contribution(tid: str, term: AffinityTerm) -> Callable[[NodeInfo], Contribution]:
    topology_key = term.topology_key

    def contribution(ni: NodeInfo) -> Contribution:
        node = ni.node
        if node is None:
            return ()
        value = node.metadata.labels.get(topology_key)
        if value is None:
            return ()
        count = _matching_pods(ni, _node_facts(ni), tid, term, True)
        return (((topology_key, value), count),) if count else ()
    return contribution


class ExistingTermSums:
    """The existing pods' own terms over a node list, kept across cycles (a :class:`KeptTerms` per hard
    affinity weight): a scoring pass matches each distinct term the pod can match once and adds the sums of
    those that match, which is what adding every matching term of every node gives."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[int, KeptTerms] = {}

    def add_matching(self, scores: ScoreMap, ctx: _Pass, nodes: list[NodeInfo]) -> None:
        """Add into ``scores`` the sums of the existing terms that match the incoming pod of ``ctx``."""
        hw = ctx.hard_weight
        kept = self._kept.get(hw)
        if kept is None:
            if len(self._kept) >= 4:
                self._kept.clear()
            kept = self._kept[hw] = KeptTerms(partial(_existing_contribution_of, hw=hw), _existing_inputs)
        for pairs in kept.matching(nodes, ctx.pod, ctx.ns_labels, cast("dict[str, bool]", ctx.matches)):
            for (topology_key, value), amount in pairs.items():
                _add(scores, topology_key, value, amount)


def _existing_inputs(ni: NodeInfo) -> tuple[object, ...]:
    """What ``_existing_contribution_of`` reads of a node: its node object and its pods with affinity."""
    return (ni.node, *ni.pods_with_affinity)


def _existing_contribution_of(ni: NodeInfo, hw: int) -> tuple[ExistingTerm, ...]:
    node = ni.node
    if node is None or not ni.pods_with_affinity or not node.metadata.labels:
        return ()
    return _existing_terms(ni, _node_facts(ni), node.metadata.labels, hw)


def node_score(state: PreScoreState, node_labels: Mapping[str, str]) -> int:
    score = 0
    for key, per_value in state.topology_score.items():
        tv = node_labels.get(key)
        if tv is not None:
            score += per_value.get(tv, 0)
    return score


def node_scores(state: PreScoreState, label_sets: Sequence[Mapping[str, str]]) -> list[int]:
    """``[node_score(state, labels) for labels in label_sets]``, one topology key at a time (a node without the
    key adds nothing: no value of ``per_value`` is None). Pinned by
    tests/test_perf_equivalence.py::test_batch_scores_equal_node_by_node_scores."""
    out: list[int] | None = None
    for key, per_value in state.topology_score.items():
        get = cast("Callable[[str | None, int], int]", per_value.get)  # None (the key absent) is never a value
        if out is None:
            out = [get(labels.get(key), 0) for labels in label_sets]
        else:
            out = [v + get(labels.get(key), 0) for v, labels in zip(out, label_sets, strict=True)]
    return [0] * len(label_sets) if out is None else out


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
