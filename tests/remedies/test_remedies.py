"""Remedies for pending pods (issue #37): every remedy kind is checked by applying its change to the input file
and running ``schedule`` again: the pod must then be Scheduled, on the node the remedy said (or on a node with
the same top total score, a tie the seed breaks)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework import cli
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.remedies import KINDS, PodRemedies, patch, remedies_for, why
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "remedies" / "cluster.yaml"
TEMPLATES = ROOT / "examples" / "remedies" / "node-templates.yaml"


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def node(name: str, cpu: str = "4", mem: str = "16Gi", labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, unschedulable: bool = False,
         extra: dict[str, str] | None = None) -> dict[str, Any]:
    n: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                         "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110", **(extra or {})}}}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    if spec:
        n["spec"] = spec
    return n


def pod(name: str, on: str | None = None, cpu: str = "100m", labels: dict[str, str] | None = None,
        **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    p: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "namespace": "t", "labels": labels or {"app": name}},
                         "spec": {"containers": [container], **spec}}
    if on:
        p["spec"]["nodeName"] = on
    return p


def cluster(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(items)}


def _write(tmp: Path, doc: dict[str, Any], name: str = "c.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def schedule_json(path: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run("schedule", "--cluster", str(path), "--output", "json", "--seed", "1", *extra)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def record(doc: dict[str, Any], key: str) -> dict[str, Any]:
    return next(p for p in doc["pods"] if p["pod"] == key)


def apply_remedy(doc: dict[str, Any], remedy: dict[str, Any], templates: list[dict[str, Any]]) -> dict[str, Any]:
    """The input with the remedy's patches applied (``create``: a node copied from the named template)."""
    out = copy.deepcopy(doc)
    for change in remedy["patches"]:
        t = change["target"]
        if "create" in change:
            tmpl = next(n for n in templates if n["metadata"]["name"] == change["create"]["fromTemplate"])
            new = copy.deepcopy(tmpl)
            new["metadata"]["name"] = t["name"]
            out["items"].append(new)
            continue
        for i, item in enumerate(out["items"]):
            meta = item["metadata"]
            if item["kind"] == t["kind"] and meta["name"] == t["name"] and \
                    meta.get("namespace", "") == t.get("namespace", meta.get("namespace", "")):
                out["items"][i] = patch.apply(item, change["patch"])
                break
        else:
            raise AssertionError(f"no {t} in the input")
    return out


def check_lands_where_said(tmp: Path, doc: dict[str, Any], key: str, remedy: dict[str, Any],
                           templates: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
    changed = apply_remedy(doc, remedy, list(templates))
    after = record(schedule_json(_write(tmp, changed, "after.yaml"), "--explain", "--pod", key), key)
    assert after["outcome"] == "Scheduled", (remedy["change"], after["message"])
    if after["node"] != remedy["landsOn"]:
        totals = after["totalScores"]
        assert totals and totals.get(remedy["landsOn"]) == totals[after["node"]], (
            f"{remedy['change']}: landed on {after['node']}, the remedy said {remedy['landsOn']} ({totals})")


def remedies_of(path: Path, key: str, *extra: str) -> list[dict[str, Any]]:
    rec = record(schedule_json(path, "--why", *extra), key)
    assert rec["outcome"] == "Unschedulable"
    rems: list[dict[str, Any]] = rec["remedies"]
    assert all(r["verified"] for r in rems)
    return rems


# --- the example: the four classic cases, a spread and an anti-affinity --------------------------------------


EXAMPLE_DOC = yaml.safe_load(EXAMPLE.read_text())
TEMPLATE_NODES = yaml.safe_load(TEMPLATES.read_text())["items"]


@pytest.fixture(scope="module")
def example() -> dict[str, dict[str, Any]]:
    doc = schedule_json(EXAMPLE, "--why", "--node-template", str(TEMPLATES))
    return {p["pod"]: p for p in doc["pods"]}


@pytest.mark.parametrize(("key", "kind", "fact"), [
    pytest.param("shop/trainer", "newNode", "no node offers nvidia.com/gpu", id="GPU nowhere"),
    pytest.param("shop/eu-app", "dropNodeSelector", "no node has topology.kubernetes.io/zone=eu-west-1a (nodes have "
                 "us-east-1a, us-east-1b, us-east-1c)", id="wrong zone"),
    pytest.param("shop/bigdb", "lowerRequests", "the largest node's allocatable memory is 64Gi (hm-1); the pod "
                 "requests 200Gi", id="too big for any node"),
    pytest.param("shop/cache", "tolerateTaint", None, id="untolerated taint"),
    pytest.param("shop/web-5", "relaxTopologySpread", None, id="topology spread"),
    pytest.param("shop/api-5", "dropPodAntiAffinityTerm", None, id="anti-affinity"),
])
def test_the_classic_cases(example: dict[str, dict[str, Any]], tmp_path: Path, key: str, kind: str,
                           fact: str | None) -> None:
    rec = example[key]
    if fact is not None:
        assert rec["facts"][0] == fact
    kinds = [r["kind"] for r in rec["remedies"]]
    assert kind in kinds, kinds
    for r in rec["remedies"]:
        check_lands_where_said(tmp_path, EXAMPLE_DOC, key, r, TEMPLATE_NODES)


def test_the_example_remedies_in_words(example: dict[str, dict[str, Any]]) -> None:
    changes = {k: [r["change"] for r in v["remedies"]] for k, v in example.items()}
    assert changes["shop/cache"] == ["drop nodeSelector pool=highmem",
                                     "add the toleration dedicated=highmem:NoSchedule"]
    assert changes["shop/web-5"][0] == "raise the spread over topology.kubernetes.io/zone from maxSkew 1 to 2"
    assert changes["shop/trainer"] == ["add a node like template gpu-node"]
    assert changes["shop/bigdb"] == ["lower the requests (memory from 200Gi to 15.7Gi) to fit n-a1",
                                     "add a node like template large-node"]
    assert example["shop/web-5"]["why"]["shortfalls"] == [{"node": "n-c1", "short": {"cpu": "200m"}}]
    assert example["shop/cache"]["remedies"][1]["patches"] == [
        {"target": {"kind": "Pod", "namespace": "shop", "name": "cache"},
         "patch": [{"op": "add", "path": "/spec/tolerations",
                    "value": [{"key": "dedicated", "operator": "Equal", "effect": "NoSchedule", "value": "highmem"}]}]}]


# --- the other kinds, each on a cluster of its own ------------------------------------------------------------


TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}

