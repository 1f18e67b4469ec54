"""The object model: Pod / Node / KubeObject parsing, API defaulting, ``to_dict`` round trips and error paths.

Every parser error is a ManifestError whose message starts with the object (``Kind namespace/name``) and
the field path, e.g. ``Pod default/x: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"``.
TestPodPriority is ported from component-helpers/scheduling/corev1/helpers_test.go; the defaulting cases
follow pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_NodeStatus).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_framework.api import KubeObject, Namespace, Node, Pod
from scheduling_framework.api.clients import ACCEPTED
from scheduling_framework.api.meta import ObjectMeta, object_ref
from scheduling_framework.api.pod import DEFAULT_SCHEDULER_NAME, PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.errors import ManifestError, SchedulingFrameworkError, ValidationError


def pod_manifest(name: str = "x", namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def node_manifest(name: str = "n", **parts: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, **parts}


FULL_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-1",
        "namespace": "shop",
        "uid": "1234-abcd",
        "labels": {"app": "web", "tier": "front"},
        "annotations": {"note": "hello"},
        "creationTimestamp": "2024-05-01T10:00:00+00:00",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1",
                             "controller": True}],
    },
    "spec": {
        "schedulerName": "my-scheduler",
        "priority": 1000,
        "priorityClassName": "high",
        "preemptionPolicy": "Never",
        "nodeSelector": {"disk": "ssd"},
        "schedulingGates": [{"name": "wait-for-quota"}],
        "containers": [{
            "name": "app",
            "image": "nginx:1.25",
            "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
            "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "UDP", "hostIP": "10.0.0.1",
                       "name": "http"}],
        }],
        "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                            "resources": {"requests": {"cpu": "100m"}}}],
        "overhead": {"cpu": "10m"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
                        {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [{"key": "gen", "operator": "Gt",
                                                                       "values": ["3"]}]}}],
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}},
                     "matchLabelKeys": ["pod-template-hash"]}],
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": {"topologyKey": "zone", "namespaces": ["shop", "other"],
                                                       "namespaceSelector": {}}}],
            },
        },
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 2,
                                       "nodeTaintsPolicy": "Honor"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                    {"name": "tmp", "emptyDir": {}}],
        "hostNetwork": False,
    },
    "status": {"phase": "Pending", "nominatedNodeName": "node-2",
               "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
}


# --- Pod ----------------------------------------------------------------------------------------------------

def test_pod_full_manifest_parses() -> None:
    p = Pod.from_dict(copy.deepcopy(FULL_POD))
    assert (p.name, p.namespace, p.uid, p.key) == ("web-1", "shop", "1234-abcd", "shop/web-1")
    assert p.labels == {"app": "web", "tier": "front"}
    assert p.annotations == {"note": "hello"}
    assert p.metadata.creation_timestamp == datetime(2024, 5, 1, 10, tzinfo=UTC)
    owner = p.metadata.controller_ref()
    assert owner is not None and (owner.kind, owner.name, owner.uid) == ("ReplicaSet", "web", "rs-1")
    s = p.spec
    assert s.scheduler_name == "my-scheduler"
    assert (p.priority, s.priority_class_name, p.preemption_policy) == (1000, "high", PREEMPT_NEVER)
    assert s.node_selector == {"disk": "ssd"}
    assert s.scheduling_gates == ("wait-for-quota",)
    c = s.containers[0]
    assert (c.name, c.image) == ("app", "nginx:1.25")
    assert c.resources.requests == {"cpu": Quantity.parse("250m"), "memory": Quantity.parse("64Mi")}
    assert c.resources.limits["memory"] == Quantity.parse("128Mi")
    port = c.ports[0]
    assert (port.container_port, port.host_port, port.protocol, port.host_ip, port.name) == (
        80, 8080, "UDP", "10.0.0.1", "http")
    assert s.init_containers[0].is_restartable
    assert not c.is_restartable
    assert s.overhead == {"cpu": Quantity.parse("10m")}
    assert [t.to_dict() for t in s.tolerations] == FULL_POD["spec"]["tolerations"]
    assert s.affinity is not None
    na = s.affinity.node_affinity
    assert na is not None and na.required_during_scheduling_ignored_during_execution is not None
    assert na.required_during_scheduling_ignored_during_execution.matches("n", {"zone": "b"})
    assert na.preferred_during_scheduling_ignored_during_execution[0].weight == 5
    assert na.preferred_during_scheduling_ignored_during_execution[0].preference.matches("n", {"gen": "4"})
    assert s.affinity.pod_affinity is None
    anti = s.affinity.pod_anti_affinity
    assert anti is not None
    req = anti.required_during_scheduling_ignored_during_execution[0]
    assert req.topology_key == "kubernetes.io/hostname"
    assert req.label_selector is not None and req.label_selector.matches({"app": "web"})
    assert req.namespace_selector is None and req.match_label_keys == ("pod-template-hash",)
    pref = anti.preferred_during_scheduling_ignored_during_execution[0]
    assert pref.weight == 10 and pref.pod_affinity_term.namespaces == ("shop", "other")
    assert pref.pod_affinity_term.namespace_selector is not None
    assert pref.pod_affinity_term.namespace_selector.is_empty()
    tsc = s.topology_spread_constraints[0]
    assert (tsc.max_skew, tsc.topology_key, tsc.when_unsatisfiable, tsc.min_domains) == (1, "zone", "DoNotSchedule", 2)
    assert tsc.node_affinity_policy is None and tsc.node_taints_policy == "Honor"
    assert [v.claim_name for v in s.volumes] == ["data-web-1", None]
    assert s.volumes[1].source_kind == "emptyDir"
    assert p.status.phase == "Pending" and p.status.nominated_node_name == "node-2"
    assert p.status.conditions[0].reason == "Unschedulable"


def test_pod_to_dict_round_trip() -> None:
    manifest = copy.deepcopy(FULL_POD)
    p = Pod.from_dict(manifest)
    out = p.to_dict()
    assert out == FULL_POD
    assert Pod.from_dict(out) == p


def test_pod_to_dict_is_a_copy() -> None:
    manifest = copy.deepcopy(FULL_POD)
    p = Pod.from_dict(manifest)
    out = p.to_dict()
    out["spec"]["containers"][0]["name"] = "changed"
    out["metadata"]["labels"]["app"] = "changed"
    assert p.to_dict() == FULL_POD


def test_pod_defaults() -> None:
    p = Pod.from_dict({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "ports": [
        {"containerPort": 80}]}], "tolerations": [{"key": "k"}]}})
    assert p.namespace == "default"
    assert p.uid == "default/x"  # stable uid derived when the manifest has none
    assert p.spec.scheduler_name == DEFAULT_SCHEDULER_NAME
    assert p.priority == 0 and p.spec.priority is None
    assert p.preemption_policy == PREEMPT_LOWER_PRIORITY
    assert p.spec.containers[0].ports[0].protocol == "TCP"
    assert p.spec.containers[0].ports[0].host_port == 0
    assert p.spec.tolerations[0].operator == "Equal"
    assert p.spec.affinity is None and p.spec.resources is None
    assert p.status.phase == ""
    assert not p.is_terminating


def test_pod_container_requests_default_to_limits() -> None:
    p = Pod.from_dict(pod_manifest(containers=[{"name": "c", "resources": {
        "limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}],
        initContainers=[{"name": "i", "resources": {"limits": {"memory": "3Gi"}}}]))
    assert p.spec.containers[0].resources.requests == {"cpu": Quantity.parse("1"), "memory": Quantity.parse("1Gi")}
    assert p.spec.init_containers[0].resources.requests == {"memory": Quantity.parse("3Gi")}


def test_pod_host_network_ports_default_to_container_ports() -> None:
    p = Pod.from_dict(pod_manifest(hostNetwork=True,
                                   containers=[{"name": "c", "ports": [{"containerPort": 8080}]}],
                                   initContainers=[{"name": "i", "restartPolicy": "Always",
                                                    "ports": [{"containerPort": 9090}]}]))
    assert p.spec.containers[0].ports[0].host_port == 8080
    assert p.spec.init_containers[0].ports[0].host_port == 9090


def test_pod_host_network_keeps_explicit_host_port() -> None:
    p = Pod.from_dict(pod_manifest(hostNetwork=True, containers=[{"name": "c", "ports": [
        {"containerPort": 8080, "hostPort": 8080}]}]))
    assert p.spec.host_network
    assert p.spec.containers[0].ports[0].host_port == 8080


# TestPodPriority
@pytest.mark.parametrize(("spec", "want"), [
    pytest.param({"containers": [{"name": "container", "image": "image"}]}, 0,
                 id="no priority pod resolves to static default priority"),
    pytest.param({"containers": [{"name": "container", "image": "image"}], "priority": 20}, 20,
                 id="pod with priority resolves correctly"),
])
def test_pod_priority(spec: dict[str, Any], want: int) -> None:
    assert Pod.from_dict({"metadata": {"name": "p"}, "spec": spec}).priority == want


def test_pod_copies_with_one_change() -> None:
    p = Pod.from_dict(copy.deepcopy(FULL_POD))
    bound = p.with_node_name("node-1")
    assert bound.spec.node_name == "node-1" and p.spec.node_name == ""
    assert bound.to_dict()["spec"]["nodeName"] == "node-1"
    assert "nodeName" not in p.to_dict()["spec"]
    assert Pod.from_dict(bound.to_dict()) == bound

    cleared = p.with_nominated_node_name("")
    assert cleared.status.nominated_node_name == "" and "nominatedNodeName" not in cleared.to_dict()["status"]
    assert p.status.nominated_node_name == "node-2"

    ts = datetime(2024, 6, 1, tzinfo=UTC)
    gone = p.with_deletion_timestamp(ts)
    assert gone.is_terminating and not p.is_terminating
    assert Pod.from_dict(gone.to_dict()).metadata.deletion_timestamp == ts


def test_pod_equality_and_hash() -> None:
    a = Pod.from_dict(copy.deepcopy(FULL_POD))
    b = Pod.from_dict(copy.deepcopy(FULL_POD))
    assert a == b and hash(a) == hash(b)
    assert a != a.with_node_name("n")
    assert a.__eq__(object()) is NotImplemented
    assert repr(a) == "Pod(shop/web-1, node='')"


# Every parser error names the object and the field path.
POD_ERRORS = [
    pytest.param(pod_manifest(containers=[{"name": "c", "resources": {"requests": {"cpu": "1.5.3"}}}]),
                 'Pod default/x: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"',
                 id="bad-cpu-quantity"),
    pytest.param(pod_manifest(namespace="ns", containers=[{"name": "c", "ports": [{"containerPort": "http"}]}]),
                 "Pod ns/x: spec.containers[0].ports[0].containerPort: expected an integer, got 'http'",
                 id="bad-container-port"),
    pytest.param({"metadata": {"name": "x", "labels": {"a": ["b"]}}},
                 "Pod default/x: metadata.labels.a: expected a string, got list", id="bad-label-value"),
    pytest.param(pod_manifest(tolerations=[{"operator": "Exists", "tolerationSeconds": "soon"}]),
                 "Pod default/x: spec.tolerations[0].tolerationSeconds: expected an integer, got 'soon'",
                 id="bad-toleration-seconds"),
    pytest.param(pod_manifest(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "z",
                                                          "whenUnsatisfiable": "Maybe"}]),
                 'Pod default/x: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": '
                 'supported values: "DoNotSchedule", "ScheduleAnyway"', id="bad-when-unsatisfiable"),
    pytest.param(pod_manifest(affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": "heavy"}]}}),
        "Pod default/x: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
        "expected an integer, got 'heavy'", id="bad-anti-affinity-weight"),
    pytest.param(pod_manifest(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": "x"}]}}}),
        "Pod default/x: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchExpressions: expected a list, got str", id="bad-match-expressions"),
    pytest.param(pod_manifest(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "z", "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}]}}),
        "Pod default/x: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
        "labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'", id="bad-pod-affinity-selector"),
    pytest.param(pod_manifest(overhead={"cpu": "lots"}), 'Pod default/x: spec.overhead.cpu: invalid quantity "lots"',
                 id="bad-overhead"),
    pytest.param(pod_manifest(resources={"limits": {"memory": "1Q"}}),
                 'Pod default/x: spec.resources.limits.memory: invalid quantity "1Q"', id="bad-pod-level-limit"),
    pytest.param(pod_manifest(priority="high"), "Pod default/x: spec.priority: expected an integer, got 'high'",
                 id="bad-priority"),
    pytest.param(pod_manifest(initContainers=[{"name": "i"}, {"name": "j", "resources": {
        "limits": {"memory": "1Q"}}}]),
        'Pod default/x: spec.initContainers[1].resources.limits.memory: invalid quantity "1Q"', id="bad-init-limit"),
    pytest.param(pod_manifest(schedulingGates=[{"name": "ok"}, "g"]),
                 "Pod default/x: spec.schedulingGates[1]: expected an object, got str", id="bad-scheduling-gate"),
    pytest.param(pod_manifest(volumes=[{"name": "v", "persistentVolumeClaim": "pvc"}]),
                 "Pod default/x: spec.volumes[0].persistentVolumeClaim: expected an object, got str",
                 id="bad-volume-source"),
    pytest.param({"metadata": {"name": "x", "creationTimestamp": "notatime"}},
                 "Pod default/x: metadata.creationTimestamp: expected an RFC 3339 timestamp, got 'notatime'",
                 id="bad-timestamp"),
    pytest.param({"metadata": {"name": "x", "ownerReferences": [{"kind": "ReplicaSet", "controller": "yes"}]}},
                 "Pod default/x: metadata.ownerReferences[0].controller: expected a boolean, got 'yes'",
                 id="bad-owner-controller"),
    pytest.param({"metadata": {"generateName": "web-"}},
                 "Pod default/web-: metadata.name: Required value: name is required", id="generate-name-only"),
    pytest.param({"metadata": {}}, "Pod default/<unnamed>: metadata.name: Required value: name is required",
                 id="no-name"),
    pytest.param({"metadata": {"name": "x"}, "spec": "nope"}, "Pod default/x: spec: expected an object, got str",
                 id="spec-not-an-object"),
    pytest.param({"metadata": "nope"}, "Pod: metadata: expected an object, got str", id="metadata-not-an-object"),
    pytest.param({"kind": "Node", "metadata": {"name": "x"}}, 'Pod default/x: kind: expected kind "Pod", got "Node"',
                 id="wrong-kind"),
    pytest.param(["not", "a", "pod"], f"Pod: expected {ACCEPTED}; got list", id="not-a-mapping"),
    pytest.param({"metadata": {"name": "x"}, "status": {"conditions": [{"type": "Ready", "status": True}]}},
                 "Pod default/x: status.conditions[0].status: expected a string, got True", id="bad-status"),
]


@pytest.mark.parametrize(("manifest", "message"), POD_ERRORS)
def test_pod_parse_errors_name_object_and_field(manifest: Any, message: str) -> None:
    with pytest.raises(ManifestError) as ei:
        Pod.from_dict(manifest)
    assert str(ei.value) == message
    assert isinstance(ei.value, ValidationError) and isinstance(ei.value, SchedulingFrameworkError)
    assert isinstance(ei.value, ValueError)
    obj, _, rest = message.partition(": ")
    assert ei.value.obj == obj
    if ei.value.path:
        assert rest.startswith(ei.value.path + ": ")


def test_parse_error_does_not_modify_manifest() -> None:
    manifest = pod_manifest(containers=[{"name": "c", "resources": {"limits": {"cpu": "2"}}}], priority="x")
    before = copy.deepcopy(manifest)
    with pytest.raises(ManifestError):
        Pod.from_dict(manifest)
    assert manifest == before
    Pod.from_dict(pod_manifest(containers=[{"name": "c", "resources": {"limits": {"cpu": "2"}}}]))
    assert "requests" not in before["spec"]["containers"][0]["resources"]


# --- Node -----------------------------------------------------------------------------------------------------

FULL_NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"topology.kubernetes.io/zone": "a"}, "annotations": {"x": "y"}},
    "spec": {"unschedulable": True, "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                                               {"key": "flaky", "effect": "PreferNoSchedule"}]},
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"},
        "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "110", "nvidia.com/gpu": "2"},
        "images": [{"names": ["nginx:1.25", "docker.io/library/nginx@sha256:abc"], "sizeBytes": 50000000}],
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
    },
}


def test_node_full_manifest_parses() -> None:
    n = Node.from_dict(copy.deepcopy(FULL_NODE))
    assert (n.name, n.uid) == ("node-1", "node-1")
    assert n.labels == {"topology.kubernetes.io/zone": "a"} and n.annotations == {"x": "y"}
    assert n.spec.unschedulable
    assert [str(t) for t in n.spec.taints] == ["dedicated=gpu:NoSchedule", "flaky:PreferNoSchedule"]
    assert n.status.allocatable["cpu"] == Quantity.parse("7500m")
    assert n.status.capacity["cpu"] == Quantity.parse("8")
    assert n.status.images[0].names == ("nginx:1.25", "docker.io/library/nginx@sha256:abc")
    assert n.status.images[0].size_bytes == 50000000
    assert n.status.conditions[0].type == "Ready" and n.status.conditions[0].reason == "KubeletReady"
    assert n.metadata.namespace == ""
    assert repr(n) == "Node(node-1)"


def test_node_round_trip() -> None:
    n = Node.from_dict(copy.deepcopy(FULL_NODE))
    assert n.to_dict() == FULL_NODE
    assert Node.from_dict(n.to_dict()) == n
    out = n.to_dict()
    out["status"]["capacity"]["cpu"] = "1"
    assert n.to_dict() == FULL_NODE


# SetDefaults_NodeStatus: allocatable defaults to capacity only when it is absent.
@pytest.mark.parametrize(("status", "want"), [
    pytest.param({"capacity": {"cpu": "4", "memory": "8Gi"}}, {"cpu": "4", "memory": "8Gi"}, id="absent-uses-capacity"),
    pytest.param({"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}}, {"cpu": "3"}, id="present-kept"),
    pytest.param({"capacity": {"cpu": "4"}, "allocatable": {}}, {}, id="empty-present-kept"),
    pytest.param({}, {}, id="neither"),
])
def test_node_allocatable_defaults_to_capacity(status: dict[str, Any], want: dict[str, str]) -> None:
    n = Node.from_dict(node_manifest(status=status))
    assert n.status.allocatable == {k: Quantity.parse(v) for k, v in want.items()}
    assert "allocatable" not in n.to_dict()["status"] or "allocatable" in status


NODE_ERRORS = [
    pytest.param(node_manifest(spec={"taints": [{"key": "a", "effect": "Bad"}]}),
                 'Node n: spec.taints[0].effect: Unsupported value: "Bad": supported values: "NoSchedule", '
                 '"PreferNoSchedule", "NoExecute"', id="bad-taint-effect"),
    pytest.param(node_manifest(status={"capacity": {"cpu": "x"}}), 'Node n: status.capacity.cpu: invalid quantity "x"',
                 id="bad-capacity"),
    pytest.param(node_manifest(status={"allocatable": {"pods": "many"}}),
                 'Node n: status.allocatable.pods: invalid quantity "many"', id="bad-allocatable"),
    pytest.param(node_manifest(spec={"unschedulable": "maybe"}),
                 "Node n: spec.unschedulable: expected a boolean, got 'maybe'", id="bad-unschedulable"),
    pytest.param(node_manifest(status={"images": [{"names": ["a"], "sizeBytes": "big"}]}),
                 "Node n: status.images[0].sizeBytes: expected an integer, got 'big'", id="bad-image-size"),
    pytest.param(node_manifest(spec={"taints": {"key": "a"}}), "Node n: spec.taints: expected a list, got dict",
                 id="taints-not-a-list"),
    pytest.param({"metadata": {}}, "Node <unnamed>: metadata.name: Required value: name is required", id="no-name"),
    pytest.param({"kind": "Pod", "metadata": {"name": "n"}}, 'Node n: kind: expected kind "Node", got "Pod"',
                 id="wrong-kind"),
    pytest.param("node", f"Node: expected {ACCEPTED}; got str", id="not-a-mapping"),
]


@pytest.mark.parametrize(("manifest", "message"), NODE_ERRORS)
def test_node_parse_errors_name_object_and_field(manifest: Any, message: str) -> None:
    with pytest.raises(ManifestError) as ei:
        Node.from_dict(manifest)
    assert str(ei.value) == message


# --- KubeObject / ObjectMeta ---------------------------------------------------------------------------------

def test_kube_object_namespaced_and_cluster_scoped() -> None:
    svc = KubeObject.from_dict({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                                "spec": {"selector": {"app": "web"}}})
    assert (svc.kind, svc.name, svc.namespace) == ("Service", "s", "default")
    assert svc.spec == {"selector": {"app": "web"}} and svc.status == {}
    assert repr(svc) == "Service(default/s)"
    ns = Namespace.from_dict({"kind": "Namespace", "metadata": {"name": "team-a", "labels": {"env": "prod"}}})
    assert (ns.namespace, ns.labels) == ("", {"env": "prod"})
    assert repr(ns) == "Namespace(team-a)"
    pvc = KubeObject.from_dict({"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "ns"},
                                "spec": "garbage"})
    assert pvc.namespace == "ns" and pvc.spec == {}


def test_kube_object_to_dict_is_a_deep_copy() -> None:
    raw = {"kind": "PodDisruptionBudget", "metadata": {"name": "pdb"}, "spec": {"minAvailable": 1}}
    obj = KubeObject.from_dict(raw)
    out = obj.to_dict()
    assert out == raw
    out["spec"]["minAvailable"] = 5
    assert obj.to_dict()["spec"]["minAvailable"] == 1


def test_kube_object_kind_argument_overrides_missing_kind() -> None:
    obj = KubeObject.from_dict({"metadata": {"name": "sc"}}, kind="StorageClass")
    assert obj.kind == "StorageClass" and obj.namespace == ""


@pytest.mark.parametrize(("manifest", "kind", "message"), [
    pytest.param({"metadata": {"name": "s"}}, None, "object: kind: Required value: kind is required", id="no-kind"),
    pytest.param({"kind": "Service"}, None, "Service: metadata.name: Required value: name is required", id="no-name"),
    pytest.param({"kind": "Service", "metadata": {"name": "s", "labels": "x"}}, None,
                 "Service s: metadata.labels: expected an object, got str", id="bad-labels"),
    pytest.param({"kind": "Service", "metadata": {"name": "s"}}, "Endpoints",
                 'Endpoints s: kind: expected kind "Endpoints", got "Service"', id="kind-mismatch"),
    pytest.param(42, "ConfigMap", f"ConfigMap: expected {ACCEPTED}; got int", id="not-a-mapping"),
])
def test_kube_object_errors(manifest: Any, kind: str | None, message: str) -> None:
    # object_ref fills in "default" only for Pods and PVCs, so other namespaced kinds may be named with or
    # without it ("Service s" / "Service default/s"); either names the object.
    with pytest.raises(ManifestError) as ei:
        KubeObject.from_dict(manifest, kind)
    assert str(ei.value).replace(" default/", " ") == message


@pytest.mark.parametrize(("kind", "manifest", "ref"), [
    ("Pod", {"metadata": {"name": "p"}}, "Pod default/p"),
    ("Pod", {"metadata": {"name": "p", "namespace": "ns"}}, "Pod ns/p"),
    ("PersistentVolumeClaim", {"metadata": {"name": "c"}}, "PersistentVolumeClaim default/c"),
    ("Node", {"metadata": {"name": "n"}}, "Node n"),
    ("Node", {"metadata": {"generateName": "n-"}}, "Node n-"),
    ("Node", {"metadata": {}}, "Node <unnamed>"),
    ("Node", {}, "Node"),
    ("Node", "x", "Node"),
])
def test_object_ref(kind: str, manifest: Any, ref: str) -> None:
    assert object_ref(kind, manifest) == ref


def test_object_meta_controller_ref_picks_the_controller() -> None:
    meta = ObjectMeta.from_dict({"name": "x", "ownerReferences": [
        {"apiVersion": "v1", "kind": "A", "name": "a"},
        {"apiVersion": "v1", "kind": "B", "name": "b", "controller": True}]})
    ref = meta.controller_ref()
    assert ref is not None and ref.kind == "B"
    assert ObjectMeta.from_dict({"name": "x"}).controller_ref() is None


# --- properties -----------------------------------------------------------------------------------------------

names = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
label_maps = st.dictionaries(st.sampled_from(["app", "tier", "example.com/team"]), names, max_size=3)
quantities = st.sampled_from(["100m", "1", "2500m", "64Mi", "1Gi", "0", "1.5"])


@st.composite
def pod_manifests(draw: st.DrawFn) -> dict[str, Any]:
    containers = []
    for i in range(draw(st.integers(min_value=1, max_value=3))):
        c: dict[str, Any] = {"name": f"c{i}", "image": draw(st.sampled_from(["nginx", "redis:7", "busybox"]))}
        if draw(st.booleans()):
            c["resources"] = {"requests": draw(st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities,
                                                               min_size=1))}
        if draw(st.booleans()):
            c["ports"] = [{"containerPort": draw(st.integers(1, 65535)), "hostPort": draw(st.integers(0, 65535))}]
        containers.append(c)
    spec: dict[str, Any] = {"containers": containers}
    if draw(st.booleans()):
        spec["nodeSelector"] = draw(label_maps)
    if draw(st.booleans()):
        spec["priority"] = draw(st.integers(-1000, 10**9))
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": draw(names), "operator": "Exists"}]
    meta: dict[str, Any] = {"name": draw(names), "labels": draw(label_maps)}
    if draw(st.booleans()):
        meta["namespace"] = draw(names)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@settings(max_examples=60, deadline=None)
@given(pod_manifests())
def test_pod_manifest_round_trips(manifest: dict[str, Any]) -> None:
    before = copy.deepcopy(manifest)
    p = Pod.from_dict(manifest)
    assert manifest == before
    assert p.to_dict() == before
    again = Pod.from_dict(p.to_dict())
    assert again == p and again.uid == p.uid and again.key == p.key
    assert p.namespace == before["metadata"].get("namespace", "default")


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu"]), quantities),
       st.booleans())
def test_node_round_trips(capacity: dict[str, str], with_allocatable: bool) -> None:
    status: dict[str, Any] = {"capacity": capacity}
    if with_allocatable:
        status["allocatable"] = dict(capacity)
    manifest = node_manifest(status=status)
    n = Node.from_dict(copy.deepcopy(manifest))
    assert n.to_dict() == manifest
    assert n.status.allocatable == n.status.capacity
    assert Node.from_dict(n.to_dict()) == n


def _pod_with_affinity(name: str, namespace: str, affinity: Any) -> Pod:
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                          "spec": {"containers": [{"name": "c", "image": "i"}], "affinity": affinity}})


def _anti(app: str) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}


def test_replicas_share_one_parsed_affinity_and_its_terms() -> None:
    """Pods whose spec.affinity is the same data share one frozen Affinity, and per namespace one AffinityTerm
    per term; other data, or another namespace, gets its own."""
    from scheduling_framework.state.node_info import PodInfo

    a, b = _pod_with_affinity("a", "shop", _anti("web")), _pod_with_affinity("b", "shop", _anti("web"))
    c = _pod_with_affinity("c", "shop", _anti("db"))
    d = _pod_with_affinity("d", "other", _anti("web"))
    assert a.spec.affinity is b.spec.affinity is d.spec.affinity
    assert c.spec.affinity is not a.spec.affinity and c.spec.affinity != a.spec.affinity
    ta, tb, td = (PodInfo(p).required_anti_affinity_terms[0] for p in (a, b, d))
    assert ta is tb
    assert td is not ta and td.namespaces == frozenset({"other"}) and ta.namespaces == frozenset({"shop"})
    # True and 1 are different data
    e = _pod_with_affinity("e", "shop", {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"topologyKey": "k"}}]}})
    assert e.spec.affinity is not None


def test_a_shared_affinity_still_reports_each_pods_own_error() -> None:
    bad = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": "heavy", "podAffinityTerm": {"topologyKey": "k"}}]}}
    for name in ("x", "y"):
        with pytest.raises(ManifestError) as e:
            _pod_with_affinity(name, "shop", bad)
        assert f"Pod shop/{name}" in str(e.value)
        assert "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight" in str(e.value)


def test_equal_label_maps_are_one_object_bounded() -> None:
    """Replicas' equal labels share one read-only map (api/frozen.py shared_labels); a map built by hand with an
    unhashable value, or a very long one, is kept as given; the table of shared maps is bounded."""
    from scheduling_framework.api import frozen
    from scheduling_framework.api.meta import ObjectMeta

    a = Pod.from_dict({"metadata": {"name": "a", "labels": {"app": "web", "tier": "1"}}, "spec": {"containers": []}})
    b = Pod.from_dict({"metadata": {"name": "b", "labels": {"app": "web", "tier": "1"}}, "spec": {"containers": []}})
    c = Pod.from_dict({"metadata": {"name": "c", "labels": {"app": "web", "tier": "2"}}, "spec": {"containers": []}})
    assert a.metadata.labels is b.metadata.labels and a.metadata.labels is not c.metadata.labels
    assert dict(c.metadata.labels) == {"app": "web", "tier": "2"}
    with pytest.raises(TypeError):
        a.metadata.labels["app"] = "db"  # type: ignore[index]
    odd = ObjectMeta(labels={"k": ["not", "hashable"]})  # type: ignore[dict-item]
    assert odd.labels == {"k": ["not", "hashable"]}
    many = {f"k{i}": "v" for i in range(frozen.MAX_SHARED_LABEL_ENTRIES + 1)}
    assert ObjectMeta(labels=many).labels is not ObjectMeta(labels=many).labels
    for i in range(frozen.MAX_SHARED_LABELS + 10):
        frozen.shared_labels({"n": str(i)})
    assert len(frozen._SHARED_LABELS) <= frozen.MAX_SHARED_LABELS
