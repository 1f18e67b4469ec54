"""The CEL interpreter against the real one: expressions evaluated by k8s.io/dynamic-resource-allocation/cel
v0.35.4 (tests/fixtures/upstream/dra-cel-eval.yaml, as data), and cel-go's semantics case by case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.dra.cel import CELCache, CELRuntimeError, compile_expression
from tests import yamlio
from tests.dra.test_cel import make_device

CASES = yamlio.load((Path(__file__).parents[1] / "fixtures/upstream/dra-cel-eval.yaml").read_text())["cases"]


def outcome(expression: str, attributes: dict[str, Any] | None = None,
            capacity: dict[str, str] | None = None) -> dict[str, Any]:
    try:
        return {"match": CELCache().matches(expression, make_device(attributes, capacity), "d")}
    except CELRuntimeError as e:
        return {"error": e.detail}


@pytest.mark.parametrize("case", CASES, ids=[f"go-{i}" for i in range(len(CASES))])
def test_same_outcome_as_the_real_interpreter(case: dict[str, Any]) -> None:
    assert outcome(case["expression"], case["attributes"], case["capacity"]) == case["want"]


DEVICE = {"s": {"string": "abc"}, "n": {"int": 3}, "b": {"bool": True}, "v": {"version": "1.2.3"}}
SEMANTICS = [
    # (id, expression, outcome) — each checked against the real interpreter when written
    ("false-absorbs-error", 'device.attributes["d"].missing && false', {"match": False}),
    ("true-absorbs-error", 'device.attributes["d"].missing || true', {"match": True}),
    ("left-error-wins", 'device.attributes["d"].x > 1 && device.attributes["d"].y > 1', {"error": "no such key: x"}),
    ("all-false-absorbs-error", '[0, 1].all(x, 1 / x > 0 && false)', {"match": False}),
    ("exists-error-without-true", '[0].exists(x, 1 / x > 0)', {"error": "division by zero"}),
    ("int-overflow", "9223372036854775807 + device.attributes[\"d\"].n > 0", {"error": "integer overflow"}),
    ("uint-underflow", 'uint(device.attributes["d"].n) - 5u == 1u', {"error": "unsigned integer overflow"}),
    ("mixed-arith", 'device.attributes["d"].n + 1u == 4u', {"error": "no such overload"}),
    ("heterogeneous-equality", 'device.attributes["d"].n == 3.0 && device.attributes["d"].n != "3"', {"match": True}),
    ("truncated-division", "-7 / device.attributes[\"d\"].n == -2 && -7 % device.attributes[\"d\"].n == -1",
     {"match": True}),
    ("string-to-int", 'int(device.attributes["d"].s) == 1', {"error": "type conversion error from 'string' to 'int'"}),
    ("typed-overload", 'device.attributes["d"].n.lowerAscii() == "x"', {"error": "no such overload: lowerAscii(int)"}),
    ("semver-operator", 'device.attributes["d"].v >= 1', {"error": "no such overload: _>=_"}),
    ("list-index", '[1][device.attributes["d"].n] == 1', {"error": "index out of bounds: 3"}),
    ("lazy-bind", 'cel.bind(x, device.attributes["d"].missing, true)', {"match": True}),
    ("double-negation", '!!device.attributes["d"].b', {"match": True}),
    ("empty-list-membership", 'device.attributes["d"].missing in []', {"match": False}),
    ("semver-result", 'device.attributes["d"].v', {"error": "CEL result of type kubernetes.Semver could not be "
                                                   "converted to bool: type conversion error from 'Semver' to 'bool'"}),
    ("int-result", 'device.attributes["d"].n', {"error": "CEL result of type int could not be converted to bool: "
                                                "unsupported type conversion from 'int' to bool"}),
    ("substring-range", 'device.attributes["d"].s.substring(2, 1) == ""',
     {"error": "invalid substring range. start: 2, end: 1"}),
    ("index-of-past-end", 'device.attributes["d"].s.indexOf("a", 10) == -1', {"match": True}),
    ("map-macro-three-args", '[1, 2, 3].map(x, x > 1, x * 2) == [4, 6]', {"match": True}),
    ("missing-domain-is-empty", 'size(device.attributes["other.io"]) == 0 && !("other.io" in device.attributes)',
     {"match": True}),
]


@pytest.mark.parametrize(("expression", "want"), [c[1:] for c in SEMANTICS], ids=[c[0] for c in SEMANTICS])
def test_cel_go_semantics(expression: str, want: dict[str, Any]) -> None:
    assert outcome(expression, DEVICE) == want


@pytest.mark.parametrize(("expression", "message"), [
    ("?!", "compilation failed: ERROR: <input>:1:1: Syntax error: "),
    ('device.driver == "x', "compilation failed: ERROR: <input>:1:18: Syntax error: token recognition error at: "
                            "'\"x'"),
    ('device.attributes["d"].?x', "unsupported syntax '.?'"),
    ("Msg{a: 1}", "message construction is not supported"),
])
def test_syntax_errors(expression: str, message: str) -> None:
    err = compile_expression(expression).error
    assert err is not None and message in err.detail


def test_deep_nesting_is_a_compile_error_not_a_crash() -> None:
    # cel-go's parser limit, in its words (tests/hardening/test_hostile_cel.py has the boundaries)
    err = compile_expression("(" * 5000 + "true" + ")" * 5000).error
    assert err is not None
    assert err.detail == "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
