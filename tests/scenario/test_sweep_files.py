"""Sweeps that lose nothing: ids, rows streamed to files as they finish, resume, write failures, lazy matrices."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.scenario import sweep as sw
from scheduling_framework.scenario.rowfiles import RowFileError, read_rows
from tests.scenario.sweep_procs import Cli, jsonl_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
NODE_SIZES = EXAMPLES / "node-sizes.yaml"


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k not in sw.TIMING_FIELDS} for r in rows),
                  key=lambda r: r["index"])


def _tiny(n_names: int, seeds: int) -> dict[str, Any]:
    """A sweep of n_names x seeds scenarios with nothing to schedule (milliseconds each)."""
    return {"kind": "Sweep", "name": "tiny", "scenario": {"kind": "Scenario", "steps": []},
            "matrix": {"name": [f"s{i}" for i in range(n_names)]}, "seeds": seeds}


class _Stop(Exception):
    pass


def _stop_after(n: int) -> Any:
    seen = [0]

    def on_row(_: dict[str, Any]) -> None:
        seen[0] += 1
        if seen[0] >= n:
            raise _Stop

    return on_row


# --- ids -------------------------------------------------------------------------------------------


def test_ids_are_unique_and_stable_across_loads() -> None:
    a, b = sw.load_sweep(NODE_SIZES), sw.load_sweep(NODE_SIZES)
    ids = [a.case_id(i) for i in range(len(a))]
    assert len(set(ids)) == len(ids) == 12
    assert ids == [b.case_id(i) for i in range(len(b))]


def test_ids_survive_a_matrix_extended_with_values_and_seeds() -> None:
    doc = _tiny(3, 2)
    small = sw.sweep_from_dict(doc)
    doc["matrix"]["name"].insert(0, "new")
    doc["seeds"] = 3
    big = sw.sweep_from_dict(doc)
    by_params = {(big.params(i)["name"], big.seed(i)): big.case_id(i) for i in range(len(big))}
    assert all(by_params[(small.params(i)["name"], small.seed(i))] == small.case_id(i) for i in range(len(small)))


def test_ids_change_with_the_base_scenario() -> None:
    doc = _tiny(2, 1)
    one = sw.sweep_from_dict(doc)
    doc["scenario"]["steps"] = [{"op": "wait", "seconds": 1}]
    assert sw.sweep_from_dict(doc).case_id(0) != one.case_id(0)


def test_every_row_carries_its_id() -> None:
    s = sw.load_sweep(NODE_SIZES)
    rows = sw.run_sweep(s, workers=1)
    assert [r["id"] for r in rows] == [s.case_id(i) for i in range(len(s))]


# --- lazy matrices -------------------------------------------------------------------------------


def test_a_million_scenarios_are_read_without_expanding() -> None:
    t0 = time.perf_counter()
    s = sw.sweep_from_dict(_tiny(1000, 1000))
    assert len(s) == 10**6 and len(s.cases) == 10**6
    assert time.perf_counter() - t0 < 5
    assert s.cases[-1].params == {"name": "s999"} and s.cases[-1].seed == 1000


def test_first_row_of_a_million_comes_at_once(tmp_path: Path) -> None:
    s = sw.sweep_from_dict(_tiny(1000, 1000))
    t0 = time.perf_counter()
    with pytest.raises(_Stop):
        sw.run_sweep(s, workers=1, on_row=_stop_after(1), jsonl=str(tmp_path / "r.jsonl"))
    assert time.perf_counter() - t0 < 20  # generous: the machine is shared; it takes milliseconds alone
    assert len(jsonl_rows(tmp_path / "r.jsonl")) == 1


def test_a_later_invalid_combination_is_its_rows_error() -> None:
    doc = {"kind": "Sweep", "scenario": str(EXAMPLES / "scale-down.yaml"), "seeds": 2,
           "matrix": {"templates.nodes.worker.status.allocatable.cpu": ["4", "four"]}}
    s = sw.sweep_from_dict(doc)
    for workers in (1, 2):
        rows = sw.run_sweep(s, workers=workers)
        bad = [r for r in rows if r["error"]]
        assert [r["index"] for r in bad] == [2, 3], workers
        assert all(r["error"].startswith("invalid scenario:") and "cpu" in r["error"] for r in bad)
        assert all(r["scheduled"] == 18 for r in rows if not r["error"])


# --- streaming and resume -------------------------------------------------------------------------


def test_each_row_is_in_the_files_when_it_is_reported(tmp_path: Path) -> None:
    jl, cs = tmp_path / "r.jsonl", tmp_path / "r.csv"
    seen: list[int] = []

    def on_row(row: dict[str, Any]) -> None:
        seen.append(row["index"])
        assert [r["index"] for r in jsonl_rows(jl)][-1] == row["index"]
        assert len(cs.read_text().splitlines()) == len(seen) + 1  # the header, then one line per row

    sw.run_sweep(sw.load_sweep(NODE_SIZES), workers=2, on_row=on_row, jsonl=str(jl), csv=str(cs))
    assert sorted(seen) == list(range(12))


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "pool"])
def test_interrupted_then_resumed_equals_uninterrupted(tmp_path: Path, workers: int) -> None:
    s = sw.sweep_from_dict(_tiny(10, 10))
    jl, cs = tmp_path / "r.jsonl", tmp_path / "r.csv"
    with pytest.raises(_Stop):
        sw.run_sweep(s, workers=workers, on_row=_stop_after(50), jsonl=str(jl), csv=str(cs))
    first = jsonl_rows(jl)
    assert 50 <= len(first) < 100
    again: list[dict[str, Any]] = []
    rows = sw.run_sweep(s, workers=workers, on_row=again.append, jsonl=str(jl), csv=str(cs), resume=True)
    assert len(again) == 100 - len(first)  # only what was missing ran
    assert _stable(rows) == _stable(sw.run_sweep(s, workers=1))
    assert _stable(jsonl_rows(jl)) == _stable(rows)
    assert [r["id"] for r in read_rows(str(cs))] == [r["id"] for r in rows]


def test_resume_drops_a_cut_short_last_line(tmp_path: Path) -> None:
    s = sw.load_sweep(NODE_SIZES)
    jl = tmp_path / "r.jsonl"
    sw.run_sweep(s, workers=1, jsonl=str(jl))
    whole = jl.read_bytes()
    jl.write_bytes(whole[:-40])  # the last row lost its tail, as after a power cut
    notes: list[str] = []
    rows = sw.run_sweep(s, workers=1, jsonl=str(jl), resume=True, notify=notes.append)
    assert len(rows) == 12 and len(jsonl_rows(jl)) == 12
    assert any("cut-short last line" in n for n in notes)


def test_resume_runs_a_row_missing_from_one_file_into_that_file_only(tmp_path: Path) -> None:
    s = sw.load_sweep(NODE_SIZES)
    jl, cs = tmp_path / "r.jsonl", tmp_path / "r.csv"
    sw.run_sweep(s, workers=1, jsonl=str(jl), csv=str(cs))
    lines = cs.read_text().splitlines(keepends=True)
    cs.write_text("".join(lines[:-1]))  # the CSV write of the last row failed
    rows = sw.run_sweep(s, workers=1, jsonl=str(jl), csv=str(cs), resume=True)
    assert len(rows) == 12 and len(jsonl_rows(jl)) == 12 and len(read_rows(str(cs))) == 12


def test_without_resume_the_files_start_afresh(tmp_path: Path) -> None:
    s = sw.load_sweep(NODE_SIZES)
    jl = tmp_path / "r.jsonl"
    jl.write_text('{"id": "old", "index": 0}\n')
    sw.run_sweep(s, workers=1, jsonl=str(jl))
    assert all(r["id"] != "old" for r in jsonl_rows(jl)) and len(jsonl_rows(jl)) == 12


def test_resume_warns_of_rows_of_another_sweep(tmp_path: Path) -> None:
    jl = tmp_path / "r.jsonl"
    jl.write_text(json.dumps({"id": "0123456789abcdef", "index": 0, "params": {}, "seed": 1,
                              "error": "x"}) + "\n")
    notes: list[str] = []
    rows = sw.run_sweep(sw.load_sweep(NODE_SIZES), workers=1, jsonl=str(jl), resume=True, notify=notes.append)
    assert len(rows) == 13
    assert any("not scenarios of this sweep" in n for n in notes)


RESUME_BAD = [
    ("not-json", "jsonl", "{not json}\n", "line 1 is not a JSON object"),
    ("no-id", "jsonl", '{"index": 0}\n', "line 1 has no scenario id"),
    ("other-columns", "csv", "index,id,scenario\n", "columns are not this sweep's"),
]


@pytest.mark.parametrize(("kind", "text", "expected"), [c[1:] for c in RESUME_BAD], ids=[c[0] for c in RESUME_BAD])
def test_resume_refuses_files_it_cannot_trust(tmp_path: Path, kind: str, text: str, expected: str) -> None:
    path = tmp_path / f"r.{kind}"
    path.write_text(text)
    with pytest.raises(RowFileError) as e:
        sw.run_sweep(sw.load_sweep(NODE_SIZES), workers=1, resume=True, **{kind: str(path)})
    assert expected in str(e.value) and str(path) in str(e.value)
    assert path.read_text() == text  # nothing was touched


CLI_BAD = [
    ("resume-without-file", ["--resume"], "--resume: needs --jsonl or --csv"),
    ("sample-zero", ["--dry-run", "--sample", "0"], "--sample: must be at least 1"),
]


@pytest.mark.parametrize(("args", "expected"), [c[1:] for c in CLI_BAD], ids=[c[0] for c in CLI_BAD])
def test_cli_refuses_bad_flags(args: list[str], expected: str) -> None:
    err = io.StringIO()
    assert main(["sweep", str(NODE_SIZES), *args], io.StringIO(), err) == 2
    assert expected in err.getvalue()


def test_cli_resume_prints_the_summary_of_every_row(tmp_path: Path) -> None:
    jl = tmp_path / "r.jsonl"
    s = sw.load_sweep(NODE_SIZES)
    with pytest.raises(_Stop):
        sw.run_sweep(s, workers=1, on_row=_stop_after(5), jsonl=str(jl))
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", str(NODE_SIZES), "--workers", "1", "--jsonl", str(jl), "--resume"], out, err) == 0
    assert out.getvalue().startswith("sweep node-sizes: 12 scenarios, 0 failed")
    assert len(out.getvalue().splitlines()) == 2 + 12


# --- write failures ------------------------------------------------------------------------------


def test_file_size_limit_stops_the_sweep_keeping_whole_rows(tmp_path: Path) -> None:
    jl = tmp_path / "r.jsonl"
    cli = Cli(["sweep", str(NODE_SIZES), "--workers", "2", "--jsonl", str(jl)], tmp_path, limit_file_size=2000)
    rc, out, err = cli.wait()
    assert rc == 1, err
    assert "File too large (the file size limit, ulimit -f, was reached)" in err
    assert "run again with --resume" in err
    kept = jsonl_rows(jl)  # whole lines only, each a row
    assert 1 <= len(kept) < 12 and os.path.getsize(jl) <= 2000
    assert out.startswith(f"sweep node-sizes: {len(kept)} scenarios")
    assert cli.leftovers() == []
    rc, out, err = Cli(["sweep", str(NODE_SIZES), "--workers", "2", "--jsonl", str(jl), "--resume"],
                       tmp_path).wait()
    assert rc == 0, err
    assert _stable(jsonl_rows(jl)) == _stable(sw.run_sweep(sw.load_sweep(NODE_SIZES), workers=1))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_full_disk_is_a_clear_error() -> None:
    err = io.StringIO()
    assert main(["sweep", str(NODE_SIZES), "--workers", "1", "--csv", "/dev/full"], io.StringIO(), err) == 1
    assert "/dev/full: cannot write: No space left on device" in err.getvalue()


def test_a_write_that_fails_midway_is_cut_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_framework.scenario import rowfiles

    f = rowfiles.RowFile(str(tmp_path / "r.jsonl"), "jsonl", [], resume=False)
    f.write('{"id": "a"}\n')
    real = os.write
    calls = [0]

    def half_then_full(fd: int, data: bytes) -> int:
        calls[0] += 1
        if calls[0] == 1:
            return real(fd, data[:5])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rowfiles.os, "write", half_then_full)
    with pytest.raises(RowFileError, match="No space left on device"):
        f.write('{"id": "b"}\n')
    f.close()
    assert (tmp_path / "r.jsonl").read_text() == '{"id": "a"}\n'


# --- dry run and progress ---------------------------------------------------------------------------


def test_dry_run_counts_and_estimates_without_running(tmp_path: Path) -> None:
    jl = tmp_path / "r.jsonl"
    s = sw.load_sweep(NODE_SIZES)
    with pytest.raises(_Stop):
        sw.run_sweep(s, workers=1, on_row=_stop_after(4), jsonl=str(jl))
    out = io.StringIO()
    assert main(["sweep", str(NODE_SIZES), "--dry-run", "--sample", "2", "--jsonl", str(jl), "--resume",
                 "--workers", "2"], out, io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "sweep node-sizes: 12 scenarios, 8 to run (4 already done)"
    assert lines[1].startswith("estimate from a sample of 2: ") and "CPU-s per scenario" in lines[1]
    assert "on 2 worker(s)" in lines[1]
    assert len(jsonl_rows(jl)) == 4


def test_progress_bar_shows_rows_per_second(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_framework.report import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.01)
    err = io.StringIO()
    assert main(["sweep", str(NODE_SIZES), "--workers", "1", "--progress"], io.StringIO(), err) == 0
    assert "/12 rows" in err.getvalue() and "rows/s" in err.getvalue()


def test_no_progress_bar_off_a_terminal() -> None:
    err = io.StringIO()
    assert main(["sweep", str(NODE_SIZES), "--workers", "1"], io.StringIO(), err) == 0
    assert err.getvalue() == ""
