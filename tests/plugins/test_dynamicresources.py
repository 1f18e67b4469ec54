"""DynamicResources: plugin behaviour through the scheduler, the claim controller's part, args, CLI output."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.config import DynamicResourcesArgs, load_config
from scheduling_framework.dra.claims import generated_claim_name
from scheduling_framework.errors import ConfigError, ManifestError
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import Scheduler
from tests.plugins.dra_standin import allocator_module  # noqa: F401 - fixture

RV1 = "resource.k8s.io/v1"


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def gpu_slice(node_name: str, n: int, driver: str = "gpu.example.com") -> dict[str, Any]:
    return {"apiVersion": RV1, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": driver, "nodeName": node_name, "pool": {"name": node_name, "generation": 1,
                                                                       "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(n)]}}


DEVICE_CLASS = {"apiVersion": RV1, "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
TEMPLATE = {"apiVersion": RV1, "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def pod(name: str, claims: list[dict[str, Any]] | None = None, node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img",
                                            "resources": {"claims": [{"name": c["name"]} for c in claims or []]}}]}
    if claims:
        spec["resourceClaims"] = claims
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": spec}


def run(docs: list[dict[str, Any]], seed: int = 1) -> Scheduler:
    c = cluster_from_documents(docs)
    s = Scheduler(load_config(None), seed=seed, explain=True)
    s.load(c.nodes, c.pods, c.objects)
    s.run()
    return s


@pytest.mark.usefixtures("allocator_module")
def test_sequential_gpu_pods_see_earlier_allocations_and_skip_cpu_nodes() -> None:
    docs = [node("cpu-1"), node("gpu-1"), node("gpu-2"), DEVICE_CLASS, TEMPLATE, gpu_slice("gpu-1", 1),
            gpu_slice("gpu-2", 1)]
    docs += [pod(f"train-{i}", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]) for i in range(3)]
    s = run(docs)
    placed = {k: (r.outcome, r.node) for k, r in s.results.items()}
    nodes = sorted(n for o, n in placed.values() if o == "Scheduled")
    assert nodes == ["gpu-1", "gpu-2"]
    failed = [r for r in s.results.values() if r.outcome != "Scheduled"]
    assert len(failed) == 1
    assert failed[0].message.startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    for r in s.results.values():
        assert r.claims is not None and len(r.claims) == 1
        if r.outcome == "Scheduled":
            devices = r.claims[0]["allocation"]["devices"]
            assert devices == [{"request": "gpu", "driver": "gpu.example.com", "pool": r.node, "device": "gpu-0"}]
    # the generated claim carries the allocation and the pod in reservedFor
    claims = s.objects.list("ResourceClaim", "default")
    assert len(claims) == 3
    reserved = [c for c in claims if c.status.get("reservedFor")]
    assert len(reserved) == 2
    assert all(c.raw["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"] for c in reserved)


def test_missing_claim_waits_with_upstream_message() -> None:
    s = run([node("n1"), pod("p", [{"name": "gpu", "resourceClaimName": "nope"}])])
    r = s.results["default/p"]
    assert (r.outcome, r.plugin, r.message) == ("Unschedulable", "DynamicResources",
                                                'resourceclaim.resource.k8s.io "nope" not found')


def test_missing_template_waits_for_the_claim() -> None:
    s = run([node("n1"), pod("p", [{"name": "gpu", "resourceClaimTemplateName": "nope"}])])
    assert s.results["default/p"].message == 'pod "default/p": ResourceClaim not created yet'


def test_claim_being_deleted_and_claim_not_owned() -> None:
    deleted = {"apiVersion": RV1, "kind": "ResourceClaim",
               "metadata": {"name": "c1", "namespace": "default", "deletionTimestamp": "2024-01-01T00:00:00Z"},
               "spec": {"devices": {"requests": []}}}
    s = run([node("n1"), deleted, pod("p", [{"name": "gpu", "resourceClaimName": "c1"}])])
    assert s.results["default/p"].message == 'resourceclaim "c1" is being deleted'
    foreign = {"apiVersion": RV1, "kind": "ResourceClaim", "metadata": {"name": "p-gpu", "namespace": "default"},
               "spec": {"devices": {"requests": []}}}
    p = pod("p", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    p["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}]}
    s = run([node("n1"), foreign, p])
    assert s.results["default/p"].message == ("ResourceClaim default/p-gpu was not created for pod default/p "
                                              "(pod is not owner)")


def test_unknown_device_class_is_prefilter_unresolvable_and_warned() -> None:
    claim = {"apiVersion": RV1, "kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "tpu"}}]}}}
    docs = [node("n1"), claim, pod("p", [{"name": "x", "resourceClaimName": "c1"}])]
    c = cluster_from_documents(docs)
    assert list(c.warnings) == ['ResourceClaim default/c1: spec.devices.requests[0].exactly.deviceClassName: '
                                'DeviceClass '
                          '"tpu" is not in the cluster; pods using it stay pending']
    s = run(docs)
    r = s.results["default/p"]
    # PreFilter wrote its (empty) state before rejecting, so its PostFilter says so, as upstream's does
    assert r.message == ("0/1 nodes are available: request req-0: device class tpu does not exist. no new claims "
                         "to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
                         "scheduling..")
    assert r.filter == {"n1": {"code": "UnschedulableAndUnresolvable", "plugin": "DynamicResources",
                               "reasons": ["request req-0: device class tpu does not exist"]}}


def test_reference_warnings_slice_on_unknown_node_and_claim_in_other_namespace() -> None:
    other = {"apiVersion": RV1, "kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "team-b"},
             "spec": {"devices": {"requests": []}}}
    c = cluster_from_documents([node("n1"), gpu_slice("ghost", 1), other,
                                pod("p", [{"name": "x", "resourceClaimName": "c1"}])])
    assert list(c.warnings) == [
        'ResourceSlice ghost-gpus: spec.nodeName: node "ghost" is not in the cluster; its devices are not available '
        "to any pod",
        'Pod default/p: spec.resourceClaims[0].resourceClaimName: ResourceClaim "c1" is not in namespace "default" '
        "(it exists in namespace team-b; a pod can only use a ResourceClaim of its own namespace)",
    ]


def test_malformed_dra_object_is_refused_naming_the_field() -> None:
    bad = {"apiVersion": RV1, "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": 3}}
    with pytest.raises(ManifestError, match="ResourceSlice s"):
        cluster_from_documents([bad])


def test_generated_claim_names_follow_the_controller_and_the_seed() -> None:
    a = generated_claim_name("my-pod", "gpu", random.Random(7))
    assert a == generated_claim_name("my-pod", "gpu", random.Random(7))
    assert a.startswith("my-pod-gpu-") and len(a) == len("my-pod-gpu-") + 5
    assert all(ch in "bcdfghjklmnpqrstvwxz2456789" for ch in a[-5:])
    long = generated_claim_name("p" * 60, "claim", random.Random(1))
    assert len(long) == 62 and long.startswith("p" * 57)


def test_claim_generation_is_recorded_in_the_pod_status() -> None:
    s = run([node("n1"), DEVICE_CLASS, TEMPLATE, pod("p", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])])
    [claim] = s.objects.list("ResourceClaim", "default")
    assert claim.name.startswith("p-gpu-")
    assert claim.raw["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p",
                                                         "controller": True, "blockOwnerDeletion": True}]
    assert claim.raw["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    r = s.results["default/p"]
    assert r.claims == [{"name": claim.name, "podClaimName": "gpu", "allocation": None}]


@pytest.mark.usefixtures("allocator_module")
def test_deleted_pod_releases_its_devices() -> None:
    docs = [node("gpu-1"), DEVICE_CLASS, TEMPLATE, gpu_slice("gpu-1", 1),
            pod("a", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])]
    s = run(docs)
    assert s.results["default/a"].outcome == "Scheduled"
    bound = s.cache.get_pod("a")
    assert bound is not None
    s.delete_pod(bound)
    # the claim generated for the pod goes with it (the resourceclaim controller deletes it)
    assert s.objects.list("ResourceClaim", "default") == []
    c2 = cluster_from_documents([pod("b", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])])
    s.add_pod(c2.pods[0])
    s.run()
    assert (s.results["default/b"].outcome, s.results["default/b"].node) == ("Scheduled", "gpu-1")


@pytest.mark.parametrize(("args", "err"), [
    ({"filterTimeout": "-1s"}, 'filterTimeout: Invalid value: "-1s": must be zero or positive'),
    ({"bindingTimeout": "500ms"}, 'bindingTimeout: Invalid value: "500ms": must be at least 1 second'),
    ({"filterTimeout": 5}, "filterTimeout: Invalid value: 5: expected a duration string"),
    ({"filterTimeout": "soon"}, 'filterTimeout: Invalid value: "soon": time: invalid duration "soon"'),
    ({"other": 1}, "other"),
], ids=["negative-filter-timeout", "short-binding-timeout", "not-a-string", "not-a-duration", "unknown-field"])
def test_args_validation(args: dict[str, Any], err: str) -> None:
    with pytest.raises(ConfigError, match=err.replace("(", r"\(").replace(")", r"\)")):
        DynamicResourcesArgs.from_dict(args)


def test_args_defaults_and_config_view() -> None:
    assert DynamicResourcesArgs.from_dict({}) == DynamicResourcesArgs(10.0, 600.0)
    assert DynamicResourcesArgs.from_dict({"filterTimeout": "0s"}).to_dict() == {"filterTimeout": "0s",
                                                                                 "bindingTimeout": "10m0s"}


def test_config_view_lists_19_default_plugins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "view", "--output", "json", "--kubernetes-version", "1.35"]) == 0
    view = json.loads(capsys.readouterr().out)
    plugins = view["profiles"][0]["plugins"]
    names = {p["name"] for point in plugins.values() for p in point}
    assert len(names) == 19 and "DynamicResources" in names  # 1.36 on: NodeDeclaredFeatures makes 20
    assert [p["name"] for p in plugins["postFilter"]] == ["DynamicResources", "DefaultPreemption"]
    assert [p["name"] for p in plugins["preEnqueue"]] == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]


@pytest.mark.usefixtures("allocator_module")
def test_shared_claim_is_reserved_for_each_pod_and_released_by_the_last() -> None:
    shared = {"apiVersion": RV1, "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    ref = [{"name": "gpu", "resourceClaimName": "shared"}]
    s = run([node("gpu-1"), node("gpu-2"), DEVICE_CLASS, gpu_slice("gpu-1", 1), gpu_slice("gpu-2", 1), shared,
             pod("a", ref), pod("b", ref)])
    a, b = s.results["default/a"], s.results["default/b"]
    assert a.outcome == b.outcome == "Scheduled" and a.node == b.node  # the allocation pins the second pod
    claim = s.objects.get("ResourceClaim", "default", "shared")
    assert claim is not None
    assert [r["uid"] for r in claim.status["reservedFor"]] == ["a", "b"]
    s.delete_pod(s.cache.get_pod("a"))
    claim = s.objects.get("ResourceClaim", "default", "shared")
    assert claim is not None and claim.status.get("allocation")
    assert [r["uid"] for r in claim.status["reservedFor"]] == ["b"]
    s.delete_pod(s.cache.get_pod("b"))
    claim = s.objects.get("ResourceClaim", "default", "shared")
    assert claim is not None and "allocation" not in claim.status  # nobody holds it: deallocated, not deleted


@pytest.mark.usefixtures("allocator_module")
def test_pod_waiting_for_its_template_is_scheduled_once_the_template_arrives() -> None:
    c = cluster_from_documents([node("gpu-1"), DEVICE_CLASS, gpu_slice("gpu-1", 1),
                                pod("p", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])])
    s = Scheduler(load_config(None), seed=1)
    s.load(c.nodes, c.pods, c.objects)
    s.run()
    assert s.results["default/p"].message == 'pod "default/p": ResourceClaim not created yet'
    s.add_object(cluster_from_documents([TEMPLATE]).objects[0])
    s.run()
    r = s.results["default/p"]
    assert (r.outcome, r.node) == ("Scheduled", "gpu-1")
    assert r.claims is not None and r.claims[0]["allocation"]["devices"][0]["device"] == "gpu-0"


# --- filterTimeout (DRASchedulerFilterTimeout) ----------------------------------------------------------

class StepClock:
    """Moves one second per read: the allocator reads it every 256 search steps, so a 10 s filterTimeout
    passes after about 2,560 steps whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def grouped_docs(args: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One node with two groups of 8 devices and a claim of 4 requests x 3 devices that must all share a group:
    no solution, and the full search takes about 7,600 steps (it ends, so a missing deadline shows as the
    wrong status rather than as a hang)."""
    devices = [{"name": f"{g}-{i}", "attributes": {"group": {"string": g}}} for g in "ab" for i in range(8)]
    claim = {"apiVersion": RV1, "kind": "ResourceClaim", "metadata": {"name": "big", "namespace": "default"},
             "spec": {"devices": {
                 "requests": [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu", "count": 3}} for i in range(4)],
                 "constraints": [{"matchAttribute": "gpu.example.com/group"}]}}}
    docs = [node("w-1"), DEVICE_CLASS, claim, pod("p", [{"name": "big", "resourceClaimName": "big"}]),
            {**gpu_slice("w-1", 0), "spec": {**gpu_slice("w-1", 0)["spec"], "devices": devices}}]
    return docs


def run_grouped(monkeypatch: pytest.MonkeyPatch, release: str | None = None, gates: str | None = None,
                args: dict[str, Any] | None = None) -> Any:
    from plugins_intree.dynamicresources.plugin import DynamicResources

    monkeypatch.setattr(DynamicResources, "clock", StepClock())
    c = cluster_from_documents(grouped_docs())
    cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if args is not None:
        cfg["profiles"] = [{"schedulerName": "default-scheduler",
                            "pluginConfig": [{"name": "DynamicResources", "args": args}]}]
    s = Scheduler(cfg, seed=1, kubernetes_version=release, feature_gates=gates)
    s.load(c.nodes, c.pods, c.objects)
    s.run()
    return s.results["default/p"]


@pytest.mark.parametrize(("release", "outcome", "message"), [
    (None, "Error", 'running "DynamicResources" filter plugin: node w-1: timed out trying to allocate devices'),
    ("1.36", "Error", 'running "DynamicResources" filter plugin: node w-1: timed out trying to allocate devices'),
    ("1.35", "Unschedulable", "0/1 nodes are available: 1 timed out trying to allocate devices."),
], ids=["newest: an error naming the node", "1.36: an error naming the node", "1.35: the node unresolvable"])
def test_filter_timeout_stops_the_search(monkeypatch: pytest.MonkeyPatch, release: str | None, outcome: str,
                                         message: str) -> None:
    r = run_grouped(monkeypatch, release)
    assert r.outcome == outcome
    assert r.message.startswith(message)


@pytest.mark.parametrize(("gates", "args"), [
    ("DRASchedulerFilterTimeout=false", None),
    (None, {"filterTimeout": "0s"}),
], ids=["gate off: no deadline", "filterTimeout 0s: no deadline"])
def test_filter_timeout_off_searches_to_the_end(monkeypatch: pytest.MonkeyPatch, gates: str | None,
                                                args: dict[str, Any] | None) -> None:
    r = run_grouped(monkeypatch, gates=gates, args=args)
    assert (r.outcome, r.message.split(".")[0]) == ("Unschedulable", "0/1 nodes are available: 1 cannot allocate "
                                                                      "all claims")


def test_filter_timeout_is_forbidden_with_the_gate_off() -> None:
    with pytest.raises(ConfigError, match="filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is "
                                          "disabled"):
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                     "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "5s"}}]}]},
                    feature_gates="DRASchedulerFilterTimeout=false")


def test_filter_timeout_default_follows_the_gate() -> None:
    from scheduling_framework.features import FeatureGates

    off = FeatureGates.for_release(gates={"DRASchedulerFilterTimeout": False})
    assert DynamicResourcesArgs.decode({}, "", [], off).filter_timeout is None
    assert DynamicResourcesArgs.decode({}, "", []).filter_timeout == 10.0
