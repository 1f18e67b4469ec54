"""Every scheduler_perf workload of benchmarks/ at upstream's tiny integration-test size: the runner builds the
workload, schedules every measured pod and reports sane figures (not a timing test: the runner measures speed)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import dumpbench
from benchmarks.dump_mix import apply_mix
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


# --- realistic dumps: benchmarks.dump_mix and benchmarks.dumpbench --------------------------------------------------

GEN_DUMP = Path(__file__).resolve().parents[2] / "shared" / "upstream-go" / "gen_dump.py"
_NS = ("ns-a", "ns-b", "ns-c")


def _tiny_pod(name: str, ns: str, owner_kind: str, owner: str, labels: dict[str, str], node: str | None,
              extra_spec: dict[str, Any] | None = None, phase: str = "Running") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "app:1",
                                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                            **copy.deepcopy(extra_spec or {})}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind, "name": owner,
                                              "uid": f"uid-{owner}", "controller": True}]},
            "spec": spec, "status": {"phase": phase if node else "Pending"}}


def _tiny_dump() -> dict[str, Any]:
    """3 nodes (one per zone); 24 Deployments dealt round-robin over 3 namespaces (so Deployment d is the
    (d // 3)-th of its namespace), 2 pods each (one bound, one pending; Deployment 1 has no bound pod); a zone
    spread on d % 5 == 0 and a preferred hostname anti-affinity on d % 7 == 0, as gen_dump.py does; plus a
    DaemonSet pod, a Job pod and a ReplicaSet pod without the app.kubernetes.io/name label (none of them in a
    Deployment)."""
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": f"n{i}", "uid": f"uid-n{i}",
                           "labels": {"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": f"z{i}"}},
              "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}} for i in range(3)]
    items: list[dict[str, Any]] = [*nodes]
    for d in range(24):
        ns, dep = _NS[d % 3], f"dep-{d}"
        sel = {"matchLabels": {"app.kubernetes.io/name": dep}}
        extra: dict[str, Any] = {}
        if d % 5 == 0:
            extra["topologySpreadConstraints"] = [{"labelSelector": sel, "maxSkew": 1,
                                                   "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "ScheduleAnyway"}]
        if d % 7 == 0:
            extra["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"podAffinityTerm": {"labelSelector": sel, "topologyKey": "kubernetes.io/hostname"}, "weight": 100}]}}
        labels = {"app.kubernetes.io/name": dep, "pod-template-hash": f"h{d}"}
        for j, node in enumerate((None if d == 1 else f"n{d % 3}", None)):
            items.append(_tiny_pod(f"{dep}-{j}", ns, "ReplicaSet", f"{dep}-h{d}", labels, node, extra))
    items.append(_tiny_pod("ds-0", "kube-system", "DaemonSet", "ds", {"app.kubernetes.io/name": "ds"}, "n0"))
    items.append(_tiny_pod("job-0", "ns-a", "Job", "job", {"app.kubernetes.io/name": "job"}, None))
    items.append(_tiny_pod("bare-0", "ns-a", "ReplicaSet", "bare-rs", {"app": "bare"}, None))
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def _without_constraints(item: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(item)
    for k in ("topologySpreadConstraints", "affinity"):
        out.get("spec", {}).pop(k, None)
    return out


def _changed_deployments(before: dict[str, Any], after: dict[str, Any]) -> set[int]:
    """Numbers of the Deployments whose pods changed; asserts that nothing else changed: the other items as
    they were, and in changed pods only spec.topologySpreadConstraints and spec.affinity."""
    assert len(before["items"]) == len(after["items"])
    assert {k: v for k, v in before.items() if k != "items"} == {k: v for k, v in after.items() if k != "items"}
    changed = set()
    for b, a in zip(before["items"], after["items"], strict=True):
        if a == b:
            continue
        assert _without_constraints(a) == _without_constraints(b), a
        name = b["metadata"]["labels"]["app.kubernetes.io/name"]
        assert name.startswith("dep-"), name  # DaemonSet, Job and label-less pods untouched
        changed.add(int(name.removeprefix("dep-")))
    return changed


def _pod(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(it for it in doc["items"] if it["metadata"]["name"] == name)


HARD_ZONE = {0, 5, 10, 15, 20}  # d % 5 == 0: the ones with a zone spread
HOSTNAME_SPREAD = {1, 4, 7, 10, 13, 16, 19, 22}  # d % 3 == 1; DoNotSchedule for the 1st and 7th: 1 and 19
REQUIRED_ANTI = {0, 7, 14, 21}  # d % 7 == 0
CROSS = {3, 4, 5, 15, 16, 17}  # the 2nd and 6th of each namespace; required: the 2nd, unless 1 (no bound pod)


@pytest.mark.parametrize(("mix", "expected"), [
    ("hard-zone", HARD_ZONE), ("hostname-spread", HOSTNAME_SPREAD), ("required-anti", REQUIRED_ANTI),
    ("cross-affinity", CROSS), ("heavy", HARD_ZONE | HOSTNAME_SPREAD | REQUIRED_ANTI | CROSS)])
def test_dump_mix_changes_only_the_chosen_deployments(mix: str, expected: set[int]) -> None:
    before = _tiny_dump()
    after = copy.deepcopy(before)
    changes = apply_mix(after, mix)
    assert _changed_deployments(before, after) == expected
    assert sum(c.deployments for c in changes) >= len(expected)
    for j in (0, 1):  # bound and pending pods alike
        zone = _pod(after, f"dep-5-{j}")["spec"].get("topologySpreadConstraints", [])
        host = _pod(after, f"dep-19-{j}")["spec"].get("topologySpreadConstraints", [])
        anti = _pod(after, f"dep-7-{j}")["spec"].get("affinity", {}).get("podAntiAffinity", {})
        aff = {d: _pod(after, f"dep-{d}-{j}")["spec"].get("affinity", {}).get("podAffinity", {}) for d in (3, 4)}
        if mix in ("hard-zone", "heavy"):
            assert [c["whenUnsatisfiable"] for c in zone] == ["DoNotSchedule"]
        if mix in ("hostname-spread", "heavy"):
            assert host == [{"labelSelector": {"matchLabels": {"app.kubernetes.io/name": "dep-19"}},
                             "matchLabelKeys": ["pod-template-hash"], "maxSkew": 1,
                             "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}]
            soft = _pod(after, f"dep-4-{j}")["spec"]["topologySpreadConstraints"]
            assert [c["whenUnsatisfiable"] for c in soft] == ["ScheduleAnyway"]
        if mix in ("required-anti", "heavy"):
            assert anti == {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": "dep-7"}},
                 "topologyKey": "kubernetes.io/hostname"}]}
        if mix in ("cross-affinity", "heavy"):
            term = {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": "dep-0"}},
                    "topologyKey": "topology.kubernetes.io/zone"}
            assert aff[3] == {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"podAffinityTerm": term, "weight": 50}], "requiredDuringSchedulingIgnoredDuringExecution": [term]}
            assert list(aff[4]) == ["preferredDuringSchedulingIgnoredDuringExecution"]  # dep-1 has no bound pod
    if mix == "cross-affinity":
        assert [str(c) for c in changes] == [
            "cross-affinity (preferred zone affinity to the previous Deployment): 6 Deployments, 12 pods",
            "cross-affinity (required zone affinity to the previous Deployment): 2 Deployments, 4 pods; "
            "1 Deployments skipped: the previous Deployment has no bound pod"]


def test_dump_mix_command_line_writes_json_and_counts(tmp_path: Path) -> None:
    src = tmp_path / "tiny.json"
    src.write_text(json.dumps(_tiny_dump(), indent=4))
    p = subprocess.run([sys.executable, "-m", "benchmarks.dump_mix", "--mix", "required-anti", str(src)], cwd=ROOT,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert _changed_deployments(_tiny_dump(), out) == REQUIRED_ANTI
    assert "required-anti: required-anti (required hostname anti-affinity to itself), replacing the preferred " \
           "one in 8 pods: 4 Deployments, 8 pods" in p.stderr.decode()
    bad = subprocess.run([sys.executable, "-m", "benchmarks.dump_mix", "--mix", "nope", str(src)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_dumpbench_runs_ours_and_appends_a_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One repetition, no Go: a child interpreter on this tree; the record has pods/CPU-s and the outcomes, goes
    to --out, and the bindings file has one line per scheduled pod."""
    src = tmp_path / "tiny.json"
    src.write_text(json.dumps(_tiny_dump()))
    out = tmp_path / "runs.jsonl"
    code = dumpbench.main(["--dump", str(src), "--reps", "1", "--output", "json", "--out", str(out),
                           "--bindings", str(tmp_path / "b")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    assert doc["machine"]["nproc"] and doc["machine"]["python"]
    (rec,) = doc["records"]
    assert rec["side"] == "ours" and rec["dump"] == "tiny.json" and rec["nodes"] == 3
    assert rec["pending"] == 27 == sum(rec["outcomes"].values()) == rec["scheduled"] + rec["unschedulable"]
    assert rec["scheduled"] > 0 and rec["pods_per_cpu_s"] > 0 and rec["cpu_s"] > 0 and rec["peak_rss_mib"] > 0
    assert rec["load_s"] >= 0 and rec["setup_s"] >= 0 and "load1_before" in rec
    (line,) = out.read_text().splitlines()
    assert json.loads(line)["pods_per_cpu_s"] == rec["pods_per_cpu_s"]
    assert len(Path(rec["bindings"]).read_text().splitlines()) == rec["scheduled"]


def _fake_gotest(tmp_path: Path, sleep: float = 0.0) -> Path:
    """A stand-in for dump.test: Go's output lines, and every pending pod of the dump bound to n0."""
    exe = tmp_path / "dump.test"
    exe.write_text(f"""#!{sys.executable}
import json, os, time
time.sleep({sleep})
doc = json.load(open(os.environ["DUMP"]))
pending = [it["metadata"] for it in doc["items"] if it["kind"] == "Pod" and not it["spec"].get("nodeName")]
if os.environ.get("DUMP_BINDINGS"):
    with open(os.environ["DUMP_BINDINGS"], "w") as f:
        f.writelines(f"{{m['namespace']}}/{{m['name']}} n0\\n" for m in pending)
print("LOADED nodes=3 bound=1 pending=1 terminal=0 other=0 namespaces=1 decode_s=0.2 rss_mib=50")
print("SYNCED sync_s=0.1 rss_mib=60")
print(f"RESULT dump=x nodes=3 pods=50 pending={{len(pending)}} bound={{len(pending)}} unschedulable=0 calls=30 "
      f"failed_attempts=0 gomaxprocs={{os.environ['GOMAXPROCS']}} cpu_s_loop=0.010 pods_per_cpu_s=2700 "
      "wall_s=0.011 maxrss_mib=61")
""")
    exe.chmod(0o755)
    return exe


def test_dumpbench_pairs_go_and_ours_and_compares_bindings(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "tiny.json"
    src.write_text(json.dumps(_tiny_dump()))
    out = tmp_path / "runs.jsonl"
    code = dumpbench.main(["--dump", str(src), "--reps", "1", "--gotest", str(_fake_gotest(tmp_path)),
                           "--go-procs", "2", "--out", str(out), "--bindings", str(tmp_path / "b")])
    text = capsys.readouterr().out
    assert code == 0, text
    go, ours = (json.loads(line) for line in out.read_text().splitlines())
    assert (go["side"], ours["side"]) == ("go", "ours") and go["pair"] == ours["pair"] and ours["paired"]
    assert go["load1_before"] == ours["load1_before"]
    assert (go["gomaxprocs"], go["pods_per_cpu_s"], go["pending"], go["load_s"], go["setup_s"]) == (2, 2700, 27, 0.2,
                                                                                                    0.1)
    vs = ours["vs_go"]
    assert vs["bound_by_both"] == ours["scheduled"] and vs["only_go"] == 27 - ours["scheduled"]
    assert vs["same_node"] == sum(1 for line in Path(ours["bindings"]).read_text().splitlines()
                                  if line.endswith(" n0"))
    row = next(line for line in text.splitlines() if line.startswith("| tiny.json (GOMAXPROCS=2) |"))
    assert f"{ours['pods_per_cpu_s'] / 2700:.2f}x" in row and "go " in row


def test_dumpbench_kills_a_run_past_its_timeout(tmp_path: Path) -> None:
    src = tmp_path / "tiny.json"
    src.write_text(json.dumps(_tiny_dump()))
    rec = dumpbench.go_once(_fake_gotest(tmp_path, sleep=30), src, 1, None, timeout=0.5)
    assert rec["error"].startswith("timed out after 0.5 s") and rec["process_wall_s"] < 10


def test_parse_go_result_line() -> None:
    rec = dumpbench.parse_go_output(
        "LOADED nodes=500 bound=14698 pending=302 terminal=0 other=0 namespaces=10 decode_s=3.1 rss_mib=400\n"
        "SYNCED sync_s=1.2 rss_mib=420\n"
        "RESULT dump=c500.json nodes=500 pods=15000 pending=302 bound=300 unschedulable=2 calls=303 failed_attempts=3 "
        "gomaxprocs=1 cpu_s_loop=0.749 pods_per_cpu_s=403 wall_s=0.746 maxrss_mib=434\n--- PASS: TestDump\n")
    assert rec == {"nodes": 500, "pods": 15000, "pending": 302, "scheduled": 300, "unschedulable": 2, "calls": 303,
                   "failed_attempts": 3, "gomaxprocs": 1, "cpu_s": 0.749, "pods_per_cpu_s": 403.0, "wall_s": 0.746,
                   "peak_rss_mib": 434.0, "outcomes": {"Scheduled": 300, "Unschedulable": 2}, "load_s": 3.1,
                   "setup_s": 1.2}
    assert dumpbench.parse_go_output("FAIL") == {}


def _rec(side: str, pair: str, rate: float, load: float = 1.0, **kw: Any) -> dict[str, Any]:
    return {"side": side, "pair": pair, "dump": "c500.json", "nodes": 500, "pending": 302, "pods_per_cpu_s": rate,
            "peak_rss_mib": 100.0, "load1_before": load, "machine": {"nproc": 2, "cpu": "X", "python": "3.11.7"},
            **kw}


def test_summary_renders_medians_of_a_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Medians per side, median of the pairs' ratios, ranges; failed pairs and (with --max-load) busy ones out."""
    recs = [_rec("go", "p1", 400), _rec("ours", "p1", 1000, vs_go={"bound_by_both": 300, "same_node": 120}),
            _rec("go", "p2", 500), _rec("ours", "p2", 1100, vs_go={"bound_by_both": 300, "same_node": 130}),
            _rec("go", "p3", 300, load=5.0), _rec("ours", "p3", 900, load=5.0),
            _rec("go", "p4", 1, error="exit 1: boom"), _rec("ours", "p4", 5000),
            _rec("baseline", "b1", 800), _rec("ours", "b1", 1000), _rec("baseline", "b2", 900),
            _rec("ours", "b2", 1080)]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n\n")
    assert dumpbench.main(["--summary", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("machine: 2 x X")
    head = [c.strip() for c in lines[1].strip("|").split("|")]
    row = dict(zip(head, (c.strip() for c in lines[3].strip("|").split("|")), strict=True))
    assert row["dump"] == "c500.json" and row["nodes"] == "500" and row["pending"] == "302"
    assert row["Go pods/CPU-s"] == "400" and row["ours pods/CPU-s"] == "1000"  # medians of 3 and 5 runs
    assert row["ours ÷ Go"] == "2.50x"  # median of 2.5, 2.2, 3.0
    assert row["baseline pods/CPU-s"] == "850" and row["ours ÷ baseline"] == "1.23x"  # median of 1.25, 1.2
    assert row["all runs: Go"] == "300-500" and row["all runs: ours"] == "900-1100"
    assert row["all runs: baseline"] == "800-900" and row["all runs: ours ÷ Go"] == "2.20-3.00x"
    assert row["load1 (range)"] == "1.0 (1.0-5.0)" and row["same node"] == "go 125/300 (120-130)"
    assert row["runs"] == "3 go, 5 ours, 2 baseline"
    assert dumpbench.main(["--summary", str(path), "--max-load", "3"]) == 0
    quiet = capsys.readouterr().out.splitlines()[3]
    assert "| 450 | 1040 | 2.35x |" in quiet  # p3 (load 5) left out
    assert "Go" not in dumpbench.summary_table([r for r in recs if r["side"] != "go"])


@pytest.mark.skipif(not GEN_DUMP.is_file(), reason=f"{GEN_DUMP} is not on this machine")
def test_dumpbench_on_a_gen_dump_heavy_mix(tmp_path: Path) -> None:
    """The real generator's shape: a 10-node dump, its heavy mix, and ours on it."""
    import yaml

    src, mixed = tmp_path / "c10.json", tmp_path / "c10-heavy.json"
    # the generator's YAML (its JSON needs orjson, which the test environment need not have), as JSON
    p = subprocess.run([sys.executable, str(GEN_DUMP), "--nodes", "10", "--format", "yaml", "--no-managed-fields"],
                       capture_output=True, text=True, check=True, timeout=60)
    src.write_text(json.dumps(yaml.load(p.stdout, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))))
    p = subprocess.run([sys.executable, "-m", "benchmarks.dump_mix", "--mix", "heavy", str(src), "-o", str(mixed)],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "hard-zone (zone spread ScheduleAnyway -> DoNotSchedule): " in p.stderr
    assert "required-anti (required hostname anti-affinity to itself), replacing the preferred one in" in p.stderr
    doc = json.loads(mixed.read_bytes())
    pods = [it for it in doc["items"] if it["kind"] == "Pod"]
    required = [it for it in pods if "requiredDuringSchedulingIgnoredDuringExecution"
                in it["spec"].get("affinity", {}).get("podAntiAffinity", {})]
    assert required and all(it["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for it in required)
    r = dumpbench.ours_once(ROOT, mixed, None, timeout=300)
    assert "error" not in r, r.get("error")
    assert r["nodes"] == 10 and r["pending"] == sum(r["outcomes"].values()) > 0 and r["pods_per_cpu_s"] > 0


def test_loop_instructions_counts_the_loop_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks.loop_instructions: callgrind's count of the scheduling loop on a tiny dump (skipped without
    valgrind); counting is off while the dump loads, so the figure is the loop's."""
    from benchmarks import loop_instructions
    from scheduling_framework.testing import make_node, make_pod

    why = loop_instructions.available()
    if why:
        pytest.skip(why)
    items = [make_node().name(f"n{i}").capacity(cpu="4", memory="8Gi").manifest() for i in range(3)]
    items += [make_pod().name(f"p{i}").req(cpu="500m").manifest() for i in range(4)]
    dump = tmp_path / "tiny.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    assert loop_instructions.main(["--dump", str(dump)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| tiny.json"))
    pods, instructions = row.split("|")[2:4]
    assert int(pods) == 4
    # the loop alone: loading the interpreter and the dump costs far more
    assert 100_000 < int(instructions.replace(",", "")) < 200_000_000
