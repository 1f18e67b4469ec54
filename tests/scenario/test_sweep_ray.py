"""The Ray backend on a real local Ray runtime: a worker killed once and twice, SIGTERM, SIGINT, resume (skipped
without Ray).
Few and small: each test starts a Ray runtime, which takes seconds."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from scheduling_framework.scenario import sweep as sw
from tests.scenario.sweep_procs import Cli, jsonl_rows, marked, ray_workers, slow_sweep, wait_for

pytest.importorskip("ray", reason="Ray is not installed for this Python (pip install '.[ray]')")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="lists processes through /proc")


def test_ray_worker_killed_mid_scenario_is_retried(tmp_path: Path) -> None:
    sweep = slow_sweep(tmp_path, pods=4000, seeds=2)
    jl = tmp_path / "r.jsonl"
    cli = Cli(["sweep", str(sweep), "--backend", "ray", "--workers", "2", "--jsonl", str(jl)], tmp_path)
    try:
        busy = wait_for(lambda: ray_workers(cli.mark, "run_indexes"), timeout=180)
        os.kill(busy[0], signal.SIGKILL)
        rc, _out, err = cli.wait()
        assert rc == 0, err
        rows = jsonl_rows(jl)
        assert sorted(r["index"] for r in rows) == [0, 1] and all(r["error"] is None for r in rows)
        assert cli.leftovers(grace=30) == []
    finally:
        cli.kill_all()


def _interrupted_then_resumed(tmp_path: Path, sig: signal.Signals, rc_expected: int, group: bool = False,
                              while_running: Callable[[Cli], None] | None = None) -> tuple[Path, Path, int]:
    """A 12-scenario sweep on Ray, sent ``sig`` once a row is written (``while_running`` first checks the running
    sweep): it exits ``rc_expected`` leaving no process; then ``--resume`` finishes it. Returns the sweep file, the
    JSONL file and how many rows the interrupted run had written."""
    sweep = slow_sweep(tmp_path, pods=300, seeds=12)
    jl = tmp_path / "r.jsonl"
    args = ["sweep", str(sweep), "--backend", "ray", "--workers", "2", "--jsonl", str(jl)]
    cli = Cli(args, tmp_path)
    try:
        wait_for(lambda: len(jsonl_rows(jl)) >= 1, timeout=180)
        if while_running is not None:
            while_running(cli)
        cli.signal(sig, group=group)
        rc, out, err = cli.wait()
        assert rc == rc_expected, err
        assert f"interrupted by {sig.name}" in err
        assert cli.leftovers(grace=30) == []
    finally:
        cli.kill_all()
    kept = len(jsonl_rows(jl))
    again = Cli([*args, "--resume"], tmp_path)
    try:
        rc, out, err = again.wait()
    finally:
        again.kill_all()
    assert rc == 0, err
    assert out.startswith("sweep slow: 12 scenarios, 0 failed")
    return sweep, jl, kept


def test_ray_sigterm_stops_the_runtime_and_resume_finishes(tmp_path: Path) -> None:
    def running(cli: Cli) -> None:
        assert len(marked(cli.mark)) > 2  # the driver, Ray's own processes and its workers

    sweep, jl, kept = _interrupted_then_resumed(tmp_path, signal.SIGTERM, 143, while_running=running)
    assert kept < 12
    rows = sorted(jsonl_rows(jl), key=lambda r: r["index"])
    assert [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS} for r in rows] == \
        [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS} for r in sw.run_sweep(sw.load_sweep(sweep),
                                                                                           workers=1)]


def _uneven_sweep(tmp: Path, counts: list[int]) -> Path:
    """One scenario per entry of ``counts`` (pods to schedule on 100 nodes): a slow one among quick ones."""
    doc = {"kind": "Sweep", "name": "uneven", "matrix": {"steps[1].count": counts}, "scenario": {
        "kind": "Scenario",
        "templates": {
            "nodes": {"w": {"status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}},
            "pods": {"p": {"spec": {"containers": [{"name": "c", "image": "i",
                                                    "resources": {"requests": {"cpu": "100m"}}}]}}}},
        "steps": [{"op": "createNodes", "template": "w", "count": 100},
                  {"op": "createPods", "template": "p", "count": 1}]}}
    path = tmp / "uneven.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_ray_worker_killed_twice_fails_that_scenario_only(tmp_path: Path) -> None:
    # Scenario 0 is slow (10,000 pods), the others quick: once they are written, the only Ray worker running a
    # sweep task is scenario 0's, killed there and again on Ray's retry.
    sweep = _uneven_sweep(tmp_path, [10000, 5, 6])
    jl = tmp_path / "r.jsonl"
    cli = Cli(["sweep", str(sweep), "--backend", "ray", "--workers", "2", "--jsonl", str(jl)], tmp_path)
    try:
        wait_for(lambda: len(jsonl_rows(jl)) >= 2, timeout=180)
        first = wait_for(lambda: [w for w in [ray_workers(cli.mark, "run_indexes")] if len(w) == 1], timeout=60)[0]
        os.kill(first[0], signal.SIGKILL)
        retry = wait_for(lambda: [p for p in ray_workers(cli.mark, "run_indexes") if p != first[0]], timeout=120)
        os.kill(retry[0], signal.SIGKILL)
        rc, out, err = cli.wait()
        assert rc == 4, err  # the sweep ran to the end; one scenario failed
        assert out.startswith("sweep uneven: 3 scenarios, 1 failed"), out
        rows = {r["index"]: r for r in jsonl_rows(jl)}
        assert sorted(rows) == [0, 1, 2]
        assert rows[1]["error"] is None and rows[2]["error"] is None
        assert rows[0]["error"].startswith("Ray worker failed twice running this scenario: WorkerCrashedError: ")
        assert "scenario 0 " in err and "failed: Ray worker failed twice" in err
        assert cli.leftovers(grace=30) == []
    finally:
        cli.kill_all()


def test_ray_sigint_exits_130_leaves_nothing_and_resume_finishes(tmp_path: Path) -> None:
    # as a terminal's Ctrl-C: every process of the group gets it
    _sweep, jl, kept = _interrupted_then_resumed(tmp_path, signal.SIGINT, 130, group=True)
    assert 1 <= kept < 12
    assert sorted(r["index"] for r in jsonl_rows(jl)) == list(range(12))
