"""The generic preemption evaluator (upstream ``pkg/scheduler/framework/preemption``).

A preemption plugin supplies the policy through :class:`PreemptionInterface` (how many nodes to try, who
may be evicted, which victims a node needs); the :class:`Evaluator` runs the flow every such plugin
shares: check the preemptor may preempt, dry-run the nodes whose failure is resolvable, pick the best
candidate, evict its victims and clear lower-priority nominations on that node.

Dry runs are sequential, starting at the plugin's offset, which gives the result upstream's tests
assert with parallelism 1; the reference scheduler is single-threaded per cycle anyway.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import attrs

from scheduling_framework.api.pod import Pod
from scheduling_framework.api.selectors import LabelSelector
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.interfaces import PostFilterResult
from scheduling_framework.runtime.algorithm import Diagnosis, FitError
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

#: Added to every victim priority when summing, so sums of negative priorities compare sensibly.
PRIORITY_OFFSET = 2**31
ERR_PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
ERR_NO_CANDIDATE = "no candidate node for preemption"
#: The dry run's NodeInfo copies stay out of the change journal (False: noted like any clone; the plain twin of
#: tests/test_perf_equivalence.py::test_preemption_bulk_removal_equals_plain).
SCRATCH_COPIES = True

# --- pod ordering helpers (upstream pkg/scheduler/util) ------------------------------------------


def pod_start_time(pod: Pod) -> float:
    """The pod's start time as a POSIX timestamp; a pod that has not started sorts as "now", i.e. after
    every recorded start (upstream substitutes the current time)."""
    st = pod.status.start_time
    if st is None:
        return math.inf
    return _timestamp(st)


def _timestamp(dt: datetime) -> float:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """Higher priority first; equal priorities: the pod that started earlier is more important."""
    p1, p2 = pod1.priority, pod2.priority
    if p1 != p2:
        return p1 > p2
    return pod_start_time(pod1) < pod_start_time(pod2)


def _importance_key(pod: Pod) -> tuple[int, float]:
    return -pod.priority, pod_start_time(pod)


def get_earliest_pod_start_time(pods: Sequence[Pod]) -> float | None:
    """The earliest start time among the pods of the highest priority (None for no pods)."""
    if not pods:
        return None
    earliest = pod_start_time(pods[0])
    max_priority = pods[0].priority
    for p in pods:
        prio = p.priority
        if prio == max_priority:
            t = pod_start_time(p)
            if t < earliest:
                earliest = t
        elif prio > max_priority:
            max_priority = prio
            earliest = pod_start_time(p)
    return earliest


def sort_by_importance(pods: list[Any], more_important: Callable[[Pod, Pod], bool],
                       pod_of: Callable[[Any], Pod] = lambda p: p) -> None:
    """Sort in place, most important first (a stable sort on ``more_important``).

    With the default ``more_important_pod`` the sort uses the key (-priority, start time), whose ``<`` is
    exactly ``more_important_pod``, so the stable sort gives the same order as the comparison sort below (one
    start-time conversion per pod instead of two per comparison). Pinned by
    tests/test_perf_equivalence.py::test_preemption_importance_key_sort_equals_cmp_sort.
    """
    if more_important is more_important_pod:
        pods.sort(key=lambda x: _importance_key(pod_of(x)))
        return

    def cmp(a: Any, b: Any) -> int:
        pa, pb = pod_of(a), pod_of(b)
        if more_important(pa, pb):
            return -1
        if more_important(pb, pa):
            return 1
        return 0

    pods.sort(key=functools.cmp_to_key(cmp))


# --- PodDisruptionBudgets --------------------------------------------------------------------------


@attrs.frozen(slots=True)
class PodDisruptionBudget:
    """What preemption reads of a policy/v1 PodDisruptionBudget.

    ``selector`` is None when the PDB's selector is absent, empty or invalid: such a PDB matches no pod.
    """

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str] = frozenset()

    def matches(self, pod: Pod) -> bool:
        return (self.selector is not None and pod.metadata.namespace == self.namespace
                and self.selector.matches(pod.metadata.labels))


def pdb_from_object(obj: Any) -> PodDisruptionBudget:
    """Parse a PodDisruptionBudget KubeObject; selectors that upstream cannot convert match nothing."""
    spec = obj.spec
    status = obj.status
    selector: LabelSelector | None = None
    raw_sel = spec.get("selector")
    if raw_sel is not None:
        try:
            sel = LabelSelector.from_dict(raw_sel, "spec.selector")
        except Exception:  # an unparsable selector matches no pod, as upstream skips such a PDB
            sel = None
        if sel is not None and not sel.is_empty() and _valid_selector(sel):
            selector = sel
    allowed = status.get("disruptionsAllowed", 0)
    try:
        allowed_n = int(allowed)
    except (TypeError, ValueError):
        allowed_n = 0
    disrupted = status.get("disruptedPods") or {}
    names = frozenset(str(k) for k in disrupted) if isinstance(disrupted, Mapping) else frozenset()
    return PodDisruptionBudget(obj.metadata.namespace, obj.metadata.name, selector, allowed_n, names)


def _valid_selector(sel: LabelSelector) -> bool:
    # metav1.LabelSelectorAsSelector rejects In/NotIn without values and Exists/DoesNotExist with values.
    for r in sel.match_expressions:
        op = r.operator
        if op in ("In", "NotIn") and not r.values:
            return False
        if op in ("Exists", "DoesNotExist") and r.values:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def list_pdbs(handle: Any) -> list[PodDisruptionBudget]:
    """Every PodDisruptionBudget in the handle's object store (none when the handle has no store)."""
    objects = getattr(handle, "objects", None)
    if objects is None:
        return []
    return [pdb_from_object(o) for o in objects.list("PodDisruptionBudget")]


