"""Real-shaped dumps (``kubectl get -o yaml`` output) get kube-scheduler's answer: tests/fixtures/real/."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator
from scheduling_framework.warning_list import MAX_ITEMS, Warnings, merged
from tests.fixture_runner import ROOT

REAL = ROOT / "tests" / "fixtures" / "real"


def run_json(*args: str) -> tuple[dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(["schedule", *args, "--output", "json", "--seed", "1"], stdout=out, stderr=err)
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()


def by_pod(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["pod"]: r for r in doc["pods"]}


# --- terminating pods, pods for other schedulers, orphans, unknown kinds --------------------------


TERMINATING = str(REAL / "terminating-and-foreign.yaml")


def test_terminating_pending_pod_is_skipped_and_takes_no_room() -> None:
    doc, _ = run_json("--cluster", TERMINATING)
    r = by_pod(doc)["default/batch-old"]
    assert r["outcome"] == "Skipped" and r["node"] is None
    assert "being deleted" in r["message"]
    assert doc["stats"]["skipped"] == 2


def test_bound_terminating_pod_still_holds_its_resources() -> None:
    # cache-0 (1.5 cpu, Terminating) still runs on node-a: web (1 cpu) only fits on node-b
    doc, _ = run_json("--cluster", TERMINATING)
    assert by_pod(doc)["default/web"]["node"] == "node-b"


def test_pod_for_another_scheduler_is_skipped_naming_it() -> None:
    doc, _ = run_json("--cluster", TERMINATING)
    r = by_pod(doc)["ml/gpu-job"]
    assert r["outcome"] == "Skipped" and r["schedulerName"] == "volcano"
    assert '"volcano"' in r["message"]
    assert any('"volcano"' in w and "ml/gpu-job" in w for w in doc["warnings"])


def test_warnings_list_everything_ignored() -> None:
    doc, err = run_json("--cluster", TERMINATING)
    assert doc["warnings"] == [
        'ignored object(s) of kind "ConfigMap" (nothing in the scheduler reads it): default/kube-root-ca.crt',
        'ignored bound pod(s) whose node is not in the input (they take no room): default/ghost (node "node-gone")',
        "skipped pending pod(s) being deleted (metadata.deletionTimestamp is set): default/batch-old",
        'skipped pending pod(s) for schedulerName "volcano", which no profile of the configuration serves: '
        "ml/gpu-job",
    ]
    assert err == ""  # JSON carries them; stderr stays quiet


def test_warnings_always_present_in_json(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: '1', pods: '9'}}\n")
    doc, _ = run_json("--cluster", str(f))
    assert doc["warnings"] == []


def test_table_prints_warnings_on_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", TERMINATING], stdout=out, stderr=err) == 0
    assert "default/batch-old  Skipped" in out.getvalue()
    assert "2 skipped" in out.getvalue()
    lines = err.getvalue().splitlines()
    assert len(lines) == 4 and all(x.startswith("warning: ") for x in lines)
    assert "warning" not in out.getvalue()


def test_cli_subprocess_json_has_warnings() -> None:
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", TERMINATING,
                        "--output", "json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["warnings"]) == 4


def test_python_api_scheduler_skips_and_warns() -> None:
    cluster = load_cluster(TERMINATING)
    assert cluster.warnings.to_list()[0].startswith('ignored object(s) of kind "ConfigMap"')
    sched = Scheduler(seed=1)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    sched.run()
    assert {k: r.outcome for k, r in sched.results.items()} == {
        "default/batch-old": "Skipped", "ml/gpu-job": "Skipped", "default/web": "Scheduled"}
    assert sched.results["default/web"].node == "node-b"
    assert sched.warnings.items_of(
        "ignored bound pod(s) whose node is not in the input (they take no room)") == [
        'default/ghost (node "node-gone")']
    assert sched.cache.get_pod("0a1b2c3d-0000-4000-8000-000000000004") is None  # the orphan takes no room


def test_simulator_from_cluster_skips_orphans_with_a_warning() -> None:
    cluster = load_cluster(TERMINATING)
    sim = Simulator.from_cluster(cluster, seed=1)
    assert any("default/ghost" in w for w in sim.warnings)
    assert any("ConfigMap" in w for w in sim.warnings)  # the cluster's loading warnings come along
    assert sim.cluster.get("node-a").requested.milli_cpu == 1500  # the terminating pod holds its room


# --- the Warnings mechanism ------------------------------------------------------------------------


def test_warnings_dedupe_group_and_merge() -> None:
    w = Warnings(["a", "a"])
    w.add_item("g", "x")
    w.add_item("g", "x")
    w.add_item("g", "y")
    w.add("b")
    assert w.to_list() == ["a", "g: x, y", "b"] and len(w) == 3 and "b" in w
    many = Warnings()
    for i in range(MAX_ITEMS + 2):
        many.add_item("h", str(i))
    assert many.to_list()[0].endswith(f"9 and 2 more ({MAX_ITEMS + 2} in all)")
    assert merged(w, ["a", "c"], many)[:4] == ["a", "g: x, y", "b", "c"]
    other = Warnings()
    other.add_item("g", "z")
    w.extend(other)
    assert w.items_of("g") == ["x", "y", "z"]


def _doc_example(doc: str, heading: str) -> tuple[str, str]:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and out is not None
    return code.group(1), out.group(1)


def test_embedding_doc_warnings_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    code, expected = _doc_example("embedding.md", "## Warnings")
    monkeypatch.chdir(ROOT)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "embedding.md", "exec"), {"__name__": "embedding_example"})
    assert buf.getvalue() == expected


# --- PriorityClass admission -------------------------------------------------------------------------

PRIORITY = str(REAL / "priority-classes.yaml")


def _scheduler(path: str) -> Scheduler:
    cluster = load_cluster(path)
    sched = Scheduler(seed=1)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    return sched


def test_priority_classes_resolve_queue_order_and_preemption() -> None:
    doc, _ = run_json("--cluster", PRIORITY)
    r = by_pod(doc)
    # system-cluster-critical (built in, not in the dump) goes first and fits next to the filler
    assert r["kube-system/node-agent"]["outcome"] == "Scheduled"
    # "high" (1000) preempts the filler, whose priority came from the lowest globalDefault class (-10)
    assert r["default/urgent"]["victims"] == ["default/filler"]
    assert r["default/urgent"]["outcome"] == "Scheduled"
    # preemptionPolicy Never came from the class
    assert r["default/polite"]["outcome"] == "Unschedulable"
    assert "not eligible due to preemptionPolicy=Never" in r["default/polite"]["message"]


def test_missing_priority_class_skips_the_pod_with_admissions_message() -> None:
    doc, _ = run_json("--cluster", PRIORITY)
    typo = by_pod(doc)["default/typo"]
    assert typo["outcome"] == "Skipped"
    assert typo["message"] == 'pods "typo" is forbidden: no PriorityClass with name hihg was found'
    assert doc["warnings"] == ["skipped pending pod(s) the API server would refuse: default/typo (no PriorityClass "
                               "with name hihg was found)"]


def test_priorities_resolved_in_the_python_api() -> None:
    sched = _scheduler(PRIORITY)
    filler = sched.cache.get_pod("0a1b2c3d-0000-4000-8000-000000000101")
    assert filler is not None
    assert (filler.spec.priority, filler.spec.priority_class_name) == (-10, "batch-low")  # lowest default wins
    order = []
    while (qpi := sched.queue.pop()) is not None:
        order.append((qpi.pod.name, qpi.pod.priority, qpi.pod.preemption_policy))
    assert order == [("node-agent", 2_000_000_000, "PreemptLowerPriority"), ("urgent", 1000, "PreemptLowerPriority"),
                     ("polite", 500, "Never")]


def test_simulator_admits_pods_too() -> None:
    cluster = load_cluster(PRIORITY)
    sim = Simulator.from_cluster(cluster, seed=1)
    ni = sim.cluster.get("node-1")
    assert [pi.pod.priority for pi in ni.pods] == [-10]
    out = sim.schedule_pods(cluster.pending_pods)
    assert [p.name for p in sim.sort_pods(cluster.pending_pods)] == ["node-agent", "urgent", "polite", "typo"]
    typo = next(r for r in out.results if r.pod == "default/typo")
    assert typo.skipped and typo.node is None and "no PriorityClass with name hihg" in typo.message
    assert out.placements == {"kube-system/node-agent": "node-1"}  # no preemption in the simulator
    assert any("default/typo" in w for w in sim.warnings)


def _pc(name: str, value: Any, api_version: str = "scheduling.k8s.io/v1", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "PriorityClass", "metadata": {"name": name}, "value": value, **extra}


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}


@pytest.mark.parametrize(("classes", "spec", "want"), [
    ([_pc("high", 1000)], {"priorityClassName": "high"}, (1000, "PreemptLowerPriority")),
    ([_pc("high", 1000, "scheduling.k8s.io/v1beta1")], {"priorityClassName": "high"}, (1000, "PreemptLowerPriority")),
    ([_pc("high", 1000, "scheduling.k8s.io/v1alpha1", preemptionPolicy="Never")], {"priorityClassName": "high"},
     (1000, "Never")),
    ([_pc("high", 1000)], {"priorityClassName": "high", "priority": 7}, (7, "PreemptLowerPriority")),
    ([_pc("d", 3, globalDefault=True)], {}, (3, "PreemptLowerPriority")),
    ([_pc("d", 3, globalDefault=True)], {"priority": 9}, (9, "PreemptLowerPriority")),
    ([], {}, (0, "PreemptLowerPriority")),
    ([], {"priorityClassName": "system-node-critical"}, (2_000_001_000, "PreemptLowerPriority")),
    ([_pc("n", 1, preemptionPolicy="Never")], {"priorityClassName": "n", "preemptionPolicy": "PreemptLowerPriority"},
     (1, "PreemptLowerPriority")),
], ids=["class", "v1beta1", "v1alpha1-never", "admitted-pod-keeps-priority", "global-default",
        "admitted-pod-ignores-default", "no-default-is-zero", "built-in-system-node-critical",
        "pod-policy-kept"])
def test_priority_admission_table(classes: list[dict[str, Any]], spec: dict[str, Any],
                                  want: tuple[int, str]) -> None:
    from scheduling_framework.api import Pod
    from scheduling_framework.api.objects import KubeObject
    from scheduling_framework.ingest.admission import PriorityAdmission

    adm = PriorityAdmission([KubeObject.from_dict(c) for c in classes])
    pod, refusal = adm.admit(Pod.from_dict(_pod("p", **spec)))
    assert refusal == ""
    assert (pod.priority, pod.preemption_policy) == want
    assert pod.to_dict()["spec"].get("priority", 0) == want[0]


def test_unusable_priority_class_is_warned_and_left_out(tmp_path: Path) -> None:
    import yaml

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([
        _pc("broken", "high"), _pc("bad-policy", 5, preemptionPolicy="Sometimes"),
        _pod("p", priorityClassName="broken"),
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"pods": "9"}}}]))
    doc, _ = run_json("--cluster", str(f))
    assert by_pod(doc)["default/p"]["outcome"] == "Skipped"
    assert doc["warnings"][0] == ("ignored PriorityClass object(s) that could not be used: broken (value: expected "
                                  "an integer, got 'high'), bad-policy (preemptionPolicy: Unsupported value: "
                                  '"Sometimes": supported values: "PreemptLowerPriority", "Never")')


def test_mismatched_priority_is_kept_with_a_warning(tmp_path: Path) -> None:
    import yaml

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([_pc("high", 1000), _pod("p", priorityClassName="high", priority=3)]))
    doc, _ = run_json("--cluster", str(f))
    assert doc["warnings"] == ["kept spec.priority of pod(s) whose PriorityClass has another value (the API server "
                               "would refuse them): default/p (3 != high 1000)"]


# --- the rest of admission: LimitRanger, DefaultTolerationSeconds, RuntimeClass -------------------------

ADMISSION = str(REAL / "admission.yaml")


def test_limit_range_defaults_apply_to_pods_not_yet_admitted() -> None:
    doc, _ = run_json("--cluster", ADMISSION)
    r = by_pod(doc)
    assert r["team-a/first"]["node"] == "node-1"
    # each gets the LimitRange's 1 cpu request: the second does not fit on node-1's 1500m
    assert r["team-a/second"]["outcome"] == "Unschedulable"
    assert r["team-a/second"]["message"].startswith("0/2 nodes are available: 1 Insufficient cpu,")
    # a dumped pod went through admission already: left alone (no request, fits)
    assert r["team-a/admitted"]["node"] == "node-1"


def test_runtime_class_overhead_selector_and_tolerations() -> None:
    doc, _ = run_json("--cluster", ADMISSION)
    r = by_pod(doc)
    # 800m + 250m overhead > sandbox-1's 1 cpu; node-1 fails the class's nodeSelector
    assert r["default/sandboxed"]["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector.")
    missing = r["default/no-such-runtime"]
    assert (missing["outcome"], missing["message"]) == (
        "Skipped", 'pods "no-such-runtime" is forbidden: pod rejected: RuntimeClass "kata" not found')


def test_admission_in_the_python_api() -> None:
    sched = _scheduler(ADMISSION)
    cluster = load_cluster(ADMISSION)
    pods = {p.name: p for p in cluster.pods}
    first, refusal = sched.admit(pods["first"])
    assert refusal == ""
    c = first.spec.containers[0].resources
    assert (str(c.requests["cpu"]), str(c.requests["memory"]), str(c.limits["memory"])) == ("1", "256Mi", "512Mi")
    assert [(t.key, t.effect, t.toleration_seconds) for t in first.spec.tolerations] == [
        ("node.kubernetes.io/not-ready", "NoExecute", 300), ("node.kubernetes.io/unreachable", "NoExecute", 300)]
    assert first.spec.priority == 0 and first.to_dict()["spec"]["priority"] == 0
    sandboxed, _ = sched.admit(pods["sandboxed"])
    assert str(sandboxed.spec.overhead["cpu"]) == "250m"
    assert sandboxed.spec.node_selector == {"sandbox.example.com/runtime": "gvisor"}
    assert [t.key for t in sandboxed.spec.tolerations][-1] == "sandbox.example.com/runtime"
    admitted, _ = sched.admit(pods["admitted"])
    assert admitted is pods["admitted"]
    sim = Simulator.from_cluster(cluster, seed=1)
    out = sim.schedule_pods(cluster.pending_pods)
    assert out.placements == {"team-a/first": "node-1", "team-a/admitted": "node-1"}
    assert next(r for r in out.results if r.pod == "default/no-such-runtime").skipped


@pytest.mark.parametrize(("tolerations", "added"), [
    ([], ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
    ([{"operator": "Exists"}], []),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
     ["node.kubernetes.io/unreachable"]),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}], ["node.kubernetes.io/not-ready"]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
], ids=["none", "tolerate-everything", "has-not-ready", "has-unreachable-any-effect", "other-effect-does-not-count"])
def test_default_toleration_seconds(tolerations: list[dict[str, Any]], added: list[str]) -> None:
    from scheduling_framework.api import Pod
    from scheduling_framework.ingest.admission import Admission

    pod = Pod.from_dict(_pod("p", tolerations=tolerations))
    got, _ = Admission().admit(pod)
    assert [t.key for t in got.spec.tolerations[len(tolerations):]] == added


@pytest.mark.parametrize(("limit_range", "want_requests", "want_limits"), [
    ({"type": "Container", "max": {"cpu": "2"}}, {"cpu": "2"}, {"cpu": "2"}),
    ({"type": "Container", "min": {"memory": "64Mi"}}, {"memory": "64Mi"}, {}),
    ({"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "100m"}}, {"cpu": "100m"},
     {"cpu": "1"}),
    ({"type": "Pod", "max": {"cpu": "2"}}, {}, {}),
], ids=["max-defaults-limit-and-request", "min-defaults-request", "explicit", "pod-type-no-defaults"])
def test_limit_range_item_defaulting(limit_range: dict[str, Any], want_requests: dict[str, str],
                                     want_limits: dict[str, str]) -> None:
    from scheduling_framework.api import Pod
    from scheduling_framework.api.objects import KubeObject
    from scheduling_framework.ingest.admission import Admission

    lr = KubeObject.from_dict({"apiVersion": "v1", "kind": "LimitRange",
                               "metadata": {"name": "l", "namespace": "default"},
                               "spec": {"limits": [limit_range]}})
    pod, _ = Admission([lr]).admit(Pod.from_dict(_pod("p")))
    res = pod.spec.containers[0].resources
    assert {k: str(v) for k, v in res.requests.items()} == want_requests
    assert {k: str(v) for k, v in res.limits.items()} == want_limits


def test_limit_range_keeps_a_containers_own_values() -> None:
    from scheduling_framework.api import Pod
    from scheduling_framework.api.objects import KubeObject
    from scheduling_framework.ingest.admission import Admission

    lr = KubeObject.from_dict({"apiVersion": "v1", "kind": "LimitRange",
                               "metadata": {"name": "l", "namespace": "default"},
                               "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}})
    pod = Pod.from_dict({**_pod("p"), "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"limits": {"cpu": "3"}}}]}})
    got, _ = Admission([lr]).admit(pod)
    res = got.spec.containers[0].resources
    assert (str(res.requests["cpu"]), str(res.limits["cpu"])) == ("3", "3")  # request from its own limit


def test_unusable_limit_range_is_warned() -> None:
    from scheduling_framework.api.objects import KubeObject
    from scheduling_framework.ingest.admission import Admission

    lr = KubeObject.from_dict({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "d"},
                               "spec": {"limits": "nope"}})
    adm = Admission([lr])
    assert adm.warnings.to_list() == ["ignored LimitRange/RuntimeClass object(s) that could not be used: "
                                      "LimitRange l (spec.limits: expected a list)"]


def test_finished_pending_pod_is_ignored_with_a_warning(tmp_path: Path) -> None:
    import yaml

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([{**_pod("done"), "status": {"phase": "Failed", "reason": "Evicted"}}]))
    doc, _ = run_json("--cluster", str(f))
    assert doc["pods"] == []
    assert doc["warnings"] == ["ignored pending pod(s) that have finished (status.phase Succeeded or Failed): "
                               "default/done"]
