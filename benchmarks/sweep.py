"""Sweep throughput: 200 small scenarios on one process, the local process pool and a local Ray runtime.

    python -m benchmarks.sweep [--scenarios 200] [--workers N] [--backends one,local,ray]
    python -m benchmarks.sweep --tiny 10000 [--workers N] [--backends one,local,ray]   # per-scenario overhead
    python -m benchmarks.sweep --first-row                                             # 10^6 scenarios

``--tiny N``: N scenarios with nothing to schedule, so that what is measured is the cost of a scenario to the
backend (building it, shipping it, the row coming back); the overhead per scenario is the time after the first
row, less one process's, over N - 1 (start-up costs aside). ``--first-row``: a 1000 x 1000 matrix, the time
from reading the sweep to its first row written.

Each scenario: 20 nodes from a template, 120 pods in three waves, a node drained, a wait, a node added
(seven steps, ~150 scheduling cycles). Prints scenarios/s per backend and checks that every backend
returned the same rows (timing fields aside).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pickle
import time
from collections.abc import Sequence
from typing import Any

from scheduling_framework.scenario.sweep import TIMING_FIELDS, run_sweep, sweep_from_dict

SCENARIO: dict[str, Any] = {
    "kind": "Scenario", "name": "bench",
    "templates": {
        "nodes": {"worker": {"metadata": {"labels": {"kubernetes.io/hostname": "w",
                                                     "topology.kubernetes.io/zone": "a"}},
                             "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}},
        "pods": {"web": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx",
                                                  "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}}},
    },
    "steps": [
        {"op": "createNodes", "template": "worker", "count": 20},
        {"op": "createPods", "template": "web", "count": 40},
        {"op": "createPods", "template": "web", "count": 40},
        {"op": "createPods", "template": "web", "count": 40},
        {"op": "deleteNodes", "names": ["worker-0"]},
        {"op": "wait", "seconds": 30},
        {"op": "createNodes", "template": "worker", "count": 1},
    ],
}


def make_sweep(n: int) -> dict[str, Any]:
    sizes = ["4", "8"]
    return {"kind": "Sweep", "name": "bench", "scenario": SCENARIO,
            "matrix": {"templates.nodes.worker.status.allocatable.cpu": sizes}, "seeds": max(1, n // len(sizes))}


def tiny_sweep(names: int, seeds: int) -> dict[str, Any]:
    return {"kind": "Sweep", "name": "tiny", "scenario": {"kind": "Scenario", "steps": []},
            "matrix": {"name": [f"s{i}" for i in range(names)]}, "seeds": seeds}


def _timed(sweep: Any, kind: str, workers: int) -> tuple[float, float, int]:
    """(wall seconds, seconds to the first row, rows)."""
    first: list[float] = []
    t0 = time.perf_counter()

    def on_row(_: dict[str, Any]) -> None:
        if not first:
            first.append(time.perf_counter() - t0)

    rows = run_sweep(sweep, backend=kind, workers=workers, on_row=on_row)
    return time.perf_counter() - t0, first[0] if first else 0.0, len(rows)


def tiny(n: int, workers: int, backends: list[str]) -> None:
    sweep = sweep_from_dict(tiny_sweep(100, max(1, n // 100)))
    base: float | None = None
    for backend in backends:
        kind, w = ("local", 1) if backend == "one" else (backend, workers)
        wall, first, rows = _timed(sweep, kind, w)
        after = (wall - first) / max(rows - 1, 1)
        if base is None:
            base = after
        print(f"{backend:6s} {w} worker(s) {wall:7.2f} s  {rows / wall:7.0f} rows/s  first row {first:5.2f} s  "
              f"{after * 1e3:6.2f} ms per scenario after it ({(after - base) * 1e3:+.2f} ms vs one process)")


def first_row(workers: int) -> None:
    import tempfile

    class Stop(Exception):
        pass

    t0 = time.perf_counter()
    sweep = sweep_from_dict(tiny_sweep(1000, 1000))
    read = time.perf_counter() - t0

    def stop(_: dict[str, Any]) -> None:
        raise Stop

    with tempfile.TemporaryDirectory() as d, contextlib.suppress(Stop):
        run_sweep(sweep, workers=workers, on_row=stop, jsonl=os.path.join(d, "rows.jsonl"))
    print(f"{len(sweep)} scenarios: read in {read:.3f} s, first row written after {time.perf_counter() - t0:.2f} s "
          f"({workers} worker(s))")


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in rows]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--backends", default="one,local,ray")
    ap.add_argument("--tiny", type=int, default=0, metavar="N", help="N empty scenarios: per-scenario overhead")
    ap.add_argument("--first-row", action="store_true", help="time to the first row of a 10^6 sweep")
    a = ap.parse_args(argv)
    if a.first_row:
        first_row(a.workers)
        return 0
    if a.tiny:
        tiny(a.tiny, a.workers, [b for b in a.backends.split(",") if b != "ray" or _has_ray()])
        return 0
    sweep = sweep_from_dict(make_sweep(a.scenarios))
    size = len(pickle.dumps(sweep.cases[0]))
    print(f"{len(sweep.cases)} scenarios, {a.workers} workers, {size} bytes per pickled scenario")
    reference: list[dict[str, Any]] | None = None
    for backend in a.backends.split(","):
        kind, workers = ("local", 1) if backend == "one" else (backend, a.workers)
        if kind == "ray":
            try:
                import ray  # noqa: F401
            except ImportError:
                print("ray: not installed (pip install '.[ray]')")
                continue
        t0 = time.perf_counter()
        rows = run_sweep(sweep, backend=kind, workers=workers)
        dt = time.perf_counter() - t0
        cycles = sum(r.get("cycles", 0) for r in rows)
        same = "" if reference is None else (" same rows" if _stable(rows) == reference else " ROWS DIFFER")
        reference = reference or _stable(rows)
        print(f"{backend:6s} {dt:7.2f} s  {len(rows) / dt:7.1f} scenarios/s  {cycles / dt:8.0f} cycles/s{same}")
    return 0


def _has_ray() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
