"""Issue 14 item 10: under the virtual clock, Permit timeouts pass as backoffs do (run() never sleeps through
them), while allow / reject by other plugins still decides first; under a real clock they stay real."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.scheduler import SCHEDULED, UNSCHEDULABLE, PodResult, Scheduler, VirtualClock
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import make_node, make_pod, scheduler


class Gang:
    """Permit: a pod waits until ``size`` pods of its gang reached Permit, then the last one allows them all
    (how coscheduling plugins use WaitingPod.allow). Pods not named gang-* pass."""

    name = "Gang"

    def __init__(self, size: int, timeout: float = 900.0) -> None:
        self.size = size
        self.timeout = timeout
        self.handle: Any = None
        self.arrived: list[str] = []

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
        if not pod.name.startswith("gang-"):
            return None, 0.0
        self.arrived.append(pod.uid)
        if len(self.arrived) < self.size:
            return Status(Code.WAIT), self.timeout
        for wp in self.handle.iterate_over_waiting_pods():
            wp.allow(self.name)
        return None, 0.0


def _run(s: Scheduler, pods: list[Any], cpu: str = "8") -> dict[str, PodResult]:
    s.load([make_node("n1", cpu=cpu)], pods)
    t0 = time.monotonic()
    out = {r.pod: r for r in s.run()}
    assert time.monotonic() - t0 < 5, "run() waited in wall-clock time"
    return out


@pytest.mark.parametrize("bind_in_thread", [True, False], ids=["binding-thread", "inline"])
def test_a_waiting_pod_times_out_in_virtual_time(bind_in_thread: bool) -> None:
    gang = Gang(size=3)
    s = scheduler({"permit": [gang]}, bind_in_thread=bind_in_thread)
    gang.handle = s.profile()
    results = _run(s, [make_pod("gang-a")])
    r = results["default/gang-a"]
    assert (r.outcome, r.plugin) == (UNSCHEDULABLE, "Gang")
    assert r.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 15m0s at plugin Gang."
    assert isinstance(s.clock, VirtualClock) and s.clock() >= 900.0
    assert s.cache.get_pod("gang-a") is None


def test_other_plugins_allow_before_the_virtual_timeout() -> None:
    gang = Gang(size=3)
    s = scheduler({"permit": [gang]})
    gang.handle = s.profile()
    results = _run(s, [make_pod(f"gang-{c}") for c in "abc"])
    assert {k: r.outcome for k, r in results.items()} == dict.fromkeys(
        ("default/gang-a", "default/gang-b", "default/gang-c"), SCHEDULED)
    assert s.clock() < 900.0  # nobody timed out


def test_reject_from_another_plugin_wins_over_the_timeout() -> None:
    class Rejector:
        name = "Rejector"

        def __init__(self) -> None:
            self.handle: Any = None

        def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
            if pod.name == "a":
                return Status(Code.WAIT), 60.0
            for wp in self.handle.iterate_over_waiting_pods():
                wp.reject(self.name, "gang broken")
            return None, 0.0

    rej = Rejector()
    s = scheduler({"permit": [rej]})
    rej.handle = s.profile()
    results = _run(s, [make_pod("a", priority=10), make_pod("b")])
    assert results["default/a"].message == "0/1 nodes are available: 1 gang broken."
    assert results["default/b"].outcome == SCHEDULED


def test_timeouts_and_backoffs_interleave_on_one_clock() -> None:
    """A pod in backoff (its first cycle erred) is retried at its backoff expiry, before a long Permit
    timeout of another pod passes."""

    class FailOnce:
        name = "FailOnce"

        def __init__(self) -> None:
            self.failed = False

        def filter(self, state: CycleState, pod: Any, ni: Any) -> Status | None:
            if pod.name == "b" and not self.failed:
                self.failed = True
                return Status(Code.ERROR, "transient")
            return None

    gang = Gang(size=2, timeout=300.0)
    s = scheduler({"filter": [FailOnce()], "permit": [gang]})
    gang.handle = s.profile()
    results = _run(s, [make_pod("gang-a", priority=10), make_pod("b"), make_pod("gang-z", priority=-1)])
    assert {k: r.outcome for k, r in results.items()} == dict.fromkeys(
        ("default/gang-a", "default/b", "default/gang-z"), SCHEDULED)
    assert s.clock() < 300.0


def test_real_clock_keeps_real_timers() -> None:
    gang = Gang(size=2, timeout=0.05)
    s = scheduler({"permit": [gang]}, clock=time.monotonic)
    gang.handle = s.profile()
    s.load([make_node("n1")], [make_pod("gang-a")])
    t0 = time.monotonic()
    r = {x.pod: x for x in s.run()}["default/gang-a"]
    assert time.monotonic() - t0 >= 0.04
    assert "rejected due to timeout after waiting 50ms at plugin Gang" in r.message


def test_external_thread_allow_under_a_real_clock() -> None:
    gang = Gang(size=5, timeout=10.0)
    s = scheduler({"permit": [gang]}, clock=time.monotonic)
    gang.handle = s.profile()

    def allow_when_waiting() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            wp = s.profile().get_waiting_pod("gang-a")
            if wp is not None:
                wp.allow("Gang")
                return
            time.sleep(0.001)

    t = threading.Thread(target=allow_when_waiting, daemon=True)
    t.start()
    r = _run(s, [make_pod("gang-a")])["default/gang-a"]
    t.join(5)
    assert r.outcome == SCHEDULED
