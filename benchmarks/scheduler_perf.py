"""Run upstream scheduler_perf workloads through the reference Scheduler and report pods/s.

    python -m benchmarks.scheduler_perf [WORKLOAD ...] [--output table|json] [--smoke]
                                        [--in-process] [--profile FILE]

WORKLOAD is a test case (``SchedulingBasic``) or one workload (``SchedulingBasic/500Nodes``); none
runs every full-size workload (``--smoke``: upstream's tiny integration-test sizes instead).

What is measured, per workload (compare upstream's ``SchedulingThroughput``):

* **pods/s**: measured pods scheduled / seconds spent in the scheduling loop while they were pending
  (every ``schedule_one`` call in that phase, including failed and preempting attempts, interleaved
  churn pods and pods queued earlier without waiting (``skipWaitToCompletion``); the phase ends when
  every measured pod has been scheduled; building the pod objects and queueing them is not timed);
* **p50 / p99 ms**: the duration of each ``schedule_one`` call for a measured pod (scheduling cycle
  plus the in-memory binding cycle);
* **peak RSS**: the process's peak resident set (``ru_maxrss``). Each workload runs in a fresh child
  interpreter so the figure is its own (``--in-process`` runs them all in this process instead).

Background operations (``churn``, ``deletePods``) run between ``schedule_one`` calls on the clock of the
CPU time spent scheduling (the scheduler's virtual clock follows it too), where upstream runs them in
goroutines on a wall-clock ticker: the same on an idle machine, and not load-dependent on a shared one.

The profile is the default one (``config: null``); default plugins that are not registered in this
installation (volume plugins, DefaultPreemption while they are being written) are disabled, and the
report says which. A workload that needs a missing plugin is reported as skipped.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import dataclasses
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchmarks import cpu_model
from benchmarks.workloads import (
    WORKLOADS,
    AllocClaims,
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreateResourceDriver,
    DeletePods,
    SteadyState,
    Workload,
    select,
)
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from scheduling_framework.config.intree import DEFAULT_MULTI_POINT
from scheduling_framework.dra.allocator import AllocatedState, Allocator, DeviceID
from scheduling_framework.dra.allocator import Features as AllocatorFeatures
from scheduling_framework.registry import default_registry
from scheduling_framework.scheduler import SCHEDULED, Scheduler, VirtualClock

CONFIG_API = "kubescheduler.config.k8s.io/v1"


@dataclass
class Result:
    workload: str
    nodes: int = 0
    init_pods: int = 0
    measured_pods: int = 0
    scheduled: int = 0
    churn_pods: int = 0
    cycles: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    pods_per_second: float = 0.0
    cpu_pods_per_second: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    peak_rss_mib: float = 0.0
    threshold: float | None = None
    setup_seconds: float = 0.0
    upstream: bool = True
    skipped: str = ""
    disabled_plugins: list[str] = field(default_factory=list)


# --- configuration ---------------------------------------------------------------------------------


def missing_default_plugins() -> list[str]:
    """Default-profile plugins that are not registered in this installation."""
    names = set(default_registry().names())
    return [name for name, _ in DEFAULT_MULTI_POINT if name not in names]


def scheduler_config(disabled: Sequence[str]) -> dict[str, Any] | None:
    """The default configuration, minus ``disabled`` plugins (None: the plain default)."""
    if not disabled:
        return None
    return {"apiVersion": CONFIG_API, "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"disabled": [{"name": n} for n in disabled]}}}]}


# --- object factories ------------------------------------------------------------------------------


class _Factory:
    """Makes nodes and pods from templates the way scheduler_perf's preparers do."""

    def __init__(self) -> None:
        self.node_index = 0
        self.pod_index = 0
        self.namespaces: set[str] = set()

    def nodes(self, op: CreateNodes, count: int) -> list[Node]:
        out = []
        for i in range(count):
            m = copy.deepcopy(dict(op.template))
            meta = m.setdefault("metadata", {})
            name = meta.get("name") or f"{meta.pop('generateName', 'node-')}{self.node_index:05d}"
            self.node_index += 1
            meta["name"] = name
            labels = meta.setdefault("labels", {})
            labels.setdefault("kubernetes.io/hostname", name)  # the integration node preparer sets it
            if op.label_key:
                labels[op.label_key] = op.label_values[i % len(op.label_values)]
            out.append(Node.from_dict(m))
        return out

    def pods(self, template: Mapping[str, Any], count: int, namespace: str) -> list[Pod]:
        out = []
        for i in range(count):
            m = copy.deepcopy(dict(template))
            meta = m.setdefault("metadata", {})
            meta["name"] = f"{meta.pop('generateName', 'pod-')}{self.pod_index}"
            meta["namespace"] = namespace
            self.pod_index += 1
            for rc in m.get("spec", {}).get("resourceClaims") or []:
                # upstream's template text {{div .Index 5}}: five pods share one claim
                if "{div5}" in str(rc.get("resourceClaimName", "")):
                    rc["resourceClaimName"] = rc["resourceClaimName"].replace("{div5}", str(i // 5))
            out.append(Pod.from_dict(m))
        return out

    def objects(self, template: Mapping[str, Any] | Callable[[int], Mapping[str, Any]], count: int,
                namespace: str | None, first_index: int = 0) -> list[KubeObject]:
        out = []
        for i in range(first_index, first_index + count):
            m = copy.deepcopy(dict(template(i) if callable(template) else template))
            meta = m.setdefault("metadata", {})
            if "generateName" in meta:
                meta["name"] = f"{meta.pop('generateName')}{i}"
            if namespace:
                meta["namespace"] = namespace
            out.append(KubeObject.from_dict(m))
        return out


def _resource_slice(node: str, driver: str, devices: int) -> KubeObject:
    return KubeObject.from_dict({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{driver}"},
        "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"device-{i}"} for i in range(devices)]}})


def _alloc_claims(sched: Scheduler, namespace: str) -> None:
    """``allocResourceClaims``: each claim of the namespace (by name) is allocated by the structured allocator
    on the first node (by name) where it fits, given the devices allocated so far; no pod uses it.

    The search for a claim starts at the node the previous claim got: a node where a claim did not fit cannot
    take a later one of the same shape (the allocated devices only grow), and every namespace this op
    allocates holds claims from one template. Upstream tries the nodes from the first for every claim."""
    classes = {c.name: DeviceClass.from_dict(c.raw) for c in sched.objects.list("DeviceClass")}
    slices = [ResourceSlice.from_dict(s.raw) for s in sched.objects.list("ResourceSlice")]
    nodes = sorted(sched.cache.nodes(), key=lambda n: n.name)
    state = AllocatedState()
    first = 0
    for obj in sorted(sched.objects.list("ResourceClaim", namespace), key=lambda c: c.name):
        claim = ResourceClaim.from_dict(obj.raw)
        allocator = Allocator(AllocatorFeatures(), state, classes, slices)
        for i in range(first, len(nodes)):
            results = allocator.allocate(nodes[i], [claim])
            if results:
                first = i
                break
        else:
            raise RuntimeError(f"allocResourceClaims: claim {obj.namespace}/{obj.name} fits on no node")
        allocation = results[0]
        raw = copy.deepcopy(dict(obj.raw))
        raw["status"] = {"allocation": allocation.to_dict()}
        sched.add_object(KubeObject.from_dict(raw))
        state.allocated_devices.update(DeviceID(r.driver, r.pool, r.device) for r in allocation.results)


# --- the loop --------------------------------------------------------------------------------------


class _Ticker:
    """A background operation (``churn``, ``deletePods``): ``action`` runs every ``interval`` seconds of
    scheduling-loop time, until it returns False (nothing left to do). Upstream runs these in goroutines on a
    wall-clock ticker while the scheduler works; here they interleave with ``schedule_one`` calls, on the
    CPU time spent in the loop (building pod objects between operations does not make them fire)."""

    def __init__(self, interval: float, action: Callable[[], bool], start: float) -> None:
        self.interval = interval
        self.action = action
        self.due = start + interval  # the first tick: one interval after the operation ran


class _Churn:
    """``churn``'s objects: created and deleted through the scheduler's event methods."""

    def __init__(self, sched: Scheduler, factory: _Factory, op: Churn, namespace: str) -> None:
        self.sched = sched
        self.factory = factory
        self.op = op
        self.namespace = namespace
        self.ticks = 0
        self.pods_created = 0
        # recreate mode: per template, ``number`` slots holding the live object (None: empty)
        self.slots: list[list[Node | Pod | KubeObject | None]] = [[None] * max(op.number, 1) for _ in op.templates]

    def tick(self) -> bool:
        op = self.op
        if op.mode == "recreate":
            slot = self.ticks % op.number
            for objs, template in zip(self.slots, op.templates, strict=True):
                live = objs[slot]
                if live is None:
                    objs[slot] = self._create(template)
                else:
                    self._delete(live)
                    objs[slot] = None
        else:
            for template in op.templates:
                self._create(template)
        self.ticks += 1
        return op.mode == "recreate" or op.number == 0 or self.ticks < op.number

    def _create(self, template: Mapping[str, Any]) -> Node | Pod | KubeObject:
        kind = template.get("kind")
        if kind == "Pod":
            pod = self.factory.pods(template, 1, self.namespace)[0]
            self.sched.add_pod(pod)
            self.pods_created += 1
            return pod
        if kind == "Node":
            # created as a raw object (no node preparer: no hostname label), as upstream's dynamic client does
            m = copy.deepcopy(dict(template))
            meta = m.setdefault("metadata", {})
            meta["name"] = f"{meta.pop('generateName', 'node-')}{self.factory.node_index:05d}"
            self.factory.node_index += 1
            node = Node.from_dict(m)
            self.sched.add_node(node)
            return node
        obj = self.factory.objects(template, 1, self.namespace, self.ticks)[0]
        self.sched.add_object(obj)
        return obj

    def _delete(self, live: Node | Pod | KubeObject) -> None:
        if isinstance(live, Pod):
            self.sched.delete_pod(self.sched.cache.get_pod(live.uid) or live)
        elif isinstance(live, Node):
            self.sched.remove_node(live.name)
        else:
            self.sched.remove_object(live.kind, live.namespace, live.name)


def _pod_deleter(sched: Scheduler, pods: list[Pod]) -> Callable[[], bool]:
    """``deletePods``: one pod per call, in creation order. A pod with finalizers is not removed: the API
    server only sets its deletionTimestamp (what a pending one then meets is the scheduler's skip at pop)."""
    todo = list(reversed(pods))

    def delete_next() -> bool:
        if not todo:
            return False
        pod = todo.pop()
        current = sched.cache.get_pod(pod.uid) or pod
        if current.raw_manifest().get("metadata", {}).get("finalizers"):
            sched.update_pod(current.with_deletion_timestamp(datetime.now(UTC)))
        else:
            sched.delete_pod(current)
        return bool(todo)

    return delete_next


class _Loop:
    """Drives ``schedule_one`` until nothing is left to try (or, while pods are measured, until every measured
    pod is scheduled), timing measured pods' cycles and running the background operations in between."""

    def __init__(self, sched: Scheduler, factory: _Factory) -> None:
        self.sched = sched
        self.factory = factory
        self.tickers: list[_Ticker] = []
        self.churns: list[_Churn] = []
        self.loop_time = 0.0  # seconds spent in drain() so far: the background operations' clock
        # measured pods scheduled (once: a pod preempted later, by churn pods, still counts, as in upstream's
        # throughput, which counts pods as they get bound)
        self.measured_scheduled: set[str] = set()
        # (wall, CPU) clock just before the last drain's first cycle of a measured pod
        self.first_measured: tuple[float, float] | None = None

    def add_ticker(self, interval: float, action: Callable[[], bool]) -> None:
        self.tickers.append(_Ticker(interval, action, self.loop_time))

    @property
    def churn_pods(self) -> int:
        return sum(c.pods_created for c in self.churns)

    def _run_tickers(self, now: float) -> float:
        """Run each ticker that is due once; the next due time. A ticker that fell behind (a long scheduling
        cycle) skips the ticks it missed, as Go's time.Ticker drops ticks for a slow receiver."""
        for t in list(self.tickers):
            if t.due <= now:
                t.due += t.interval * (int((now - t.due) / t.interval) + 1)
                if not t.action():
                    self.tickers.remove(t)
        return min((t.due for t in self.tickers), default=float("inf"))

    def drain(self, measured: set[str] | None, latencies: list[float]) -> int:
        sched = self.sched
        clock = sched.clock
        perf = time.perf_counter
        # The background operations' clock is the CPU time spent scheduling: on an idle machine that is the wall
        # time upstream's tickers run on, and on a shared one the churn rate does not grow with the load.
        cpu = time.process_time
        cstart = cpu()
        base = self.loop_time
        next_due = min((t.due for t in self.tickers), default=float("inf"))
        done: set[str] = set()  # measured pods scheduled
        self.first_measured = None
        cycles = 0
        # The scheduler's clock (backoffs, Permit timeouts, the unschedulable pods' flush) follows the time spent
        # scheduling, as upstream's real clock moves while it works: a preemptor's 1 s backoff ends after a
        # second of scheduling others, not only once the queue runs dry.
        virtual = clock if isinstance(clock, VirtualClock) else None
        vstart = clock()
        while True:
            if next_due != float("inf"):
                now = base + cpu() - cstart
                if now >= next_due:
                    next_due = self._run_tickers(now)
            if virtual is not None:
                virtual.advance_to(vstart + cpu() - cstart)
            t0 = perf()
            r = sched.schedule_one()
            t1 = perf()
            if r is None:
                sched.wait_for_bindings()
                expiry = sched.queue.next_backoff_expiry()
                if expiry is None:
                    if sched.queue.active_len():
                        continue
                    break
                if isinstance(clock, VirtualClock):
                    clock.advance_to(expiry)
                else:  # pragma: no cover - the runner always uses the virtual clock
                    time.sleep(max(0.0, expiry - clock()))
                continue
            cycles += 1
            if measured is not None and r.pod in measured:
                latencies.append(t1 - t0)
                if self.first_measured is None:  # once per drain: the cycle's CPU time taken as its wall time
                    self.first_measured = (t0, time.process_time() - (t1 - t0))
                if r.outcome == SCHEDULED:
                    done.add(r.pod)
                    if len(done) == len(measured):
                        break  # upstream stops measuring once every measured pod is scheduled
        self.loop_time = base + cpu() - cstart
        self.measured_scheduled |= done
        return cycles


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_workload(w: Workload, profile_path: str | None = None, disable: Sequence[str] = ()) -> Result:
    """Run one workload in this process and measure it (``disable``: default plugins to leave out too)."""
    disabled = missing_default_plugins()
    disabled += [n for n in disable if n not in disabled]
    res = Result(w.full_name, threshold=w.threshold, upstream=w.upstream, disabled_plugins=disabled)
    absent = [n for n in w.needs if n in disabled]
    if absent:
        res.skipped = f"needs {', '.join(absent)}, which is not registered"
        return res
    t_setup = time.perf_counter()
    sched = Scheduler(scheduler_config(disabled), seed=0)
    factory = _Factory()
    loop = _Loop(sched, factory)
    latencies: list[float] = []
    measured_keys: list[str] = []
    pods_by_namespace: dict[str, list[Pod]] = {}  # what deletePods lists
    profiler = cProfile.Profile() if profile_path else None
    for op_index, op in enumerate(w.ops):
        if isinstance(op, CreateNodes):
            for node in factory.nodes(op, w.count(op.count)):
                sched.add_node(node)
            res.nodes += w.count(op.count)
        elif isinstance(op, CreateNamespaces):
            for i in range(op.count):
                _add_namespace(sched, factory, f"{op.prefix}-{i}")
        elif isinstance(op, CreateResourceDriver):
            n = w.count(op.max_claims)
            for name in sorted(nd.name for nd in sched.cache.nodes()):
                if name.startswith(op.node_prefix):
                    sched.add_object(_resource_slice(name, op.driver, n))
        elif isinstance(op, CreateAny):
            if op.namespace:
                _add_namespace(sched, factory, op.namespace)
            for o in factory.objects(op.template, w.count(op.count), op.namespace):
                sched.add_object(o)
        elif isinstance(op, AllocClaims):
            _alloc_claims(sched, op.namespace)
        elif isinstance(op, SteadyState):
            _add_namespace(sched, factory, op.namespace)
            res.setup_seconds += time.perf_counter() - t_setup
            if profiler is not None:
                profiler.enable()
            t0, c0 = time.perf_counter(), time.process_time()
            deadline = t0 + w.seconds(op.duration_s)
            while time.perf_counter() < deadline:
                pods = factory.pods(op.template, w.count(op.count), op.namespace)
                for p in pods:
                    sched.add_pod(p)
                measured = {p.key for p in pods}
                measured_keys.extend(p.key for p in pods)
                res.cycles += loop.drain(measured, latencies)
                for p in pods:
                    if sched.results[p.key].outcome == SCHEDULED:
                        sched.delete_pod(sched.cache.get_pod(p.uid) or p)
            res.seconds += time.perf_counter() - t0
            res.cpu_seconds += time.process_time() - c0
            if profiler is not None:
                profiler.disable()
            t_setup = time.perf_counter()
        elif isinstance(op, Churn):
            ns = f"namespace-{op_index}"
            _add_namespace(sched, factory, ns)
            churn = _Churn(sched, factory, op, ns)
            loop.churns.append(churn)
            loop.add_ticker(op.interval_ms / 1000.0, churn.tick)
        elif isinstance(op, Barrier):
            loop.drain(None, latencies)
        elif isinstance(op, DeletePods):
            deleter = _pod_deleter(sched, pods_by_namespace.get(op.namespace, []))
            loop.add_ticker(1.0 / op.per_second, deleter)
        elif isinstance(op, CreatePods):
            ns = op.namespace or f"namespace-{op_index}"
            _add_namespace(sched, factory, ns)
            template = op.template if op.template is not None else w.default_pod_template
            pods = factory.pods(template, w.count(op.count), ns)
            pods_by_namespace.setdefault(ns, []).extend(pods)
            for p in pods:
                sched.add_pod(p)
            if op.skip_wait:
                res.init_pods += len(pods)
                continue
            if not op.collect_metrics:
                res.init_pods += len(pods)
                loop.drain(None, latencies)
                continue
            measured = {p.key for p in pods}
            measured_keys.extend(p.key for p in pods)
            res.setup_seconds += time.perf_counter() - t_setup
            if profiler is not None:
                profiler.enable()
            t0, c0 = time.perf_counter(), time.process_time()
            res.cycles += loop.drain(measured, latencies)
            # upstream's throughput samples start with the first measured pod scheduled: pods queued earlier
            # without waiting (skipWaitToCompletion) and scheduled first are not charged to the measured ones
            t0, c0 = loop.first_measured or (t0, c0)
            res.seconds += time.perf_counter() - t0
            res.cpu_seconds += time.process_time() - c0
            if profiler is not None:
                profiler.disable()
            t_setup = time.perf_counter()
    res.measured_pods = len(measured_keys)
    res.scheduled = len(loop.measured_scheduled)
    res.churn_pods = loop.churn_pods
    res.pods_per_second = res.scheduled / res.seconds if res.seconds > 0 else 0.0
    res.cpu_pods_per_second = res.scheduled / res.cpu_seconds if res.cpu_seconds > 0 else 0.0
    lat = sorted(latencies)
    res.p50_ms = _percentile(lat, 0.50) * 1000
    res.p99_ms = _percentile(lat, 0.99) * 1000
    res.peak_rss_mib = _peak_rss_mib()
    if profiler is not None and profile_path:
        profiler.dump_stats(profile_path)
    return res


def _add_namespace(sched: Scheduler, factory: _Factory, name: str) -> None:
    if name in factory.namespaces:
        return
    factory.namespaces.add(name)
    sched.add_object(KubeObject.from_dict({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))


def with_params(w: Workload, overrides: Sequence[str]) -> Workload:
    """``w`` with parameters overridden by ``NAME=N`` strings (ValueError naming a bad one)."""
    if not overrides:
        return w
    params = dict(w.params)
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise ValueError(f"--set {item!r}: expected PARAM=N with a non-negative integer N")
        if name not in params:
            raise ValueError(f"--set {item!r}: {w.full_name} has no parameter {name!r} "
                             f"(it has {', '.join(sorted(params))})")
        params[name] = int(value)
    return dataclasses.replace(w, params=params, threshold=None)  # upstream's threshold is for its size


def _param_args(w: Workload) -> list[str]:
    """--set arguments that give a child runner ``w``'s parameters where they differ from the listed workload's."""
    listed = next((x for x in WORKLOADS if x.full_name == w.full_name), None)
    if listed is None or listed.params == w.params:
        return []
    return [a for k, v in w.params.items() if listed.params.get(k) != v for a in ("--set", f"{k}={v}")]


def run_in_child(w: Workload, profile_path: str | None = None, disable: Sequence[str] = (),
                 tree: str | None = None) -> Result:
    """Run one workload in a fresh interpreter (so its peak RSS is its own), with this source tree or, with
    ``tree``, another checkout of the project (its own runner, scheduler and plugins: the baseline)."""
    cmd = [sys.executable, "-m", "benchmarks.scheduler_perf", "--in-process", "--output", "json", w.full_name,
           *_param_args(w)]
    if profile_path:
        cmd += ["--profile", profile_path]
    if disable:
        cmd += ["--disable", ",".join(disable)]
    root = tree if tree is not None else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.path.abspath(tree) + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{w.full_name} failed (exit {p.returncode}):\n{p.stderr[-4000:]}")
    # Only the fields both runners know (a baseline runner may be older or newer).
    fields = {f.name for f in dataclasses.fields(Result)}
    data = json.loads(p.stdout)["results"][0]
    return Result(**{k: v for k, v in data.items() if k in fields})


# --- reporting -------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = cpu_model()
    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": platform.platform()}


def profile_description(disabled: Sequence[str]) -> str:
    if not disabled:
        return "default"
    missing = set(missing_default_plugins())
    why = "not registered" if all(n in missing for n in disabled) else "not registered or --disable"
    return f"default minus {', '.join(disabled)} ({why})"


def format_table(results: Iterable[Result]) -> str:
    head = ("workload", "nodes", "init pods", "measured", "scheduled", "pods/s", "pods/CPU-s", "upstream threshold",
            "p50 ms", "p99 ms", "peak RSS MiB")
    rows: list[tuple[str, ...]] = []
    for r in results:
        name = r.workload + ("" if r.upstream else " (extra size)")
        if r.skipped:
            rows.append((name, str(r.nodes), "-", "-", "-", "skipped", "-", _thr(r.threshold), "-", "-", "-"))
            continue
        sched = f"{r.scheduled}/{r.measured_pods}" + (f" (+{r.churn_pods} churn)" if r.churn_pods else "")
        rows.append((name, str(r.nodes), str(r.init_pods), str(r.measured_pods), sched, f"{r.pods_per_second:.0f}",
                     f"{r.cpu_pods_per_second:.0f}", _thr(r.threshold), f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}",
                     f"{r.peak_rss_mib:.0f}"))
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def format_comparison(pairs: Iterable[tuple[Result | None, Result]]) -> str:
    """Before (the baseline tree) and after (this tree), side by side, one row per workload."""
    head = ("workload", "upstream threshold", "before pods/s", "after pods/s", "before pods/CPU-s",
            "after pods/CPU-s", "speed-up (CPU)", "before p50 ms", "after p50 ms", "before RSS MiB", "after RSS MiB")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for before, after in pairs:
        name = after.workload + ("" if after.upstream else " (extra size)")
        b = before if before is not None and not before.skipped and before.cpu_pods_per_second else None
        speed = f"{after.cpu_pods_per_second / b.cpu_pods_per_second:.2f}x" if b is not None else "-"
        lines.append("| " + " | ".join((
            name, _thr(after.threshold),
            f"{b.pods_per_second:.0f}" if b else "-", f"{after.pods_per_second:.0f}",
            f"{b.cpu_pods_per_second:.0f}" if b else "-", f"{after.cpu_pods_per_second:.0f}", speed,
            f"{b.p50_ms:.2f}" if b else "-", f"{after.p50_ms:.2f}",
            f"{b.peak_rss_mib:.0f}" if b else "-", f"{after.peak_rss_mib:.0f}")) + " |")
    return "\n".join(lines)


def _thr(t: float | None) -> str:
    return "-" if t is None else f"{t:g}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scheduler_perf", description=__doc__.split("\n\n")[0])
    ap.add_argument("workloads", nargs="*", metavar="WORKLOAD", help="test case or TestCase/workload (default: all)")
    ap.add_argument("--output", choices=("table", "json"), default="table")
    ap.add_argument("--smoke", action="store_true", help="upstream's tiny integration-test sizes")
    ap.add_argument("--in-process", action="store_true", help="run every workload in this process")
    ap.add_argument("--profile", metavar="FILE", help="cProfile the measured loop into FILE (one workload)")
    ap.add_argument("--disable", metavar="PLUGIN,...", default="",
                    help="default plugins to leave out (e.g. to compare with a run where they did not exist)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="another checkout of this project (e.g. a git worktree of the commit before a change): "
                         "each workload runs there first, then here, and the table shows both side by side")
    ap.add_argument("--set", metavar="PARAM=N", action="append", default=[], dest="params",
                    help="override a workload parameter (e.g. --set initNodes=500 --set measurePods=300) to run a "
                         "smaller size, as for instruction counts under callgrind; repeatable")
    args = ap.parse_args(argv)
    disable = [n for n in args.disable.split(",") if n]
    try:
        selected = [with_params(w, args.params) for w in select(list(args.workloads), args.smoke)]
    except ValueError as e:
        ap.error(str(e))
    if args.profile and len(selected) != 1:
        ap.error("--profile takes exactly one workload")
    if args.baseline is not None:
        if args.in_process or args.profile:
            ap.error("--baseline runs every workload in child interpreters (no --in-process or --profile)")
        if not os.path.isfile(os.path.join(args.baseline, "benchmarks", "scheduler_perf.py")):
            ap.error(f"--baseline {args.baseline}: not a checkout of this project (no benchmarks/scheduler_perf.py)")
        return _compare(selected, disable, args.baseline, args.output)
    results: list[Result] = []
    for w in selected:
        r = run_workload(w, args.profile, disable) if args.in_process else run_in_child(w, args.profile, disable)
        results.append(r)
        print(f"# {format_table([r]).splitlines()[-1]}", file=sys.stderr, flush=True)
    disabled = missing_default_plugins()
    disabled += [n for n in disable if n not in disabled]
    return _report(args.output, {"profile": profile_description(disabled), "results": [asdict(r) for r in results]},
                   f"profile: {profile_description(disabled)}", format_table(results))


def _compare(selected: Sequence[Workload], disable: Sequence[str], baseline: str, output: str) -> int:
    pairs: list[tuple[Result | None, Result]] = []
    for w in selected:
        try:
            before: Result | None = run_in_child(w, None, disable, tree=baseline)
        except RuntimeError as e:  # e.g. a workload the baseline's runner does not have
            print(f"# baseline: {str(e).splitlines()[0]}", file=sys.stderr, flush=True)
            before = None
        after = run_in_child(w, None, disable)
        pairs.append((before, after))
        print(f"# {format_comparison([(before, after)]).splitlines()[-1]}", file=sys.stderr, flush=True)
    doc = {"baseline": os.path.abspath(baseline),
           "results": [{"before": asdict(b) if b else None, "after": asdict(a)} for b, a in pairs]}
    return _report(output, doc, f"before: {os.path.abspath(baseline)}; after: this tree", format_comparison(pairs))


def _report(output: str, doc: dict[str, Any], subtitle: str, table: str) -> int:
    """Print the run: ``doc`` with the machine as JSON, or the machine, ``subtitle`` and ``table``."""
    m = machine()
    if output == "json":
        json.dump({"machine": m, **doc}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"machine: {m['nproc']} x {m['cpu']}, {m['implementation']} {m['python']}")
    print(f"{subtitle}\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
