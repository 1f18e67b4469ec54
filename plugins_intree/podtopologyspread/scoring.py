"""PreScore / Score / NormalizeScore: soft (ScheduleAnyway) constraints.

PreScore sizes each topology over the candidate nodes and counts matching pods per domain over all
nodes; Score sums, per constraint, the node's domain count weighted by log(domains + 2) plus maxSkew - 1
(hostname constraints count the node's own pods directly); NormalizeScore inverts, so the emptiest
domains score highest.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from functools import partial

from plugins_intree.podtopologyspread.common import (
    LABEL_HOSTNAME,
    NAME,
    CountKey,
    NodeInclusion,
    RequiredNodeAffinity,
    Selector,
    SpreadConstraint,
    count_matching_pods,
    node_has_all_keys,
    unique_selectors,
)
from plugins_intree.podtopologyspread.domains import DomainCountsCache
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.interfaces import MAX_NODE_SCORE, NodeScore
from scheduling_framework.state.node_info import NodeInfo, node_labels
from scheduling_framework.state.pod_index import KEPT_BEYOND, PodIndex

PRE_SCORE_STATE_KEY = "PreScore" + NAME
_node = operator.attrgetter("node")
_INVALID_SCORE = -1


def topology_normalizing_weight(size: int) -> float:
    """Weight of a topology with ``size`` domains, so small topologies are not drowned by large ones."""
    return math.log(size + 2)


def round_half_away_from_zero(x: float) -> int:
    """Go's math.Round (Python's round() rounds halves to even)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


class PreScoreState:
    """Per-cycle scoring state. Read-only after PreScore, so ``clone`` shares it."""

    __slots__ = ("constraints", "host_count", "host_counts", "ignored_nodes", "index", "namespace", "plan",
                 "topology_normalizing_weight", "topology_value_to_pod_counts")

    def __init__(self, constraints: Sequence[SpreadConstraint], ignored_nodes: set[str],
                 topology_value_to_pod_counts: list[dict[str, int]], topology_normalizing_weight: list[float],
                 namespace: str, index: PodIndex | None = None,
                 host_counts: dict[str, dict[int, int]] | None = None) -> None:
        self.constraints = tuple(constraints)
        # nodes lacking one of the topology keys (when all keys are required): scored 0
        self.ignored_nodes = ignored_nodes
        self.topology_value_to_pod_counts = topology_value_to_pod_counts
        self.topology_normalizing_weight = topology_normalizing_weight
        self.namespace = namespace
        # What Score needs per constraint, flattened once: key, is-hostname, selector (as a count key),
        # weight, maxSkew - 1 and the domain counts.
        self.plan: tuple[tuple[str, bool, CountKey, float, int, dict[str, int]], ...] = tuple(
            (c.topology_key, c.topology_key == LABEL_HOSTNAME, CountKey(c.selector, namespace), w, c.max_skew - 1, m)
            for c, w, m in zip(self.constraints, topology_normalizing_weight, topology_value_to_pod_counts,
                               strict=True))
        # Hostname constraints count the scored node's own pods: with ``index``, PreScore found them for every
        # node of the snapshot at once (count key -> position in the index's node list -> matching pods).
        self.index = index
        self.host_counts = host_counts
        #: how Score counts a node's matching pods for a hostname constraint: the index's counts when PreScore
        #: took them, else count_matching_pods itself (one call less per node)
        self.host_count: Callable[[NodeInfo, CountKey], int] = (
            self._host_count_from_index if index is not None and host_counts is not None else count_matching_pods)

    def _host_count_from_index(self, node_info: NodeInfo, count_key: CountKey) -> int:
        """How many of the node's pods ``count_key`` matches (``count_matching_pods``, from the index when it
        holds this very NodeInfo)."""
        index = self.index
        if index is not None and self.host_counts is not None:
            per_pos = self.host_counts.get(count_key.key)  # type: ignore[arg-type]
            if per_pos is not None:
                pos = index.position(node_info)
                if pos is not None:
                    return per_pos.get(pos, 0)
        return count_matching_pods(node_info, count_key)

    def clone(self) -> PreScoreState:
        return self

    def __repr__(self) -> str:
        return (f"PreScoreState(constraints={list(self.constraints)!r}, ignored_nodes={sorted(self.ignored_nodes)}, "
                f"topology_value_to_pod_counts={self.topology_value_to_pod_counts!r}, "
                f"topology_normalizing_weight={self.topology_normalizing_weight!r})")


