"""The scheduling algorithm of one cycle (upstream schedule_one.go): filter, score, select a host.

Kept apart from the Scheduler so embedders (placement queries, what-if tools) run exactly the same cycle.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import compress
from operator import attrgetter, not_
from typing import Any, Generic, TypeVar, overload

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.runtime.columns import NodeColumns, gatherer
from scheduling_framework.runtime.framework import Framework, NodePluginScores, ScoreDetail, raised_status
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

V = TypeVar("V")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # 0 = adaptive (50% - nodes/125, at least 5%)
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
#: The name recorded among a pod's unschedulable plugins when extenders rejected nodes (upstream ExtenderName).
EXTENDER_NAME = "Extender"
#: Extender scores (0..MaxExtenderPriority=10) are scaled to the framework's 0..MAX_NODE_SCORE range.
EXTENDER_SCORE_SCALE = 100 // 10


def _randbelow_is_randrange() -> bool:
    """Whether this Python's Random._randbelow(n) draws exactly what randrange(n) draws."""
    a, b = random.Random(20240601), random.Random(20240601)
    fn = getattr(a, "_randbelow", None)
    return callable(fn) and all(fn(n) == b.randrange(n) for n in (1, 2, 3, 5, 7, 64, 100, 1000, 2**40))


_FAST_RANDBELOW = _randbelow_is_randrange()
# Random._randbelow(n) is getrandbits(n.bit_length()) drawn until below n (CPython's Random, which has
# getrandbits): host selection may then draw inline, with the very same draws.
_INLINE_RANDBELOW = _FAST_RANDBELOW and getattr(random.Random, "_randbelow", None) is getattr(
    random.Random, "_randbelow_with_getrandbits", object())


def _reservoir_inline(totals: Sequence[int], getrandbits: Callable[[int], int]) -> int:
    """The index :meth:`Algorithm._select`'s reservoir sampling picks, drawing ``Random._randbelow(count)``
    inline (same draws, same generator state after). Only ties with the running maximum draw, so when the
    maximum is unique and comes first nothing is drawn.

    Before the first occurrence of the overall maximum the running maximum is followed node by node (ties with
    a lower running maximum still draw). From there on it stays the maximum, so the draws depend only on how
    many nodes tie with it (found by ``list.count``), not on where they are: the k-th tie draws below k + 1, and
    the pick is the last tie whose draw was 0, found afterwards with ``list.index``. Pinned by
    tests/test_perf_equivalence.py::test_inline_reservoir_draws_exactly_as_randrange."""
    if type(totals) is not list:
        totals = list(totals)
    top = max(totals)
    first = totals.index(top)
    best_score = totals[0]
    count = 1
    for i in range(1, first):
        t = totals[i]
        if t > best_score:
            best_score, count = t, 1
        elif t == best_score:
            count += 1
            k = count.bit_length()
            r = getrandbits(k)
            while r >= count:
                r = getrandbits(k)
    end = totals.count(top) + 1  # counts 2 .. end-1: one draw below each
    last = 0
    lo, k = 2, 2
    while lo < end:
        hi = min(1 << k, end)  # the counts drawn with k bits
        for c in range(lo, hi):
            r = getrandbits(k)
            while r >= c:
                r = getrandbits(k)
            if not r:
                last = c
        lo, k = hi, k + 1
    pos = first
    for _ in range(last - 1):  # the (last-1)-th tie after the first maximum
        pos = totals.index(top, pos + 1)
    return pos


class _Recorded(Generic[V]):
    """A Diagnosis field the deferred runs of filter verdicts add to (Diagnosis.defer): they are recorded before it
    is read or replaced. ``slot`` holds the value."""

    __slots__ = ("_get", "_slot")

    def __init__(self, slot: str) -> None:
        self._slot = slot
        self._get = attrgetter(slot)

    @overload
    def __get__(self, d: None, owner: type) -> _Recorded[V]: ...
    @overload
    def __get__(self, d: Diagnosis, owner: type) -> V: ...

    def __get__(self, d: Diagnosis | None, owner: type) -> V | _Recorded[V]:
        if d is None:
            return self
        if d._runs:
            d._record_runs()
        return self._get(d)  # type: ignore[no-any-return]

    def __set__(self, d: Diagnosis, value: V) -> None:
        if d._runs:
            d._record_runs()  # (their plugins)
        setattr(d, self._slot, value)


