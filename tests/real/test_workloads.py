"""Workloads into pods (#15 items 6-7): tests/fixtures/real/workloads.yaml, the CLI and the Python API."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cli import main
from scheduling_framework.ingest.cluster import Cluster, cluster_from_documents, load_cluster
from scheduling_framework.ingest.workloads import (
    WARN_NOT_EXPANDED,
    daemon_pod_spec,
    daemonset_pods_for_node,
    expand_workloads,
    with_daemon_tolerations,
)
from scheduling_framework.simulation import Simulator
from tests.fixture_runner import ROOT

WORKLOADS = str(ROOT / "tests" / "fixtures" / "real" / "workloads.yaml")
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def run_json(*args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", WORKLOADS, "--output", "json", "--seed", "1", *args],
                stdout=out, stderr=err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def new_pods(seed: int | None = 1) -> dict[str, Pod]:
    base = load_cluster(WORKLOADS)
    before = {p.key for p in base.pods}
    return {p.key: p for p in expand_workloads(base, seed=seed).pods if p.key not in before}


def test_without_the_flag_a_warning_says_how_to_include_them() -> None:
    doc = run_json()
    assert doc["pods"] == []
    assert doc["warnings"] == [
        f"{WARN_NOT_EXPANDED}: Deployment shop/api (2), ReplicaSet shop/web-7d4b9c6f8d (2), StatefulSet shop/db (1), "
        "Job shop/migrate (1), DaemonSet monitoring/node-exporter (1)"]


def test_expand_workloads_schedules_what_the_controllers_would_create() -> None:
    doc = run_json("--expand-workloads")
    assert doc["warnings"] == []
    got = sorted(re.sub("(?<=api-)[a-z0-9]+-" + SUFFIX + "$|" + SUFFIX + "$", "*", r["pod"]) for r in doc["pods"])
    assert got == ["monitoring/node-exporter-*", "shop/api-*", "shop/api-*", "shop/db-1", "shop/migrate-*",
                   "shop/web-7d4b9c6f8d-*", "shop/web-7d4b9c6f8d-*"]
    assert all(r["outcome"] == "Scheduled" for r in doc["pods"])
    ds = next(r for r in doc["pods"] if r["pod"].startswith("monitoring/"))
    assert ds["node"] == "node-3"  # cordoned, but DaemonSet pods tolerate node.kubernetes.io/unschedulable


def test_deployment_scales_its_current_replicaset() -> None:
    pods = new_pods()
    web = [p for k, p in pods.items() if k.startswith("shop/web-")]
    assert len(web) == 2  # replicas 3 of the Deployment, 1 pod exists
    for p in web:
        assert re.fullmatch(f"web-7d4b9c6f8d-{SUFFIX}", p.name)
        ref = p.metadata.controller_ref()
        assert ref is not None and (ref.kind, ref.name) == ("ReplicaSet", "web-7d4b9c6f8d")
        assert p.labels == {"app": "web", "pod-template-hash": "7d4b9c6f8d"}  # the ReplicaSet template labels
        assert p.metadata.generate_name == "web-7d4b9c6f8d-"


def test_deployment_without_replicaset_gets_a_new_one() -> None:
    base = load_cluster(WORKLOADS)
    out = expand_workloads(base, seed=1)
    rs = [o for o in out.objects if o.kind == "ReplicaSet" and o.name.startswith("api-")]
    assert len(rs) == 1
    h = rs[0].labels["pod-template-hash"]
    assert rs[0].name == f"api-{h}" and re.fullmatch("[bcdfghjklmnpqrstvwxz2456789]{1,10}", h)
    api = [p for p in out.pods if p.name.startswith("api-")]
    assert len(api) == 2 and all(p.labels["pod-template-hash"] == h for p in api)
    assert all(re.fullmatch(f"api-{h}-{SUFFIX}", p.name) for p in api)


def test_statefulset_ordinals_and_claims() -> None:
    base = load_cluster(WORKLOADS)
    out = expand_workloads(base, seed=1)
    db1 = next(p for p in out.pods if p.name == "db-1")
    assert db1.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert db1.labels["apps.kubernetes.io/pod-index"] == "1"
    assert [(v.name, v.claim_name) for v in db1.spec.volumes] == [("data", "data-db-1")]
    pvcs = [o for o in out.objects if o.kind == "PersistentVolumeClaim"]
    assert [o.name for o in pvcs] == ["data-db-0", "data-db-1"]  # data-db-0 existed
    claim = pvcs[1]
    assert claim.spec["storageClassName"] == "standard"  # DefaultStorageClass admission
    assert claim.labels == {"app": "db"} and claim.namespace == "shop"


def test_job_creates_what_is_left_to_complete() -> None:
    jobs = [p for k, p in new_pods().items() if k.startswith("shop/migrate-")]
    assert len(jobs) == 1  # completions 3, succeeded 2, parallelism 2
    assert jobs[0].labels["batch.kubernetes.io/job-name"] == "migrate"


def test_daemonset_pod_per_eligible_node_with_the_controllers_affinity_and_tolerations() -> None:
    ds = [p for k, p in new_pods().items() if k.startswith("monitoring/")]
    # node-1 has one already, node-2's taint is not tolerated, node-3 (cordoned) is eligible
    assert len(ds) == 1
    spec = ds[0].to_dict()["spec"]
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-3"]}]}]}
    assert [(t["key"], t["effect"]) for t in spec["tolerations"]] == [
        ("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule")]
    assert "nodeName" not in spec  # the scheduler places it


def test_names_are_deterministic_under_seed() -> None:
    assert sorted(new_pods(1)) == sorted(new_pods(1))
    assert sorted(new_pods(1)) != sorted(new_pods(2))


def test_expansion_leaves_the_input_alone() -> None:
    base = load_cluster(WORKLOADS)
    n = len(base.pods)
    expand_workloads(base, seed=1)
    assert len(base.pods) == n and len(base.warnings) == 1


def _doc(kind: str, name: str, spec: dict[str, Any], api: str = "apps/v1", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default", **meta}, "spec": spec}


TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}


@pytest.mark.parametrize(("doc", "want"), [
    (_doc("Job", "j", {"parallelism": 3, "template": TEMPLATE}, "batch/v1"), 3),
    (_doc("Job", "j", {"parallelism": 3, "completions": 2, "template": TEMPLATE}, "batch/v1"), 2),
    (_doc("Job", "j", {"suspend": True, "template": TEMPLATE}, "batch/v1"), 0),
    ({**_doc("Job", "j", {"template": TEMPLATE}, "batch/v1"),
      "status": {"conditions": [{"type": "Complete", "status": "True"}]}}, 0),
    (_doc("ReplicaSet", "rs", {"template": TEMPLATE}), 1),
    (_doc("ReplicaSet", "rs", {"replicas": 0, "template": TEMPLATE}), 0),
    (_doc("ReplicationController", "rc", {"replicas": 2, "template": TEMPLATE}, "v1"), 2),
    (_doc("StatefulSet", "s", {"replicas": 2, "ordinals": {"start": 5}, "template": TEMPLATE}), 2),
], ids=["work-queue", "completions", "suspended", "complete", "replicaset-default-1", "replicas-0",
        "replicationcontroller", "statefulset-ordinals-start"])
def test_controller_counts(doc: dict[str, Any], want: int) -> None:
    out = expand_workloads(cluster_from_documents([doc]), seed=3)
    assert len(out.pods) == want


def test_statefulset_ordinals_start_names() -> None:
    doc = _doc("StatefulSet", "s", {"replicas": 2, "ordinals": {"start": 5}, "template": TEMPLATE})
    assert [p.name for p in expand_workloads(cluster_from_documents([doc])).pods] == ["s-5", "s-6"]


def test_indexed_job_names_and_index_annotation() -> None:
    doc = _doc("Job", "j", {"completionMode": "Indexed", "completions": 3, "parallelism": 2, "template": TEMPLATE},
               "batch/v1")
    pods = expand_workloads(cluster_from_documents([doc]), seed=1).pods
    assert [re.sub(SUFFIX + "$", "*", p.name) for p in pods] == ["j-0-*", "j-1-*"]
    assert [p.annotations["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]


@pytest.mark.parametrize("doc", [
    _doc("Deployment", "d", {"replicas": 2}),
    _doc("StatefulSet", "s", {"replicas": "two", "template": TEMPLATE}),
    _doc("DaemonSet", "ds", {"template": {"spec": {"containers": "oops"}}}),
], ids=["no-template", "bad-replicas", "bad-pod-template"])
def test_unusable_workloads_are_warned_not_fatal(doc: dict[str, Any]) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    cluster = cluster_from_documents([node, doc])
    assert any(w.startswith("ignored workload object(s) that could not be expanded") for w in cluster.warnings)
    out = expand_workloads(cluster)
    assert out.pods == []
    assert any(w.startswith("ignored workload object(s) that could not be expanded") for w in out.warnings)


def test_daemon_tolerations_replace_same_and_add_network_for_host_network() -> None:
    spec = {"hostNetwork": True, "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
        {"key": "custom", "operator": "Exists"}]}
    tols = with_daemon_tolerations(spec)
    assert tols[0] == {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    assert tols[1] == {"key": "custom", "operator": "Exists"}
    assert tols[-1]["key"] == "node.kubernetes.io/network-unavailable" and len(tols) == 8
    aff = daemon_pod_spec({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}}}, "n1")
    # the controller replaces the required terms (its node choice already honoured them)
    assert aff["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]


# --- item 7: node templates with DaemonSets -----------------------------------------------------------


def test_node_template_gets_its_daemonset_pods() -> None:
    cluster = load_cluster(WORKLOADS)
    sim = Simulator.from_cluster(cluster, seed=1)
    template = next(n for n in cluster.nodes if n.name == "node-1")
    with sim.fork():
        names = sim.add_node_from_template(template, count=2, daemon_sets=True)
        for name in names:
            pods = [pi.pod for pi in sim.cluster.get(name).pods]
            assert [p.key for p in pods] == [f"monitoring/node-exporter-{name}"]
            assert pods[0].spec.node_name == name
            assert sim.cluster.get(name).requested.milli_cpu == 100
    with sim.fork():
        names = sim.add_node_from_template(template, count=1)  # opt-in: none by default
        assert sim.cluster.get(names[0]).pods == []
    tainted = next(n for n in cluster.nodes if n.name == "node-2")
    with sim.fork():
        names = sim.add_node_from_template(tainted, count=1, daemon_sets=True)
        assert sim.cluster.get(names[0]).pods == []  # dedicated=gpu:NoSchedule not tolerated


def test_daemonset_pods_for_node_admit_priority() -> None:
    ds = KubeObject.from_dict(_doc("DaemonSet", "agent", {"template": {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"priorityClassName": "system-node-critical", "containers": [{"name": "c", "image": "i"}]}}}))
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "t"}})
    pods = daemonset_pods_for_node([ds], node)
    assert [p.name for p in pods] == ["agent-t"]
    sim = Simulator(seed=1, cluster=None, objects=[ds])
    sim.add_node_from_template(node, 1, "new", daemon_sets=True)
    [pi] = sim.cluster.get("new-0").pods
    assert pi.pod.priority == 2_000_001_000


def test_expand_keeps_cluster_type() -> None:
    assert isinstance(expand_workloads(Cluster()), Cluster)


def test_readme_demo_explains_the_priority_class_and_the_daemonset() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cmd = "scheduling-framework schedule --cluster examples/cluster.yaml --expand-workloads --explain"
    assert cmd in readme
    out, err = io.StringIO(), io.StringIO()
    args = ["schedule", "--cluster", str(ROOT / "examples" / "cluster.yaml"), "--expand-workloads", "--explain",
            "--output", "json", "--seed", "1"]
    assert main(args, stdout=out, stderr=err) == 0
    doc = json.loads(out.getvalue())
    r = {x["pod"]: x for x in doc["pods"]}
    assert r["shop/checkout-1"]["victims"] == ["default/batch-0"]  # priority from PriorityClass shop-critical
    agents = {x["node"] for k, x in r.items() if k.startswith("kube-system/log-agent-")}
    assert agents == {f"node-{i}" for i in range(1, 7)}  # not gpu-1: its taint is not tolerated
    agent = next(x for k, x in r.items() if k.startswith("kube-system/log-agent-"))
    # the controller's node affinity pins each pod: only its node passes Filter
    assert sum(v["code"] == "Success" for v in agent["filter"].values()) == 1
    assert doc["warnings"] == []
    table, err = io.StringIO(), io.StringIO()
    assert main(args[:-4], stdout=table, stderr=err) == 0
    assert "victims: default/batch-0" in table.getvalue() and err.getvalue() == ""