def calc_pre_score_state(pod: Pod, constraints: list[SpreadConstraint], filtered_nodes: Sequence[NodeInfo],
                         all_nodes: Sequence[NodeInfo], require_all_topologies: bool,
                         cache: DomainCountsCache | None = None, index: PodIndex | None = None) -> PreScoreState:
    """Domains come from the candidate nodes; their pod counts from every node of the cluster.

    ``index`` (the snapshot's pods by label, following ``all_nodes``) finds the matching pods without visiting
    the others; ``cache`` keeps the per-domain counts of earlier cycles, so that only the nodes that changed
    are counted again. Either gives what the plain passes give."""
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    sizes = [0] * len(constraints)
    # Per constraint, the domains of the candidate nodes (that have every key when all are required), in
    # first-seen order: one comprehension per key rather than one loop step per node and key. Equal to the
    # node-by-node loop (each node with node_has_all_keys, then labels.get(key, "") per constraint) it
    # replaces; pinned by tests/test_perf_equivalence.py::test_spread_score_per_domain_equals_per_node.
    listed_labels = node_labels(filtered_nodes)  # one pass when every NodeInfo has its node (so in a snapshot)
    live: list[Node] | None = None
    if listed_labels is None:
        live = [node for node in map(_node, filtered_nodes) if node is not None]
        label_sets = [node.metadata.labels for node in live]
    else:
        label_sets = listed_labels
    if require_all_topologies:
        keys = list({c.topology_key: None for c in constraints})
        if len(keys) == 2:  # (the default constraints': one pass for both keys)
            k1, k2 = keys
            lacking = {i for i, labels in enumerate(label_sets) if k1 not in labels or k2 not in labels}
        else:
            lacking = {i for key in keys for i, labels in enumerate(label_sets) if key not in labels}
        if lacking:
            if live is None:  # (every NodeInfo has its node then)
                live = [ni.node for ni in filtered_nodes]  # type: ignore[misc]
            ignored = {live[i].metadata.name for i in lacking}
            label_sets = [labels for i, labels in enumerate(label_sets) if i not in lacking]
    for i, c in enumerate(constraints):
        if c.topology_key == LABEL_HOSTNAME:
            continue  # counted per node in Score
        key = c.topology_key
        m = counts[i] = dict.fromkeys([labels.get(key, "") for labels in label_sets], 0)
        sizes[i] = len(m)
    weights: list[float] = []
    for i, c in enumerate(constraints):
        size = sizes[i]
        if c.topology_key == LABEL_HOSTNAME:
            size = len(filtered_nodes) - len(ignored)
        weights.append(topology_normalizing_weight(size))

    ns = pod.metadata.namespace
    selectors, sel_index = unique_selectors(constraints)
    count_keys = [CountKey(sel, ns) for sel in selectors]
    per_node_counts: list[int] = [0] * len(selectors)
    policies = NodeInclusion(pod, RequiredNodeAffinity(pod))
    indexed = [(i, c) for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME]
    host_counts: dict[str, dict[int, int]] | None = None
    if index is not None and indexed and cache is not None:
        # counts kept for these constraints already (a selector met cycle after cycle): follow them instead
        counted = [c for _, c in indexed]
        if cache.has([c.topology_key for c in counted], [count_keys[sel_index[i]] for i, _ in indexed],
                     [c.topology_key for c in constraints] if require_all_topologies else [], "",
                     None if policies.includes_every_node(constraints) else policies.key(counted)):
            index = None
    if index is not None:
        found = _counts_from_index(index, all_nodes, constraints, indexed, counts, selectors, sel_index, count_keys,
                                   policies, require_all_topologies)
        if found is not None:
            host_counts = found
            indexed = []  # counted
            if not host_counts:
                index = None
        else:
            index = None
    if indexed and cache is not None:
        # The counts of each domain over all eligible nodes (those a constraint's inclusion policies include:
        # a function of the node object alone), kept across cycles, for the domains that contain a candidate
        # node. Equal to the plain loops below; pinned by
        # tests/test_perf_equivalence.py::test_spread_kept_counts_equal_plain_passes.
        required = [c.topology_key for c in constraints] if require_all_topologies else []
        counted = [c for _, c in indexed]
        everywhere = policies.includes_every_node(constraints)
        totals = cache.get([c.topology_key for c in counted], [count_keys[sel_index[i]] for i, _ in indexed],
                           required, "", None if everywhere else partial(policies.flags, constraints=counted),
                           None if everywhere else policies.key(counted)).counts(all_nodes)
        for (i, _), total in zip(indexed, totals, strict=True):
            m = counts[i]
            for value in m:
                m[value] = total.get(value, 0)
    elif indexed and policies.includes_every_node(constraints):
        # Nothing to check per node: each constraint adds its (remembered) per-node matches; a node without
        # pods adds nothing.
        plan = [(counts[i], c.topology_key, count_keys[sel_index[i]]) for i, c in indexed]
        topology_keys = [c.topology_key for c in constraints] if require_all_topologies else []
        for ni in all_nodes:
            node = ni.node
            if node is None or not ni.pods:
                continue
            labels = node.metadata.labels
            for key in topology_keys:
                if key not in labels:
                    break
            else:
                memo = ni.memo
                for m, key, ck in plan:
                    value = labels.get(key, "")
                    # Only domains that contain a candidate node matter.
                    if value in m:
                        memo_key = ck.key
                        cnt = 0 if memo_key is None else memo.get(memo_key)
                        if cnt is None:
                            cnt = count_matching_pods(ni, ck)
                        m[value] += cnt
    elif indexed:
        for ni in all_nodes:
            node = ni.node
            if node is None:
                continue
            labels = node.metadata.labels
            if require_all_topologies and not node_has_all_keys(labels, constraints):
                continue
            policies.reset(node)
            for j in range(len(per_node_counts)):
                per_node_counts[j] = -1
            for i, c in indexed:
                m = counts[i]
                value = labels.get(c.topology_key, "")
                # Only domains that contain a candidate node matter.
                if value not in m or not policies.includes(c):
                    continue
                j = sel_index[i]
                cnt = per_node_counts[j]
                if cnt < 0:
                    cnt = per_node_counts[j] = count_matching_pods(ni, count_keys[j])
                m[value] += cnt
    return PreScoreState(constraints, ignored, counts, weights, ns, index, host_counts)


