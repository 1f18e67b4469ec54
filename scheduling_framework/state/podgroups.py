"""Which pods of each pod group the scheduler knows, and where each stands (upstream's workload manager).

A pod that names a group (``spec.workloadRef``) joins the group's state when it reaches the scheduler,
pending or bound. Plugins (GangScheduling) read the state to count a group's pods, mark pods that
passed Reserve as assumed, and share one scheduling deadline per group: the first member to wait at Permit
sets it; later members wait only for what is left of it; once it has passed, the next wait starts a new one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.api.workload import (
    POD_GROUP,
    SCHEDULING_GROUP,
    WORKLOAD,
    PodGroupObject,
    PodGroupPolicy,
    Workload,
    group_key,
    is_kubernetes_pod_group,
)
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.versions import at_least

GroupKey = tuple[str, str, str, str]

#: how long gang pods wait at Permit for their quorum before being rejected (upstream: 5 minutes)
DEFAULT_SCHEDULING_TIMEOUT_SECONDS = 300.0


class PodGroupState:
    """One pod group instance: every known pod, and which are unscheduled, assumed (past Reserve) or assigned."""

    __slots__ = ("pods", "unscheduled", "assumed", "assigned", "deadline")

    def __init__(self) -> None:
        self.pods: dict[str, Pod] = {}
        self.unscheduled: set[str] = set()
        self.assumed: set[str] = set()
        self.assigned: set[str] = set()
        self.deadline: float | None = None

    def all_pods_count(self) -> int:
        return len(self.pods)

    def unscheduled_pods(self) -> list[Pod]:
        return [self.pods[u] for u in sorted(self.unscheduled) if u in self.pods]


class PodGroupManager:
    """The pod groups of one scheduler, shared by its profiles. Thread-safe (binding threads call it)."""

    def __init__(self, clock: Callable[[], float] | None = None,
                 timeout: float = DEFAULT_SCHEDULING_TIMEOUT_SECONDS) -> None:
        import time

        self.clock: Callable[[], float] = clock if clock is not None else time.monotonic
        self.timeout = timeout
        self._groups: dict[GroupKey, PodGroupState] = {}
        self._lock = threading.RLock()

    @staticmethod
    def key_of(pod: Pod) -> GroupKey | None:
        """The pod's group: its workloadRef (1.35) or its schedulingGroup (1.36+); None for neither."""
        ref = pod.spec.workload_ref
        if ref is not None:
            return group_key(pod.namespace, ref)
        if pod.spec.scheduling_group is not None:
            return (pod.namespace, "", pod.spec.scheduling_group, "")
        return None

    def add_pod(self, pod: Pod) -> None:
        key = self.key_of(pod)
        if key is None:
            return
        with self._lock:
            g = self._groups.setdefault(key, PodGroupState())
            g.pods[pod.uid] = pod
            if pod.spec.node_name:
                g.assigned.add(pod.uid)
                g.unscheduled.discard(pod.uid)
                g.assumed.discard(pod.uid)
            elif pod.uid not in g.assumed:
                g.unscheduled.add(pod.uid)

    def assign(self, pod: Pod) -> None:
        """The pod was bound."""
        self.add_pod(pod)

    def delete_pod(self, pod: Pod) -> None:
        key = self.key_of(pod)
        if key is None:
            return
        with self._lock:
            g = self._groups.get(key)
            if g is None:
                return
            g.pods.pop(pod.uid, None)
            for s in (g.unscheduled, g.assumed, g.assigned):
                s.discard(pod.uid)
            if not g.pods:
                del self._groups[key]

    def assume(self, pod: Pod) -> None:
        key = self.key_of(pod)
        if key is None:
            return
        with self._lock:
            g = self._groups.setdefault(key, PodGroupState())
            g.pods.setdefault(pod.uid, pod)
            g.assumed.add(pod.uid)
            g.unscheduled.discard(pod.uid)

    def forget(self, pod: Pod) -> None:
        key = self.key_of(pod)
        if key is None:
            return
        with self._lock:
            g = self._groups.get(key)
            if g is None or pod.uid not in g.assumed:
                return
            g.assumed.discard(pod.uid)
            g.unscheduled.add(pod.uid)

    def get(self, key: GroupKey) -> PodGroupState | None:
        return self._groups.get(key)

    def state_of(self, pod: Pod) -> PodGroupState | None:
        key = self.key_of(pod)
        return None if key is None else self._groups.get(key)

    def counts(self, key: GroupKey) -> tuple[int, int, int]:
        """(all, assumed, assigned) pods of the group."""
        with self._lock:
            g = self._groups.get(key)
            if g is None:
                return 0, 0, 0
            return len(g.pods), len(g.assumed), len(g.assigned)

    def placement_view(self, key: GroupKey) -> tuple[tuple[str, ...], int, list[Pod]]:
        """(assumed pod uids, number of assigned pods, unscheduled pods) of the group, taken under the lock
        (binding threads assume and forget pods concurrently)."""
        with self._lock:
            g = self._groups.get(key)
            if g is None:
                return (), 0, []
            return tuple(sorted(g.assumed)), len(g.assigned), g.unscheduled_pods()

    def scheduling_timeout(self, key: GroupKey) -> float:
        """Seconds left before the group's deadline; a new deadline when there is none or it has passed."""
        with self._lock:
            g = self._groups.setdefault(key, PodGroupState())
            now = self.clock()
            if g.deadline is None or g.deadline <= now:
                g.deadline = now + self.timeout
            return g.deadline - now

    def groups(self) -> Iterable[tuple[GroupKey, PodGroupState]]:
        with self._lock:
            return list(self._groups.items())