class Diagnosis:
    """Why nodes were rejected: status per node, the status of nodes not in the map, plugin names."""

    __slots__ = ("_node_to_status", "absent_nodes_status", "_unschedulable_plugins", "_pending_plugins",
                 "pre_filter_msg", "post_filter_msg", "pre_filter_allowed", "explained", "_runs")

    #: what a Diagnosis says, field by field (the deferred runs are part of node_to_status and the plugin sets)
    FIELDS = ("node_to_status", "absent_nodes_status", "unschedulable_plugins", "pending_plugins", "pre_filter_msg",
              "post_filter_msg", "pre_filter_allowed", "explained")

    def __init__(self) -> None:
        self._node_to_status: dict[str, Status] = {}
        self.absent_nodes_status: Status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        self._unschedulable_plugins: set[str] = set()
        self._pending_plugins: set[str] = set()
        self.pre_filter_msg = ""
        self.post_filter_msg = ""
        self.pre_filter_allowed: set[str] | None = None
        # Verdicts of nodes evaluated only to explain the decision (None = passed); see explain mode.
        self.explained: dict[str, Status | None] = {}
        # Runs of filter verdicts not yet recorded (see defer): (nodes, verdicts, the rejections among them)
        self._runs: list[tuple[list[NodeInfo], list[Status | None], list[Status]]] = []

    #: The rejected nodes' statuses by node name, in the order the nodes were filtered; the plugins that rejected or
    #: kept a node pending. Each is read, and replaced, with the deferred runs recorded.
    node_to_status: _Recorded[dict[str, Status]] = _Recorded("_node_to_status")
    unschedulable_plugins: _Recorded[set[str]] = _Recorded("_unschedulable_plugins")
    pending_plugins: _Recorded[set[str]] = _Recorded("_pending_plugins")

    def defer(self, nodes: list[NodeInfo], verdicts: list[Status | None], rejected: list[Status]) -> None:
        """Record a run of filter verdicts (None: the node passed; ``rejected``: the others, in order) when
        someone reads the statuses or plugins, not now: a cycle that finds a node never reads them. Neither list
        may change afterwards. Node names are distinct within a cycle's filtering (a snapshot's list)."""
        self._runs.append((nodes, verdicts, rejected))

    def rejected_count(self) -> int:
        """How many nodes have a status (``len(node_to_status)``, without recording the deferred runs)."""
        return len(self._node_to_status) + sum(len(r) for _, _, r in self._runs)

    def _record_runs(self) -> None:
        runs, self._runs = self._runs, []
        statuses = self._node_to_status
        for nodes, verdicts, rejected in runs:
            statuses.update(zip(map(_NAME, compress(nodes, verdicts)), rejected, strict=True))
            for plugin, code in set(map(_PLUGIN_AND_CODE, rejected)):
                self.add_plugin_status(Status(code, plugin=plugin))

    def add_plugin_status(self, st: Status) -> None:
        if not st.plugin:
            return
        # (the sets themselves: the deferred runs add their own plugins when recorded, in any order)
        if st.code == Code.PENDING:
            self._pending_plugins.add(st.plugin)
        elif st.is_rejected():
            self._unschedulable_plugins.add(st.plugin)

    def status_of(self, node_name: str) -> Status:
        return self.node_to_status.get(node_name, self.absent_nodes_status)

    def full_map(self, node_names: Sequence[str]) -> dict[str, Status]:
        """Every node's status (nodes absent from the map get the absent status)."""
        get, absent = self.node_to_status.get, self.absent_nodes_status
        return {n: get(n, absent) for n in node_names}


class FitError(SchedulingFrameworkError):
    """No node fits the pod. ``str()`` is upstream's message: "0/3 nodes are available: ..."."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(self.message())

    def message(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            counts: dict[str, int] = {}
            for st in d.node_to_status.values():
                for r in st.reasons:
                    if type(r) is not str:
                        r = str(r)  # a plugin's reason of another type: still counted and printed
                    counts[r] = counts.get(r, 0) + 1
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0:
                for r in d.absent_nodes_status.reasons:
                    r = r if type(r) is str else str(r)
                    counts[r] = counts.get(r, 0) + absent
            parts = sorted(f"{v} {k}" for k, v in counts.items())
            if parts:
                msg += f" {', '.join(parts)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}."
        return msg

    def __str__(self) -> str:
        return self.message()


ScoreColumns = tuple[list[str], list[int], list[tuple[str, list[int], int]]]


class ScheduleResult:
    __slots__ = ("suggested_host", "evaluated_nodes", "feasible_nodes", "_scores", "_columns", "score_detail",
                 "feasible_names", "diagnosis")

    def __init__(self, suggested_host: str, evaluated_nodes: int, feasible_nodes: int,
                 scores: list[NodePluginScores] | None = None, score_detail: ScoreDetail | None = None,
                 feasible_names: list[str] | None = None, diagnosis: Diagnosis | None = None) -> None:
        self.diagnosis = diagnosis if diagnosis is not None else Diagnosis()
        self.suggested_host = suggested_host
        self.evaluated_nodes = evaluated_nodes
        self.feasible_nodes = feasible_nodes
        self._scores = scores or []
        # (names, totals, per-plugin columns) the cycle scored with; ``scores`` is built from it on demand
        self._columns: ScoreColumns | None = None
        self.score_detail = score_detail
        self.feasible_names = feasible_names or []

    def __repr__(self) -> str:
        return (f"ScheduleResult(host={self.suggested_host!r}, evaluated={self.evaluated_nodes}, "
                f"feasible={self.feasible_nodes})")

    @property
    def scores(self) -> list[NodePluginScores]:
        """Each scored node's NodePluginScores, in the order the nodes were scored."""
        cols = self._columns
        if cols is not None:
            names, totals, columns = cols
            from_columns = NodePluginScores._from_columns
            self._scores = [from_columns(names[i], columns, i, totals[i]) for i in range(len(names))]
            self._columns = None
        return self._scores

    @scores.setter
    def scores(self, value: list[NodePluginScores]) -> None:
        self._scores = value
        self._columns = None