CASES: dict[str, tuple[dict[str, Any], str]] = {
    "dropRequiredNodeAffinity": (cluster(
        node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"}),
        pod("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["c"]}]}]}}})), "t/p"),
    "dropPodAffinityTerm": (cluster(
        node("n1"), node("n2"),
        pod("p", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}})), "t/p"),
    "dropHostPort": (cluster(
        node("n1"), node("n2"),
        pod("r1", on="n1", ports=[{"containerPort": 80, "hostPort": 8080}]),
        pod("r2", on="n2", ports=[{"containerPort": 80, "hostPort": 8080}]),
        pod("p", ports=[{"containerPort": 80, "hostPort": 8080}])), "t/p"),
    "uncordonNode": (cluster(
        node("n1", unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        node("n2", cpu="1"), pod("big", on="n2", cpu="900m"), pod("p", cpu="500m")), "t/p"),
    "combination": (cluster(
        node("n1", labels={"disk": "hdd"}, taints=[TAINT]), node("n2", labels={"disk": "hdd"}, taints=[TAINT]),
        pod("p", nodeSelector={"disk": "ssd"})), "t/p"),
    "raisePriority": (cluster(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        node("n1", cpu="1"), node("n2", cpu="1"),
        pod("batch", on="n1", cpu="800m", priorityClassName="low", priority=10),
        pod("web", on="n2", cpu="800m", priorityClassName="high", priority=1000),
        pod("p", cpu="500m", priorityClassName="low", priority=10)), "t/p"),
    "dropPodAntiAffinityTerm": (cluster(
        node("n1"), pod("r", on="n1", labels={"app": "web"}),
        pod("p", labels={"app": "web"}, affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}})), "t/p"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_kind_lands_where_it_said(tmp_path: Path, kind: str) -> None:
    doc, key = CASES[kind]
    rems = remedies_of(_write(tmp_path, doc), key)
    assert kind in [r["kind"] for r in rems], [r["change"] for r in rems]
    for r in rems:
        check_lands_where_said(tmp_path, doc, key, r)


def test_every_kind_is_tested() -> None:
    covered = set(CASES) | {"newNode", "lowerRequests", "tolerateTaint", "dropNodeSelector", "relaxTopologySpread"}
    assert covered == set(KINDS)


def test_a_combination_names_its_parts_and_patches_both(tmp_path: Path) -> None:
    doc, key = CASES["combination"]
    [r] = remedies_of(_write(tmp_path, doc), key)
    assert r["parts"] == ["add the toleration dedicated=x:NoSchedule", "drop nodeSelector disk=ssd"]
    assert [op["op"] for op in r["patches"][0]["patch"]] == ["add", "remove"]


def test_rare_nodes_are_examined_on_a_big_cluster(tmp_path: Path) -> None:
    # 1,000 nodes, the only 6 that offer a GPU tainted: the sample must include them (each group of nodes a cycle
    # rejects for the same reason is sampled), so the toleration is found.
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    items = [node(f"n{i}") for i in range(994)]
    items += [node(f"gpu{i}", extra={"nvidia.com/gpu": "4"}, taints=[gpu_taint]) for i in range(6)]
    p = pod("train")
    p["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    p["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    rec = record(schedule_json(_write(tmp_path, cluster(*items, p)), "--why"), "t/train")
    assert rec["why"]["sampled"] and rec["why"]["examinedNodes"] < 1000
    [r] = rec["remedies"]
    assert r["change"] == "add the toleration nvidia.com/gpu=present:NoSchedule" and r["nodesOpened"] == 6
    assert r["landsOn"].startswith("gpu")


# --- what is not computed, bad input ----------------------------------------------------------------------


def test_a_rejection_without_remedy_is_named(tmp_path: Path) -> None:
    doc = cluster(node("n1"), pod("p", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "missing"}}]))
    rec = record(schedule_json(_write(tmp_path, doc), "--why"), "t/p")
    assert rec["remedies"] == []
    [line] = rec["why"]["notComputed"]
    assert line.startswith("no remedy computed for ") and "(at PreFilter, every node)" in line
    assert line.endswith('persistentvolumeclaim "missing" not found')
    assert any("rejected the pod before any node was examined" in f for f in rec["facts"])


