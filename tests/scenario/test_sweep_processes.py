"""Sweeps on real processes: SIGINT / SIGTERM stop everything cleanly, a killed pool worker costs one scenario
at most, and nothing is left running (every process the sweep started is found through /proc)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import warnings
from pathlib import Path

import pytest

from scheduling_framework.scenario import pool
from scheduling_framework.scenario import sweep as sw
from tests.scenario.sweep_procs import Cli, busy_workers, jsonl_rows, pool_workers, slow_sweep, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="lists processes through /proc")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"

SIGNALS = [("SIGINT-ctrl-c", signal.SIGINT, True, 130), ("SIGTERM", signal.SIGTERM, False, 143)]


@pytest.mark.parametrize(("sig", "group", "code"), [s[1:] for s in SIGNALS], ids=[s[0] for s in SIGNALS])
def test_signal_stops_the_sweep_keeping_finished_rows(tmp_path: Path, sig: int, group: bool, code: int) -> None:
    sweep = slow_sweep(tmp_path, pods=600, seeds=12)
    jl = tmp_path / "r.jsonl"
    cli = Cli(["sweep", str(sweep), "--workers", "2", "--jsonl", str(jl)], tmp_path)
    try:
        wait_for(lambda: len(jsonl_rows(jl)) >= 2)
        cli.signal(sig, group=group)
        rc, out, err = cli.wait()
        assert rc == code, err
        kept = jsonl_rows(jl)
        assert 2 <= len(kept) < 12
        assert f"interrupted by {signal.Signals(sig).name}: {len(kept)} of 12 scenarios done, kept in" in err
        assert out.startswith(f"sweep slow: {len(kept)} scenarios, 0 failed")
        assert "Traceback" not in err
        assert cli.leftovers() == []
    finally:
        cli.kill_all()


def test_a_killed_worker_costs_nothing_after_its_retry(tmp_path: Path) -> None:
    sweep = slow_sweep(tmp_path, pods=4000, seeds=2)
    jl = tmp_path / "r.jsonl"
    cli = Cli(["sweep", str(sweep), "--workers", "2", "--jsonl", str(jl)], tmp_path)
    try:
        first = wait_for(lambda: busy_workers(cli.mark, 2))
        os.kill(first[0], signal.SIGKILL)
        rc, _out, err = cli.wait()
        assert rc == 0, err
        assert f"worker process {first[0]} killed by SIGKILL while running task" in err and "retrying" in err
        rows = jsonl_rows(jl)
        assert sorted(r["index"] for r in rows) == [0, 1] and all(r["error"] is None for r in rows)
        assert cli.leftovers() == []
    finally:
        cli.kill_all()


def test_a_worker_killed_twice_fails_only_its_scenario(tmp_path: Path) -> None:
    sweep = slow_sweep(tmp_path, pods=5000, seeds=2)
    jl = tmp_path / "r.jsonl"
    cli = Cli(["sweep", str(sweep), "--workers", "2", "--jsonl", str(jl)], tmp_path)
    try:
        first = wait_for(lambda: busy_workers(cli.mark, 2))
        os.kill(first[0], signal.SIGKILL)
        # Its scenario goes to a new worker (the other one is busy): kill that one too.
        new = wait_for(lambda: [p for p in pool_workers(cli.mark) if p not in first])
        # Not before it runs that scenario: killed first, it would cost no attempt.
        wait_for(lambda: busy_workers(cli.mark, 1, among=new))
        os.kill(new[0], signal.SIGKILL)
        rc, _out, err = cli.wait()
        assert rc == 4, err
        rows = sorted(jsonl_rows(jl), key=lambda r: r["index"])
        failed = [r for r in rows if r["error"]]
        assert len(rows) == 2 and len(failed) == 1
        assert failed[0]["error"] == "worker process killed by SIGKILL (2 attempts)"
        assert "scheduled" not in failed[0]
        assert cli.leftovers() == []
    finally:
        cli.kill_all()


def test_interrupted_cli_sweep_resumes_to_the_same_rows(tmp_path: Path) -> None:
    sweep = slow_sweep(tmp_path, pods=300, seeds=16)
    jl, cs = tmp_path / "r.jsonl", tmp_path / "r.csv"
    cli = Cli(["sweep", str(sweep), "--workers", "2", "--jsonl", str(jl), "--csv", str(cs)], tmp_path)
    try:
        wait_for(lambda: len(jsonl_rows(jl)) >= 4)
        cli.signal(signal.SIGTERM)
        assert cli.wait()[0] == 143
    finally:
        cli.kill_all()
    partial = len(jsonl_rows(jl))
    rc, out, err = Cli(["sweep", str(sweep), "--workers", "2", "--jsonl", str(jl), "--csv", str(cs), "--resume"],
                       tmp_path).wait()
    assert rc == 0, err
    assert partial < 16 and out.startswith("sweep slow: 16 scenarios, 0 failed")
    stable = [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS}
              for r in sorted(jsonl_rows(jl), key=lambda r: r["index"])]
    whole = [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS}
             for r in sw.run_sweep(sw.load_sweep(sweep), workers=1)]
    assert stable == whole


def test_the_pool_never_forks_the_driver() -> None:
    # Forking a process that runs threads is unsafe (a DeprecationWarning from Python 3.12): the pool starts
    # workers from a fork server, or spawns them.
    assert pool._context(()).get_start_method() in ("forkserver", "spawn")
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            rows = sw.run_sweep(sw.load_sweep(EXAMPLES / "node-sizes.yaml"), workers=2)
    finally:
        stop.set()
    assert len(rows) == 12 and all(r["error"] is None for r in rows)


def test_exit_causes_name_the_signal() -> None:
    assert pool.exit_cause(-signal.SIGKILL) == "killed by SIGKILL"
    assert pool.exit_cause(3) == "exited with code 3"


def _exit_at_once(_: object, task: int) -> int:
    os._exit(3)


def test_workers_that_keep_dying_stop_the_pool() -> None:
    failed: list[int] = []
    with pytest.raises(pool.PoolError, match=r"6 worker processes died in a row .* exited with code 3"):
        for _ in pool.run_pool(_exit_at_once, None, iter(range(100)), 2, lambda t, c: failed.append(t)):
            pass
    assert len(failed) <= 3  # not every task failed twice: the pool gave up


def _double(_: object, task: int) -> int:
    return task * 2


def test_pool_results_cover_every_task_once() -> None:
    assert sorted(pool.run_pool(_double, None, iter(range(50)), 2, lambda t, c: -1)) == [2 * i for i in range(50)]