class CycleError(SchedulingFrameworkError):
    """An ERROR status during the cycle (a plugin failed), carrying the status."""

    def __init__(self, status: Status) -> None:
        self.status = status
        super().__init__(status.message())


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int,
                               global_percentage: int | None = None) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage if percentage is not None else (global_percentage or 0)
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    if n < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return n


class Algorithm:
    """Runs cycles for one Framework, keeping the round-robin start index between cycles."""

    def __init__(self, framework: Framework, rng: random.Random | None = None,
                 global_percentage_of_nodes_to_score: int | None = None) -> None:
        self.fwk = framework
        self.rng = rng if rng is not None else random.Random()
        self.next_start_node_index = 0
        self.global_percentage = global_percentage_of_nodes_to_score
        # The configuration's extenders (empty without ``extenders:``: every extender step is skipped).
        self.extenders: tuple[Any, ...] = tuple(getattr(framework, "extenders", ()))
        self._extender_filters = any(e.is_filter() for e in self.extenders)
        self._extender_prioritizers = any(e.is_prioritizer() for e in self.extenders)

    def schedule_pod(self, state: CycleState, pod: Pod, explain: bool = False) -> ScheduleResult:
        """Filter + score + select. Raises FitError (no node fits) or CycleError (a plugin erred)."""
        snapshot = self.fwk.snapshot
        if snapshot.num_nodes() == 0:
            raise CycleError(Status(Code.ERROR, ERR_NO_NODES_AVAILABLE))
        feasible, diagnosis = self.find_nodes_that_fit_pod(state, pod, explain)
        if not feasible:
            raise FitError(pod, snapshot.num_nodes(), diagnosis)
        evaluated = len(feasible) + diagnosis.rejected_count()
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1, feasible_names=[feasible[0].name],
                                  diagnosis=diagnosis)
        detail = ScoreDetail() if explain else None
        names, totals, columns = self._prioritize(state, pod, feasible, detail)
        if self.extenders:
            totals = self._add_extender_scores(pod, feasible, names, totals, columns, detail)
        host = self._select(names, totals)
        result = ScheduleResult(host, evaluated, len(feasible), None, detail, list(names), diagnosis)
        result._columns = (names, totals, columns)
        return result

    # filtering -------------------------------------------------------------------------------
    def find_nodes_that_fit_pod(self, state: CycleState, pod: Pod,
                                explain: bool = False) -> tuple[list[NodeInfo], Diagnosis]:
        fwk = self.fwk
        diagnosis = Diagnosis()
        all_nodes = fwk.snapshot.list()
        pre_res, st, with_nodes = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins.update(with_nodes)
        if st is not None and st.code != Code.SUCCESS:
            if not st.is_rejected():
                raise CycleError(st)
            diagnosis.absent_nodes_status = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            return [], diagnosis
        nominated = pod.status.nominated_node_name
        if nominated:
            feasible = self._evaluate_nominated_node(state, pod, nominated, diagnosis)
            if feasible:
                return feasible, diagnosis
        nodes = all_nodes
        if pre_res is not None and pre_res.node_names is not None:
            # Nodes outside the PreFilterResult are not evaluated; they take the absent-nodes status.
            allowed = pre_res.node_names
            nodes = _allowed_in_order(fwk.snapshot, allowed)
            diagnosis.pre_filter_allowed = allowed
            diagnosis.absent_nodes_status = absent_nodes_status(diagnosis.unschedulable_plugins)
        feasible = self._find_nodes_that_pass_filters(state, pod, diagnosis, nodes, explain=explain)
        processed = len(feasible) + diagnosis.rejected_count()
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        if self.extenders and feasible:
            before = len(feasible)
            feasible = self._find_nodes_that_pass_extenders(pod, feasible, diagnosis)
            if len(feasible) != before:
                # Extenders have no queueing hints: any cluster event may make the pod schedulable.
                diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return feasible, diagnosis

    def _evaluate_nominated_node(self, state: CycleState, pod: Pod, node_name: str,
                                 diagnosis: Diagnosis) -> list[NodeInfo]:
        ni = self.fwk.snapshot.node_info_map.get(node_name)
        if ni is None or ni.node is None:
            return []
        feasible = self._find_nodes_that_pass_filters(state, pod, diagnosis, [ni], all_of_them=True)
        if self.extenders and feasible:
            try:
                feasible = self._find_nodes_that_pass_extenders(pod, feasible, diagnosis)
            except CycleError:
                return []  # upstream logs the error and evaluates every node instead
        return feasible

    def _find_nodes_that_pass_filters(self, state: CycleState, pod: Pod, diagnosis: Diagnosis,
                                      nodes: Sequence[NodeInfo], all_of_them: bool = False,
                                      explain: bool = False) -> list[NodeInfo]:
        """Nodes that pass Filter, from the round-robin start, until enough are found (upstream's
        numFeasibleNodesToFind). With ``explain``, the nodes left unevaluated are then filtered for the
        explanation only (``diagnosis.explained``): decisions and the start index are unaffected."""
        fwk = self.fwk
        n = len(nodes)
        if n == 0:
            return []
        to_find = n if all_of_them else num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, n,
                                                                    self.global_percentage)
        if (not all_of_them and not fwk.has_score_plugins() and not self._extender_prioritizers
                and not self._extender_filters):
            to_find = 1  # nothing will rank or narrow the nodes: the first feasible one is the answer (as upstream)
        start = 0 if all_of_them else self.next_start_node_index
        if not fwk.has_filter_plugins():
            chosen = [nodes[(start + i) % n] for i in range(to_find)]
            if explain:
                diagnosis.explained.update((ni.name, None) for ni in nodes if ni not in chosen)
            return chosen
        feasible: list[NodeInfo] = []
        statuses = diagnosis.node_to_status
        filters = fwk.filter_plugins_for(state)
        verdict = fwk.filter_verdict
        nominator = fwk.nominator
        # Nodes with nominated pods take the framework's two-pass path; the others run the filters inline.
        check_nominated = len(nominator) > 0
        # The nodes in round-robin order are read as slices of ``nodes`` (no copy of the whole list per cycle).
        nodes_list = nodes if isinstance(nodes, list) else list(nodes)
        if start >= n:
            start = 0  # the start index counts all nodes; a PreFilterResult may leave fewer (as a rotation by 0)
        # The verdict of the leading node-local filters that sign the pod is kept in a column over the snapshot's
        # node list (runtime/columns.py) and reused while a node is unchanged (runtime/signatures.py); the
        # remaining filters run as usual. Pinned by
        # tests/test_perf_equivalence.py::test_signature_filter_verdicts_are_reused_exactly.
        signed, memo_key, head_keys = fwk.filter_memo_key(state, pod, filters)
        head, tail = filters[:signed], filters[signed:]
        tail_one = tail[0] if len(tail) == 1 else None
        columns = fwk.node_columns
        col: list[Any] | None = None  # kept verdicts by position: None passes, _MISSING not kept
        listed = fwk.snapshot.node_info_list
        if memo_key is not None:
            columns.sync(listed)
            if columns.tracking:
                col = columns.column(memo_key)
                if col is None:
                    col = columns.new_column(memo_key, _MISSING)
        position = columns.position

        def head_of(ni: NodeInfo) -> Status | None:
            """The signed filters' verdict on one node: kept, or run and kept (not an error)."""
            p = position(ni)
            if col is not None:
                st: Status | None = col[p]
                if st is not _MISSING:
                    return st
            one: list[Any] = [_MISSING]
            _head_verdicts(head, head_keys, columns, col, state, pod, [ni], [p], one, verdict)
            return one[0]  # type: ignore[no-any-return]

        def verdict_of(ni: NodeInfo) -> Status | None:
            """One node's Filter verdict (None: it passes)."""
            st: Status | None = None
            if check_nominated and nominator.nominated_pods_for_node(ni.name):
                st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            elif memo_key is not None:
                st = head_of(ni)
                if st is None and tail:
                    if tail_one is not None:  # one unsigned filter left (commonly PodTopologySpread)
                        name1, fn1 = tail_one
                        try:
                            out = fn1(state, pod, ni)
                        except Exception as e:
                            return raised_status(name1, "Filter", e)
                        st = None if out is None else verdict(name1, out)
                    else:
                        st = _run_filters(tail, state, pod, ni, verdict)
            else:
                st = _run_filters(filters, state, pod, ni, verdict)
            return st

        last_rejection: list[Status | None] = [None]

        def visit(ni: NodeInfo) -> bool:
            """Filter one node and record its verdict; True once enough feasible nodes are found."""
            st = verdict_of(ni)
            if st is None or st.code == Code.SUCCESS:
                feasible.append(ni)
                return len(feasible) >= to_find
            if st.code == Code.ERROR:
                raise CycleError(st)
            if diagnosis._runs:
                diagnosis._record_runs()  # (the runs deferred before this node come first)
            statuses[ni.name] = st
            if st is not last_rejection[0]:  # plugins share one Status per rejection per cycle: note it once
                last_rejection[0] = st
                diagnosis.add_plugin_status(st)
            return False

        # When every filter signs the pod, the nodes are read in runs: the kept verdicts of a run are taken with
        # list operations (no Python step per node), the nodes without one filtered together, one signed filter
        # at a time. A run never holds more nodes than are still to be found, so the to_find-th feasible node can
        # only end one.
        # Same nodes, same order: pinned by
        # tests/test_perf_equivalence.py::test_signature_filter_verdicts_are_reused_exactly.
        # The filters after the signed ones run on a whole run of nodes at once when each has a batch form
        # (filter_nodes: PodTopologySpread, InterPodAffinity), on the nodes the signed ones passed, in order.
        # Same verdicts as node by node: pinned by tests/test_perf_equivalence.py::test_batch_filters_equal_plain.
        tail_batches = fwk.filter_batches(tail) if memo_key is not None and tail else None
        runs = memo_key is not None and (not tail or tail_batches is not None)
        # Where the kept verdicts of a run are: a rotated slice of the column when the nodes are the snapshot's
        # list, else gathered by position.
        sliced = col is not None and nodes_list is listed
        at: list[int] | None = columns.positions(nodes_list, listed) if runs and col is not None and not sliced \
            else None
        nominated_nodes = nominator.nodes() if check_nominated else None
        stopped_at = n
        idx = 0
        while idx < n:
            end = n
            if runs:
                need = to_find - len(feasible)
                end = idx + (_RUN if need > _RUN else need)
                if end > n:
                    end = n
                chunk = _rotated(nodes_list, start, idx, end)
                if nominated_nodes is None or nominated_nodes.isdisjoint([ni.name for ni in chunk]):
                    # the verdicts kept for this pod's signature (pods of a few request shapes alternate: each
                    # shape has its column)
                    kept: list[Any]
                    at_run: list[int] | None = None  # the run's positions (a slice's: when needed)
                    if sliced:
                        kept = _rotated(col, start, idx, end, n)  # type: ignore[arg-type]
                    elif at is not None and col is not None:
                        at_run = _rotated(at, start, idx, end)
                        kept = gatherer(at_run)(col)
                    else:
                        at_run = [columns.spare] * len(chunk)
                        kept = [_MISSING] * len(chunk)
                    if _MISSING in kept:
                        # the nodes without a kept verdict: each signed filter in turn, in batch (its own kept
                        # verdicts first), then kept for the next pods of this signature
                        if at_run is None:
                            at_run = _rotated_range(start, idx, end, n)
                        _head_verdicts(head, head_keys, columns, col, state, pod, chunk, at_run, kept, verdict)
                        if tail_batches is None:
                            _raise_errors(kept)
                    if tail_batches is not None:
                        _tail_verdicts(tail, tail_batches, state, pod, chunk, kept, verdict)
                        _raise_errors(kept)
                    # every node of the run is visited (it holds no more nodes than are still to be found)
                    _take_verdicts(chunk, kept, feasible, diagnosis)
                    idx = end
                    if len(feasible) >= to_find:
                        stopped_at = end - 1
                        break
                    continue
            done = False
            while idx < end:
                pos = start + idx
                done = visit(nodes_list[pos - n if pos >= n else pos])
                if done:
                    break
                idx += 1
            if done:
                stopped_at = idx
                break
        if explain and stopped_at < n - 1:
            for ni in _rotated(nodes_list, start, stopped_at + 1, n):
                diagnosis.explained[ni.name] = verdict_of(ni)
        return feasible

    # extenders -------------------------------------------------------------------------------
    def _find_nodes_that_pass_extenders(self, pod: Pod, feasible: list[NodeInfo],
                                        diagnosis: Diagnosis) -> list[NodeInfo]:
        """Each interested extender, in order, filters what the previous ones kept (upstream
        findNodesThatPassExtenders). Nodes it fails get its message as their status, attributed to it;
        an error skips an ignorable extender and ends the cycle (CycleError) otherwise."""
        statuses = diagnosis.node_to_status
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_interested(pod):
                continue
            try:
                feasible, failed, unresolvable = ext.filter(pod, feasible)
            except SchedulingFrameworkError as e:
                if ext.is_ignorable():
                    ext.note_skipped("filter", e)
                    continue
                raise CycleError(Status(Code.ERROR, str(e), plugin=ext.name)) from None
            for node, msg in unresolvable.items():
                statuses[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg, plugin=ext.name)
            for node, msg in failed.items():
                if node not in unresolvable:
                    statuses[node] = Status(Code.UNSCHEDULABLE, msg, plugin=ext.name)
        return feasible

    def _add_extender_scores(self, pod: Pod, nodes: Sequence[NodeInfo], names: list[str], totals: list[int],
                             columns: list[tuple[str, list[int], int]], detail: ScoreDetail | None) -> list[int]:
        """Add each interested prioritizer's score x weight x 10 to the totals (upstream prioritizeNodes);
        a prioritize error only drops that extender's scores, as upstream does, and becomes a warning."""
        exts = [e for e in self.extenders if e.is_prioritizer() and e.is_interested(pod)]
        if not exts:
            return totals
        results: list[Any] = [None] * len(exts)

        def call(i: int) -> None:
            try:
                results[i] = exts[i].prioritize(pod, nodes)
            except SchedulingFrameworkError as e:
                exts[i].note_skipped("prioritize", e)

        if len(exts) == 1:
            call(0)
        else:  # upstream asks the prioritizers concurrently
            threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(1, len(exts))]
            for t in threads:
                t.start()
            call(0)
            for t in threads:
                t.join()
        index = {n: i for i, n in enumerate(names)}
        totals = list(totals)
        for ext, res in zip(exts, results, strict=True):
            if res is None:
                continue
            host_scores, weight = res
            raw = [0] * len(names)
            for hp in host_scores:
                i = index.get(hp.host)
                if i is not None:
                    raw[i] += hp.score
            scaled = [s * EXTENDER_SCORE_SCALE for s in raw]
            for i, s in enumerate(scaled):
                totals[i] += s * weight
            columns.append((ext.name, scaled, weight))
            if detail is not None:
                detail.add(ext.name, raw, scaled, weight)
        return totals

    # scoring ---------------------------------------------------------------------------------
    def prioritize_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                         detail: ScoreDetail | None = None) -> list[NodePluginScores]:
        """Each node's score plugin and extender scores and their total (upstream prioritizeNodes)."""
        names, totals, columns = self._prioritize(state, pod, nodes, detail)
        if self.extenders:
            totals = self._add_extender_scores(pod, nodes, names, totals, columns, detail)
        from_columns = NodePluginScores._from_columns
        return [from_columns(names[i], columns, i, totals[i]) for i in range(len(names))]

    def _prioritize(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                    detail: ScoreDetail | None = None) -> ScoreColumns:
        """:meth:`prioritize_nodes` as (names, totals, per-plugin columns): no object per node."""
        fwk = self.fwk
        if not fwk.has_score_plugins() and not self.extenders:
            return [ni.name for ni in nodes], [1] * len(nodes), []
        st = fwk.run_pre_score_plugins(state, pod, nodes)
        if st is not None and st.code != Code.SUCCESS:
            raise CycleError(st)
        names, totals, columns, st = fwk.score_columns(state, pod, nodes, detail)
        if st is not None and st.code != Code.SUCCESS:
            raise CycleError(st)
        return names, totals, columns

    def select_host(self, scores: Sequence[NodePluginScores]) -> str:
        """The highest total score; ties broken by reservoir sampling (seedable through ``rng``)."""
        return self._select([s.name for s in scores], [s.total_score for s in scores])

    def _select(self, names: Sequence[str], totals: Sequence[int]) -> str:
        if not names:
            raise CycleError(Status(Code.ERROR, "empty priorityList"))
        rng = self.rng
        if _INLINE_RANDBELOW and type(rng) is random.Random:
            return names[_reservoir_inline(totals, rng.getrandbits)]
        best = 0
        best_score = totals[0]
        count = 1
        # Random.randrange(n) is Random._randbelow(n) for an int n > 0: call it directly (same draws) unless
        # the generator is a subclass that may draw differently.
        randrange: Callable[[int], int] = rng.randrange
        if _FAST_RANDBELOW and type(rng) is random.Random:
            randrange = rng._randbelow  # type: ignore[attr-defined]
        for i in range(1, len(totals)):
            t = totals[i]
            if t > best_score:
                best, best_score, count = i, t, 1
            elif t == best_score:
                count += 1
                if randrange(count) == 0:
                    best = i
        return names[best]


