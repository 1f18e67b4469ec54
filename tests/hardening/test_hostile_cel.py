"""Hostile DRA CEL selectors (issue #36 items 1-3): none can stall the scheduler or slip past the limits.

1. a regular expression that backtracks exponentially (``^(a+)+$`` against ``"a"*40 + "!"``) is matched in linear
   time, by RE2 as cel-go does, and patterns RE2 refuses are cel-go's errors (compile errors when constant);
2. an expression whose cost cannot be estimated (too deep for the estimator) is never taken as cheap: cel-go's
   parser refuses it (``expression recursion limit exceeded: 250``), and an unknown cost is over the limit;
3. ``1 in 1 in ... in 1`` (1,000 terms) is cel-go's ``max recursion depth exceeded``, refused at load and named
   ``class gpu: selector #0: CEL compile error: ...`` when it reaches the allocator, never a RecursionError.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from scheduling_framework.api import celcost
from scheduling_framework.api.celcost import MAX_COST, UNKNOWN, estimate_cost, exceeds_limit
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.resource import DeviceClass, DeviceSelector, ResourceClaim
from scheduling_framework.cli import main
from scheduling_framework.config import load_config
from scheduling_framework.dra import AllocatedState, Allocator, AllocatorError, Features
from scheduling_framework.dra.cel import CELCache, CELRuntimeError, CompiledExpression, compile_expression
from scheduling_framework.errors import ValidationError, brief_str
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import Scheduler
from tests.dra.test_allocator import NODE, V1, claim, gpu_class, gpu_slice
from tests.dra.test_cel import make_device

# what one evaluation may take here; the backtracking engine took 2.7 s for 26 characters, doubling with each more
QUICK = 2.0  # generous for a loaded CI machine; the engines this guards against take seconds to hours


@contextmanager
def quick(limit: float = QUICK) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    elapsed = time.perf_counter() - t0
    assert elapsed < limit, f"took {elapsed:.2f} s"


def _matches(expression: str, attributes: dict[str, Any] | None = None) -> bool:
    return CELCache().matches(expression, make_device(attributes), "gpu.example.com")


# --- 1. regular expressions: RE2, linear time, RE2 syntax -----------------------------------------------------

PATHOLOGICAL = 'device.attributes["gpu.example.com"].model.matches("^(a+)+$")'


@pytest.mark.parametrize("length", [26, 41, 64])  # 26 first: a backtracking engine fails there, in seconds
def test_backtracking_pattern_is_matched_in_linear_time(length: int) -> None:
    model = "a" * (length - 1) + "!"  # an attribute value has at most 64 characters
    with quick():
        assert _matches(PATHOLOGICAL, {"model": {"string": model}}) is False
    assert _matches(PATHOLOGICAL, {"model": {"string": "a" * length}}) is True


@pytest.mark.parametrize(("expression", "want"), [
    # matches is an unanchored search, find the leftmost-first match, findAll Go's FindAllString (an empty match
    # right after a match does not count)
    ('device.attributes["gpu.example.com"].model.matches("100")', True),
    ('device.attributes["gpu.example.com"].model.matches("^100")', False),
    ('device.attributes["gpu.example.com"].model.find("[0-9]+") == "100"', True),
    ('"123 abc 456".findAll("[0-9]*") == ["123", "", "", "", "", "456"]', True),
    ('"123 abc 456".findAll("[0-9]*", 2) == ["123", ""]', True),
    ('"héllo".findAll("l|é") == ["é", "l", "l"]', True),
    ('"a1b2".findAll("[0-9]", 0) == []', True),
], ids=["matches-unanchored", "matches-anchored", "find", "findAll-empty-matches", "findAll-limit", "findAll-utf8",
        "findAll-zero"])
def test_regex_semantics_are_go_regexp(expression: str, want: bool) -> None:
    assert _matches(expression, {"model": {"string": "a100-sxm"}}) is want


RE2_REFUSES = [
    # (pattern as CEL source, Go's error text after "error parsing regexp: ")
    (r"(a)\\1", r"invalid escape sequence: `\1`"),
    ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
    ("(?<!a)b", "invalid or unsupported Perl syntax: `(?<!`"),
    ("x++", "invalid nested repetition operator: `++`"),
    ("a(b", "missing closing ): `a(b`"),
    (r"\\C", r"invalid escape sequence: `\C`"),  # RE2's any byte, which Go's regexp does not have
]


@pytest.mark.parametrize(("pattern", "_go"), RE2_REFUSES, ids=[p for p, _ in RE2_REFUSES])
def test_constant_pattern_re2_refuses_is_a_compile_error(pattern: str, _go: str) -> None:
    # cel-go's type checker validates matches' literal pattern (cel.ValidateRegexLiterals, on in Kubernetes)
    expression = f'device.attributes["gpu.example.com"].model.matches("{pattern}")'
    err = compile_expression(expression).error
    assert err is not None
    assert err.detail == "compilation failed: ERROR: <input>:1:52: invalid matches argument"


@pytest.mark.parametrize(("pattern", "go"), RE2_REFUSES, ids=[p for p, _ in RE2_REFUSES])
def test_constant_find_pattern_re2_refuses_fails_the_program(pattern: str, go: str) -> None:
    # Kubernetes' regex library compiles a literal find/findAll pattern when the program is built
    err = compile_expression(f'device.driver.find("{pattern}") == ""').error
    assert err is not None
    assert err.detail == f"program instantiation failed: error parsing regexp: {go}"


@pytest.mark.parametrize(("pattern", "go"), RE2_REFUSES, ids=[p for p, _ in RE2_REFUSES])
def test_pattern_re2_refuses_at_run_time_is_cel_gos_error(pattern: str, go: str) -> None:
    value = pattern.replace("\\\\", "\\")
    with pytest.raises(CELRuntimeError) as ei:
        _matches('device.driver.matches(device.attributes["gpu.example.com"].p)', {"p": {"string": value}})
    assert ei.value.detail == f"error parsing regexp: {go}"
    with pytest.raises(CELRuntimeError) as ei:
        _matches('device.driver.findAll(device.attributes["gpu.example.com"].p).size() == 0',
                 {"p": {"string": value}})
    assert ei.value.detail == f"Illegal regex: error parsing regexp: {go}"


def test_python_re_is_not_used_for_matching(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("Python's re used for CEL matching")

    for name in ("compile", "search", "match", "finditer", "findall", "fullmatch"):
        monkeypatch.setattr(re, name, refuse)
    expression = 'device.attributes["gpu.example.com"].model.matches("^a[0-9]+") && device.driver.find("gpu") != ""'
    assert CELCache().matches(expression, make_device({"model": {"string": "a100"}}), "gpu.example.com") is True


# --- 2. an expression too deep to estimate is never cheap ------------------------------------------------------

SEVEN_DEEP = "".join(f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{i}, " for i in range(7)) + "true" + ")" * 7
TERNARY_PREFIX = "false ? true : " * 360 + SEVEN_DEEP  # 5.6 KB, under the API's 10 KiB


def test_the_comprehension_alone_is_over_the_limit() -> None:
    assert exceeds_limit(SEVEN_DEEP)


def test_ternary_prefix_is_cel_gos_recursion_limit() -> None:
    with quick():
        err = compile_expression(TERNARY_PREFIX).error
    assert err is not None
    assert err.detail == "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250"


def test_ternary_prefix_is_refused_at_load() -> None:
    with pytest.raises(ValidationError) as ei:
        gpu_class(TERNARY_PREFIX)
    assert str(ei.value) == (f'DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: '
                             f'"{brief_str(TERNARY_PREFIX)}": compilation failed: ERROR: <input>:-1:0: expression '
                             f'recursion limit exceeded: 250')


@pytest.fixture
def estimator_overflows(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The estimator runs out of stack, whatever the expression (what the ternary prefix did before)."""

    def overflow(self: Any, node: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    estimate_cost.cache_clear()
    monkeypatch.setattr(celcost._Estimator, "cost", overflow)
    yield
    estimate_cost.cache_clear()


@pytest.mark.usefixtures("estimator_overflows")
def test_unknown_cost_is_over_the_limit() -> None:
    assert estimate_cost("device.driver == 'x'") == UNKNOWN > MAX_COST
    assert exceeds_limit("device.driver == 'x'")
    with pytest.raises(ValidationError, match="Forbidden: too complex, exceeds cost limit"):
        gpu_class("device.driver == 'x'")
    prog = compile_expression("device.driver == 'x'")
    assert prog.error is None and prog.over_budget
    with pytest.raises(CELRuntimeError, match="operation cancelled: actual cost limit exceeded"):
        CELCache().matches("device.driver == 'x'", make_device(), "x")


def test_a_program_without_a_cost_is_not_run() -> None:
    prog = CompiledExpression("true", compile_expression("true")._program, None)
    assert prog.cost is None and prog.over_budget
    with pytest.raises(CELRuntimeError, match="operation cancelled: actual cost limit exceeded"):
        prog.evaluate({})


# --- 3. deep relation chains: cel-go's parser limit, not a RecursionError ---------------------------------------

IN_CHAIN = " in ".join(["1"] * 1000) + " || device.driver == 'x'"  # 5 KB


def test_in_chain_is_a_compile_error() -> None:
    with quick():
        err = compile_expression(IN_CHAIN).error
    assert err is not None
    assert err.detail == "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"


def test_in_chain_is_refused_at_load() -> None:
    with pytest.raises(ValidationError) as ei:
        gpu_class(IN_CHAIN)
    assert str(ei.value).startswith('DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: "1 in 1 in ')
    assert str(ei.value).endswith('...": compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded')


def test_in_chain_in_a_claim_is_refused_at_load() -> None:
    manifest = {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu", "selectors": [{"cel": {"expression": IN_CHAIN}}]}}]}}}
    with pytest.raises(ValidationError, match=r"^ResourceClaim ns/c: spec\.devices\.requests\[0\]\.exactly\."
                                              r"selectors\[0\]\.cel\.expression: Invalid value: .* max recursion "
                                              r"depth exceeded$"):
        ResourceClaim.from_dict(manifest)


def _bypassing_load(expression: str) -> DeviceClass:
    """A class built in Python with ``expression``, which loading a manifest would have refused."""
    cls = gpu_class()
    return attrs.evolve(cls, spec=attrs.evolve(cls.spec, selectors=(DeviceSelector(expression),)))


@pytest.mark.parametrize(("expression", "error"), [
    (IN_CHAIN, "max recursion depth exceeded"),
    (TERNARY_PREFIX, "expression recursion limit exceeded: 250"),
], ids=["in-chain", "ternary-prefix"])
def test_allocator_names_the_class_and_selector(expression: str, error: str) -> None:
    a = Allocator(Features(), AllocatedState(), {"gpu": _bypassing_load(expression)}, [gpu_slice()])
    with quick(), pytest.raises(AllocatorError) as ei:
        a.allocate(NODE, [claim()])
    assert str(ei.value) == ("class gpu: selector #0: CEL compile error: compilation failed: ERROR: <input>:-1:0: "
                             f"{error}")


def test_scheduler_ends_the_pod_in_error_naming_the_class_and_selector() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}
    slice_ = {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
              "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0"}]}}
    template = {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "one", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}]}}
    c = cluster_from_documents([node, slice_, template, pod])
    # the class as an object handed to the scheduler without the cluster's validation
    hostile = KubeObject.from_dict({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                    "spec": {"selectors": [{"cel": {"expression": IN_CHAIN}}]}})
    s = Scheduler(load_config(None), seed=1)
    s.load(c.nodes, c.pods, [*c.objects, hostile])
    with quick(2.0):
        s.run()
    result = s.results["default/p"]
    assert result.outcome == "Error"
    assert "RecursionError" not in result.message
    # the plugin parses the class as loading would have, and refuses it naming the class and the selector
    assert result.message.startswith('running PreFilter plugin "DynamicResources": DeviceClass gpu: '
                                     'spec.selectors[0].cel.expression: Invalid value: "')
    assert result.message.endswith("compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded")


