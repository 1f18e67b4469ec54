"""NodeResourcesFit / BalancedAllocation scoring of extended resources served through DRA (DRAExtendedResource):
upstream's TestCalculateResourceAllocatableRequest, ported as data in
tests/fixtures/upstream/dra-extended-resource-scoring.yaml, and a placement it decides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from plugins_intree.noderesources.dra_capacity import dra_capacity_for
from plugins_intree.noderesources.resource_allocation import ResourceAllocationScorer
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.config.args import ResourceSpec
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore
from tests.fixture_runner import ROOT

CASES = yaml.safe_load((ROOT / "tests/fixtures/upstream/dra-extended-resource-scoring.yaml").read_text())["cases"]
V1 = "resource.k8s.io/v1"


class Handle:
    def __init__(self, objects: ObjectStore, gate: bool) -> None:
        self.objects = objects
        self.feature_gates = {"DRAExtendedResource": gate}


def _objects(case: dict[str, Any]) -> list[KubeObject]:
    out = []
    for c in case.get("classes") or []:
        spec: dict[str, Any] = {}
        if c.get("extendedResourceName"):
            spec["extendedResourceName"] = c["extendedResourceName"]
        if c.get("selectors"):
            spec["selectors"] = [{"cel": {"expression": e}} for e in c["selectors"]]
        out.append({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": c["name"]}, "spec": spec})
    if case.get("devices"):
        out.append({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "resource-node-test-driver"},
                    "spec": {"driver": "test-driver", "nodeName": "resource-node",
                             "pool": {"name": "resource-node", "resourceSliceCount": 1},
                             "devices": [{"name": d} for d in case["devices"]]}})
    if case.get("slice"):
        out.append(case["slice"])
    for name, device, share, *pool in case.get("claims") or []:
        result = {"request": "req-1", "driver": "test-driver", "pool": pool[0] if pool else "resource-node",
                  "device": device, **({"shareID": share} if share else {})}
        out.append({"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {
                        "deviceClassName": "device-class-name"}}]}},
                    "status": {"allocation": {"devices": {"results": [result]}}}})
    return [KubeObject.from_dict(o) for o in out]


def allocatable_and_requested(case: dict[str, Any]) -> list[int]:
    store = ObjectStore(_objects(case))
    n = case["node"]
    node = Node.from_dict({"kind": "Node", "metadata": {"name": n["name"], "labels": n.get("labels") or {}},
                           "status": {"capacity": n.get("capacity") or {}}})
    seen: list[int] = []

    def capture(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        seen[:] = [allocatable[0], requested[0]]
        return 0

    resource = case["resource"]
    scorer = ResourceAllocationScorer("test", [ResourceSpec(resource, 1)], capture, use_requested=False)
    dra = dra_capacity_for(Handle(store, case["gate"]), case["gate"], [resource], True)
    scorer.score(NodeInfo(node), [case["podRequest"]], dra)
    return seen


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_allocatable_and_requested(case: dict[str, Any]) -> None:
    assert allocatable_and_requested(case) == case["expected"]


def test_most_allocated_prefers_the_node_whose_dra_devices_are_in_use() -> None:
    """MostAllocated over example.com/gpu: the node with one of its two GPUs taken scores 100 (both in use
    with the pod), the idle one 50."""
    from plugins_intree.noderesources import Fit
    from scheduling_framework.api.pod import Pod
    from scheduling_framework.cycle_state import CycleState

    objs = [{"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"extendedResourceName": "example.com/gpu"}}]
    for node in ("a", "b"):
        objs.append({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": node},
                     "spec": {"driver": "d", "nodeName": node, "pool": {"name": node, "resourceSliceCount": 1},
                              "devices": [{"name": "g0"}, {"name": "g1"}]}})
    objs.append({"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                 "status": {"allocation": {"devices": {"results": [
                     {"request": "r", "driver": "d", "pool": "a", "device": "g0"}]}}}})
    store = ObjectStore(KubeObject.from_dict(o) for o in objs)
    fit = Fit({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "example.com/gpu", "weight": 1}]}},
              Handle(store, True))
    pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"requests": {"example.com/gpu": "1"}}}]}})
    nodes = [NodeInfo(Node.from_dict({"kind": "Node", "metadata": {"name": n}})) for n in ("a", "b")]
    state = CycleState()
    fit.pre_score(state, pod, nodes)
    assert [fit.score(state, pod, ni)[0] for ni in nodes] == [100, 50]
    assert fit.score_signature(state, pod) is None  # the score reads the claims: never reused