T = TypeVar("T")

_MISSING: Any = object()
_NAME = attrgetter("name")
_CODE = attrgetter("code")
_PLUGIN_AND_CODE = attrgetter("plugin", "code")


def _rotated(nodes: list[T], start: int, a: int, b: int, n: int | None = None) -> list[T]:
    """Items ``a`` to ``b`` (0 <= a <= b <= n) of the first ``n`` (all) of ``nodes`` rotated to begin at
    ``start``."""
    if n is None:
        n = len(nodes)
    lo, hi = start + a, start + b
    if hi <= n:
        return nodes[lo:hi]
    if lo >= n:
        return nodes[lo - n:hi - n]
    return nodes[lo:n] + nodes[:hi - n]


#: How many nodes the filter loop reads at once when every filter signs the pod (a run also holds no more than
#: are still to be found: 230 at 500 nodes, one run where no node is rejected). Against 128, loop instructions:
#: the 500-node dumps -0.3 to -0.7 %, scheduler_perf's SchedulingBasic (1,000 nodes) +0.2 %; 1,024 gave the
#: dumps the same and SchedulingBasic +1.1 %.
_RUN = 256


def _rotated_range(start: int, a: int, b: int, n: int) -> list[int]:
    """Positions ``a`` to ``b`` (0 <= a <= b <= n) of a list of ``n`` rotated to begin at ``start``."""
    lo, hi = start + a, start + b
    if hi <= n:
        return list(range(lo, hi))
    if lo >= n:
        return list(range(lo - n, hi - n))
    return [*range(lo, n), *range(hi - n)]