def group_name(pod: Pod) -> str | None:
    """How outputs name a pod's group: ``namespace/workload/podGroup`` (``[replicaKey]`` when set) for a
    workloadRef, ``namespace/podGroup`` for a schedulingGroup."""
    ref = pod.spec.workload_ref
    if ref is not None:
        return f"{pod.namespace}/{ref.describe()}"
    if pod.spec.scheduling_group is not None:
        return f"{pod.namespace}/{pod.spec.scheduling_group}"
    return None


def uses_pod_group_api(release: str) -> bool:
    """Kubernetes 1.36+ groups pods with PodGroup objects and spec.schedulingGroup; 1.35 with a Workload and
    spec.workloadRef (each release knows only its own field: the API server drops the other)."""
    return at_least(release, "1.36")


def is_member(pod: Pod, v2: bool) -> bool:
    """Whether the pod names a group in the API of its release (``v2``: the 1.36+ API)."""
    return pod.spec.scheduling_group is not None if v2 else pod.spec.workload_ref is not None


def lookup_policy(pod: Pod, objects: Any, v2: bool) -> tuple[PodGroupPolicy | None, str]:
    """The policy of the pod's group, or None and the upstream status message when its Workload, pod group
    or PodGroup object is missing. ``objects``: an ObjectStore (``get(kind, namespace, name, group=...)``)."""
    if v2:
        name = pod.spec.scheduling_group
        assert name is not None
        # scheduler-plugins' PodGroup of the same name is another object, kept beside it
        obj = objects.get(POD_GROUP, pod.namespace, name, group=SCHEDULING_GROUP)
        pg = None
        if obj is not None and is_kubernetes_pod_group(obj.raw):
            try:
                pg = PodGroupObject.from_dict(obj.raw)
            except SchedulingFrameworkError:
                pg = None  # refused at load already; a bad object stored directly counts as absent
        if pg is None:
            return None, f'waiting for pods\'s pod group "{name}" to appear in scheduling queue'
        return pg.policy, ""
    ref = pod.spec.workload_ref
    assert ref is not None
    obj = objects.get(WORKLOAD, pod.namespace, ref.name)
    wl = None
    if obj is not None:
        try:
            wl = Workload.from_dict(obj.raw)
        except SchedulingFrameworkError:
            wl = None
    if wl is None:
        return None, f'waiting for pods\'s workload "{ref.name}" to appear in scheduling queue'
    group = wl.pod_group(ref.pod_group)
    if group is None:
        return None, f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{wl.name}"'
    return group.policy, ""


