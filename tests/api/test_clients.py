"""Objects of the Python Kubernetes clients (official ``kubernetes``, lightkube, kr8s) taken wherever objects are.

Each client's objects are built locally (nothing connects to a cluster) with the same content as a reference
set of manifest dicts; every entry point must read them exactly as it reads the dicts, and a scheduling run
over client objects must give the same results as one over dicts.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from scheduling_framework import Scheduler
from scheduling_framework.api import KubeObject, Node, Pod
from scheduling_framework.api.clients import ACCEPTED, UnsupportedObjectError, as_manifest, client_of
from scheduling_framework.errors import ManifestError
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_snapshot

k8s = pytest.importorskip("kubernetes.client")
lk_core = pytest.importorskip("lightkube.resources.core_v1")
lk_models = pytest.importorskip("lightkube.models.core_v1")
lk_meta = pytest.importorskip("lightkube.models.meta_v1")
kr8s_objects = pytest.importorskip("kr8s.asyncio.objects")

CREATED = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)

# The reference cluster: two zones; "web" must land in zone b (its nodeSelector), "big" fits nowhere,
# "running" is bound to a-1.
NODES = [("a-1", "a", "4"), ("b-1", "b", "2")]
PODS = [("running", {}, "1", "a-1"), ("web", {"zone": "b"}, "1", None), ("big", {}, "8", None)]


def node_dict(name: str, zone: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": zone}},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod_dict(name: str, selector: dict[str, str], cpu: str, node: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}],
                            "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]}
    if selector:
        spec["nodeSelector"] = selector
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2024-01-02T03:04:05Z"},
            "spec": spec}


def k8s_node(name: str, zone: str, cpu: str) -> Any:
    return k8s.V1Node(metadata=k8s.V1ObjectMeta(name=name, labels={"zone": zone}),
                      status=k8s.V1NodeStatus(capacity={"cpu": cpu, "memory": "8Gi", "pods": "110"}))


def k8s_pod(name: str, selector: dict[str, str], cpu: str, node: str | None) -> Any:
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, namespace="default", creation_timestamp=CREATED),
        spec=k8s.V1PodSpec(
            containers=[k8s.V1Container(name="c", image="nginx",
                                        resources=k8s.V1ResourceRequirements(requests={"cpu": cpu}))],
            tolerations=[k8s.V1Toleration(key="dedicated", operator="Exists", effect="NoSchedule")],
            node_selector=selector or None, node_name=node))


def lightkube_node(name: str, zone: str, cpu: str) -> Any:
    return lk_core.Node(metadata=lk_meta.ObjectMeta(name=name, labels={"zone": zone}),
                        status=lk_models.NodeStatus(capacity={"cpu": cpu, "memory": "8Gi", "pods": "110"}))


def lightkube_pod(name: str, selector: dict[str, str], cpu: str, node: str | None) -> Any:
    return lk_core.Pod(
        metadata=lk_meta.ObjectMeta(name=name, namespace="default", creationTimestamp=CREATED),
        spec=lk_models.PodSpec(
            containers=[lk_models.Container(name="c", image="nginx",
                                            resources=lk_models.ResourceRequirements(requests={"cpu": cpu}))],
            tolerations=[lk_models.Toleration(key="dedicated", operator="Exists", effect="NoSchedule")],
            nodeSelector=selector or None, nodeName=node))


def kr8s_node(name: str, zone: str, cpu: str) -> Any:
    d = node_dict(name, zone, cpu)
    del d["apiVersion"], d["kind"]  # kr8s fills them in from its class
    return kr8s_objects.Node(d)


def kr8s_pod(name: str, selector: dict[str, str], cpu: str, node: str | None) -> Any:
    d = pod_dict(name, selector, cpu, node)
    del d["apiVersion"], d["kind"]
    return kr8s_objects.Pod(d)


Builders = tuple[Callable[..., Any], Callable[..., Any]]
CLIENTS: list[Any] = [
    pytest.param((k8s_node, k8s_pod), "kubernetes", id="kubernetes"),
    pytest.param((lightkube_node, lightkube_pod), "lightkube", id="lightkube"),
    pytest.param((kr8s_node, kr8s_pod), "kr8s", id="kr8s"),
]


def outcomes(results: Any) -> list[tuple[str, str, str | None, str]]:
    return sorted((r.pod, r.outcome, r.node, r.message) for r in results)


@pytest.mark.parametrize(("builders", "client"), CLIENTS)
def test_client_objects_are_recognised(builders: Builders, client: str) -> None:
    make_node, make_pod = builders
    assert client_of(make_node(*NODES[0])) == client
    assert client_of(make_pod(*PODS[1])) == client


@pytest.mark.parametrize(("builders", "client"), CLIENTS)
def test_pod_and_node_from_client_objects_equal_the_dict_ones(builders: Builders, client: str) -> None:
    make_node, make_pod = builders
    for args in NODES:
        assert Node.from_dict(make_node(*args)) == Node.from_dict(node_dict(*args))
    for pargs in PODS:
        got = Pod.from_dict(make_pod(*pargs), strict=True)
        assert got == Pod.from_dict(pod_dict(*pargs))
        assert got.metadata.creation_timestamp == CREATED


@pytest.mark.parametrize(("builders", "client"), CLIENTS)
def test_a_run_over_client_objects_equals_a_run_over_dicts(builders: Builders, client: str) -> None:
    make_node, make_pod = builders
    want = Scheduler(seed=1)
    want.load([node_dict(*a) for a in NODES], [pod_dict(*a) for a in PODS])
    got = Scheduler(seed=1, strict=True)
    got.load([make_node(*a) for a in NODES], [make_pod(*a) for a in PODS])
    assert outcomes(got.run()) == outcomes(want.run())
    assert ("default/web", "Scheduled", "b-1") in [(r.pod, r.outcome, r.node) for r in got.results.values()]
    assert list(got.warnings) == list(want.warnings)


@pytest.mark.parametrize(("builders", "client"), CLIENTS)
def test_add_and_update_take_client_objects(builders: Builders, client: str) -> None:
    make_node, make_pod = builders
    s = Scheduler(seed=1)
    s.add_node(make_node("b-1", "b", "2"))
    s.update_node(make_node("b-1", "b", "3"))
    s.add_pod(make_pod("web", {"zone": "b"}, "3", None))
    assert [(r.pod, r.outcome, r.node) for r in s.run()] == [("default/web", "Scheduled", "b-1")]


@pytest.mark.parametrize(("builders", "client"), CLIENTS)
def test_cluster_from_documents_takes_client_objects(builders: Builders, client: str) -> None:
    make_node, make_pod = builders
    c = cluster_from_documents([make_node(*a) for a in NODES] + [make_pod(*a) for a in PODS], strict=True)
    ref = cluster_from_documents([node_dict(*a) for a in NODES] + [pod_dict(*a) for a in PODS])
    assert c.nodes == ref.nodes and c.pods == ref.pods
    assert not list(c.warnings)


@pytest.mark.parametrize(("builders", "client"), CLIENTS)
def test_simulator_and_testing_builders_take_client_objects(builders: Builders, client: str) -> None:
    make_node, make_pod = builders
    sim = Simulator(seed=1)
    for a in NODES:
        sim.add_node(make_node(*a))
    assert sim.best_node_for_pod(make_pod("web", {"zone": "b"}, "1", None)).node == "b-1"
    assert sim.check_pod_on_node(make_pod("web", {"zone": "b"}, "1", None), "a-1") is not None
    out = sim.schedule_pods([make_pod("web", {"zone": "b"}, "1", None)])
    assert out.placements == {"default/web": "b-1"}
    snap = make_snapshot([make_node(*a) for a in NODES], [make_pod(*PODS[0])])
    assert [pi.pod.name for pi in snap.get("a-1").pods] == ["running"]


def test_kubernetes_list_objects_are_read_as_their_items() -> None:
    """What ``list_node()`` / ``list_pod_for_all_namespaces()`` return: items without kind or apiVersion."""
    nodes = k8s.V1NodeList(items=[k8s_node(*a) for a in NODES])
    pods = k8s.V1PodList(items=[k8s_pod(*a) for a in PODS])
    c = cluster_from_documents([nodes, pods])
    assert [n.name for n in c.nodes] == ["a-1", "b-1"]
    assert [p.name for p in c.pods] == ["running", "web", "big"]
    s = Scheduler(seed=1)
    s.load(nodes, pods)
    assert sorted(r.pod for r in s.run()) == ["default/big", "default/web"]


def test_kubernetes_dra_model_keeps_its_api_version() -> None:
    """A v1beta1 ResourceSlice model carries no apiVersion; its fields are read as v1beta1 (``basic``)."""
    sl = k8s.V1beta1ResourceSlice(
        metadata=k8s.V1ObjectMeta(name="s"),
        spec=k8s.V1beta1ResourceSliceSpec(driver="gpu.example.com", node_name="a-1",
                                          pool=k8s.V1beta1ResourcePool(name="p", generation=1, resource_slice_count=1),
                                          devices=[k8s.V1beta1Device(name="gpu-0", basic=k8s.V1beta1BasicDevice())]))
    m = as_manifest(sl)
    assert (m["kind"], m["apiVersion"]) == ("ResourceSlice", "resource.k8s.io/v1beta1")
    c = cluster_from_documents([sl], strict=True)
    assert [o.kind for o in c.objects] == ["ResourceSlice"]


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02T03:04:05Z", id="utc"),
    pytest.param(datetime(2024, 1, 2, 3, 4, 5, 120000, tzinfo=UTC), "2024-01-02T03:04:05.120000Z", id="fraction"),
    pytest.param(datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05Z", id="naive-is-utc"),
])
def test_kubernetes_datetimes_become_rfc3339(value: datetime, expected: str) -> None:
    m = as_manifest(k8s.V1Pod(metadata=k8s.V1ObjectMeta(name="x", creation_timestamp=value)))
    assert m["metadata"]["creationTimestamp"] == expected


@pytest.mark.parametrize("value", [
    pytest.param(42, id="int"),
    pytest.param(["not", "a", "pod"], id="list"),
    pytest.param(object(), id="object"),
    pytest.param(k8s.V1ObjectMeta, id="a-model-class-not-an-instance"),
])
def test_anything_else_is_a_type_error_naming_the_accepted_types(value: Any) -> None:
    with pytest.raises(TypeError) as ei:
        Pod.from_dict(value)
    assert isinstance(ei.value, UnsupportedObjectError) and isinstance(ei.value, ManifestError)
    assert ACCEPTED in str(ei.value)


def test_a_bad_object_in_load_adds_nothing() -> None:
    s = Scheduler(seed=1)
    with pytest.raises(TypeError, match="Pod: expected a mapping"):
        s.load([node_dict(*NODES[0])], [pod_dict(*PODS[1]), 42])
    assert s.cache.nodes() == [] and s.cache.pod_count() == 0
    assert not s.results


def test_kube_object_takes_client_objects() -> None:
    ns = k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="team", labels={"a": "b"}))
    o = KubeObject.from_dict(ns)
    assert (o.kind, o.name, dict(o.labels)) == ("Namespace", "team", {"a": "b"})


def test_reading_dicts_imports_no_client() -> None:
    code = ("import sys; from scheduling_framework.api import Pod; from scheduling_framework import Scheduler; "
            "Pod.from_dict({'metadata': {'name': 'x'}}); "
            "s = Scheduler(); s.load([], [{'kind': 'Pod', 'metadata': {'name': 'x'}}]); "
            "print(sorted(m for m in ('kubernetes', 'lightkube', 'kr8s') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