def _raise_errors(kept: list[Status | None]) -> None:
    """End the cycle with the first erring verdict of a run, in node order (visiting stops there)."""
    rejected = list(filter(None, kept))
    if rejected and Code.ERROR in map(_CODE, rejected):  # C-level passes: a run holds many rejections
        raise CycleError(next(st for st in rejected if st.code == Code.ERROR))


def _head_verdicts(head: Sequence[tuple[str, Any]], keys: Sequence[int | None], columns: NodeColumns,
                   col: list[Any] | None, state: CycleState, pod: Pod, chunk: list[NodeInfo], positions: list[int],
                   kept: list[Any], verdict: Callable[[str, Any], Status | None]) -> None:
    """Replace each _MISSING in ``kept`` with the verdict of the signed filters ``head`` on that node of
    ``chunk`` (at ``positions`` of the snapshot's list): each filter in order on the nodes the previous ones
    passed, its own kept verdicts (under ``keys``) read first and the rest computed and kept; then the combined
    verdicts kept in ``col``. Errors are never kept. Same verdicts as running ``head`` node by node: pinned by
    tests/test_perf_equivalence.py::test_signature_filter_verdicts_are_reused_exactly."""
    todo = [q for q, st in enumerate(kept) if st is _MISSING]
    spare = columns.spare
    alive = todo  # the nodes every filter so far passed: their indices in ``chunk`` and their positions
    alive_at = [positions[q] for q in todo]
    for (name, fn), key in zip(head, keys, strict=True):
        if not alive:
            break
        own = columns.column(key) if key is not None else None
        if own is None and key is not None and columns.tracking:
            own = columns.new_column(key, _MISSING)
        found: list[Any] = [_MISSING] * len(alive) if own is None else gatherer(alive_at)(own)
        if _MISSING in found:
            for j, q in enumerate(alive):
                if found[j] is not _MISSING:
                    continue
                # _run_filters for one filter, inlined: calling it here costs +0.9 % of the loop's instructions
                st: Status | None
                try:
                    out = fn(state, pod, chunk[q])
                except Exception as e:
                    st = raised_status(name, "Filter", e)
                else:
                    st = None if out is None else verdict(name, out)
                found[j] = st
                p = alive_at[j]
                if own is not None and p != spare and (st is None or st.code != Code.ERROR):
                    own[p] = st
        # C-level passes (a Status is always true; counting Nones would call Status.__eq__ on each rejection):
        # the usual filter passes every node
        if not any(found):
            continue
        for q, st in zip(compress(alive, found), filter(None, found), strict=True):
            kept[q] = st
        passed = list(map(not_, found))
        alive = list(compress(alive, passed))
        alive_at = list(compress(alive_at, passed))
    for q in alive:
        kept[q] = None
    if col is not None:
        for q in todo:
            st = kept[q]
            p = positions[q]
            if p != spare and (st is None or st.code != Code.ERROR):
                col[p] = st


