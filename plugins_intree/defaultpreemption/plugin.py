"""DefaultPreemption: the PostFilter plugin that makes room for a pod no node fits by evicting
lower-priority pods (upstream pkg/scheduler/framework/plugins/defaultpreemption)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from plugins_intree.defaultpreemption.preemption import (
    Candidate,
    Evaluator,
    PodDisruptionBudget,
    Victims,
    more_important_pod,
    sort_by_importance,
)
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import DefaultPreemptionArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError
from scheduling_framework.interfaces import PostFilterResult
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.runtime.signatures import defining_class
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.status import Code, Status

NAME = "DefaultPreemption"
PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
#: The dry run removes a node's lower-priority pods as one change when no PreFilter extension watches the removals
#: (False: one by one, the plain twin; tests/test_perf_equivalence.py::test_preemption_bulk_removal_equals_plain).
BULK_REMOVAL = True
#: ... and shares one CycleState copy among the nodes when nothing changes it (False: a copy per node).
SHARED_DRY_RUN_STATE = True
#: ... and runs the cycle's Filter plugins from one list per node (False: run_filter_plugins_with_nominated_pods).
FILTER_PLAN = True


#: (node_info, victim, preemptor) -> may the victim be preempted, beyond having lower priority.
IsEligiblePodFunc = Callable[[NodeInfo, PodInfo, Pod], bool]
#: (pod1, pod2) -> is pod1 more important (reprieved before pod2).
MoreImportantPodFunc = Callable[[Pod, Pod], bool]


def _always_eligible(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    return True


class DefaultPreemption:
    """PostFilter. ``is_eligible_pod`` and ``more_important_pod`` may be replaced to customise who can be
    evicted and in which order victims are reprieved (as upstream's exported fields); ``offset_rand(n)``
    picks the node to start dry runs from, in [0, n)."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs | None = None, handle: Any = None) -> None:
        self.args = args if args is not None else DefaultPreemptionArgs()
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.handle = handle
        # Replaceable source of the dry-run start offset (upstream's getOffsetRand); None = the handle's
        # ``rng`` (the scheduler's seeded Random, read at call time), else a Random seeded with 0.
        self.offset_rand: Callable[[int], int] | None = None
        self._fallback_rng = random.Random(0)
        self.is_eligible_pod: IsEligiblePodFunc = _always_eligible
        self.more_important_pod: MoreImportantPodFunc = more_important_pod
        self.evaluator = Evaluator(NAME, handle, self)

    # PreEnqueue ----------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Admits every pod: upstream's only holds back a pod whose asynchronous preemption is still
        evicting victims, and preemption here completes within the cycle."""
        return None

    # PostFilter ----------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: Mapping[str, Status | None]
                    ) -> tuple[PostFilterResult | None, Status]:
        result, st = self.evaluator.preempt(state, pod, filtered_node_status_map)
        msg = st.message()
        if msg:
            return result, Status(st.code, "preemption: " + msg, error=st.error)
        return result, st

    # preemption.Interface ------------------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """max(num_nodes * percentage / 100, absolute), never more than num_nodes."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        if n < self.args.min_candidate_nodes_absolute:
            n = self.args.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random start offset in [0, num_nodes) and the number of candidates to look for."""
        if self.offset_rand is not None:
            offset = self.offset_rand(num_nodes)
        else:
            rng = getattr(self.handle, "rng", None)
            offset = (rng if isinstance(rng, random.Random) else self._fallback_rng).randrange(num_nodes)
        return offset, self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[Callable[[str], float]] | None:
        return None  # the evaluator's default order

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        """False for preemptionPolicy Never, and while a victim of an earlier preemption by this pod is still
        terminating on its nominated node (unless that node has become unresolvable)."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, MSG_PREEMPT_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            node_info = self._node_info(nominated)
            if node_info is not None:
                for pi in node_info.pods:
                    if self._is_preemption_allowed(node_info, pi, pod) and pod_terminating_by_preemption(pi.pod):
                        return False, MSG_TERMINATING_ON_NOMINATED
        return True, ""

    def dry_run_state_shareable(self, state: CycleState) -> bool:
        """Whether the dry run on every node may share one copy of ``state``: this class's
        :meth:`select_victims_on_node` changes the CycleState only through the PreFilter extensions, so when
        none runs for the pod (and a subclass did not replace the method) the copy stays as it was made, and
        Filter reads it as it reads the shared state of the main pass. Pinned by
        tests/test_perf_equivalence.py::test_preemption_bulk_removal_equals_plain."""
        if not SHARED_DRY_RUN_STATE or defining_class(type(self), "select_victims_on_node") is not DefaultPreemption:
            return False
        active = getattr(self.handle, "pre_filter_extensions_active", None)
        return callable(active) and not active(state)

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        """The fewest pods to evict from ``node_info`` (a copy) so ``pod`` fits: remove every lower-priority
        pod, check the pod fits, then add pods back from the most important down (PDB-violating ones
        first), keeping each that still lets the pod fit. Returns (victims, PDB-violating victims, status)."""
        fh = self.handle
        if self.is_eligible_pod is _always_eligible and type(self)._is_preemption_allowed is _PREEMPTION_ALLOWED:
            prio = pod.priority  # _is_preemption_allowed without a call per pod
            potential: list[PodInfo] = [pi for pi in node_info.pods if pi.pod.priority < prio]
        else:
            potential = [pi for pi in node_info.pods if self._is_preemption_allowed(node_info, pi, pod)]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NO_VICTIMS)
        active = getattr(fh, "pre_filter_extensions_active", None)
        # No AddPod / RemovePod runs for this pod: nothing to call after each change of the copy, and the
        # lower-priority pods go as one change (the calls would each visit no plugin).
        quiet = BULK_REMOVAL and callable(active) and not active(state)
        if quiet:
            node_info.remove_pods(potential)
        else:
            for pi in potential:
                node_info.remove_pod(pi)
                st = fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
                if st is not None and not st.is_success():
                    return [], 0, _as_error(st)
        planned = getattr(fh, "run_filter_plan_with_nominated_pods", None) if FILTER_PLAN else None
        if planned is not None and type(fh).run_filter_plugins is _FRAMEWORK_RUN_FILTER_PLUGINS and (
                type(fh).run_filter_plugins_with_nominated_pods is _FRAMEWORK_RUN_WITH_NOMINATED):
            # the cycle's Filter plugins listed once for the node's many runs
            plan = fh.filter_plugins_for(state)

            def run_filters(s: CycleState, p: Pod, ni: NodeInfo) -> Status | None:
                return planned(plan, s, p, ni)  # type: ignore[no-any-return]
        else:
            run_filters = fh.run_filter_plugins_with_nominated_pods
        st = run_filters(state, pod, node_info)
        if st is not None and not st.is_success():
            return [], 0, st

        sort_by_importance(potential, self.more_important_pod, lambda pi: pi.pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0
        for group, counts in ((violating, True), (non_violating, False)):
            for pi in group:
                node_info.add_pod(pi)
                if not quiet:
                    st = fh.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
                    if st is not None and not st.is_success():
                        return [], 0, _as_error(st)
                fits = run_filters(state, pod, node_info)
                if fits is None or fits.is_success():
                    continue
                node_info.remove_pod(pi)
                if not quiet:
                    st = fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
                    if st is not None and not st.is_success():
                        return [], 0, _as_error(st)
                victims.append(pi)
                if counts:
                    num_violating += 1
        if violating and non_violating:
            sort_by_importance(victims, self.more_important_pod, lambda pi: pi.pod)
        return [pi.pod for pi in victims], num_violating, Status(Code.SUCCESS)

    # helpers -------------------------------------------------------------------------------------
    def _node_info(self, name: str) -> NodeInfo | None:
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is None:
            return None
        infos = getattr(snapshot, "node_info_map", None)
        if infos is not None:
            ni: NodeInfo | None = infos.get(name)
            return ni
        try:
            got: NodeInfo = snapshot.get(name)
        except Exception:  # a lister that does not know the node
            return None
        return got

    def _is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return victim.pod.priority < preemptor.priority and self.is_eligible_pod(node_info, victim, preemptor)


_PREEMPTION_ALLOWED = DefaultPreemption._is_preemption_allowed
_FRAMEWORK_RUN_FILTER_PLUGINS = Framework.run_filter_plugins
_FRAMEWORK_RUN_WITH_NOMINATED = Framework.run_filter_plugins_with_nominated_pods


def _as_error(st: Status) -> Status:
    return Status(Code.ERROR, st.message(), plugin=st.plugin, error=st.error)


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Deleting, with a DisruptionTarget=True condition whose reason is PreemptionByScheduler."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for c in pod.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return c.status == "True" and c.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
                                   ) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (order kept) into those whose eviction would exceed a matching PDB's allowed
    disruptions and the rest. Pods already in a PDB's disruptedPods do not consume its budget."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        if pod.metadata.labels:
            for i, pdb in enumerate(pdbs):
                if not pdb.matches(pod):
                    continue
                if pod.metadata.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating
