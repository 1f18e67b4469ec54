"""PreFilter / Filter: hard (DoNotSchedule) constraints, counted per topology domain once per cycle.

PreFilter walks every node once, counting the pods each constraint selects per topology value. Filter
then only looks up the node's domain count and the global minimum: O(constraints) per node.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from functools import partial

from plugins_intree.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    CountKey,
    NodeInclusion,
    RequiredNodeAffinity,
    Selector,
    SpreadConstraint,
    count_matching_pods,
    node_has_all_keys,
    selector_matches,
    unique_selectors,
)
from plugins_intree.podtopologyspread.domains import DomainCountsCache, DomainLayoutCache
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.pod_index import KEPT_BEYOND, PodIndex
from scheduling_framework.status import Code, Status

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

# Sentinel count for an unset critical path (upstream uses MaxInt32).
_UNSET = 2**31 - 1


class CriticalPaths:
    """The two topology values with the fewest matching pods for one constraint.

    ``num0`` is always the global minimum; ``num1 >= num0`` but is not necessarily the second minimum.
    Two entries are enough because preemption only ever adds or removes pods on one node per copy of the
    state, which changes a single domain at a time.
    """

    __slots__ = ("num0", "num1", "value0", "value1")

    def __init__(self, value0: str = "", num0: int = _UNSET, value1: str = "", num1: int = _UNSET) -> None:
        self.value0 = value0
        self.num0 = num0
        self.value1 = value1
        self.num1 = num1

    def update(self, value: str, num: int) -> None:
        if value == self.value0:
            self.num0 = num
        elif value == self.value1:
            self.num1 = num
        else:
            if num < self.num0:
                self.value1, self.num1 = self.value0, self.num0
                self.value0, self.num0 = value, num
            elif num < self.num1:
                self.value1, self.num1 = value, num
            return
        if self.num0 > self.num1:
            self.value0, self.num0, self.value1, self.num1 = self.value1, self.num1, self.value0, self.num0

    def clone(self) -> CriticalPaths:
        return CriticalPaths(self.value0, self.num0, self.value1, self.num1)

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.value0, self.num0), (self.value1, self.num1)

    def __repr__(self) -> str:
        return f"CriticalPaths({self.as_tuple()})"


_second = operator.itemgetter(1)


def critical_paths_of(m: Mapping[str, int]) -> CriticalPaths:
    """The CriticalPaths that ``update`` with each (value, num) of ``m`` in order gives, found by ``min``.

    Updating with distinct values in order keeps in slot 0 the first value with the least num, and in slot
    1 the first value with the least num among the others (only a strictly smaller num displaces either).
    Pinned by tests/test_perf_equivalence.py::test_critical_paths_of_equals_updates.
    """
    if not m:
        return CriticalPaths()
    value0, num0 = min(m.items(), key=_second)  # the first of the least
    if len(m) == 1 or num0 >= _UNSET:
        return _critical_paths_by_updates(m)
    rest = dict(m)
    del rest[value0]
    value1, num1 = min(rest.items(), key=_second)
    if num1 >= _UNSET:
        return _critical_paths_by_updates(m)  # the sentinel would have kept slot 1 unset
    return CriticalPaths(value0, num0, value1, num1)


def _critical_paths_by_updates(m: Mapping[str, int]) -> CriticalPaths:
    p = CriticalPaths()
    for value, num in m.items():
        p.update(value, num)
    return p


class PreFilterState:
    """Per-cycle spreading state for the hard constraints.

    ``tp_value_to_match_num[i]`` maps each eligible topology value of constraint ``i`` to its matching
    pod count; ``critical_paths[i]`` tracks that map's minimum. ``self_match[i]`` says whether the
    incoming pod is selected by constraint ``i`` itself. An empty ``constraints`` is a valid state that
    lets every node through.
    """

    __slots__ = ("constraints", "critical_paths", "keys", "limits", "rejections", "self_match", "single_check",
                 "single_key", "tp_value_to_match_num", "verdicts")

    def __init__(self, constraints: Sequence[SpreadConstraint] = (),
                 critical_paths: list[CriticalPaths] | None = None,
                 tp_value_to_match_num: list[dict[str, int]] | None = None,
                 self_match: Sequence[int] = ()) -> None:
        self.constraints: tuple[SpreadConstraint, ...] = tuple(constraints)
        self.critical_paths: list[CriticalPaths] = critical_paths if critical_paths is not None else []
        self.tp_value_to_match_num: list[dict[str, int]] = (
            tp_value_to_match_num if tp_value_to_match_num is not None else [])
        self.self_match: tuple[int, ...] = tuple(self_match)
        # Filter's verdict depends on the node only through its values of the topology keys (None when
        # absent): with several constraints, remembered per domain (the tuple of values); ``single_key`` is
        # the key when there is one constraint. Emptied whenever the counts change (update_with_pod); a clone
        # starts empty.
        self.keys: tuple[str, ...] = tuple(c.topology_key for c in self.constraints)
        self.single_key: str | None = self.keys[0] if len(self.keys) == 1 else None
        self.verdicts: dict[object, Status | None] = {}
        self.limits: list[int] | None = None
        # with one constraint, once limits are known: (key, its counts, its limit), for the plugin's Filter
        self.single_check: tuple[str, dict[str, int], int] | None = None
        # one Status per rejection for all the nodes of this cycle (see filter_domain)
        self.rejections = tuple(Status(code, reason) for code, reason in _REJECTIONS)

    def min_match_num(self, i: int) -> int:
        """The global minimum for constraint ``i``; 0 while fewer than minDomains domains are eligible."""
        if len(self.tp_value_to_match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].num0

    def clone(self) -> PreFilterState:
        # Constraints never change after PreFilter and are shared; counts and paths are per copy.
        return PreFilterState(self.constraints, [p.clone() for p in self.critical_paths],
                              [dict(m) for m in self.tp_value_to_match_num], self.self_match)

    def __repr__(self) -> str:
        return (f"PreFilterState(constraints={list(self.constraints)!r}, critical_paths={self.critical_paths!r}, "
                f"tp_value_to_match_num={self.tp_value_to_match_num!r})")


def calc_pre_filter_state(pod: Pod, constraints: list[SpreadConstraint], nodes: Sequence[NodeInfo],
                          cache: DomainCountsCache | None = None, index: PodIndex | None = None,
                          layouts: DomainLayoutCache | None = None) -> PreFilterState:
    """Count, per constraint and topology value, the pods its selector matches on the eligible nodes.

    With ``index`` (the snapshot's pods by label, following ``nodes``) and ``layouts`` (the eligible domains of
    the node objects), only the pods a selector can match are looked at; ``cache`` keeps the counts of earlier
    cycles, so that only the nodes that changed are counted again. Each gives what the plain passes give.
    """
    if not constraints:
        return PreFilterState()
    ns = pod.metadata.namespace
    counts: list[dict[str, int]] = [{} for _ in constraints]
    selectors, sel_index = unique_selectors(constraints)
    count_keys = [CountKey(sel, ns) for sel in selectors]
    policies = NodeInclusion(pod, RequiredNodeAffinity(pod))
    topology_keys = [c.topology_key for c in constraints]
    from_index = None
    if index is not None and cache is not None:
        everywhere = policies.includes_every_node(constraints)
        if cache.has(topology_keys, [count_keys[sel_index[i]] for i in range(len(constraints))], topology_keys, "",
                      None if everywhere else policies.key(constraints)):
            index = None  # counts kept for these constraints already (a selector met cycle after cycle)
    if index is not None and layouts is not None:
        from_index = _counts_from_index(index, layouts, nodes, constraints, selectors, sel_index, count_keys,
                                        policies)
    if from_index is not None:
        counts = from_index
    elif cache is not None:
        # A node with every topology key adds its matching pods to its domain of each constraint that includes
        # it (the inclusion policies depend on the node object alone), kept across cycles. Equal to the plain
        # loops below; pinned by tests/test_perf_equivalence.py::test_spread_kept_counts_equal_plain_passes.
        everywhere = policies.includes_every_node(constraints)
        counts = cache.get(topology_keys, [count_keys[sel_index[i]] for i in range(len(constraints))],
                           topology_keys, "", None if everywhere else partial(policies.flags, constraints=constraints),
                           None if everywhere else policies.key(constraints)).counts(nodes)
    elif policies.includes_every_node(constraints):
        plan = [(counts[i], c.topology_key, count_keys[sel_index[i]]) for i, c in enumerate(constraints)]
        for ni in nodes:
            node = ni.node
            if node is None:
                continue
            labels = node.metadata.labels
            for key in topology_keys:
                if key not in labels:
                    break
            else:
                if not ni.pods:
                    # no pod to count, but the node's domains take part (with 0 so far)
                    for m, key, _ in plan:
                        value = labels[key]
                        if value not in m:
                            m[value] = 0
                    continue
                memo = ni.memo
                for m, key, ck in plan:
                    value = labels[key]
                    memo_key = ck.key
                    cnt = 0 if memo_key is None else memo.get(memo_key)
                    if cnt is None:
                        cnt = count_matching_pods(ni, ck)
                    m[value] = m.get(value, 0) + cnt
    else:
        per_node_counts: list[int] = [0] * len(selectors)
        indexed = list(enumerate(constraints))
        for ni in nodes:
            node = ni.node
            if node is None:
                continue
            labels = node.metadata.labels
            # A node missing any of the topology keys takes part in no domain.
            if not node_has_all_keys(labels, constraints):
                continue
            policies.reset(node)
            for j in range(len(per_node_counts)):
                per_node_counts[j] = -1
            for i, c in indexed:
                if not policies.includes(c):
                    continue
                j = sel_index[i]
                cnt = per_node_counts[j]
                if cnt < 0:
                    cnt = per_node_counts[j] = count_matching_pods(ni, count_keys[j])
                m = counts[i]
                value = labels[c.topology_key]
                m[value] = m.get(value, 0) + cnt
    paths = [critical_paths_of(m) for m in counts]
    self_match = [1 if selector_matches(c.selector, pod.metadata.labels) else 0 for c in constraints]
    return PreFilterState(constraints, paths, counts, self_match)


def filter_node(s: PreFilterState, node: Node) -> Status | None:
    """Reject the node when placing the pod there would exceed any constraint's maxSkew."""
    return filter_labels(s, node.metadata.labels)


