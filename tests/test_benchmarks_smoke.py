"""Every scheduler_perf workload runs at its tiny size and schedules what it should (not a timing test)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fixture_runner import ROOT


def test_every_workload_smoke_run() -> None:
    p = subprocess.run([sys.executable, "-m", "benchmarks.scheduler_perf", "--smoke", "--in-process",
                        "--output", "json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    rows = doc if isinstance(doc, list) else doc.get("workloads", doc.get("results", []))
    names = " ".join(str(r) for r in rows)
    for case in ("SchedulingBasic", "SchedulingDaemonset", "SchedulingNodeAffinity", "SchedulingPodAffinity",
                 "SchedulingPodAntiAffinity", "TopologySpreading", "PreferredTopologySpreading", "PreemptionBasic",
                 "Unschedulable"):
        assert case in names, case
