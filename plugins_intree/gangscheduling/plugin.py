"""GangScheduling: all-or-nothing placement of the pods of a pod group whose policy is ``gang``: a Workload's
pod group joined by ``spec.workloadRef`` (Kubernetes 1.35), or a PodGroup object joined by
``spec.schedulingGroup`` (1.36+).

- PreEnqueue keeps a gang pod out of the active queue until its Workload (pod group) or PodGroup exists, and
  the scheduler knows at least ``minCount`` pods of the group (pending or bound);
- Reserve marks the pod assumed in the group's state, Unreserve takes it back (Kubernetes 1.35 only: from 1.36
  the plugin has no Reserve point and the scheduler's cache counts assumed pods);
- Permit holds the pod while fewer than ``minCount`` pods of the group are assumed or bound, with the time
  left of the group's scheduling deadline (5 minutes from the first member's wait) as its timeout; the pod
  that completes the quorum allows every member waiting at Permit. Its message is release-specific.
- :func:`placement_feasible` is the 1.37 PlacementFeasible check of a pod-group scheduling cycle (a point
  upstream does not expose in the configuration, so ``config view`` does not list it).

Pods of no group and pods of a ``basic`` group pass every point untouched.
"""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.features import features_of
from scheduling_framework.state.podgroups import PodGroupManager, is_member, lookup_policy, uses_pod_group_api
from scheduling_framework.status import Code, Status

NAME = "GangScheduling"

MSG_WAIT_QUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"
#: Permit's wait message of Kubernetes 1.36 and later
MSG_WAIT_PERMIT = "waiting for minCount pods from a gang to be scheduled"
#: Permit's wait message of Kubernetes 1.35
MSG_WAIT_PERMIT_135 = "waiting for minCount pods from a gang to be waiting on permit"


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> Status | None:
    """Upstream's (1.37) GangScheduling PlacementFeasible verdict for a gang of ``min_count`` with ``scheduled``
    pods assumed or bound and ``remaining`` pods not evaluated yet in the pod-group cycle: Unschedulable when
    the quorum can no longer be reached, Wait while it may still be, success (None) once it is."""
    if remaining + scheduled < min_count:
        return Status(Code.UNSCHEDULABLE, f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, "
                                          f"{remaining} remaining", plugin=NAME)
    if scheduled < min_count:
        return Status(Code.WAIT, f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, "
                                 f"{remaining} remaining", plugin=NAME)
    return None


class GangScheduling:
    """PreEnqueue, Reserve, Permit."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        gates = features_of(handle)
        # Without GenericWorkload the API server drops the pod's group field: a configuration that enables the
        # plugin anyway sees no pod group, and the plugin passes every pod.
        self.active = gates.enabled("GenericWorkload")
        # 1.36+: PodGroup objects and spec.schedulingGroup; 1.35: a Workload and spec.workloadRef.
        self.v2 = uses_pod_group_api(gates.release)
        self.wait_message = MSG_WAIT_PERMIT if self.v2 else MSG_WAIT_PERMIT_135

    # helpers ---------------------------------------------------------------------------------
    @property
    def _groups(self) -> PodGroupManager:
        groups: PodGroupManager = self.handle.pod_groups
        return groups

    def _member(self, pod: Pod) -> bool:
        return self.active and is_member(pod, self.v2)

    # extension points ------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self._member(pod):
            return None
        policy, missing = lookup_policy(pod, self.handle.objects, self.v2)
        if policy is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, missing)
        if not policy.is_gang:
            return None
        key = PodGroupManager.key_of(pod)
        assert key is not None
        all_pods, _, _ = self._groups.counts(key)
        if all_pods < policy.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAIT_QUEUE)
        return None

    # Reserve/Unreserve run at 1.35 only (POINTS_UNTIL); the Scheduler also keeps the group's assumed pods (as
    # upstream's cache does from 1.36 on), and the two bookkeepings agree.
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if self._member(pod):
            self._groups.assume(pod)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if self._member(pod):
            self._groups.forget(pod)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        if not self._member(pod):
            return None, 0
        policy, missing = lookup_policy(pod, self.handle.objects, self.v2)
        if policy is None:
            return Status(Code.ERROR, self._gone_message(pod, missing)), 0
        if not policy.is_gang:
            return None, 0
        groups = self._groups
        key = PodGroupManager.key_of(pod)
        assert key is not None
        assumed, assigned, unscheduled = groups.placement_view(key)
        if len(assumed) + assigned < policy.min_count:  # assumed and assigned pods are disjoint
            if unscheduled:
                self.handle.activate(unscheduled)
            return Status(Code.WAIT, self.wait_message), groups.scheduling_timeout(key)
        # Quorum: every member waiting at Permit may go on to bind.
        for uid in assumed:
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None, 0

    @staticmethod
    def _gone_message(pod: Pod, missing: str) -> str:
        """Permit's error when the pod's group object went away after PreEnqueue (upstream's lister error)."""
        if pod.spec.scheduling_group is not None and missing.startswith("waiting"):
            name = pod.spec.scheduling_group
            return f'failed to get podGroup {pod.namespace}/{name}: podgroup.scheduling.k8s.io "{name}" not found'
        ref = pod.spec.workload_ref
        if ref is not None and missing.startswith("waiting"):
            return (f"failed to get workload {pod.namespace}/{ref.name}: "
                    f'workload.scheduling.k8s.io "{ref.name}" not found')
        return missing
