"""PreFilter and PreFilterExtensions: upstream framework_test.go TestRunPreFilterPlugins, TestPreFilterPlugins,
TestRunPreFilterExtensionAddPod/RemovePod, plus the PreFilterResult merge rules of RunPreFilterPlugins and
the rule that a PreFilter SKIP disables that plugin's Filter for the cycle."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import PodInfo
from scheduling_framework.status import Code
from tests.runtime.runtime_fakes import INJECT_REASON, InjPlugin, build, make_pod, node_infos

POD = make_pod("p")
NODES = node_infos("node1", "node2", "node3")

BUG_SKIP_ON_EARLY_RETURN = (
    "BUG: Framework.run_pre_filter_plugins only records state.skip_filter_plugins when every plugin ran; "
    "upstream RunPreFilterPlugins stores the SKIP set in a defer, so plugins that returned Skip before an "
    "Error/UnschedulableAndUnresolvable are still recorded (framework_test.go TestRunPreFilterPlugins)")


def _run(plugins: list[InjPlugin]) -> tuple[Any, Any, list[str], CycleState]:
    fwk = build({"preFilter": plugins})
    state = CycleState()
    result, st, with_nodes = fwk.run_pre_filter_plugins(state, POD, NODES)
    return result, st, with_nodes, state


def _code(st: Any) -> Code:
    return Code.SUCCESS if st is None else st.code


# upstream TestRunPreFilterPlugins (name, plugins, want result, want skipped, want code)
RUN_PRE_FILTER_CASES = [
    pytest.param([InjPlugin("success1"), InjPlugin("success2")], None, set(), Code.SUCCESS,
                 id="all PreFilter returned success"),
    pytest.param([InjPlugin("success"), InjPlugin("error", pre_filter=Code.ERROR)], None, set(), Code.ERROR,
                 id="one PreFilter plugin returned success, but another PreFilter plugin returned non-success"),
    pytest.param([InjPlugin("skip", pre_filter=Code.SKIP), InjPlugin("error", pre_filter=Code.ERROR)], None, {"skip"},
                 Code.ERROR,
                 id="one PreFilter plugin returned skip, but another PreFilter plugin returned non-success"),
    pytest.param([InjPlugin("skip1", pre_filter=Code.SKIP), InjPlugin("skip2", pre_filter=Code.SKIP),
                  InjPlugin("skip3", pre_filter=Code.SKIP)], None, {"skip1", "skip2", "skip3"}, Code.SUCCESS,
                 id="all PreFilter plugins returned skip"),
    pytest.param([InjPlugin("skip1", pre_filter=Code.SKIP), InjPlugin("success1"),
                  InjPlugin("skip2", pre_filter=Code.SKIP), InjPlugin("success2")], None, {"skip1", "skip2"},
                 Code.SUCCESS, id="some PreFilter plugins returned skip"),
    pytest.param([InjPlugin("unschedulable", pre_filter=Code.UNSCHEDULABLE), InjPlugin("skip", pre_filter=Code.SKIP)],
                 None, {"skip"}, Code.UNSCHEDULABLE,
                 id="one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be executed"),
    pytest.param([InjPlugin("unresolvable", pre_filter=Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                  InjPlugin("skip", pre_filter=Code.SKIP)], None, set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                 id="one PreFilter plugin returned UnschedulableAndUnresolvable, "
                    "and all other plugins aren't executed"),
    pytest.param([InjPlugin("reject-all-nodes", pre_filter_result=PreFilterResult(set())),
                  InjPlugin("skip", pre_filter=Code.SKIP)], PreFilterResult(set()), set(),
                 Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                 id="all nodes are filtered out by prefilter result, but other plugins aren't executed because we "
                    "consider all nodes are filtered out by UnschedulableAndUnresolvable"),
]


@pytest.mark.parametrize(("plugins", "want_result", "want_skipped", "want_code"), RUN_PRE_FILTER_CASES)
def test_run_pre_filter_plugins(plugins: list[InjPlugin], want_result: PreFilterResult | None, want_skipped: set[str],
                                want_code: Code) -> None:
    result, st, _, state = _run(plugins)
    assert result == want_result
    assert _code(st) == want_code
    assert state.skip_filter_plugins == want_skipped


def test_pre_filter_error_is_wrapped_and_names_plugin() -> None:
    _, st, _, _ = _run([InjPlugin("success"), InjPlugin("error", pre_filter=Code.ERROR)])
    assert st.code == Code.ERROR
    assert st.plugin == "error"
    assert st.message() == f'running PreFilter plugin "error": {INJECT_REASON}'


@pytest.mark.parametrize("code", [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE])
def test_pre_filter_rejection_keeps_reason_and_names_plugin(code: Code) -> None:
    _, st, _, _ = _run([InjPlugin("ok"), InjPlugin("rejector", pre_filter=code)])
    assert (st.code, st.plugin, st.reasons) == (code, "rejector", [INJECT_REASON])


def test_unresolvable_stops_remaining_pre_filter_plugins() -> None:
    later = InjPlugin("later")
    _run([InjPlugin("unresolvable", pre_filter=Code.UNSCHEDULABLE_AND_UNRESOLVABLE), later])
    assert later.calls == []


def test_unschedulable_runs_remaining_pre_filter_plugins_and_first_rejection_is_kept() -> None:
    later = InjPlugin("later", pre_filter_result=PreFilterResult({"node1"}))
    result, st, _, _ = _run([InjPlugin("u", pre_filter=Code.UNSCHEDULABLE), later])
    assert later.points_called() == ["PreFilter"]
    assert st.plugin == "u"
    assert result == PreFilterResult({"node1"})


# --- PreFilterResult merge (RunPreFilterPlugins) ------------------------------------------------

MERGE_CASES = [
    pytest.param([None, {"node1", "node2"}, {"node2", "node3"}], {"node2"}, ["p1", "p2"], None,
                 id="results intersect, a nil result is the identity"),
    pytest.param([{"node1"}, None], {"node1"}, ["p0"], None, id="a later nil result keeps the earlier set"),
    pytest.param([None, None], None, [], None, id="all nil results mean all nodes"),
    pytest.param([None, {"node2"}, {"node1"}], set(), ["p1", "p2"],
                 "node(s) didn't satisfy plugin(s) [p1 p2] simultaneously",
                 id="non-intersecting results are UnschedulableAndUnresolvable naming the plugins"),
    pytest.param([None, set()], set(), ["p1"], "node(s) didn't satisfy plugin p1",
                 id="one plugin returning an empty node set is named alone"),
]


@pytest.mark.parametrize(("sets_", "want_nodes", "want_with_nodes", "want_msg"), MERGE_CASES)
def test_pre_filter_result_merge(sets_: list[set[str] | None], want_nodes: set[str] | None,
                                 want_with_nodes: list[str], want_msg: str | None) -> None:
    plugins = [InjPlugin(f"p{i}", pre_filter_result=None if s is None else PreFilterResult(s))
               for i, s in enumerate(sets_)]
    result, st, with_nodes, _ = _run(plugins)
    assert (None if result is None else result.node_names) == want_nodes
    assert with_nodes == want_with_nodes
    if want_msg is None:
        assert st is None
    else:
        assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want_msg)


def test_empty_intersection_stops_remaining_pre_filter_plugins() -> None:
    later = InjPlugin("later")
    _run([InjPlugin("a", pre_filter_result=PreFilterResult({"node1"})),
          InjPlugin("b", pre_filter_result=PreFilterResult({"node2"})), later])
    assert later.calls == []


def test_result_of_skipping_plugin_is_ignored() -> None:
    result, st, with_nodes, state = _run([InjPlugin("s", pre_filter=Code.SKIP,
                                                    pre_filter_result=PreFilterResult(set()))])
    assert (result, st, with_nodes, state.skip_filter_plugins) == (None, None, [], {"s"})


# --- PreFilter SKIP disables the plugin's Filter ----------------------------------------------


def test_pre_filter_skip_disables_that_plugins_filter() -> None:
    skipper = InjPlugin("skipper", pre_filter=Code.SKIP, filter=Code.ERROR)
    other = InjPlugin("other")
    fwk = build({"preFilter": [skipper, other], "filter": [skipper, other]})
    state = CycleState()
    fwk.run_pre_filter_plugins(state, POD, NODES)
    assert fwk.run_filter_plugins(state, POD, NODES[0]) is None
    assert "Filter" not in skipper.points_called()
    assert other.points_called() == ["PreFilter", "Filter"]


def test_pre_filter_skip_lasts_one_cycle() -> None:
    skipper = InjPlugin("skipper", pre_filter=Code.SKIP, filter=Code.UNSCHEDULABLE)
    fwk = build({"preFilter": [skipper], "filter": [skipper]})
    fwk.run_pre_filter_plugins(CycleState(), POD, NODES)
    st = fwk.run_filter_plugins(CycleState(), POD, NODES[0])
    assert st is not None and st.plugin == "skipper"


# --- PreFilterExtensions ------------------------------------------------------------------------


class _CountingPreFilter:
    def __init__(self, name: str, with_extensions: bool) -> None:
        self.name = name
        self.with_extensions = with_extensions
        self.pre_filter_called = 0
        self.add_called = 0
        self.remove_called = 0

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[None, None]:
        self.pre_filter_called += 1
        return None, None

    def pre_filter_extensions(self) -> Any:
        return self if self.with_extensions else None

    def add_pod(self, *args: Any) -> None:
        self.add_called += 1

    def remove_pod(self, *args: Any) -> None:
        self.remove_called += 1


def test_pre_filter_plugins_and_extensions_are_each_called_once() -> None:
    """upstream TestPreFilterPlugins."""
    pre_filter1 = _CountingPreFilter("prefilter-plugin", with_extensions=False)
    pre_filter2 = _CountingPreFilter("prefilter-with-extensions-plugin", with_extensions=True)
    fwk = build({"preFilter": [pre_filter2, pre_filter1]})
    state = CycleState()
    other = PodInfo(make_pod("other"))
    fwk.run_pre_filter_plugins(state, POD, NODES)
    fwk.run_pre_filter_extension_add_pod(state, POD, other, NODES[0])
    fwk.run_pre_filter_extension_remove_pod(state, POD, other, NODES[0])
    assert (pre_filter1.pre_filter_called, pre_filter1.add_called, pre_filter1.remove_called) == (1, 0, 0)
    assert (pre_filter2.pre_filter_called, pre_filter2.add_called, pre_filter2.remove_called) == (1, 1, 1)


EXTENSION_CASES = [
    pytest.param([InjPlugin("success1"), InjPlugin("success2")], set(), Code.SUCCESS, "",
                 id="no plugins are skipped and all {op}() returned success"),
    pytest.param([InjPlugin("success1"), InjPlugin("error1", add_pod=Code.ERROR, remove_pod=Code.ERROR)], set(),
                 Code.ERROR, "error1", id="one {op}() returned error"),
    pytest.param([InjPlugin("success1"), InjPlugin("skipped", add_pod=Code.ERROR, remove_pod=Code.ERROR)],
                 {"skipped"}, Code.SUCCESS, "", id="one {op}() is skipped"),
]


def _ext_cases(op: str) -> list[Any]:
    return [pytest.param(*c.values, id=str(c.id).format(op=op)) for c in EXTENSION_CASES]


@pytest.mark.parametrize(("plugins", "skipped", "want_code", "want_plugin"), _ext_cases("AddPod"))
def test_run_pre_filter_extension_add_pod(plugins: list[InjPlugin], skipped: set[str], want_code: Code,
                                          want_plugin: str) -> None:
    fwk = build({"preFilter": plugins})
    state = CycleState()
    state.skip_filter_plugins = set(skipped)
    st = fwk.run_pre_filter_extension_add_pod(state, POD, PodInfo(make_pod("other")), NODES[0])
    assert _code(st) == want_code
    if want_plugin:
        assert st is not None and st.plugin == want_plugin
        assert st.message() == f'running AddPod on PreFilter plugin "{want_plugin}": {INJECT_REASON}'


@pytest.mark.parametrize(("plugins", "skipped", "want_code", "want_plugin"), _ext_cases("RemovePod"))
def test_run_pre_filter_extension_remove_pod(plugins: list[InjPlugin], skipped: set[str], want_code: Code,
                                             want_plugin: str) -> None:
    fwk = build({"preFilter": plugins})
    state = CycleState()
    state.skip_filter_plugins = set(skipped)
    st = fwk.run_pre_filter_extension_remove_pod(state, POD, PodInfo(make_pod("other")), NODES[0])
    assert _code(st) == want_code
    if want_plugin:
        assert st is not None and st.plugin == want_plugin
        assert st.message() == f'running RemovePod on PreFilter plugin "{want_plugin}": {INJECT_REASON}'


@pytest.mark.parametrize("code", [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE])
def test_add_pod_non_success_is_an_error(code: Code) -> None:
    """Upstream: AddPod/RemovePod returning anything but success is an Error (they run on cloned state)."""
    fwk = build({"preFilter": [InjPlugin("p", add_pod=code)]})
    st = fwk.run_pre_filter_extension_add_pod(CycleState(), POD, PodInfo(make_pod("other")), NODES[0])
    assert st is not None and st.code == Code.ERROR and st.plugin == "p"