# ------------------------------------------------------------------------------------------- input checks
WARN_GATES_OFF = ("pods of pod groups (spec.workloadRef / spec.schedulingGroup) are scheduled one by one, not as "
                  "gangs: the GenericWorkload and GangScheduling feature gates are off (Kubernetes 1.35+: "
                  "--feature-gates GenericWorkload=true,GangScheduling=true)")
#: 1.37 folded the GangScheduling gate into GenericWorkload
WARN_GATE_OFF_137 = ("pods of pod groups (spec.workloadRef / spec.schedulingGroup) are scheduled one by one, not as "
                     "gangs: the GenericWorkload feature gate is off (Kubernetes 1.37+: --feature-gates "
                     "GenericWorkload=true)")
WARN_NO_WORKLOAD = ("pod(s) whose spec.workloadRef.name names a Workload the input does not have (they wait in "
                    "the queue, as kube-scheduler keeps them)")
WARN_NO_POD_GROUP = ("pod(s) whose spec.workloadRef.podGroup names a pod group their Workload does not have (they "
                     "wait in the queue, as kube-scheduler keeps them)")
WARN_NO_POD_GROUP_OBJECT = ("pod(s) whose spec.schedulingGroup.podGroupName names a PodGroup the input does not have "
                            "(they wait in the queue, as kube-scheduler keeps them)")
WARN_TOO_FEW = ("gang pod group(s) with fewer pods than the gang policy's minCount (none of their pods can be "
                "scheduled until more exist)")
WARN_OTHER_API = ("pod(s) use {field}, which Kubernetes {release} does not have ({which}): they are scheduled one "
                  "by one, not as gangs")
WARN_MIXED_SCHEDULERS = ("gang pod group(s) whose pods ask for different schedulers (spec.schedulerName): a "
                         "scheduler counts only the pods it serves, so the gang may never form")


def workload_warnings(pods: Iterable[Pod], objects: Any, warnings: Any, *, enabled: bool,
                      release: str = "1.35") -> None:
    """Report what the pod-group input (Workload API) gets wrong, naming the object and field, into
    ``warnings`` (a :class:`~scheduling_framework.warning_list.Warnings`). Scheduling is not affected: each pod
    gets the status kube-scheduler would give it. ``objects``: an ObjectStore."""
    v2 = uses_pod_group_api(release)
    members: dict[str, list[Pod]] = {}
    policies: dict[str, Any] = {}
    any_member = False
    other_api = 0
    for p in pods:
        if not is_member(p, v2):
            if is_member(p, not v2):
                other_api += 1
            continue
        any_member = True
        if not enabled:
            continue
        policy, missing = lookup_policy(p, objects, v2)
        if policy is None:
            if v2:
                warnings.add_item(WARN_NO_POD_GROUP_OBJECT,
                                  f'{p.key} (spec.schedulingGroup.podGroupName "{p.spec.scheduling_group}")')
            elif missing.startswith("waiting for pods's workload"):
                ref = p.spec.workload_ref
                assert ref is not None
                warnings.add_item(WARN_NO_WORKLOAD, f'{p.key} (spec.workloadRef.name "{ref.name}")')
            else:
                ref = p.spec.workload_ref
                assert ref is not None
                warnings.add_item(WARN_NO_POD_GROUP, f'{p.key} (spec.workloadRef.podGroup "{ref.pod_group}" of '
                                                     f'Workload {p.namespace}/{ref.name})')
            continue
        name = group_name(p)
        assert name is not None
        members.setdefault(name, []).append(p)
        policies[name] = policy
    if other_api and at_least(release, "1.35"):
        field, which = (("spec.workloadRef", "1.36 replaced it with spec.schedulingGroup and PodGroup objects")
                        if v2 else ("spec.schedulingGroup", "it came in 1.36"))
        warnings.add(WARN_OTHER_API.format(field=field, release=release, which=which))
    if any_member and not enabled:
        warnings.add(WARN_GATE_OFF_137 if at_least(release, "1.37") else WARN_GATES_OFF)
        return
    for name, ps in sorted(members.items()):
        policy = policies[name]
        if not policy.is_gang:
            continue
        if len(ps) < policy.min_count:
            warnings.add_item(WARN_TOO_FEW, f"{name}: {len(ps)} pod(s), minCount {policy.min_count}")
        schedulers = sorted({p.spec.scheduler_name for p in ps if not p.spec.node_name})
        if len(schedulers) > 1:
            warnings.add_item(WARN_MIXED_SCHEDULERS, f"{name}: " + ", ".join(
                f'"{s}" ({sum(1 for p in ps if p.spec.scheduler_name == s and not p.spec.node_name)})'
                for s in schedulers))


