"""`replay`: a gang created on a cluster with room for three of its four pods schedules none; once a node is
added, all four are placed together."""

from __future__ import annotations

from typing import Any

from scheduling_framework.scenario.model import scenario_from_dict
from scheduling_framework.scenario.replay import run_scenario


def scenario(gates: dict[str, bool]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling-framework/v1", "kind": "Scenario", "name": "gang", "seed": 1,
        "kubernetesVersion": "1.35", "featureGates": gates,
        "cluster": [{"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                     "metadata": {"name": "train", "namespace": "default"},
                     "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 4}}}]}}],
        "templates": {
            "nodes": {"n": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}},
            "pods": {"worker": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                                "spec": {"workloadRef": {"name": "train", "podGroup": "workers"},
                                         "containers": [{"name": "c", "image": "i",
                                                         "resources": {"requests": {"cpu": "3"}}}]}}},
        },
        "steps": [
            {"op": "createNodes", "count": 3, "template": "n"},
            {"op": "createPods", "count": 4, "template": "worker", "namePrefix": "worker-"},
        ],
    }


def test_replay_places_no_member_of_a_gang_that_does_not_fit() -> None:
    result = run_scenario(scenario_from_dict(scenario({"GenericWorkload": True, "GangScheduling": True})))
    assert (result.final.scheduled, result.final.unschedulable) == (0, 4)


def test_replay_places_the_whole_gang_once_a_node_is_added() -> None:
    doc = scenario({"GenericWorkload": True, "GangScheduling": True})
    doc["steps"].append({"op": "createNodes", "count": 1, "template": "n"})
    result = run_scenario(scenario_from_dict(doc))
    assert [(s.scheduled, s.unschedulable) for s in result.steps[-2:]] == [(0, 4), (4, 0)]


def test_replay_without_the_gates_places_pods_one_by_one() -> None:
    result = run_scenario(scenario_from_dict(scenario({})))
    assert result.final.scheduled == 3
