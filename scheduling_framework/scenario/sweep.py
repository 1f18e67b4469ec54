"""Sweeps: a matrix of what-ifs over one scenario, run in parallel, one result row per scenario.

Schema (``kind: Sweep``)::

    name: str                    # optional
    scenario: PATH | {Scenario}  # the base scenario
    matrix:                      # field path in the scenario -> values; the product of all entries is taken
      templates.nodes.worker.status.allocatable.cpu: ["4", "8"]
      steps[1].count: [10, 20, 40]
      config: [null, binpack.yaml]
    seeds: [1, 2, 3]             # or N for seeds 1..N (default [the scenario's seed])

Field paths use ``.`` between keys, ``[N]`` for list items and ``["key.with.dots"]`` for keys holding dots.
Each expanded scenario is validated when the sweep is read (errors name the scenario's parameters), then
travels by content to the backend: a local process pool (default, no extra dependency) or Ray
(``pip install 'scheduling-framework[ray]'``). Rows stream back as scenarios finish; a failing scenario
becomes a row with its ``error`` and never loses the others.
"""

from __future__ import annotations

import copy
import csv
import io
import itertools
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.scenario.model import Scenario, ScenarioError, scenario_from_dict

MAX_SCENARIOS = 1_000_000
_SEGMENT = re.compile(r'\s*(?:\[\s*(\d+)\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*\'([^\']*)\'\s*\]|\.?([^.\[\]]+))')


@attrs.frozen
class SweepCase:
    """One expanded scenario: its index, the parameter values that made it, and the scenario by content."""

    index: int
    params: Mapping[str, Any]
    seed: int
    scenario: Scenario


@attrs.frozen
class Sweep:
    name: str
    cases: tuple[SweepCase, ...]


def parse_path(path: str) -> list[str | int]:
    """``a.b[2]["c.d"]`` -> ``["a", "b", 2, "c.d"]``; raises ValueError on a malformed path."""
    out: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"malformed field path {path!r} at character {pos + 1}")
        idx, dq, sq, key = m.groups()
        out.append(int(idx) if idx is not None else (dq if dq is not None else sq if sq is not None else key))
        pos = m.end()
    if not out:
        raise ValueError("empty field path")
    return out


def set_path(doc: Any, path: Sequence[str | int], value: Any) -> None:
    """Set ``value`` at ``path`` in a nested structure; missing mapping keys are created."""
    cur = doc
    for i, seg in enumerate(path):
        last = i == len(path) - 1
        if isinstance(seg, int):
            if not isinstance(cur, list) or not -len(cur) <= seg < len(cur):
                raise ValueError(f"[{seg}]: no such list item")
            if last:
                cur[seg] = value
            else:
                cur = cur[seg]
        else:
            if not isinstance(cur, dict):
                raise ValueError(f"{seg}: parent is not a mapping")
            if last:
                cur[seg] = value
            else:
                nxt = cur.get(seg)
                if nxt is None:
                    nxt = cur[seg] = {}
                cur = nxt


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    from scheduling_framework.scenario.io import read_yaml_mapping

    p = os.fspath(path)
    return sweep_from_dict(read_yaml_mapping(p, "sweep"), base_dir=os.path.dirname(os.path.abspath(p)), source=p)


