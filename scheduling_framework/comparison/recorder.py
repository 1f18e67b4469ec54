"""What each side's scheduling cycles decided, recorded as they run.

A :class:`CycleBook` is installed on the :class:`~scheduling_framework.runtime.algorithm.Algorithm` of a
Scheduler (one per profile) or of a Simulator. It keeps, per cycle, the data an explanation is made of --
each scored node's normalized score per plugin and its total, each rejected node's Filter status, the
PreFilter narrowing -- as the references the cycle built anyway (nothing is copied or formatted, and the
cycle runs without ``explain``), and the nodes that tied for the top total.

Side A runs first. Side B's book knows, for each pod, the node A put it on and A's equally top-scored nodes
(``peer``), and:

- aligns ties: when A's node is among B's equally top-scored nodes, B takes it (after drawing as it would
  have, so its random stream stays its own): a legitimate random pick for B, so B's tie-breaking never makes
  the two runs diverge;
- gives A's node a Filter verdict on B even when B's cycle stopped before reaching it
  (percentageOfNodesToScore): the Filter plugins run once more on that node, after the decision, with the
  cycle's own state.

Running the two sides in step, cycle by cycle, would let A align with B as well, but two big simulations
interleaved cycle by cycle cost half as much again in CPU (caches), more than the issue's budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.runtime.algorithm import Algorithm, CycleError, FitError, ScheduleResult
from scheduling_framework.status import Code, Status

#: A column of the scores: (plugin, normalized score per scored node, weight).
Column = tuple[str, Sequence[int], int]
#: The verdict of a node a cycle did not reach (it had found the feasible nodes it needed).
NOT_EVALUATED = "NotEvaluated"


def top_nodes(names: Sequence[str], totals: Sequence[int]) -> tuple[str, ...]:
    """The nodes sharing the top total, in the cycle's order."""
    if not totals:
        return ()
    best = max(totals)
    if totals.count(best) == 1:
        return (names[totals.index(best)],)
    return tuple(n for n, t in zip(names, totals, strict=True) if t == best)


class CycleRecord:
    """One scheduling cycle of one pod on one side (its latest is the one that decided the pod's outcome)."""

    __slots__ = ("pod", "host", "names", "totals", "columns", "rejected", "absent", "allowed", "prefilter_msg",
                 "unschedulable_plugins", "drawn", "extra", "error", "tied")

    def __init__(self, pod: str) -> None:
        self.pod = pod
        #: the node chosen (None: no node fits, or an error)
        self.host: str | None = None
        #: the nodes that passed Filter and were scored, in the cycle's order (one node: not scored)
        self.names: Sequence[str] = ()
        #: their total scores (empty when a single node passed: upstream does not score then)
        self.totals: Sequence[int] = ()
        self.columns: Sequence[Column] = ()
        #: Filter rejections by node
        self.rejected: Mapping[str, Status] = {}
        #: the status of the nodes a PreFilter result left out (``allowed``), or of every node when PreFilter
        #: rejected the pod (``prefilter_msg`` set)
        self.absent: Status | None = None
        self.allowed: frozenset[str] | None = None
        self.prefilter_msg = ""
        self.unschedulable_plugins: frozenset[str] = frozenset()
        #: the node this side's own random draw picked, when tie alignment took another of the tied nodes
        self.drawn: str | None = None
        #: verdicts of nodes the cycle did not reach, evaluated afterwards for the comparison (None = passed)
        self.extra: dict[str, Status | None] = {}
        #: the cycle's Error status
        self.error: Status | None = None
        #: the nodes that tied for the top total (just the host when it was alone)
        self.tied: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"CycleRecord({self.pod} -> {self.host})"

    def scored(self, node: str) -> int | None:
        """The position of ``node`` among the scored nodes, None when it was not scored."""
        if not self.totals:
            return None
        try:
            return self.names.index(node)
        except ValueError:
            return None

    def verdict(self, node: str) -> dict[str, Any]:
        """``node``'s Filter verdict in this cycle, as ``--explain`` writes it (``{"code": "Success"}``, or the
        status with its plugin and reasons); ``{"code": "NotEvaluated"}`` when the cycle never reached it."""
        if self.error is not None and not self.names and not self.rejected:
            return self.error.to_dict()
        if node in self.rejected:
            return self.rejected[node].to_dict()
        if node == self.host or node in self.names:
            return {"code": "Success"}
        if self.absent is not None and (self.prefilter_msg or (self.allowed is not None and node not in self.allowed)):
            return self.absent.to_dict()
        if node in self.extra:
            st = self.extra[node]
            return {"code": "Success"} if st is None or st.is_success() else st.to_dict()
        return {"code": NOT_EVALUATED}


