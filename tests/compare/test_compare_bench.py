"""benchmarks/compare.py runs (on the small example dump; its figures are in benchmarks/README.md, not checked)."""

from __future__ import annotations

from benchmarks.compare import measure, measure_loops
from tests.fixture_runner import ROOT

CLUSTER = str(ROOT / "examples" / "compare" / "cluster.yaml")


def test_the_benchmark_measures_both_runs_and_compare() -> None:
    res = measure(CLUSTER, "1.35", "1.37", 1, "sequential")
    assert res["pods"] == 7 and res["changed"] == 3
    assert all(len(v) == 1 and v[0] >= 0 for v in res["runs"].values())
    assert res["ratio"] > 0
    loops = measure_loops(CLUSTER, "1.35", "1.37", 1, "sequential")
    assert set(loops["median"]) == {"plainA", "plainB", "compare"} and loops["ratio"] > 0
