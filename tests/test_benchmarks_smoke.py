"""Every scheduler_perf workload of benchmarks/ at upstream's tiny integration-test size: the runner builds the
workload, schedules every measured pod and reports sane figures (not a timing test: the runner measures speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from benchmarks.scheduler_perf import (
    Result,
    _alloc_claims,
    _Churn,
    _Factory,
    _Loop,
    _pod_deleter,
    format_table,
    missing_default_plugins,
    run_workload,
)
from benchmarks.workloads import (
    CHURN_NODE,
    CHURN_SERVICE,
    DEVICE_CLASS,
    GATED_POD,
    LIGHT_POD,
    NODE_DEFAULT,
    NODE_WITH_DRA,
    POD_HIGH_PRIORITY_LARGE_CPU,
    POD_WITH_FINALIZER,
    RESOURCE_CLAIM_WITH_SELECTOR,
    WORKLOADS,
    Churn,
    CreateNodes,
    SteadyState,
    Workload,
    partitionable_countersets,
    partitionable_devices,
    select,
)
from scheduling_framework.scheduler import SCHEDULED, SKIPPED, Scheduler
from tests.fixture_runner import ROOT

SMOKE = [w for w in WORKLOADS if w.smoke]
TEST_CASES = ("SchedulingBasic", "SchedulingDaemonset", "SchedulingNodeAffinity", "SchedulingPodAffinity",
              "SchedulingPodAntiAffinity", "TopologySpreading", "PreferredTopologySpreading", "PreemptionBasic",
              "Unschedulable", "PreemptionAsync", "SchedulingWithMixedChurn", "SchedulingWhileGated",
              "SchedulingDeletedPodsWithFinalizers", "SchedulingPodMatchingAntiAffinity",
              "SchedulingPreferredPodAffinity", "SchedulingPreferredPodAntiAffinity", "MixedSchedulingBasePod",
              "DefaultTopologySpreading", "SchedulingWithNodeInclusionPolicy",
              "SchedulingWithResourceClaimTemplate", "SchedulingWithResourceClaim",
              "SteadyStateClusterResourceClaimTemplate", "SchedulingWithResourceClaimTemplateToleration",
              "SteadyStateClusterResourceClaimTemplatePartitionable",
              "SteadyStateClusterResourceClaimTemplatePartitionableBacktracking")


def test_every_test_case_has_a_smoke_size() -> None:
    assert {w.test_case for w in SMOKE} == {w.test_case for w in WORKLOADS} == set(TEST_CASES)


@pytest.mark.parametrize("workload", SMOKE, ids=[w.full_name for w in SMOKE])
def test_smoke_workload_schedules_every_measured_pod(workload: Workload) -> None:
    r = run_workload(workload)
    if r.skipped:
        assert any(n in missing_default_plugins() for n in workload.needs)
        return
    if not any(isinstance(op, SteadyState) for op in workload.ops):
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


def test_set_overrides_a_workload_parameter_in_a_child_runner() -> None:
    """--set PARAM=N runs a workload at another size (here in a child interpreter, which gets the overrides);
    upstream's threshold, which is for its own size, is left out."""
    p = subprocess.run([sys.executable, "-m", "benchmarks.scheduler_perf", "--output", "json",
                        "SchedulingBasic/500Nodes", "--set", "initNodes=7", "--set", "initPods=3",
                        "--set", "measurePods=4"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout)["results"][0]
    assert (r["nodes"], r["init_pods"], r["measured_pods"], r["scheduled"], r["threshold"]) == (7, 3, 4, 4, None)


@pytest.mark.parametrize(("item", "wording"), [
    ("nodes=5", "SchedulingBasic/500Nodes has no parameter 'nodes' (it has initNodes, initPods, measurePods)"),
    ("initNodes", "expected PARAM=N with a non-negative integer N"),
    ("initNodes=-1", "expected PARAM=N with a non-negative integer N"),
], ids=["unknown-parameter", "no-value", "negative"])
def test_set_refuses_a_bad_override(item: str, wording: str) -> None:
    p = subprocess.run([sys.executable, "-m", "benchmarks.scheduler_perf", "SchedulingBasic/500Nodes", "--set", item],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and wording in p.stderr, p.stderr


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


def test_baseline_runs_both_trees_side_by_side(tmp_path: Any) -> None:
    """--baseline DIR: each workload in the other checkout, then here, in one table (here: the tree against
    itself); a directory that is no checkout is refused."""
    p = subprocess.run([sys.executable, "-m", "benchmarks.scheduler_perf", "--baseline", str(ROOT), "--smoke",
                        "SchedulingBasic/5Nodes"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "before pods/CPU-s" in p.stdout and "| SchedulingBasic/5Nodes | - |" in p.stdout
    row = next(line for line in p.stdout.splitlines() if line.startswith("| SchedulingBasic/5Nodes"))
    assert row.count("|") == 12 and row.split("|")[7].strip().endswith("x")
    bad = subprocess.run([sys.executable, "-m", "benchmarks.scheduler_perf", "--baseline", str(tmp_path), "--smoke"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a checkout of this project" in bad.stderr


# --- the operations the runner adds to upstream's createNodes/createPods ------------------------------------------


def test_churn_recreate_creates_then_deletes_each_template_in_turn() -> None:
    """``churn`` mode recreate with number 1: node, pod and service appear on one tick and go on the next."""
    sched = Scheduler(None, seed=0)
    factory = _Factory()
    churn = _Churn(sched, factory, Churn((CHURN_NODE, POD_HIGH_PRIORITY_LARGE_CPU, CHURN_SERVICE), 1000,
                                         mode="recreate", number=1), "namespace-1")
    assert churn.tick()
    assert [n.name for n in sched.cache.nodes()] == ["node-churn-00000"]
    assert len(sched.objects.list("Service", "namespace-1")) == 1 and len(sched.queue) == 1
    assert churn.tick()
    assert sched.cache.nodes() == [] and sched.objects.list("Service", "namespace-1") == []
    assert len(sched.queue) == 0
    churn.tick()
    assert len(sched.cache.nodes()) == 1 and churn.pods_created == 2


def test_churn_create_stops_after_number() -> None:
    sched = Scheduler(None, seed=0)
    churn = _Churn(sched, _Factory(), Churn((POD_HIGH_PRIORITY_LARGE_CPU,), 200, number=2), "namespace-2")
    assert churn.tick() and not churn.tick()
    assert churn.pods_created == 2


def test_delete_pods_with_finalizers_only_marks_them() -> None:
    """deletePods: a pod with finalizers keeps existing with a deletionTimestamp, and a pending one is then
    skipped by the scheduler (never bound); a pod without finalizers leaves its node."""
    sched = Scheduler(None, seed=0)
    factory = _Factory()
    for n in factory.nodes(CreateNodes(1, NODE_DEFAULT), 1):
        sched.add_node(n)
    bound = factory.pods(LIGHT_POD, 1, "ns-a")
    sched.add_pod(bound[0])
    sched.run()
    assert sched.results[bound[0].key].outcome == SCHEDULED
    delete_bound = _pod_deleter(sched, bound)
    assert not delete_bound()
    assert sched.cache.get_pod(bound[0].uid) is None
    pending = factory.pods(POD_WITH_FINALIZER, 2, "ns-b")
    for p in pending:
        sched.add_pod(p)
    delete_pending = _pod_deleter(sched, pending)
    assert delete_pending()  # one left to delete
    sched.run()
    assert sched.results[pending[0].key].outcome == SKIPPED
    assert sched.results[pending[1].key].outcome == SCHEDULED
    assert not delete_pending()
    marked = sched.cache.get_pod(pending[1].uid)
    assert marked is not None and marked.is_terminating  # still on its node, being deleted


def test_gated_pods_stay_gated_through_the_workload() -> None:
    w = next(w for w in SMOKE if w.test_case == "SchedulingWhileGated")
    assert GATED_POD in [getattr(op, "template", None) for op in w.ops]
    r = run_workload(w)
    assert r.scheduled == r.measured_pods == 10


def test_alloc_claims_uses_the_allocator() -> None:
    """allocResourceClaims on partitionable devices: each claim's CEL selector (two counters, preallocate) only
    matches device-2-counters-1 of a pool, so claim i gets that device of pool i (upstream's setup, which leaves
    the measured pods' two-device claims one backtrack to do)."""
    sched = Scheduler(None, seed=0)
    factory = _Factory()
    for n in factory.nodes(CreateNodes(1, NODE_WITH_DRA), 1):
        sched.add_node(n)
    for o in [*factory.objects(partitionable_countersets, 2, None), *factory.objects(partitionable_devices, 2, None),
              *factory.objects(DEVICE_CLASS, 1, None), *factory.objects(RESOURCE_CLAIM_WITH_SELECTOR, 2, "init")]:
        sched.add_object(o)
    _alloc_claims(sched, "init")
    got = {c.name: [(r["pool"], r["device"]) for r in c.raw["status"]["allocation"]["devices"]["results"]]
           for c in sched.objects.list("ResourceClaim", "init")}
    assert got == {"test-claim-with-selector-0": [("resourceslice-0", "device-2-counters-1")],
                   "test-claim-with-selector-1": [("resourceslice-1", "device-2-counters-1")]}


def test_measured_phase_starts_with_the_first_measured_pod() -> None:
    """Pods queued earlier without waiting are scheduled first in the measured drain; the phase's clock starts
    at the first measured pod's cycle (upstream's throughput samples start with the first measured pod)."""
    sched = Scheduler(None, seed=0)
    factory = _Factory()
    for n in factory.nodes(CreateNodes(2, NODE_DEFAULT), 2):
        sched.add_node(n)
    earlier = factory.pods(LIGHT_POD, 3, "namespace-1")
    measured = factory.pods(LIGHT_POD, 2, "namespace-3")
    for p in [*earlier, *measured]:
        sched.add_pod(p)
    loop = _Loop(sched, factory)
    latencies: list[float] = []
    loop.drain({p.key for p in measured}, latencies)
    assert loop.first_measured is not None and len(latencies) == 2
    assert loop.measured_scheduled == {p.key for p in measured}
    assert all(sched.results[p.key].outcome == SCHEDULED for p in earlier)


def test_a_late_ticker_runs_once_and_skips_the_missed_ticks() -> None:
    """Go's time.Ticker drops ticks for a slow receiver: churn or deletions never pile up behind a long cycle."""
    loop = _Loop(Scheduler(None, seed=0), _Factory())
    runs: list[int] = []

    def action() -> bool:
        runs.append(1)
        return True

    loop.loop_time = 5.0  # registered after 5 s of scheduling: first tick one interval later
    loop.add_ticker(0.2, action)
    assert loop._run_tickers(5.1) == pytest.approx(5.2) and runs == []
    loop.tickers[0].due -= 5.0
    assert loop._run_tickers(0.1) == pytest.approx(0.2) and runs == []
    assert loop._run_tickers(1.05) == pytest.approx(1.2) and runs == [1]
    assert loop._run_tickers(1.21) == pytest.approx(1.4) and runs == [1, 1]