def _take_verdicts(chunk: list[NodeInfo], kept: list[Status | None], feasible: list[NodeInfo],
                   diagnosis: Diagnosis) -> None:
    """Record a run of kept verdicts as visiting each node would: passing nodes in order, rejections in the
    status map, and each rejecting plugin once in the diagnosis (the kept statuses are rejections only; both
    recorded when first read, see Diagnosis.defer)."""
    # C-level passes: a Status is always true (test_runtime_filter.py::test_a_status_is_always_true)
    rejected = list(filter(None, kept))
    if not rejected:
        feasible.extend(chunk)
        return
    feasible.extend(compress(chunk, map(not_, kept)))
    diagnosis.defer(chunk, kept, rejected)


def _tail_verdicts(filters: Sequence[tuple[str, Any]], batches: Sequence[tuple[str, Any]], state: CycleState,
                   pod: Pod, chunk: list[NodeInfo], kept: list[Status | None],
                   verdict: Callable[[str, Any], Status | None]) -> None:
    """Run ``filters`` in order, each through its batch form (``batches``, same order), on the nodes of
    ``chunk`` whose verdict in ``kept`` is still None (passed), writing each rejection (or error) into
    ``kept``: what running them node by node after the signed ones gives. A batch that declines (None),
    answers for another number of nodes, or raises, is replaced by its plugin's ``filter`` node by node."""
    passing = [q for q, st in enumerate(kept) if st is None]
    for (name, fn), (_name, batch) in zip(filters, batches, strict=True):
        if not passing:
            return
        sub = [chunk[q] for q in passing]
        try:
            outs = batch(state, pod, sub)
        except Exception:
            outs = None
        judged = False  # outs are what the plugin returned (True: final statuses, from _run_filters)
        if type(outs) is not list or len(outs) != len(sub):
            one = ((name, fn),)
            outs = [_run_filters(one, state, pod, ni, verdict) for ni in sub]
            judged = True
        still: list[int] = []
        last_out: Any = None
        st: Status | None = None
        for q, out in zip(passing, outs, strict=True):
            if out is None:
                still.append(q)
                continue
            if out is not last_out:  # plugins share one Status per rejection per cycle: judged once
                last_out, st = out, out if judged else verdict(name, out)
            if st is None:
                still.append(q)
            else:
                kept[q] = st
        passing = still


