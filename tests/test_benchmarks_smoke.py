"""Every scheduler_perf workload of benchmarks/ at upstream's tiny integration-test size: the runner builds the
workload, schedules every measured pod and reports sane figures (not a timing test: the runner measures speed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.scheduler_perf import Result, format_table, missing_default_plugins, run_workload
from benchmarks.workloads import WORKLOADS, Workload, select
from tests.fixture_runner import ROOT

SMOKE = [w for w in WORKLOADS if w.smoke]
TEST_CASES = ("SchedulingBasic", "SchedulingDaemonset", "SchedulingNodeAffinity", "SchedulingPodAffinity",
              "SchedulingPodAntiAffinity", "TopologySpreading", "PreferredTopologySpreading", "PreemptionBasic",
              "Unschedulable", "SchedulingWithResourceClaimTemplate", "SchedulingWithResourceClaim",
              "SteadyStateClusterResourceClaimTemplate")


def test_every_test_case_has_a_smoke_size() -> None:
    assert {w.test_case for w in SMOKE} == {w.test_case for w in WORKLOADS} == set(TEST_CASES)


@pytest.mark.parametrize("workload", SMOKE, ids=[w.full_name for w in SMOKE])
def test_smoke_workload_schedules_every_measured_pod(workload: Workload) -> None:
    r = run_workload(workload)
    if r.skipped:
        assert any(n in missing_default_plugins() for n in workload.needs)
        return
    if "measurePods" in workload.params:
        assert r.measured_pods == workload.count("$measurePods") > 0
    else:  # a steady-state workload: batches of pods for a duration
        assert r.measured_pods > 0
    assert r.scheduled == r.measured_pods
    assert r.cycles >= r.measured_pods
    assert r.seconds > 0 and r.pods_per_second > 0
    assert 0 < r.p50_ms <= r.p99_ms
    assert r.peak_rss_mib > 0


def test_preemption_smoke_preempts() -> None:
    """PreemptionBasic's measured pods only fit once low-priority pods are evicted."""
    w = next(w for w in SMOKE if w.test_case == "PreemptionBasic")
    r = run_workload(w)
    if r.skipped:
        pytest.skip(r.skipped)
    assert r.cycles > r.measured_pods  # a failed (preempting) attempt, then the scheduled one


def test_select_by_test_case_and_full_name() -> None:
    assert [w.full_name for w in select(["SchedulingBasic"], smoke=True)] == ["SchedulingBasic/5Nodes"]
    assert [w.full_name for w in select(["SchedulingBasic/500Nodes"], smoke=True)] == ["SchedulingBasic/500Nodes"]
    with pytest.raises(SystemExit):
        select(["NoSuchWorkload"], smoke=False)


def test_table_lists_threshold_and_skips() -> None:
    table = format_table([Result("A/1", nodes=5, measured_pods=10, scheduled=10, seconds=1.0, pods_per_second=10.0,
                                 threshold=680.0),
                          Result("B/2", nodes=5, skipped="needs X")])
    assert "| A/1 | 5 |" in table and "680" in table and "skipped" in table


def test_every_workload_smoke_run_from_the_command_line() -> None:
    p = subprocess.run([sys.executable, "-m", "benchmarks.scheduler_perf", "--smoke", "--in-process",
                        "--output", "json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["machine"]["python"] and doc["profile"]
    names = {r["workload"].split("/")[0] for r in doc["results"]}
    assert names == set(TEST_CASES)
    for r in doc["results"]:
        assert r["skipped"] or r["scheduled"] == r["measured_pods"], r
