"""The reference scheduler: queue -> scheduling cycle -> binding cycle, over an in-memory cluster.

An embedding application feeds it events (``add_node``, ``add_pod``, ...) and may pass its own binder;
by default binding writes the pod's node into the in-memory cluster. ``run()`` schedules until nothing
is left to try, on a virtual clock (backoffs pass instantly), which is what a simulation wants.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from scheduling_framework.api.coerce import coerce_node, coerce_object, coerce_pod, iter_objects
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resize import RequestRules
from scheduling_framework.api.resource import UNMODELLED_FIELDS, has_device_taints, unmodelled_fields
from scheduling_framework.api.workload import POD_GROUP, WORKLOAD, is_kubernetes_pod_group
from scheduling_framework.config import KubeSchedulerConfiguration, expand_profile, resolve_config
from scheduling_framework.config.defaults import GANG_SCHEDULING
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.dra.claims import (
    DEVICE_TAINT_RULE,
    POD_CLAIM_NAME_ANNOTATION,
    RESOURCE_CLAIM,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_SLICE,
    claim_summaries,
    extended_claim_name,
    generate_claims,
    has_resource_claims,
    is_for_pod,
    needs_generated_claims,
    release_pod_claims,
)
from scheduling_framework.errors import ConfigError, PluginError, SchedulerBusyError, SchedulingFrameworkError
from scheduling_framework.extender.client import HTTPExtender, build_extenders, ignored_resources
from scheduling_framework.extender.config import apply_ignored_resources
from scheduling_framework.features import UnreproducedInput, taint_rules_enabled
from scheduling_framework.ingest.admission import (
    ADMISSION_KINDS,
    WARN_BOUND_REFUSED,
    WARN_REFUSED,
    Admission,
    refused_item,
)
from scheduling_framework.ingest.overcommit import report_overcommitted
from scheduling_framework.interfaces import QueuedPodInfo
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.report.notebook import RunResults
from scheduling_framework.runtime.algorithm import Algorithm, CycleError, FitError, ScheduleResult, explain_scores
from scheduling_framework.runtime.framework import Framework, Nominator
from scheduling_framework.state.cache import Cache
from scheduling_framework.state.podgroups import (
    GROUP_UNSCHEDULABLE,
    PodGroupManager,
    group_name,
    is_member,
    lookup_policy,
    summarize_group,
    uses_pod_group_api,
    workload_warnings,
)
from scheduling_framework.state.queue import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    NODE_ADD,
    NODE_DELETE,
    NODE_UPDATE,
    OBJECT_CHANGE,
    UNSCHEDULED_POD_UPDATE,
    SchedulingQueue,
)
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from scheduling_framework.versions import at_least
from scheduling_framework.warning_list import Warnings

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"
PREEMPTED = "Preempted"
SKIPPED = "Skipped"  # never attempted: being deleted, for another scheduler, refused by admission

# How a pod's latest attempt failed. Forgetting an assumed pod after a failed binding frees its resources, which
# can only resolve a Filter verdict: pods that failed in their own binding cycle or with an error wait for
# another event (or their bounded error retries), so two pods whose bindings keep failing cannot requeue each
# other forever.
_FAILED_FILTER = "filter"
_FAILED_BINDING = "binding"
_FAILED_ERROR = "error"

# Warning groups (see warning_list.Warnings.add_item); the items are pod keys.
WARN_TERMINATING = "skipped pending pod(s) being deleted (metadata.deletionTimestamp is set)"
WARN_FINISHED = "ignored pending pod(s) that have finished (status.phase Succeeded or Failed)"
WARN_ORPHANS = "ignored bound pod(s) whose node is not in the input (they take no room)"
WARN_UNMODELLED = ("ignored {field}: not implemented here (feature gate {gate}); upstream's scheduler reads it when "
                   "the gate is on")
WARN_TAINT_RULE_CEL = ("ignored DeviceTaintRule spec.deviceSelector.deviceClassName / spec.deviceSelector.selectors: "
                       "the API has neither from Kubernetes 1.35 (the API server drops them), so the rule selects by "
                       "driver, pool and device only, as upstream's scheduler does in {release}")
WARN_DEVICE_TAINTS_OFF = ("ignored device taints (ResourceSlice spec.devices[].taints): the DRADeviceTaints feature "
                          "gate is off in Kubernetes {release} (--feature-gates DRADeviceTaints=true applies them)")
WARN_TAINT_RULES_OFF = ("ignored DeviceTaintRule(s): the DRADeviceTaintRules feature gate is off in Kubernetes "
                        "{release} (--feature-gates DRADeviceTaintRules=true applies them)")


def decides_from_state(plugin: Any) -> bool:
    """Whether ``plugin``'s verdicts are a function of what the scheduler holds (cluster, objects, nominations,
    the pod, the cycle's order of nodes): its ``deterministic`` attribute when it has one, else True for the
    in-tree plugins and False for others, which may ask a service or read the time (a retry may then help).
    A search bounded by wall time (DynamicResources' filterTimeout) counts as deterministic: the same search
    on the same state times out again."""
    flag = getattr(plugin, "deterministic", None)
    if flag is not None:
        return bool(flag)
    return type(plugin).__module__.startswith("plugins_intree.")


def warn_other_scheduler(name: str) -> str:
    return f'skipped pending pod(s) for schedulerName "{name}", which no profile of the configuration serves'


class VirtualClock:
    """A clock that only moves when told to (simulations never sleep through backoffs)."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance_to(self, t: float) -> None:
        self.now = max(self.now, t)


class PodResult:
    """What happened to one pod: its latest outcome, and the explanation of the cycle that decided it."""

    __slots__ = ("pod", "scheduler_name", "outcome", "node", "nominated_node", "victims", "message",
                 "filter", "scores", "total_scores", "attempts", "plugin", "claims", "unallocated_claims",
                 "pod_group")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod.key
        self.scheduler_name = pod.spec.scheduler_name
        self.outcome = UNSCHEDULABLE
        self.node: str | None = None
        self.nominated_node: str | None = None
        self.victims: list[str] = []
        self.message = ""
        self.filter: dict[str, dict[str, Any]] | None = None
        self.scores: dict[str, dict[str, dict[str, int]]] | None = None
        self.total_scores: dict[str, int] | None = None
        self.attempts = 0
        self.plugin = ""
        # DRA: the pod's claims and the devices allocated to them (None: the pod references no claim)
        self.claims: list[dict[str, Any]] | None = None
        # names of the pod's claims that had no allocation when the pod was queued (the ones DRA had to allocate)
        self.unallocated_claims: list[str] = []
        # the pod's group: "namespace/workload/podGroup" ("[replicaKey]" when set) for spec.workloadRef (1.35),
        # "namespace/podGroup" for spec.schedulingGroup (1.36+)
        self.pod_group: str | None = None

    def __repr__(self) -> str:
        where = f" on {self.node}" if self.node else ""
        nominated = f" (nominated {self.nominated_node})" if self.nominated_node and not self.node else ""
        why = f": {self.message}" if self.message and self.outcome != SCHEDULED else ""
        return f"PodResult({self.pod} {self.outcome}{where}{nominated}{why})"

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"pod": self.pod, "schedulerName": self.scheduler_name, "outcome": self.outcome,
                             "node": self.node, "nominatedNode": self.nominated_node, "victims": list(self.victims),
                             "message": self.message}
        if self.claims is not None:
            d["claims"] = [dict(c) for c in self.claims]
        if self.pod_group is not None:
            d["podGroup"] = self.pod_group
        if explain:
            d["filter"] = self.filter or {}
            d["scores"] = self.scores or {}
            d["totalScores"] = self.total_scores or {}
        return d


