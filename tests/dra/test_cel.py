"""DRA CEL selectors: the upstream compile/evaluate table (as data), the Kubernetes libraries, caching."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.api.resource import Device, ResourceSlice
from scheduling_framework.dra.cel import CELCache, CELCompileError, CELRuntimeError, compile_expression, parse_semver
from tests import yamlio

TABLE = yamlio.load((Path(__file__).parents[1] / "fixtures/upstream/dra-cel-compile.yaml").read_text())
CASES = TABLE["cases"]


def make_device(attributes: dict[str, Any] | None = None, capacity: dict[str, str] | None = None) -> Device:
    s = ResourceSlice.from_dict({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "d", "pool": {"name": "p"}, "allNodes": True,
                 "devices": [{"name": "dev", "attributes": attributes or {},
                              "capacity": {k: {"value": v} for k, v in (capacity or {}).items()}}]}})
    return s.spec.devices[0]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_compile_table(case: dict[str, Any]) -> None:
    cache = CELCache()
    device = make_device(case.get("attributes"), case.get("capacity"))
    driver = case.get("driver", "")
    if "expectCompileError" in case:
        prog = cache.compile(case["expression"])
        assert prog.error is not None
        assert case["expectCompileError"] in prog.error.detail
        with pytest.raises(CELCompileError):
            cache.matches(case["expression"], device, driver)
        return
    assert cache.compile(case["expression"]).error is None
    if "expectMatchError" in case:
        with pytest.raises(CELRuntimeError) as ei:
            cache.matches(case["expression"], device, driver)
        assert case["expectMatchError"] in ei.value.detail
        return
    assert cache.matches(case["expression"], device, driver) is case["expectMatch"]


LIBS = [
    ("quantity-compare", 'quantity("1Gi").compareTo(quantity("1024Mi")) == 0', True),
    ("quantity-equal-canonical", 'quantity("1") == quantity("1000m")', True),
    ("quantity-less", 'quantity("500m").isLessThan(quantity("1"))', True),
    ("quantity-add-int", 'quantity("1").add(2) == quantity("3")', True),
    ("quantity-sub", 'quantity("3").sub(quantity("1")).isInteger()', True),
    ("quantity-as-integer", 'quantity("2k").asInteger() == 2000', True),
    ("quantity-sign", 'quantity("-1").sign() == -1', True),
    ("quantity-float", 'quantity("1.5").asApproximateFloat() == 1.5', True),
    ("is-quantity", 'isQuantity("1Gi") && !isQuantity("x")', True),
    ("semver-parts", 'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
     True),
    ("semver-prerelease", 'semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ("semver-prerelease-numeric", 'semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
    ("semver-normalize", 'semver("v1.2", true) == semver("1.2.0")', True),
    ("is-semver", 'isSemver("1.0.0") && !isSemver("1.0") && isSemver("01.0", true)', True),
    ("strings-ext", '"Hello".lowerAscii() == "hello" && " a ".trim() == "a" && "a,b".split(",").size() == 2', True),
    ("strings-index", '"abc".indexOf("c") == 2 && "abc".substring(1) == "bc"', True),
    ("regex-find", '"abc123".find("[0-9]+") == "123" && "a1b2".findAll("[0-9]").size() == 2', True),
    ("lists", '[1, 2, 3].isSorted() && [1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [1, 2].indexOf(2) == 1',
     True),
    ("bind-nested", 'cel.bind(a, 1, cel.bind(b, 2, a + b == 3))', True),
    ("bind-in-string-untouched", '"cel.bind(x, 1, x)" == "cel.bind(x, 1, x)"', True),
]


@pytest.mark.parametrize(("expression", "expected"), [c[1:] for c in LIBS], ids=[c[0] for c in LIBS])
def test_kubernetes_libraries(expression: str, expected: bool) -> None:
    assert CELCache().matches(expression, make_device(), "d") is expected


COMPILE_ERRORS = [
    ("undeclared-variable", "foo == 1", "undeclared reference to 'foo'"),
    ("undeclared-function", "device.driver.frobnicate()", "undeclared reference to 'frobnicate'"),
    ("string-result", '"x"', "must evaluate to bool or the unknown type, not string"),
    ("unterminated-string", 'device.driver == "x', "compilation failed: ERROR: <input>:1:"),
]


@pytest.mark.parametrize(("expression", "message"), [c[1:] for c in COMPILE_ERRORS],
                         ids=[c[0] for c in COMPILE_ERRORS])
def test_compile_errors(expression: str, message: str) -> None:
    err = compile_expression(expression).error
    assert err is not None and message in err.detail


RUNTIME_ERRORS = [
    ("non-bool-result", "device.driver", "CEL result of type string could not be converted to bool"),
    ("bad-quantity", 'quantity("x").sign() == 1', "quantities must match the regular expression"),
    ("bad-semver", 'semver("1.0").major() == 1', "Invalid character(s) found in version: 1.0"),
    ("wrong-receiver", 'device.driver.isGreaterThan(quantity("1"))', "no such overload"),
    ("missing-attribute", 'device.attributes["d"].nope', "no such key: nope"),
]


@pytest.mark.parametrize(("expression", "message"), [c[1:] for c in RUNTIME_ERRORS],
                         ids=[c[0] for c in RUNTIME_ERRORS])
def test_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CELRuntimeError) as ei:
        CELCache().matches(expression, make_device(), "d")
    assert message in ei.value.detail


def test_results_are_cached_per_device_object() -> None:
    cache = CELCache()
    dev = make_device({"model": {"string": "a"}})
    expr = 'device.attributes["d"].model == "a"'
    assert cache.matches(expr, dev, "d") is True
    assert cache.compile(expr) is cache.compile(expr)
    assert cache.matches(expr, dev, "d") is True
    changed = make_device({"model": {"string": "b"}})
    assert cache.matches(expr, changed, "d") is False


def test_parse_semver_rules() -> None:
    assert parse_semver("1.2.3-rc.1+build.5") is not None
    assert parse_semver("01.2.3") is None
    assert parse_semver("1.2.3-01") is None
    assert str(parse_semver("v1", True)) == "1.0.0"


FAST = [
    'device.driver == "d"',
    '"d" == device.driver',
    "device.driver == 'other'",
    'device.attributes["d"].model == "a"',
    'device.attributes["d"]["model"] == "a"',
    'device.attributes["d"].n == 4',
    'device.attributes["d"].n == "4"',
    'device.attributes["d"].ok == true',
    'device.attributes["d"].v == "1.0.0"',
    'device.attributes["other.io"].model == "b"',
    'device.attributes["d"].missing == "a"',
    'device.driver == "x" && device.attributes["d"].missing == "a"',
    'device.driver == "d" && device.attributes["d"].model == "a" && device.attributes["d"].n == 4',
    'device.capacity["d"].memory.isGreaterThan(quantity("16Gi"))',
    'device.capacity["d"].memory.isLessThan(quantity("16Gi"))',
    'device.capacity["d"]["memory"].compareTo(quantity("40Gi")) >= 0',
    'device.capacity["d"].memory.compareTo(quantity("40Gi")) == 0',
    'device.capacity["d"].memory.compareTo(quantity("1Ti")) > 0 && device.driver == "d"',
    'device.capacity["d"].missing.isGreaterThan(quantity("1"))',
]
FAST_DEVICES = [
    ({"model": {"string": "a"}, "n": {"int": 4}, "ok": {"bool": True}, "v": {"version": "1.0.0"},
      "other.io/model": {"string": "b"}}, {"memory": "40Gi"}),
    ({"d/model": {"string": "a"}, "model": {"string": "z"}, "n": {"int": 1}, "ok": {"bool": False}},
     {"d/memory": "8Gi"}),
    ({}, {}),
]


@pytest.mark.parametrize("expression", FAST, ids=range(len(FAST)))
def test_fast_path_agrees_with_the_interpreter(expression: str) -> None:
    compiled = compile_expression(expression)
    assert compiled.fast is not None, "expected the fast path to apply"
    slow = compile_expression(expression)
    slow.fast = None
    for attrs, capacity in FAST_DEVICES:
        dev = make_device(attrs, capacity)
        outcomes = []
        for prog in (compiled, slow):
            cache = CELCache()
            cache._programs[expression] = prog
            try:
                outcomes.append(cache.matches(expression, dev, "d"))
            except CELRuntimeError as e:
                outcomes.append(e.detail)
        # both evaluations fail, or agree (with two failing terms the interpreter may name the other key)
        both_fail = all(isinstance(o, str) and o.startswith("no such key") for o in outcomes)
        assert both_fail or outcomes[0] == outcomes[1], (attrs, outcomes)


@pytest.mark.parametrize("expression", ['device.driver != "d"', 'device.driver == "a" || true',
                                        'device.driver == "a\\"b"', 'device.attributes["d"].n == 4u',
                                        'device.driver == "a&&b"',
                                        'device.capacity["d"].m.isGreaterThan(quantity("lots"))'])
def test_fast_path_declines_other_shapes(expression: str) -> None:
    assert compile_expression(expression).fast is None
