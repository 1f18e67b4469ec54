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

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.cache import Cache
from scheduling_framework.config import KubeSchedulerConfiguration, expand_profile, load_config
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, SchedulingFrameworkError
from scheduling_framework.extender.client import HTTPExtender, build_extenders, ignored_resources
from scheduling_framework.extender.config import apply_ignored_resources
from scheduling_framework.interfaces import QueuedPodInfo
from scheduling_framework.node_info import PodInfo
from scheduling_framework.queue import (
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
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.runtime.algorithm import Algorithm, CycleError, FitError, ScheduleResult, explain_scores
from scheduling_framework.runtime.framework import Framework, Nominator
from scheduling_framework.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"


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
                 "filter", "scores", "total_scores", "attempts", "plugin")

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

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"pod": self.pod, "schedulerName": self.scheduler_name, "outcome": self.outcome,
                             "node": self.node, "nominatedNode": self.nominated_node, "victims": list(self.victims),
                             "message": self.message}
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


class Scheduler:
    """Schedules pods with one or more profiles of a KubeSchedulerConfiguration."""

    def __init__(self, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None,
                 registry: Registry | None = None, *, binder: Any = None, seed: int | None = None,
                 clock: Callable[[], float] | None = None, explain: bool = False,
                 bind_in_thread: bool = True) -> None:
        self.config = config if isinstance(config, KubeSchedulerConfiguration) else load_config(config)
        self.registry = registry if registry is not None else default_registry()
        self.cache = Cache()
        self.objects = ObjectStore()
        self.snapshot = Snapshot()
        self.nominator = Nominator()
        self.clock: Callable[[], float] = clock if clock is not None else VirtualClock()
        self.rng = random.Random(seed)
        self.explain = explain
        self.bind_in_thread = bind_in_thread
        self._binder = _InMemoryBinder(self, binder)
        self.profiles: dict[str, Framework] = {}
        self._algorithms: dict[str, Algorithm] = {}
        # The configuration's extenders, shared by every profile (empty without ``extenders:``).
        self.extenders: list[HTTPExtender] = build_extenders(self.config)
        self._binders = [e for e in self.extenders if e.is_binder()]
        ignored = ignored_resources(self.config)
        for prof in self.config.profiles:
            eff = apply_ignored_resources(expand_profile(prof, self.registry.points_of), ignored)
            fwk = Framework(eff, self.registry, snapshot=self.snapshot, objects=self.objects,
                            parallelism=self.config.parallelism,
                            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                            binder=self._binder, nominator=self.nominator, rng=self.rng,
                            pod_deleter=self.delete_pod, extenders=self.extenders)
            fwk.nomination_cleared = self._nomination_cleared
            self.profiles[prof.scheduler_name] = fwk
            self._algorithms[prof.scheduler_name] = Algorithm(fwk, self.rng, self.config.percentage_of_nodes_to_score)
        first = next(iter(self.profiles.values()))
        self.queue = SchedulingQueue(first.queue_sort_less, self.clock,
                                     float(self.config.pod_initial_backoff_seconds),
                                     float(self.config.pod_max_backoff_seconds))
        self.results: dict[str, PodResult] = {}
        self._lock = threading.RLock()
        self._threads: list[threading.Thread] = []
        self.cycles = 0
        # Attempts after which a pod whose cycles keep ending in Error waits for a cluster event instead of
        # being retried after backoff (upstream retries forever; a simulation must end).
        self.max_error_retries = 5

    # events from the embedding application ----------------------------------------------------
    def add_node(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD)

    def update_node(self, node: Node) -> None:
        self.cache.update_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_UPDATE)

    def remove_node(self, name: str) -> None:
        self.cache.remove_node(name)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE)

    def add_object(self, obj: KubeObject) -> None:
        self.objects.add(obj)
        self.queue.move_all_to_active_or_backoff(OBJECT_CHANGE)

    def remove_object(self, kind: str, namespace: str, name: str) -> None:
        self.objects.remove(kind, namespace, name)
        self.queue.move_all_to_active_or_backoff(OBJECT_CHANGE)

    def add_pod(self, pod: Pod) -> None:
        """A bound pod (spec.nodeName set) joins the cluster; a pending one joins the queue."""
        if pod.status.phase in ("Succeeded", "Failed"):
            return  # terminal pods hold no resources; upstream's informer skips them
        if pod.spec.node_name:
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
            return
        fwk = self.profiles.get(pod.spec.scheduler_name)
        r = self.results.setdefault(pod.key, PodResult(pod))
        if fwk is None:
            r.outcome = ERROR
            r.message = f'no profile for schedulerName "{pod.spec.scheduler_name}"'
            return
        qpi = self.queue.new_info(pod)
        if pod.status.nominated_node_name:
            self.nominator.add_nominated_pod(qpi.pod_info, pod.status.nominated_node_name)
        st = fwk.run_pre_enqueue_plugins(pod)
        if st is not None and not st.is_success():
            r.outcome = UNSCHEDULABLE if st.is_rejected() else ERROR
            r.message = st.message()
            r.plugin = st.plugin
            self.queue.add(qpi, gated_by=st.plugin or "PreEnqueue")
            return
        self.queue.add(qpi)

    def update_pod(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.update_pod(pod)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_UPDATE)
        else:
            self.queue.update(pod)
            fwk = self.profiles.get(pod.spec.scheduler_name)
            if fwk is not None:
                self.queue.activate_gated(fwk.run_pre_enqueue_plugins)
            self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_UPDATE)

    def delete_pod(self, pod: Pod) -> None:
        with self._lock:
            self.nominator.delete_nominated_pod_if_exists(pod)
            if self.cache.get_pod(pod.uid) is not None:
                # bound or assumed: either way its resources leave the node (upstream RemovePod)
                self.cache.remove_pod(pod)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)
            self.queue.delete(pod)
            fwk_list = list(self.profiles.values())
            for fwk in fwk_list:
                fwk.reject_waiting_pod(pod.uid)

    def load(self, nodes: Iterable[Node] = (), pods: Iterable[Pod] = (), objects: Iterable[KubeObject] = ()) -> None:
        """Feed a whole cluster: objects, nodes, then bound pods, then pending pods (in the order given)."""
        for o in objects:
            self.objects.add(o)
        for n in nodes:
            self.cache.add_node(n)
        pending = []
        for p in pods:
            if p.spec.node_name:
                self.add_pod(p)
            else:
                pending.append(p)
        for p in pending:
            self.add_pod(p)

    # the loop ---------------------------------------------------------------------------------
    def run(self, max_cycles: int | None = None) -> list[PodResult]:
        """Schedule until no pod is left to try (backoffs pass on the virtual clock)."""
        cycles = 0
        while max_cycles is None or cycles < max_cycles:
            if self.schedule_one() is None:
                self.wait_for_bindings()
                expiry = self.queue.next_backoff_expiry()
                if expiry is None:
                    if self.queue.active_len():
                        continue
                    break
                if isinstance(self.clock, VirtualClock):
                    self.clock.advance_to(expiry)
                else:
                    time.sleep(max(0.0, expiry - self.clock()))
                continue
            cycles += 1
        self.wait_for_bindings()
        return list(self.results.values())

    def wait_for_bindings(self) -> None:
        threads, self._threads = self._threads, []
        for t in threads:
            t.join()

    def schedule_one(self) -> PodResult | None:
        """Run one scheduling cycle for the next pod; None when the active queue is empty."""
        with self._lock:  # the binding thread may requeue pods concurrently
            qpi = self.queue.pop()
        if qpi is None:
            return None
        self.cycles += 1
        pod = qpi.pod
        fwk = self.profiles[pod.spec.scheduler_name]
        algo = self._algorithms[pod.spec.scheduler_name]
        r = self.results.setdefault(pod.key, PodResult(pod))
        r.attempts += 1
        with self._lock:
            self.cache.update_snapshot(self.snapshot)
        state = CycleState()
        moves_before = self.queue.moved_since
        try:
            result = algo.schedule_pod(state, pod, self.explain)
        except FitError as fe:
            self._handle_fit_error(fwk, state, qpi, r, fe, moves_before)
            return r
        except CycleError as ce:
            self._fail(qpi, r, ce.status, moves_before)
            return r
        host = result.suggested_host
        if self.explain:
            self._explain_success(r, result)
        assumed = pod.with_node_name(host)
        if assumed.status.nominated_node_name:
            assumed = assumed.with_nominated_node_name("")
        with self._lock:
            self.cache.assume_pod(assumed)
        st = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._fail(qpi, r, st, moves_before, node=host)
            return r
        st = fwk.run_permit_plugins(state, assumed, host)
        if st is not None and not st.is_success() and not st.is_wait():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._fail(qpi, r, st, moves_before, node=host)
            return r
        self.nominator.delete_nominated_pod_if_exists(pod)
        if st is not None and st.is_wait() and self.bind_in_thread:
            t = threading.Thread(target=self._binding_cycle, args=(fwk, state, assumed, host, qpi, r), daemon=True)
            self._threads.append(t)
            t.start()
        else:
            self._binding_cycle(fwk, state, assumed, host, qpi, r)
        return r

    def _binding_cycle(self, fwk: Framework, state: CycleState, assumed: Pod, host: str, qpi: QueuedPodInfo,
                       r: PodResult) -> None:
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
        if st is not None and not st.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            with self._lock:
                # Freed resources may help other pods; the failed pod itself waits for a further event
                # (upstream excludes it from this move), so a binding that always fails cannot loop forever.
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)
                self._fail(qpi, r, st, self.queue.moved_since, node=host)
            return
        with self._lock:
            if self.cache.is_assumed(assumed.uid):
                # bound by a plugin other than DefaultBinder: the binding happened all the same
                self.cache.confirm(assumed)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
            r.outcome = SCHEDULED
            r.node = host
            r.message = ""
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

    @property
    def warnings(self) -> list[str]:
        """What the run skipped: extender calls that failed and were ignored as kube-scheduler ignores them."""
        out: list[str] = []
        for ext in self.extenders:
            out.extend(ext.skipped_warnings())
        return out

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

    # failures ---------------------------------------------------------------------------------
    def _handle_fit_error(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, r: PodResult,
                          fe: FitError, moves_before: int) -> None:
        d = fe.diagnosis
        names = [ni.name for ni in self.snapshot.list()]
        if self.explain:
            r.filter = {n: st.to_dict() for n, st in d.full_map(names).items()}
            r.scores, r.total_scores = {}, {}
        if fwk.has_post_filter_plugins():
            pfr, st = fwk.run_post_filter_plugins(state, qpi.pod, d.full_map(names))
            if st is not None and st.reasons:
                d.post_filter_msg = st.message()
            if pfr is not None and pfr.nominated_node_name:
                r.nominated_node = pfr.nominated_node_name
                r.victims = list(pfr.victims)
                qpi.pod_info = PodInfo(qpi.pod.with_nominated_node_name(pfr.nominated_node_name))
                self.nominator.add_nominated_pod(qpi.pod_info, pfr.nominated_node_name)
            elif pfr is not None and pfr.mode != "Noop" and qpi.pod.status.nominated_node_name:
                # Preemption found no room: the pod keeps no nomination (upstream clears it).
                self.nominator.delete_nominated_pod_if_exists(qpi.pod)
                qpi.pod_info = PodInfo(qpi.pod.with_nominated_node_name(""))
                r.nominated_node = None
        qpi.unschedulable_plugins = set(d.unschedulable_plugins)
        qpi.pending_plugins = set(d.pending_plugins)
        r.outcome = UNSCHEDULABLE
        r.node = None
        r.message = fe.message()
        self.queue.add_unschedulable(qpi, self.queue.moved_since != moves_before)

    def _fail(self, qpi: QueuedPodInfo, r: PodResult, st: Status, moves_before: int, node: str | None = None) -> None:
        r.outcome = UNSCHEDULABLE if st.is_rejected() else ERROR
        r.node = None
        r.plugin = st.plugin
        if st.is_rejected() and node is not None:
            r.message = f"0/1 nodes are available: 1 {st.message()}."
        else:
            r.message = st.message()
        if st.plugin:
            qpi.unschedulable_plugins = {st.plugin}
        if not st.is_rejected() and qpi.attempts < self.max_error_retries:
            # An error is no verdict about the cluster: retry after backoff, as upstream does, a bounded
            # number of times so that run() ends even when a plugin keeps failing.
            self.queue.add_unschedulable(qpi, moved_during_cycle=True)
            return
        self.queue.add_unschedulable(qpi, self.queue.moved_since != moves_before)

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
    def profile(self, name: str | None = None) -> Framework:
        if name is None:
            return next(iter(self.profiles.values()))
        fwk = self.profiles.get(name)
        if fwk is None:
            raise ConfigError(f"profile {name!r} not found")
        return fwk
