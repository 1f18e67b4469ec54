"""Reserve / Unreserve, Permit and waiting pods, PreBind, Bind, PostBind: upstream framework_test.go
TestReservePlugins, TestPermitPlugins, TestWaitOnPermit, TestRejectWaitingPod, TestPreBindPlugins,
TestRunBindPlugins, plus unreserve order, the bind SKIP chain and permit timeouts."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import INJECT_REASON, InjPlugin, Journal, ReservePlugin, build, make_pod

POD = make_pod("pod", uid="pod")
U, UU, E, S, W, SK = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.SUCCESS, Code.WAIT,
                      Code.SKIP)


def _triple(st: Status | None) -> tuple[Code, list[str], str] | None:
    return None if st is None else (st.code, st.reasons, st.plugin)


def _rej(code: Code, plugin: str) -> tuple[Code, list[str], str]:
    return code, [INJECT_REASON], plugin


def _err(point: str, plugin: str) -> tuple[Code, list[str], str]:
    return E, [f'running {point} plugin "{plugin}": {INJECT_REASON}'], plugin


# --- Reserve -------------------------------------------------------------------------------------

RESERVE_CASES = [
    pytest.param([], None, id="NoReservePlugin"),
    pytest.param([("TestPlugin", S)], None, id="SuccessReservePlugins"),
    pytest.param([("TestPlugin", U)], _rej(U, "TestPlugin"), id="UnschedulableReservePlugin"),
    pytest.param([("TestPlugin", E)], _err("Reserve", "TestPlugin"), id="ErrorReservePlugin"),
    pytest.param([("TestPlugin", UU)], _rej(UU, "TestPlugin"), id="UnschedulableAndUnresolvableReservePlugin"),
    pytest.param([("TestPlugin", S), ("TestPlugin 1", S)], None, id="SuccessSuccessReservePlugins"),
    pytest.param([("TestPlugin", E), ("TestPlugin 1", E)], _err("Reserve", "TestPlugin"),
                 id="ErrorErrorReservePlugins"),
    pytest.param([("TestPlugin", S), ("TestPlugin 1", E)], _err("Reserve", "TestPlugin 1"),
                 id="SuccessErrorReservePlugins"),
    pytest.param([("TestPlugin", E), ("TestPlugin 1", S)], _err("Reserve", "TestPlugin"),
                 id="ErrorSuccessReservePlugin"),
    pytest.param([("TestPlugin", U), ("TestPlugin 1", S)], _rej(U, "TestPlugin"),
                 id="UnschedulableAndSuccessReservePlugin"),
]


@pytest.mark.parametrize(("spec", "want"), RESERVE_CASES)
def test_reserve_plugins(spec: list[tuple[str, Code]], want: Any) -> None:
    fwk = build({"reserve": [InjPlugin(n, reserve=c) for n, c in spec]})
    assert _triple(fwk.run_reserve_plugins_reserve(CycleState(), POD, "")) == want


def test_reserve_stops_at_first_failure() -> None:
    journal = Journal()
    fwk = build({"reserve": [ReservePlugin("a", journal), ReservePlugin("b", journal, U), ReservePlugin("c", journal)]})
    fwk.run_reserve_plugins_reserve(CycleState(), POD, "n")
    assert journal.of("Reserve") == ["a", "b"]


def test_unreserve_runs_every_plugin_in_reverse_order() -> None:
    journal = Journal()
    fwk = build({"reserve": [ReservePlugin(n, journal) for n in ("a", "b", "c")]})
    fwk.run_reserve_plugins_unreserve(CycleState(), POD, "n")
    assert journal.of("Unreserve") == ["c", "b", "a"]


def test_unreserve_reaches_every_plugin_when_one_raises() -> None:
    journal = Journal()

    class Raising(ReservePlugin):
        def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
            super().unreserve(state, pod, node_name)
            raise RuntimeError("unreserve boom")

    fwk = build({"reserve": [ReservePlugin("a", journal), Raising("b", journal), ReservePlugin("c", journal)]})
    fwk.run_reserve_plugins_unreserve(CycleState(), POD, "n")
    assert journal.of("Unreserve") == ["c", "b", "a"]


def test_error_message_keeps_apostrophes_of_the_plugin_reason() -> None:
    class Apostrophe:
        name = "Apostrophe"

        def reserve(self, state: CycleState, pod: Any, node_name: str) -> Status:
            return Status(Code.ERROR, "node's volume can't be reserved")

        def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
            return None

    st = build({"reserve": [Apostrophe()]}).run_reserve_plugins_reserve(CycleState(), POD, "n")
    assert st is not None and st.message() == 'running Reserve plugin "Apostrophe": node\'s volume can\'t be reserved'



# --- Permit --------------------------------------------------------------------------------------

PERMIT_CASES = [
    pytest.param([], None, id="NilPermitPlugin"),
    pytest.param([("TestPlugin", S)], None, id="SuccessPermitPlugin"),
    pytest.param([("TestPlugin", U)], _rej(U, "TestPlugin"), id="UnschedulablePermitPlugin"),
    pytest.param([("TestPlugin", E)], _err("Permit", "TestPlugin"), id="ErrorPermitPlugin"),
    pytest.param([("TestPlugin", UU)], _rej(UU, "TestPlugin"), id="UnschedulableAndUnresolvablePermitPlugin"),
    pytest.param([("TestPlugin", W)], (W, ['one or more plugins asked to wait and no plugin rejected pod "pod"'], ""),
                 id="WaitPermitPlugin"),
    pytest.param([("TestPlugin", S), ("TestPlugin 1", S)], None, id="SuccessSuccessPermitPlugin"),
    pytest.param([("TestPlugin", E), ("TestPlugin 1", E)], _err("Permit", "TestPlugin"), id="ErrorAndErrorPlugins"),
]


@pytest.mark.parametrize(("spec", "want"), PERMIT_CASES)
def test_permit_plugins(spec: list[tuple[str, Code]], want: Any) -> None:
    fwk = build({"permit": [InjPlugin(n, permit=c, permit_timeout=10.0) for n, c in spec]})
    try:
        assert _triple(fwk.run_permit_plugins(CycleState(), POD, "")) == want
    finally:
        fwk.reject_waiting_pod(POD.uid)


def test_permit_rejection_after_a_wait_does_not_leave_a_waiting_pod() -> None:
    fwk = build({"permit": [InjPlugin("waiter", permit=W, permit_timeout=10.0), InjPlugin("rejector", permit=U)]})
    st = fwk.run_permit_plugins(CycleState(), POD, "n")
    assert st is not None and (st.code, st.plugin) == (U, "rejector")
    assert fwk.get_waiting_pod(POD.uid) is None


class _Waiter:
    """upstream TestPermitPlugin: always asks to wait."""

    def __init__(self, name: str = "permit-plugin", timeout: float = 10.0) -> None:
        self.name = name
        self.timeout = timeout

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status, float]:
        return Status(Code.WAIT), self.timeout


def _later(fn: Any, delay: float = 0.01) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        fn()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


WAIT_ON_PERMIT_CASES = [
    pytest.param(lambda f: f.get_waiting_pod(POD.uid).reject("permit-plugin", "reject message"),
                 (U, ["reject message"], "permit-plugin"), id="Reject Waiting Pod"),
    pytest.param(lambda f: f.get_waiting_pod(POD.uid).allow("permit-plugin"), None, id="Allow Waiting Pod"),
]


@pytest.mark.parametrize(("action", "want"), WAIT_ON_PERMIT_CASES)
def test_wait_on_permit(action: Any, want: Any) -> None:
    fwk = build({"permit": [_Waiter()]})
    st = fwk.run_permit_plugins(CycleState(), POD, "")
    assert st is not None and st.code == W
    _later(lambda: action(fwk))
    assert _triple(fwk.wait_on_permit(POD)) == want
    assert fwk.get_waiting_pod(POD.uid) is None


def test_wait_on_permit_without_waiting_pod_is_success() -> None:
    assert build({"permit": [_Waiter()]}).wait_on_permit(POD) is None


def test_reject_waiting_pod() -> None:
    """upstream TestRejectWaitingPod, on today's API: RejectWaitingPod rejects with "removed"."""
    fwk = build({"permit": [_Waiter()]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    assert fwk.reject_waiting_pod(POD.uid) is True
    st = fwk.wait_on_permit(POD)
    assert st is not None and (st.code, st.message()) == (U, "removed")
    assert fwk.reject_waiting_pod(POD.uid) is False


def test_waiting_pod_is_visible_through_the_handle() -> None:
    fwk = build({"permit": [_Waiter("w1"), _Waiter("w2")]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    try:
        assert [wp.pod.uid for wp in fwk.iterate_over_waiting_pods()] == [POD.uid]
        wp = fwk.get_waiting_pod(POD.uid)
        assert wp is not None and wp.get_pending_plugins() == ["w1", "w2"]
    finally:
        fwk.reject_waiting_pod(POD.uid)


def test_permit_timeout_rejects_naming_the_plugin() -> None:
    fwk = build({"permit": [_Waiter(timeout=0.05)]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    start = time.monotonic()
    st = fwk.wait_on_permit(POD)
    assert time.monotonic() - start < 5
    assert _triple(st) == (U, ["rejected due to timeout after waiting 50ms at plugin permit-plugin"], "permit-plugin")


def test_all_waiting_plugins_must_allow() -> None:
    fwk = build({"permit": [_Waiter("w1"), _Waiter("w2")]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    wp = fwk.get_waiting_pod(POD.uid)
    assert wp is not None
    wp.allow("w1")
    assert wp.get_pending_plugins() == ["w2"]
    assert wp.wait(0.05).code == Code.ERROR  # still waiting
    _later(lambda: wp.allow("w2"))
    assert fwk.wait_on_permit(POD) is None


def test_one_reject_among_waiting_plugins_rejects() -> None:
    fwk = build({"permit": [_Waiter("w1"), _Waiter("w2")]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    wp = fwk.get_waiting_pod(POD.uid)
    assert wp is not None
    _later(lambda: wp.reject("w2", "nope"))
    assert _triple(fwk.wait_on_permit(POD)) == (U, ["nope"], "w2")


def test_allowing_a_plugin_stops_its_timeout() -> None:
    fwk = build({"permit": [_Waiter("fast", timeout=0.05), _Waiter("slow", timeout=10.0)]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    wp = fwk.get_waiting_pod(POD.uid)
    assert wp is not None
    wp.allow("fast")
    _later(lambda: wp.allow("slow"), delay=0.2)
    assert fwk.wait_on_permit(POD) is None


def test_first_timeout_among_waiting_plugins_rejects() -> None:
    fwk = build({"permit": [_Waiter("slow", timeout=10.0), _Waiter("fast", timeout=0.05)]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    st = fwk.wait_on_permit(POD)
    assert st is not None and (st.code, st.plugin) == (U, "fast")


def test_allow_after_reject_is_ignored() -> None:
    fwk = build({"permit": [_Waiter()]})
    fwk.run_permit_plugins(CycleState(), POD, "")
    wp = fwk.get_waiting_pod(POD.uid)
    assert wp is not None
    wp.reject("permit-plugin", "first")
    wp.allow("permit-plugin")
    assert _triple(fwk.wait_on_permit(POD)) == (U, ["first"], "permit-plugin")


# --- PreBind -------------------------------------------------------------------------------------

PRE_BIND_CASES = [
    pytest.param([], None, id="NoPreBindPlugin"),
    pytest.param([("TestPlugin", S)], None, id="SuccessPreBindPlugins"),
    pytest.param([("TestPlugin", U)], _rej(U, "TestPlugin"), id="UnschedulablePreBindPlugin"),
    pytest.param([("TestPlugin", E)], _err("PreBind", "TestPlugin"), id="ErrorPreBindPlugin"),
    pytest.param([("TestPlugin", UU)], _rej(UU, "TestPlugin"), id="UnschedulableAndUnresolvablePreBindPlugin"),
    pytest.param([("TestPlugin", S), ("TestPlugin 1", E)], _err("PreBind", "TestPlugin 1"),
                 id="SuccessErrorPreBindPlugins"),
    pytest.param([("TestPlugin", E), ("TestPlugin 1", S)], _err("PreBind", "TestPlugin"),
                 id="ErrorSuccessPreBindPlugin"),
    pytest.param([("TestPlugin", S), ("TestPlugin 1", S)], None, id="SuccessSuccessPreBindPlugin"),
    pytest.param([("TestPlugin", E), ("TestPlugin 1", E)], _err("PreBind", "TestPlugin"), id="ErrorAndErrorPlugins"),
    pytest.param([("TestPlugin", U), ("TestPlugin 1", S)], _rej(U, "TestPlugin"),
                 id="UnschedulableAndSuccessPreBindPlugin"),
]


@pytest.mark.parametrize(("spec", "want"), PRE_BIND_CASES)
def test_pre_bind_plugins(spec: list[tuple[str, Code]], want: Any) -> None:
    fwk = build({"preBind": [InjPlugin(n, pre_bind=c) for n, c in spec]})
    assert _triple(fwk.run_pre_bind_plugins(CycleState(), POD, "")) == want


# --- Bind ----------------------------------------------------------------------------------------

BIND_CASES = [
    pytest.param([S], S, id="simple success"),
    pytest.param([SK, E, S], E, id="error on second"),
    pytest.param([SK, SK, SK], SK, id="all skip"),
    pytest.param([SK, S, E], S, id="error on third, but not reached"),
    pytest.param([U], U, id="invalid status"),
    pytest.param([E], E, id="simple error"),
    pytest.param([SK, S], S, id="success on second, returns success"),
    pytest.param([SK, UU], UU, id="invalid status, returns error"),
    pytest.param([S, E], S, id="error after success status, returns success"),
    pytest.param([E, S], E, id="success after error status, returns error"),
]


@pytest.mark.parametrize(("injects", "want"), BIND_CASES)
def test_run_bind_plugins(injects: list[Code], want: Code) -> None:
    plugins = [InjPlugin(f"bind-{i}", bind=c) for i, c in enumerate(injects)]
    fwk = build({"bind": plugins})
    st = fwk.run_bind_plugins(CycleState(), POD, "")
    assert st.code == want
    if want not in (S, SK):
        failing = next(p for p in plugins if p.inj["bind"] == want)
        assert st.plugin == failing.name


def test_bind_skip_passes_to_the_next_bind_plugin() -> None:
    a, b, c = InjPlugin("a", bind=SK), InjPlugin("b"), InjPlugin("c")
    st = build({"bind": [a, b, c]}).run_bind_plugins(CycleState(), POD, "node1")
    assert st.code == S
    assert (a.points_called(), b.points_called(), c.points_called()) == (["Bind"], ["Bind"], [])


def test_bind_error_is_wrapped_and_names_plugin() -> None:
    st = build({"bind": [InjPlugin("b", bind=E)]}).run_bind_plugins(CycleState(), POD, "")
    assert _triple(st) == _err("Bind", "b")


def test_default_binder_calls_the_application_binder() -> None:
    bound: list[tuple[str, str]] = []
    fwk = build({}, binder=lambda pod, node: bound.append((pod.name, node)))
    assert fwk.run_bind_plugins(CycleState(), POD, "node1").code == S
    assert bound == [("pod", "node1")]


# --- PostBind ------------------------------------------------------------------------------------


def test_post_bind_runs_every_plugin_even_when_one_raises() -> None:
    journal = Journal()

    class PB:
        def __init__(self, name: str, boom: bool = False) -> None:
            self.name = name
            self.boom = boom

        def post_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
            journal.add(self.name, "PostBind")
            if self.boom:
                raise RuntimeError("post bind boom")

    build({"postBind": [PB("a"), PB("b", boom=True), PB("c")]}).run_post_bind_plugins(CycleState(), POD, "n")
    assert journal.of("PostBind") == ["a", "b", "c"]