def test_why_has_no_place_in_yaml_output() -> None:
    code, out, err = run("schedule", "--cluster", str(EXAMPLE), "--why", "--output", "yaml")
    assert code == 2 and err.startswith("error: --why") and out == ""


def test_node_template_needs_why() -> None:
    code, _, err = run("schedule", "--cluster", str(EXAMPLE), "--node-template", str(TEMPLATES))
    assert code == 2 and "--node-template" in err and "--why" in err


@pytest.mark.parametrize(("content", "words"), [
    pytest.param(None, "no/such", id="missing"),
    pytest.param("kind: Pod\napiVersion: v1\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i}]}\n",
                 "holds no Node", id="no-node"),
    pytest.param("a: [\n", "--node-template", id="malformed"),
])
def test_bad_node_templates_name_the_flag(tmp_path: Path, content: str | None, words: str) -> None:
    path = "no/such/templates.yaml"
    if content is not None:
        path = str(tmp_path / "t.yaml")
        Path(path).write_text(content, encoding="utf-8")
    code, _, err = run("schedule", "--cluster", str(EXAMPLE), "--why", "--node-template", path)
    assert code == 2 and err.startswith("error: --node-template") and words in err, err
    assert "Traceback" not in err


def test_the_table_leads_with_the_facts() -> None:
    code, out, _ = run("schedule", "--cluster", str(EXAMPLE), "--why", "--seed", "1", "--pod", "shop/eu-app")
    assert code == 0
    block = out[out.index("shop/eu-app: what would make it fit"):].splitlines()
    assert block[1].startswith("  fact: no node has topology.kubernetes.io/zone=eu-west-1a")
    assert block[2].startswith("  - drop nodeSelector topology.kubernetes.io/zone=eu-west-1a: opens 5 nodes, lands on")


# --- Python -----------------------------------------------------------------------------------------------------


def test_python_simulator_and_scheduler_agree() -> None:
    c = load_cluster(EXAMPLE)
    sim = Simulator.from_cluster(c, seed=1)
    pending = {p.key: p for p in c.pending_pods}
    direct = sim.remedies(pending["shop/cache"])
    assert isinstance(direct, PodRemedies)
    assert [r.change for r in direct.remedies] == [r.change for r in remedies_for(sim, pending["shop/cache"]).remedies]
    sched = Scheduler(seed=1)
    sched.load(c.nodes, c.pods, c.objects)
    sched.run()
    after = {r.pod: r for r in why(sched, list(pending.values()), seed=1)}
    assert set(after) == set(pending)
    assert [r.change for r in after["shop/cache"].remedies] == [r.change for r in direct.remedies]
    assert after["shop/cache"].records()[0]["kind"] == "dropNodeSelector"


def test_the_simulator_is_left_unchanged() -> None:
    c = load_cluster(EXAMPLE)
    sim = Simulator.from_cluster(c, seed=1)
    before = {ni.name: (len(ni.pods), ni.node) for ni in sim.cluster.node_infos()}
    for p in c.pending_pods:
        sim.remedies(p, templates=TEMPLATE_NODES)
    assert {ni.name: (len(ni.pods), ni.node) for ni in sim.cluster.node_infos()} == before


# --- DRA facts ---------------------------------------------------------------------------------------------------


def _dra_cluster(driver: str, class_name: str = "gpu") -> dict[str, Any]:
    return cluster(
        node("gpu-1"),
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
         "spec": {"driver": driver, "nodeName": "gpu-1", "pool": {"name": "p", "generation": 1,
                                                                  "resourceSliceCount": 1},
                  "devices": [{"name": "dev-0"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one", "namespace": "t"},
         "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": class_name}}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": "t"},
         "spec": {"resourceClaims": [{"name": "c", "resourceClaimTemplateName": "one"}],
                  "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "c"}]}}]}})


@pytest.mark.parametrize(("driver", "class_name", "fact"), [
    pytest.param("other.example.com", "gpu", "no device matches DeviceClass gpu's selector (request c/r; 1 "
                 "ResourceSlice(s) listed)", id="no-matching-device"),
    pytest.param("gpu.example.com", "tpu", "no DeviceClass tpu (request c/r)", id="no-class"),
])
def test_dra_facts(tmp_path: Path, driver: str, class_name: str, fact: str) -> None:
    rec = record(schedule_json(_write(tmp_path, _dra_cluster(driver, class_name)), "--why"), "t/train")
    assert rec["outcome"] == "Unschedulable"
    assert fact in rec["facts"], rec["facts"]
    assert any("DynamicResources" in line for line in rec["why"]["notComputed"]), rec["why"]
