"""Replaying a scenario on the reference Scheduler under the virtual clock.

After each step the scheduler runs until no pod is left to try (backoffs pass on the virtual clock), the
way a real scheduler would have settled before the next change. Each step then reports the cluster's state:
pods pending / scheduled / unschedulable, evictions during the step, utilization of the nodes, and the
cycle times of the step (wall clock, the only figures that differ between two runs of one scenario).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.api.fields import SNAKE_CASE_HINT, snake_case_hint
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.errors import ManifestValidationError, SchedulingFrameworkError, brief_str
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.scenario.io import cluster_problem, load_cluster_file
from scheduling_framework.scenario.model import Scenario, ScenarioError, Step, template_unknown_fields
from scheduling_framework.scheduler import Scheduler

# Outcome names of the reference scheduler's results (kept as strings: the scheduler may grow outcomes).
_UNSCHEDULABLE = "Unschedulable"
_ERROR = "Error"


@attrs.frozen
class StepReport:
    """The cluster after one step. ``p50_ms``/``p99_ms``/``cycles`` describe the step's scheduling cycles."""

    index: int
    op: str
    description: str
    time: float
    pods: int
    scheduled: int
    pending: int
    unschedulable: int
    errors: int
    evicted: int
    nodes: int
    nodes_used: int
    cpu_utilization: float
    memory_utilization: float
    cycles: int
    p50_ms: float
    p99_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.index, "op": self.op, "description": self.description, "time": self.time,
                "pods": self.pods, "scheduled": self.scheduled, "pending": self.pending,
                "unschedulable": self.unschedulable, "errors": self.errors, "evicted": self.evicted,
                "nodes": self.nodes, "nodesUsed": self.nodes_used,
                "utilization": {"cpu": self.cpu_utilization, "memory": self.memory_utilization},
                "cycles": self.cycles, "p50Ms": self.p50_ms, "p99Ms": self.p99_ms}


@attrs.frozen
class ReplayResult:
    """A scenario's timeline: step 0 is the starting cluster after its pending pods were scheduled."""

    name: str
    seed: int
    steps: tuple[StepReport, ...]
    warnings: tuple[str, ...]
    cycle_ms: tuple[float, ...] = attrs.field(repr=False)
    seconds: float = 0.0

    @property
    def final(self) -> StepReport:
        return self.steps[-1]

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.name, "seed": self.seed, "steps": [s.to_dict() for s in self.steps],
                "final": self.final.to_dict(), "warnings": list(self.warnings), "seconds": self.seconds}

    def __repr__(self) -> str:
        f = self.final
        return (f"ReplayResult({self.name!r}, seed={self.seed}, steps={len(self.steps)}, scheduled={f.scheduled}, "
                f"pending={f.pending}, evicted={sum(s.evicted for s in self.steps)})")


class _TimedScheduler(Scheduler):
    """The reference Scheduler, recording the wall time of every scheduling cycle.

    Wraps the one-cycle method the loop calls (internal to this package; the replay tests count cycles, so a
    rename there fails them rather than silently reporting zero cycles)."""

    cycle_ms: list[float]

    def _schedule_one(self) -> Any:
        t0 = time.perf_counter()
        r = super()._schedule_one()
        if r is not None:
            self.cycle_ms.append((time.perf_counter() - t0) * 1000.0)
        return r


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def starting_cluster(sc: Scenario, strict: bool = False) -> Cluster:
    """The starting cluster, and the unknown fields of the cluster and the templates: warnings (one per field
    and template, not one per object created from it), or with ``strict`` a ScenarioError naming each."""
    problems: list[str] = []
    if sc.cluster_file is not None:
        # Parsed once per process (validating the scenario parsed it already): a copy the replay may change.
        try:
            cluster = load_cluster_file(sc.cluster_file, strict)
        except SchedulingFrameworkError as e:  # lenient: only when the file changed or went since it was read
            problems.append(cluster_problem(sc.cluster_file.path, e))
            if not strict:
                raise ScenarioError(sc.name, problems) from None
    else:
        try:
            cluster = cluster_from_documents(sc.cluster, strict=strict)
        except ManifestValidationError as e:
            if not strict:
                raise
            problems.append(f"cluster: {e}")
    unknown = template_unknown_fields(sc)
    if strict:
        problems.extend(f"{where}: {msg}" for where, msg in unknown)
        if problems:
            raise ScenarioError(sc.name, problems)
    for where, msg in unknown:
        cluster.warnings.add_item(f"{msg} (ignored)", where)
    if snake_case_hint([msg for _, msg in unknown]):
        cluster.warnings.add(f"unknown fields: {SNAKE_CASE_HINT}")
    return cluster


