"""make_pod() / make_node() build exactly what parsing the equivalent YAML gives."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scheduling_framework import ManifestError, NodeInfo
from scheduling_framework.api import Node, Pod
from scheduling_framework.testing import (
    PAUSE_IMAGE,
    make_label_selector,
    make_node,
    make_node_selector,
    make_pod,
    make_snapshot,
    node_info,
    resource_list,
)

POD_CASES = [
    pytest.param(make_pod().name("p"), """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        """, id="name-only-defaults-namespace"),
    pytest.param(make_pod().name("p").namespace("ns").uid("u1").label("app", "web").annotation("a", "b"), """
        kind: Pod
        metadata: {name: p, namespace: ns, uid: u1, labels: {app: web}, annotations: {a: b}}
        """, id="metadata"),
    pytest.param(make_pod().name("p").req(cpu="1", memory="1Gi").req(ephemeral_storage="2Gi"), f"""
        kind: Pod
        metadata: {{name: p}}
        spec:
          containers:
            - {{name: con0, image: "{PAUSE_IMAGE}", resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}
            - {{name: con1, image: "{PAUSE_IMAGE}", resources: {{requests: {{ephemeral-storage: 2Gi}}}}}}
        """, id="req-containers"),
    pytest.param(make_pod().name("p").req({"example.com/gpu": 2}, cpu=0.5), f"""
        kind: Pod
        metadata: {{name: p}}
        spec:
          containers:
            - {{name: con0, image: "{PAUSE_IMAGE}", resources: {{requests: {{example.com/gpu: "2", cpu: "0.5"}}}}}}
        """, id="req-scalar-resource-and-numbers"),
    pytest.param(make_pod().name("p").lim(cpu="2").res(memory="1Gi"), f"""
        kind: Pod
        metadata: {{name: p}}
        spec:
          containers:
            - {{name: con0, image: "{PAUSE_IMAGE}", resources: {{limits: {{cpu: "2"}}}}}}
            - {{name: con1, image: "{PAUSE_IMAGE}", resources: {{requests: {{memory: 1Gi}}, limits: {{memory: 1Gi}}}}}}
        """, id="limits-and-res"),
    pytest.param(make_pod().name("p").init_req(cpu="3").sidecar_req(memory="1Gi").overhead(cpu="100m"), f"""
        kind: Pod
        metadata: {{name: p}}
        spec:
          overhead: {{cpu: 100m}}
          initContainers:
            - {{name: init-con0, image: "{PAUSE_IMAGE}", resources: {{requests: {{cpu: "3"}}, limits: {{cpu: "3"}}}}}}
            - name: sidecar-con1
              image: "{PAUSE_IMAGE}"
              restartPolicy: Always
              resources: {{requests: {{memory: 1Gi}}, limits: {{memory: 1Gi}}}}
        """, id="init-sidecar-overhead"),
    pytest.param(make_pod().name("p").pod_resources(requests={"cpu": "1"}, limits={"cpu": "2"}), """
        kind: Pod
        metadata: {name: p}
        spec: {resources: {requests: {cpu: "1"}, limits: {cpu: "2"}}}
        """, id="pod-level-resources"),
    pytest.param(make_pod().name("p").host_port(8080).host_port(53, protocol="UDP", host_ip="10.0.0.1"), f"""
        kind: Pod
        metadata: {{name: p}}
        spec:
          containers:
            - {{name: container, image: "{PAUSE_IMAGE}", ports: [{{containerPort: 8080, hostPort: 8080}}]}}
            - name: container
              image: "{PAUSE_IMAGE}"
              ports: [{{containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}}]
        """, id="host-ports"),
    pytest.param(make_pod().name("p").node("n1").scheduler_name("s").priority(10).priority_class_name("high")
                 .preemption_policy("Never").node_selector({"disk": "ssd"}).host_network(), """
        kind: Pod
        metadata: {name: p}
        spec:
          nodeName: n1
          schedulerName: s
          priority: 10
          priorityClassName: high
          preemptionPolicy: Never
          nodeSelector: {disk: ssd}
          hostNetwork: true
        """, id="spec-fields"),
    pytest.param(make_pod().name("p").toleration("k1").toleration("k2", "v", "NoSchedule")
                 .toleration("k3", effect="NoExecute", seconds=30).toleration(operator="Exists"), """
        kind: Pod
        metadata: {name: p}
        spec:
          tolerations:
            - {key: k1, operator: Exists}
            - {key: k2, operator: Equal, value: v, effect: NoSchedule}
            - {key: k3, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
            - {operator: Exists}
        """, id="tolerations"),
    pytest.param(make_pod().name("p").node_affinity_in("zone", ["a", "b"]).preferred_node_affinity(5, "disk", ["ssd"]),
                 """
        kind: Pod
        metadata: {name: p}
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a, b]}]}]
              preferredDuringSchedulingIgnoredDuringExecution:
                - {weight: 5, preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}
        """, id="node-affinity"),
    pytest.param(make_pod().name("p").node_affinity(make_node_selector().in_("metadata.name", ["n1"], match_fields=True)
                                                    .not_in("zone", ["c"])), """
        kind: Pod
        metadata: {name: p}
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
                  - matchExpressions: [{key: zone, operator: NotIn, values: [c]}]
        """, id="node-selector-builder"),
    pytest.param(make_pod().name("p").pod_affinity_in("app", "zone", ["db"])
                 .pod_anti_affinity_exists("app", "kubernetes.io/hostname", preferred=True, weight=7)
                 .pod_affinity("zone", {"tier": "cache"}, preferred=True), """
        kind: Pod
        metadata: {name: p}
        spec:
          affinity:
            podAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                - labelSelector: {matchExpressions: [{key: app, operator: In, values: [db]}]}
                  topologyKey: zone
              preferredDuringSchedulingIgnoredDuringExecution:
                - weight: 1
                  podAffinityTerm: {labelSelector: {matchLabels: {tier: cache}}, topologyKey: zone}
            podAntiAffinity:
              preferredDuringSchedulingIgnoredDuringExecution:
                - weight: 7
                  podAffinityTerm:
                    labelSelector: {matchExpressions: [{key: app, operator: Exists}]}
                    topologyKey: kubernetes.io/hostname
        """, id="pod-affinity"),
    pytest.param(make_pod().name("p").spread_constraint(1, "zone", selector=make_label_selector().label("app", "web"))
                 .spread_constraint(2, "host", "ScheduleAnyway", {"app": "web"}, min_domains=3,
                                    node_affinity_policy="Ignore", node_taints_policy="Honor",
                                    match_label_keys=["pod-template-hash"]), """
        kind: Pod
        metadata: {name: p}
        spec:
          topologySpreadConstraints:
            - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
               labelSelector: {matchLabels: {app: web}}}
            - {maxSkew: 2, topologyKey: host, whenUnsatisfiable: ScheduleAnyway,
               labelSelector: {matchLabels: {app: web}}, minDomains: 3, nodeAffinityPolicy: Ignore,
               nodeTaintsPolicy: Honor, matchLabelKeys: [pod-template-hash]}
        """, id="spread-constraints"),
    pytest.param(make_pod().name("p").scheduling_gates("a", "b").pvc("data")
                 .volume({"name": "tmp", "emptyDir": {}}).container("nginx:1.25"), """
        kind: Pod
        metadata: {name: p}
        spec:
          schedulingGates: [{name: a}, {name: b}]
          volumes:
            - {name: data, persistentVolumeClaim: {claimName: data}}
            - {name: tmp, emptyDir: {}}
          containers: [{name: con0, image: "nginx:1.25"}]
        """, id="gates-volumes-image"),
    pytest.param(make_pod().name("p").owner_reference("rs", "ReplicaSet", "apps/v1", uid="u")
                 .creation_timestamp("2024-05-01T10:00:00+00:00").terminating("2024-05-02T10:00:00+00:00"), """
        kind: Pod
        metadata:
          name: p
          ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, controller: true}]
          creationTimestamp: "2024-05-01T10:00:00+00:00"
          deletionTimestamp: "2024-05-02T10:00:00+00:00"
        """, id="owner-and-timestamps"),
    pytest.param(make_pod().name("p").nominated_node_name("n2").phase("Pending")
                 .condition("PodScheduled", "False", "Unschedulable").start_time("2024-05-01T10:00:00+00:00"), """
        kind: Pod
        metadata: {name: p}
        status:
          nominatedNodeName: n2
          phase: Pending
          conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]
          startTime: "2024-05-01T10:00:00+00:00"
        """, id="status"),
]

NODE_CASES = [
    pytest.param(make_node().name("n1"), """
        kind: Node
        metadata: {name: n1}
        status: {capacity: {pods: "110"}}
        """, id="default-pod-capacity"),
    pytest.param(make_node().name("n1").capacity(cpu="4", memory="8Gi", pods=32), """
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        status: {capacity: {cpu: "4", memory: 8Gi, pods: "32"}}
        """, id="capacity-allocatable-defaults-to-it"),
    pytest.param(make_node().name("n1").capacity({"nvidia.com/gpu": 2}, cpu=4, ephemeral_storage="100Gi")
                 .allocatable(cpu="3800m", pods=110), """
        kind: Node
        metadata: {name: n1}
        status:
          capacity: {nvidia.com/gpu: "2", cpu: "4", ephemeral-storage: 100Gi, pods: "110"}
          allocatable: {cpu: 3800m, pods: "110"}
        """, id="explicit-allocatable"),
    pytest.param(make_node().name("n1").uid("u").label("a", "1").labels({"b": "2"}).annotation("x", "y")
                 .zone("zone-a", region="eu").hostname_label(), """
        kind: Node
        metadata:
          name: n1
          uid: u
          labels: {a: "1", b: "2", topology.kubernetes.io/zone: zone-a, topology.kubernetes.io/region: eu,
                   kubernetes.io/hostname: n1}
          annotations: {x: y}
        status: {capacity: {pods: "110"}}
        """, id="metadata"),
    pytest.param(make_node().name("n1").taint("gpu", "true", "NoSchedule").taint("maint", effect="NoExecute")
                 .unschedulable(), """
        kind: Node
        metadata: {name: n1}
        spec:
          unschedulable: true
          taints: [{key: gpu, value: "true", effect: NoSchedule}, {key: maint, effect: NoExecute}]
        status: {capacity: {pods: "110"}}
        """, id="taints-unschedulable"),
    pytest.param(make_node().name("n1").image("nginx:1.25", 100_000_000, "docker.io/library/nginx:1.25")
                 .images({"redis:7": 50_000_000}).condition("Ready", "True"), """
        kind: Node
        metadata: {name: n1}
        status:
          capacity: {pods: "110"}
          images:
            - {names: ["nginx:1.25", "docker.io/library/nginx:1.25"], sizeBytes: 100000000}
            - {names: ["redis:7"], sizeBytes: 50000000}
          conditions: [{type: Ready, status: "True"}]
        """, id="images-conditions"),
]


def _fields(obj: Pod | Node) -> tuple[Any, ...]:
    return obj.metadata, obj.spec, obj.status


@pytest.mark.parametrize(("builder", "text"), POD_CASES)
def test_pod_builder_equals_parsed_yaml(builder: Any, text: str) -> None:
    want = Pod.from_dict(yaml.safe_load(text))
    got = builder.obj()
    assert _fields(got) == _fields(want)
    assert got == want


@pytest.mark.parametrize(("builder", "text"), NODE_CASES)
def test_node_builder_equals_parsed_yaml(builder: Any, text: str) -> None:
    want = Node.from_dict(yaml.safe_load(text))
    got = builder.obj()
    assert _fields(got) == _fields(want)
    assert got == want


@pytest.mark.parametrize(("builder", "_text"), POD_CASES + NODE_CASES)
def test_manifest_survives_a_yaml_round_trip(builder: Any, _text: str) -> None:
    manifest = builder.manifest()
    assert yaml.safe_load(yaml.safe_dump(manifest)) == manifest
    assert builder.obj().to_dict() == manifest


def test_a_differing_field_makes_objects_differ() -> None:
    assert make_pod().name("p").req(cpu="1").obj() != make_pod().name("p").req(cpu="2").obj()
    assert make_node().name("n").capacity(cpu="4").obj() != make_node().name("n").capacity(cpu="8").obj()


def test_clone_is_independent() -> None:
    base = make_pod().name("p").label("app", "web")
    variant = base.clone().label("tier", "front")
    assert dict(base.obj().labels) == {"app": "web"}
    assert dict(variant.obj().labels) == {"app": "web", "tier": "front"}


def test_node_affinity_in_replaces_the_required_selector_as_upstream() -> None:
    pod = make_pod().name("p").node_affinity_in("a", ["1"]).node_affinity_in("b", ["2"]).obj()
    assert pod.spec.affinity is not None and pod.spec.affinity.node_affinity is not None
    terms = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert terms is not None and [t.match_expressions[0].key for t in terms.node_selector_terms] == ["b"]


def test_empty_resource_maps_add_no_container() -> None:
    assert make_pod().name("p").req().lim().res().init_req().sidecar_req().manifest()["spec"] == {}


def test_resource_list_reads_underscores_as_dashes() -> None:
    assert resource_list({"a/b_c": 1}, ephemeral_storage="1Gi", hugepages_2Mi="2Mi") == {
        "a/b_c": "1", "ephemeral-storage": "1Gi", "hugepages-2Mi": "2Mi"}


@pytest.mark.parametrize("value", [True, None, [1]], ids=["bool", "none", "list"])
def test_a_quantity_must_be_a_string_or_number(value: Any) -> None:
    with pytest.raises(TypeError, match="a resource quantity must be a string or a number"):
        make_pod().req(cpu=value)


def test_invalid_manifests_fail_with_the_parser_error() -> None:
    with pytest.raises(ManifestError, match=r"metadata\.name: Required value"):
        make_pod().obj()
    with pytest.raises(ManifestError, match=r'status\.capacity\.cpu: invalid quantity "lots"'):
        make_node().name("n").capacity(cpu="lots").obj()
    with pytest.raises(ManifestError, match="whenUnsatisfiable"):
        make_pod().name("p").spread_constraint(1, "zone", "Sometimes").obj()


def test_selector_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="expected a label selector"):
        make_pod().pod_affinity("zone", 3)


def test_node_info_counts_the_pods_given() -> None:
    ni = node_info(make_node().name("n1").capacity(cpu="4", memory="8Gi"),
                   make_pod().name("a").req(cpu="1"), make_pod().name("b").req(cpu="500m", memory="1Gi"))
    assert isinstance(ni, NodeInfo)
    assert ni.name == "n1"
    assert [pi.pod.name for pi in ni.pods] == ["a", "b"]
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1500, 1024**3)
    assert (ni.allocatable.milli_cpu, ni.allocatable.allowed_pod_number) == (4000, 110)


def test_node_info_without_a_node() -> None:
    ni = node_info(None, make_pod().name("a"))
    assert ni.node is None and len(ni.pods) == 1


def test_make_snapshot_places_bound_pods_only() -> None:
    snap = make_snapshot([make_node().name("n1"), make_node().name("n2")],
                         [make_pod().name("a").node("n2"), make_pod().name("pending")])
    assert [ni.name for ni in snap.list()] == ["n1", "n2"]
    assert [pi.pod.name for pi in snap.get("n2").pods] == ["a"]
    assert snap.get("n1").pods == []


def test_objects_manifests_and_builders_are_interchangeable() -> None:
    manifest = make_node().name("n1").capacity(cpu="2").manifest()
    a = make_snapshot([manifest]).get("n1").node
    b = make_snapshot([make_node().name("n1").capacity(cpu="2").obj()]).get("n1").node
    assert a == b
    with pytest.raises(TypeError, match="Node: expected a mapping"):
        make_snapshot(["n1"])  # type: ignore[list-item]
