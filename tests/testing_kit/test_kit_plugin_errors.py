"""What a plugin author sees when a plugin is wrong, through the testing kit: clear errors naming the plugin,
raised when the framework is built where possible, else an Error status naming the plugin at run time."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from scheduling_framework import Code, PluginError, Status
from scheduling_framework.runtime import CycleError
from scheduling_framework.testing import framework_for, make_node, make_pod

NODES = [make_node().name("n1"), make_node().name("n2")]


def plugin_class(name: str, **methods: Callable[..., Any]) -> type[Any]:
    """A plugin class named ``name`` with the given extension point methods."""

    def init(self: Any, args: Any, handle: Any) -> None:
        self.args = args

    return type(name, (), {"name": name, "__init__": init, **methods})


def _reject(args: Any) -> None:
    raise ValueError(f"args.limit: must be positive, got {args['limit']}")


@pytest.mark.parametrize(("factory", "message"), [
    pytest.param(lambda args, handle: type("P", (), {"filter": lambda s, *a: None})(),
                 "plugin 'Bad': P has no `name` attribute (a non-empty str) - set a class attribute name = 'Bad'",
                 id="instance-without-name"),
    pytest.param(type("Bad", (), {"name": "Bad", "__init__": lambda self: None, "filter": lambda s, *a: None}),
                 "plugin 'Bad': factory Bad() could not be called as factory(args, handle)", id="wrong-signature"),
    pytest.param(type("Bad", (), {"name": "Bad", "__init__": lambda self, args, handle: _reject(args),
                                  "filter": lambda s, *a: None}),
                 "plugin 'Bad': construction failed: ValueError: args.limit: must be positive, got -1",
                 id="args-rejected"),
    pytest.param(lambda args, handle: type("Other", (), {"name": "Other", "filter": lambda s, *a: None})(),
                 "plugin 'Bad': the plugin instance is named 'Other' but registered and configured as 'Bad'",
                 id="name-mismatch"),
])
def test_construction_errors(factory: Any, message: str) -> None:
    with pytest.raises(PluginError) as err:
        framework_for([("Bad", factory)], args={"Bad": {"limit": -1}}, nodes=NODES)
    assert message in str(err.value)
    assert err.value.plugin == "Bad"


def test_a_plugin_at_a_point_it_does_not_implement() -> None:
    Bad = plugin_class("Bad", filter=lambda self, s, p, n: None)
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"plugins": {"score": {"enabled": [{"name": "Bad"}]}}}]}
    with pytest.raises(Exception, match='plugin "Bad" does not extend ScorePlugin plugin'):
        framework_for([Bad], config=cfg)


@pytest.mark.parametrize(("point", "method", "returned", "expected"), [
    pytest.param("filter", "filter", True, r"Filter returned bool \(True\), expected Status or None", id="filter"),
    pytest.param("pre_filter", "pre_filter", None,
                 r"PreFilter returned NoneType \(None\), expected \(PreFilterResult or None, Status or None\)",
                 id="pre-filter-not-a-pair"),
    pytest.param("reserve", "reserve", "ok", r"Reserve returned str \(.ok.\), expected Status or None", id="reserve"),
    pytest.param("permit", "permit", None, r"Permit returned NoneType \(None\), expected \(Status or None, timeout",
                 id="permit-not-a-pair"),
])
def test_wrong_return_shapes_become_error_statuses_naming_the_plugin(point: str, method: str, returned: Any,
                                                                     expected: str) -> None:
    Bad = plugin_class("Bad", **{method: lambda self, *a: returned})
    fw = framework_for([Bad], nodes=NODES)
    pod = make_pod().name("p")
    out = fw.filter(pod)["n1"] if point in ("filter", "pre_filter") else getattr(fw, point)(pod, "n1")
    assert out["code"] == "Error"
    assert out["plugin"] == "Bad"
    assert re.search(expected, out["reasons"][0]), out["reasons"][0]


def test_a_score_of_the_wrong_shape_fails_the_cycle_naming_the_plugin() -> None:
    Bad = plugin_class("Bad", score=lambda self, s, p, n: 7)
    with pytest.raises(CycleError, match=r"plugin 'Bad': Score returned int \(7\), expected \(int, Status or None\)"):
        framework_for([Bad], nodes=NODES).score(make_pod().name("p"))


def test_an_exception_in_a_plugin_is_an_error_status_not_a_crash() -> None:
    def boom(self: Any, state: Any, pod: Any, node_info: Any) -> Status | None:
        raise KeyError("missing-state")

    fw = framework_for([plugin_class("Bad", filter=boom)], nodes=NODES)
    out = fw.filter(make_pod().name("p"))["n1"]
    assert out == {"code": "Error", "plugin": "Bad",
                   "reasons": ["plugin \"Bad\" raised KeyError at Filter: 'missing-state'"]}
    result = fw.schedule(make_pod().name("p"))
    assert (result["outcome"], result["message"]) == ("Error", out["reasons"][0])


def test_an_error_status_from_filter_names_the_plugin() -> None:
    Bad = plugin_class("Bad", filter=lambda self, s, p, n: Status(Code.ERROR, "store unreachable"))
    assert framework_for([Bad], nodes=NODES).filter(make_pod().name("p"))["n1"] == {
        "code": "Error", "plugin": "Bad", "reasons": ['running "Bad" filter plugin: store unreachable']}
