"""Simulator.schedule_pods (the what-if API) places a gang whole or not at all."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_node, make_pod

GATES = "GenericWorkload=true,GangScheduling=true"


def workload(min_count: int | str) -> KubeObject:
    policy: dict[str, Any] = {"basic": {}} if min_count == "basic" else {"gang": {"minCount": min_count}}
    return KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                                 "metadata": {"name": "train", "namespace": "default"},
                                 "spec": {"podGroups": [{"name": "workers", "policy": policy}]}})


def simulator(nodes: int, min_count: int | str = 4, gates: str = GATES) -> Simulator:
    sim = Simulator(kubernetes_version="1.35", feature_gates=gates, objects=[workload(min_count)], seed=1)
    for i in range(nodes):
        sim.add_node(make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj())
    return sim


def workers(n: int = 4) -> list[Pod]:
    return [make_pod().name(f"worker-{i}").uid(f"worker-{i}").req(cpu="3").workload_ref("train", "workers").obj()
            for i in range(n)]


def test_gang_with_room_for_three_of_four_places_none_and_says_why() -> None:
    sim = simulator(3)
    out = sim.schedule_pods(workers())
    assert out.placements == {}
    assert out.unschedulable["default/worker-0"] == (
        "pod group default/train/workers (gang, minCount 4) was not placed: only 3 of its pods found a node; "
        "default/worker-3 found no node: 0/3 nodes are available: 3 Insufficient cpu.")
    assert all(not ni.pods for ni in sim.cluster.snapshot.list())  # nothing left behind


def test_gang_with_room_for_four_places_all() -> None:
    out = simulator(4).schedule_pods(workers())
    assert len(out.placements) == 4 and len(set(out.placements.values())) == 4


def test_other_pods_get_the_room_of_a_failed_gang() -> None:
    web = make_pod().name("web").uid("web").req(cpu="3").obj()
    out = simulator(3).schedule_pods([*workers(), web])
    assert list(out.placements) == ["default/web"]


@pytest.mark.parametrize(("min_count", "gates"), [
    pytest.param("basic", GATES, id="basic-policy"),
    pytest.param(4, "", id="gates-off"),
])
def test_pods_placed_one_by_one_without_a_gang(min_count: int | str, gates: str) -> None:
    out = simulator(3, min_count, gates).schedule_pods(workers())
    assert len(out.placements) == 3


def test_bound_members_count_towards_min_count() -> None:
    sim = simulator(4)
    running = make_pod().name("worker-9").uid("worker-9").req(cpu="3").workload_ref("train", "workers").obj()
    sim.add_pod(running, "node-0")
    out = sim.schedule_pods(workers(3))
    assert len(out.placements) == 3


def test_pod_group_api_gang_is_placed_whole_or_not_at_all() -> None:
    pg = KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                               "metadata": {"name": "workers", "namespace": "default"},
                               "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}})
    pods = [make_pod().name(f"w-{i}").uid(f"w-{i}").req(cpu="3").scheduling_group("workers").obj() for i in range(4)]
    for nodes, placed in ((3, 0), (4, 4)):
        sim = Simulator(kubernetes_version="1.36", feature_gates=GATES, objects=[pg], seed=1)
        for i in range(nodes):
            sim.add_node(make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj())
        assert len(sim.schedule_pods(pods).placements) == placed
