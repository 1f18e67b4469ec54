"""Matching pods per topology domain over a whole node list, kept from one cycle to the next.

PreFilter (and PreScore) sum, for every eligible node of the cluster, how many of its pods a constraint's
selector matches, per value of the constraint's topology key. From one cycle to the next only a few
NodeInfos change (the node that received the last pod), so a :class:`DomainCounts` remembers each node's
contribution and, given the node list of the next cycle, re-counts only the NodeInfos that are other
objects or have a new ``generation``; anything else (nodes added, removed, reordered or relabelled, many
changes at once) is counted again from scratch. Either way the result is what a full pass gives, keys in
the same (first-seen) order.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from itertools import compress

from plugins_intree.podtopologyspread.common import CountKey, count_matching_pods
from scheduling_framework.api.node import Node
from scheduling_framework.node_info import NodeInfo

_generation = operator.attrgetter("generation")
_node = operator.attrgetter("node")

#: One node's contribution: its value of each counted key and its matching-pod count for each; None for a
#: node that takes part in no domain.
Entry = tuple[tuple[str, ...], tuple[int, ...]] | None


class DomainCounts:
    """Per counted constraint, {topology value: matching pods} over the eligible nodes of a node list.

    A node is eligible when it has a node object and, if ``required`` is set, every key of ``required``
    as a label. A constraint's value on an eligible node is its key's label, or ``missing`` when absent.
    """

    __slots__ = ("_contrib", "_counts", "_generations", "_lock", "_node_objs", "_nodes", "count_keys", "keys",
                 "missing", "required")

    def __init__(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
                 missing: str) -> None:
        self.keys = tuple(keys)
        self.count_keys = tuple(count_keys)
        self.required = tuple(required)
        self.missing = missing
        self._lock = threading.Lock()
        self._nodes: list[NodeInfo] = []
        self._generations: list[int] = []
        self._node_objs: list[Node | None] = []
        self._contrib: list[Entry] = []
        self._counts: list[dict[str, int]] = []

    def counts(self, nodes: Sequence[NodeInfo]) -> list[dict[str, int]]:
        """The counts for ``nodes`` (new dicts, the caller may change them)."""
        with self._lock:
            if not self._update(nodes):
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
        values = tuple(labels.get(key, missing) for key in self.keys)
        if not ni.pods:
            return values, (0,) * len(values)
        return values, tuple(count_matching_pods(ni, ck) for ck in self.count_keys)

    def _full(self, nodes: Sequence[NodeInfo]) -> None:
        counts: list[dict[str, int]] = [{} for _ in self.keys]
        contrib: list[Entry] = []
        for ni in nodes:
            e = self._entry(ni)
            contrib.append(e)
            if e is None:
                continue
            for m, value, cnt in zip(counts, e[0], e[1], strict=True):
                m[value] = m.get(value, 0) + cnt
        self._nodes = list(nodes)
        self._generations = list(map(_generation, nodes))
        self._node_objs = list(map(_node, nodes))
        self._contrib = contrib
        self._counts = counts

    def _update(self, nodes: Sequence[NodeInfo]) -> bool:
        """Bring the counts to ``nodes`` by re-counting the NodeInfos that changed; False to count afresh."""
        n = len(nodes)
        if not self._counts or n != len(self._nodes):
            return False
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
                if after != before:
                    m[value] += after - before
        self._nodes = list(nodes)
        self._generations = generations
        return True


class DomainCountsCache:
    """The DomainCounts of the last few (constraints, selectors, namespace) a plugin saw."""

    __slots__ = ("_entries", "_lock", "limit")

    def __init__(self, limit: int = 16) -> None:
        self.limit = limit
        self._entries: dict[tuple[object, ...], DomainCounts] = {}
        self._lock = threading.Lock()

    def get(self, keys: Sequence[str], count_keys: Sequence[CountKey], required: Sequence[str],
            missing: str) -> DomainCounts:
        cache_key = (tuple(keys), tuple(ck.key for ck in count_keys), tuple(required), missing)
        with self._lock:
            dc = self._entries.pop(cache_key, None)
            if dc is None:
                dc = DomainCounts(keys, count_keys, required, missing)
            self._entries[cache_key] = dc  # most recent last
            while len(self._entries) > self.limit:
                del self._entries[next(iter(self._entries))]
            return dc