def _counts_from_index(index: PodIndex, all_nodes: Sequence[NodeInfo], constraints: list[SpreadConstraint],
                       indexed: list[tuple[int, SpreadConstraint]], counts: list[dict[str, int]],
                       selectors: list[Selector], sel_index: list[int], count_keys: list[CountKey],
                       policies: NodeInclusion, require_all_topologies: bool) -> dict[str, dict[int, int]] | None:
    """Add, into ``counts``, the matching pods of every eligible node to its domain of each (non-hostname)
    constraint, from the pods the index lists for the selector; return per hostname constraint's count key the
    matching pods per position (for Score). None, with ``counts`` untouched, when a selector is not one the
    index answers. Equal to the plain passes; pinned by
    tests/test_perf_equivalence.py::test_spread_index_counts_equal_plain_passes."""
    nodes = all_nodes if type(all_nodes) is list else list(all_nodes)
    per_selector: dict[int, dict[int, int]] = {}
    for j, ck in enumerate(count_keys):
        if ck.key is None:
            per_selector[j] = {}
            continue
        got = index.match_counts(nodes, selectors[j], (ck.namespace,), True, KEPT_BEYOND)
        if got is None:
            return None
        per_selector[j] = got
    required = [c.topology_key for c in constraints] if require_all_topologies else []
    everywhere = policies.includes_every_node(constraints)
    for i, c in indexed:
        m = counts[i]
        key = c.topology_key
        for pos, cnt in per_selector[sel_index[i]].items():
            node = nodes[pos].node
            if node is None:
                continue
            labels = node.metadata.labels
            if required and not node_has_all_keys(labels, constraints):
                continue
            value = labels.get(key, "")
            if value not in m:
                continue  # only domains that contain a candidate node matter
            if not everywhere:
                policies.reset(node)
                if not policies.includes(c):
                    continue
            m[value] += cnt
    host: dict[str, dict[int, int]] = {}
    for i, c in enumerate(constraints):
        ck = count_keys[sel_index[i]]
        if c.topology_key == LABEL_HOSTNAME and ck.key is not None:
            host[ck.key] = per_selector[sel_index[i]]
    return host


