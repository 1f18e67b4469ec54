"""Matching pods per topology domain over a whole node list, kept from one cycle to the next.

PreFilter (and PreScore) sum, for every eligible node of the cluster, how many of its pods a constraint's
selector matches, per value of the constraint's topology key. From one cycle to the next only a few
NodeInfos change (the node that received the last pod), so a :class:`DomainCounts` remembers each node's
contribution and, given the node list of the next cycle, re-counts only the NodeInfos that are other
objects or have a new ``generation``; anything else (nodes added, removed, reordered or relabelled, many
changes at once) is counted again from scratch. Either way the result is what a full pass gives, keys in
the same (first-seen) order.

Finding the changed NodeInfos by reading every node's ``generation`` costs more than the rest of a cycle's
counting (5000 scattered objects), so the NodeInfos changed or cloned since the last count are first taken
from the NodeInfo change journal (``scheduling_framework.node_info.CHANGES``); the list is then checked to
hold, everywhere else, the very NodeInfos of the last count (one identity comparison of the two lists), and
the generation scan runs only when that check fails or the journal forgot some changes. Pinned by
tests/test_perf_equivalence.py::test_domain_counts_kept_across_changes_equal_a_fresh_count and
::test_domain_counts_journal_equals_generation_scan.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Sequence
from itertools import compress

from plugins_intree.podtopologyspread.common import CountKey, count_matching_pods
from scheduling_framework.api.node import Node
from scheduling_framework.node_info import CHANGES, NodeInfo

_generation = operator.attrgetter("generation")
_node = operator.attrgetter("node")

#: One node's contribution: its value of each counted key and its matching-pod count for each; None for a
#: node that takes part in no domain.
Entry = tuple[tuple[str | None, ...], tuple[int, ...]] | None


class DomainCounts:
    """Per counted constraint, {topology value: matching pods} over the eligible nodes of a node list.

    A node is eligible when it has a node object and, if ``required`` is set, every key of ``required``
    as a label. A constraint's value on an eligible node is its key's label, or ``missing`` when absent.
    With ``include`` (the node-inclusion policies: which constraints count a node, a function of the node
    object alone), a node takes part only in the domains of the constraints it is included in.
    """

    __slots__ = ("_by_id", "_by_name", "_contrib", "_counts", "_generations", "_lock", "_node_objs", "_nodes",
                 "_position", "count_keys", "include", "keys", "missing", "required")

    def __init__(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
                 missing: str, include: Callable[[Node], tuple[bool, ...]] | None = None) -> None:
        self.keys = tuple(keys)
        self.count_keys = tuple(count_keys)
        self.required = tuple(required)
        self.missing = missing
        self.include = include
        self._lock = threading.Lock()
        self._nodes: list[NodeInfo] = []
        self._generations: list[int] = []
        self._node_objs: list[Node | None] = []
        self._contrib: list[Entry] = []
        self._counts: list[dict[str, int]] = []
        # journal position when the counts were last brought up to date
        self._position = 0
        # position in ``_nodes`` by id / by name of each NodeInfo; None: the journal cannot be used (some
        # element is not exactly a NodeInfo, or one appears twice, or two share a name)
        self._by_id: dict[int, int] | None = None
        self._by_name: dict[str, int] = {}

    def counts(self, nodes: Sequence[NodeInfo]) -> list[dict[str, int]]:
        """The counts for ``nodes`` (new dicts, the caller may change them)."""
        with self._lock:
            if not self._update_from_journal(nodes) and not self._update(nodes):
                self._full(nodes)
            return [dict(m) for m in self._counts]

    # ----------------------------------------------------------------------------------------------
    def _entry(self, ni: NodeInfo) -> Entry:
        node = ni.node
        if node is None:
            return None
        labels = node.metadata.labels
        for key in self.required:
            if key not in labels:
                return None
        missing = self.missing
        values: tuple[str | None, ...] = tuple(labels.get(key, missing) for key in self.keys)
        if self.include is not None:
            # None: the node is not counted for that constraint (takes part in none of its domains)
            values = tuple(v if inc else None for v, inc in zip(values, self.include(node), strict=True))
        if not ni.pods:
            return values, (0,) * len(values)
        return values, tuple(count_matching_pods(ni, ck) for ck in self.count_keys)

    def _full(self, nodes: Sequence[NodeInfo]) -> None:
        position = CHANGES.position()
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
        self._nodes = list(nodes)
        self._generations = list(map(_generation, nodes))
        self._node_objs = list(map(_node, nodes))
        self._contrib = contrib
        self._counts = counts
        self._remember_positions(position)

    def _remember_positions(self, position: int) -> None:
        self._position = position
        nodes = self._nodes
        by_id = {id(ni): i for i, ni in enumerate(nodes)}
        by_name = {ni.name: i for i, ni in enumerate(nodes)}
        usable = len(by_id) == len(nodes) == len(by_name) and all(type(ni) is NodeInfo for ni in nodes)
        self._by_id = by_id if usable else None
        self._by_name = by_name if usable else {}

    def _update_from_journal(self, nodes: Sequence[NodeInfo]) -> bool:
        """:meth:`_update` for the NodeInfos the change journal names; False when it cannot tell."""
        by_id = self._by_id
        recorded = self._nodes
        if by_id is None or not self._counts or type(nodes) is not list or len(nodes) != len(recorded):
            return False
        position, notes = CHANGES.since(self._position)
        if notes is None:
            return False
        by_name = self._by_name
        candidates: set[int] = set()
        for obj_id, name in notes:
            i = by_id.get(obj_id)
            if i is not None:
                candidates.add(i)
            i = by_name.get(name)
            if i is not None:
                candidates.add(i)
        before = [(i, recorded[i]) for i in candidates]
        for i, _ in before:
            recorded[i] = nodes[i]
        # Everywhere else the list must hold the NodeInfos counted last time, which the journal says did not
        # change since. NodeInfo has no __eq__, so this compares identities (without touching the objects).
        if recorded != nodes:
            for i, ni in before:
                recorded[i] = ni
            return False
        generations = self._generations
        node_objs = self._node_objs
        contrib = self._contrib
        for i, old_ni in before:
            ni = nodes[i]
            if ni is old_ni and ni.generation == generations[i]:
                continue
            if type(ni) is not NodeInfo or ni.node is not node_objs[i] or (ni is not old_ni and id(ni) in by_id):
                # another node object (its labels, so its domains, may differ), a foreign object, or a NodeInfo
                # that appears twice: count afresh
                self._full(nodes)
                return True
            if ni is not old_ni:
                del by_id[id(old_ni)]
                by_id[id(ni)] = i
            generations[i] = ni.generation
            old = contrib[i]
            new = contrib[i] = self._entry(ni)
            if old is None or new is None:
                continue  # same node object, so the same eligibility: both are None
            for m, value, was, now in zip(self._counts, new[0], old[1], new[1], strict=True):
                if now != was and value is not None:
                    m[value] += now - was
        self._position = position
        return True

    def _update(self, nodes: Sequence[NodeInfo]) -> bool:
        """Bring the counts to ``nodes`` by re-counting the NodeInfos that changed; False to count afresh."""
        n = len(nodes)
        if not self._counts or n != len(self._nodes):
            return False
        position = CHANGES.position()
        generations = list(map(_generation, nodes))
        changed = set(compress(range(n), map(operator.is_not, self._nodes, nodes)))
        changed.update(compress(range(n), map(operator.ne, self._generations, generations)))
        if len(changed) > n // 8 + 8:
            return False
        contrib = self._contrib
        node_objs = self._node_objs
        for i in changed:
            ni = nodes[i]
            if ni.node is not node_objs[i]:
                return False  # another node object: its labels, so its domains, may differ
        for i in changed:
            old = contrib[i]
            new = contrib[i] = self._entry(nodes[i])
            if old is None or new is None:
                continue  # same node object, so the same eligibility: both are None
            for m, value, before, after in zip(self._counts, new[0], old[1], new[1], strict=True):
                if after != before and value is not None:
                    m[value] += after - before
        self._nodes = list(nodes)
        self._generations = generations
        self._remember_positions(position)
        return True


class DomainCountsCache:
    """The DomainCounts of the last few (constraints, selectors, namespace) a plugin saw."""

    __slots__ = ("_entries", "_lock", "limit")

    def __init__(self, limit: int = 16) -> None:
        self.limit = limit
        self._entries: dict[tuple[object, ...], DomainCounts] = {}
        self._lock = threading.Lock()

    def get(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
            missing: str, include: Callable[[Node], tuple[bool, ...]] | None = None,
            include_key: object = None) -> DomainCounts:
        """The DomainCounts for these arguments; ``include_key`` must be equal only for ``include`` functions
        that agree on every node (None when ``include`` is None)."""
        cache_key = (tuple(keys), tuple(ck.key for ck in count_keys), tuple(required), missing, include_key)
        with self._lock:
            dc = self._entries.pop(cache_key, None)
            if dc is None:
                dc = DomainCounts(keys, count_keys, required, missing, include)
            self._entries[cache_key] = dc  # most recent last
            while len(self._entries) > self.limit:
                del self._entries[next(iter(self._entries))]
            return dc