class CycleBook:
    """The cycles of one side in the order they ran (``records``) and each pod's latest (``latest``).

    ``peer``: for the second side, pod key -> the node the first side put it on; with ``align``, ties are
    broken toward it."""

    def __init__(self, peer: Mapping[str, str | None] | None = None, align: bool = False) -> None:
        self.records: list[CycleRecord] = []
        self.latest: dict[str, int] = {}
        self.peer: Mapping[str, str | None] = peer or {}
        self.align = align
        self._current = ""  # the pod of the cycle under way
        self._tied: tuple[str, ...] = ()
        self._drawn: str | None = None

    def last(self, pod: str) -> CycleRecord | None:
        i = self.latest.get(pod)
        return None if i is None else self.records[i]

    def install(self, algorithm: Algorithm) -> None:
        """Record every cycle ``algorithm`` runs (its ``schedule_pod`` and host selection are wrapped on the
        instance; the class and other instances are untouched)."""
        inner_schedule: Callable[..., ScheduleResult] = algorithm.schedule_pod
        inner_select: Callable[[Sequence[str], Sequence[int]], str] = algorithm._select
        book = self

        def schedule_pod(state: CycleState, pod: Pod, explain: bool = False) -> ScheduleResult:
            book._current, book._tied, book._drawn = pod.key, (), None
            try:
                result = inner_schedule(state, pod, explain)
            except FitError as fe:
                book._fit_error(algorithm, state, pod, fe)
                raise
            except CycleError as ce:
                book._cycle_error(pod, ce)
                raise
            book._placed(algorithm, state, pod, result)
            return result

        def select(names: Sequence[str], totals: Sequence[int]) -> str:
            host = inner_select(names, totals)
            return book._select(names, totals, host)

        # Both are looked up on the instance first: the algorithm's own call to self._select finds the wrapper.
        algorithm.schedule_pod = schedule_pod  # type: ignore[method-assign]
        algorithm._select = select  # type: ignore[method-assign]

    def _select(self, names: Sequence[str], totals: Sequence[int], host: str) -> str:
        tied = self._tied = top_nodes(names, totals)
        if self.align and len(tied) > 1:
            want = self.peer.get(self._current)
            if want is not None and want != host and want in tied:
                self._drawn = host
                return want
        return host

    # the hooks -----------------------------------------------------------------------------------------
    def _add(self, rec: CycleRecord) -> None:
        rec.drawn = self._drawn
        self.latest[rec.pod] = len(self.records)
        self.records.append(rec)

    def _placed(self, algorithm: Algorithm, state: CycleState, pod: Pod, result: ScheduleResult) -> None:
        rec = CycleRecord(pod.key)
        rec.host = result.suggested_host
        cols = result._columns
        if cols is not None:
            rec.names, rec.totals, rec.columns = cols
        else:
            rec.names = list(result.feasible_names) or [result.suggested_host]
        rec.tied = self._tied or (rec.host,)
        self._diagnosis(rec, result.diagnosis)
        self._peer_verdict(algorithm, state, pod, rec)
        self._add(rec)

    def _fit_error(self, algorithm: Algorithm, state: CycleState, pod: Pod, fe: FitError) -> None:
        rec = CycleRecord(pod.key)
        self._diagnosis(rec, fe.diagnosis)
        if not rec.prefilter_msg:
            self._peer_verdict(algorithm, state, pod, rec)
        self._add(rec)

    def _cycle_error(self, pod: Pod, ce: CycleError) -> None:
        rec = CycleRecord(pod.key)
        rec.error = ce.status
        self._add(rec)

    @staticmethod
    def _diagnosis(rec: CycleRecord, d: Any) -> None:
        rec.rejected = d.node_to_status
        rec.prefilter_msg = d.pre_filter_msg
        if d.pre_filter_msg or d.pre_filter_allowed is not None:
            rec.absent = d.absent_nodes_status
            rec.allowed = None if d.pre_filter_allowed is None else frozenset(d.pre_filter_allowed)
        rec.unschedulable_plugins = frozenset(d.unschedulable_plugins)

    def _peer_verdict(self, algorithm: Algorithm, state: CycleState, pod: Pod, rec: CycleRecord) -> None:
        """The Filter verdict of the other side's node, when this cycle did not reach it."""
        want = self.peer.get(pod.key)
        if want is None or want == rec.host or want in rec.rejected or want in rec.names or rec.prefilter_msg or (
                rec.allowed is not None and want not in rec.allowed):
            return
        fwk = algorithm.fwk
        ni = fwk.snapshot.node_info_map.get(want)
        if ni is None or ni.node is None:
            return
        try:
            st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
        except Exception as e:  # the comparison's extra question must never break the run it watches
            st = Status(Code.ERROR, f"evaluating the node for the comparison failed: {type(e).__name__}: {e}")
        rec.extra[want] = st


__all__ = ["NOT_EVALUATED", "Column", "CycleBook", "CycleRecord", "top_nodes"]
