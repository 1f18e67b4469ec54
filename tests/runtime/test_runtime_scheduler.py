"""The reference Scheduler over fake plugins: scheduling cycle then binding cycle, Unreserve + forget on every
failure after Reserve, requeueing, Permit wait/allow/reject/timeout through the binding thread, and plugins that
raise at any point (the pod's outcome is "Error", the cache stays exact)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, PodResult, Scheduler
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import (
    INJECT_FILTER_REASON,
    INJECT_REASON,
    InjPlugin,
    Journal,
    ReservePlugin,
    make_node,
    make_pod,
    scheduler,
)

U, UU, E, W, SK = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.WAIT, Code.SKIP)


def _run(s: Scheduler, nodes: list[str], pods: list[Any], max_cycles: int | None = None) -> dict[str, PodResult]:
    s.load([make_node(n) for n in nodes], pods)
    return {r.pod: r for r in s.run(max_cycles)}


def _in_queue(s: Scheduler, uid: str) -> str | None:
    for pool, qpis in s.queue.pending_pods().items():
        if any(q.pod.uid == uid for q in qpis):
            return pool
    return None


def _assert_cache_exact(s: Scheduler) -> None:
    by_node: dict[str, list[Any]] = {}
    for p in s.cache.pods():
        by_node.setdefault(p.spec.node_name, []).append(p)
    for node in s.cache.nodes():
        got = s.cache.node_info(node.name)
        assert got is not None
        want = NodeInfo(node, by_node.get(node.name, []))
        assert got.snapshot_state() == want.snapshot_state()


class Recorder:
    """An application binder recording every bind."""

    def __init__(self) -> None:
        self.bound: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, pod: Any, node: str) -> None:
        with self._lock:
            self.bound.append((pod.uid, node))


# --- the happy path ------------------------------------------------------------------------------


def test_pods_are_scheduled_bound_and_accounted() -> None:
    rec = Recorder()
    s = scheduler({"filter": [InjPlugin("f")]}, binder=rec)
    results = _run(s, ["n1", "n2"], [make_pod("a", cpu="1"), make_pod("b", cpu="2")])
    assert {k: r.outcome for k, r in results.items()} == {"default/a": SCHEDULED, "default/b": SCHEDULED}
    assert sorted(uid for uid, _ in rec.bound) == ["a", "b"]
    for uid, node in rec.bound:
        pod = s.cache.get_pod(uid)
        assert pod is not None and pod.spec.node_name == node and not s.cache.is_assumed(uid)
    _assert_cache_exact(s)
    assert len(s.queue) == 0


def test_pod_deleted_while_queued_is_skipped_when_popped() -> None:
    """upstream skipPodSchedule: a pending pod that gets a deletionTimestamp while queued (its finalizers keep
    it, as in scheduler_perf's SchedulingDeletedPodsWithFinalizers) is dropped at pop, without a cycle."""
    from datetime import UTC, datetime

    from scheduling_framework.scheduler import SKIPPED

    s = scheduler({"filter": [InjPlugin("f")]})
    s.load([make_node("n1")], [make_pod("a"), make_pod("b")])
    a = make_pod("a")
    s.update_pod(a.with_deletion_timestamp(datetime(2026, 1, 1, tzinfo=UTC)))
    results = {r.pod: r for r in s.run()}
    assert results["default/a"].outcome == SKIPPED and "being deleted" in results["default/a"].message
    assert results["default/b"].outcome == SCHEDULED
    assert s.cache.get_pod(a.uid) is None and len(s.queue) == 0
    assert s.cycles == 1


def test_points_run_in_upstream_order_for_a_scheduled_pod() -> None:
    pl = InjPlugin("all", bind=SK)
    s = scheduler({p: [pl] for p in ("preFilter", "filter", "preScore", "score", "reserve", "permit", "preBind",
                                     "postBind")} | {"bind": [pl, "DefaultBinder"]})
    _run(s, ["n1", "n2"], [make_pod("a")])
    called = pl.points_called()
    assert [p for i, p in enumerate(called) if p not in called[:i]] == [
        "PreFilter", "Filter", "PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"]


def test_unschedulable_pod_gets_the_upstream_message_and_waits_in_the_queue() -> None:
    s = scheduler({"filter": [InjPlugin("f", filter=U)]})
    results = _run(s, ["n1", "n2", "n3"], [make_pod("a")])
    r = results["default/a"]
    assert (r.outcome, r.node) == (UNSCHEDULABLE, None)
    assert r.message == f"0/3 nodes are available: 3 {INJECT_FILTER_REASON}."
    assert _in_queue(s, "a") == "unschedulable"
    assert s.cache.get_pod("a") is None


# --- failures after Reserve: Unreserve (reverse order) and forget ---------------------------------

FAILURE_POINTS = [
    pytest.param({"reserve": "r2"}, U, id="Reserve rejects"),
    pytest.param({"reserve": "r2"}, E, id="Reserve errs"),
    pytest.param({"permit": "x"}, U, id="Permit rejects"),
    pytest.param({"permit": "x"}, E, id="Permit errs"),
    pytest.param({"preBind": "x"}, UU, id="PreBind rejects"),
    pytest.param({"preBind": "x"}, E, id="PreBind errs"),
    pytest.param({"bind": "x"}, U, id="Bind rejects"),
    pytest.param({"bind": "x"}, E, id="Bind errs"),
]


@pytest.mark.parametrize(("where", "code"), FAILURE_POINTS)
def test_failure_after_reserve_unreserves_in_reverse_order_and_forgets(where: dict[str, str], code: Code) -> None:
    journal = Journal()
    point = next(iter(where))
    r1, r3 = ReservePlugin("r1", journal), ReservePlugin("r3", journal)
    r2 = ReservePlugin("r2", journal, code if point == "reserve" else None)
    failing = InjPlugin("x", **{{"permit": "permit", "preBind": "pre_bind", "bind": "bind"}.get(point, "none"): code})
    points: dict[str, list[Any]] = {"reserve": [r1, r2, r3]}
    if point != "reserve":
        points[point] = [failing, "DefaultBinder"] if point == "bind" else [failing]
    rec = Recorder()
    s = scheduler(points, binder=rec)
    results = _run(s, ["n1"], [make_pod("a", cpu="1")], max_cycles=1)
    r = results["default/a"]
    assert r.outcome == (UNSCHEDULABLE if code != E else ERROR)
    assert r.plugin == where[point]
    want_reserved = ["r1", "r2"] if point == "reserve" else ["r1", "r2", "r3"]
    assert journal.of("Reserve") == want_reserved
    assert journal.of("Unreserve") == ["r3", "r2", "r1"]
    assert s.cache.get_pod("a") is None
    assert rec.bound == []
    _assert_cache_exact(s)
    assert _in_queue(s, "a") is not None


def test_rejection_after_reserve_has_the_upstream_fit_error_message() -> None:
    s = scheduler({"reserve": [InjPlugin("r", reserve=U)]})
    r = _run(s, ["n1", "n2"], [make_pod("a")], max_cycles=1)["default/a"]
    assert r.message == f"0/1 nodes are available: 1 {INJECT_REASON}."


def test_error_after_reserve_keeps_the_plugin_error_message() -> None:
    s = scheduler({"preBind": [InjPlugin("pb", pre_bind=E)]})
    r = _run(s, ["n1"], [make_pod("a")], max_cycles=1)["default/a"]
    assert r.message == f'running PreBind plugin "pb": {INJECT_REASON}'


def test_all_bind_plugins_skipping_is_an_error() -> None:
    s = scheduler({"bind": [InjPlugin("b1", bind=SK), InjPlugin("b2", bind=SK)]})
    r = _run(s, ["n1"], [make_pod("a")], max_cycles=1)["default/a"]
    assert r.outcome == ERROR
    assert s.cache.get_pod("a") is None


def test_bind_skip_chain_reaches_the_default_binder() -> None:
    rec = Recorder()
    s = scheduler({"bind": [InjPlugin("b1", bind=SK), InjPlugin("b2", bind=SK), "DefaultBinder"]}, binder=rec)
    r = _run(s, ["n1"], [make_pod("a")])["default/a"]
    assert (r.outcome, rec.bound) == (SCHEDULED, [("a", "n1")])


def test_pod_bound_by_a_custom_bind_plugin_is_removed_from_the_cache_on_delete() -> None:
    s = scheduler({"bind": [InjPlugin("MyBinder")]})
    assert _run(s, ["n1"], [make_pod("a", cpu="1")])["default/a"].outcome == SCHEDULED
    pod = s.cache.get_pod("a")
    assert pod is not None
    s.delete_pod(pod)
    assert s.cache.get_pod("a") is None
    ni = s.cache.node_info("n1")
    assert ni is not None and ni.requested.milli_cpu == 0


def test_retries_unreserve_once_per_failed_attempt() -> None:
    class FailTwiceForA:
        name = "flaky"

        def __init__(self) -> None:
            self.reserves: dict[str, int] = {}
            self.unreserves: dict[str, int] = {}

        def reserve(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
            self.reserves[pod.name] = self.reserves.get(pod.name, 0) + 1
            if pod.name == "a" and self.reserves["a"] <= 2:
                return Status(Code.UNSCHEDULABLE, "not yet")
            return None

        def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
            self.unreserves[pod.name] = self.unreserves.get(pod.name, 0) + 1

    flaky = FailTwiceForA()
    s = scheduler({"reserve": [flaky]})
    s.load([make_node("n1")], [make_pod("a", priority=10)])
    s.run()
    # each later pod's binding (an AssignedPodAdd event) requeues the failed pod
    for name in ("b", "c"):
        s.add_pod(make_pod(name))
        s.run()
    assert s.results["default/a"].outcome == SCHEDULED
    assert (flaky.reserves, flaky.unreserves) == ({"a": 3, "b": 1, "c": 1}, {"a": 2})
    _assert_cache_exact(s)


def test_failed_pod_is_requeued_by_a_cluster_event() -> None:
    flaky = InjPlugin("flaky", filter=U)
    s = scheduler({"filter": [flaky]})
    _run(s, ["n1"], [make_pod("a")])
    assert _in_queue(s, "a") == "unschedulable"
    flaky.inj["filter"] = None
    s.add_node(make_node("n2"))
    s.run()
    assert s.results["default/a"].outcome == SCHEDULED
    assert _in_queue(s, "a") is None


def test_pod_that_errored_is_retried_after_backoff() -> None:
    class Transient:
        name = "Transient"

        def __init__(self) -> None:
            self.n = 0

        def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
            self.n += 1
            return Status(Code.ERROR, "transient") if self.n == 1 else None

    s = scheduler({"filter": [Transient()]})
    assert _run(s, ["n1"], [make_pod("a")], max_cycles=10)["default/a"].outcome == SCHEDULED


# --- Permit wait / allow / reject / timeout through the binding thread ----------------------------


class Gate:
    """Permit plugin asking every pod to wait ``timeout`` seconds; keeps its handle for allow/reject."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.name = "Gate"
        self.timeout = timeout
        self.handle: Any = None

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status, float]:
        return Status(Code.WAIT), self.timeout


def _gate_scheduler(gate: Gate, journal: Journal, **kwargs: Any) -> Scheduler:
    s = scheduler({"permit": [gate], "reserve": [ReservePlugin("r", journal)]}, **kwargs)
    gate.handle = s.profile()
    return s


def _when_waiting(s: Scheduler, uid: str, action: Any) -> threading.Thread:
    def run() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            wp = s.profile().get_waiting_pod(uid)
            if wp is not None:
                action(wp)
                return
            time.sleep(0.001)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_permit_wait_then_allow_from_another_thread_binds() -> None:
    journal, gate, rec = Journal(), Gate(), Recorder()
    # another thread acts in real time: the virtual clock would let the 10 s timeout pass at once
    s = _gate_scheduler(gate, journal, binder=rec, clock=time.monotonic)
    t = _when_waiting(s, "a", lambda wp: wp.allow("Gate"))
    r = _run(s, ["n1"], [make_pod("a", cpu="1")])["default/a"]
    t.join(5)
    assert (r.outcome, r.node, rec.bound) == (SCHEDULED, "n1", [("a", "n1")])
    assert journal.of("Unreserve") == []
    _assert_cache_exact(s)


def test_permit_wait_then_reject_unreserves_and_forgets() -> None:
    journal, gate = Journal(), Gate()
    s = _gate_scheduler(gate, journal, clock=time.monotonic)
    t = _when_waiting(s, "a", lambda wp: wp.reject("Gate", "not now"))
    r = _run(s, ["n1"], [make_pod("a", cpu="1")], max_cycles=1)["default/a"]
    t.join(5)
    assert (r.outcome, r.plugin, r.message) == (UNSCHEDULABLE, "Gate", "0/1 nodes are available: 1 not now.")
    assert journal.of("Unreserve") == ["r"]
    assert s.cache.get_pod("a") is None
    _assert_cache_exact(s)


def test_permit_wait_times_out() -> None:
    journal, gate = Journal(), Gate(timeout=0.05)
    s = _gate_scheduler(gate, journal)
    r = _run(s, ["n1"], [make_pod("a", cpu="1")], max_cycles=1)["default/a"]
    assert (r.outcome, r.plugin) == (UNSCHEDULABLE, "Gate")
    assert "rejected due to timeout after waiting 50ms at plugin Gate" in r.message
    assert journal.of("Unreserve") == ["r"]
    assert s.cache.get_pod("a") is None


def test_waiting_pod_is_assumed_while_it_waits() -> None:
    journal, gate = Journal(), Gate()
    s = _gate_scheduler(gate, journal)
    s.load([make_node("n1")], [make_pod("a", cpu="1")])
    s.schedule_one()
    try:
        assert s.cache.is_assumed("a")
        ni = s.cache.node_info("n1")
        assert ni is not None and ni.requested.milli_cpu == 1000
    finally:
        s.profile().reject_waiting_pod("a")
        s.wait_for_bindings()
    assert s.cache.get_pod("a") is None


def test_deleting_a_waiting_pod_rejects_it() -> None:
    journal, gate = Journal(), Gate()
    s = _gate_scheduler(gate, journal)
    pod = make_pod("a", cpu="1")
    s.load([make_node("n1")], [pod])
    s.schedule_one()
    s.delete_pod(pod)
    s.wait_for_bindings()
    assert s.results["default/a"].outcome == UNSCHEDULABLE
    assert s.cache.get_pod("a") is None
    assert journal.of("Unreserve") == ["r"]


def test_permit_wait_without_binding_thread() -> None:
    journal, gate = Journal(), Gate(timeout=0.05)
    s = _gate_scheduler(gate, journal, bind_in_thread=False)
    r = _run(s, ["n1"], [make_pod("a")], max_cycles=1)["default/a"]
    assert (r.outcome, r.plugin) == (UNSCHEDULABLE, "Gate")


BUG_BINDING_REJECTION_RETRIED = (
    "BUG: scheduler.py Scheduler._binding_cycle moves all unschedulable pods (AssignedPodDelete) before recording "
    "the failure, so a pod rejected in the binding cycle (Permit wait rejected, PreBind, Bind) counts as 'moved "
    "during its cycle' and goes to backoff: it is retried forever and Scheduler.run() without max_cycles never "
    "returns. Upstream handleBindingCycleError defers that move and excludes the assumed pod for rejections, so "
    "the pod waits in unschedulablePods for a cluster event (pkg/scheduler/schedule_one.go)")


@pytest.mark.parametrize("point", ["permit", "preBind", "bind"])
def test_pod_rejected_in_the_binding_cycle_waits_for_an_event(point: str) -> None:
    if point == "permit":
        points: dict[str, list[Any]] = {"permit": [Gate(timeout=0.005)]}
    elif point == "preBind":
        points = {"preBind": [InjPlugin("x", pre_bind=U)]}
    else:
        points = {"bind": [InjPlugin("x", bind=U), "DefaultBinder"]}
    s = scheduler(points)
    r = _run(s, ["n1"], [make_pod("a")], max_cycles=10)["default/a"]
    assert (r.outcome, r.attempts) == (UNSCHEDULABLE, 1)
    assert _in_queue(s, "a") == "unschedulable"


# --- plugins that raise ---------------------------------------------------------------------------


def _boom(*args: Any) -> Any:
    raise RuntimeError("boom")


RAISING_POINTS = ["preFilter", "filter", "preScore", "score", "normalize_score", "reserve", "permit", "preBind",
                  "bind"]
METHOD = {"preFilter": "pre_filter", "filter": "filter", "preScore": "pre_score", "score": "score",
          "normalize_score": "normalize_score", "reserve": "reserve", "permit": "permit", "preBind": "pre_bind",
          "bind": "bind"}


@pytest.mark.parametrize("point", RAISING_POINTS)
def test_plugin_raising_gives_outcome_error_naming_it(point: str) -> None:
    bad = InjPlugin("Bad", normalize_ext=True, bind=SK)
    setattr(bad, METHOD[point], _boom)
    key = "score" if point == "normalize_score" else point
    rec = Recorder()
    points: dict[str, list[Any]] = {"reserve": [bad], key: [bad]}
    if key == "bind":
        points["bind"] = [bad, "DefaultBinder"]
    if key == "preScore":
        points["score"] = [bad]  # PreScore only runs when the profile scores
    s = scheduler(points, binder=rec)
    r = _run(s, ["n1", "n2"], [make_pod("a", cpu="1")], max_cycles=1)["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "Bad")
    assert "Bad" in r.message and "boom" in r.message
    assert s.cache.get_pod("a") is None and rec.bound == []
    _assert_cache_exact(s)
    assert _in_queue(s, "a") is not None


def test_post_filter_raising_keeps_the_pod_unschedulable_as_upstream() -> None:
    """Upstream treats a PostFilter error as a failed preemption attempt: the pod stays Unschedulable and the
    error message is appended to the FitError message (schedule_one.go schedulingCycle)."""
    bad = InjPlugin("Bad")
    setattr(bad, "post_filter", _boom)  # noqa: B010 - break one method of the fake
    s = scheduler({"filter": [InjPlugin("f", filter=U)], "postFilter": [bad]})
    r = _run(s, ["n1", "n2"], [make_pod("a")], max_cycles=1)["default/a"]
    assert r.outcome == UNSCHEDULABLE
    assert r.message.startswith(f"0/2 nodes are available: 2 {INJECT_FILTER_REASON}. ")
    assert "Bad" in r.message and "boom" in r.message


def test_unreserve_raising_does_not_stop_cleanup() -> None:
    journal = Journal()

    class BadUnreserve(ReservePlugin):
        def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
            super().unreserve(state, pod, node_name)
            raise RuntimeError("boom")

    s = scheduler({"reserve": [ReservePlugin("r1", journal), BadUnreserve("bad", journal)],
                   "preBind": [InjPlugin("pb", pre_bind=U)]})
    r = _run(s, ["n1"], [make_pod("a", cpu="1")], max_cycles=1)["default/a"]
    assert (r.outcome, r.plugin) == (UNSCHEDULABLE, "pb")
    assert journal.of("Unreserve") == ["bad", "r1"]
    assert s.cache.get_pod("a") is None
    _assert_cache_exact(s)


def test_post_bind_raising_keeps_the_pod_scheduled() -> None:
    bad = InjPlugin("Bad")
    setattr(bad, "post_bind", _boom)  # noqa: B010 - break one method of the fake
    s = scheduler({"postBind": [bad]})
    r = _run(s, ["n1"], [make_pod("a", cpu="1")])["default/a"]
    assert r.outcome == SCHEDULED
    _assert_cache_exact(s)


def test_pre_enqueue_raising_gates_the_pod_with_outcome_error() -> None:
    bad = InjPlugin("Bad")
    setattr(bad, "pre_enqueue", _boom)  # noqa: B010 - break one method of the fake
    s = scheduler({"preEnqueue": [bad]})
    r = _run(s, ["n1"], [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "Bad")
    assert "boom" in r.message
    assert _in_queue(s, "a") == "gated"
    assert s.cache.get_pod("a") is None


def test_pre_enqueue_rejection_gates_the_pod() -> None:
    s = scheduler({"preEnqueue": [InjPlugin("Gatekeeper", pre_enqueue=U)]})
    r = _run(s, ["n1"], [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin, r.attempts) == (UNSCHEDULABLE, "Gatekeeper", 0)
    assert _in_queue(s, "a") == "gated"


def test_queue_sort_raising_does_not_escape_raw() -> None:
    class BadSort:
        name = "BadSort"

        def less(self, a: Any, b: Any) -> bool:
            raise RuntimeError("sort boom")

    s = scheduler({"queueSort": [BadSort()]})
    try:
        _run(s, ["n1"], [make_pod("a"), make_pod("b")])
    except SchedulingFrameworkError as e:
        assert "BadSort" in str(e)