def test_cli_refuses_the_class_at_load(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                       "spec": {"selectors": [{"cel": {"expression": IN_CHAIN}}]}}))
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(cluster)], out, err) == 2
    assert "DeviceClass gpu: spec.selectors[0].cel.expression: Invalid value: " in err.getvalue()
    assert "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded" in err.getvalue()
    assert IN_CHAIN not in err.getvalue()  # not echoed whole


# --- the parser's limits: cel-go's, at their boundaries -------------------------------------------------------

def _nested(open_: str, inner: str, close: str, n: int) -> str:
    return open_ * n + inner + close * n


PARSER_LIMITS = [
    # (id, expression, cel-go's error or None when it compiles). The listener limit counts open invocations of
    # one grammar rule: the root expression is one, every nesting level (parentheses, list, argument, else branch)
    # one more; the visitor limit counts nested operators, selections, receiver calls and indexes.
    ("parens-249", _nested("(", "true", ")", 249), None),
    ("parens-250", _nested("(", "true", ")", 250), "expression recursion limit exceeded: 250"),
    ("lists-249", _nested("[", "1", "]", 249) + " != []", None),
    ("lists-250", _nested("[", "1", "]", 250) + " != []", "expression recursion limit exceeded: 250"),
    ("calls-249", _nested("size(", "[]", ")", 249) + " >= 0", None),
    ("ternary-249", "false ? true : " * 249 + "true", None),
    ("ternary-250", "false ? true : " * 250 + "true", "expression recursion limit exceeded: 250"),
    # right operands of + and * each open one more calc: 3 per level, 3 x 83 + 1 = 250, 3 x 84 + 1 = 253
    ("calc-rhs-83", _nested("1 + 2 * (", "1", ")", 83) + " > 0", None),
    ("calc-rhs-84", _nested("1 + 2 * (", "1", ")", 84) + " > 0", "expression recursion limit exceeded: 250"),
    ("plus-250", " + ".join(["1"] * 250) + " > 0", None),  # 249 + and the > : 250 visited
    ("plus-251", " + ".join(["1"] * 251) + " > 0", "max recursion depth exceeded"),
    ("select-251", "device" + ".a" * 251 + " == 1", "max recursion depth exceeded"),
    ("index-251", "device" + "[0]" * 251 + " == 1", "max recursion depth exceeded"),
    ("in-1000", IN_CHAIN, "max recursion depth exceeded"),
    # && and || are balanced trees in cel-go (not visited): any length
    ("and-2000", " && ".join(["device.driver != ''"] * 2000), None),
    ("or-2000", " || ".join(["device.driver == ''"] * 2000), None),
    ("code-points", "true" + " && true" * 12_500, "expression code point size exceeds limit: size: 100004, limit "
                                                   "100000"),
]


