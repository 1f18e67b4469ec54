"""Issue 14: the reference Scheduler under random clusters, random pending pods and faulty plugins.

Hypothesis builds a cluster (nodes, running pods of various priorities), pending pods, and for each pod a plan of
faults: at Filter, Score, NormalizeScore, PostFilter, Reserve, Permit, PreBind, the application's binder or the
QueueSort, a plugin raises, returns the wrong shape, an invalid score or Permit timeout, rejects, errs or makes the
pod wait, once, twice or always. The default profile (with preemption) runs with a ``Faulty`` plugin beside it.

Properties, after ``run()``:

- run() returns (within a wall-clock bound), leaving no pod assumed and none waiting at Permit;
- every pending pod ends with exactly one outcome, consistent with the final cluster: a pod reported Scheduled is
  bound to its node, any other pod is not in the cluster; per node, the requests of the pods reported Scheduled
  plus the running pods still there fit the allocatable;
- evictions and the report agree: an evicted pod (a running pod gone, or a pending pod reported Preempted) is in
  exactly one preemptor's ``victims``, every listed victim is gone, a Preempted pod is never reported Scheduled;
- the same input and seed give the same report (bindings in the scheduling thread).

Examples: ``SF_FUZZ_EXAMPLES`` (default 25 per property in the normal run); see docs/testing-plugins.md for the
long run.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_framework.api import Node, Pod
from scheduling_framework.config import load_config
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.scheduler import ERROR, PREEMPTED, SCHEDULED, UNSCHEDULABLE, Scheduler
from scheduling_framework.status import Code, Status

EXAMPLES = int(os.environ.get("SF_FUZZ_EXAMPLES", "25"))
RUN_WALL_LIMIT = 60.0

ACTIONS: dict[str, tuple[str, ...]] = {
    "Filter": ("raise", "shape", "unschedulable", "error"),
    "Score": ("raise", "nan", "range", "error"),
    "NormalizeScore": ("shrink", "grow", "raise", "junk"),
    "PostFilter": ("raise", "shape"),
    "Reserve": ("raise", "unschedulable", "error"),
    "Permit": ("raise", "nan", "huge", "wait", "allow-later", "unschedulable", "shape"),
    "PreBind": ("raise", "unschedulable", "error"),
    "Binder": ("raise",),
    "QueueSort": ("raise",),
}


class Faults:
    """The fault plan, shared by the Faulty plugins and the binder: per pod name, point -> (action, times)."""

    def __init__(self, plans: dict[str, dict[str, tuple[str, int]]]) -> None:
        self.plans = plans
        self.seen: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def action(self, point: str, pod: Any) -> str | None:
        plan = self.plans.get(pod.name, {}).get(point)
        if plan is None:
            return None
        with self.lock:
            n = self.seen[(pod.name, point)] = self.seen.get((pod.name, point), 0) + 1
        return plan[0] if n <= plan[1] else None


def _reject(action: str) -> Status:
    return Status(Code.UNSCHEDULABLE if action == "unschedulable" else Code.ERROR, f"faulty {action}")


class Faulty:
    """Beside the default plugins at Filter, Score, PostFilter, Reserve, Permit and PreBind."""

    name = "Faulty"

    def __init__(self, faults: Faults, handle: Any) -> None:
        self.faults = faults
        self.handle = handle

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Any:
        a = self.faults.action("Filter", pod)
        if a == "raise":
            raise RuntimeError("faulty filter")
        if a == "shape":
            return 42
        return None if a is None else _reject(a)

    def score(self, state: CycleState, pod: Any, node_info: Any) -> Any:
        a = self.faults.action("Score", pod)
        if a == "raise":
            raise RuntimeError("faulty score")
        if a == "nan":
            return math.nan, None
        if a == "range":
            return 1000, None
        if a == "error":
            return 0, _reject(a)
        return node_info.allocatable.milli_cpu // 1000 % 101, None

    def score_extensions(self) -> Faulty:
        return self

    def normalize_score(self, state: CycleState, pod: Any, scores: list[NodeScore]) -> Any:
        a = self.faults.action("NormalizeScore", pod)
        if a == "raise":
            raise RuntimeError("faulty normalize")
        if a == "shrink" and scores:
            del scores[-1]
        elif a == "grow":
            scores.append(NodeScore("ghost", 0))
        elif a == "junk" and scores:
            scores[0] = None  # type: ignore[call-overload]
        return None

    def post_filter(self, state: CycleState, pod: Any, statuses: Any) -> Any:
        a = self.faults.action("PostFilter", pod)
        if a == "raise":
            raise RuntimeError("faulty post filter")
        if a == "shape":
            return "junk"
        return None, Status(Code.UNSCHEDULABLE)

    def reserve(self, state: CycleState, pod: Any, node_name: str) -> Any:
        a = self.faults.action("Reserve", pod)
        if a == "raise":
            raise RuntimeError("faulty reserve")
        return None if a is None else _reject(a)

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: Any, node_name: str) -> Any:
        a = self.faults.action("Permit", pod)
        if a is None:
            # a pod that passes lets the pods waiting for "allow-later" go (as a gang's last member does)
            for wp in self.handle.iterate_over_waiting_pods():
                wp.allow(self.name)
            return None, 0
        if a == "raise":
            raise RuntimeError("faulty permit")
        if a == "nan":
            return Status(Code.WAIT), math.nan
        if a == "huge":
            return Status(Code.WAIT), 10**400
        if a == "wait":
            return Status(Code.WAIT), 5
        if a == "allow-later":
            return Status(Code.WAIT), 60.0
        if a == "shape":
            return Status(Code.WAIT)
        return _reject(a), 0

    def pre_bind(self, state: CycleState, pod: Any, node_name: str) -> Any:
        a = self.faults.action("PreBind", pod)
        if a == "raise":
            raise RuntimeError("faulty pre bind")
        return None if a is None else _reject(a)


class FaultySort:
    """PrioritySort's order, except that comparing a pod planned to fail at QueueSort raises."""

    name = "FaultySort"

    def __init__(self, faults: Faults) -> None:
        self.faults = faults

    def less(self, a: Any, b: Any) -> bool:
        for q in (a, b):
            if self.faults.action("QueueSort", q.pod) is not None:
                raise RuntimeError("faulty less")
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb if pa != pb else a.timestamp < b.timestamp


CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler", "plugins": {
              "multiPoint": {"enabled": [{"name": "Faulty"}]},
              "queueSort": {"enabled": [{"name": "FaultySort"}], "disabled": [{"name": "*"}]}}}]}


def _scheduler(faults: Faults, seed: int, bind_in_thread: bool) -> Scheduler:
    reg = Registry()
    reg.merge(default_registry())
    reg.register("Faulty", lambda args, handle: Faulty(faults, handle))
    reg.register("FaultySort", lambda args, handle: FaultySort(faults))

    def binder(pod: Any, node: str) -> None:
        if faults.action("Binder", pod) is not None:
            raise RuntimeError("faulty binder")

    return Scheduler(load_config(CONFIG), reg, seed=seed, binder=binder, bind_in_thread=bind_in_thread)


def _node(i: int, cpu: int) -> Node:
    name = f"n{i}"
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                           "status": {"capacity": {"cpu": str(cpu), "memory": "8Gi", "pods": "20"}}})


def _pod(name: str, milli: int, priority: int, node: str = "") -> Pod:
    spec: dict[str, Any] = {"priority": priority, "containers": [
        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": f"{milli}m"}}}]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": spec})


points = st.sampled_from(sorted(ACTIONS))
plan_strategy = st.dictionaries(points, st.tuples(st.integers(0, 6), st.sampled_from((1, 2, 1000))), max_size=2)
cluster_strategy = st.fixed_dictionaries({
    "nodes": st.lists(st.integers(1, 4), min_size=1, max_size=4),
    "running": st.lists(st.tuples(st.integers(0, 3), st.integers(1, 20), st.integers(0, 2)), max_size=6),
    "pending": st.lists(st.tuples(st.integers(1, 20), st.integers(0, 3), plan_strategy), min_size=1, max_size=8),
    "seed": st.integers(0, 2**16),
})


