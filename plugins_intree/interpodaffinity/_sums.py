"""Sums over a node list of what each node contributes, kept from one cycle to the next.

PreFilter's counts of existing anti-affinity pairs and PreScore's topology scores add, over a whole node
list, what each node's pods contribute for the incoming pod. From one cycle to the next only a few
NodeInfos change, so a :class:`KeptSums` remembers each position's contribution and evaluates again only
the positions :class:`~scheduling_framework.state.node_info.ChangedNodes` names. The sums equal those of a full
pass; the keys of the maps built from them may come in another order (nothing reads that order).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from scheduling_framework.state.node_info import ChangedNodes, NodeInfo

#: What a node contributes: (key, amount) additions.
Contribution = tuple[tuple[Hashable, int], ...]
T = TypeVar("T")


class KeptSums:
    """Per key, the sum of the amounts and the number of additions, over the contributions of a node list."""

    __slots__ = ("_changes", "_contrib", "_length", "_lock", "_occurrences", "_sums", "contribution")

    def __init__(self, contribution: Callable[[NodeInfo], Contribution]) -> None:
        self.contribution = contribution
        self._changes = ChangedNodes()
        self._contrib: list[Contribution] = []
        self._sums: dict[Hashable, int] = {}
        self._occurrences: dict[Hashable, int] = {}
        self._lock = threading.Lock()
        self._length = -1

    def view(self, nodes: Sequence[NodeInfo],
             build: Callable[[dict[Hashable, int], dict[Hashable, int]], T]) -> tuple[bool, T | None]:
        """(True, ``build(sums, occurrences)``) for ``nodes`` (keys with no addition left are absent from both;
        ``build`` must not keep them); (False, None) when the list has another length than at the last call:
        the caller makes the plain pass then (a list that grows every cycle, such as the nodes with
        anti-affinity pods while such pods are being placed, would be counted afresh every cycle)."""
        lst = nodes if type(nodes) is list else list(nodes)
        with self._lock:
            if len(lst) != self._length:
                self._length = len(lst)
                self._changes = ChangedNodes()
                self._contrib = []
                self._sums = {}
                self._occurrences = {}
                return False, None
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