def score_node(s: PreScoreState, node_info: NodeInfo) -> int:
    node = node_info.node
    if node is None or node.metadata.name in s.ignored_nodes:
        return 0
    labels = node.metadata.labels
    score = 0.0
    for key, is_host, count_key, weight, skew_offset, m in s.plan:
        value = labels.get(key)
        if value is None:
            continue
        if is_host:
            cnt = s.host_count(node_info, count_key)
        else:
            cnt = m.get(value, 0)
        # maxSkew - 1 flattens the differences between domains: a larger maxSkew tolerates more skew.
        score += cnt * weight + skew_offset
    return round_half_away_from_zero(score)


def score_domains(s: PreScoreState, nodes: Sequence[NodeInfo]) -> list[int]:
    """``[score_node(s, ni) for ni in nodes]``, computed once per distinct input of score_node.

    Besides whether the node is ignored, score_node reads, per constraint in order, the node's value of the
    topology key (its domain) and, for hostname constraints, the node's matching-pod count instead (each
    only when the node has the key). Nodes with equal such inputs get the first one's score. Pinned by
    tests/test_perf_equivalence.py::test_spread_score_per_domain_equals_per_node.
    """
    ignored = s.ignored_nodes
    plan = s.plan
    cache: dict[object, int] = {}
    out: list[int] = []
    append = out.append
    if len(plan) == 1 and not plan[0][1]:
        key = plan[0][0]
        for ni in nodes:
            node = ni.node
            if node is None or (ignored and node.metadata.name in ignored):
                append(0)
                continue
            value = node.metadata.labels.get(key)
            sc = cache.get(value)
            if sc is None:
                sc = cache[value] = score_node(s, ni)
            append(sc)
        return out
    labels_list = node_labels(nodes)
    if labels_list is not None:
        # Every node has its node object: the inputs as one column per constraint (the node's domain, or its
        # matching-pod count for a hostname constraint; None where the node lacks the key), a score per distinct
        # row of inputs, computed as score_node computes it.
        columns: list[list[object]] = []
        for key, is_host, count_key, _, _, _ in plan:
            values: list[object] = [labels.get(key) for labels in labels_list]
            if is_host:
                counts = _host_counts(s, nodes, count_key)
                values = [None if v is None else c for v, c in zip(values, counts, strict=True)]
            columns.append(values)
        rows = list(zip(*columns, strict=True))
        score_of = {row: _row_score(plan, row) for row in set(rows)}
        scores = list(map(score_of.__getitem__, rows))
        if ignored:
            return [0 if ni.name in ignored else sc for ni, sc in zip(nodes, scores, strict=True)]
        return scores
    host_count = s.host_count
    for ni in nodes:
        node = ni.node
        if node is None or (ignored and node.metadata.name in ignored):
            append(0)
            continue
        labels = node.metadata.labels
        inputs: list[object] = []
        for key, is_host, count_key, _, _, _ in plan:
            value = labels.get(key)
            inputs.append(host_count(ni, count_key) if is_host and value is not None else value)
        domain = tuple(inputs)
        sc = cache.get(domain)
        if sc is None:
            sc = cache[domain] = score_node(s, ni)
        append(sc)
    return out