@pytest.mark.parametrize(("expression", "error"), [c[1:] for c in PARSER_LIMITS], ids=[c[0] for c in PARSER_LIMITS])
def test_parser_limits_are_cel_gos(expression: str, error: str | None) -> None:
    with quick():
        prog = compile_expression(expression)
        cost = estimate_cost(expression)
    if error is None:
        assert prog.error is None
        assert cost is not None
    else:
        assert prog.error is not None and prog.error.detail == f"compilation failed: ERROR: <input>:-1:0: {error}"
        assert cost is None


def test_nesting_within_cel_gos_limits_but_deeper_than_ours_is_refused() -> None:
    # 200 lists around 100 additions: within each of cel-go's limits, 300 deep in all
    expression = _nested("[", " + ".join(["1"] * 100), "]", 200) + " != []"
    err = compile_expression(expression).error
    assert err is not None
    assert err.detail == ("compilation failed: ERROR: <input>:-1:0: expression nested too deeply: more than 256 levels "
                          "(this interpreter's limit)")


def _deepest_within_limits() -> list[str]:
    return [_nested("[", "1", "]", 249) + " != []", " + ".join(["1"] * 250) + " > 0",
            _nested("dyn(", "1", ")", 249) + " >= 0", "false ? true : " * 249 + "true",
            "".join(f"[1].all(x{i}, " for i in range(249)) + "true" + ")" * 249]