class _Replay:
    def __init__(self, sc: Scenario, strict: bool = False) -> None:
        self.sc = sc
        self.strict = strict
        cluster = starting_cluster(sc, strict)
        sched = _TimedScheduler(dict(sc.config) if sc.config is not None else None, seed=sc.seed,
                                kubernetes_version=sc.kubernetes_version, feature_gates=sc.feature_gates)
        sched.cycle_ms = []
        self.sched = sched
        self.warnings = cluster.warnings
        # Pods the timeline knows: key -> (pod, template name or "" for pods of the starting cluster).
        self.pods: dict[str, tuple[Pod, str]] = {}
        self.nodes: dict[str, Node] = {n.name: n for n in cluster.nodes}
        self.counters: dict[str, int] = {}
        self.deleted: set[str] = set()
        #: the field path of the step running (``steps[2]``), for what it reports
        self.step_path = ""
        #: (``node``/``pod``, name) -> how it went (``deleted by steps[2]``): said when a later step names it
        self.gone: dict[tuple[str, str], str] = {}
        for p in cluster.pods:
            self.pods[p.key] = (p, "")
        sched.load(cluster.nodes, cluster.pods, cluster.objects, _checked=True)  # loading refused duplicates

    # --- ops ---------------------------------------------------------------------------------
    def _next_name(self, prefix: str, taken: Mapping[str, Any], namespace: str = "") -> str:
        i = self.counters.get(prefix, 0)
        while True:
            name = f"{prefix}-{i}"
            i += 1
            key = f"{namespace}/{name}" if namespace else name
            if key not in taken:
                self.counters[prefix] = i
                return name

    def create_nodes(self, step: Step) -> None:
        tmpl = self.sc.node_templates[step.template]
        for _ in range(step.count):
            m = copy.deepcopy(dict(tmpl))
            name = self._next_name(step.name_prefix, self.nodes)
            m["metadata"] = {**m.get("metadata", {}), "name": name}
            labels = dict(m["metadata"].get("labels") or {})
            if "kubernetes.io/hostname" in labels:
                labels["kubernetes.io/hostname"] = name  # the kubelet labels a node with its own name
                m["metadata"]["labels"] = labels
            node = Node.from_dict(m, strict=None)
            self.nodes[name] = node
            self.sched.add_node(node)

    def _new_pod(self, template: str, prefix: str, namespace: str) -> Pod:
        m = copy.deepcopy(dict(self.sc.pod_templates[template]))
        name = self._next_name(prefix, self.pods, namespace)
        meta = {**m.get("metadata", {}), "name": name, "namespace": namespace}
        meta.pop("uid", None)
        m["metadata"] = meta
        pod = Pod.from_dict(m, strict=None)
        self.pods[pod.key] = (pod, template)
        return pod

    def create_pods(self, step: Step) -> None:
        for _ in range(step.count):
            self.sched.add_pod(self._new_pod(step.template, step.name_prefix, step.namespace))

    def _select(self, step: Step, keys: list[str], what: str) -> list[str]:
        """The names among ``keys`` (nodes, or pods as ``namespace/name``) that ``step`` picks. Names that are
        not there are reported, as ``kubectl delete node ghost`` reports NotFound: a warning naming the step,
        or under ``strict`` a ScenarioError (a prefix matching nothing is a selector that selects nothing)."""
        if step.names:
            present = set(keys)
            names = list(dict.fromkeys(step.names))  # (a name listed twice is refused when the scenario is read)
            missing = [k for k in names if k not in present]
            if missing:
                self._not_found(step, what, missing)
            return [k for k in names if k in present]
        chosen = [k for k in keys if k.rsplit("/", 1)[-1].startswith(step.name_prefix)]
        return chosen[:step.count] if step.count else chosen

    def _not_found(self, step: Step, what: str, missing: list[str]) -> None:
        items = []
        for k in missing:
            why = self.gone.get((what, k))
            hint = f" ({why})" if why else (" (pods are named namespace/name)" if what == "pod" and "/" not in k
                                            else "")
            items.append(f'"{brief_str(k)}"{hint}')
        if self.strict:
            raise ScenarioError(self.sc.name, [f"{self.step_path}.names: Not found: {', '.join(items)}"])
        for item in items:
            self.warnings.add_item(f"{self.step_path}: {step.op} names {what}(s) that do not exist (nothing done for "
                                   "them)", item)

    def _live_pods(self) -> list[str]:
        return [k for k in self.pods if k not in self.deleted]

    def delete_pods(self, step: Step) -> None:
        for key in self._select(step, self._live_pods(), "pod"):
            self._delete_pod(key)

    def _delete_pod(self, key: str) -> None:
        pod, _ = self.pods[key]
        bound = self.sched.cache.get_pod(pod.uid)
        self.sched.delete_pod(bound if bound is not None else pod)
        self.deleted.add(key)
        self.gone[("pod", key)] = f"deleted by {self.step_path}"

    def delete_nodes(self, step: Step) -> int:
        evicted = 0
        for name in self._select(step, list(self.nodes), "node"):
            ni = self.sched.cache.node_info(name)
            victims = [pi.pod for pi in ni.pods] if ni is not None else []
            for p in victims:
                # The node is gone: its pods are deleted (pod GC) and, by default, their controller recreates
                # them as new pending pods (pods of the starting cluster are recreated from themselves).
                key = p.key
                known = self.pods.get(key)
                self.sched.delete_pod(p)
                self.deleted.add(key)
                self.gone[("pod", key)] = f"evicted by {self.step_path}, which deleted its node"
                evicted += 1
                if step.evicted_pods == "recreate":
                    self._recreate(p, known[1] if known else "")
            self.sched.remove_node(name)
            del self.nodes[name]
            self.gone[("node", name)] = f"deleted by {self.step_path}"
        return evicted

    def _recreate(self, pod: Pod, template: str) -> None:
        ns = pod.namespace
        if template:
            prefix = pod.name.rsplit("-", 1)[0]
            self.sched.add_pod(self._new_pod(template, prefix, ns))
            return
        m = pod.to_dict()
        spec = dict(m.get("spec") or {})
        spec.pop("nodeName", None)
        m["spec"] = spec
        m.pop("status", None)
        name = self._next_name(pod.name, self.pods, ns)
        m["metadata"] = {**m.get("metadata", {}), "name": name}
        m["metadata"].pop("uid", None)
        new = Pod.from_dict(m, strict=None)
        self.pods[new.key] = (new, "")
        self.sched.add_pod(new)

    def cordon(self, step: Step, unschedulable: bool) -> None:
        for name in self._select(step, list(self.nodes), "node"):
            m = self.nodes[name].to_dict()
            spec = dict(m.get("spec") or {})
            if unschedulable:
                spec["unschedulable"] = True
            else:
                spec.pop("unschedulable", None)
            m["spec"] = spec
            node = Node.from_dict(m, strict=None)
            self.nodes[name] = node
            self.sched.update_node(node)

    # --- the timeline ------------------------------------------------------------------------
    def run(self) -> ReplayResult:
        t0 = time.perf_counter()
        reports = [self._settle(0, "start", "starting cluster", 0)]
        for i, step in enumerate(self.sc.steps, start=1):
            evicted = 0
            self.step_path = f"steps[{i - 1}]"  # the scenario file's field path (the reports count from 1)
            if step.op == "createNodes":
                self.create_nodes(step)
            elif step.op == "createPods":
                self.create_pods(step)
            elif step.op == "deletePods":
                self.delete_pods(step)
            elif step.op == "deleteNodes":
                evicted = self.delete_nodes(step)
            elif step.op in ("cordonNodes", "uncordonNodes"):
                self.cordon(step, step.op == "cordonNodes")
            elif step.op == "wait":
                clock = self.sched.clock
                advance = getattr(clock, "advance_to", None)
                if advance is not None:
                    advance(clock() + step.seconds)
                self.sched.queue.flush_backoff_completed()
            reports.append(self._settle(i, step.op, step.describe(), evicted))
        self.warnings.extend(self.sched.warnings)
        return ReplayResult(self.sc.name, self.sc.seed, tuple(reports), tuple(self.warnings),
                            tuple(self.sched.cycle_ms), time.perf_counter() - t0)

    def _settle(self, index: int, op: str, description: str, evicted: int) -> StepReport:
        sched = self.sched
        before_cycles = len(sched.cycle_ms)
        bound_before = {p.uid for p in sched.cache.pods()}
        sched.run()
        step_ms = sched.cycle_ms[before_cycles:]
        bound_now = {p.uid for p in sched.cache.pods()}
        # Pods that were bound before the step settled and are gone now without being deleted by the timeline
        # were evicted by the scheduler (preemption victims).
        live_uids = {self.pods[k][0].uid for k in self._live_pods()}
        preempted = [u for u in bound_before - bound_now if u in live_uids]
        for key in self._live_pods():
            if self.pods[key][0].uid in preempted:
                self.deleted.add(key)
                self.gone[("pod", key)] = f"preempted after {self.step_path or 'the start'}"
        evicted += len(preempted)
        scheduled = pending = unschedulable = errors = 0
        results = sched.results
        for key in self._live_pods():
            pod = self.pods[key][0]
            if pod.uid in bound_now:
                scheduled += 1
                continue
            r = results.get(key)
            if r is not None and r.outcome not in (_UNSCHEDULABLE, _ERROR) and r.node is None:
                continue  # skipped by the scheduler (another scheduler's pod, being deleted): not ours to count
            pending += 1
            if r is not None and r.outcome == _UNSCHEDULABLE:
                unschedulable += 1
            elif r is not None and r.outcome == _ERROR:
                errors += 1
        cpu_req = cpu_alloc = mem_req = mem_alloc = 0
        used = 0
        infos = [sched.cache.node_info(n) for n in self.nodes]
        for ni in infos:
            if ni is None or ni.node is None:
                continue
            cpu_req += ni.requested.milli_cpu
            mem_req += ni.requested.memory
            cpu_alloc += ni.allocatable.milli_cpu
            mem_alloc += ni.allocatable.memory
            if ni.pods:
                used += 1
        return StepReport(index, op, description, float(sched.clock()), scheduled + pending, scheduled, pending,
                          unschedulable, errors, evicted, len(self.nodes), used,
                          round(cpu_req / cpu_alloc, 4) if cpu_alloc else 0.0,
                          round(mem_req / mem_alloc, 4) if mem_alloc else 0.0,
                          len(step_ms), round(_percentile(step_ms, 0.5), 3), round(_percentile(step_ms, 0.99), 3))


def run_scenario(scenario: Scenario, *, strict: bool = False) -> ReplayResult:
    """Replay ``scenario`` on a fresh reference Scheduler and return its timeline.

    Fields the Kubernetes API does not define, in the starting cluster or the templates, are in the result's
    ``warnings`` (once per template); ``strict=True`` raises ScenarioError naming each instead, before anything
    runs, as ``kubectl --validate=strict``. A step's ``names`` that name no node (or pod) at that point of the
    timeline are warnings naming the step (``steps[2]: deleteNodes names node(s) that do not exist (nothing
    done for them): "ghost"``); ``strict=True`` raises ScenarioError (``steps[2].names: Not found: "ghost"``)
    when that step runs."""
    return _Replay(scenario, strict).run()
