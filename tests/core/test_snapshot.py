"""Snapshot, node-tree order, image states and ObjectStore (scheduling_framework.state.snapshot).

Node order follows upstream's node tree (pkg/scheduler/backend/cache/node_tree.go): zones in first-seen
order, one node from each in turn. The zone keys and the round-robin expectation come from
node_tree_test.go (TestNodeTree_AddNode, TestNodeTree_Next); image states follow snapshot.go
createImageExistenceMap.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_framework.api import KubeObject, Node, Pod
from scheduling_framework.errors import SchedulingFrameworkError, SnapshotError
from scheduling_framework.state.node_info import ImageStateSummary, Resource
from scheduling_framework.state.snapshot import (
    ObjectStore,
    Snapshot,
    node_tree_order,
    normalized_image_name,
    set_image_states,
    zone_key,
)

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def node(name: str, labels: dict[str, str] | None = None, images: list[dict[str, Any]] | None = None,
         allocatable: dict[str, str] | None = None) -> Node:
    status: dict[str, Any] = {}
    if images is not None:
        status["images"] = images
    if allocatable is not None:
        status["allocatable"] = allocatable
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
                           "status": status})


def pod(name: str, node_name: str = "", *, namespace: str = "default", cpu: str = "",
        pvcs: tuple[str, ...] = (), affinity: dict[str, Any] | None = None) -> Pod:
    c: dict[str, Any] = {"name": "c"}
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"containers": [c]}
    if node_name:
        spec["nodeName"] = node_name
    if pvcs:
        spec["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": n}} for i, n in enumerate(pvcs)]
    if affinity:
        spec["affinity"] = affinity
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                          "spec": spec})


def all_nodes(region_label: str = REGION, zone_label: str = ZONE) -> list[Node]:
    """upstream node_tree_test.go allNodes[:9]."""
    return [
        node("node-0"),
        node("node-1", {region_label: "region-1"}),
        node("node-2", {zone_label: "zone-2"}),
        node("node-3", {region_label: "region-1", zone_label: "zone-2"}),
        node("node-4", {region_label: "region-1", zone_label: "zone-2"}),
        node("node-5", {region_label: "region-1", zone_label: "zone-3"}),
        node("node-6", {region_label: "region-2", zone_label: "zone-2"}),
        node("node-7", {region_label: "region-2", zone_label: "zone-2"}),
        node("node-8", {region_label: "region-2", zone_label: "zone-2"}),
    ]


# --- zone keys and node-tree order ---------------------------------------------------------------------------

@pytest.mark.parametrize("labels", [(REGION, ZONE), (BETA_REGION, BETA_ZONE)], ids=["ga-labels", "beta-labels"])
def test_zone_keys_match_upstream_tree(labels: tuple[str, str]) -> None:
    nodes = all_nodes(*labels)
    assert [zone_key(n) for n in nodes[:7]] == [
        "", "region-1:\x00:", ":\x00:zone-2", "region-1:\x00:zone-2", "region-1:\x00:zone-2",
        "region-1:\x00:zone-3", "region-2:\x00:zone-2"]


def test_zone_key_prefers_ga_labels_over_beta() -> None:
    n9 = node("node-9", {REGION: "region-2", ZONE: "zone-2", BETA_REGION: "region-x", BETA_ZONE: "zone-x"})
    n10 = node("node-10", {BETA_REGION: "region-2", BETA_ZONE: "zone-3"})
    assert zone_key(n9) == "region-2:\x00:zone-2"
    assert zone_key(n10) == "region-2:\x00:zone-3"


@pytest.mark.parametrize(("count", "expected"), [
    pytest.param(1, ["node-0"], id="should go back to the first node after finishing a round"),
    pytest.param(4, ["node-0", "node-1", "node-2", "node-3"],
                 id="should go back to the first node after going over all nodes"),
    pytest.param(9, ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7", "node-8"],
                 id="should go to all zones before going to the second nodes in the same zone"),
])
def test_node_tree_order(count: int, expected: list[str]) -> None:
    assert node_tree_order(all_nodes()[:count]) == expected


def test_node_tree_order_single_zone_keeps_input_order() -> None:
    nodes = [node(f"n{i}", {ZONE: "a"}) for i in (3, 1, 2)]
    assert node_tree_order(nodes) == ["n3", "n1", "n2"]
    assert node_tree_order([]) == []


def test_node_tree_order_exhausted_zone_is_skipped() -> None:
    nodes = [node("a1", {ZONE: "a"}), node("b1", {ZONE: "b"}), node("a2", {ZONE: "a"}), node("a3", {ZONE: "a"}),
             node("c1", {ZONE: "c"})]
    assert node_tree_order(nodes) == ["a1", "b1", "c1", "a2", "a3"]


@given(st.lists(st.sampled_from(["", "a", "b", "c"]), max_size=12))
def test_node_tree_order_is_a_permutation_preserving_per_zone_order(zones: list[str]) -> None:
    nodes = [node(f"n{i}", {ZONE: z} if z else {}) for i, z in enumerate(zones)]
    order = node_tree_order(nodes)
    assert sorted(order) == sorted(n.name for n in nodes)
    for z in set(zones):
        in_zone = [n.name for n in nodes if (n.labels.get(ZONE) or "") == z]
        assert [name for name in order if name in in_zone] == in_zone


# --- Snapshot.from_objects -------------------------------------------------------------------------------------

def test_from_objects_places_bound_pods_and_ignores_pending() -> None:
    nodes = [node("n1", allocatable={"cpu": "4"}), node("n2", allocatable={"cpu": "2"})]
    pods = [pod("a", "n1", cpu="1"), pod("b", "n1", cpu="500m"), pod("c", "n2"), pod("pending", cpu="3")]
    snap = Snapshot.from_objects(nodes, pods)
    assert [ni.name for ni in snap.list()] == ["n1", "n2"]
    assert len(snap) == snap.num_nodes() == 2
    assert [ni.name for ni in snap] == ["n1", "n2"]
    n1 = snap.get("n1")
    assert [p.pod.name for p in n1.pods] == ["a", "b"]
    assert n1.requested == Resource(1500) and n1.allocatable == Resource(4000)
    assert [p.pod.name for p in snap.get("n2").pods] == ["c"]
    assert sorted(p.pod.name for p in snap.pod_infos()) == ["a", "b", "c"]


def test_get_unknown_node_raises() -> None:
    snap = Snapshot.from_objects([node("n1")])
    with pytest.raises(SnapshotError, match='nodeinfo not found for node name "missing"'):
        snap.get("missing")
    assert issubclass(SnapshotError, SchedulingFrameworkError)


def test_pods_on_unknown_nodes_are_kept_out_of_the_list() -> None:
    snap = Snapshot.from_objects([node("n1")], [pod("ghost", "gone", cpu="1"), pod("a", "n1")])
    assert [ni.name for ni in snap.list()] == ["n1"]
    assert "gone" in snap.node_info_map and snap.node_info_map["gone"].node is None
    with pytest.raises(SnapshotError):
        snap.get("gone")
    assert [p.pod.name for p in snap.pod_infos()] == ["a"]


def test_duplicate_node_is_an_error() -> None:
    with pytest.raises(SnapshotError, match="duplicate node 'n1'"):
        Snapshot.from_objects([node("n1"), node("n1")])


def test_snapshot_list_follows_node_tree_order() -> None:
    nodes = all_nodes()
    snap = Snapshot.from_objects(nodes)
    assert [ni.name for ni in snap.list()] == node_tree_order(nodes)


AFF = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {}}}]}}
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"a": "b"}}}]}}


def test_affinity_lists() -> None:
    snap = Snapshot.from_objects([node("n1"), node("n2"), node("n3")],
                                 [pod("a", "n1", affinity=AFF), pod("b", "n2", affinity=ANTI), pod("c", "n3")])
    assert [ni.name for ni in snap.have_pods_with_affinity_list()] == ["n1", "n2"]
    assert [ni.name for ni in snap.have_pods_with_required_anti_affinity_list()] == ["n2"]


def test_is_pvc_used_by_pods() -> None:
    snap = Snapshot.from_objects([node("n1")], [pod("a", "n1", namespace="ns", pvcs=("data",)),
                                                pod("b", namespace="ns", pvcs=("pending-claim",))])
    assert snap.is_pvc_used_by_pods("ns/data")
    assert not snap.is_pvc_used_by_pods("other/data")
    assert not snap.is_pvc_used_by_pods("ns/pending-claim")  # only pods placed on nodes count


def test_describe() -> None:
    snap = Snapshot.from_objects([node("n1")], [pod("a", "n1", cpu="1")])
    d = snap.describe()
    assert list(d) == ["n1"] and d["n1"]["pods"] == ["default/a"] and d["n1"]["requested"]["milliCPU"] == 1000


def test_empty_snapshot() -> None:
    snap = Snapshot()
    assert snap.list() == [] and len(snap) == 0 and snap.generation == 0
    assert snap.have_pods_with_affinity_list() == [] and not snap.is_pvc_used_by_pods("a/b")


# --- image states (createImageExistenceMap) -------------------------------------------------------------------

def test_image_states_count_nodes_per_name() -> None:
    nodes = [
        node("n1", images=[{"names": ["gcr.io/10:v1", "gcr.io/10@sha256:aaa"], "sizeBytes": 10 * 1024 * 1024},
                           {"names": ["gcr.io/200:v1"], "sizeBytes": 200 * 1024 * 1024}]),
        node("n2", images=[{"names": ["gcr.io/10:v1"], "sizeBytes": 10 * 1024 * 1024}]),
        node("n3"),
    ]
    snap = Snapshot.from_objects(nodes)
    assert snap.get("n1").image_states == {
        "gcr.io/10:v1": ImageStateSummary(10 * 1024 * 1024, 2),
        "gcr.io/10@sha256:aaa": ImageStateSummary(10 * 1024 * 1024, 1),
        "gcr.io/200:v1": ImageStateSummary(200 * 1024 * 1024, 1),
    }
    assert snap.get("n2").image_states == {"gcr.io/10:v1": ImageStateSummary(10 * 1024 * 1024, 2)}
    assert snap.get("n3").image_states == {}


def test_image_listed_twice_on_a_node_counts_that_node_once() -> None:
    nodes = [node("n1", images=[{"names": ["a:1"], "sizeBytes": 5}, {"names": ["a:1", "b:1"], "sizeBytes": 5}])]
    snap = Snapshot.from_objects(nodes)
    assert snap.get("n1").image_states["a:1"].num_nodes == 1


def test_set_image_states_skips_nodeless_infos() -> None:
    snap = Snapshot.from_objects([node("n1", images=[{"names": ["x:1"], "sizeBytes": 1}])], [pod("p", "ghost")])
    set_image_states(snap.node_info_map.values())
    assert snap.node_info_map["ghost"].image_states == {}
    assert snap.get("n1").image_states == {"x:1": ImageStateSummary(1, 1)}


@pytest.mark.parametrize(("name", "want"), [
    ("nginx", "nginx:latest"), ("nginx:1.25", "nginx:1.25"), ("gcr.io/a/b", "gcr.io/a/b:latest"),
    ("localhost:5000/img", "localhost:5000/img:latest"), ("localhost:5000/img:v2", "localhost:5000/img:v2"),
])
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


# --- ObjectStore ---------------------------------------------------------------------------------------------

def obj(kind: str, name: str, namespace: str | None = None, labels: dict[str, str] | None = None) -> KubeObject:
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if namespace is not None:
        meta["namespace"] = namespace
    return KubeObject.from_dict({"kind": kind, "metadata": meta})


def test_object_store() -> None:
    store = ObjectStore([obj("Namespace", "team", labels={"env": "prod"}), obj("Service", "a", "team"),
                         obj("Service", "b", "other"), obj("PodDisruptionBudget", "p")])
    assert store.kinds() == ["Namespace", "PodDisruptionBudget", "Service"]
    assert store.get("Service", "team", "a") is not None
    assert store.get("Service", "default", "a") is None
    assert sorted(o.name for o in store.list("Service")) == ["a", "b"]
    assert [o.name for o in store.list("Service", "other")] == ["b"]
    assert store.list("Nothing") == []
    assert store.get("PodDisruptionBudget", "default", "p") is not None
    assert store.namespace_labels("team") == {"env": "prod"}
    assert store.namespace_labels("unknown") is None
    store.remove("Service", "team", "a")
    store.remove("Service", "team", "a")  # removing twice is harmless
    store.remove("Nothing", "x", "y")
    assert [o.name for o in store.list("Service")] == ["b"]


def test_object_store_add_replaces_same_key() -> None:
    store = ObjectStore()
    store.add(obj("Namespace", "n", labels={"v": "1"}))
    store.add(obj("Namespace", "n", labels={"v": "2"}))
    assert len(store.list("Namespace")) == 1 and store.namespace_labels("n") == {"v": "2"}


def _pod_group(api_version: str | None, min_count: int) -> KubeObject:
    raw: dict[str, Any] = {"kind": "PodGroup", "metadata": {"name": "workers", "namespace": "default"},
                           "spec": {"minCount": min_count}}
    if api_version is not None:
        raw["apiVersion"] = api_version
    return KubeObject.from_dict(raw)


def test_object_store_keeps_one_kind_of_two_api_groups_apart() -> None:
    # Kubernetes' PodGroup and scheduler-plugins' one of the same namespace/name are two objects (#36 item 8)
    k8s, xk8s = _pod_group("scheduling.k8s.io/v1alpha2", 2), _pod_group("scheduling.x-k8s.io/v1alpha1", 4)
    store = ObjectStore([k8s, xk8s])
    assert store.list("PodGroup") == [k8s, xk8s]
    assert store.get("PodGroup", "default", "workers", group="scheduling.k8s.io") is k8s
    assert store.get("PodGroup", "default", "workers", group="scheduling.x-k8s.io") is xk8s
    assert store.get("PodGroup", "default", "workers") is k8s  # any group: the group added first
    assert store.list("PodGroup", group="scheduling.x-k8s.io") == [xk8s]
    assert dict(store.by_key("PodGroup")) == {("default", "workers"): k8s}
    newer = _pod_group("scheduling.x-k8s.io/v1beta1", 5)  # another version of one object replaces it
    store.add(newer)
    assert store.list("PodGroup") == [k8s, newer]
    store.remove("PodGroup", "default", "workers", group="scheduling.k8s.io")
    assert store.list("PodGroup") == [newer] and store.has_any("PodGroup")
    store.remove("PodGroup", "default", "workers")  # every group's
    assert store.list("PodGroup") == [] and not store.has_any("PodGroup")


def test_object_store_an_object_naming_no_api_version_answers_for_any_group() -> None:
    bare = _pod_group(None, 3)
    store = ObjectStore([bare])
    assert store.get("PodGroup", "default", "workers", group="scheduling.x-k8s.io") is bare
    assert store.list("PodGroup", group="scheduling.k8s.io") == [bare]


def test_object_store_undoes_a_change_in_its_own_api_group() -> None:
    k8s, xk8s = _pod_group("scheduling.k8s.io/v1alpha2", 2), _pod_group("scheduling.x-k8s.io/v1alpha1", 4)
    store = ObjectStore([k8s])
    undo: list[Any] = []
    store.journal = undo.append
    store.add(xk8s)
    store.remove("PodGroup", "default", "workers")
    assert store.list("PodGroup") == []
    for u in reversed(undo):
        u()
    assert store.list("PodGroup") == [k8s]