def sweep_from_dict(doc: Mapping[str, Any], base_dir: str = ".", source: str = "<sweep>") -> Sweep:
    """Expand and validate a sweep; raises ScenarioError listing every problem with its field path."""
    from scheduling_framework.scenario.io import read_yaml_mapping

    problems: list[str] = []
    if not isinstance(doc, Mapping):
        raise ScenarioError(source, [f"expected a mapping, got {type(doc).__name__}"])
    for k in doc:
        if k not in ("apiVersion", "kind", "name", "scenario", "matrix", "seeds"):
            problems.append(f"{k}: Unsupported field (expected name, scenario, matrix, seeds)")
    if doc.get("kind", "Sweep") != "Sweep":
        problems.append(f'kind: Unsupported value: {doc.get("kind")!r} (expected "Sweep")')
    base = doc.get("scenario")
    scenario_dir = base_dir
    if isinstance(base, str):
        scen_path = os.path.join(base_dir, base)
        try:
            base = read_yaml_mapping(scen_path, "scenario")
            scenario_dir = os.path.dirname(os.path.abspath(scen_path))
        except SchedulingFrameworkError as e:
            raise ScenarioError(source, [f"scenario: {e}"]) from None
    if not isinstance(base, Mapping):
        raise ScenarioError(source, [*problems, "scenario: Required value: a scenario file path or mapping"])
    matrix = doc.get("matrix", {}) or {}
    axes: list[tuple[str, list[str | int], list[Any]]] = []
    if not isinstance(matrix, Mapping):
        problems.append("matrix: Invalid value: expected a mapping of field path to a list of values")
    else:
        for key, values in matrix.items():
            try:
                parsed = parse_path(str(key))
            except ValueError as e:
                problems.append(f"matrix[{key!r}]: {e}")
                continue
            if not isinstance(values, list) or not values:
                problems.append(f"matrix[{key!r}]: Invalid value: expected a non-empty list of values")
                continue
            axes.append((str(key), parsed, values))
    seeds_v = doc.get("seeds")
    if seeds_v is None:
        seeds = [base.get("seed", 0)]
    elif isinstance(seeds_v, int) and not isinstance(seeds_v, bool) and 1 <= seeds_v <= MAX_SCENARIOS:
        seeds = list(range(1, seeds_v + 1))
    elif isinstance(seeds_v, list) and seeds_v and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                          for s in seeds_v):
        seeds = list(seeds_v)
    else:
        problems.append("seeds: Invalid value: expected N (seeds 1..N) or a list of non-negative integers")
        seeds = [0]
    total = len(seeds)
    for _, _, values in axes:
        total *= len(values)
    if total > MAX_SCENARIOS:
        problems.append(f"matrix: Too many: {total} scenarios (at most {MAX_SCENARIOS})")
    if problems:
        raise ScenarioError(source, problems)
    name = str(doc.get("name") or os.path.splitext(os.path.basename(source))[0])
    cases: list[SweepCase] = []
    # Validation of one combination is shared by every seed (only the seed differs).
    for combo in itertools.product(*(values for _, _, values in axes)):
        params = {key: v for (key, _, _), v in zip(axes, combo, strict=True)}
        raw = copy.deepcopy(dict(base))
        try:
            for (key, parsed, _), v in zip(axes, combo, strict=True):
                try:
                    set_path(raw, parsed, copy.deepcopy(v))
                except ValueError as e:
                    raise ScenarioError(source, [f"matrix[{key!r}]: {e}"]) from None
            sc = scenario_from_dict(raw, base_dir=scenario_dir, source=f"{source} {json.dumps(params, default=str)}",
                                    default_name=name)
        except ScenarioError as e:
            raise ScenarioError(source, e.problems if e.source == source else [str(e)]) from None
        for seed in seeds:
            cases.append(SweepCase(len(cases), params, seed, attrs.evolve(sc, seed=seed)))
    return Sweep(name, tuple(cases))


# --- running ------------------------------------------------------------------------------------


def run_case(case: SweepCase) -> dict[str, Any]:
    """Run one case and return its result row; never raises (an error becomes the row's ``error``)."""
    from scheduling_framework.scenario.replay import _percentile, run_scenario

    row: dict[str, Any] = {"index": case.index, "scenario": case.scenario.name, "seed": case.seed,
                           "params": dict(case.params)}
    try:
        r = run_scenario(case.scenario)
    except Exception as e:  # a scenario's failure is its own row, never the sweep's
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    f = r.final
    cycles = list(r.cycle_ms)
    row.update({"scheduled": f.scheduled, "unschedulable": f.unschedulable, "pending": f.pending,
                "errors": f.errors, "evicted": sum(s.evicted for s in r.steps), "nodes": f.nodes,
                "nodesUsed": f.nodes_used, "cpuUtilization": f.cpu_utilization,
                "memoryUtilization": f.memory_utilization, "cycles": len(cycles),
                "p50Ms": round(_percentile(cycles, 0.5), 3), "p99Ms": round(_percentile(cycles, 0.99), 3),
                "seconds": round(r.seconds, 4), "error": None})
    return row