def _run_filters(filters: Sequence[tuple[str, Any]], state: CycleState, pod: Pod, ni: NodeInfo,
                 verdict: Callable[[str, Any], Status | None]) -> Status | None:
    """The first rejecting (or erring) status of ``filters`` on ``ni``, None when they all pass: the inline
    loop of :meth:`Algorithm._find_nodes_that_pass_filters` as a function, for the signed/unsigned split."""
    for name, fn in filters:
        try:
            out = fn(state, pod, ni)
        except Exception as e:
            return raised_status(name, "Filter", e)
        if out is not None:
            st = verdict(name, out)
            if st is not None:
                return st
    return None


def explain_scores(result: ScheduleResult) -> dict[str, Any]:
    """{"scores": {node: {plugin: {raw, normalized, weighted}}}, "totalScores": {node: total}}."""
    scores: dict[str, dict[str, dict[str, int]]] = {}
    totals: dict[str, int] = {}
    d = result.score_detail
    for i, nps in enumerate(result.scores):
        per: dict[str, dict[str, int]] = {}
        if d is not None:
            for pl in d.plugins:
                per[pl] = {"raw": d.raw[pl][i], "normalized": d.normalized[pl][i],
                           "weighted": d.normalized[pl][i] * d.weights[pl]}
        scores[nps.name] = per
        totals[nps.name] = nps.total_score
    return {"scores": scores, "totalScores": totals}