def filter_domain(s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
    """:func:`filter_node` for a node with these labels, computed once per domain of this cycle (``s.verdicts``);
    the nodes rejected for the same reason share one Status (``s.rejections``: the framework only sets its
    ``plugin``, to this plugin's name, and nothing changes a returned status otherwise). Pinned by
    tests/test_perf_equivalence.py::test_spread_filter_per_domain_equals_per_node.
    """
    key = s.single_key
    if key is not None:
        # One constraint: its verdict costs one lookup of the domain's count, as much as a remembered verdict.
        value = labels.get(key)
        if value is None:
            return s.rejections[0]
        limits = s.limits or filter_limits(s)
        return s.rejections[1] if s.tp_value_to_match_num[0].get(value, 0) > limits[0] else None
    domain = tuple(map(labels.get, s.keys))
    verdicts = s.verdicts
    if domain in verdicts:
        return verdicts[domain]
    v = _verdict(s, labels)
    st = verdicts[domain] = None if v is None else s.rejections[v]
    return st


def filter_labels(s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
    """:func:`filter_node` on the node's labels (the plain path)."""
    counts = s.tp_value_to_match_num
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
        # existing matches in the node's domain + the pod itself (when selected) - global minimum
        skew = counts[i].get(value, 0) + s.self_match[i] - s.min_match_num(i)
        if skew > c.max_skew:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None


def filter_limits(s: PreFilterState) -> list[int]:
    """Per constraint, the most matching pods a domain may hold for the pod to go there."""
    limits = s.limits = [c.max_skew + s.min_match_num(i) - s.self_match[i] for i, c in enumerate(s.constraints)]
    if s.single_key is not None:
        s.single_check = (s.single_key, s.tp_value_to_match_num[0], limits[0])
    return limits


# Filter's two rejections: (code, reason)
_REJECTIONS = ((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH),
               (Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH))


def _verdict(s: PreFilterState, labels: Mapping[str, str]) -> int | None:
    """:func:`filter_labels` as None (passes) or the index of its rejection in _REJECTIONS.

    ``count + selfMatch - minMatch > maxSkew`` is tested as ``count > maxSkew + minMatch - selfMatch``, the
    right side computed once per constraint (``s.limits``, reset with the verdicts)."""
    limits = s.limits or filter_limits(s)
    counts = s.tp_value_to_match_num
    for i, key in enumerate(s.keys):
        value = labels.get(key)
        if value is None:
            return 0
        if counts[i].get(value, 0) > limits[i]:
            return 1
    return None


def update_with_pod(s: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int) -> None:
    """Add (``delta`` 1) or remove (-1) one pod's contribution on ``node`` to the counts and critical paths."""
    if not s.constraints or node is None or updated.metadata.namespace != preemptor.metadata.namespace:
        return
    labels = node.metadata.labels
    if not node_has_all_keys(labels, s.constraints):
        return
    s.verdicts.clear()
    s.limits = None
    s.single_check = None
    policies = NodeInclusion(preemptor, RequiredNodeAffinity(preemptor))
    policies.reset(node)
    pod_labels = updated.metadata.labels
    for i, c in enumerate(s.constraints):
        if not selector_matches(c.selector, pod_labels) or not policies.includes(c):
            continue
        value = labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        num = m.get(value, 0) + delta
        m[value] = num
        s.critical_paths[i].update(value, num)


def _counts_from_index(index: PodIndex, layouts: DomainLayoutCache, nodes: Sequence[NodeInfo],
                       constraints: list[SpreadConstraint], selectors: list[Selector], sel_index: list[int],
                       count_keys: list[CountKey], policies: NodeInclusion) -> list[dict[str, int]] | None:
    """The PreFilter counts: every eligible domain (the layout of the node objects) with the pods each selector
    matches on its eligible nodes (from the index); None when a selector is not one the index answers. Pinned
    by tests/test_perf_equivalence.py::test_spread_index_prefilter_equals_plain."""
    lst = nodes if type(nodes) is list else list(nodes)
    per_selector: list[dict[int, int]] = []
    for j, ck in enumerate(count_keys):
        if ck.key is None:
            per_selector.append({})
            continue
        got = index.match_counts(lst, selectors[j], (ck.namespace,), True, KEPT_BEYOND)
        if got is None:
            return None
        per_selector.append(got)
    keys = [c.topology_key for c in constraints]
    everywhere = policies.includes_every_node(constraints)
    layout = layouts.get(keys, keys, "", None if everywhere else partial(policies.flags, constraints=constraints),
                         None if everywhere else policies.key(constraints))
    values_of, counts = layout.get(lst)
    for i, m in enumerate(counts):
        for pos, n in per_selector[sel_index[i]].items():
            values = values_of[pos]
            if values is not None:
                value = values[i]
                if value is not None:
                    m[value] += n
    return counts