# --- candidates ------------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Victims:
    """Pods to evict on one node (most important first) and how many of them violate a PDB."""

    pods: tuple[Pod, ...] = ()
    num_pdb_violations: int = 0


@attrs.frozen(slots=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are evicted."""

    name: str
    victims: Victims


class PreemptionInterface(Protocol):
    """The policy a preemption plugin gives the :class:`Evaluator` (upstream preemption.Interface)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        ...

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]: ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[Callable[[str], float]] | None:
        ...


def absent_status_of(m: Mapping[str, Status | None]) -> Status:
    """The status of nodes missing from a node->status map: the map's ``absent_nodes_status`` attribute
    when it has one, else UnschedulableAndUnresolvable (upstream NewDefaultNodeToStatus)."""
    st = getattr(m, "absent_nodes_status", None)
    return st if isinstance(st, Status) else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


def status_of(m: Mapping[str, Status | None], node_name: str, absent: Status) -> Status | None:
    if node_name in m:
        return m[node_name]
    return absent


def aggregate_message(errs: Sequence[str]) -> str:
    """k8s.io/apimachinery errors.NewAggregate(...).Error(): one message as is, several de-duplicated in []."""
    if len(errs) == 1:
        return errs[0]
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class Evaluator:
    """Runs preemption for one plugin (upstream preemption.Evaluator, synchronous preparation)."""

    def __init__(self, plugin_name: str, handle: Any, interface: PreemptionInterface) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface

    # the flow ------------------------------------------------------------------------------------
    def preempt(self, state: CycleState, pod: Pod, m: Mapping[str, Status | None]
                ) -> tuple[PostFilterResult | None, Status]:
        """(result, status) as upstream's Preempt:

        - (None, Error): something failed; the pod's nomination is left as it is;
        - (None, Unschedulable): the pod may not preempt (now); its nomination is left as it is;
        - (PostFilterResult(""), Unschedulable): preemption cannot help; the nomination is cleared;
        - (PostFilterResult(node, victims), Success): victims were evicted, the pod is nominated to node.
        """
        absent = absent_status_of(m)
        nominated_status = status_of(m, pod.status.nominated_node_name, absent)
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)

        all_nodes = self.handle.snapshot.list()
        candidates, node_statuses, err = self.find_candidates(state, all_nodes, pod, m)
        if err and not candidates:
            return None, Status(Code.ERROR, err)
        if not candidates:
            diagnosis = Diagnosis()
            diagnosis.node_to_status = node_statuses
            diagnosis.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_PREEMPTION_NOT_HELPFUL)
            fit_error = FitError(pod, len(all_nodes), diagnosis)
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, fit_error.message())

        if getattr(self.handle, "extenders", ()):
            candidates, st = self.call_extenders(pod, candidates)
            if st is not None:
                return None, st

        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, ERR_NO_CANDIDATE)

        st = self.prepare_candidate(best, pod)
        if st is not None and not st.is_success():
            return None, st
        victims = tuple(p.key for p in best.victims.pods)
        return PostFilterResult(best.name, victims=victims), Status(Code.SUCCESS)

    def find_candidates(self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod,
                        m: Mapping[str, Status | None]) -> tuple[list[Candidate], dict[str, Status], str]:
        """Dry-run preemption on the nodes whose status is Unschedulable (in snapshot order)."""
        if not all_nodes:
            return [], {}, "no nodes available"
        absent = absent_status_of(m)
        potential: list[NodeInfo] = []
        for ni in all_nodes:
            st = status_of(m, ni.name, absent)
            if st is not None and st.code == Code.UNSCHEDULABLE:
                potential.append(ni)
        if not potential:
            return [], {}, ""
        pdbs = list_pdbs(self.handle)
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_preemption(self, state: CycleState, pod: Pod, potential_nodes: Sequence[NodeInfo],
                           pdbs: Sequence[PodDisruptionBudget], offset: int, num_candidates: int
                           ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Simulate preemption node by node from ``offset`` (wrapping), on copies of the NodeInfo and the
        CycleState. Stops once ``num_candidates`` are found and at least one violates no PDB; each list
        (non-violating, violating) keeps at most ``num_candidates``. Returns (candidates with
        non-violating ones first, status of each node that is no candidate, aggregated error message)."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errs: list[str] = []
        n = len(potential_nodes)
        # An interface that vouches that its dry run changes nothing in the CycleState (no PreFilter extension
        # runs for this pod) lets every node share one copy, as the nodes of the main Filter pass share one state.
        shareable = getattr(self.interface, "dry_run_state_shareable", None)
        shared = state.clone() if callable(shareable) and shareable(state) else None
        scratch = SCRATCH_COPIES  # the copies never enter a node list: no journal notes (NodeInfo.clone)
        for i in range(n):
            ni = potential_nodes[(offset + i) % n]
            node_copy = ni.clone(noted=False) if scratch and type(ni) is NodeInfo else ni.clone()
            state_copy = shared if shared is not None else state.clone()
            pods, num_violations, st = self.interface.select_victims_on_node(state_copy, pod, node_copy, pdbs)
            success = st is None or st.code == Code.SUCCESS
            if success and pods:
                c = Candidate(ni.name, Victims(tuple(pods), num_violations))
                target = non_violating if num_violations == 0 else violating
                if len(target) < num_candidates:
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if success:
                st = Status(Code.ERROR, f'expected at least one victim pod on node "{ni.name}"')
            assert st is not None
            if st.code == Code.ERROR:
                errs.append(st.message())
            statuses[ni.name] = st
        return non_violating + violating, statuses, aggregate_message(errs) if errs else ""

    def call_extenders(self, pod: Pod, candidates: Sequence[Candidate]) -> tuple[list[Candidate], Status | None]:
        """Let each interested extender with a preempt verb narrow the candidates and their victims, in
        order (upstream callExtenders). An error, or a kept node without victims, fails preemption with an
        Error status unless the extender is ignorable (then it is skipped, or the node dropped)."""
        victims_map: dict[str, Any] = dict(self.interface.candidates_to_victims_map(candidates))
        if not victims_map:
            return list(candidates), None
        snapshot = self.handle.snapshot
        for ext in self.handle.extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                got = ext.process_preemption(pod, victims_map, snapshot)
            except SchedulingFrameworkError as e:
                if ext.is_ignorable():
                    ext.note_skipped("preempt", e)
                    continue
                return [], Status(Code.ERROR, str(e), plugin=ext.name)
            narrowed: dict[str, Any] = {}
            for node_name, (pods, violations) in got.items():
                if not pods:
                    if ext.is_ignorable():
                        continue
                    return [], Status(Code.ERROR, f'expected at least one victim pod on node "{node_name}"',
                                      plugin=ext.name)
                narrowed[node_name] = Victims(tuple(pods), violations)
            victims_map = narrowed
            if not victims_map:
                break
        return [Candidate(name, v) for name, v in victims_map.items()], None

    # selection -----------------------------------------------------------------------------------
    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        names = self._in_node_order([c.name for c in candidates if c.name in victims_map])
        node = pick_one_node_for_preemption(victims_map, score_funcs, names)
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        return candidates[0]  # not reached with the default interface

    def _in_node_order(self, names: list[str]) -> list[str]:
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is None:
            return names
        index = {ni.name: i for i, ni in enumerate(snapshot.list())}
        return sorted(names, key=lambda n: index.get(n, len(index)))

    # evicting ------------------------------------------------------------------------------------
    def prepare_candidate(self, c: Candidate, pod: Pod) -> Status | None:
        """Evict the victims (a victim waiting at Permit is rejected instead) and clear the nomination of
        lower-priority pods nominated to the node. An eviction failure is an Error status."""
        handle = self.handle
        get_waiting = getattr(handle, "get_waiting_pod", None)
        deleter = getattr(handle, "pod_deleter", None)
        for victim in c.victims.pods:
            if victim.metadata.deletion_timestamp is not None:
                continue  # already being deleted
            wp = get_waiting(victim.metadata.uid) if callable(get_waiting) else None
            if wp is not None:
                wp.reject(self.plugin_name, "preempted")
                continue
            if callable(deleter):
                try:
                    deleter(victim)
                except Exception as e:  # the application's deleter failed: report it as an Error
                    return Status(Code.ERROR, str(e) or type(e).__name__, error=e)
        self.clear_lower_priority_nominations(pod, c.name)
        return None

    def clear_lower_priority_nominations(self, pod: Pod, node_name: str) -> list[Pod]:
        """Lower-priority pods nominated to ``node_name`` may no longer fit there: drop their nomination."""
        nominator = getattr(self.handle, "nominator", None)
        if nominator is None:
            return []
        prio = pod.priority
        lower = [pi.pod for pi in list(nominator.nominated_pods_for_node(node_name)) if pi.pod.priority < prio]
        clear = getattr(self.handle, "clear_nominated_node_name", None)
        for p in lower:
            if callable(clear):
                clear(p)
            else:
                nominator.delete_nominated_pod_if_exists(p)
        return lower


def pick_one_node_for_preemption(nodes_to_victims: Mapping[str, Victims],
                                 score_funcs: Sequence[Callable[[str], float]] | None,
                                 order: Sequence[str] | None = None) -> str:
    """The best node: each score function in turn keeps the highest-scoring nodes until one is left.

    Default functions, in order: fewest PDB violations; lowest highest-priority victim; smallest sum of
    (offset) victim priorities; fewest victims; latest earliest start among the highest-priority victims.
    A tie after all of them goes to the first node of ``order`` (node order), where upstream picks any.
    """
    if not nodes_to_victims:
        return ""
    candidates = list(order) if order is not None else list(nodes_to_victims)
    if not score_funcs:
        def min_pdb_violations(node: str) -> float:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> float:
            return -nodes_to_victims[node].pods[0].priority

        def min_sum_priorities(node: str) -> float:
            return -sum(p.priority + PRIORITY_OFFSET for p in nodes_to_victims[node].pods)

        def min_num_pods(node: str) -> float:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> float:
            t = get_earliest_pod_start_time(nodes_to_victims[node].pods)
            return -math.inf if t is None else t

        score_funcs = [min_pdb_violations, min_highest_priority, min_sum_priorities, min_num_pods,
                       latest_start_time]
    for f in score_funcs:
        selected: list[str] = []
        best = -math.inf
        for node in candidates:
            s = f(node)
            if s > best:
                best = s
                selected = [node]
            elif s == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        if selected:
            candidates = selected
    return candidates[0]
