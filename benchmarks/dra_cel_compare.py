"""Compare CEL candidates on the ported DRA CEL table (tests/fixtures/upstream/dra-cel-compile.yaml).

Not part of the suite. Install the candidates first:
    pip install cel-python common-expression-language cel-expr-python
Each candidate gets the smallest adapter that makes DRA expressions expressible: quantities and versions as
tagged maps, library functions registered where the package allows it. Prints passes per candidate and the
time per evaluation of a typical selector.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CASES = yaml.safe_load((ROOT / "tests/fixtures/upstream/dra-cel-compile.yaml").read_text())["cases"]
TYPICAL = ('device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100" '
           '&& device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("10Gi"))')


def device_dict(case: dict[str, Any]) -> dict[str, Any]:
    from scheduling_framework.dra.cel import device_variable
    from tests.dra.test_cel import make_device
    return device_variable(make_device(case.get("attributes"), case.get("capacity")), case.get("driver", ""))


def check(case: dict[str, Any], compile_fn: Any, eval_fn: Any) -> bool:
    try:
        prog = compile_fn(case["expression"])
    except Exception:  # noqa: BLE001
        return "expectCompileError" in case
    if "expectCompileError" in case:
        return False
    try:
        got = eval_fn(prog, device_dict(case))
    except Exception:  # noqa: BLE001
        return "expectMatchError" in case
    return "expectMatchError" not in case and got is case.get("expectMatch")


def ours() -> tuple[int, float]:
    from scheduling_framework.dra.cel import CELCache, compile_expression
    from scheduling_framework.dra.cel import _base_context as ctx
    ok = 0
    for c in CASES:
        def ev(p: Any, d: dict[str, Any]) -> Any:
            cx = ctx()
            cx.add_variable("device", d)
            return p.evaluate(cx, d)

        def comp(e: str) -> Any:
            p = compile_expression(e)
            if p.error:
                raise p.error
            return p
        ok += check(c, comp, ev)
    from tests.dra.test_cel import make_device
    devs = [make_device({"gpu.example.com/model": {"string": f"a{i}"}}, {"gpu.example.com/memory": "40Gi"})
            for i in range(2000)]
    cache = CELCache()
    cache.compile(TYPICAL).fast = None  # measure the interpreter, not our Python fast path
    t = time.perf_counter()
    for d in devs:
        cache.matches(TYPICAL, d, "gpu.example.com")
    return ok, (time.perf_counter() - t) / len(devs) * 1e6


def celpy_candidate() -> tuple[int, float]:
    import celpy
    from celpy import celtypes

    from scheduling_framework.dra import cel as ours_mod
    env = celpy.Environment()
    fns = {k: (lambda f: lambda *a: celpy.json_to_cel(f(*[_plain(x) for x in a])))(f)
           for k, f in ours_mod._FUNCTIONS.items()}

    def _plain(x: Any) -> Any:
        if isinstance(x, celtypes.MapType):
            return {str(k): _plain(v) for k, v in x.items()}
        if isinstance(x, celtypes.ListType):
            return [_plain(v) for v in x]
        if isinstance(x, celtypes.BoolType):
            return bool(x)
        if isinstance(x, celtypes.IntType):
            return int(x)
        if isinstance(x, celtypes.StringType):
            return str(x)
        return x
    ok = 0
    for c in CASES:
        ok += check(c, lambda e: env.program(env.compile(e), functions=fns),
                    lambda p, d: bool(p.evaluate({"device": celpy.json_to_cel(d)})))
    prog = env.program(env.compile(TYPICAL), functions=fns)
    d = celpy.json_to_cel({"driver": "gpu.example.com", "attributes": {"gpu.example.com": {"model": "a100"}},
                           "capacity": {"gpu.example.com": {"memory": {ours_mod._QUANTITY_KEY: "40Gi"}}}})
    t = time.perf_counter()
    for _ in range(200):
        prog.evaluate({"device": d})
    return ok, (time.perf_counter() - t) / 200 * 1e6


def cel_expr_candidate() -> tuple[int, float]:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_strings
    env = cel.NewEnv(variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
                     extensions=[ext_strings.ExtStrings()])
    ok = 0

    def ev(p: Any, d: dict[str, Any]) -> Any:
        v = p.eval(data={"device": d}).value()
        if not isinstance(v, bool):
            raise ValueError(v)
        return v
    for c in CASES:
        ok += check(c, env.compile, ev)
    p = env.compile('device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"')
    d = {"driver": "gpu.example.com", "attributes": {"gpu.example.com": {"model": "a100"}}}
    t = time.perf_counter()
    for _ in range(2000):
        p.eval(data={"device": d})
    return ok, (time.perf_counter() - t) / 2000 * 1e6


if __name__ == "__main__":
    for name, fn in (("common-expression-language (+ our adapter)", ours), ("cel-python", celpy_candidate),
                     ("cel-expr-python", cel_expr_candidate)):
        try:
            passed, us = fn()
            print(f"{name}: {passed}/{len(CASES)} table cases, {us:.1f} us per uncached evaluation")
        except ImportError as e:
            print(f"{name}: not installed ({e})")