def _host_counts(s: PreScoreState, nodes: Sequence[NodeInfo], count_key: CountKey) -> list[int]:
    """``s.host_count`` of each of ``nodes`` for ``count_key`` (PreScoreState._host_count_from_index for many
    nodes: the index's counts by position when PreScore took them, else counted on each node)."""
    index, host_counts = s.index, s.host_counts
    per_pos = None if index is None or host_counts is None else host_counts.get(count_key.key)  # type: ignore[arg-type]
    if per_pos is None or index is None:  # (index: for the type checker)
        return [count_matching_pods(ni, count_key) for ni in nodes]
    return [count_matching_pods(ni, count_key) if p is None else per_pos.get(p, 0)
            for p, ni in zip(index.positions(nodes), nodes, strict=True)]


def _row_score(plan: tuple[tuple[str, bool, CountKey, float, int, dict[str, int]], ...],
               row: tuple[object, ...]) -> int:
    """score_node's sum for a node whose inputs are ``row`` (per constraint: its domain value or, for a hostname
    constraint, its matching pods; None when the node lacks the key), in the same order of float additions."""
    score = 0.0
    for (_, is_host, _, weight, skew_offset, m), value in zip(plan, row, strict=True):
        if value is None:
            continue
        cnt = value if is_host else m.get(value, 0)  # type: ignore[call-overload]
        score += cnt * weight + skew_offset  # type: ignore[operator]
    return round_half_away_from_zero(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Invert and scale to [0, MAX_NODE_SCORE]; ignored nodes get 0."""
    min_score: int | None = None
    max_score = 0
    ignored = s.ignored_nodes
    for ns in scores:
        if ns.name in ignored:
            ns.score = _INVALID_SCORE
            continue
        if min_score is None or ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    lo = 0 if min_score is None else min_score
    for ns in scores:
        if ns.score == _INVALID_SCORE:
            ns.score = 0
        elif max_score == 0:
            ns.score = MAX_NODE_SCORE
        else:
            ns.score = MAX_NODE_SCORE * (max_score + lo - ns.score) // max_score


def normalize_values(s: PreScoreState, names: list[str], scores: list[int]) -> list[int]:
    """:func:`normalize_scores` on plain scores of the nodes ``names``, returning new ones."""
    ignored = s.ignored_nodes
    if not ignored and len(names) == len(scores):
        # No ignored node: the loops below reduce to min / max of the scores; equal results pinned by
        # tests/test_perf_equivalence.py::test_spread_score_per_domain_equals_per_node.
        if not scores:
            return []
        lo, hi = min(scores), max(0, max(scores))
        if hi == 0:
            return [0 if v == _INVALID_SCORE else MAX_NODE_SCORE for v in scores]
        top = hi + lo
        return [0 if v == _INVALID_SCORE else MAX_NODE_SCORE * (top - v) // hi for v in scores]
    vals = [_INVALID_SCORE if nm in ignored else v for nm, v in zip(names, scores, strict=True)]
    min_score: int | None = None
    max_score = 0
    for nm, v in zip(names, vals, strict=True):
        if nm in ignored:
            continue
        if min_score is None or v < min_score:
            min_score = v
        if v > max_score:
            max_score = v
    lo = 0 if min_score is None else min_score
    out: list[int] = []
    for v in vals:
        if v == _INVALID_SCORE:
            out.append(0)
        elif max_score == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(MAX_NODE_SCORE * (max_score + lo - v) // max_score)
    return out