def _at_depth(frames: int, fn: Callable[[], Any]) -> Any:
    return fn() if frames == 0 else _at_depth(frames - 1, fn)


@pytest.mark.parametrize("expression", _deepest_within_limits(), ids=["lists", "plus", "calls", "ternary", "all"])
def test_deepest_accepted_expressions_evaluate_from_a_deep_caller(expression: str) -> None:
    # 100 frames deeper than a test (the scheduler calls a selector about 25 frames deep): compiling, estimating
    # and evaluating still fit Python's default stack of 1,000 frames
    def evaluate() -> Any:
        estimate_cost.cache_clear()
        return CELCache().matches(expression, make_device(), "d"), estimate_cost(expression)

    result, cost = _at_depth(100, evaluate)
    assert isinstance(result, bool) and cost is not None and cost <= MAX_COST


# --- no exception but the compiler's: literals that used to escape as ValueError --------------------------------

@pytest.mark.parametrize(("expression", "error"), [
    ("1" * 5000 + " == 1", "ERROR: <input>:1:1: invalid int literal"),
    ("9223372036854775808 > 1", "ERROR: <input>:1:1: invalid int literal"),
    ("18446744073709551616u > 1u", "ERROR: <input>:1:1: invalid uint literal"),
    ('"\\U00110000" == ""', "ERROR: <input>:1:1: invalid unicode code point"),
    ('"\\ud800" == ""', "ERROR: <input>:1:1: invalid unicode code point"),
])
def test_out_of_range_literals_are_compile_errors(expression: str, error: str) -> None:
    err = compile_expression(expression).error
    assert err is not None and err.detail == f"compilation failed: {error}"


def test_int64_minimum_is_a_literal() -> None:
    assert compile_expression("-9223372036854775808 < 0").error is None
    assert _matches("-9223372036854775808 < 0") is True
