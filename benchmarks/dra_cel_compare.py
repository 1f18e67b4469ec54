"""Compare CEL candidates on the ported DRA CEL table (tests/fixtures/upstream/dra-cel-compile.yaml).

Not part of the suite. Our interpreter (scheduling_framework.dra.celeval, pure Python) needs nothing; install
the other candidates first:
    pip install cel-python common-expression-language cel-expr-python
Each package gets the smallest adapter that makes DRA expressions expressible: quantities and versions as
tagged maps, library functions registered where the package allows it. Prints passes per candidate and the
time per evaluation of a typical selector (uncached, the device variable built each time).
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


def device_dict(case: dict[str, Any], plain: bool = True) -> dict[str, Any]:
    """The ``device`` variable; ``plain``: with ordinary dicts (a missing domain is then a missing key)."""
    from scheduling_framework.dra.cel import device_variable
    from tests.dra.test_cel import make_device
    d = device_variable(make_device(case.get("attributes"), case.get("capacity")), case.get("driver", ""))
    return {**d, "attributes": dict(d["attributes"]), "capacity": dict(d["capacity"])} if plain else d


def check(case: dict[str, Any], compile_fn: Any, eval_fn: Any, plain: bool = True) -> bool:
    try:
        prog = compile_fn(case["expression"])
    except Exception:
        return "expectCompileError" in case
    if "expectCompileError" in case:
        return False
    try:
        got = eval_fn(prog, device_dict(case, plain))
    except Exception:
        return "expectMatchError" in case
    return "expectMatchError" not in case and got is case.get("expectMatch")


def ours() -> tuple[int, float]:
    from scheduling_framework.dra.cel import CELCache, compile_expression
    ok = 0
    for c in CASES:
        def comp(e: str) -> Any:
            p = compile_expression(e)
            if p.error:
                raise p.error
            return p
        ok += check(c, comp, lambda p, d: p.evaluate(d), plain=False)
    return ok, _per_device(CELCache())


def _per_device(cache: Any) -> float:
    from tests.dra.test_cel import make_device
    devs = [make_device({"gpu.example.com/model": {"string": f"a{i}"}}, {"gpu.example.com/memory": "40Gi"})
            for i in range(2000)]
    cache.compile(TYPICAL).fast = None  # measure the interpreter, not our Python fast path
    t = time.perf_counter()
    for d in devs:
        cache.matches(TYPICAL, d, "gpu.example.com")
    return (time.perf_counter() - t) / len(devs) * 1e6


def cel_rust_candidate() -> tuple[int, float]:
    import cel

    from scheduling_framework.dra import cel as ours_mod

    def ev(p: Any, d: dict[str, Any]) -> Any:
        ctx = cel.Context()
        for name, fn in ours_mod._FUNCTIONS.items():
            ctx.add_function(name, fn)
        plain = {**d, "attributes": dict(d["attributes"]), "capacity": dict(d["capacity"])}
        while True:
            ctx.add_variable("device", plain)
            try:
                return p.execute(ctx)
            except KeyError as e:  # a domain the device lacks reads as an empty map upstream
                key = str(e.args[0])
                target = next((m for m in ("attributes", "capacity") if key not in plain[m]), None)
                if target is None:
                    raise
                plain[target][key] = {}
    ok = 0
    for c in CASES:
        ok += check(c, cel.compile, ev)
    from tests.dra.test_cel import make_device
    prog = cel.compile(TYPICAL)
    devs = [make_device({"gpu.example.com/model": {"string": f"a{i}"}}, {"gpu.example.com/memory": "40Gi"})
            for i in range(2000)]
    t = time.perf_counter()
    for dev in devs:
        ev(prog, ours_mod.device_variable(dev, "gpu.example.com"))
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
    for name, fn in (("ours (scheduling_framework.dra.celeval)", ours),
                     ("common-expression-language (+ adapter)", cel_rust_candidate), ("cel-python", celpy_candidate),
                     ("cel-expr-python", cel_expr_candidate)):
        try:
            passed, us = fn()
            print(f"{name}: {passed}/{len(CASES)} table cases, {us:.1f} us per uncached evaluation")
        except ImportError as e:
            print(f"{name}: not installed ({e})")
