"""Kept per-node answers as columns over the snapshot's node list.

A node-local plugin that signs a pod (runtime/signatures.py) answers, for one signature, once per node, and
that answer holds while the node's NodeInfo is unchanged. :class:`NodeColumns` keeps such answers as a
column per key: a list over the positions of the framework's snapshot node list. A cycle reads the answers of
the nodes it examines with one C-level gather per column, instead of a lookup in each node's memo, and
computes only the missing ones.

Positions follow the node list with :class:`~scheduling_framework.state.node_info.ChangedNodes` (the NodeInfo
change journal): a position whose NodeInfo changed or was replaced loses its answer in every column (lazily,
when a column is next read); a list of another length or order starts afresh. A node outside the list (a
scratch copy, a list with a NodeInfo twice) reads the spare last slot of every column, which never holds an
answer: it is computed every time. One thread at a time, like the rest of a framework's cycle.
Pinned by tests/test_perf_equivalence.py::test_node_columns_follow_every_change.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

from scheduling_framework.state.node_info import ChangedNodes, NodeInfo

#: Cells (columns x positions) kept at most; past it every column is forgotten (recomputing is all it costs).
MAX_CELLS = 4_000_000

#: Syncs with changes remembered for columns not read since; a column older than that starts afresh.
MAX_LOG = 256


def gatherer(positions: list[int]) -> Callable[[list[Any]], list[Any]]:
    """A function reading a column's answers at ``positions``, in that order (one C-level call per column: the
    same positions are read from several columns in a cycle)."""
    if len(positions) > 1:
        get = itemgetter(*positions)
        return lambda col: list(get(col))
    return lambda col: [col[p] for p in positions]


class NodeColumns:
    """Per key, one answer per position of a node list, kept while the NodeInfo at that position is unchanged."""

    __slots__ = ("_changes", "_columns", "_epoch", "_log", "_max_cells", "_nodes", "_positions", "_spare")

    def __init__(self, max_cells: int = MAX_CELLS, max_log: int = MAX_LOG) -> None:
        self._max_cells = max_cells
        self._changes = ChangedNodes()
        self._nodes: list[NodeInfo] = []  # also keeps every listed NodeInfo alive, so no id in _positions is reused
        # id(NodeInfo) -> its position. ChangedNodes keeps such a map too, but drops it while two NodeInfos share a
        # name (its journal is read by name); positions need only distinct objects.
        self._positions: dict[int, int] = {}
        self._spare = 0  # the slot read for a node outside the list: len(_nodes)
        # key -> ([epoch read], column, what a missing answer reads as)
        self._columns: dict[Hashable, tuple[list[int], list[Any], Any]] = {}
        self._epoch = 0
        self._log: deque[tuple[int, list[int]]] = deque(maxlen=max_log)

    def __len__(self) -> int:
        """How many columns are kept."""
        return len(self._columns)

    @property
    def spare(self) -> int:
        """The position of every node outside the list (the last slot of each column, always missing)."""
        return self._spare

    @property
    def tracking(self) -> bool:
        """Whether the positions of the last synced list are known (not when it holds a NodeInfo twice)."""
        return len(self._positions) == self._spare

    def positions(self, nodes: Sequence[NodeInfo], listed: list[NodeInfo]) -> list[int]:
        """Bring the columns up to date with ``listed`` (the snapshot's node list), then each of ``nodes``'s
        position in it (:attr:`spare` for a node it does not hold)."""
        self.sync(listed)
        if len(nodes) > 1 and self.tracking:
            # Each NodeInfo's list_position, set by sync, names its place when the list there holds it (another
            # NodeColumns may have moved the hint, or the node is not listed): one check of them all at once.
            hints = [ni.list_position for ni in nodes]
            try:
                found = itemgetter(*hints)(self._nodes)
            except IndexError:
                found = None
            if found is not None and list(found) == nodes:  # by identity (NodeInfo has no __eq__)
                return hints
        return list(map(self._positions.get, map(id, nodes), repeat(self._spare)))

    def position(self, ni: NodeInfo) -> int:
        """The position of ``ni`` in the list of the last sync (:attr:`spare` when it does not hold it)."""
        return self._positions.get(id(ni), self._spare)

    def column(self, key: Hashable) -> list[Any] | None:
        """The kept answers under ``key`` by position (its ``empty`` where missing), or None when none are kept."""
        entry = self._columns.get(key)
        if entry is None:
            return None
        read, col, empty = entry
        if read[0] != self._epoch:
            log = self._log
            if not log or log[0][0] > read[0] + 1:  # some changes since are forgotten
                del self._columns[key]
                return None
            for epoch, changed in reversed(log):
                if epoch <= read[0]:
                    break
                for i in changed:
                    col[i] = empty
            read[0] = self._epoch
        return col

    def new_column(self, key: Hashable, empty: Any = None) -> list[Any]:
        """A column under ``key`` (replacing any) where every answer is missing (reads ``empty``), to be filled by
        position; the spare slot must be left ``empty``."""
        cells = self._spare + 1
        if (len(self._columns) + 1) * cells > self._max_cells:
            self._columns.clear()
        col: list[Any] = [empty] * cells
        self._columns[key] = ([self._epoch], col, empty)
        return col

    def sync(self, listed: list[NodeInfo]) -> None:
        """Follow ``listed`` (the snapshot's node list): positions whose NodeInfo changed lose their answers."""
        changed = self._changes.changed(listed)
        if changed is None:
            self._reset(listed)
            return
        if not changed:
            return
        nodes, positions = self._nodes, self._positions
        for i in changed:
            old, new = nodes[i], listed[i]
            if old is not new:
                if positions.get(id(old)) == i:
                    del positions[id(old)]
                nodes[i] = new
                positions[id(new)] = i
                new.list_position = i
        if len(positions) != len(nodes):  # a NodeInfo listed twice: positions cannot name it
            self._reset(listed)
            return
        self._epoch += 1
        self._log.append((self._epoch, changed))

    def _reset(self, listed: list[NodeInfo]) -> None:
        self._nodes = list(listed)
        for i, ni in enumerate(listed):
            ni.list_position = i
        positions = {id(ni): i for i, ni in enumerate(listed)}
        self._positions = positions if len(positions) == len(listed) else {}
        self._spare = len(listed)
        self._columns.clear()
        self._log.clear()
        self._epoch += 1
