"""The Ray backend on a real local Ray runtime: a killed worker, SIGTERM, resume (skipped without Ray).
Few and small: each test starts a Ray runtime, which takes seconds."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

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


def test_ray_sigterm_stops_the_runtime_and_resume_finishes(tmp_path: Path) -> None:
    sweep = slow_sweep(tmp_path, pods=300, seeds=12)
    jl = tmp_path / "r.jsonl"
    args = ["sweep", str(sweep), "--backend", "ray", "--workers", "2", "--jsonl", str(jl)]
    cli = Cli(args, tmp_path)
    try:
        wait_for(lambda: len(jsonl_rows(jl)) >= 1, timeout=180)
        assert len(marked(cli.mark)) > 2  # the driver, Ray's own processes and its workers
        cli.signal(signal.SIGTERM)
        rc, out, err = cli.wait()
        assert rc == 143, err
        assert "interrupted by SIGTERM" in err
        assert cli.leftovers(grace=30) == []
    finally:
        cli.kill_all()
    kept = len(jsonl_rows(jl))
    assert kept < 12
    again = Cli([*args, "--resume"], tmp_path)
    try:
        rc, out, err = again.wait()
    finally:
        again.kill_all()
    assert rc == 0, err
    assert out.startswith("sweep slow: 12 scenarios, 0 failed")
    rows = sorted(jsonl_rows(jl), key=lambda r: r["index"])
    assert [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS} for r in rows] == \
        [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS} for r in sw.run_sweep(sw.load_sweep(sweep),
                                                                                           workers=1)]
