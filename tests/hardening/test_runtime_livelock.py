"""Issue 14 item 1: run() returns when several pods keep failing their binding cycle.

Before the fix, each failed binding moved every other failed pod back to the active queue, so two pods whose
binder raised requeued each other forever. Now the event of a forgotten assumed pod only requeues pods a
Filter rejected, errors are retried a bounded number of times, and a bound on cycles without progress ends
run() whatever the plugins do (reported in ``Scheduler.warnings``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, PodResult, Scheduler
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import InjPlugin, config, make_node, make_pod, registry_for, scheduler

RUN_TIMEOUT = 20.0  # seconds of wall time a run() may take before the test calls it a hang


def _run_bounded(s: Scheduler) -> dict[str, PodResult]:
    """run() in a thread; fail (instead of hanging the suite) when it does not return."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(s.run()), daemon=True)
    t.start()
    t.join(RUN_TIMEOUT)
    assert not t.is_alive(), "Scheduler.run() did not return"
    return {r.pod: r for r in out[0]}


class WaitForever:
    """Permit: every pod waits (the timeout passes on the virtual clock)."""

    name = "WaitForever"

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status, float]:
        return Status(Code.WAIT), 600.0


def _raise(pod: Any, node: str) -> None:
    raise RuntimeError("binder down")


# failure kind -> (scheduler factory, expected outcome, plugin the message names)
KINDS: dict[str, tuple[Any, str, str]] = {
    "binder-raises": (lambda: Scheduler(None, binder=_raise), ERROR, "DefaultBinder"),
    "prebind-unschedulable": (lambda: scheduler({"preBind": [InjPlugin("pb", pre_bind=Code.UNSCHEDULABLE)]}),
                              UNSCHEDULABLE, "pb"),
    "prebind-error": (lambda: scheduler({"preBind": [InjPlugin("pb", pre_bind=Code.ERROR)]}), ERROR, "pb"),
    "bind-error": (lambda: scheduler({"bind": [InjPlugin("b", bind=Code.ERROR)]}), ERROR, "b"),
    "bind-unschedulable": (lambda: scheduler({"bind": [InjPlugin("b", bind=Code.UNSCHEDULABLE)]}),
                           UNSCHEDULABLE, "b"),
    "reserve-error": (lambda: scheduler({"reserve": [InjPlugin("rs", reserve=Code.ERROR)]}), ERROR, "rs"),
    "reserve-unschedulable": (lambda: scheduler({"reserve": [InjPlugin("rs", reserve=Code.UNSCHEDULABLE)]}),
                              UNSCHEDULABLE, "rs"),
    "permit-reject": (lambda: scheduler({"permit": [InjPlugin("pm", permit=Code.UNSCHEDULABLE)]}),
                      UNSCHEDULABLE, "pm"),
    "permit-timeout": (lambda: scheduler({"permit": [WaitForever()]}), UNSCHEDULABLE, "WaitForever"),
    "permit-timeout-inline": (lambda: scheduler({"permit": [WaitForever()]}, bind_in_thread=False),
                              UNSCHEDULABLE, "WaitForever"),
}


@pytest.mark.parametrize("kind", list(KINDS), ids=list(KINDS))
@pytest.mark.parametrize("n_pods", [2, 3, 8], ids=["2pods", "3pods", "8pods"])
def test_run_returns_when_every_binding_fails(kind: str, n_pods: int) -> None:
    make, outcome, plugin = KINDS[kind]
    s = make()
    s.load([make_node("n1", cpu="4")], [make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
    results = _run_bounded(s)
    assert len(results) == n_pods
    for r in results.values():
        assert (r.outcome, r.plugin) == (outcome, plugin), r.message
        if outcome == ERROR:
            assert plugin in r.message  # rejections keep upstream's "0/1 nodes are available: ..." wording
        # errors are retried max_error_retries times; rejections wait for an event after one attempt
        assert r.attempts <= s.max_error_retries
    assert s.cache.pods() == [] or all(not s.cache.is_assumed(p.uid) for p in s.cache.pods())
    assert not s.warnings


def test_repro_from_the_issue_binder_raises_one_node_two_pods() -> None:
    s = Scheduler(None, binder=_raise)
    s.load([make_node("n1")], [make_pod("a", cpu="1"), make_pod("b", cpu="1")])
    results = _run_bounded(s)
    assert {k: r.outcome for k, r in results.items()} == {"default/a": ERROR, "default/b": ERROR}
    assert s.cycles <= 2 * s.max_error_retries


def test_freed_resources_still_requeue_a_pod_a_filter_rejected() -> None:
    """The fix keeps what the event is for: a pod rejected for lack of cpu (the node held an assumed pod whose
    binding then failed) is retried and binds."""

    class HoldBig:
        """Permit: "big" waits (its timeout passes on the virtual clock), so "small" is tried while big is
        assumed and is rejected for cpu; then big's wait times out and big is forgotten."""

        name = "HoldBig"

        def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
            return (Status(Code.WAIT), 5.0) if pod.name == "big" else (None, 0.0)

    points: dict[str, list[Any]] = {"preFilter": ["NodeResourcesFit"], "filter": ["NodeResourcesFit"],
                                    "permit": [HoldBig()]}
    reg = registry_for(points)
    reg.register("NodeResourcesFit", "plugins_intree.noderesources.fit:Fit")
    s = Scheduler(config(points), reg)
    s.load([make_node("n1", cpu="1")], [make_pod("big", cpu="1", priority=10), make_pod("small", cpu="1")])
    results = _run_bounded(s)
    outcomes = {k: r.outcome for k, r in results.items()}
    assert outcomes == {"default/big": UNSCHEDULABLE, "default/small": SCHEDULED}, outcomes
    assert results["default/small"].attempts >= 2  # rejected once for cpu, retried when big was forgotten


class Chatty:
    """A Filter plugin that rejects every pod and pokes the scheduler with a nomination clear each time: a
    plugin-made loop of events that changes nothing."""

    name = "Chatty"

    def __init__(self) -> None:
        self.handle: Any = None

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status:
        self.handle.clear_nominated_node_name(pod)
        return Status(Code.UNSCHEDULABLE, "never")


def test_cycles_without_progress_are_bounded_and_reported() -> None:
    chatty = Chatty()
    s = scheduler({"filter": [chatty]})
    chatty.handle = s.profile()
    s.max_cycles_without_progress = 50
    s.load([make_node("n1")], [make_pod("a"), make_pod("b")])
    results = _run_bounded(s)
    assert {r.outcome for r in results.values()} == {UNSCHEDULABLE}
    warnings = s.warnings.to_list()
    assert len(warnings) == 1
    assert "without progress" in warnings[0] and "default/a" in warnings[0]
    assert s.cycles <= 52


def test_the_default_bound_does_not_cut_a_normal_run_short() -> None:
    s = Scheduler(None)
    nodes = [make_node(f"n{i}", cpu="2") for i in range(5)]
    s.load(nodes, [make_pod(f"p{i}", cpu="1") for i in range(30)])
    results = _run_bounded(s)
    assert sum(r.outcome == SCHEDULED for r in results.values()) == 10
    assert not s.warnings
