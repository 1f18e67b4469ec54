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
from scheduling_framework.api.workload import group_key
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
        ref = pod.spec.workload_ref
        return None if ref is None else group_key(pod.namespace, ref)

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
    """``namespace/workload/podGroup`` (``[replicaKey]`` when set): how outputs name a pod's group."""
    ref = pod.spec.workload_ref
    return None if ref is None else f"{pod.namespace}/{ref.describe()}"


# ------------------------------------------------------------------------------------------- input checks
WARN_GATES_OFF = ("pods with spec.workloadRef are scheduled one by one, not as gangs: the GenericWorkload and "
                  "GangScheduling feature gates are off (Kubernetes 1.35+: --feature-gates "
                  "GenericWorkload=true,GangScheduling=true)")
WARN_NO_WORKLOAD = ("pod(s) whose spec.workloadRef.name names a Workload the input does not have (they wait in "
                    "the queue, as kube-scheduler keeps them)")
WARN_NO_POD_GROUP = ("pod(s) whose spec.workloadRef.podGroup names a pod group their Workload does not have (they "
                     "wait in the queue, as kube-scheduler keeps them)")
WARN_TOO_FEW = ("gang pod group(s) with fewer pods than spec.podGroups[].policy.gang.minCount (none of their pods "
                "can be scheduled until more exist)")
WARN_NEWER_API = ("Kubernetes {release} schedules gangs from PodGroup objects (scheduling.k8s.io/v1alpha2 and "
                  "later) and the Pod's spec.schedulingGroup; this library reads the 1.35 API (Workload "
                  "scheduling.k8s.io/v1alpha1 and spec.workloadRef) in every release (docs/differences.md)")
WARN_MIXED_SCHEDULERS = ("gang pod group(s) whose pods ask for different schedulers (spec.schedulerName): a "
                         "scheduler counts only the pods it serves, so the gang may never form")


def workload_warnings(pods: Iterable[Pod], workloads: Iterable[Any], warnings: Any, *, enabled: bool,
                      release: str = "1.35") -> None:
    """Report what the Workload API input gets wrong, naming the object and field, into ``warnings``
    (a :class:`~scheduling_framework.warning_list.Warnings`). Scheduling is not affected: each pod gets the
    status kube-scheduler would give it."""
    from scheduling_framework.api.workload import Workload

    by_key: dict[tuple[str, str], Workload] = {}
    for obj in workloads:
        try:
            parsed = obj if isinstance(obj, Workload) else Workload.from_dict(obj.raw)
        except SchedulingFrameworkError:
            continue  # refused at load already
        by_key[(parsed.namespace, parsed.name)] = parsed
    members: dict[str, list[Pod]] = {}
    policies: dict[str, Any] = {}
    any_ref = False
    for p in pods:
        ref = p.spec.workload_ref
        if ref is None:
            continue
        any_ref = True
        if not enabled:
            continue
        wl = by_key.get((p.namespace, ref.name))
        if wl is None:
            warnings.add_item(WARN_NO_WORKLOAD, f'{p.key} (spec.workloadRef.name "{ref.name}")')
            continue
        group = wl.pod_group(ref.pod_group)
        if group is None:
            warnings.add_item(WARN_NO_POD_GROUP, f'{p.key} (spec.workloadRef.podGroup "{ref.pod_group}" of '
                                                 f'Workload {wl.namespace}/{wl.name})')
            continue
        name = group_name(p)
        assert name is not None
        members.setdefault(name, []).append(p)
        policies[name] = group.policy
    if any_ref and not enabled:
        warnings.add(WARN_GATES_OFF)
        return
    if any_ref and at_least(release, "1.36"):
        warnings.add(WARN_NEWER_API.format(release=release))
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
             and "rejected due to timeout" not in r.message]
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
    others = [r for r in ms if r.outcome != "Scheduled" and r not in timed_out]
    parts = [f"minCount {policy.min_count} not reached, no pod of the gang was bound"]
    if timed_out:
        wait = timed_out[0].message.split("after waiting ", 1)[-1].split(" ", 1)[0]
        parts.append(f"{len(timed_out)} pod(s) found a node and waited at Permit until the {wait} timeout")
    for r in others[:3]:
        parts.append(f"{r.pod} found no node: {r.message}")
    if len(others) > 3:
        parts.append(f"and {len(others) - 3} more pod(s) found no node")
    entry["message"] = "; ".join(parts)
    return entry