# ------------------------------------------------------------------------------------------- outputs
#: how a pod-group scheduling cycle (1.36+) fails the members that found a node when the group as a whole did not
GROUP_UNSCHEDULABLE = "pod group is unschedulable, "


def summarize_group(name: str, policy: Any, members: Iterable[Any], enabled: bool) -> dict[str, Any]:
    """The JSON entry of one pod group (``podGroups`` in the outputs) from its members' results (objects with
    ``pod``, ``outcome``, ``node``, ``message`` and ``plugin``, as the Scheduler's PodResult)."""
    ms = sorted(members, key=lambda r: r.pod)
    placed = [r for r in ms if r.outcome == "Scheduled"]
    entry: dict[str, Any] = {
        "podGroup": name,
        "policy": None if policy is None else ("gang" if policy.is_gang else "basic"),
        "minCount": policy.min_count if policy is not None and policy.is_gang else None,
        "pods": [r.pod for r in ms],
        "scheduled": len(placed),
    }
    if len(placed) == len(ms):
        entry["outcome"] = "Scheduled"
        entry["message"] = ""
        return entry
    gated = [r for r in ms if r.outcome != "Scheduled" and r.plugin == "GangScheduling"
             and "rejected due to timeout" not in r.message and not r.message.startswith(GROUP_UNSCHEDULABLE)]
    if gated:
        r = gated[0]
        msg = r.message
        if policy is not None and policy.is_gang and "minCount pods from a gang to appear" in msg:
            msg += f" ({len(ms)} pod(s) of the group exist, minCount {policy.min_count})"
        entry["outcome"] = "Waiting"
        entry["message"] = msg
        return entry
    entry["outcome"] = "Unschedulable"
    if policy is None or not policy.is_gang or not enabled:
        entry["message"] = f"{len(placed)} of {len(ms)} pods scheduled (pods placed one by one)"
        return entry
    timed_out = [r for r in ms if "rejected due to timeout" in r.message and r.plugin == "GangScheduling"]
    in_cycle = [r for r in ms if r.outcome != "Scheduled" and r.message.startswith(GROUP_UNSCHEDULABLE)]
    others = [r for r in ms if r.outcome != "Scheduled" and r not in timed_out and r not in in_cycle]
    parts = [f"minCount {policy.min_count} not reached, no pod of the gang was bound"]
    if timed_out:
        wait = timed_out[0].message.split("after waiting ", 1)[-1].split(" ", 1)[0]
        parts.append(f"{len(timed_out)} pod(s) found a node and waited at Permit until the {wait} timeout")
    if in_cycle:
        parts.append(f"{len(in_cycle)} pod(s) found a node in the pod group's scheduling cycle")
    for r in others[:3]:
        parts.append(f"{r.pod} found no node: {r.message}")
    if len(others) > 3:
        parts.append(f"and {len(others) - 3} more pod(s) found no node")
    entry["message"] = "; ".join(parts)
    return entry