def _build(ex: dict[str, Any]) -> tuple[list[Node], list[Pod], list[Pod], dict[str, dict[str, tuple[str, int]]]]:
    nodes = [_node(i, c) for i, c in enumerate(ex["nodes"])]
    free = {n.name: c * 1000 for n, c in zip(nodes, ex["nodes"], strict=True)}
    running: list[Pod] = []
    for j, (ni, hundreds, prio) in enumerate(ex["running"]):
        node = nodes[ni % len(nodes)].name
        milli = hundreds * 100
        if milli <= free[node]:  # running pods fit their node, as in a real cluster
            free[node] -= milli
            running.append(_pod(f"r{j}", milli, prio, node))
    pending: list[Pod] = []
    plans: dict[str, dict[str, tuple[str, int]]] = {}
    for k, (hundreds, prio, plan) in enumerate(ex["pending"]):
        name = f"p{k}"
        pending.append(_pod(name, hundreds * 100, prio))
        plans[name] = {pt: (ACTIONS[pt][a % len(ACTIONS[pt])], times) for pt, (a, times) in plan.items()}
    return nodes, running, pending, plans


def _run(ex: dict[str, Any], bind_in_thread: bool) -> tuple[Scheduler, list[Node], list[Pod], list[Pod]]:
    nodes, running, pending, plans = _build(ex)
    s = _scheduler(Faults(plans), ex["seed"], bind_in_thread)
    s.load(nodes, [*running, *pending])
    done: list[bool] = []
    t = threading.Thread(target=lambda: (s.run(), done.append(True)), daemon=True)
    t.start()
    t.join(RUN_WALL_LIMIT)
    assert done, "Scheduler.run() did not return"
    return s, nodes, running, pending


def _check_report(s: Scheduler, nodes: list[Node], running: list[Pod], pending: list[Pod]) -> None:
    cache = {p.key: p for p in s.cache.pods()}
    for p in cache.values():
        assert not s.cache.is_assumed(p.uid), f"{p.key} left assumed"
    assert all(len(f.waiting_pods) == 0 for f in s.profiles.values())

    requests = {p.key: p.spec.containers[0].resources.requests["cpu"].milli_value() for p in [*running, *pending]}
    used = {n.name: 0 for n in nodes}
    for p in running:
        if p.key in cache:
            used[p.spec.node_name] += requests[p.key]
    for p in pending:
        r = s.results[p.key]
        assert r.outcome in (SCHEDULED, UNSCHEDULABLE, ERROR, PREEMPTED), r.outcome
        if r.outcome == SCHEDULED:
            assert r.node is not None and cache.get(p.key) is not None, f"{p.key} reported Scheduled, not bound"
            assert cache[p.key].spec.node_name == r.node
            used[r.node] += requests[p.key]
        else:
            assert p.key not in cache, f"{p.key} reads {r.outcome} but is in the cluster"
            assert r.node is None
    for n in nodes:
        alloc = n.status.allocatable["cpu"].milli_value()
        assert used[n.name] <= alloc, f"{n.name}: reported pods need {used[n.name]}m of {alloc}m"

    evicted = {p.key for p in running if p.key not in cache}
    evicted |= {p.key for p in pending if s.results[p.key].outcome == PREEMPTED}
    listed: list[str] = [v for r in s.results.values() for v in r.victims]
    assert len(listed) == len(set(listed)), f"a victim listed twice: {listed}"
    assert set(listed) == evicted, f"victims {sorted(listed)} != evictions {sorted(evicted)}"
    for p in pending:
        r = s.results[p.key]
        if r.outcome == PREEMPTED:
            assert r.message.startswith("Preempted by pod default/")


def _report(s: Scheduler) -> list[tuple[Any, ...]]:
    return [(r.pod, r.outcome, r.node, r.nominated_node, tuple(r.victims), r.message, r.attempts)
            for r in s.results.values()]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
@given(ex=cluster_strategy, bind_in_thread=st.booleans())
def test_every_pending_pod_ends_with_one_outcome_consistent_with_the_cluster(ex: dict[str, Any],
                                                                               bind_in_thread: bool) -> None:
    s, nodes, running, pending = _run(ex, bind_in_thread)
    _check_report(s, nodes, running, pending)


@settings(max_examples=max(1, EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ex=cluster_strategy)
def test_same_input_and_seed_give_the_same_report(ex: dict[str, Any]) -> None:
    a = _run(ex, bind_in_thread=False)[0]
    b = _run(ex, bind_in_thread=False)[0]
    assert _report(a) == _report(b)
    assert a.warnings.to_list() == b.warnings.to_list()
