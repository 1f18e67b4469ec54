"""Sweep throughput: 200 small scenarios on one process, the local process pool and a local Ray runtime.

    python -m benchmarks.sweep [--scenarios 200] [--workers N] [--backends one,local,ray]

Each scenario: 20 nodes from a template, 120 pods in three waves, a node drained, a wait, a node added
(seven steps, ~150 scheduling cycles). Prints scenarios/s per backend and checks that every backend
returned the same rows (timing fields aside).
"""

from __future__ import annotations

import argparse
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


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in rows]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--backends", default="one,local,ray")
    a = ap.parse_args(argv)
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


if __name__ == "__main__":
    raise SystemExit(main())
