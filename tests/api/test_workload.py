"""The Workload API model (scheduling.k8s.io/v1alpha1) and the Pod's spec.workloadRef: parsing and validation
with field paths."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.api.pod import Pod
from scheduling_framework.api.workload import PodGroupObject, Workload
from scheduling_framework.errors import ManifestError, ManifestValidationError
from scheduling_framework.ingest.cluster import cluster_from_documents


def wl(groups: Any, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": "train", "namespace": "default"}, "spec": {"podGroups": groups}, **extra}


def test_parses_gang_and_basic_groups() -> None:
    w = Workload.from_dict(wl([{"name": "workers", "policy": {"gang": {"minCount": 4}}},
                               {"name": "driver", "policy": {"basic": {}}}]))
    workers, driver = w.pod_groups
    assert (workers.name, workers.policy.is_gang, workers.policy.min_count) == ("workers", True, 4)
    assert (driver.name, driver.policy.is_gang) == ("driver", False)
    assert w.pod_group("driver") is driver and w.pod_group("none") is None


@pytest.mark.parametrize(("groups", "path", "detail"), [
    pytest.param(None, "spec.podGroups", "Required value", id="no-pod-groups"),
    pytest.param([{"name": f"g{i}", "policy": {"basic": {}}} for i in range(9)], "spec.podGroups", "Too many: 9",
                 id="too-many-groups"),
    pytest.param([{"policy": {"basic": {}}}], "spec.podGroups[0].name", "Required value", id="no-name"),
    pytest.param([{"name": "Bad_Name", "policy": {"basic": {}}}], "spec.podGroups[0].name", "RFC 1123",
                 id="name-not-a-dns-label"),
    pytest.param([{"name": "a", "policy": {"basic": {}}}, {"name": "a", "policy": {"basic": {}}}],
                 "spec.podGroups[1].name", 'Duplicate value: "a"', id="duplicate-name"),
    pytest.param([{"name": "a"}], "spec.podGroups[0].policy", "Required value", id="no-policy"),
    pytest.param([{"name": "a", "policy": {}}], "spec.podGroups[0].policy", "exactly one of", id="empty-policy"),
    pytest.param([{"name": "a", "policy": {"basic": {}, "gang": {"minCount": 1}}}], "spec.podGroups[0].policy",
                 "exactly one of", id="two-policies"),
    pytest.param([{"name": "a", "policy": {"gang": {}}}], "spec.podGroups[0].policy.gang.minCount",
                 "Required value", id="gang-without-min-count"),
    pytest.param([{"name": "a", "policy": {"gang": {"minCount": 0}}}], "spec.podGroups[0].policy.gang.minCount",
                 "Invalid value: 0: must be greater than 0", id="min-count-zero"),
    pytest.param([{"name": "a", "policy": {"gang": {"minCount": "4"}}}], "spec.podGroups[0].policy.gang.minCount",
                 "expected an integer", id="min-count-a-string"),
])
def test_invalid_workload_names_the_field(groups: Any, path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as ei:
        Workload.from_dict(wl(groups))
    assert ei.value.path == path
    assert detail in ei.value.detail
    assert "Workload default/train" in str(ei.value)


def test_unsupported_api_version() -> None:
    with pytest.raises(ManifestError, match=r'unsupported apiVersion "scheduling\.k8s\.io/v9"'):
        Workload.from_dict(wl([{"name": "a", "policy": {"basic": {}}}], apiVersion="scheduling.k8s.io/v9"))


@pytest.mark.parametrize(("ref", "path"), [
    pytest.param({"podGroup": "g"}, "spec.workloadRef.name", id="no-name"),
    pytest.param({"name": "w"}, "spec.workloadRef.podGroup", id="no-pod-group"),
    pytest.param("w", "spec.workloadRef", id="not-an-object"),
])
def test_invalid_workload_ref_names_the_field(ref: Any, path: str) -> None:
    with pytest.raises(ManifestError) as ei:
        Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [], "workloadRef": ref}})
    assert ei.value.path == path


def test_workload_ref_with_replica_key() -> None:
    p = Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [], "workloadRef": {
        "name": "w", "podGroup": "g", "podGroupReplicaKey": "3"}}})
    assert p.spec.workload_ref is not None and p.spec.workload_ref.describe() == "w/g[3]"


def test_cluster_refuses_a_bad_workload_naming_it_and_the_field() -> None:
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_documents([wl([{"name": "a", "policy": {"gang": {"minCount": -1}}}])])
    assert "document 1: Workload default/train" in str(ei.value)
    assert "spec.podGroups[0].policy.gang.minCount" in str(ei.value)


def test_cluster_reads_workloads_without_an_ignored_warning() -> None:
    c = cluster_from_documents([wl([{"name": "a", "policy": {"basic": {}}}])])
    assert [o.kind for o in c.objects] == ["Workload"]
    assert not any("Workload" in w for w in c.warnings)


# --- Kubernetes 1.36+: PodGroup objects and spec.schedulingGroup ---------------------------------------------
def pg(policy: Any, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": "workers", "namespace": "default"}, "spec": {"schedulingPolicy": policy}, **extra}


def test_parses_a_pod_group() -> None:
    g = PodGroupObject.from_dict({**pg({"gang": {"minCount": 3}}), "spec": {
        "schedulingPolicy": {"gang": {"minCount": 3}},
        "podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}}}})
    assert (g.policy.is_gang, g.policy.min_count, g.workload_name, g.template_name) == (True, 3, "train", "workers")


@pytest.mark.parametrize(("policy", "path", "detail"), [
    pytest.param(None, "spec.schedulingPolicy", "Required value", id="no-policy"),
    pytest.param({}, "spec.schedulingPolicy", "exactly one of", id="empty-policy"),
    pytest.param({"gang": {"minCount": 0}}, "spec.schedulingPolicy.gang.minCount", "must be greater than 0",
                 id="min-count-zero"),
])
def test_invalid_pod_group_names_the_field(policy: Any, path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as ei:
        PodGroupObject.from_dict(pg(policy))
    assert (ei.value.path, detail in ei.value.detail) == (path, True)
    assert "PodGroup default/workers" in str(ei.value)


def test_scheduling_group_needs_a_pod_group_name() -> None:
    with pytest.raises(ManifestError) as ei:
        Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [], "schedulingGroup": {}}})
    assert ei.value.path == "spec.schedulingGroup.podGroupName"


def test_cluster_validates_kubernetes_pod_groups_but_not_scheduler_plugins_ones() -> None:
    with pytest.raises(ManifestValidationError, match=r"spec\.schedulingPolicy"):
        cluster_from_documents([pg({})])
    # scheduler-plugins' PodGroup (scheduling.x-k8s.io) has another shape: kept as it is
    c = cluster_from_documents([{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                 "metadata": {"name": "pg", "namespace": "default"}, "spec": {"minMember": 2}}])
    assert [o.kind for o in c.objects] == ["PodGroup"]