def statuses_as_dict(statuses: Mapping[str, Status]) -> dict[str, dict[str, Any]]:
    return {n: st.to_dict() for n, st in statuses.items()}


def absent_nodes_status(plugins: Iterable[str]) -> Status:
    """Upstream's status for the nodes a PreFilterResult left out, naming the PreFilter ``plugins`` that
    narrowed the nodes."""
    names = " ".join(sorted(plugins))
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{names}]")


def _allowed_in_order(snapshot: Any, allowed: AbstractSet[str]) -> list[NodeInfo]:
    """The snapshot's nodes named in ``allowed``, in snapshot order.

    Equivalent to filtering the whole node list (the plain path), which costs O(nodes) per cycle: a
    DaemonSet pod's PreFilterResult names one node out of thousands. A small set is looked up by name and
    ordered by the snapshot's position index; every position is checked by identity, so a stale index is
    rebuilt rather than trusted. Pinned by tests/test_perf_equivalence.py::test_prefilter_result_lookup.
    """
    all_nodes: list[NodeInfo] = snapshot.list()
    if len(allowed) * 8 >= len(all_nodes):
        return [ni for ni in all_nodes if ni.name in allowed]
    idx: dict[str, int] | None = getattr(snapshot, "_index", None)
    for _attempt in (0, 1):
        if idx is None:
            idx = {ni.name: i for i, ni in enumerate(all_nodes)}
            snapshot._index = idx
        found: list[tuple[int, NodeInfo]] = []
        stale = False
        m = snapshot.node_info_map
        n = len(all_nodes)
        for name in allowed:
            ni = m.get(name)
            if ni is None or ni.node is None:
                continue
            i = idx.get(name)
            if i is None or i >= n or all_nodes[i] is not ni:
                stale = True
                break
            found.append((i, ni))
        if not stale:
            found.sort(key=lambda t: t[0])
            return [ni for _, ni in found]
        idx = None
    return [ni for ni in all_nodes if ni.name in allowed]
