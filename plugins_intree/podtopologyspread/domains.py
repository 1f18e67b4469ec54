"""Matching pods per topology domain over a whole node list, kept from one cycle to the next.

PreFilter (and PreScore) sum, for every eligible node of the cluster, how many of its pods a constraint's
selector matches, per value of the constraint's topology key. From one cycle to the next only a few
NodeInfos change (the node that received the last pod), so a :class:`DomainCounts` remembers each node's
contribution and, given the node list of the next cycle, re-counts only the NodeInfos that are other
objects or have a new ``generation``; anything else (nodes added, removed, reordered or relabelled, many
changes at once) is counted again from scratch. Either way the result is what a full pass gives, keys in
the same (first-seen) order.

Finding the changed NodeInfos by reading every node's ``generation`` costs more than the rest of a cycle's
counting (5000 scattered objects), so they are found as InterPodAffinity's kept sums find them, by
``scheduling_framework.state.node_info.ChangedNodes``: the NodeInfo change journal first, and the generation scan
only when the list does not hold, everywhere else, the very NodeInfos of the last count. Pinned by
tests/test_perf_equivalence.py::test_domain_counts_kept_across_changes_equal_a_fresh_count and
::test_domain_counts_journal_equals_generation_scan.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from plugins_intree.podtopologyspread.common import CountKey, count_matching_pods
from scheduling_framework.api.node import Node
from scheduling_framework.state.node_info import ChangedNodes, NodeInfo

_node = operator.attrgetter("node")
T = TypeVar("T")

#: One node's contribution: its value of each counted key and its matching-pod count for each; None for a
#: node that takes part in no domain.
Entry = tuple[tuple[str | None, ...], tuple[int, ...]] | None


def domain_values(node: Node, keys: Sequence[str], required: Sequence[str], missing: str,
                  include: Callable[[Node], tuple[bool, ...]] | None) -> tuple[str | None, ...] | None:
    """The node's value of each of ``keys`` (``missing`` when absent), None for a constraint whose inclusion
    policies leave the node out; None altogether when the node lacks one of ``required``."""
    labels = node.metadata.labels
    for key in required:
        if key not in labels:
            return None
    values: tuple[str | None, ...] = tuple(labels.get(key, missing) for key in keys)
    if include is not None:
        # None: the node is not counted for that constraint (takes part in none of its domains)
        values = tuple(v if inc else None for v, inc in zip(values, include(node), strict=True))
    return values


class DomainCounts:
    """Per counted constraint, {topology value: matching pods} over the eligible nodes of a node list.

    A node is eligible when it has a node object and, if ``required`` is set, every key of ``required``
    as a label. A constraint's value on an eligible node is its key's label, or ``missing`` when absent.
    With ``include`` (the node-inclusion policies: which constraints count a node, a function of the node
    object alone), a node takes part only in the domains of the constraints it is included in.
    """

    __slots__ = ("_changes", "_contrib", "_counts", "_lock", "_node_objs", "count_keys", "include", "keys",
                 "missing", "required")

    def __init__(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
                 missing: str, include: Callable[[Node], tuple[bool, ...]] | None = None) -> None:
        self.keys = tuple(keys)
        self.count_keys = tuple(count_keys)
        self.required = tuple(required)
        self.missing = missing
        self.include = include
        self._lock = threading.Lock()
        # which positions of the node list changed since the last count (the journal, else a generation scan)
        self._changes = ChangedNodes()
        self._node_objs: list[Node | None] = []
        self._contrib: list[Entry] = []
        self._counts: list[dict[str, int]] = []

    def counts(self, nodes: Sequence[NodeInfo]) -> list[dict[str, int]]:
        """The counts for ``nodes`` (new dicts, the caller may change them)."""
        lst = nodes if type(nodes) is list else list(nodes)
        with self._lock:
            changed = self._changes.changed(lst)
            if changed is None or not self._counts or not self._update(lst, changed):
                self._full(lst)
            return [dict(m) for m in self._counts]

    # ----------------------------------------------------------------------------------------------
    def _entry(self, ni: NodeInfo) -> Entry:
        node = ni.node
        if node is None:
            return None
        values = domain_values(node, self.keys, self.required, self.missing, self.include)
        if values is None:
            return None
        if not ni.pods:
            return values, (0,) * len(values)
        return values, tuple(count_matching_pods(ni, ck) for ck in self.count_keys)

    def _full(self, nodes: list[NodeInfo]) -> None:
        counts: list[dict[str, int]] = [{} for _ in self.keys]
        contrib: list[Entry] = []
        for ni in nodes:
            e = self._entry(ni)
            contrib.append(e)
            if e is None:
                continue
            for m, value, cnt in zip(counts, e[0], e[1], strict=True):
                if value is not None:
                    m[value] = m.get(value, 0) + cnt
        self._node_objs = list(map(_node, nodes))
        self._contrib = contrib
        self._counts = counts

    def _update(self, nodes: list[NodeInfo], changed: list[int]) -> bool:
        """Re-count the NodeInfos at the ``changed`` positions; False to count afresh."""
        node_objs = self._node_objs
        for i in changed:
            if nodes[i].node is not node_objs[i]:
                return False  # another node object: its labels, so its domains, may differ
        contrib = self._contrib
        for i in changed:
            old = contrib[i]
            new = contrib[i] = self._entry(nodes[i])
            if old is None or new is None:
                continue  # same node object, so the same eligibility: both are None
            for m, value, before, after in zip(self._counts, new[0], old[1], new[1], strict=True):
                if after != before and value is not None:
                    m[value] += after - before
        return True


class _Recent(Generic[T]):
    """The values of the last ``limit`` keys asked for, most recent last (the oldest is dropped first)."""

    __slots__ = ("_entries", "_lock", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[tuple[object, ...], T] = {}
        self._lock = threading.Lock()

    def _holds(self, key: tuple[object, ...]) -> bool:
        with self._lock:
            return key in self._entries

    def _recent(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        with self._lock:
            value = self._entries.pop(key, None)
            if value is None:
                value = make()
            self._entries[key] = value
            while len(self._entries) > self.limit:
                del self._entries[next(iter(self._entries))]
            return value


class DomainCountsCache(_Recent[DomainCounts]):
    """The DomainCounts of the last few (constraints, selectors, namespace) a plugin saw."""

    __slots__ = ()

    def __init__(self, limit: int = 16) -> None:
        super().__init__(limit)

    def has(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
                   missing: str, include_key: object = None) -> bool:
        """Whether counts for these arguments are kept (then following the nodes that changed costs less than
        counting afresh, however it is done)."""
        return self._holds((tuple(keys), tuple(ck.key for ck in count_keys), tuple(required), missing, include_key))

    def get(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
                   missing: str, include: Callable[[Node], tuple[bool, ...]] | None = None,
                   include_key: object = None) -> DomainCounts:
        """The DomainCounts for these arguments; ``include_key`` must be equal only for ``include`` functions
        that agree on every node (None when ``include`` is None)."""
        return self._recent((tuple(keys), tuple(ck.key for ck in count_keys), tuple(required), missing, include_key),
                        lambda: DomainCounts(keys, count_keys, required, missing, include))


class DomainLayout:
    """Per position of a node list, each counted constraint's topology value on the node (None where the node
    takes part in none of its domains), and per constraint the domains of all eligible nodes in first-seen order
    with no pod counted yet: what :class:`DomainCounts` counts pods into, a function of the node objects alone.

    Kept while the list holds the same node objects at the same positions (pods coming and going do not change
    it). With the pods a selector matches per position (a PodIndex), the counts of a full pass are the layout's
    zeros plus those pods on the eligible positions. Pinned by
    tests/test_perf_equivalence.py::test_spread_index_prefilter_equals_plain.
    """

    __slots__ = ("_lock", "_node_objs", "_values", "_zeros", "include", "keys", "missing", "required")

    def __init__(self, keys: Sequence[str], required: Sequence[str], missing: str,
                 include: Callable[[Node], tuple[bool, ...]] | None = None) -> None:
        self.keys = tuple(keys)
        self.required = tuple(required)
        self.missing = missing
        self.include = include
        self._lock = threading.Lock()
        self._node_objs: list[Node | None] | None = None
        self._values: list[tuple[str | None, ...] | None] = []
        self._zeros: list[dict[str, int]] = []

    def get(self, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str | None, ...] | None], list[dict[str, int]]]:
        """(values per position, the zero counts per constraint: new dicts the caller may change)."""
        objs = list(map(_node, nodes))
        with self._lock:
            kept = self._node_objs
            if kept is None or len(kept) != len(objs) or not all(map(operator.is_, kept, objs)):
                self._build(objs)
            return self._values, [dict(z) for z in self._zeros]

    def _build(self, objs: list[Node | None]) -> None:
        zeros: list[dict[str, int]] = [{} for _ in self.keys]
        values_of: list[tuple[str | None, ...] | None] = []
        for node in objs:
            values = None if node is None else domain_values(node, self.keys, self.required, self.missing,
                                                             self.include)
            values_of.append(values)
            if values is None:
                continue
            for m, v in zip(zeros, values, strict=True):
                if v is not None and v not in m:
                    m[v] = 0
        self._node_objs = objs
        self._values = values_of
        self._zeros = zeros


class DomainLayoutCache(_Recent[DomainLayout]):
    """The DomainLayouts of the last few (keys, required keys, inclusion policies) a plugin saw."""

    __slots__ = ()

    def __init__(self, limit: int = 16) -> None:
        super().__init__(limit)

    def get(self, keys: Sequence[str], required: Sequence[str], missing: str,
                   include: Callable[[Node], tuple[bool, ...]] | None = None,
                   include_key: object = None) -> DomainLayout:
        """The DomainLayout for these arguments; ``include_key`` as for DomainCountsCache.get."""
        return self._recent((tuple(keys), tuple(required), missing, include_key),
                        lambda: DomainLayout(keys, required, missing, include))
