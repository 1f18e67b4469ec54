"""Issue 36: property tests for the paths the hostile-input campaign opened.

- damaged dumps in UTF-16/32 (with and without byte-order mark), YAML with merge keys, explicit tags and duplicate
  keys: a loaded cluster or a SchedulingFrameworkError with a bounded message, never anything else;
- random CEL selectors built from nested operators, comprehensions and regular expressions: compiled and evaluated
  against a device within a time bound, failing only with CEL's own errors.

Examples: ``SF_FUZZ_EXAMPLES`` (default 25 per property), as in test_input_fuzz.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_framework.dra.cel import CELCache, CELCompileError, CELRuntimeError
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.ingest.cluster import load_cluster
from tests.dra.test_cel import make_device
from tests.hardening.test_input_fuzz import VALID, _check_error, _edited

EXAMPLES = int(os.environ.get("SF_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

BASE_YAML = yaml.safe_dump_all(VALID)
BASE_JSON = json.dumps({"apiVersion": "v1", "kind": "List", "items": VALID}, indent=2)
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]


def _load_bytes(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"fuzz{suffix}"
        path.write_bytes(data)
        try:
            load_cluster(path, max_input_bytes=8 << 20)
        except SchedulingFrameworkError as e:
            _check_error(e)


@FUZZ
@given(base=st.sampled_from([(BASE_YAML, ".yaml"), (BASE_JSON, ".json")]), encoding=st.sampled_from(ENCODINGS),
       edits=st.lists(st.tuples(st.integers(min_value=0, max_value=4000), st.integers(min_value=0, max_value=6),
                                st.sampled_from(["", "\x00", "\ufeff", "é", "\U0001f600", "[", "{", '"'])),
                      max_size=3),
       cut=st.integers(min_value=0, max_value=7))
def test_damaged_dumps_in_any_unicode_encoding_never_crash(base: tuple[str, str], encoding: str,
                                                             edits: list[tuple[int, int, str]], cut: int) -> None:
    text, suffix = base
    data = _edited(text, edits).encode(encoding, errors="surrogatepass")
    # a cut inside a code unit at the end (an odd byte count for UTF-16, ...)
    _load_bytes(data[:len(data) - cut] if cut else data, suffix)


YAML_INSERTS = ["<<: {a: 1}\n", "<<: [*x, *y]\n", "!!map {}", "!!set {a, b}", "!!omap [a: 1]", "!!pairs [a: 1]",
                "spec: {}\n", "metadata: {}\n", "kind: Pod\n", "x: &x {a: 1}\n", "y: &y {b: 2}\n", "!!python/name:os",
                "!custom x", "? [a]\n: 1\n", "<<: 3\n"]


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(min_value=0, max_value=len(BASE_YAML)),
                                st.integers(min_value=0, max_value=3), st.sampled_from(YAML_INSERTS)),
                      min_size=1, max_size=5),
       strict=st.booleans())
def test_yaml_with_merge_keys_tags_and_duplicates_never_crashes(edits: list[tuple[int, int, str]],
                                                                 strict: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzz.yaml"
        path.write_text(_edited(BASE_YAML, edits))
        try:
            load_cluster(path, strict=strict)
        except SchedulingFrameworkError as e:
            _check_error(e)


ATOMS = ['device.driver', '"gpu"', "1", "2.5", "true", 'device.attributes["gpu.example.com"].model',
         'device.attributes["gpu.example.com"].index', '[1, 2, 3]', '{"a": 1}', "null", "b'x'"]
PATTERNS = ["^(a+)+$", "(a|aa)*$", "(?i)a.*b", "(a)\\\\1", "(?=a)", "[", "a{1000}", "\\\\p{L}+", "x++", ".*.*.*!"]


def _expression() -> st.SearchStrategy[str]:
    leaf = st.sampled_from(ATOMS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["&&", "||", "==", "!=", "<", "+", "*", "in", "/", "%"]), inner)
        return st.one_of(
            binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
            inner.map(lambda e: f"!{e}"),
            inner.map(lambda e: f"[{e}, {e}].all(x, x == {e})"),
            inner.map(lambda e: f"[1, 2, 3].exists(i, [1, 2, 3].all(j, i + j > {e}))"),
            st.tuples(inner, st.sampled_from(PATTERNS)).map(lambda t: f'string({t[0]}).matches("{t[1]}")'),
            inner.map(lambda e: f"size({e})"),
        )

    return st.recursive(leaf, extend, max_leaves=40)


def _deep_chain() -> st.SearchStrategy[str]:
    """One operator repeated to a depth near or past the parser's limits (``1 in 1 in ... in 1``, ``!!!...x``,
    ``((((x))))``), the shapes that once overflowed Python's stack."""
    return st.one_of(
        st.tuples(st.sampled_from([" in ", " + ", " && ", " == ", " < ", "."]), st.integers(1, 1500)).map(
            lambda t: t[0].join(["1"] * t[1]) if t[0] != "." else "device" + ".driver" * t[1]),
        st.integers(1, 1500).map(lambda n: "!" * n + "true"),
        st.integers(1, 1500).map(lambda n: "(" * n + "1" + ")" * n),
        st.integers(1, 1500).map(lambda n: "[" * n + "1" + "]" * n),
    )


def _nested_comprehension() -> st.SearchStrategy[str]:
    """Comprehensions nested ``depth`` deep over a ten-element list: cost x10 per level."""
    def build(depth: int) -> str:
        e = "true"
        for i in range(depth):
            e = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{i}, {e})"
        return e
    return st.integers(1, 9).map(build)


MODELS = st.one_of(st.text(alphabet="ab!", max_size=64), st.integers(20, 63).map(lambda n: "a" * n + "!"))
REGEX = st.sampled_from(PATTERNS).map(lambda p: f'device.attributes["gpu.example.com"].model.matches("{p}")')


def _bounded(expression: str, model: str) -> None:
    device = make_device({"model": {"string": model}, "index": {"int": 1}})
    # CPU time of this process: the bound is on the evaluator's work, not on what else the machine runs (a CI
    # suite beside another job once took 17.7 s of wall time for a 0.3 s evaluation)
    t0 = time.process_time()
    with contextlib.suppress(CELCompileError, CELRuntimeError):
        CELCache().matches(expression, device, "gpu.example.com")
    assert time.process_time() - t0 < 2.0, expression[:200]


@FUZZ
@given(expression=_expression(), prefix=st.integers(min_value=0, max_value=400), model=MODELS)
def test_random_cel_selectors_end_in_time_with_cel_errors_only(expression: str, prefix: int, model: str) -> None:
    # a long ternary prefix is the shape that once made the cost estimator give up and the selector pass as cheap
    _bounded("false ? true : " * prefix + expression, model)


@FUZZ
@given(expression=_deep_chain())
def test_deeply_chained_selectors_are_cel_errors_not_recursion(expression: str) -> None:
    _bounded(expression, "a")


@FUZZ
@given(expression=_nested_comprehension(), prefix=st.integers(min_value=0, max_value=400))
def test_costly_comprehensions_are_refused_or_cheap(expression: str, prefix: int) -> None:
    _bounded("false ? true : " * prefix + expression, "a")


@FUZZ
@given(expression=REGEX, model=MODELS)
def test_regular_expressions_match_in_linear_time(expression: str, model: str) -> None:
    _bounded(expression, model)
