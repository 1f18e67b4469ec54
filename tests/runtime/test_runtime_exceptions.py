"""Bad plugins never crash the cycle: a plugin that raises, or returns a value of the wrong shape, at any
extension point becomes an ERROR status naming that plugin (DESIGN.md "Status")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.state.node_info import PodInfo
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import InjPlugin, build, make_pod, node_infos

POD = make_pod("p")
NODES = node_infos("node1", "node2")
OTHER = PodInfo(make_pod("other"))

Runner = Callable[[Framework], "Status | None"]


def _second(t: Any) -> Any:
    return t[1]


# point key (for the config), method to break, how to run the point and get its status
POINT_RUNNERS: list[tuple[str, str, Runner]] = [
    ("preEnqueue", "pre_enqueue", lambda f: f.run_pre_enqueue_plugins(POD)),
    ("preFilter", "pre_filter", lambda f: _second(f.run_pre_filter_plugins(CycleState(), POD, NODES))),
    ("preFilter", "add_pod", lambda f: f.run_pre_filter_extension_add_pod(CycleState(), POD, OTHER, NODES[0])),
    ("preFilter", "remove_pod", lambda f: f.run_pre_filter_extension_remove_pod(CycleState(), POD, OTHER, NODES[0])),
    ("filter", "filter", lambda f: f.run_filter_plugins(CycleState(), POD, NODES[0])),
    ("postFilter", "post_filter", lambda f: _second(f.run_post_filter_plugins(CycleState(), POD, {}))),
    ("preScore", "pre_score", lambda f: f.run_pre_score_plugins(CycleState(), POD, NODES)),
    ("score", "score", lambda f: _second(f.run_score_plugins(CycleState(), POD, NODES))),
    ("score", "normalize_score", lambda f: _second(f.run_score_plugins(CycleState(), POD, NODES))),
    ("reserve", "reserve", lambda f: f.run_reserve_plugins_reserve(CycleState(), POD, "node1")),
    ("permit", "permit", lambda f: f.run_permit_plugins(CycleState(), POD, "node1")),
    ("preBind", "pre_bind", lambda f: f.run_pre_bind_plugins(CycleState(), POD, "node1")),
    ("bind", "bind", lambda f: f.run_bind_plugins(CycleState(), POD, "node1")),
]


def _framework_with(point: str, method: str, replacement: Callable[..., Any]) -> tuple[Framework, InjPlugin]:
    good = InjPlugin("Good", normalize_ext=True)
    bad = InjPlugin("Bad", normalize_ext=True)
    setattr(bad, method, replacement)
    plugins = [good, bad]
    if point == "bind":
        good.inj["bind"] = Code.SKIP  # pass on to the bad plugin
    if point == "postFilter":
        good.inj["post_filter"] = Code.UNSCHEDULABLE  # PostFilter stops at the first success
    return build({point: plugins}), bad


def _raise(*args: Any) -> Any:
    raise RuntimeError("boom")


@pytest.mark.parametrize(("point", "method", "run"), [pytest.param(*r, id=r[1]) for r in POINT_RUNNERS])
def test_plugin_that_raises_becomes_an_error_naming_it(point: str, method: str, run: Runner) -> None:
    fwk, _ = _framework_with(point, method, _raise)
    st = run(fwk)
    assert st is not None
    assert (st.code, st.plugin) == (Code.ERROR, "Bad")
    assert '"Bad"' in st.message() and "boom" in st.message()
    assert isinstance(st.error, RuntimeError)


def _returns(value: Any) -> Callable[..., Any]:
    def method(*args: Any) -> Any:
        return value

    return method


def _normalize_to(value: Any) -> Callable[..., Any]:
    def method(state: Any, pod: Any, scores: list[NodeScore]) -> None:
        for ns in scores:
            ns.score = value

    return method


BUG_UNCHECKED_RESULT = (
    "BUG: runtime/framework.py checks the tuple shape of what PreFilter/PostFilter/Permit return but uses the first "
    "element (PreFilterResult.all_nodes(), PostFilterResult.mode, float(timeout)) outside its try block, so a wrong "
    "type escapes as a raw AttributeError/ValueError instead of an ERROR status naming the plugin")
BUG_FLOAT_NORMALIZED = (
    "BUG: runtime/framework.py run_score_plugins checks the type of Score's result but not of the scores "
    "NormalizeScore writes back, so a float normalized score is summed into the totals instead of becoming an "
    "ERROR naming the plugin")

# point key, method, wrong value, runner
WRONG_SHAPES = [
    pytest.param("preEnqueue", "pre_enqueue", _returns("gated"), POINT_RUNNERS[0][2], id="PreEnqueue returns a str"),
    pytest.param("preFilter", "pre_filter", _returns(None), POINT_RUNNERS[1][2], id="PreFilter returns None"),
    pytest.param("preFilter", "pre_filter", _returns(Status(Code.SUCCESS)), POINT_RUNNERS[1][2],
                 id="PreFilter returns a bare Status"),
    pytest.param("preFilter", "pre_filter", _returns((None, "ok")), POINT_RUNNERS[1][2],
                 id="PreFilter returns a str status"),
    pytest.param("preFilter", "pre_filter", _returns(({"node1"}, None)), POINT_RUNNERS[1][2],
                 id="PreFilter returns a set instead of a PreFilterResult"),
    pytest.param("preFilter", "add_pod", _returns(1), POINT_RUNNERS[2][2], id="AddPod returns an int"),
    pytest.param("filter", "filter", _returns(False), POINT_RUNNERS[4][2], id="Filter returns a bool"),
    pytest.param("filter", "filter", _returns("Unschedulable"), POINT_RUNNERS[4][2], id="Filter returns a str"),
    pytest.param("postFilter", "post_filter", _returns(Status(Code.UNSCHEDULABLE)), POINT_RUNNERS[5][2],
                 id="PostFilter returns a bare Status"),
    pytest.param("postFilter", "post_filter", _returns(("node1", Status(Code.UNSCHEDULABLE, "x"))),
                 POINT_RUNNERS[5][2], id="PostFilter returns a str instead of a PostFilterResult"),
    pytest.param("preScore", "pre_score", _returns({}), POINT_RUNNERS[6][2], id="PreScore returns a dict"),
    pytest.param("score", "score", _returns(5), POINT_RUNNERS[7][2], id="Score returns a bare int"),
    pytest.param("score", "score", _returns((1.5, None)), POINT_RUNNERS[7][2], id="Score returns a float"),
    pytest.param("score", "score", _returns((True, None)), POINT_RUNNERS[7][2], id="Score returns a bool"),
    pytest.param("score", "score", _returns(("10", None)), POINT_RUNNERS[7][2], id="Score returns a str"),
    pytest.param("score", "score", _returns((1, "fine")), POINT_RUNNERS[7][2], id="Score returns a str status"),
    pytest.param("score", "normalize_score", _returns("ok"), POINT_RUNNERS[8][2], id="NormalizeScore returns a str"),
    pytest.param("score", "normalize_score", _normalize_to(50.5), POINT_RUNNERS[8][2],
                 id="NormalizeScore writes a float score"),
    pytest.param("reserve", "reserve", _returns(0), POINT_RUNNERS[9][2], id="Reserve returns an int"),
    pytest.param("permit", "permit", _returns(Status(Code.WAIT)), POINT_RUNNERS[10][2],
                 id="Permit returns a bare Status"),
    pytest.param("permit", "permit", _returns((Status(Code.WAIT), "10s")), POINT_RUNNERS[10][2],
                 id="Permit returns a str timeout"),
    pytest.param("preBind", "pre_bind", _returns(True), POINT_RUNNERS[11][2], id="PreBind returns a bool"),
    pytest.param("bind", "bind", _returns("bound"), POINT_RUNNERS[12][2], id="Bind returns a str"),
]


@pytest.mark.parametrize(("point", "method", "replacement", "run"), WRONG_SHAPES)
def test_wrong_return_shape_becomes_an_error_naming_the_plugin(point: str, method: str,
                                                               replacement: Callable[..., Any], run: Runner) -> None:
    fwk, _ = _framework_with(point, method, replacement)
    try:
        st = run(fwk)
    finally:
        fwk.reject_waiting_pod(POD.uid)
    assert st is not None
    assert (st.code, st.plugin) == (Code.ERROR, "Bad")
    assert "Bad" in st.message()


def test_plugin_before_the_bad_one_still_ran() -> None:
    fwk, _ = _framework_with("filter", "filter", _raise)
    good = fwk.plugins["Good"]
    fwk.run_filter_plugins(CycleState(), POD, NODES[0])
    assert good.points_called() == ["Filter"]


def test_pre_filter_extensions_that_raise_fail_construction_naming_the_plugin() -> None:
    from scheduling_framework.errors import PluginError

    bad = InjPlugin("Bad")
    bad.pre_filter_extensions = _raise  # type: ignore[method-assign]
    with pytest.raises(PluginError) as ei:
        build({"preFilter": [bad]})
    assert ei.value.plugin == "Bad"