class _InMemoryBinder:
    """DefaultBinder's target: the application's binder first (if any), then the in-memory cluster."""

    def __init__(self, scheduler: Scheduler, app_binder: Any) -> None:
        self.scheduler = scheduler
        self.app_binder = app_binder

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.app_binder is not None:
            fn = getattr(self.app_binder, "bind", self.app_binder)
            fn(pod, node_name)
        self.scheduler._bound(pod, node_name)


class _Cycle:
    """What a scheduling cycle holds that must be undone if it fails unexpectedly."""

    __slots__ = ("state", "assumed")

    def __init__(self, state: CycleState, assumed: tuple[Pod, str] | None) -> None:
        self.state = state
        self.assumed = assumed


class Scheduler:
    """Schedules pods with one or more profiles of a KubeSchedulerConfiguration."""

    def __init__(self, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None,
                 registry: Registry | None = None, *, binder: Any = None, seed: int | None = None,
                 clock: Callable[[], float] | None = None, explain: bool | Callable[[Pod], bool] = False,
                 bind_in_thread: bool = True, kubernetes_version: str | None = None,
                 feature_gates: str | Mapping[str, Any] | None = None, strict: bool = False) -> None:
        # kubernetes_version / feature_gates: the release whose behaviour to follow (default newest)
        self.config = resolve_config(config, kubernetes_version=kubernetes_version, feature_gates=feature_gates)
        self.registry = registry if registry is not None else default_registry()
        self.cache = Cache(RequestRules.for_gates(self.config.feature_gates))
        self.objects = ObjectStore()
        self.snapshot = Snapshot()
        self.nominator = Nominator()
        self.clock: Callable[[], float] = clock if clock is not None else VirtualClock()
        self.rng = random.Random(seed)
        # Suffixes of claims generated from ResourceClaimTemplates; separate from tie-breaking so that
        # pods without claims see the same tie-breaks as before.
        self.claim_rng = random.Random(seed)
        # True, False, or a predicate choosing the pods whose cycles are explained (the CLI's --pod)
        self.explain = explain
        self.bind_in_thread = bind_in_thread
        # Objects given as manifests or client objects: unknown fields are errors (else warnings)
        self.strict = strict
        self._binder = _InMemoryBinder(self, binder)
        # Pod groups (Workload API): every gang member the scheduler knows, shared by the profiles.
        self.pod_groups = PodGroupManager(self.clock)
        # Every pod in the cluster (pending or bound) by uid, for plugins that list pods (Framework.list_pods).
        self._pods: dict[str, Pod] = {}
        # Pods join groups with spec.schedulingGroup and PodGroup objects from 1.36, spec.workloadRef in 1.35.
        self._v2 = uses_pod_group_api(self.config.feature_gates.release)
        self._group_cycles_on: bool | None = None
        # During load(): the pod groups that grew, checked again once at the end (None: not loading).
        self._grown: set[Any] | None = None
        self.profiles: dict[str, Framework] = {}
        self._algorithms: dict[str, Algorithm] = {}
        # Profiles whose cycles are a function of the scheduler's state (see decides_from_state): a retry after
        # an Error that nothing has changed since would end in the same Error, and is not run.
        self._replayable: set[str] = set()
        # pod uid -> (queue moves, progress, cycles) when its single-pod cycle ended in such an Error
        self._error_marks: dict[str, tuple[int, int, int]] = {}
        # The configuration's extenders, shared by every profile (empty without ``extenders:``).
        self.extenders: list[HTTPExtender] = build_extenders(self.config)
        self._binders = [e for e in self.extenders if e.is_binder()]
        ignored = ignored_resources(self.config)
        for prof in self.config.profiles:
            eff = apply_ignored_resources(
                expand_profile(prof, self.registry.points_of, self.config.kubernetes_version,
                               config=self.config), ignored)
            fwk = Framework(eff, self.registry, snapshot=self.snapshot, objects=self.objects,
                            parallelism=self.config.parallelism,
                            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                            binder=self._binder, nominator=self.nominator, rng=self.rng,
                            pod_deleter=self.delete_pod, extenders=self.extenders,
                            feature_gates=self.config.feature_gates)
            fwk.nomination_cleared = self._nomination_cleared
            fwk.pod_groups = self.pod_groups
            fwk.pod_activator = self._activate
            fwk.pod_lister = self._known_pods
            if isinstance(self.clock, VirtualClock):
                fwk.permit_clock = self.clock  # Permit timeouts pass on the virtual clock, as backoffs do
            self.profiles[prof.scheduler_name] = fwk
            self._algorithms[prof.scheduler_name] = Algorithm(fwk, self.rng, self.config.percentage_of_nodes_to_score)
            if not self.extenders and all(decides_from_state(pl) for pl in fwk.plugins.values()):
                self._replayable.add(prof.scheduler_name)
        first = next(iter(self.profiles.values()))
        self.queue = SchedulingQueue(first.queue_sort_less, self.clock,
                                     float(self.config.pod_initial_backoff_seconds),
                                     float(self.config.pod_max_backoff_seconds), first.queue_sort_key())
        self.results: dict[str, PodResult] = {}
        self._lock = threading.RLock()
        # One loop at a time: run() and schedule_one() from several threads take turns (see docs/embedding.md).
        self._loop_lock = threading.Lock()
        self._loop_owner: int | None = None
        self._threads: list[tuple[threading.Thread, Framework, str]] = []
        # Under the virtual clock, binding cycles of pods waiting at Permit are parked here instead of holding a
        # thread each (a big gang would start thousands); they run once their pod is allowed or rejected.
        self._parked: list[tuple[Framework, CycleState, Pod, str, QueuedPodInfo, PodResult]] = []
        self._parked_seen = 0  # finished Permit waits seen by _finish_parked
        self.cycles = 0
        # Attempts after which a pod whose cycles keep ending in Error waits for a cluster event instead of
        # being retried after backoff (upstream retries forever; a simulation must end).
        self.max_error_retries = 5
        # run() stops after this many scheduling cycles in a row that made no progress (no pod bound or evicted,
        # no pod tried for the first time, no event from the application); None = 1000 + 20 per queued pod.
        # A last guarantee that run() ends whatever the plugins do; stopping is reported in ``warnings``.
        self.max_cycles_without_progress: int | None = None
        self._progress = 0
        self._failure_kind: dict[str, str] = {}
        # The pod whose PostFilter (preemption) is running: the pods deleted meanwhile are its victims.
        self._preemptor: PodResult | None = None
        self.warnings = Warnings()
        for ext in self.extenders:
            ext.warnings = self.warnings  # failures skipped as kube-scheduler skips them are reported
        self.warnings.extend(self.config.feature_gates.warnings())  # gates set without effect here
        # input governed by gates that are on but not reproduced here earns a warning (features.GOVERNED_INPUT)
        self._unreproduced = UnreproducedInput(self.config.feature_gates, lambda m: self.warnings.add(m))
        self._admission: Admission | None = None  # built from the PriorityClasses on first use

    # events from the embedding application ----------------------------------------------------
    # Each takes the scheduler lock (a binding thread may requeue pods meanwhile) and counts as progress: a
    # cluster change may let the queued pods through, so run()'s no-progress bound starts again.
    # Each takes a Pod / Node / KubeObject, a manifest dict or a Python Kubernetes client's object (api.clients).
    def add_node(self, node: Node | Any) -> None:
        node = coerce_node(node, strict=self.strict, warnings=self.warnings)
        with self._lock:
            self._progress += 1
            self._unreproduced.saw_node(node)
            self.cache.add_node(node)
            self.queue.move_all_to_active_or_backoff(NODE_ADD)

    def update_node(self, node: Node | Any) -> None:
        node = coerce_node(node, strict=self.strict, warnings=self.warnings)
        with self._lock:
            self._progress += 1
            self._unreproduced.saw_node(node)
            self.cache.update_node(node)
            self.queue.move_all_to_active_or_backoff(NODE_UPDATE)

    def remove_node(self, name: str) -> None:
        with self._lock:
            self._progress += 1
            self.cache.remove_node(name)
            self.queue.move_all_to_active_or_backoff(NODE_DELETE)

    def add_object(self, obj: KubeObject | Any) -> None:
        obj = coerce_object(obj, strict=self.strict, warnings=self.warnings)
        with self._lock:
            self._progress += 1
            self._unreproduced.saw_object(obj)
            self.objects.add(obj)
            if obj.kind in ADMISSION_KINDS:
                self._admission = None
            if obj.kind in (RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE):
                self._claims_changed()
            if obj.kind == WORKLOAD or (obj.kind == POD_GROUP and is_kubernetes_pod_group(obj.raw)):
                self._workload_added(obj)
            self.queue.move_all_to_active_or_backoff(OBJECT_CHANGE)

    def _claims_changed(self) -> None:
        """A claim or template appeared: pods waiting for it may get their claims generated, and pods gated
        by PreEnqueue (DynamicResources: missing claim) are checked again."""
        for qpi in self.queue.pending_pods()["gated"]:
            pod = qpi.pod
            if needs_generated_claims(pod):
                updated = self._generate_claims(pod)
                if updated is not pod:
                    self.queue.update(updated)
                    r = self.results.get(pod.key)
                    if r is not None:
                        r.claims = claim_summaries(updated, self.objects.get)
                        r.unallocated_claims = [str(c["name"]) for c in r.claims
                                                if c["name"] and c["allocation"] is None]

        def pre_enqueue(p: Pod) -> Any:
            fwk = self.profiles.get(p.spec.scheduler_name)
            return None if fwk is None else fwk.run_pre_enqueue_plugins(p)

        self.queue.activate_gated(pre_enqueue)

    def remove_object(self, kind: str, namespace: str, name: str) -> None:
        with self._lock:
            self._progress += 1
            self.objects.remove(kind, namespace, name)
            if kind in ADMISSION_KINDS:
                self._admission = None
            self.queue.move_all_to_active_or_backoff(OBJECT_CHANGE)

    def add_pod(self, pod: Pod | Any) -> None:
        """A bound pod (spec.nodeName set) joins the cluster; a pending one joins the queue."""
        if not isinstance(pod, Pod):
            pod = coerce_pod(pod, strict=self.strict, warnings=self.warnings)
        if pod.status.phase in ("Succeeded", "Failed"):
            # terminal pods hold no resources; upstream's informer skips them
            if not pod.spec.node_name:
                self.warnings.add_item(WARN_FINISHED, pod.key)
            return
        with self._lock:
            self._progress += 1
            self._unreproduced.saw_pod(pod)
            pod, refusal = self.admit(pod)
            if refusal and pod.spec.node_name:
                self.warnings.add_item(WARN_BOUND_REFUSED, refused_item(pod, refusal))
            if not refusal:
                self._pods[pod.uid] = pod
            grouped = is_member(pod, self._v2)
            if (grouped and not refusal and not pod.is_terminating
                    and (pod.spec.node_name or pod.spec.scheduler_name in self.profiles)):
                self.pod_groups.add_pod(pod)
            if pod.spec.node_name:
                self.cache.add_pod(pod)
                if grouped:
                    self._group_grew(pod)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
                return
            fwk = self.profiles.get(pod.spec.scheduler_name)
            r = self.results.setdefault(pod.key, PodResult(pod))
            if refusal:
                # the API server would have refused to create it: there is nothing to schedule
                self._skip(r, refusal, WARN_REFUSED, refused_item(pod, refusal))
                return
            if fwk is None:
                # Not ours: upstream's informer never hands it to this scheduler, so it takes no room either.
                name = pod.spec.scheduler_name
                served = ", ".join(f'"{n}"' for n in self.profiles)
                self._skip(r, f'pod is for scheduler "{name}"; no profile of this configuration has that '
                              f"schedulerName (profiles: {served})", warn_other_scheduler(name))
                return
            if pod.is_terminating:
                # upstream skipPodSchedule: a pod being deleted is never scheduled
                self._skip(r, "pod is being deleted (metadata.deletionTimestamp is set): the scheduler skips it",
                           WARN_TERMINATING)
                return
            if has_resource_claims(pod):
                pod = self._generate_claims(pod)
                r.claims = claim_summaries(pod, self.objects.get)
                r.unallocated_claims = [str(c["name"]) for c in r.claims if c["name"] and c["allocation"] is None]
            qpi = self.queue.new_info(pod)
            if pod.status.nominated_node_name:
                self.nominator.add_nominated_pod(qpi.pod_info, pod.status.nominated_node_name)
            if grouped:
                r.pod_group = group_name(pod)
            st = fwk.run_pre_enqueue_plugins(pod)
            if st is not None and not st.is_success():
                r.outcome = UNSCHEDULABLE if st.is_rejected() else ERROR
                r.message = st.message()
                r.plugin = st.plugin
                self.queue.add(qpi, gated_by=st.plugin or "PreEnqueue")
            else:
                self.queue.add(qpi)
            if grouped:
                self._group_grew(pod)

    def _group_grew(self, pod: Pod) -> None:
        """A pod joined a pod group: PreEnqueue runs again for the group's gated pods (a gang waiting for
        minCount pods may now have them), as upstream's queue does on an unscheduled-pod add."""
        key = PodGroupManager.key_of(pod)
        if self._grown is not None:
            self._grown.add(key)  # load(): once for every group at the end, not once per pod
            return
        self._recheck_groups({key})

    def _recheck_groups(self, keys: set[Any]) -> None:
        def in_groups(q: QueuedPodInfo) -> bool:
            return PodGroupManager.key_of(q.pod) in keys

        def pre_enqueue(p: Pod) -> Any:
            fwk = self.profiles.get(p.spec.scheduler_name)
            return None if fwk is None else fwk.run_pre_enqueue_plugins(p)

        self.queue.activate_gated(pre_enqueue, in_groups)

    def _workload_added(self, obj: KubeObject) -> None:
        """A Workload (1.35) or PodGroup (1.36+) appeared: its gated pods go through PreEnqueue again."""

        def refers(q: QueuedPodInfo) -> bool:
            if q.pod.namespace != obj.namespace:
                return False
            if obj.kind == WORKLOAD:
                ref = q.pod.spec.workload_ref
                return ref is not None and ref.name == obj.name
            return q.pod.spec.scheduling_group == obj.name

        def pre_enqueue(p: Pod) -> Any:
            fwk = self.profiles.get(p.spec.scheduler_name)
            return None if fwk is None else fwk.run_pre_enqueue_plugins(p)

        self.queue.activate_gated(pre_enqueue, refers)

    def _known_pods(self) -> list[Pod]:
        with self._lock:
            return list(self._pods.values())

    def _activate(self, pods: Iterable[Pod]) -> None:
        """A plugin asked for these pods to be retried now (GangScheduling: the group's unscheduled pods)."""
        with self._lock:
            self.queue.activate(p.uid for p in pods)

    def _skip(self, r: PodResult, message: str, warning_group: str, item: str = "") -> None:
        r.outcome = SKIPPED
        r.node = None
        r.message = message
        self.warnings.add_item(warning_group, item or r.pod)

    def admit(self, pod: Pod) -> tuple[Pod, str]:
        """Priority admission (see scheduling_framework.ingest.admission) with the PriorityClasses loaded so far:
        the admitted pod and "", or the pod and why the API server would refuse it."""
        if pod.spec.priority is not None and not pod.spec.priority_class_name:
            return pod, ""  # admitted already, nothing to check
        adm = self._admission
        if adm is None:
            adm = self._admission = Admission([o for k in ADMISSION_KINDS for o in self.objects.list(k)], self.warnings)
        return adm.admit(pod)

    def update_pod(self, pod: Pod | Any) -> None:
        pod = coerce_pod(pod, strict=self.strict, warnings=self.warnings)
        with self._lock:
            self._progress += 1
            pod = self.admit(pod)[0]
            if pod.uid in self._pods:
                self._pods[pod.uid] = pod
            if pod.spec.node_name:
                self.cache.update_pod(pod)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_UPDATE)
            else:
                self.queue.update(pod)
                fwk = self.profiles.get(pod.spec.scheduler_name)
                if fwk is not None:
                    self.queue.activate_gated(fwk.run_pre_enqueue_plugins)
                self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_UPDATE)

    def _generate_claims(self, pod: Pod) -> Pod:
        """What the resourceclaim controller does for a pending pod: claims from its templates."""
        pod, claims = generate_claims(pod, self.objects.get, self.claim_rng)
        for c in claims:
            self.objects.add(c)
        return pod

    def _release_claims(self, pod: Pod) -> None:
        """The pod went away: it no longer holds its claims (a claim nobody holds is deallocated)."""
        ext = extended_claim_name(pod, self.objects.pod_status)
        if ext is not None:
            # the claim made for its extended resources is owned by the pod: garbage-collected with it
            self.objects.remove(RESOURCE_CLAIM, pod.namespace, ext)
            self.objects.set_pod_status(pod.uid, "extendedResourceClaimStatus", None)
        if not has_resource_claims(pod):
            return
        claims = self.objects.list(RESOURCE_CLAIM, pod.namespace)
        for c in release_pod_claims(pod, claims):
            self.objects.add(c)
        for c in claims:
            # the resourceclaim controller deletes the claims it generated for the pod
            if POD_CLAIM_NAME_ANNOTATION in c.annotations and is_for_pod(pod, c) is None:
                self.objects.remove(RESOURCE_CLAIM, c.namespace, c.name)

    def delete_pod(self, pod: Pod) -> None:
        """The pod leaves the cluster (or the queue). Called by preemption for each victim it evicts: a victim
        this run had scheduled then reads ``Preempted`` and joins its preemptor's ``victims``."""
        with self._lock:
            self._progress += 1
            self.nominator.delete_nominated_pod_if_exists(pod)
            self._release_claims(pod)
            self.pod_groups.delete_pod(pod)
            self._pods.pop(pod.uid, None)
            self._error_marks.pop(pod.uid, None)
            cached = self.cache.get_pod(pod.uid)
            if cached is not None:
                # bound or assumed: either way its resources leave the node (upstream RemovePod)
                self.cache.remove_pod(pod)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)
                preemptor = self._preemptor
                if preemptor is not None:
                    self._record_eviction(preemptor, pod, cached.spec.node_name)
            self.queue.delete(pod)
            fwk_list = list(self.profiles.values())
            for fwk in fwk_list:
                fwk.reject_waiting_pod(pod.uid)

    def _record_eviction(self, preemptor: PodResult, victim: Pod, node: str) -> None:
        if victim.key not in preemptor.victims:
            preemptor.victims.append(victim.key)
        vr = self.results.get(victim.key)
        if vr is not None and vr is not preemptor:
            vr.outcome = PREEMPTED
            vr.node = None
            vr.nominated_node = None
            vr.plugin = ""
            vr.message = f"Preempted by pod {preemptor.pod} on node {node}"

    def load(self, nodes: Iterable[Node | Any] | Any = (), pods: Iterable[Pod | Any] | Any = (),
             objects: Iterable[KubeObject | Any] | Any = (), *, _checked: bool = False) -> None:
        """Feed a whole cluster: objects, nodes, then bound pods, then pending pods (in the order given).

        Each may be this package's objects, manifest dicts or objects of a Python Kubernetes client, or a list
        object (``V1NodeList`` as a list call returns it). Nothing is added when one of them cannot be read, or
        when two are one object to the API server (ManifestValidationError naming both by position, as
        ``objects[3]: PodGroup default/workers: metadata.name: Duplicate value: "workers": same namespace/name
        as the PodGroup in objects[1]``; see :func:`~scheduling_framework.ingest.cluster.refuse_duplicates`).
        A bound pod whose node is not among ``nodes`` (normal in a dump: nodes change between list calls)
        is left out, with a warning. Nodes that their bound pods over-commit (requests above allocatable) are
        named in a warning, one item per node with the resources concerned.

        ``_checked`` (internal): the lists come from a loaded Cluster, whose loading refused duplicates already."""
        from scheduling_framework.ingest import gc_paused
        from scheduling_framework.ingest.cluster import refuse_duplicates

        # read every object first, so that a bad one leaves the scheduler as it was
        kw: dict[str, Any] = {"strict": self.strict, "warnings": self.warnings}
        objects = [coerce_object(o, **kw) for o in iter_objects(objects)]
        nodes = [coerce_node(n, **kw) for n in iter_objects(nodes)]
        pods = [coerce_pod(p, **kw) for p in iter_objects(pods)]
        if not _checked:
            refuse_duplicates(nodes, pods, objects)
        with self._lock, gc_paused():  # a big cluster is millions of objects and no cycles
            self._progress += 1
            watch = self._unreproduced
            for o in objects:
                watch.saw_object(o)
                self.objects.add(o)
                if o.kind in UNMODELLED_FIELDS:
                    for field, gate in unmodelled_fields(o.kind, o.raw):
                        item = f"{o.kind} {o.namespace}/{o.name}" if o.namespace else f"{o.kind} {o.name}"
                        self.warnings.add_item(WARN_UNMODELLED.format(field=field, gate=gate), item)
                    if (o.kind == RESOURCE_SLICE and not self.config.feature_gates.enabled("DRADeviceTaints")
                            and has_device_taints(o.raw)):
                        # the allocator of that release does not look at them (upstream's API server drops them)
                        self.warnings.add_item(
                            WARN_DEVICE_TAINTS_OFF.format(release=self.config.feature_gates.release), o.name)
                elif o.kind == DEVICE_TAINT_RULE:
                    self._check_taint_rule(o)
            for n in nodes:
                watch.saw_node(n)
                self.cache.add_node(n)
            pending = []
            grouped = []
            for p in pods:
                if p.spec.workload_ref is not None or p.spec.scheduling_group is not None:
                    grouped.append(p)
                if p.spec.node_name and self.cache.get_node(p.spec.node_name) is None:
                    if p.status.phase not in ("Succeeded", "Failed"):
                        self.warnings.add_item(WARN_ORPHANS, f'{p.key} (node "{p.spec.node_name}")')
                    continue
                if p.spec.node_name:
                    self.add_pod(p)
                else:
                    pending.append(p)
            # the input as given: nodes its bound pods already over-commit (before any pending pod is queued)
            report_overcommitted(filter(None, (self.cache.node_info(n.name) for n in nodes)), self.warnings)
            self._grown = set()
            try:
                for p in pending:
                    self.add_pod(p)
            finally:
                grown, self._grown = self._grown, None
            if grown:
                self._recheck_groups(grown)
            if grouped:
                workload_warnings(grouped, self.objects, self.warnings, enabled=self.gang_scheduling,
                                  release=self.config.feature_gates.release)
            # the snapshot (and the nodes' image states) as the first cycle would bring it up to date, so that
            # building it counts as loading, as upstream's cache fills as the informers deliver the objects
            self.cache.update_snapshot(self.snapshot)

    def _check_taint_rule(self, rule: KubeObject) -> None:
        gates = self.config.feature_gates
        if not taint_rules_enabled(gates):
            # upstream's scheduler does not read them either; say so, as the user may expect them to count
            self.warnings.add_item(WARN_TAINT_RULES_OFF.format(release=gates.release), rule.name)
            return
        spec = rule.raw.get("spec")
        sel = spec.get("deviceSelector") if isinstance(spec, Mapping) else None
        if (isinstance(sel, Mapping) and at_least(gates.release, "1.35")
                and (sel.get("deviceClassName") is not None or sel.get("selectors"))):
            self.warnings.add_item(WARN_TAINT_RULE_CEL.format(release=gates.release), rule.name)

    # the loop ---------------------------------------------------------------------------------
    def run(self, max_cycles: int | None = None) -> RunResults:
        """Schedule until no pod is left to try (backoffs and Permit timeouts pass on the virtual clock).

        Always returns: after ``max_cycles`` scheduling cycles, or when every queued pod waits for an event,
        or after :attr:`max_cycles_without_progress` cycles in a row that changed nothing (then
        :attr:`warnings` says so and the pods still retrying keep their latest outcome). Calls from several
        threads take turns; a call from inside a cycle of this scheduler raises SchedulerBusyError."""
        self._enter_loop("run")
        try:
            self._run(max_cycles)
        finally:
            self._exit_loop()
        return RunResults(self.results.values())

    def _run(self, max_cycles: int | None) -> None:
        cycles = 0
        idle = 0
        seen = self._progress
        virtual = isinstance(self.clock, VirtualClock)
        while max_cycles is None or cycles < max_cycles:
            if self._schedule_one() is not None:
                cycles += 1
                if self._progress != seen:
                    seen = self._progress
                    idle = 0
                    continue
                idle += 1
                limit = self.max_cycles_without_progress
                if limit is None:
                    limit = 1000 + 20 * len(self.queue)
                if idle >= limit:
                    self._stalled(idle)
                    break
                continue
            if virtual:
                if not self._advance_virtual_time():
                    break
                continue
            self.wait_for_bindings()
            expiry = self.queue.next_backoff_expiry()
            if expiry is None:
                if self.queue.active_len():
                    continue
                break
            time.sleep(max(0.0, expiry - self.clock()))
        self.wait_for_bindings()

    def _advance_virtual_time(self) -> bool:
        """The active queue is empty: let finished bindings land, else move the virtual clock to the next
        backoff expiry or Permit timeout. False when nothing is left to wait for."""
        self._join_unblocked_bindings()
        if self.queue.active_len():
            return True
        t = self.queue.next_backoff_expiry()
        p = self._next_permit_deadline()
        if p is not None and (t is None or p < t):
            t = p
        if t is None:
            if self._threads or self._parked:  # a binding still busy (an application binder taking its time)
                self.wait_for_bindings()
                return True
            return False
        clock = self.clock
        assert isinstance(clock, VirtualClock)
        clock.advance_to(t)
        self._expire_permits()
        return True

    def _next_permit_deadline(self) -> float | None:
        best: float | None = None
        for fwk in self.profiles.values():
            d = fwk.next_permit_deadline()
            if d is not None and (best is None or d < best):
                best = d
        return best

    def _expire_permits(self) -> None:
        now = self.clock()
        for fwk in self.profiles.values():
            fwk.expire_waiting_pods(now)

    def _join_unblocked_bindings(self) -> None:
        """Join the binding threads no longer held at Permit (their pod was allowed, rejected or timed out), and
        run the parked binding cycles of such pods."""
        self._finish_parked()
        keep = []
        for entry in self._threads:
            t, fwk, uid = entry
            wp = fwk.get_waiting_pod(uid)
            if wp is None or wp.done():
                t.join()
            else:
                keep.append(entry)
        self._threads = keep

    def _finish_parked(self) -> None:
        """Run the parked binding cycles whose pod no longer waits at Permit (until none is left to run: a
        binding can end another pod's wait)."""
        while self._parked:
            finished = sum(fwk.waiting_pods.finished for fwk in self.profiles.values())
            if finished == self._parked_seen:
                return  # no wait ended since the last look: nothing to run (keeps a big gang linear)
            self._parked_seen = finished
            done: list[tuple[Framework, CycleState, Pod, str, QueuedPodInfo, PodResult]] = []
            keep: list[tuple[Framework, CycleState, Pod, str, QueuedPodInfo, PodResult]] = []
            for entry in self._parked:
                wp = entry[0].get_waiting_pod(entry[2].uid)
                (done if wp is None or wp.done() else keep).append(entry)
            if not done:
                return
            self._parked = keep
            for entry in done:
                self._binding_cycle(*entry)

    def _stalled(self, cycles: int) -> None:
        stuck = sorted({q.pod.key for qs in self.queue.pending_pods().values() for q in qs
                        if self.results.get(q.pod.key) is not None})
        shown = ", ".join(stuck[:10]) + (f", ... ({len(stuck)} in all)" if len(stuck) > 10 else "")
        self.warnings.add(f"run() stopped after {cycles} scheduling cycles in a row without progress (no pod "
                             f"bound or evicted, no new pod tried, no cluster event); the pods still being retried "
                             f"keep their latest outcome: {shown or 'none'}")

    def wait_for_bindings(self) -> None:
        """Wait for the binding cycles running in threads (under the virtual clock, Permit timeouts pass)."""
        if isinstance(self.clock, VirtualClock):
            while True:
                self._join_unblocked_bindings()
                if not self._threads and not self._parked:
                    return
                d = self._next_permit_deadline()
                if d is None:
                    break
                self.clock.advance_to(d)
                self._expire_permits()
        threads, self._threads = self._threads, []
        for t, _, _ in threads:
            t.join()

    def _enter_loop(self, what: str) -> None:
        me = threading.get_ident()
        if self._loop_owner == me:
            raise SchedulerBusyError(f"Scheduler.{what}() called while this thread is already running a cycle of "
                                     f"the same Scheduler (from a plugin or a binder?)")
        self._loop_lock.acquire()
        self._loop_owner = me

    def _exit_loop(self) -> None:
        self._loop_owner = None
        self._loop_lock.release()

    def schedule_one(self) -> PodResult | None:
        """Run one scheduling cycle for the next pod; None when the active queue is empty."""
        self._enter_loop("schedule_one")
        try:
            return self._schedule_one()
        finally:
            self._exit_loop()

    def _schedule_one(self) -> PodResult | None:
        with self._lock:  # the binding thread may requeue pods concurrently
            qpi = self.queue.pop()
            while qpi is not None and self._error_marks and self._same_error_again(qpi):
                qpi = self.queue.pop()
        if qpi is None:
            return None
        pod = qpi.pod
        if pod.is_terminating:
            # upstream skipPodSchedule: a pod deleted (update_pod with deletionTimestamp, its finalizers keep
            # it) while it waited in the queue is dropped when popped, without a scheduling cycle
            self._progress += 1  # the pod left the queue for good
            r = self.results.setdefault(pod.key, PodResult(pod))
            self._skip(r, "pod is being deleted (metadata.deletionTimestamp is set): the scheduler skips it",
                       WARN_TERMINATING)
            return r
        self.cycles += 1
        fwk = self.profiles[pod.spec.scheduler_name]
        r = self.results.setdefault(pod.key, PodResult(pod))
        r.attempts += 1
        if r.attempts == 1:
            self._progress += 1  # a pod tried for the first time
        moves_before = self.queue.moved_since
        sort_error = self.queue.take_sort_error(pod.uid)
        if sort_error is not None:
            self._fail(qpi, r, sort_error, moves_before)
            return r
        if self._group_cycles and self._in_gang(pod):
            self._pod_group_cycle(qpi, r, moves_before)
            if self._parked:
                self._finish_parked()
            return r
        cycle = _Cycle(CycleState(), None)
        try:
            self._scheduling_cycle(fwk, qpi, r, cycle, moves_before)
        except Exception as e:  # a fault no extension point runner caught: an Error, with the pod rolled back
            self._cycle_fault(fwk, qpi, r, cycle, e, moves_before)
        if self._parked:
            self._finish_parked()  # the pods this cycle allowed at Permit bind now
        return r

    def _scheduling_cycle(self, fwk: Framework, qpi: QueuedPodInfo, r: PodResult, cycle: _Cycle,
                          moves_before: int) -> None:
        pod = qpi.pod
        algo = self._algorithms[pod.spec.scheduler_name]
        with self._lock:
            self.cache.update_snapshot(self.snapshot)
        state = cycle.state
        explain = self._explains(pod)
        start = algo.next_start_node_index
        try:
            result = algo.schedule_pod(state, pod, explain)
        except FitError as fe:
            self._handle_fit_error(fwk, state, qpi, r, fe, moves_before)
            return
        except CycleError as ce:
            # An Error before a node was chosen: the cycle changed nothing (no rng draw, no assumed pod) as
            # long as the round-robin start stayed put (a Score error comes after it moved).
            replay = pod.spec.scheduler_name in self._replayable and algo.next_start_node_index == start
            self._fail(qpi, r, ce.status, moves_before, replayable=replay)
            return
        host = result.suggested_host
        if explain:
            self._explain_success(r, result)
        self._assume_and_bind(fwk, qpi, r, cycle, moves_before, host)

    def _assume_and_bind(self, fwk: Framework, qpi: QueuedPodInfo, r: PodResult, cycle: _Cycle, moves_before: int,
                         host: str, park: bool = False) -> None:
        """Assume the pod on ``host``, run Reserve and Permit, and start its binding cycle (``park``: a pod
        waiting at Permit waits parked, whatever the clock, until a later member of its pod group allows it)."""
        pod = qpi.pod
        state = cycle.state
        assumed = pod.with_node_name(host)
        if assumed.status.nominated_node_name:
            assumed = assumed.with_nominated_node_name("")
        with self._lock:
            self.cache.assume_pod(assumed, qpi.pod_info)
            if is_member(assumed, self._v2):
                # upstream's cache counts the pod assumed in its group (1.36+; the 1.35 plugin's Reserve does too)
                self.pod_groups.assume(assumed)
        cycle.assumed = (assumed, host)
        st = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            cycle.assumed = None
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._fail(qpi, r, st, moves_before, node=host)
            return
        st = fwk.run_permit_plugins(state, assumed, host)
        if st is not None and not st.is_success() and not st.is_wait():
            cycle.assumed = None
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._fail(qpi, r, st, moves_before, node=host)
            return
        self.nominator.delete_nominated_pod_if_exists(pod)
        cycle.assumed = None  # the binding cycle owns the rollback from here
        if st is not None and st.is_wait() and (park or (self.bind_in_thread and isinstance(self.clock, VirtualClock))):
            self._parked.append((fwk, state, assumed, host, qpi, r))
        elif st is not None and st.is_wait() and self.bind_in_thread:
            t = threading.Thread(target=self._binding_cycle, args=(fwk, state, assumed, host, qpi, r), daemon=True)
            self._threads.append((t, fwk, assumed.uid))
            t.start()
        else:
            if st is not None and st.is_wait() and isinstance(self.clock, VirtualClock):
                self._expire_inline(fwk, assumed.uid)
            self._binding_cycle(fwk, state, assumed, host, qpi, r)

    # pod-group scheduling cycle (Kubernetes 1.36+) ---------------------------------------------
    @property
    def _group_cycles(self) -> bool:
        """Whether gangs go through upstream's pod-group scheduling cycle (1.36+, gang scheduling on)."""
        if self._group_cycles_on is None:  # fixed by the configuration: computed once
            self._group_cycles_on = self._v2 and self.gang_scheduling
        return self._group_cycles_on

    def _in_gang(self, pod: Pod) -> bool:
        """Whether the pod takes a pod-group cycle: it names a PodGroup the scheduler has (gang or basic policy:
        upstream's ScheduleOne sends every pod with spec.schedulingGroup there)."""
        if not is_member(pod, True):
            return False
        policy, _ = lookup_policy(pod, self.objects, True)
        return policy is not None

    def _pod_group_cycle(self, first: QueuedPodInfo, first_r: PodResult, moves_before: int) -> None:
        """Upstream's pod-group scheduling cycle (1.36+): the popped gang member takes its group's other queued
        members out of the queue; they are tried in order (priority, then first attempt), each seeing the ones
        before it as placed; then the group is placed whole (every member that found a node binds) when a
        member's Permit said the quorum is reached, or none is: those that found a node fail with
        ``pod group is unschedulable, <their Permit message>``, the others with their own reason."""
        key = PodGroupManager.key_of(first.pod)
        members = [first]
        state = self.pod_groups.get(key) if key is not None else None
        with self._lock:
            for other in (state.unscheduled_pods() if state is not None else []):
                if other.uid == first.pod.uid:
                    continue
                q = self.queue.pop_specific(other.uid)
                if q is not None:
                    members.append(q)
        results = {first.pod.uid: first_r}
        for q in list(members[1:]):
            r = self.results.setdefault(q.pod.key, PodResult(q.pod))
            if q.pod.is_terminating:  # upstream skipPodGroupPodSchedule
                members.remove(q)
                self._progress += 1
                self._skip(r, "pod is being deleted (metadata.deletionTimestamp is set): the scheduler skips it",
                           WARN_TERMINATING)
                continue
            r.attempts += 1
            if r.attempts == 1:
                self._progress += 1
            results[q.pod.uid] = r
        members.sort(key=lambda q: (-q.pod.priority, q.initial_attempt_timestamp or 0.0))
        names = [q.pod.spec.scheduler_name for q in members]
        if len(set(names)) > 1:
            # upstream frameworkForPodGroup: each popped member fails with the same Error
            got = next(n for n in names if n != names[0])
            mixed = Status(Code.ERROR, "all pods in a single pod group should have the same .spec.schedulerName "
                                       f'set, got: "{got}" and "{names[0]}"')
            for q in members:
                self._fail(q, results[q.pod.uid], mixed, moves_before)
            return
        fwk = self.profiles[names[0]]
        placed: list[tuple[QueuedPodInfo, str, Status | None, CycleState]] = []  # (member, node, Permit, state)
        try:
            self._try_group(fwk, members, results, placed, moves_before)
        except Exception as e:  # a fault no runner caught: the trial placements are undone, every member errs
            for q, host, _, pod_state in reversed(placed):
                assumed = q.pod.with_node_name(host)
                fwk.waiting_pods.remove(assumed.uid)
                fwk.run_reserve_plugins_unreserve(pod_state, assumed, host)
                self._forget(assumed)
            st = Status(Code.ERROR, f"pod group scheduling cycle of pod {first.pod.key} failed: "
                                    f"{type(e).__name__}: {e}", plugin=e.plugin if isinstance(e, PluginError) else "",
                        error=e)
            for q in members:
                self._fail(q, results[q.pod.uid], st, moves_before)

    def _try_group(self, fwk: Framework, members: list[QueuedPodInfo], results: dict[str, PodResult],
                   placed: list[tuple[QueuedPodInfo, str, Status | None, CycleState]], moves_before: int) -> None:
        """The members' trials, then the group's verdict (see :meth:`_pod_group_cycle`)."""
        algo = self._algorithms[members[0].pod.spec.scheduler_name]
        feasible = False
        for q in members:
            r = results[q.pod.uid]
            cycle = _Cycle(CycleState(), None)
            with self._lock:
                self.cache.update_snapshot(self.snapshot)
            try:
                result = algo.schedule_pod(cycle.state, q.pod, self._explains(q.pod))
            except FitError as fe:
                self._handle_fit_error(fwk, cycle.state, q, r, fe, moves_before)
                continue
            except CycleError as ce:
                self._fail(q, r, ce.status, moves_before)
                continue
            host = result.suggested_host
            assumed = q.pod.with_node_name(host)
            with self._lock:
                self.cache.assume_pod(assumed)
                self.pod_groups.assume(assumed)
            st = fwk.run_reserve_plugins_reserve(cycle.state, assumed, host)
            if st is None or st.is_success():
                st = fwk.run_permit_plugins(cycle.state, assumed, host)
                fwk.waiting_pods.remove(assumed.uid)  # a trial: the pod does not wait in this cycle
            if st is not None and not st.is_success() and not st.is_wait():
                fwk.run_reserve_plugins_unreserve(cycle.state, assumed, host)
                self._forget(assumed)
                self._fail(q, r, st, moves_before, node=host)
                continue
            placed.append((q, host, st, cycle.state))
            feasible = feasible or st is None or st.is_success()
        for q, host, _, pod_state in reversed(placed):  # the trial placements are taken back
            assumed = q.pod.with_node_name(host)
            fwk.run_reserve_plugins_unreserve(pod_state, assumed, host)
            self._forget(assumed)
        trials = list(placed)
        placed.clear()  # nothing left to undo
        if feasible:
            # each member binds with the cycle state of its trial (upstream's prepareForBindingCycle)
            for q, host, _, pod_state in trials:
                self._assume_and_bind(fwk, q, results[q.pod.uid], _Cycle(pod_state, None), moves_before, host,
                                      park=True)
            return
        for q, _, st, _ in trials:
            reason = st.message() if st is not None else ""
            self._fail(q, results[q.pod.uid], Status(Code.UNSCHEDULABLE, f"{GROUP_UNSCHEDULABLE}{reason}",
                                                     plugin=st.plugin if st is not None else ""), moves_before)

    def _expire_inline(self, fwk: Framework, uid: str) -> None:
        """Binding in this thread under the virtual clock: nothing else runs while the pod waits at Permit, so
        its timeouts pass at once unless a plugin already allowed or rejected it."""
        clock = self.clock
        assert isinstance(clock, VirtualClock)
        wp = fwk.get_waiting_pod(uid)
        while wp is not None and not wp.done():
            d = wp.next_deadline()
            if d is None:
                return
            clock.advance_to(d)
            self._expire_permits()

    def _cycle_fault(self, fwk: Framework, qpi: QueuedPodInfo, r: PodResult, cycle: _Cycle, e: Exception,
                     moves_before: int) -> None:
        """An exception escaped the extension point runners: undo what the cycle reserved, report an Error."""
        plugin = e.plugin if isinstance(e, PluginError) else ""
        st = Status(Code.ERROR, f"scheduling cycle of pod {qpi.pod.key} failed: {type(e).__name__}: {e}",
                    plugin=plugin, error=e)
        if cycle.assumed is not None:
            assumed, host = cycle.assumed
            fwk.reject_waiting_pod(assumed.uid)
            fwk.waiting_pods.remove(assumed.uid)
            fwk.run_reserve_plugins_unreserve(cycle.state, assumed, host)
            self._forget(assumed)
        with self._lock:
            self._fail(qpi, r, st, moves_before)

    def _binding_cycle(self, fwk: Framework, state: CycleState, assumed: Pod, host: str, qpi: QueuedPodInfo,
                       r: PodResult) -> None:
        try:
            st = fwk.wait_on_permit(assumed)
            if st is None:
                st = fwk.run_pre_bind_plugins(state, assumed, host)
            if st is None:
                ext_st = self._extenders_binding(assumed, host) if self._binders else None
                bst = ext_st if ext_st is not None else fwk.run_bind_plugins(state, assumed, host)
                if bst.code == Code.SKIP:
                    st = Status(Code.ERROR, f"no bind plugin bound pod {assumed.key}")
                elif not bst.is_success():
                    st = bst
        except Exception as e:  # not reached through the runners; still an Error with the pod rolled back
            st = Status(Code.ERROR, f"binding cycle of pod {assumed.key} failed: {type(e).__name__}: {e}", error=e)
        if st is not None and not st.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            with self._lock:
                # Record the failure first, then tell the queue the assumed pod's resources are free: that can
                # help pods a Filter rejected, never this pod nor others whose own binding failed (upstream
                # excludes the pod from this move), so bindings that always fail cannot requeue each other.
                self._fail(qpi, r, st, self.queue.moved_since, node=host, kind=_FAILED_BINDING)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, self._resolvable_by_forget_of(assumed))
            return
        with self._lock:
            if self.cache.is_assumed(assumed.uid):
                # bound by a plugin other than DefaultBinder: the binding happened all the same
                self.cache.confirm(assumed)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
            self._progress += 1
            self._failure_kind.pop(assumed.uid, None)
            if is_member(assumed, self._v2):
                self.pod_groups.assign(assumed)
            if assumed.uid in self._pods:
                self._pods[assumed.uid] = assumed
            r.outcome = SCHEDULED
            r.node = host
            r.message = ""
            r.plugin = ""
            ext = extended_claim_name(assumed, self.objects.pod_status) if self.objects.pod_status else None
            if r.claims is not None or ext is not None:
                r.claims = claim_summaries(assumed, self.objects.get, ext)
        fwk.run_post_bind_plugins(state, assumed, host)

    def _extenders_binding(self, pod: Pod, host: str) -> Status | None:
        """The first interested binder extender binds the pod (before any bind plugin, as upstream); an
        ignorable one that fails is skipped. None when no extender bound it."""
        for ext in self._binders:
            if not ext.is_interested(pod):
                continue
            try:
                ext.bind(pod, host)
            except SchedulingFrameworkError as e:
                if ext.is_ignorable():
                    ext.note_skipped("bind", e)
                    continue
                return Status(Code.ERROR, str(e), plugin=ext.name)
            return Status(Code.SUCCESS)
        return None

    def _resolvable_by_forget(self, qpi: QueuedPodInfo) -> bool:
        return self._failure_kind.get(qpi.pod.uid, _FAILED_FILTER) == _FAILED_FILTER

    def _resolvable_by_forget_of(self, forgotten: Pod) -> Callable[[QueuedPodInfo], bool]:
        """:meth:`_resolvable_by_forget`, and, for a gang member, not the members of its own group: the room a
        gang frees when its attempt fails would only let it try the same placement again (upstream retries it
        every timeout, for ever; a simulation must end — docs/differences.md)."""
        def member_key(p: Pod) -> Any:
            return PodGroupManager.key_of(p) if is_member(p, self._v2) else None

        keyers: list[Callable[[Pod], Any]] = [member_key]
        for fwk in self.profiles.values():
            keyers.extend(fwk.pod_group_keys)
        keys = [(k, k(forgotten)) for k in keyers]
        keys = [(k, v) for k, v in keys if v]
        if not keys:
            return self._resolvable_by_forget

        def check(qpi: QueuedPodInfo) -> bool:
            return self._resolvable_by_forget(qpi) and all(k(qpi.pod) != v for k, v in keys)

        return check

    def _nomination_cleared(self, pod: Pod) -> None:
        """A queued pod lost its nominated node: forget it on the queued copy and retry the pod."""
        with self._lock:
            cleared = pod.with_nominated_node_name("")
            self.queue.update(cleared)
            self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_UPDATE)
            r = self.results.get(pod.key)
            if r is not None and r.outcome != SCHEDULED:
                r.nominated_node = None

    def _bound(self, pod: Pod, node_name: str) -> None:
        with self._lock:
            self.cache.confirm(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)

    def _forget(self, assumed: Pod) -> None:
        with self._lock:
            if self.cache.is_assumed(assumed.uid):
                self.cache.forget_pod(assumed)
            if is_member(assumed, self._v2):
                self.pod_groups.forget(assumed)

    # failures ---------------------------------------------------------------------------------
    def _explains(self, pod: Pod) -> bool:
        ex = self.explain
        return bool(ex(pod)) if callable(ex) else bool(ex)

    def _handle_fit_error(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, r: PodResult,
                          fe: FitError, moves_before: int) -> None:
        d = fe.diagnosis
        names = [ni.name for ni in self.snapshot.list()]
        if self._explains(qpi.pod):
            r.filter = {n: st.to_dict() for n, st in d.full_map(names).items()}
            r.scores, r.total_scores = {}, {}
        if fwk.has_post_filter_plugins():
            self._preemptor = r
            objects_before = self.objects.generation
            try:
                pfr, st = fwk.run_post_filter_plugins(state, qpi.pod, d.full_map(names))
            finally:
                self._preemptor = None
            if self.objects.generation != objects_before:
                # PostFilter changed cluster objects (DynamicResources deallocated a claim): that is an
                # event, and the pod tries again after its backoff.
                self.queue.move_all_to_active_or_backoff(OBJECT_CHANGE)
            if st is not None and st.reasons:
                d.post_filter_msg = st.message()
            if pfr is not None and pfr.nominated_node_name:
                r.nominated_node = pfr.nominated_node_name
                # Victims evicted through delete_pod are already listed (earlier rounds' too: the list spans the
                # run). A PostFilter plugin that evicts its own way still names its victims, once they are gone;
                # a victim only rejected at Permit is requeued, not evicted, and is not listed.
                extra = [v for v in pfr.victims if v not in r.victims]
                if extra:
                    with self._lock:
                        present = {p.key for p in self.cache.pods()}
                    for v in extra:
                        vr = self.results.get(v)
                        if v not in present and (vr is None or vr.outcome == PREEMPTED):
                            r.victims.append(v)
                qpi.pod_info = qpi.pod_info.with_pod(qpi.pod.with_nominated_node_name(pfr.nominated_node_name))
                self.nominator.add_nominated_pod(qpi.pod_info, pfr.nominated_node_name)
            elif pfr is not None and pfr.mode != "Noop" and qpi.pod.status.nominated_node_name:
                # Preemption found no room: the pod keeps no nomination (upstream clears it).
                self.nominator.delete_nominated_pod_if_exists(qpi.pod)
                qpi.pod_info = qpi.pod_info.with_pod(qpi.pod.with_nominated_node_name(""))
                r.nominated_node = None
        qpi.unschedulable_plugins = set(d.unschedulable_plugins)
        qpi.pending_plugins = set(d.pending_plugins)
        r.outcome = UNSCHEDULABLE
        r.node = None
        r.plugin = ""  # no single plugin: the message counts each node's
        r.message = fe.message()
        with self._lock:
            self._failure_kind[qpi.pod.uid] = _FAILED_FILTER
            self.queue.add_unschedulable(qpi, self.queue.moved_since != moves_before)

    def _fail(self, qpi: QueuedPodInfo, r: PodResult, st: Status, moves_before: int, node: str | None = None,
              kind: str = "", replayable: bool = False) -> None:
        """Record the pod's failed attempt and queue it again. ``replayable``: the cycle ended in an Error
        that depends on nothing but the scheduler's state (see :meth:`_same_error_again`)."""
        r.outcome = UNSCHEDULABLE if st.is_rejected() else ERROR
        r.node = None
        r.plugin = st.plugin
        if st.is_rejected() and node is not None:
            r.message = f"0/1 nodes are available: 1 {st.message()}."
        else:
            r.message = st.message()
        qpi.unschedulable_plugins = {st.plugin} if st.plugin else set()
        qpi.pending_plugins = set()
        if not kind:
            kind = _FAILED_FILTER if st.is_rejected() and node is None else _FAILED_ERROR
            if st.is_rejected() and node is not None:
                kind = _FAILED_BINDING  # Reserve or Permit said no: not a verdict freed resources can change
        with self._lock:  # binding threads requeue pods too
            self._failure_kind[qpi.pod.uid] = kind
            if not st.is_rejected() and qpi.attempts < self.max_error_retries:
                # An error is no verdict about the cluster: retry after backoff, as upstream does, a bounded
                # number of times so that run() ends even when a plugin keeps failing.
                if replayable and self.queue.moved_since == moves_before:
                    self._error_marks[qpi.pod.uid] = (self.queue.moved_since, self._progress, self.cycles)
                self.queue.add_unschedulable(qpi, moved_during_cycle=True)
                return
            self.queue.add_unschedulable(qpi, self.queue.moved_since != moves_before)

    def _same_error_again(self, qpi: QueuedPodInfo) -> bool:
        """Called with the lock held for a popped pod. True when its last attempt ended in an Error that only
        the scheduler's state decided and nothing happened since: no cluster event, no application call, no
        other pod's scheduling cycle (which could move the round-robin start, draw from the tie-break rng,
        assume a pod or nominate one). The retry would end in the same Error (a timed-out search would time
        out again), so it is not run: the pod keeps its outcome and waits for an event, as after its last
        retry (upstream retries it after every backoff, for ever)."""
        mark = self._error_marks.pop(qpi.pod.uid, None)
        if mark is None or mark != (self.queue.moved_since, self._progress, self.cycles):
            return False
        self.queue.add_unschedulable(qpi)
        return True

    def _explain_success(self, r: PodResult, result: ScheduleResult) -> None:
        d = result.diagnosis
        filt = {n: st.to_dict() for n, st in d.node_to_status.items()}
        if d.pre_filter_allowed is not None:
            for ni in self.snapshot.list():
                if ni.name not in d.pre_filter_allowed:
                    filt[ni.name] = d.absent_nodes_status.to_dict()
        for n in result.feasible_names:
            filt[n] = {"code": "Success"}
        for n, st in d.explained.items():
            filt[n] = {"code": "Success"} if st is None or st.is_success() else st.to_dict()
        r.filter = filt
        ex = explain_scores(result)
        r.scores = ex["scores"]
        r.total_scores = ex["totalScores"]

    # views -----------------------------------------------------------------------------------
    @property
    def gang_scheduling(self) -> bool:
        """Whether a profile runs the GangScheduling plugin (GenericWorkload and GangScheduling gates on)."""
        return self.config.feature_gates.enabled("GenericWorkload") and any(
            GANG_SCHEDULING in fwk.plugins for fwk in self.profiles.values())

    def pod_group_results(self) -> list[dict[str, Any]]:
        """One entry per pod group among the pending pods: its policy, its pods, whether it was placed
        whole, and, when not, why (the members that found no node, the Permit timeout, the PreEnqueue wait)."""
        by_group: dict[str, list[PodResult]] = {}
        for r in self.results.values():
            if r.pod_group is not None:
                by_group.setdefault(r.pod_group, []).append(r)
        with self._lock:
            by_key = {p.key: p for p in self._pods.values()}
        out = []
        for name, members in sorted(by_group.items()):
            sample = next((by_key[r.pod] for r in members if r.pod in by_key), None)
            policy = None if sample is None else lookup_policy(sample, self.objects, self._v2)[0]
            out.append(summarize_group(name, policy, members, self.gang_scheduling))
        return out

    def profile(self, name: str | None = None) -> Framework:
        if name is None:
            return next(iter(self.profiles.values()))
        fwk = self.profiles.get(name)
        if fwk is None:
            raise ConfigError(f"profile {name!r} not found")
        return fwk
