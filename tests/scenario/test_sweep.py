"""Sweeps: matrix expansion, backends giving identical rows, failures isolated, outputs."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.scenario import ScenarioError
from scheduling_framework.scenario import sweep as sw

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in sw.TIMING_FIELDS} for r in rows]


PATHS = [
    ("a", ["a"]),
    ("a.b[2]", ["a", "b", 2]),
    ('metadata.labels["kubernetes.io/zone"]', ["metadata", "labels", "kubernetes.io/zone"]),
    ("steps[0].count", ["steps", 0, "count"]),
    ("x['y.z'][1]", ["x", "y.z", 1]),
]


@pytest.mark.parametrize(("path", "parsed"), PATHS, ids=[p for p, _ in PATHS])
def test_field_paths(path: str, parsed: list[Any]) -> None:
    assert sw.parse_path(path) == parsed


@pytest.mark.parametrize("path", ["", "a[", "a[x]", "a..b]"])
def test_malformed_field_paths(path: str) -> None:
    with pytest.raises(ValueError):
        sw.parse_path(path)


def test_example_sweep_expands_to_the_product() -> None:
    s = sw.load_sweep(EXAMPLES / "node-sizes.yaml")
    assert len(s.cases) == 3 * 2 * 2
    c = s.cases[5]
    assert c.params == {"templates.nodes.worker.status.allocatable.cpu": "4", "steps[1].count": 12}
    assert c.seed == 2 and c.scenario.steps[1].count == 12 and c.scenario.seed == 2


def test_local_pool_equals_one_process() -> None:
    s = sw.load_sweep(EXAMPLES / "node-sizes.yaml")
    one = sw.run_sweep(s, workers=1)
    pool = sw.run_sweep(s, workers=2)
    assert _stable(one) == _stable(pool)
    assert [r["index"] for r in pool] == list(range(12))
    assert all(r["error"] is None for r in pool)


def test_rows_stream_as_they_finish() -> None:
    s = sw.load_sweep(EXAMPLES / "node-sizes.yaml")
    seen: list[int] = []
    sw.run_sweep(s, workers=2, on_row=lambda r: seen.append(r["index"]))
    assert sorted(seen) == list(range(12))


def test_a_failing_scenario_keeps_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_framework.scenario import replay

    real = replay.run_scenario

    def flaky(sc: Any, **kw: Any) -> Any:
        if sc.seed == 2:
            raise RuntimeError("boom")
        return real(sc, **kw)

    monkeypatch.setattr(replay, "run_scenario", flaky)
    s = sw.load_sweep(EXAMPLES / "node-sizes.yaml")
    # One process only: pool workers start from a fork server and never see the patch (the pool's case is
    # test_sweep_files.py::test_a_later_invalid_combination_is_its_rows_error).
    rows = sw.run_sweep(s, workers=1)
    failed = [r for r in rows if r.get("error")]
    assert len(rows) == 12 and len(failed) == 6
    assert all("boom" in r["error"] for r in failed)


def test_interrupt_cancels_promptly() -> None:
    s = sw.load_sweep(EXAMPLES / "node-sizes.yaml")

    def stop(_: dict[str, Any]) -> None:
        raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        sw.run_sweep(s, workers=2, on_row=stop)
    assert time.perf_counter() - t0 < 30


SWEEP_BAD = [
    ("no-scenario", {"kind": "Sweep"}, "scenario: Required value"),
    ("bad-path", {"scenario": {"kind": "Scenario"}, "matrix": {"a[": [1]}}, "malformed field path"),
    ("empty-values", {"scenario": {"kind": "Scenario"}, "matrix": {"seed": []}}, "non-empty list"),
    ("bad-seeds", {"scenario": {"kind": "Scenario"}, "seeds": "many"}, "seeds: Invalid value"),
    ("invalid-expanded", {"scenario": {"kind": "Scenario", "steps": []}, "matrix": {"steps": ["x"]}},
     "steps: Invalid value"),
    ("index-out-of-range", {"scenario": {"kind": "Scenario", "steps": []}, "matrix": {"steps[3].count": [1]}},
     "no such list item"),
    ("too-many", {"scenario": {"kind": "Scenario"}, "seeds": 10, "matrix": {"seed": list(range(200_000))}},
     "Too many"),
    # the same value twice is the same scenario id: one of the two rows would vanish from the results
    ("duplicate-matrix-value", {"scenario": {"kind": "Scenario", "steps": []},
                                "matrix": {"steps": [[], [{"schedule": {}}], []]}},
     "matrix['steps'][2]: Duplicate value: []"),
    ("duplicate-seed", {"scenario": {"kind": "Scenario"}, "seeds": [1, 2, 1]}, "seeds[2]: Duplicate value: 1"),
]


@pytest.mark.parametrize(("doc", "expected"), [(d, e) for _, d, e in SWEEP_BAD], ids=[n for n, _, _ in SWEEP_BAD])
def test_invalid_sweeps(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(ScenarioError) as e:
        sw.sweep_from_dict(doc)
    assert expected in str(e.value)


def test_unknown_backend() -> None:
    with pytest.raises(SchedulingFrameworkError):
        sw.run_sweep(sw.sweep_from_dict({"scenario": {"kind": "Scenario"}}), backend="spark")


def test_cli_sweep_writes_jsonl_and_csv(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    jl, cs = tmp_path / "rows.jsonl", tmp_path / "rows.csv"
    rc = main(["sweep", str(EXAMPLES / "node-sizes.yaml"), "--workers", "2", "--jsonl", str(jl), "--csv", str(cs)],
              out, err)
    assert rc == 0, err.getvalue()
    assert out.getvalue().startswith("sweep node-sizes: 12 scenarios, 0 failed")
    rows = sorted((json.loads(line) for line in jl.read_text().splitlines()), key=lambda r: r["index"])
    assert [r["index"] for r in rows] == list(range(12))  # in the order they finished; each once
    table = sorted(csv.DictReader(cs.read_text().splitlines()), key=lambda t: int(t["index"]))
    assert len(table) == 12 and table[0]["param:steps[1].count"] == "12"
    assert [int(t["scheduled"]) for t in table] == [r["scheduled"] for r in rows]
    assert [t["id"] for t in table] == [r["id"] for r in rows]
    assert main(["sweep", str(EXAMPLES / "node-sizes.yaml"), "--workers", "0"], io.StringIO(), err) == 2


def test_ray_backend_equals_local() -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed for this Python (pip install '.[ray]')")
    s = sw.load_sweep(EXAMPLES / "node-sizes.yaml")
    try:
        rows = sw.run_sweep(s, backend="ray", workers=2)
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert _stable(rows) == _stable(sw.run_sweep(s, workers=1))


class _Ref:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows


class _FakeRay:
    """Enough of Ray's API for ``run_ray``: every task finishes at once; records cancels and shutdowns."""

    def __init__(self, initialized: bool) -> None:
        self.initialized = initialized
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **_: Any) -> None:
        self.initialized = True

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 1.0}

    def put(self, value: Any) -> Any:
        return value

    def remote(self, **_: Any) -> Any:
        def wrap(fn: Any) -> Any:
            class Remote:
                @staticmethod
                def remote(sweep: Any, chunk: list[int]) -> _Ref:
                    return _Ref(fn(sweep, chunk))
            return Remote
        return wrap

    def wait(self, refs: list[Any], num_returns: int) -> tuple[list[Any], list[Any]]:
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref: _Ref) -> Any:
        return ref.rows

    def cancel(self, _ref: Any, force: bool = False) -> None:
        self.calls.append("cancel")

    def shutdown(self) -> None:
        self.calls.append("shutdown")
        self.initialized = False


@pytest.mark.parametrize(("initialized", "calls"), [
    # Cancelling races with replies in flight, and Ray's driver aborts the process on it (exit 1, not 143):
    # the sweep's own runtime is only shut down, which stops its tasks.
    pytest.param(False, ["shutdown"], id="own-runtime-shut-down-not-cancelled"),
    # The caller's runtime goes on: nothing else would stop the tasks.
    pytest.param(True, ["cancel"] * 3, id="callers-runtime-tasks-cancelled"),
])
def test_ray_stopping_early(monkeypatch: pytest.MonkeyPatch, initialized: bool, calls: list[str]) -> None:
    from scheduling_framework.scenario import ray_backend

    fake = _FakeRay(initialized)
    monkeypatch.setattr(ray_backend, "_ray", lambda: fake)
    rows = ray_backend.run_ray(list(range(40)), iter(range(40)), None, 1,  # type: ignore[arg-type]
                               lambda _s, chunk: [{"index": i} for i in chunk], lambda i, c: {"index": i})
    assert next(rows) == {"index": 0}
    rows.close()  # stopped early, as by an interrupt: 4 tasks were in flight, one of them done
    assert fake.calls == calls
