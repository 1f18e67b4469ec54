"""Filter, Filter with nominated pods and PostFilter: upstream framework_test.go TestFilterPlugins,
TestFilterPluginsWithNominatedPods, TestPostFilterPlugins, plus order / first-failure rules."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PostFilterResult
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import (
    INJECT_FILTER_REASON,
    INJECT_REASON,
    InjPlugin,
    Journal,
    build,
    make_node,
    make_pod,
)

POD = make_pod("p")


def _ni(name: str = "testNode", pods: tuple[Any, ...] = ()) -> NodeInfo:
    return NodeInfo(make_node(name), pods)


def _triple(st: Status | None) -> tuple[Code, list[str], str] | None:
    return None if st is None else (st.code, st.reasons, st.plugin)


def _err(plugin: str) -> tuple[Code, list[str], str]:
    return Code.ERROR, [f'running "{plugin}" filter plugin: {INJECT_FILTER_REASON}'], plugin


def _rej(code: Code, plugin: str) -> tuple[Code, list[str], str]:
    return code, [INJECT_FILTER_REASON], plugin


U, UU, E, S = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.SUCCESS

# upstream TestFilterPlugins: (plugins as (name, code)), skipped plugins, want (code, reasons, plugin)
FILTER_CASES = [
    pytest.param([("TestPlugin", S)], set(), None, id="SuccessFilter"),
    pytest.param([("TestPlugin", E)], set(), _err("TestPlugin"), id="ErrorFilter"),
    pytest.param([("TestPlugin", U)], set(), _rej(U, "TestPlugin"), id="UnschedulableFilter"),
    pytest.param([("TestPlugin", UU)], set(), _rej(UU, "TestPlugin"), id="UnschedulableAndUnresolvableFilter"),
    pytest.param([("TestPlugin1", E), ("TestPlugin2", E)], set(), _err("TestPlugin1"), id="ErrorAndErrorFilters"),
    pytest.param([("TestPlugin1", U), ("TestPlugin2", U)], set(), _rej(U, "TestPlugin1"),
                 id="UnschedulableAndUnschedulableFilters"),
    pytest.param([("TestPlugin1", UU), ("TestPlugin2", U)], set(), _rej(UU, "TestPlugin1"),
                 id="UnschedulableAndUnschedulableAndUnresolvableFilters"),
    pytest.param([("TestPlugin1", S), ("TestPlugin2", S)], set(), None, id="SuccessAndSuccessFilters"),
    pytest.param([("TestPlugin1", S), ("TestPlugin2", E)], {"TestPlugin2"}, None, id="SuccessAndSkipFilters"),
    pytest.param([("TestPlugin1", E), ("TestPlugin2", S)], set(), _err("TestPlugin1"), id="ErrorAndSuccessFilters"),
    pytest.param([("TestPlugin1", S), ("TestPlugin2", E)], set(), _err("TestPlugin2"), id="SuccessAndErrorFilters"),
    pytest.param([("TestPlugin1", S), ("TestPlugin2", U)], set(), _rej(U, "TestPlugin2"),
                 id="SuccessAndUnschedulableFilters"),
]


@pytest.mark.parametrize(("spec", "skipped", "want"), FILTER_CASES)
def test_filter_plugins(spec: list[tuple[str, Code]], skipped: set[str], want: Any) -> None:
    fwk = build({"filter": [InjPlugin(n, filter=c) for n, c in spec]})
    state = CycleState()
    state.skip_filter_plugins = set(skipped)
    assert _triple(fwk.run_filter_plugins(state, POD, _ni())) == want


class _JournalFilter:
    def __init__(self, name: str, journal: Journal, code: Code | None = None) -> None:
        self.name = name
        self.journal = journal
        self.code = code

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        self.journal.add(self.name, "Filter")
        return None if self.code is None else Status(self.code, "no")


def test_filter_runs_in_configured_order_and_stops_at_first_failure() -> None:
    journal = Journal()
    a, b, c, d = (_JournalFilter("a", journal), _JournalFilter("b", journal), _JournalFilter("c", journal, U),
                  _JournalFilter("d", journal))
    fwk = build({"filter": [b, a, c, d]})
    st = fwk.run_filter_plugins(CycleState(), POD, _ni())
    assert journal.of("Filter") == ["b", "a", "c"]
    assert st is not None and st.plugin == "c"


def test_filter_pending_is_a_rejection_not_an_error() -> None:
    fwk = build({"filter": [InjPlugin("p", filter=Code.PENDING)]})
    assert _triple(fwk.run_filter_plugins(CycleState(), POD, _ni())) == _rej(Code.PENDING, "p")


@pytest.mark.parametrize("code", [Code.SKIP, Code.WAIT])
def test_filter_other_codes_are_errors(code: Code) -> None:
    fwk = build({"filter": [InjPlugin("p", filter=code)]})
    st = fwk.run_filter_plugins(CycleState(), POD, _ni())
    assert st is not None and (st.code, st.plugin) == (Code.ERROR, "p")


def test_filter_explicit_success_status_is_success() -> None:
    later = InjPlugin("later")
    fwk = build({"filter": [InjPlugin("first", filter=Code.SUCCESS), later]})
    assert fwk.run_filter_plugins(CycleState(), POD, _ni()) is None
    assert later.points_called() == ["Filter"]


# --- Filter with nominated pods -----------------------------------------------------------------

LOW = make_pod("low", uid="low", priority=0)
HIGH = make_pod("high", uid="high", priority=1000)

# upstream TestFilterPluginsWithNominatedPods: pre-filter plugin, filter plugin, pod, nominated pod, want
NOMINATED_CASES = [
    pytest.param(None, None, LOW, None, None, id="node has no nominated pod"),
    pytest.param(InjPlugin("TestPlugin1", add_pod=S), InjPlugin("TestPlugin2", filter=S), LOW, HIGH, None,
                 id="node has a high-priority nominated pod and all filters succeed"),
    pytest.param(InjPlugin("TestPlugin1", add_pod=E), None, LOW, HIGH,
                 (E, [f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT_REASON}']),
                 id="node has a high-priority nominated pod and pre filters fail"),
    pytest.param(InjPlugin("TestPlugin1", add_pod=S), InjPlugin("TestPlugin2", filter=E), LOW, HIGH,
                 (E, [f'running "TestPlugin2" filter plugin: {INJECT_FILTER_REASON}']),
                 id="node has a high-priority nominated pod and filters fail"),
    pytest.param(InjPlugin("TestPlugin1", add_pod=U), InjPlugin("TestPlugin2", filter=S), HIGH, LOW, None,
                 id="node has a low-priority nominated pod and pre filters return unschedulable"),
]


@pytest.mark.parametrize(("pre_filter", "filter_", "pod", "nominated", "want"), NOMINATED_CASES)
def test_filter_plugins_with_nominated_pods(pre_filter: InjPlugin | None, filter_: InjPlugin | None, pod: Any,
                                            nominated: Any, want: Any) -> None:
    points: dict[str, list[Any]] = {}
    if pre_filter is not None:
        points["preFilter"] = [pre_filter]
    if filter_ is not None:
        points["filter"] = [filter_]
    fwk = build(points)
    if nominated is not None:
        fwk.nominator.add_nominated_pod(PodInfo(nominated), "testNode")
    st = fwk.run_filter_plugins_with_nominated_pods(CycleState(), pod, _ni(pods=(make_pod("existing"),)))
    got = None if st is None or st.code == Code.SUCCESS else (st.code, st.reasons)
    assert got == want


class _PodCountingFilter:
    """Records how many pods each Filter call saw on the node; rejects when told to for one of the passes."""

    def __init__(self, reject_when_pods: int | None = None) -> None:
        self.name = "PodCounter"
        self.seen: list[int] = []
        self.reject_when_pods = reject_when_pods

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        self.seen.append(len(node_info.pods))
        if self.reject_when_pods == len(node_info.pods):
            return Status(Code.UNSCHEDULABLE, "too many pods")
        return None


@pytest.mark.parametrize(("pod", "want_seen"), [
    pytest.param(make_pod("p", uid="p", priority=1000), [1], id="nominated pods have lower priority, filter runs once"),
    pytest.param(make_pod("p", uid="p", priority=0), [2, 1],
                 id="nominated pods have higher priority, filter runs with them and then without them"),
    pytest.param(make_pod("p", uid="p", priority=100), [2, 1], id="equal priority nominated pods are added too"),
])
def test_filter_runs_twice_with_higher_or_equal_priority_nominated_pods(pod: Any, want_seen: list[int]) -> None:
    counter = _PodCountingFilter()
    fwk = build({"filter": [counter]})
    fwk.nominator.add_nominated_pod(PodInfo(make_pod("nominated", uid="nominated", priority=100)), "testNode")
    ni = _ni(pods=(make_pod("existing"),))
    assert fwk.run_filter_plugins_with_nominated_pods(CycleState(), pod, ni) is None
    assert counter.seen == want_seen
    assert len(ni.pods) == 1  # the nominated pod was added to a copy


def test_pod_must_fit_without_nominated_pods_too() -> None:
    counter = _PodCountingFilter(reject_when_pods=1)
    fwk = build({"filter": [counter]})
    fwk.nominator.add_nominated_pod(PodInfo(make_pod("nominated", uid="nominated", priority=100)), "testNode")
    st = fwk.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("p", priority=0),
                                                    _ni(pods=(make_pod("existing"),)))
    assert st is not None and (st.code, st.plugin) == (Code.UNSCHEDULABLE, "PodCounter")
    assert counter.seen == [2, 1]


def test_first_pass_rejection_skips_second_pass() -> None:
    counter = _PodCountingFilter(reject_when_pods=2)
    fwk = build({"filter": [counter]})
    fwk.nominator.add_nominated_pod(PodInfo(make_pod("nominated", uid="nominated", priority=100)), "testNode")
    st = fwk.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("p", priority=0),
                                                    _ni(pods=(make_pod("existing"),)))
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert counter.seen == [2]


def test_pod_does_not_count_itself_as_nominated() -> None:
    counter = _PodCountingFilter()
    fwk = build({"filter": [counter]})
    pod = make_pod("p", uid="p", priority=0)
    fwk.nominator.add_nominated_pod(PodInfo(pod), "testNode")
    fwk.run_filter_plugins_with_nominated_pods(CycleState(), pod, _ni())
    assert counter.seen == [0]


# --- PostFilter -----------------------------------------------------------------------------------

# upstream TestPostFilterPlugins: plugins as (name, code), want (code, reasons, plugin)
POST_FILTER_CASES = [
    pytest.param([("TestPlugin", S)], (S, [INJECT_REASON], ""), id="a single plugin makes a Pod schedulable"),
    pytest.param([("TestPlugin1", U), ("TestPlugin2", S)], (S, [INJECT_REASON], ""),
                 id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable"),
    pytest.param([("TestPlugin1", S), ("TestPlugin2", U)], (S, [INJECT_REASON], ""),
                 id="plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable"),
    pytest.param([("TestPlugin1", E), ("TestPlugin2", S)], (E, [INJECT_REASON], "TestPlugin1"),
                 id="plugin1 errors, followed by plugin2 which makes the Pod schedulable"),
    pytest.param([("TestPlugin1", U), ("TestPlugin2", UU)], (UU, [INJECT_REASON], "TestPlugin2"),
                 id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod unresolvable"),
    pytest.param([("TestPlugin1", U), ("TestPlugin2", U)], (U, [INJECT_REASON, INJECT_REASON], "TestPlugin1"),
                 id="both plugins failed to make a Pod schedulable"),
]


@pytest.mark.parametrize(("spec", "want"), POST_FILTER_CASES)
def test_post_filter_plugins(spec: list[tuple[str, Code]], want: Any) -> None:
    fwk = build({"postFilter": [InjPlugin(n, post_filter=c) for n, c in spec]})
    _, st = fwk.run_post_filter_plugins(CycleState(), POD, {})
    assert _triple(st) == want


def test_post_filter_stops_at_first_success() -> None:
    later = InjPlugin("later")
    fwk = build({"postFilter": [InjPlugin("first", post_filter=S), later]})
    fwk.run_post_filter_plugins(CycleState(), POD, {})
    assert later.calls == []


def test_post_filter_keeps_last_non_noop_result() -> None:
    p1 = InjPlugin("p1", post_filter=U, post_filter_result=PostFilterResult("node1"))
    p2 = InjPlugin("p2", post_filter=U, post_filter_result=PostFilterResult("", mode="Noop"))
    fwk = build({"postFilter": [p1, p2]})
    result, st = fwk.run_post_filter_plugins(CycleState(), POD, {})
    assert result == PostFilterResult("node1")
    assert st.code == Code.UNSCHEDULABLE


def test_post_filter_receives_the_node_status_map() -> None:
    seen: list[dict[str, Status]] = []

    class Recorder:
        name = "Recorder"

        def post_filter(self, state: CycleState, pod: Any, m: dict[str, Status]) -> tuple[None, Status]:
            seen.append(m)
            return None, Status(Code.UNSCHEDULABLE, "no")

    fwk = build({"postFilter": [Recorder()]})
    m = {"node1": Status(Code.UNSCHEDULABLE, "x")}
    fwk.run_post_filter_plugins(CycleState(), POD, m)
    assert seen == [m]


def test_a_status_is_always_true() -> None:
    """The filter loop tells kept verdicts apart by truth (None: passed) and identity, never with ==: every
    Status is true, whatever its code (a Status.__bool__ or __len__ would break that)."""
    from scheduling_framework.runtime.algorithm import _MISSING
    from scheduling_framework.status import Code, Status

    assert all(bool(Status(code)) for code in Code)
    assert bool(Status(Code.SUCCESS, "")) and bool(_MISSING)
    assert not hasattr(Status, "__bool__") and not hasattr(Status, "__len__")


def test_deferred_filter_runs_read_as_recorded_at_once() -> None:
    """Runs of filter verdicts deferred in a Diagnosis (recorded when first read) give the statuses, in filtering
    order, and the plugin sets that recording them at once gives, with node-by-node rejections and plugin sets
    written in between."""
    from scheduling_framework.runtime.algorithm import Diagnosis
    from scheduling_framework.status import Code, Status

    nodes = [NodeInfo(make_node(f"n{i}")) for i in range(7)]
    fit = Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit")
    taint = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "untolerated taint", plugin="TaintToleration")
    gate = Status(Code.PENDING, "waiting", plugin="Gate")
    first = [fit, None, taint]
    second = [None, gate, fit]

    d = Diagnosis()
    d.defer(nodes[:3], first, [fit, taint])
    assert d.rejected_count() == 2
    d.node_to_status["n3"] = fit  # a node filtered on its own after the first run
    d.defer(nodes[4:7], second, [gate, fit])
    assert d.rejected_count() == 5
    assert list(d.node_to_status) == ["n0", "n2", "n3", "n5", "n6"]
    assert d.node_to_status["n5"] is gate and d.node_to_status["n2"] is taint
    assert d.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration"}
    assert d.pending_plugins == {"Gate"}
    assert d.rejected_count() == 5

    replaced = Diagnosis()
    replaced.defer(nodes[:3], first, [fit, taint])
    replaced.node_to_status = {"other": fit}  # as preemption does: the runs' plugins are still counted
    assert replaced.node_to_status == {"other": fit}
    assert replaced.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration"}
