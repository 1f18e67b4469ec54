"""Issue 10 item 5: random failures injected at every extension point leave the scheduler's cache exact.

A Chaos plugin is enabled at every point. For each pod, hypothesis picks up to two points where Chaos fails the
first ``times`` times the pod gets there, and how: a status code, an exception, a wrong return shape, or (at
Permit) a wait that times out or is allowed from another thread. After the run:

- every pod is bound at most once, and exactly once when its outcome is Scheduled;
- a pod that is not Scheduled is not in the cache but back in the queue (active, backoff, unschedulable or
  gated), with outcome Unschedulable or Error;
- no pod is both in the cache and in the queue, and no pod is left assumed or waiting;
- every node's NodeInfo (requested, non-zero requested, pods, ports) equals a NodeInfo rebuilt from the cache's
  pods bound to it, and so does the scheduler's incrementally updated snapshot;
- Chaos's Reserve bookkeeping, undone by Unreserve, ends up holding exactly the Scheduled pods.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore, PreFilterResult
from scheduling_framework.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, Scheduler
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import DEFAULT_BINDER, config, make_node, make_pod, registry_for

FAIL_POINTS = ("PreEnqueue", "PreFilter", "Filter", "PostFilter", "PreScore", "Score", "NormalizeScore", "Reserve",
               "Unreserve", "Permit", "PreBind", "Bind", "PostBind")
ACTIONS = ("Unschedulable", "UnschedulableAndUnresolvable", "Error", "raise", "shape", "wait-timeout", "wait-allow")
NODE_NAMES = ("n1", "n2", "n3")


class Chaos:
    """Every extension point; fails at the point planned for a pod, the first ``times`` times it gets there."""

    name = "Chaos"

    def __init__(self, plans: dict[str, dict[str, tuple[str, int]]]) -> None:
        self.plans = plans
        self.handle: Any = None
        self.reserved: set[str] = set()
        self.seen: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def _fail(self, point: str, pod: Any) -> str | None:
        """The action to take at ``point`` for ``pod`` now, or None to behave."""
        plan = self.plans.get(pod.uid, {}).get(point)
        if plan is None:
            return None
        with self._lock:
            n = self.seen.get((pod.uid, point), 0) + 1
            self.seen[(pod.uid, point)] = n
        return plan[0] if n <= plan[1] else None

    @staticmethod
    def _status(action: str, shape: Any) -> Any:
        if action == "raise":
            raise RuntimeError("chaos")
        if action == "shape":
            return shape
        if action.startswith("wait"):
            return Status(Code.WAIT)
        return Status(Code.from_name(action), f"chaos {action}")

    def pre_enqueue(self, pod: Any) -> Any:
        action = self._fail("PreEnqueue", pod)
        return None if action is None else self._status(action, "gated")

    def less(self, a: Any, b: Any) -> bool:  # never enabled at QueueSort
        return False

    def pre_filter(self, state: CycleState, pod: Any, nodes: Sequence[NodeInfo]) -> Any:
        action = self._fail("PreFilter", pod)
        if action is None:
            return PreFilterResult(ni.name for ni in nodes), None
        return None, self._status(action, "ok")

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Any:
        action = self._fail("Filter", pod)
        if action is None:
            free = node_info.allocatable.milli_cpu - node_info.requested.milli_cpu
            if PodInfo(pod).requests.milli_cpu > free:
                return Status(Code.UNSCHEDULABLE, "Insufficient cpu")
            return None
        return self._status(action, False)

    def post_filter(self, state: CycleState, pod: Any, m: Any) -> Any:
        action = self._fail("PostFilter", pod)
        if action is None:
            return None, Status(Code.UNSCHEDULABLE, "chaos cannot preempt")
        return None, self._status(action, "ok")

    def pre_score(self, state: CycleState, pod: Any, nodes: Any) -> Any:
        action = self._fail("PreScore", pod)
        return None if action is None else self._status(action, {})

    def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Any:
        action = self._fail("Score", pod)
        if action is None:
            return (node_info.allocatable.milli_cpu - node_info.requested.milli_cpu) // 100 % 101, None
        if action == "shape":
            return 1.5, None
        return 0, self._status(action, None)

    def score_extensions(self) -> Chaos:
        return self

    def normalize_score(self, state: CycleState, pod: Any, scores: list[NodeScore]) -> Any:
        action = self._fail("NormalizeScore", pod)
        return None if action is None else self._status(action, "ok")

    def reserve(self, state: CycleState, pod: Any, node_name: str) -> Any:
        action = self._fail("Reserve", pod)
        if action is None:
            with self._lock:
                self.reserved.add(pod.uid)
            return None
        return self._status(action, 0)

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        with self._lock:
            self.reserved.discard(pod.uid)
        if self._fail("Unreserve", pod) is not None:
            raise RuntimeError("chaos unreserve")

    def permit(self, state: CycleState, pod: Any, node_name: str) -> Any:
        action = self._fail("Permit", pod)
        if action is None:
            return None, 0
        if action == "wait-allow":
            threading.Timer(0.002, self._allow, (pod.uid,)).start()
            return Status(Code.WAIT), 0.05
        if action == "wait-timeout":
            return Status(Code.WAIT), 0.005
        if action == "shape":
            return Status(Code.WAIT)
        return self._status(action, None), 0

    def _allow(self, uid: str) -> None:
        wp = self.handle.get_waiting_pod(uid) if self.handle is not None else None
        if wp is not None:
            wp.allow(self.name)

    def pre_bind(self, state: CycleState, pod: Any, node_name: str) -> Any:
        action = self._fail("PreBind", pod)
        return None if action is None else self._status(action, "ok")

    def bind(self, state: CycleState, pod: Any, node_name: str) -> Any:
        action = self._fail("Bind", pod)
        if action is None:
            return Status(Code.SKIP)  # not mine: DefaultBinder binds
        return self._status(action, "bound")

    def post_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
        if self._fail("PostBind", pod) is not None:
            raise RuntimeError("chaos post bind")


POINT_KEYS = ("preEnqueue", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind",
              "bind", "postBind")


def _scheduler(chaos: Chaos, seed: int) -> tuple[Scheduler, list[tuple[str, str]]]:
    bound: list[tuple[str, str]] = []
    lock = threading.Lock()

    def binder(pod: Any, node: str) -> None:
        with lock:
            bound.append((pod.uid, node))

    def factory(args: Any, handle: Any) -> Chaos:
        chaos.handle = handle
        return chaos

    points: dict[str, list[Any]] = {k: ["Chaos"] for k in POINT_KEYS}
    points["bind"] = ["Chaos", DEFAULT_BINDER]
    s = Scheduler(config(points), registry_for({}, [("Chaos", factory)]), seed=seed, binder=binder)
    return s, bound


# per pod: up to two points where Chaos fails, each with an action and how many times
plans_strategy = st.dictionaries(st.sampled_from(FAIL_POINTS),
                                 st.tuples(st.sampled_from(ACTIONS), st.sampled_from((1, 2, 1000))), max_size=2)
pods_strategy = st.lists(st.tuples(st.integers(1, 20), st.integers(0, 3), plans_strategy), min_size=1, max_size=10)


@settings(max_examples=int(os.environ.get("SF_FUZZ_EXAMPLES", "50")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(pods=pods_strategy, node_cpus=st.lists(st.integers(1, 6), min_size=2, max_size=3),
       seed=st.integers(0, 2**16))
def test_random_failures_leave_the_cache_exact(pods: list[tuple[int, int, Any]], node_cpus: list[int],
                                              seed: int) -> None:
    plans = {f"p{i}": plan for i, (_, _, plan) in enumerate(pods)}
    chaos = Chaos(plans)
    s, bound = _scheduler(chaos, seed)
    nodes = [make_node(NODE_NAMES[i], cpu=str(c)) for i, c in enumerate(node_cpus)]
    pod_objs = [make_pod(f"p{i}", cpu=f"{cpu * 100}m", priority=prio) for i, (cpu, prio, _) in enumerate(pods)]
    s.load(nodes, pod_objs)
    results = {r.pod: r for r in s.run(max_cycles=8 * len(pods))}
    s.wait_for_bindings()

    queued: dict[str, str] = {}
    for pool, qpis in s.queue.pending_pods().items():
        for q in qpis:
            assert q.pod.uid not in queued, f"{q.pod.uid} is twice in the queue"
            queued[q.pod.uid] = pool
    bind_count: dict[str, int] = {}
    for uid, _ in bound:
        bind_count[uid] = bind_count.get(uid, 0) + 1
    cached = {p.uid: p for p in s.cache.pods()}

    for pod in pod_objs:
        uid = pod.uid
        r = results[pod.key]
        assert r.outcome in (SCHEDULED, UNSCHEDULABLE, ERROR)
        assert bind_count.get(uid, 0) <= 1, f"{uid} bound {bind_count[uid]} times"
        assert not (uid in cached and uid in queued), f"{uid} is both in the cache and in the queue ({queued[uid]})"
        assert not s.cache.is_assumed(uid), f"{uid} left assumed"
        if r.outcome == SCHEDULED:
            assert bind_count.get(uid) == 1
            assert uid in cached and cached[uid].spec.node_name == r.node
            assert (uid, r.node) in bound
        else:
            assert uid not in cached
            assert bind_count.get(uid, 0) == 0
            assert uid in queued, f"{uid} ({r.outcome}) is neither bound nor queued"

    assert set(cached) == {p.uid for p in pod_objs if results[p.key].outcome == SCHEDULED}
    assert chaos.reserved == set(cached)
    assert len(s.profile().waiting_pods) == 0

    by_node: dict[str, list[Any]] = {}
    for p in cached.values():
        by_node.setdefault(p.spec.node_name, []).append(p)
    s.cache.update_snapshot(s.snapshot)
    for node in nodes:
        want = NodeInfo(node, by_node.get(node.name, [])).snapshot_state()
        got = s.cache.node_info(node.name)
        assert got is not None and got.snapshot_state() == want
        assert s.snapshot.get(node.name).snapshot_state() == want
