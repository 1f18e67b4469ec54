"""tools/oracle/release_features.py draws clusters the real scheduler reads; here: every drawn cluster is valid
input for us too (loaded, scheduled, no error), so a mismatch the oracle finds is never a generator artefact."""

from __future__ import annotations

import copy
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import Scheduler

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "oracle"))
import release_features as rf

GPU = "gpu.example.com"


def _base() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}]
    for i in range(4):
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {
            "kubernetes.io/hostname": f"node-{i}"}}, "spec": {}, "status": {
            "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"s{i}"},
                     "spec": {"driver": GPU, "nodeName": f"node-{i}",
                              "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                              "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}]}})
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}})
    for j in range(6):
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"run-{j}", "namespace": "default"},
                     "spec": {"nodeName": f"node-{j % 4}", "containers": [
                         {"name": "c", "image": "nginx:1.25", "resources": {"requests": {"cpu": "500m",
                                                                                          "memory": "512Mi"}}}]},
                     "status": {"phase": "Running"}})
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "pending-c0", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "gpu"}}]}}})
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "default"},
                 "spec": {"containers": [{"name": "main", "image": "nginx:1.25", "resources": {
                     "requests": {"cpu": "250m", "memory": "128Mi"}, "claims": [{"name": "c0"}]}}],
                     "resourceClaims": [{"name": "c0", "resourceClaimName": "pending-c0"}]}})
    return docs


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("release", ["1.35", "1.36"])
def test_drawn_clusters_are_valid_input(seed: int, release: str) -> None:
    docs = copy.deepcopy(_base())
    seen: set[str] = set()
    r = random.Random(seed)
    for area in ("declared", "images", "resize", "balanced"):
        rf.MUTATORS[area](docs, r, seen)
    docs = rf.dra(docs, r, seen, taint_rules=True)
    cluster = cluster_from_documents(docs, strict=True)
    sched = Scheduler(None, seed=1, kubernetes_version=release,
                      feature_gates="DRADeviceTaints=true,DRADeviceTaintRules=true")
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    results = list(sched.run())
    assert results and all(res.outcome != "Error" or "feature is disabled" not in str(res.message)
                           for res in results)
    assert seen
