"""GangScheduling: all-or-nothing placement of the pods of a Workload pod group whose policy is ``gang``.

- PreEnqueue keeps a gang pod out of the active queue until its Workload exists, names its pod group, and
  the scheduler knows at least ``minCount`` pods of the group (pending or bound);
- Reserve marks the pod assumed in the group's state, Unreserve takes it back;
- Permit holds the pod while fewer than ``minCount`` pods of the group are assumed or bound, with the time
  left of the group's scheduling deadline (5 minutes from the first member's wait) as its timeout; the pod
  that completes the quorum allows every member waiting at Permit.

Pods without ``spec.workloadRef`` and pods of a ``basic`` group pass every point untouched.
"""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.workload import WORKLOAD, PodGroupPolicy, Workload
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.features import features_of
from scheduling_framework.podgroups import PodGroupManager
from scheduling_framework.status import Code, Status

NAME = "GangScheduling"

MSG_WAIT_QUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_WAIT_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"


class GangScheduling:
    """PreEnqueue, Reserve, Permit."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        # Without GenericWorkload the API server drops spec.workloadRef: a configuration that enables the
        # plugin anyway sees no pod group, and the plugin passes every pod.
        self.active = features_of(handle).enabled("GenericWorkload")
        # Workloads parsed once per stored manifest (the store keeps KubeObjects).
        self._parsed: dict[int, tuple[KubeObject, Workload | None]] = {}

    # helpers ---------------------------------------------------------------------------------
    @property
    def _groups(self) -> PodGroupManager:
        groups: PodGroupManager = self.handle.pod_groups
        return groups

    def _workload(self, namespace: str, name: str) -> Workload | None:
        obj = self.handle.objects.get(WORKLOAD, namespace, name)
        if obj is None:
            return None
        hit = self._parsed.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        try:
            wl: Workload | None = Workload.from_dict(obj.raw)
        except SchedulingFrameworkError:
            wl = None  # refused at load already; a bad object stored directly counts as absent
        self._parsed[id(obj)] = (obj, wl)
        return wl

    def _policy(self, pod: Pod) -> tuple[PodGroupPolicy | None, Status | None]:
        """The pod's group policy, or the status for a pod whose Workload or pod group is missing."""
        ref = pod.spec.workload_ref
        assert ref is not None
        wl = self._workload(pod.namespace, ref.name)
        if wl is None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                f'waiting for pods\'s workload "{ref.name}" to appear in scheduling queue')
        group = wl.pod_group(ref.pod_group)
        if group is None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{wl.name}"')
        return group.policy, None

    # extension points ------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if pod.spec.workload_ref is None or not self.active:
            return None
        policy, st = self._policy(pod)
        if st is not None:
            return st
        assert policy is not None
        if not policy.is_gang:
            return None
        key = PodGroupManager.key_of(pod)
        assert key is not None
        all_pods, _, _ = self._groups.counts(key)
        if all_pods < policy.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAIT_QUEUE)
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.spec.workload_ref is not None and self.active:
            self._groups.assume(pod)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if pod.spec.workload_ref is not None:
            self._groups.forget(pod)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        ref = pod.spec.workload_ref
        if ref is None or not self.active:
            return None, 0
        wl = self._workload(pod.namespace, ref.name)
        if wl is None:
            return Status(Code.ERROR, f"failed to get workload {pod.namespace}/{ref.name}: "
                                      f'workload.scheduling.k8s.io "{ref.name}" not found'), 0
        group = wl.pod_group(ref.pod_group)
        if group is None:
            return Status(Code.ERROR, f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{wl.name}"'), 0
        if not group.policy.is_gang:
            return None, 0
        groups = self._groups
        key = PodGroupManager.key_of(pod)
        assert key is not None
        g = groups.get(key)
        assumed = set(g.assumed) if g is not None else set()
        placed = len(assumed | (g.assigned if g is not None else set()))
        if placed < group.policy.min_count:
            if g is not None:
                self.handle.activate(g.unscheduled_pods())
            return Status(Code.WAIT, MSG_WAIT_PERMIT), groups.scheduling_timeout(key)
        # Quorum: every member waiting at Permit may go on to bind.
        for uid in sorted(assumed):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None, 0
