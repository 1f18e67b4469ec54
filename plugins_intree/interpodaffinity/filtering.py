"""Required inter-pod (anti-)affinity: the PreFilter state, its counters and the Filter checks.

PreFilter counts, per topology pair (label key, label value) of the nodes existing pods run on:

* ``existing_anti_affinity_counts``: required anti-affinity terms of existing pods that the incoming
  pod matches (so the incoming pod may not join that topology domain);
* ``affinity_counts``: for each required affinity term of the incoming pod, the existing pods that
  match *all* of its affinity terms (one pod has to satisfy every term);
* ``anti_affinity_counts``: existing pods matching a required anti-affinity term of the incoming pod.

Filter then only looks the node's labels up in these maps.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import cast

from plugins_intree.interpodaffinity._kept_terms import KeptTerms, NodeTerm, group_terms
from plugins_intree.interpodaffinity._sums import Contribution, KeptSumsCache
from plugins_intree.interpodaffinity._terms import MEMO_LIMIT, NO_LABELS, memo_key, term_key, term_namespaces
from scheduling_framework.api.pod import Pod
from scheduling_framework.state.node_info import AffinityTerm, NodeInfo, PodInfo
from scheduling_framework.state.pod_index import KEPT_BEYOND, PodIndex
from scheduling_framework.status import Code, Status

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
TopologyCounts = dict[TopologyPair, int]


def _bump(counts: TopologyCounts, labels: Mapping[str, str], key: str, value: int) -> None:
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


def pod_matches_all_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """True when there is at least one term and ``pod`` matches every one (incoming-pod terms)."""
    return bool(terms) and all(t.matches(pod, NO_LABELS) for t in terms)


def update_with_affinity_terms(counts: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod,
                               node_labels: Mapping[str, str], value: int) -> None:
    if pod_matches_all_terms(terms, pod):
        for t in terms:
            _bump(counts, node_labels, t.topology_key, value)


def update_with_anti_affinity_terms(counts: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod,
                                    ns_labels: Mapping[str, str], node_labels: Mapping[str, str],
                                    value: int) -> None:
    for t in terms:
        if t.matches(pod, ns_labels):
            _bump(counts, node_labels, t.topology_key, value)


class PreFilterState:
    """What PreFilter computed for one pod; Filter reads it, the PreFilter extensions update it."""

    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts", "pod",
                 "affinity_terms", "anti_affinity_terms", "namespace_labels", "matches_own_affinity",
                 "_existing_keys", "rejections")

    def __init__(self, pod: Pod, affinity_terms: tuple[AffinityTerm, ...],
                 anti_affinity_terms: tuple[AffinityTerm, ...], namespace_labels: Mapping[str, str],
                 existing_anti_affinity_counts: TopologyCounts | None = None,
                 affinity_counts: TopologyCounts | None = None,
                 anti_affinity_counts: TopologyCounts | None = None) -> None:
        self.pod = pod
        # the incoming pod's required terms, namespaceSelectors already folded into the namespace sets
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts: TopologyCounts = existing_anti_affinity_counts or {}
        self.affinity_counts: TopologyCounts = affinity_counts or {}
        self.anti_affinity_counts: TopologyCounts = anti_affinity_counts or {}
        # Whether the pod satisfies its own affinity terms: lets the first pod of a group that wants to
        # be together schedule when no matching pod runs anywhere yet.
        self.matches_own_affinity = pod_matches_all_terms(affinity_terms, pod)
        self._existing_keys: tuple[str, ...] | None = None
        # one Status per Filter rejection for every node of this cycle (see filter_fast)
        self.rejections = _rejections()

    def existing_keys(self) -> tuple[str, ...]:
        """The topology keys of the existing anti-affinity pairs with a positive count (remembered until the
        counts change)."""
        keys = self._existing_keys
        if keys is None:
            keys = self._existing_keys = tuple(dict.fromkeys(
                key for (key, _), n in self.existing_anti_affinity_counts.items() if n > 0))
        return keys

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        c.matches_own_affinity = self.matches_own_affinity
        c._existing_keys = None
        c.rejections = _rejections()
        return c

    def update_with_pod(self, pod_info: PodInfo, node_labels: Mapping[str, str], multiplier: int) -> None:
        """Account for ``pod_info`` appearing (+1) on or disappearing (-1) from a node with these labels."""
        self._existing_keys = None
        update_with_anti_affinity_terms(self.existing_anti_affinity_counts, pod_info.required_anti_affinity_terms,
                                        self.pod, self.namespace_labels, node_labels, multiplier)
        update_with_affinity_terms(self.affinity_counts, self.affinity_terms, pod_info.pod, node_labels, multiplier)
        update_with_anti_affinity_terms(self.anti_affinity_counts, self.anti_affinity_terms, pod_info.pod,
                                        NO_LABELS, node_labels, multiplier)

    def __repr__(self) -> str:
        return (f"PreFilterState(existing_anti={self.existing_anti_affinity_counts}, "
                f"affinity={self.affinity_counts}, anti={self.anti_affinity_counts})")


def existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str], nodes: Sequence[NodeInfo],
                                  kept: KeptSumsCache | None = None, terms: KeptTerms | None = None,
                                  all_nodes: Sequence[NodeInfo] | None = None) -> TopologyCounts:
    """Topology pairs where an existing pod's required anti-affinity term matches ``pod``.

    ``terms`` keeps the existing terms of ``all_nodes`` (a list holding every node of ``nodes``) across cycles
    by term, so only the terms the pod can match are looked at; ``kept`` keeps the counts per incoming-pod
    signature across cycles (re-counting only the nodes that changed). Either gives the plain pass's counts,
    pinned by tests/test_perf_equivalence.py::test_interpodaffinity_kept_sums_equal_plain and
    ::test_interpodaffinity_index_prefilter_equals_plain.
    """
    counts: TopologyCounts = {}
    if terms is not None and all_nodes is not None:
        lst = all_nodes if type(all_nodes) is list else list(all_nodes)
        for sums in terms.matching(lst, pod, ns_labels):
            if not counts:
                counts = dict(sums)  # the usual case, one term key: one copy in C
                continue
            for pair, amount in sums.items():
                counts[pair] = counts.get(pair, 0) + amount
        return counts
    # Which pairs a node adds depends on its pods and on the incoming pod's namespace, labels and
    # namespace labels: remembered per NodeInfo while the node does not change.
    meta = pod.metadata
    node_memo_key = memo_key("existing" + PRE_FILTER_STATE_KEY, meta.namespace, tuple(sorted(meta.labels.items())),
                             tuple(sorted(ns_labels.items())))
    if kept is not None:
        def contribution(ni: NodeInfo) -> Contribution:
            return tuple((pair, 1) for pair in _node_pairs(pod, ns_labels, ni, node_memo_key))

        done, kept_counts = kept.get(node_memo_key, contribution).view(nodes, _copy_counts)
        if done and kept_counts is not None:
            return kept_counts
    # The plain pass: _node_pairs inlined (a call per node cost 6 % of a SchedulingPodAntiAffinity cycle, where
    # the list grows every cycle and the kept sums cannot be used).
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        memo = ni.memo
        pairs: tuple[tuple[str, str], ...] | None = memo.get(node_memo_key)
        if pairs is None:
            pairs = _matching_anti_affinity_pairs(pod, ns_labels, ni, node.metadata.labels)
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[node_memo_key] = pairs
        for pair in pairs:
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def _copy_counts(sums: dict[Hashable, int], _: dict[Hashable, int]) -> TopologyCounts:
    return dict(sums)  # type: ignore[arg-type]


def _node_pairs(pod: Pod, ns_labels: Mapping[str, str], ni: NodeInfo,
                node_memo_key: str) -> tuple[tuple[str, str], ...]:
    """The pairs one node adds to existing_anti_affinity_counts (none without a node), remembered on the
    NodeInfo."""
    node = ni.node
    if node is None:
        return ()
    memo = ni.memo
    pairs: tuple[tuple[str, str], ...] | None = memo.get(node_memo_key)
    if pairs is None:
        pairs = _matching_anti_affinity_pairs(pod, ns_labels, ni, node.metadata.labels)
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[node_memo_key] = pairs
    return pairs


def anti_affinity_inputs(ni: NodeInfo) -> tuple[object, ...]:
    """What ``anti_affinity_terms_of`` reads of a node: its node object and its pods with required
    anti-affinity."""
    return (ni.node, *ni.pods_with_required_anti_affinity)


def anti_affinity_terms_of(ni: NodeInfo) -> tuple[NodeTerm, ...]:
    """The node's existing required anti-affinity terms for a :class:`KeptTerms`: per (term key, topology pair),
    how many (pod, term) there are."""
    node = ni.node
    if node is None or not ni.pods_with_required_anti_affinity:
        return ()
    return group_terms(((t, 1) for existing in ni.pods_with_required_anti_affinity
                        for t in existing.required_anti_affinity_terms), node.metadata.labels)


def incoming_counts_from_index(affinity_terms: Sequence[AffinityTerm], anti_affinity_terms: Sequence[AffinityTerm],
                               nodes: Sequence[NodeInfo],
                               index: PodIndex) -> tuple[TopologyCounts, TopologyCounts] | None:
    """:func:`incoming_affinity_anti_affinity_counts` from the pods the snapshot's index lists for the terms'
    selectors (``nodes`` is the snapshot's list); None when a selector is not one the index answers."""
    lst = nodes if type(nodes) is list else list(nodes)
    affinity: TopologyCounts = {}
    anti: TopologyCounts = {}
    if affinity_terms:
        first = affinity_terms[0]
        lists = index.match_lists(lst, first.selector, term_namespaces(first), False, KEPT_BEYOND)
        if lists is None:
            return None
        for pos, pods in lists.items():
            n = 0
            for pi in pods:
                if pod_matches_all_terms(affinity_terms, pi.pod):
                    n += 1
            node = lst[pos].node
            if not n or node is None:
                continue
            labels = node.metadata.labels
            for t in affinity_terms:
                tv = labels.get(t.topology_key)
                if tv is not None:
                    pair = (t.topology_key, tv)
                    affinity[pair] = affinity.get(pair, 0) + n
    for t in anti_affinity_terms:
        counts = index.match_counts(lst, t.selector, term_namespaces(t), False, KEPT_BEYOND)
        if counts is None:
            return None
        for pos, n in counts.items():
            node = lst[pos].node
            if node is None:
                continue
            tv = node.metadata.labels.get(t.topology_key)
            if tv is not None:
                pair = (t.topology_key, tv)
                anti[pair] = anti.get(pair, 0) + n
    return affinity, anti


def _matching_anti_affinity_pairs(pod: Pod, ns_labels: Mapping[str, str], ni: NodeInfo,
                                  labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for existing in ni.pods_with_required_anti_affinity:
        for t in existing.required_anti_affinity_terms:
            if t.matches(pod, ns_labels):
                tv = labels.get(t.topology_key)
                if tv is not None:
                    out.append((t.topology_key, tv))
    return tuple(out)


def incoming_affinity_anti_affinity_counts(affinity_terms: Sequence[AffinityTerm],
                                           anti_affinity_terms: Sequence[AffinityTerm],
                                           nodes: Sequence[NodeInfo], kept: KeptSumsCache | None = None,
                                           ) -> tuple[TopologyCounts, TopologyCounts]:
    """Topology pairs of existing pods matching the incoming pod's affinity (all terms) / anti-affinity terms.

    ``kept`` keeps the counts across cycles (re-counting only the nodes that changed, as
    existing_anti_affinity_counts does); they equal the plain pass below, pinned by
    tests/test_perf_equivalence.py::test_interpodaffinity_kept_incoming_counts_equal_plain.
    """
    affinity: TopologyCounts = {}
    anti: TopologyCounts = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity, anti
    # What a node contributes depends on its pods and the terms only: remembered per NodeInfo.
    node_memo_key = memo_key(PRE_FILTER_STATE_KEY, tuple(term_key(t) for t in affinity_terms),
                             tuple(term_key(t) for t in anti_affinity_terms))
    if kept is not None:
        # one kept map per side with terms (the sums are the map: a copy in C, no per-pair step)
        maps: list[TopologyCounts] = [{}, {}]
        for which, terms in enumerate((affinity_terms, anti_affinity_terms)):
            if not terms:
                continue

            def contribution(ni: NodeInfo, which: int = which) -> Contribution:
                return _incoming_contribution(affinity_terms, anti_affinity_terms, ni, node_memo_key)[which]

            done, counts = kept.get((node_memo_key, which), contribution).view(nodes, _copy_counts)
            if not done or counts is None:
                break
            maps[which] = counts
        else:
            return maps[0], maps[1]
    for ni in nodes:
        node = ni.node
        if node is None or not ni.pods:
            continue
        n_affinity, n_anti = _matched(affinity_terms, anti_affinity_terms, ni, node_memo_key)
        labels = node.metadata.labels
        if n_affinity:
            for t in affinity_terms:
                tv = labels.get(t.topology_key)
                if tv is not None:
                    pair = (t.topology_key, tv)
                    affinity[pair] = affinity.get(pair, 0) + n_affinity
        for t, n in zip(anti_affinity_terms, n_anti, strict=True):
            if n:
                tv = labels.get(t.topology_key)
                if tv is not None:
                    pair = (t.topology_key, tv)
                    anti[pair] = anti.get(pair, 0) + n
    return affinity, anti


def _matched(affinity_terms: Sequence[AffinityTerm], anti_affinity_terms: Sequence[AffinityTerm], ni: NodeInfo,
             node_memo_key: str) -> tuple[int, tuple[int, ...]]:
    """``_matching_pods`` of the node, kept in its memo under ``node_memo_key`` while the node is unchanged."""
    memo = ni.memo
    matched: tuple[int, tuple[int, ...]] | None = memo.get(node_memo_key)
    if matched is None:
        matched = _matching_pods(affinity_terms, anti_affinity_terms, ni)
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[node_memo_key] = matched
    return matched


def _incoming_contribution(affinity_terms: Sequence[AffinityTerm], anti_affinity_terms: Sequence[AffinityTerm],
                           ni: NodeInfo, node_memo_key: str) -> tuple[Contribution, Contribution]:
    """What one node adds to incoming_affinity_anti_affinity_counts: (pair, n) additions, n > 0, to the
    affinity map and to the anti-affinity map (those of the plain pass, in its order)."""
    node = ni.node
    if node is None or not ni.pods:
        return (), ()
    n_affinity, n_anti = _matched(affinity_terms, anti_affinity_terms, ni, node_memo_key)
    labels = node.metadata.labels
    affinity: list[tuple[Hashable, int]] = []
    anti: list[tuple[Hashable, int]] = []
    if n_affinity:
        for t in affinity_terms:
            tv = labels.get(t.topology_key)
            if tv is not None:
                affinity.append(((t.topology_key, tv), n_affinity))
    for t, n in zip(anti_affinity_terms, n_anti, strict=True):
        if n:
            tv = labels.get(t.topology_key)
            if tv is not None:
                anti.append(((t.topology_key, tv), n))
    return tuple(affinity), tuple(anti)


def _matching_pods(affinity_terms: Sequence[AffinityTerm], anti_affinity_terms: Sequence[AffinityTerm],
                   ni: NodeInfo) -> tuple[int, tuple[int, ...]]:
    """(pods of the node matching every affinity term, pods matching each anti-affinity term)."""
    n_affinity = 0
    n_anti = [0] * len(anti_affinity_terms)
    for pi in ni.pods:
        existing = pi.pod
        if affinity_terms and pod_matches_all_terms(affinity_terms, existing):
            n_affinity += 1
        for i, t in enumerate(anti_affinity_terms):
            if t.matches(existing, NO_LABELS):
                n_anti[i] += 1
    return n_affinity, tuple(n_anti)


# --- Filter checks --------------------------------------------------------------------------------


def satisfy_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No existing pod's anti-affinity term that matches the pod covers this node's topology."""
    counts = state.existing_anti_affinity_counts
    if not counts:
        return True
    # Equivalent to looking every node label up in the counts; walk whichever side is smaller.
    if len(counts) <= len(labels):
        for (key, value), n in counts.items():
            if n > 0 and labels.get(key) == value:
                return False
        return True
    for pair in labels.items():
        if counts.get(pair, 0) > 0:
            return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No pod matching one of the incoming pod's anti-affinity terms runs in this node's topology."""
    counts = state.anti_affinity_counts
    if counts:
        for t in state.anti_affinity_terms:
            tv = labels.get(t.topology_key)
            if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """The node has every affinity topology key and a matching pod in each domain (or the pod is first)."""
    pods_exist = True
    counts = state.affinity_counts
    for t in state.affinity_terms:
        tv = labels.get(t.topology_key)
        if tv is None:
            # every topology key of the terms must be present on the node
            return False
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # No pod in the cluster matches yet: let a pod that matches its own terms start the group.
        return not counts and state.matches_own_affinity
    return True


def _rejections() -> tuple[Status, Status, Status]:
    return (Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH))


def filter_many(state: PreFilterState, label_sets: list[Mapping[str, str]]) -> list[Status | None]:
    """``[filter_fast(state, labels) for labels in label_sets]``. When the pod has no affinity term and every
    anti-affinity pair (the pod's terms' and the existing pods') is on one topology key (hostname, typically),
    each node's pair is looked up in the counts inline (no call per node; the work stays per node, never per
    pair: a cluster may hold thousands); otherwise filter_fast per node. Pinned by
    tests/test_perf_equivalence.py::test_interpodaffinity_filter_fast_equals_plain."""
    anti = state.anti_affinity_counts
    counts = state.existing_anti_affinity_counts
    if state.affinity_terms:
        return [filter_fast(state, labels) for labels in label_sets]
    keys = set(state.existing_keys()) if counts else set()
    if anti:
        keys.update(t.topology_key for t in state.anti_affinity_terms)
    if not keys:
        return [None] * len(label_sets)
    if len(keys) > 1:
        return [filter_fast(state, labels) for labels in label_sets]
    key = keys.pop()
    # (a node without the key looks up (key, None), which no count holds: it passes, as in filter_fast)
    own, existing = state.rejections[1], state.rejections[2]
    anti_get = cast("dict[tuple[str, str | None], int]", anti).get
    counts_get = cast("dict[tuple[str, str | None], int]", counts).get
    return [own if anti_get(pair := (key, labels.get(key)), 0) > 0
            else (existing if counts_get(pair, 0) > 0 else None) for labels in label_sets]


def filter_fast(state: PreFilterState, labels: Mapping[str, str]) -> Status | None:
    """The plugin's Filter checks on a node with these labels, rejecting with the state's shared statuses
    (the framework only sets their ``plugin``, to this plugin's name; nothing else changes a returned status).

    The existing pods' anti-affinity check looks up the node's value of each key of the positive pairs
    rather than each node label: a pair (key, value) with a positive count and ``labels[key] == value``
    exists exactly when it is found that way. Pinned by
    tests/test_perf_equivalence.py::test_interpodaffinity_filter_fast_equals_plain.
    """
    if state.affinity_terms and not satisfy_pod_affinity(state, labels):
        return state.rejections[0]
    anti = state.anti_affinity_counts
    if anti:  # satisfy_pod_anti_affinity, inlined (one call less per node)
        for t in state.anti_affinity_terms:
            key = t.topology_key
            tv = labels.get(key)
            if tv is not None and anti.get((key, tv), 0) > 0:
                return state.rejections[1]
    counts = state.existing_anti_affinity_counts
    if counts:
        for key in state.existing_keys():
            value = labels.get(key)
            if value is not None and counts.get((key, value), 0) > 0:
                return state.rejections[2]
    return None
