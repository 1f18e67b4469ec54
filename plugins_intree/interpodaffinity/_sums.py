"""Sums over a node list of what each node contributes, kept from one cycle to the next.

PreFilter's counts of existing anti-affinity pairs and PreScore's topology scores add, over a whole node
list, what each node's pods contribute for the incoming pod. From one cycle to the next only a few
NodeInfos change, so a :class:`KeptSums` remembers each position's contribution and evaluates again only
the positions :class:`~scheduling_framework.node_info.ChangedNodes` names. The sums equal those of a full
pass; the keys of the maps built from them may come in another order (nothing reads that order).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from scheduling_framework.node_info import CHANGES, ChangedNodes, NodeInfo

#: What a node contributes: (key, amount) additions.
Contribution = tuple[tuple[Hashable, int], ...]
T = TypeVar("T")


class KeptSums:
    """Per key, the sum of the amounts and the number of additions, over the contributions of a node list."""

    __slots__ = ("_changes", "_contrib", "_length", "_lock", "_nodes", "_occurrences", "_seen", "_sums",
                 "contribution")

    def __init__(self, contribution: Callable[[NodeInfo], Contribution]) -> None:
        self.contribution = contribution
        self._changes = ChangedNodes()
        self._contrib: list[Contribution] = []
        self._sums: dict[Hashable, int] = {}
        self._occurrences: dict[Hashable, int] = {}
        self._lock = threading.Lock()
        self._length = -1
        self._nodes: list[NodeInfo] = []  # the list of the last call, position by position as ``_contrib``
        self._seen = 0  # the journal's position at the last call

    def view(self, nodes: Sequence[NodeInfo],
             build: Callable[[dict[Hashable, int], dict[Hashable, int]], T]) -> tuple[bool, T | None]:
        """(True, ``build(sums, occurrences)``) for ``nodes`` (keys with no addition left are absent from both;
        ``build`` must not keep them); (False, None) when the list has another length than at the last call
        and cannot be followed by NodeInfo identity (see ``_follow``): the caller makes the plain pass then."""
        lst = nodes if type(nodes) is list else list(nodes)
        with self._lock:
            seen = self._seen
            self._seen = CHANGES.position()
            if len(lst) != self._length:
                followed = self._length >= 0 and self._follow(lst, seen)
                self._length = len(lst)
                self._changes = ChangedNodes()
                if followed:
                    self._nodes = list(lst)
                    self._changes.changed(lst)  # remembers this list (another length: nothing to compare)
                    return True, build(self._sums, self._occurrences)
                # (the next call evaluates every position, or follows from an empty list)
                self._nodes = []
                self._contrib = []
                self._sums = {}
                self._occurrences = {}
                return False, None
            self._nodes = list(lst)
            changed = self._changes.changed(lst)
            if changed is None:
                self._full(lst)
            else:
                for i in changed:
                    old = self._contrib[i]
                    new = self._contrib[i] = self.contribution(lst[i])
                    if old != new:
                        self._apply(old, -1)
                        self._apply(new, 1)
            return True, build(self._sums, self._occurrences)

    def _follow(self, lst: list[NodeInfo], seen: int) -> bool:
        """Bring the sums from the last call's list to ``lst``, another length (a list that grows every cycle,
        such as the nodes with anti-affinity pods while such pods are being placed): by NodeInfo identity,
        subtract the NodeInfos that left, add those that came, and evaluate again those the journal noted since
        ``seen`` (every change of a NodeInfo is noted under its id; the NodeInfos kept here stay alive, so their
        ids are not reused). False, leaving the sums unusable, when it cannot: the journal forgot notes, a
        NodeInfo is listed twice, or an object that is no NodeInfo comes in. Sums as a full pass over ``lst``,
        pinned by tests/test_perf_equivalence.py::test_interpodaffinity_kept_sums_follow_a_growing_list."""
        _, notes = CHANGES.since(seen)
        if notes is None:
            return False
        old = self._nodes
        contrib = dict(zip(map(id, old), self._contrib, strict=True))
        now = dict(zip(map(id, lst), lst, strict=True))
        if len(now) != len(lst) or len(contrib) != len(old):
            return False
        if not set(map(type, lst)) <= {NodeInfo}:
            return False
        added = now.keys() - contrib.keys()
        for i in contrib.keys() - now.keys():
            self._apply(contrib.pop(i), -1)
        for i in added:
            c = contrib[i] = self.contribution(now[i])
            self._apply(c, 1)
        for i in {obj_id for obj_id, _ in notes}.intersection(contrib.keys() - added):
            was = contrib[i]
            c = contrib[i] = self.contribution(now[i])
            if c != was:
                self._apply(was, -1)
                self._apply(c, 1)
        self._contrib = list(map(contrib.__getitem__, map(id, lst)))
        return True

    def _full(self, nodes: list[NodeInfo]) -> None:
        self._sums = {}
        self._occurrences = {}
        self._contrib = [self.contribution(ni) for ni in nodes]
        for c in self._contrib:
            self._apply(c, 1)

    def _apply(self, contribution: Contribution, sign: int) -> None:
        sums = self._sums
        occurrences = self._occurrences
        for key, amount in contribution:
            n = occurrences.get(key, 0) + sign
            if n:
                occurrences[key] = n
                sums[key] = sums.get(key, 0) + sign * amount
            else:
                del occurrences[key]
                del sums[key]


class KeptSumsCache:
    """The KeptSums of the last few incoming-pod signatures a plugin saw."""

    __slots__ = ("_entries", "_lock", "limit")

    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
        self._entries: dict[Hashable, KeptSums] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, contribution: Callable[[NodeInfo], Contribution]) -> KeptSums:
        """The KeptSums for ``key``; ``contribution`` (used when it is new) must be the same function of the
        NodeInfo for every call with an equal key."""
        with self._lock:
            ks = self._entries.pop(key, None)
            if ks is None:
                ks = KeptSums(contribution)
            self._entries[key] = ks  # most recent last
            while len(self._entries) > self.limit:
                del self._entries[next(iter(self._entries))]
            return ks