def run_cases(cases: Sequence[SweepCase]) -> list[dict[str, Any]]:
    """Run several cases in one task (see :func:`run_case`)."""
    return [run_case(c) for c in cases]


# Fields that depend on the machine, not on the scenario: left out when comparing backends.
TIMING_FIELDS = ("p50Ms", "p99Ms", "seconds")


def _run_local(cases: Sequence[SweepCase], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(cases) <= 1:
        for c in cases:
            yield run_case(c)
        return
    import concurrent.futures as cf
    import multiprocessing

    # "spawn" would re-import the world per worker; "fork" is cheap where the platform has it.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    ex = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    try:
        futures = {ex.submit(run_case, c): c for c in cases}
        for fut in cf.as_completed(futures):
            c = futures[fut]
            try:
                yield fut.result()
            except Exception as e:  # the worker process died (e.g. killed): report, keep the others
                yield {"index": c.index, "scenario": c.scenario.name, "seed": c.seed, "params": dict(c.params),
                       "error": f"worker failed: {type(e).__name__}: {e}"}
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def _run_ray(cases: Sequence[SweepCase], address: str | None, workers: int) -> Iterator[dict[str, Any]]:
    import importlib

    try:
        # Typed as Any: Ray is an optional extra, and the core type-checks without it.
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise SchedulingFrameworkError("the ray backend needs Ray: pip install 'scheduling-framework[ray]'") from None
    started = False
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kw["address"] = address
        else:
            # A local runtime stays on the loopback interface.
            kw["_node_ip_address"] = "127.0.0.1"
            if workers > 0:
                kw["num_cpus"] = workers
        ray.init(**kw)
        started = True
    # Several scenarios per task: a Ray task costs the driver about a millisecond, which would dominate a
    # sweep of millions of small scenarios; a few chunks per worker keep every CPU busy to the end.
    cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
    size = max(1, min(64, len(cases) // (cpus * 4)))
    chunks = [list(cases[i:i + size]) for i in range(0, len(cases), size)]
    remote = ray.remote(run_cases)
    pending = {remote.remote(chunk): chunk for chunk in chunks}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                chunk = pending.pop(ref)
                try:
                    yield from ray.get(ref)
                except Exception as e:
                    for c in chunk:
                        yield {"index": c.index, "scenario": c.scenario.name, "seed": c.seed,
                               "params": dict(c.params), "error": f"ray task failed: {type(e).__name__}: {e}"}
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


def run_sweep(sweep: Sweep, backend: str = "local", workers: int | None = None, address: str | None = None,
              on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run every case; rows are passed to ``on_row`` as they finish and returned sorted by index."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    if backend == "local":
        it = _run_local(sweep.cases, n)
    elif backend == "ray":
        it = _run_ray(sweep.cases, address, n if workers is not None else 0)
    else:
        raise SchedulingFrameworkError(f'unknown sweep backend "{backend}" (expected "local" or "ray")')
    rows = []
    for row in it:
        if on_row is not None:
            on_row(row)
        rows.append(row)
    rows.sort(key=lambda r: r["index"])
    return rows


# --- output --------------------------------------------------------------------------------------

CSV_FIELDS = ("index", "scenario", "seed", "scheduled", "unschedulable", "pending", "errors", "evicted", "nodes",
              "nodesUsed", "cpuUtilization", "memoryUtilization", "cycles", "p50Ms", "p99Ms", "seconds", "error")


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rows)


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    params: list[str] = []
    for r in rows:
        for k in r.get("params", {}):
            if k not in params:
                params.append(k)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*CSV_FIELDS, *(f"param:{p}" for p in params)])
    for r in rows:
        w.writerow([_cell(r.get(f)) for f in CSV_FIELDS] + [_cell(r.get("params", {}).get(p)) for p in params])
    return buf.getvalue()


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True)
    return str(v)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if not r.get("error")]
    return {"scenarios": len(rows), "failed": len(rows) - len(ok),
            "scheduled": sum(r["scheduled"] for r in ok), "unschedulable": sum(r["unschedulable"] for r in ok),
            "allScheduled": sum(1 for r in ok if r["pending"] == 0)}
