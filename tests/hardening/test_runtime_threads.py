"""Issue 14 item 11: several threads driving one Scheduler never overcommit a node.

run() and schedule_one() from several threads take turns (one loop at a time); events (add_pod, add_node, ...)
may come from any thread while a run is going on; a re-entrant call from inside a cycle is refused at once with
SchedulerBusyError."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulerBusyError, SchedulingFrameworkError
from scheduling_framework.scheduler import SCHEDULED, Scheduler
from scheduling_framework.status import Status
from tests.runtime.runtime_fakes import config, make_node, make_pod, registry_for, scheduler

TRIALS = 30


def _slow_binder(pod: Any, node: str) -> None:
    # widen the window in which another thread could run a cycle against a stale snapshot
    threading.Event().wait(0.0005)


def _assert_no_overcommit(s: Scheduler) -> None:
    for node in s.cache.nodes():
        ni = s.cache.node_info(node.name)
        assert ni is not None
        assert ni.requested.milli_cpu <= ni.allocatable.milli_cpu, f"{node.name} overcommitted"
    scheduled = [r for r in s.results.values() if r.outcome == SCHEDULED]
    bound = {p.key: p.spec.node_name for p in s.cache.pods()}
    for r in scheduled:
        assert bound.get(r.pod) == r.node


def _start(target: Any, n: int) -> list[threading.Thread]:
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def go() -> None:
        barrier.wait()
        try:
            target()
        except BaseException as e:  # surfaced by the test
            errors.append(e)

    threads = [threading.Thread(target=go, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a thread did not finish"
    assert errors == []
    return threads


class SlowFilter:
    """Filter that takes a little wall time, so that without turn-taking another thread's cycle would run
    against the same snapshot and pick the same room."""

    name = "SlowFilter"

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> None:
        threading.Event().wait(0.001)


def _fit_scheduler(seed: int) -> Scheduler:
    points: dict[str, list[Any]] = {"preFilter": ["NodeResourcesFit"], "filter": ["NodeResourcesFit", SlowFilter()]}
    reg = registry_for(points)
    reg.register("NodeResourcesFit", "plugins_intree.noderesources.fit:Fit")
    return Scheduler(config(points), reg, seed=seed, binder=_slow_binder)


@pytest.mark.parametrize("trial", range(TRIALS))
def test_two_threads_calling_run_never_overcommit(trial: int) -> None:
    s = _fit_scheduler(trial)
    s.load([make_node("n1", cpu="2"), make_node("n2", cpu="1")], [make_pod(f"p{i}", cpu="1") for i in range(6)])
    _start(s.run, 2)
    _assert_no_overcommit(s)
    assert sum(r.outcome == SCHEDULED for r in s.results.values()) == 3


def test_threads_mixing_run_schedule_one_and_events() -> None:
    s = _fit_scheduler(3)
    s.load([make_node("n1", cpu="4")], [make_pod(f"p{i}", cpu="1") for i in range(4)])
    added = threading.Event()

    def feeder() -> None:
        for i in range(4, 12):
            s.add_pod(make_pod(f"p{i}", cpu="1"))
        s.add_node(make_node("n2", cpu="4"))
        added.set()

    def one_by_one() -> None:
        while s.schedule_one() is not None:
            pass

    _start(lambda: (feeder(), one_by_one(), s.run()), 3)
    assert added.is_set()
    s.run()
    _assert_no_overcommit(s)
    assert sum(r.outcome == SCHEDULED for r in s.results.values()) == 8


class Reentrant:
    """A Filter plugin that calls back into the scheduler running it."""

    name = "Reentrant"

    def __init__(self, method: str) -> None:
        self.method = method
        self.sched: Scheduler | None = None
        self.caught: list[BaseException] = []

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        assert self.sched is not None
        try:
            getattr(self.sched, self.method)()
        except SchedulingFrameworkError as e:
            self.caught.append(e)
            raise
        return None


@pytest.mark.parametrize("method", ["run", "schedule_one"])
def test_a_reentrant_call_from_a_plugin_is_refused_at_once(method: str) -> None:
    plugin = Reentrant(method)
    s = scheduler({"filter": [plugin]})
    plugin.sched = s
    s.load([make_node("n1")], [make_pod("a")])
    r = {x.pod: x for x in s.run()}["default/a"]
    assert isinstance(plugin.caught[0], SchedulerBusyError)
    assert f"Scheduler.{method}() called while this thread is already running a cycle" in str(plugin.caught[0])
    assert (r.outcome, r.plugin) == ("Error", "Reentrant")  # the plugin's exception is its Error
