"""`capacity` for a gang: how many more whole copies of a Workload pod group fit."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cli import main
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
GATES = "GenericWorkload=true,GangScheduling=true"


def workload(policy: dict[str, Any]) -> KubeObject:
    return KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                                 "metadata": {"name": "train", "namespace": "default"},
                                 "spec": {"podGroups": [{"name": "workers", "policy": policy}]}})


def simulator(nodes: int, objects: list[KubeObject], gates: str = GATES) -> Simulator:
    sim = Simulator(kubernetes_version="1.35", feature_gates=gates, objects=objects, seed=1)
    for i in range(nodes):
        sim.add_node(make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj())
    return sim


WORKER = make_pod().name("worker").uid("worker").req(cpu="3").workload_ref("train", "workers").obj()


@pytest.mark.parametrize(("nodes", "count"), [(3, 0), (4, 1), (10, 2), (12, 3)])
def test_whole_gangs_fit(nodes: int, count: int) -> None:
    result = simulator(nodes, [workload({"gang": {"minCount": 4}})]).capacity(WORKER)
    assert (result.count, result.pods_per_copy, result.stop_reason) == (count, 4, "Unschedulable")
    assert sum(result.per_node.values()) == 4 * count
    assert result.message.startswith(f"pod group default/train/workers[copy-{count}] (gang, minCount 4) was not "
                                     "placed")


def test_capacity_leaves_the_cluster_unchanged() -> None:
    sim = simulator(8, [workload({"gang": {"minCount": 4}})])
    sim.capacity(WORKER)
    assert all(not ni.pods for ni in sim.cluster.snapshot.list())


def test_max_counts_gangs() -> None:
    result = simulator(12, [workload({"gang": {"minCount": 4}})]).capacity(WORKER, max=2)
    assert (result.count, result.stop_reason, len(result.placements)) == (2, "LimitReached", 8)


def test_basic_group_copies_are_single_pods() -> None:
    result = simulator(3, [workload({"basic": {}})]).capacity(WORKER)
    assert (result.count, result.pods_per_copy) == (3, 1)


def test_missing_workload_fits_zero_with_the_reason() -> None:
    result = simulator(3, []).capacity(WORKER)
    assert (result.count, result.message) == (0, 'waiting for pods\'s workload "train" to appear in scheduling queue')


def test_without_the_gates_copies_are_single_pods() -> None:
    result = simulator(3, [workload({"gang": {"minCount": 4}})], gates="").capacity(WORKER)
    assert (result.count, result.pods_per_copy) == (3, 1)


def test_cli_capacity_with_workload_file() -> None:
    out = io.StringIO()
    code = main(["capacity", "--cluster", str(ROOT / "examples/gang/ten-nodes.yaml"), "--pod",
                 str(ROOT / "examples/gang/worker.yaml"), "--workload", str(ROOT / "examples/gang/workload.yaml"),
                 "--kubernetes-version", "1.35", "--feature-gates", GATES, "--output", "json"],
                stdout=out, stderr=io.StringIO())
    doc = json.loads(out.getvalue())
    assert code == 0
    assert (doc["count"], doc["podsPerCopy"], sum(doc["perNode"].values())) == (2, 4, 8)


def test_pod_group_api_copies_are_whole_gangs() -> None:
    pg = KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                               "metadata": {"name": "workers", "namespace": "default"},
                               "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}})
    sim = Simulator(kubernetes_version="1.37", feature_gates="GenericWorkload=true", objects=[pg], seed=1)
    for i in range(10):
        sim.add_node(make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj())
    worker = make_pod().name("worker").uid("worker").req(cpu="3").scheduling_group("workers").obj()
    result = sim.capacity(worker)
    assert (result.count, result.pods_per_copy) == (2, 4)
    assert result.message.startswith("pod group default/workers-copy-2 (gang, minCount 4) was not placed")
    assert [o.name for o in sim.objects.list("PodGroup")] == ["workers"]  # the copies' PodGroups are gone


def test_cli_capacity_refuses_a_workload_the_cluster_already_has(tmp_path: Path) -> None:
    # the same Workload in --cluster and --workload: AlreadyExists, never one silently replacing the other
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text((ROOT / "examples/gang/ten-nodes.yaml").read_text() + "\n---\n"
                       + (ROOT / "examples/gang/workload.yaml").read_text())
    err = io.StringIO()
    code = main(["capacity", "--cluster", str(cluster), "--pod", str(ROOT / "examples/gang/worker.yaml"),
                 "--workload", str(ROOT / "examples/gang/workload.yaml"), "--kubernetes-version", "1.35",
                 "--feature-gates", GATES], stdout=io.StringIO(), stderr=err)
    assert code == 2
    assert "already exists in --cluster" in err.getvalue() and "--workload" in err.getvalue()
