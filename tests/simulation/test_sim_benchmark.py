"""benchmarks.whatif runs (tiny sizes) and reports every figure the docs quote."""

from __future__ import annotations

import json

import pytest

from benchmarks import whatif


def test_whatif_benchmark_reports_loop_and_scaling_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert whatif.main(["--nodes", "30", "--iterations", "3", "--pending", "5", "--full-iterations", "2",
                        "--sizes", "10,20", "--fork-rounds", "5", "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["estimator"]["iterations"] == 3 and report["full_cycle"]["iterations"] == 2
    # 1500m pods on a fresh 4-cpu template node: two fit, whichever way they are scheduled
    assert report["estimator"]["placed_per_iteration"] == 2
    assert report["estimator_cold"]["placed_per_iteration"] == 2
    assert report["estimator_fresh"]["placed_per_iteration"] == 2  # (a 10m pod on the new node leaves room)
    assert report["full_cycle"]["placed_per_iteration"] == 2
    assert [row["nodes"] for row in report["scaling"]] == [10, 20]
    assert {"fork_us", "changes_us", "revert_us", "estimator_median_ms_per_iteration",
            "estimator_cold_median_ms_per_iteration"} <= set(report["scaling"][0])


def test_whatif_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    whatif.main(["--nodes", "12", "--iterations", "2", "--pending", "3", "--full-iterations", "0",
                 "--sizes", "6", "--fork-rounds", "2"])
    out = capsys.readouterr().out
    assert "what-if loop, estimator:  2 x" in out and "full cycle" not in out
    assert "what-if loop, estimator, fresh: 2 x" in out
