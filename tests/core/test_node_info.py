"""NodeInfo, PodInfo, Resource, HostPortInfo and AffinityTerm (scheduling_framework.state.node_info).

Ported from pkg/scheduler/framework/types_test.go: TestNewResource, TestResourceClone, TestSetMaxResource,
TestNewNodeInfo, TestNodeInfoClone, TestNodeInfoAddPod, TestNodeInfoRemovePod; and from
pkg/scheduler/util/utils_test.go: TestHostPortInfo_AddRemove, TestHostPortInfo_Check.
Upstream compares whole NodeInfo structs; here the same expectations are checked field by field on our API
(``requested``, ``non_zero_requested``, ``used_ports``, ``pvc_ref_counts``, ``pods``, ``generation``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_framework.api import Node, Pod
from scheduling_framework.api.quantity import Quantity, new_quantity, new_scaled_quantity
from scheduling_framework.api.resources import DEFAULT_MEMORY_REQUEST
from scheduling_framework.api.selectors import LabelSelector
from scheduling_framework.state.node_info import (
    AffinityTerm,
    HostPortInfo,
    NodeInfo,
    PodInfo,
    Resource,
    new_affinity_term,
    next_generation,
)

NS = "node_info_cache_test"
NODE_NAME = "test-node"


def make_pod(name: str, *, requests: dict[str, str] | None = None, ports: list[dict[str, Any]] | None = None,
             overhead: dict[str, str] | None = None, init: list[dict[str, Any]] | None = None,
             pvcs: tuple[str, ...] = (), namespace: str = NS, labels: dict[str, str] | None = None,
             affinity: dict[str, Any] | None = None, node: str = NODE_NAME) -> Pod:
    container: dict[str, Any] = {"name": "c"}
    if requests:
        container["resources"] = {"requests": requests}
    if ports:
        container["ports"] = ports
    spec: dict[str, Any] = {"containers": [container], "nodeName": node}
    if overhead:
        spec["overhead"] = overhead
    if init:
        spec["initContainers"] = init
    if pvcs:
        spec["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)]
    if affinity:
        spec["affinity"] = affinity
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": name}
    if labels:
        meta["labels"] = labels
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def port(host_port: int, host_ip: str = "127.0.0.1", protocol: str = "TCP", container_port: int = 0) -> dict[str, Any]:
    return {"containerPort": container_port or host_port, "hostPort": host_port, "hostIP": host_ip,
            "protocol": protocol}


def make_node(name: str = NODE_NAME, allocatable: dict[str, str] | None = None) -> Node:
    status: dict[str, Any] = {}
    if allocatable is not None:
        status["allocatable"] = allocatable
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status})


def ports_of(hp: HostPortInfo) -> dict[str, set[tuple[str, int]]]:
    return {ip: set(pp) for ip, pp in hp.items()}


# --- Resource -------------------------------------------------------------------------------------------

def test_new_resource_empty() -> None:
    assert Resource.from_list({}) == Resource()
    assert Resource.from_list({}).is_zero()


def test_new_resource_complex() -> None:
    r = Resource.from_list({
        "cpu": new_scaled_quantity(4, -3),
        "memory": new_quantity(2000, "BinarySI"),
        "pods": new_quantity(80, "BinarySI"),
        "ephemeral-storage": new_quantity(5000, "BinarySI"),
        "scalar.test/scalar1": new_quantity(1, "DecimalSI"),
        "hugepages-test": new_quantity(2, "BinarySI"),
    })
    assert (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number) == (4, 2000, 5000, 80)
    assert r.scalar_resources == {"scalar.test/scalar1": 1, "hugepages-test": 2}
    assert r.get("cpu") == 4 and r.get("pods") == 80 and r.get("hugepages-test") == 2 and r.get("nope") == 0


def test_new_resource_ignores_names_that_are_not_scalar() -> None:
    r = Resource.from_list({"foo": Quantity.parse("3"), "requests.example.com/x": Quantity.parse("1")})
    assert r == Resource() and r.scalar_resources == {}


@pytest.mark.parametrize("resource", [
    pytest.param(Resource(), id="case_0"),
    pytest.param(Resource(4, 2000, 5000, 80, {"scalar.test/scalar1": 1, "hugepages-test": 2}), id="case_1"),
])
def test_resource_clone(resource: Resource) -> None:
    expected = resource.as_dict()
    clone = resource.clone()
    resource.milli_cpu += 1000
    resource.scalar_resources["hugepages-test"] = 99
    assert clone.as_dict() == expected


@pytest.mark.parametrize(("resource", "rl", "expected"), [
    pytest.param(Resource(), {"cpu": new_scaled_quantity(4, -3), "memory": new_quantity(2000, "BinarySI"),
                              "ephemeral-storage": new_quantity(5000, "BinarySI")},
                 Resource(4, 2000, 5000), id="case_0"),
    pytest.param(Resource(4, 4000, 5000, scalar_resources={"scalar.test/scalar1": 1, "hugepages-test": 2}),
                 {"cpu": new_scaled_quantity(4, -3), "memory": new_quantity(2000, "BinarySI"),
                  "ephemeral-storage": new_quantity(7000, "BinarySI"),
                  "scalar.test/scalar1": new_quantity(4, "DecimalSI"), "hugepages-test": new_quantity(5, "BinarySI")},
                 Resource(4, 4000, 7000, scalar_resources={"scalar.test/scalar1": 4, "hugepages-test": 5}),
                 id="case_1"),
])
def test_set_max_resource(resource: Resource, rl: dict[str, Quantity], expected: Resource) -> None:
    resource.set_max(rl)
    assert resource.as_dict() == expected.as_dict()


def test_resource_add_and_subtract() -> None:
    r = Resource(100, 200, 300, 4, {"example.com/gpu": 1})
    r.add(Resource(10, 20, 30, 1, {"example.com/gpu": 2, "hugepages-2Mi": 5}))
    assert r.as_dict() == {"milliCPU": 110, "memory": 220, "ephemeralStorage": 330, "allowedPodNumber": 5,
                           "example.com/gpu": 3, "hugepages-2Mi": 5}
    r.add(Resource(10, 20, 30, 1, {"example.com/gpu": 2, "hugepages-2Mi": 5}), -1)
    assert r == Resource(100, 200, 300, 4, {"example.com/gpu": 1})


def test_resource_equality_ignores_zero_scalars() -> None:
    assert Resource(1, scalar_resources={"example.com/gpu": 0}) == Resource(1)
    assert Resource(1, scalar_resources={"example.com/gpu": 1}) != Resource(1)
    assert Resource(scalar_resources={"example.com/gpu": 0}).is_zero()
    assert Resource().__eq__(3) is NotImplemented


# --- NodeInfo: TestNewNodeInfo / TestNodeInfoClone ------------------------------------------------------------

def two_pods(overhead: dict[str, str] | None = None, pvc_on_first: bool = False) -> list[Pod]:
    return [
        make_pod("test-1", requests={"cpu": "100m", "memory": "500"}, ports=[port(80)], overhead=overhead,
                 pvcs=("pvc-1",) if pvc_on_first else ()),
        make_pod("test-2", requests={"cpu": "200m", "memory": "1Ki"}, ports=[port(8080)], overhead=overhead),
    ]


def test_new_node_info() -> None:
    gen = next_generation()
    ni = NodeInfo(None, two_pods())
    assert ni.generation > gen
    assert ni.node is None and ni.name == ""
    assert ni.requested == Resource(300, 1524)
    assert ni.non_zero_requested == Resource(300, 1524)
    assert ni.allocatable == Resource()
    assert ports_of(ni.used_ports) == {"127.0.0.1": {("TCP", 80), ("TCP", 8080)}}
    assert ni.image_states == {} and ni.pvc_ref_counts == {}
    assert [p.pod.name for p in ni.pods] == ["test-1", "test-2"]
    assert (ni.pods[0].requests, ni.pods[0].non0_cpu, ni.pods[0].non0_mem) == (Resource(100, 500), 100, 500)
    assert (ni.pods[1].requests, ni.pods[1].non0_cpu, ni.pods[1].non0_mem) == (Resource(200, 1024), 200, 1024)
    assert ni.pods_with_affinity == [] and ni.pods_with_required_anti_affinity == []


def test_node_info_clone() -> None:
    ni = NodeInfo(None, two_pods())
    gen = ni.generation
    clone = ni.clone()
    ni.generation += 10
    ni.used_ports.remove("127.0.0.1", "TCP", 80)
    ni.requested.milli_cpu += 1
    ni.pvc_ref_counts["x/y"] = 1
    assert clone.generation == gen
    assert ports_of(clone.used_ports) == {"127.0.0.1": {("TCP", 80), ("TCP", 8080)}}
    assert clone.requested == Resource(300, 1524)
    assert clone.pvc_ref_counts == {}
    clone.remove_pod(clone.pods[0])
    assert len(ni.pods) == 2 and ni.has_pod("test-1")


# --- TestNodeInfoAddPod -----------------------------------------------------------------------------------------

def add_pod_pods() -> list[Pod]:
    return [
        make_pod("test-1", requests={"cpu": "100m", "memory": "500"}, ports=[port(80)], overhead={"cpu": "500m"},
                 pvcs=("pvc-1",)),
        make_pod("test-2", requests={"cpu": "200m"}, ports=[port(8080)], overhead={"cpu": "500m", "memory": "500"},
                 pvcs=("pvc-1",)),
        make_pod("test-3", requests={"cpu": "200m"}, ports=[port(8080)],
                 init=[{"name": "i", "resources": {"requests": {"cpu": "500m", "memory": "200Mi"}}}],
                 overhead={"cpu": "500m", "memory": "500"}, pvcs=("pvc-2",)),
    ]


def test_node_info_add_pod() -> None:
    ni = NodeInfo(make_node())
    gen = ni.generation
    for p in add_pod_pods():
        ni.add_pod(p)
        assert ni.generation > gen
        gen = ni.generation
    assert ni.node is not None and ni.name == NODE_NAME
    assert ni.requested == Resource(2300, 209716700)  # 1500 + 200Mi from the init container
    assert ni.non_zero_requested == Resource(2300, 419431900)  # 200Mi(init) + 200Mi(default) + 1500
    assert ni.allocatable == Resource()
    assert ports_of(ni.used_ports) == {"127.0.0.1": {("TCP", 80), ("TCP", 8080)}}
    assert ni.pvc_ref_counts == {f"{NS}/pvc-1": 2, f"{NS}/pvc-2": 1}
    assert [(p.pod.name, p.requests, p.non0_cpu, p.non0_mem) for p in ni.pods] == [
        ("test-1", Resource(600, 500), 600, 500),
        ("test-2", Resource(700, 500), 700, DEFAULT_MEMORY_REQUEST + 500),
        ("test-3", Resource(1000, DEFAULT_MEMORY_REQUEST + 500), 1000, DEFAULT_MEMORY_REQUEST + 500),
    ]


def test_add_pod_accepts_pod_info_and_returns_it() -> None:
    pi = PodInfo(make_pod("p", requests={"cpu": "1"}))
    ni = NodeInfo()
    assert ni.add_pod(pi) is pi
    assert ni.get_pod("p") is pi and ni.has_pod("p") and ni.get_pod("q") is None


# --- TestNodeInfoRemovePod ---------------------------------------------------------------------------------------

def remove_pod_node_info() -> NodeInfo:
    return NodeInfo(make_node(), two_pods(overhead={"cpu": "500m", "memory": "500"}, pvc_on_first=True))


def test_node_info_remove_pod_not_present() -> None:
    ni = remove_pod_node_info()
    gen = ni.generation
    assert ni.remove_pod(make_pod("non-exist")) is False
    assert ni.generation == gen
    assert ni.requested == Resource(1300, 2524) and ni.non_zero_requested == Resource(1300, 2524)
    assert ports_of(ni.used_ports) == {"127.0.0.1": {("TCP", 80), ("TCP", 8080)}}
    assert ni.pvc_ref_counts == {f"{NS}/pvc-1": 1}
    assert [p.pod.name for p in ni.pods] == ["test-1", "test-2"]
    assert [(p.requests, p.non0_cpu, p.non0_mem) for p in ni.pods] == [
        (Resource(600, 1000), 600, 1000), (Resource(700, 1524), 700, 1524)]


def test_node_info_remove_pod() -> None:
    ni = remove_pod_node_info()
    gen = ni.generation
    assert ni.remove_pod(make_pod("test-1", requests={"cpu": "100m", "memory": "500"}, ports=[port(80)],
                                  overhead={"cpu": "500m", "memory": "500"}, pvcs=("pvc-1",))) is True
    assert ni.generation > gen
    assert ni.requested == Resource(700, 1524) and ni.non_zero_requested == Resource(700, 1524)
    assert ports_of(ni.used_ports) == {"127.0.0.1": {("TCP", 8080)}}
    assert ni.pvc_ref_counts == {}
    assert [p.pod.name for p in ni.pods] == ["test-2"]
    assert not ni.has_pod("test-1") and ni.has_pod("test-2")


def test_remove_pod_by_uid_uses_the_stored_pod_info() -> None:
    # Removal goes by uid and subtracts what was added, even if the caller's copy of the pod differs.
    ni = NodeInfo(None, [make_pod("a", requests={"cpu": "1"}), make_pod("b", requests={"cpu": "2"})])
    assert ni.remove_pod(make_pod("a", requests={"cpu": "7"}))
    assert ni.requested == Resource(2000, 0)
    ni.add_pod(make_pod("c", requests={"cpu": "3"}))
    assert ni.remove_pod(ni.get_pod("b"))  # type: ignore[arg-type]
    assert [p.pod.name for p in ni.pods] == ["c"] and ni.get_pod("c") is ni.pods[0]


def test_used_ports_include_sidecar_host_ports() -> None:
    # upstream NodeInfo.updateUsedPorts uses schedutil.GetHostPorts: containers plus restartable init containers.
    p = make_pod("sc", init=[{"name": "proxy", "restartPolicy": "Always", "ports": [port(9090)]},
                             {"name": "setup", "ports": [port(7070)]}], ports=[port(80)])
    ni = NodeInfo(make_node(), [p])
    assert ports_of(ni.used_ports) == {"127.0.0.1": {("TCP", 80), ("TCP", 9090)}}


def test_used_ports_skip_regular_init_containers_and_zero_host_ports() -> None:
    p = make_pod("p", init=[{"name": "setup", "ports": [port(7070)]}],
                 ports=[port(80), {"containerPort": 8443}])
    assert ports_of(NodeInfo(None, [p]).used_ports) == {"127.0.0.1": {("TCP", 80)}}


def test_used_ports_default_ip_and_protocol() -> None:
    p = make_pod("p", ports=[{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}, {"containerPort": 80,
                                                                                       "hostPort": 80}])
    ni = NodeInfo(None, [p])
    assert ports_of(ni.used_ports) == {"0.0.0.0": {("UDP", 53), ("TCP", 80)}}
    ni.remove_pod(p)
    assert ports_of(ni.used_ports) == {}


# --- pods with affinity ------------------------------------------------------------------------------------

AFFINITY = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 3, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "db"}}}}]}}
ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}


def test_pods_with_affinity_lists() -> None:
    plain = make_pod("plain")
    aff = make_pod("aff", affinity=AFFINITY)
    anti = make_pod("anti", affinity=ANTI_AFFINITY)
    empty_aff = make_pod("empty", affinity={"podAffinity": {}})
    node_only = make_pod("nodeaff", affinity={"nodeAffinity": {}})
    ni = NodeInfo(make_node(), [plain, aff, anti, empty_aff, node_only])
    assert [p.pod.name for p in ni.pods_with_affinity] == ["aff", "anti", "empty"]
    assert [p.pod.name for p in ni.pods_with_required_anti_affinity] == ["anti"]
    ni.remove_pod(aff)
    ni.remove_pod(anti)
    assert [p.pod.name for p in ni.pods_with_affinity] == ["empty"]
    assert ni.pods_with_required_anti_affinity == []


def test_pod_info_affinity_terms() -> None:
    pi = PodInfo(make_pod("p", namespace="team", affinity={**AFFINITY, **ANTI_AFFINITY}))
    assert pi.has_affinity and pi.has_required_anti_affinity
    assert pi.required_affinity_terms == ()
    (anti,) = pi.required_anti_affinity_terms
    assert anti.namespaces == frozenset({"team"}) and anti.topology_key == "kubernetes.io/hostname"
    (pref,) = pi.preferred_affinity_terms
    assert pref.weight == 3 and pref.term.topology_key == "zone"
    assert pi.preferred_anti_affinity_terms == ()


# --- AffinityTerm (upstream getNamespacesFromPodAffinityTerm / AffinityTerm.Matches) ----------------------------

def _term(namespaces: tuple[str, ...] = (), ns_selector: dict[str, Any] | None = None,
          selector: dict[str, Any] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": "zone", "labelSelector": selector if selector is not None else
                         {"matchLabels": {"app": "db"}}}
    if namespaces:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


@pytest.mark.parametrize(("raw", "namespaces"), [
    pytest.param(_term(), {"own"}, id="neither-namespaces-nor-selector-means-own-namespace"),
    pytest.param(_term(("a", "b")), {"a", "b"}, id="explicit-namespaces"),
    pytest.param(_term(ns_selector={}), set(), id="selector-only-no-implicit-namespace"),
    pytest.param(_term(("a",), {"matchLabels": {"env": "prod"}}), {"a"}, id="both"),
])
def test_new_affinity_term_namespaces(raw: dict[str, Any], namespaces: set[str]) -> None:
    owner = make_pod("owner", namespace="own", affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [raw]}})
    assert owner.spec.affinity is not None and owner.spec.affinity.pod_affinity is not None
    terms = owner.spec.affinity.pod_affinity.required_during_scheduling_ignored_during_execution
    t = new_affinity_term(owner, terms[0])
    assert t.namespaces == frozenset(namespaces)


@pytest.mark.parametrize(("term", "pod_ns", "pod_labels", "ns_labels", "want"), [
    pytest.param(AffinityTerm(frozenset({"a"}), LabelSelector({"app": "db"}), "zone", None), "a", {"app": "db"}, {},
                 True, id="namespace-listed-and-selector-matches"),
    pytest.param(AffinityTerm(frozenset({"a"}), LabelSelector({"app": "db"}), "zone", None), "b", {"app": "db"}, {},
                 False, id="namespace-not-listed"),
    pytest.param(AffinityTerm(frozenset({"a"}), LabelSelector({"app": "db"}), "zone", None), "a", {"app": "web"}, {},
                 False, id="selector-does-not-match"),
    pytest.param(AffinityTerm(frozenset({"a"}), None, "zone", None), "a", {"app": "db"}, {}, False,
                 id="nil-selector-matches-no-pod"),
    pytest.param(AffinityTerm(frozenset({"a"}), LabelSelector(), "zone", None), "a", {}, {}, True,
                 id="empty-selector-matches-every-pod"),
    pytest.param(AffinityTerm(frozenset(), LabelSelector({"app": "db"}), "zone", LabelSelector()), "b",
                 {"app": "db"}, {}, True, id="empty-namespace-selector-matches-every-namespace"),
    pytest.param(AffinityTerm(frozenset(), LabelSelector({"app": "db"}), "zone", LabelSelector({"env": "prod"})),
                 "b", {"app": "db"}, {"env": "prod"}, True, id="namespace-selector-matches"),
    pytest.param(AffinityTerm(frozenset(), LabelSelector({"app": "db"}), "zone", LabelSelector({"env": "prod"})),
                 "b", {"app": "db"}, {"env": "dev"}, False, id="namespace-selector-does-not-match"),
])
def test_affinity_term_matches(term: AffinityTerm, pod_ns: str, pod_labels: dict[str, str],
                               ns_labels: dict[str, str], want: bool) -> None:
    assert term.matches(make_pod("p", namespace=pod_ns, labels=pod_labels), ns_labels) is want


# --- node changes -----------------------------------------------------------------------------------------------

def test_set_and_remove_node() -> None:
    ni = NodeInfo(None, [make_pod("p", requests={"cpu": "1"})])
    gen = ni.generation
    ni.set_node(make_node(allocatable={"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "2"}))
    assert ni.generation > gen and ni.name == NODE_NAME
    assert ni.allocatable == Resource(4000, 8 << 30, 0, 110, {"example.com/gpu": 2})
    assert ni.requested == Resource(1000)
    gen = ni.generation
    ni.remove_node()
    assert ni.node is None and ni.name == "" and ni.generation > gen
    assert len(ni.pods) == 1


def test_snapshot_state_describes_aggregates() -> None:
    ni = NodeInfo(make_node(allocatable={"cpu": "2"}), [make_pod("b", ports=[port(80)], pvcs=("c",)),
                                                        make_pod("a", affinity=ANTI_AFFINITY)])
    state = ni.snapshot_state()
    assert state["node"] == NODE_NAME and state["pods"] == ["a", "b"]
    assert state["with_affinity"] == ["a"] and state["with_required_anti_affinity"] == ["a"]
    assert state["allocatable"]["milliCPU"] == 2000
    assert state["used_ports"] == {"127.0.0.1": [("TCP", 80)]}
    assert state["pvc_ref_counts"] == {f"{NS}/c": 1}
    assert repr(ni) == "NodeInfo(test-node, pods=2)"


# --- TestHostPortInfo_AddRemove / TestHostPortInfo_Check ----------------------------------------------------------

# upstream hostPortInfoParam is (protocol, ip, port); HostPortInfo.Add takes (ip, protocol, port).
NORMAL_ADDED = [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
                ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)]


@pytest.mark.parametrize(("added", "removed", "length"), [
    pytest.param([*NORMAL_ADDED, ("TCP", "0.0.0.0", 0), ("TCP", "0.0.0.0", -1)], [], 8, id="normal add case"),
    pytest.param([("", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82),
                  ("", "", 79), ("UDP", "", 80), ("", "", 81), ("", "", 82), ("", "", 0), ("", "", -1)], [], 8,
                 id="empty ip and protocol add should work"),
    pytest.param(NORMAL_ADDED, NORMAL_ADDED, 0, id="normal remove case"),
    pytest.param(NORMAL_ADDED, [("", "127.0.0.1", 79), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82),
                                ("UDP", "127.0.0.1", 80), ("", "", 79), ("", "", 81), ("", "", 82), ("UDP", "", 80)],
                 0, id="empty ip and protocol remove should work"),
])
def test_host_port_info_add_remove(added: list[tuple[str, str, int]], removed: list[tuple[str, str, int]],
                                   length: int) -> None:
    hp = HostPortInfo()
    for protocol, ip, p in added:
        hp.add(ip, protocol, p)
    for protocol, ip, p in removed:
        hp.remove(ip, protocol, p)
    assert len(hp) == length


@pytest.mark.parametrize(("added", "check", "conflict"), [
    pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 81), False, id="empty check should check 0.0.0.0 and TCP"),
    pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 80), True,
                 id="empty check should check 0.0.0.0 and TCP (conflicted)"),
    pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 0), False, id="empty port check should pass"),
    pytest.param([("TCP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), True,
                 id="0.0.0.0 should check all registered IPs"),
    pytest.param([("UDP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), False,
                 id="0.0.0.0 with different protocol should be allowed"),
    pytest.param([("TCP", "127.0.0.1", 79), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
                 ("TCP", "0.0.0.0", 80), False, id="0.0.0.0 with different port should be allowed"),
    pytest.param([("TCP", "0.0.0.0", 80)], ("TCP", "127.0.0.1", 80), True,
                 id="normal ip should check all registered 0.0.0.0"),
    pytest.param([("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
                 ("TCP", "127.0.0.1", 80), False,
                 id="normal ip with different port/protocol should be allowed (0.0.0.0)"),
    pytest.param([("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81),
                  ("TCP", "127.0.0.1", 82)], ("TCP", "127.0.0.1", 80), False,
                 id="normal ip with different port/protocol should be allowed"),
])
def test_host_port_info_check(added: list[tuple[str, str, int]], check: tuple[str, str, int], conflict: bool) -> None:
    hp = HostPortInfo()
    for protocol, ip, p in added:
        hp.add(ip, protocol, p)
    protocol, ip, p = check
    assert hp.check_conflict(ip, protocol, p) is conflict


def test_host_port_info_clone_is_independent() -> None:
    hp = HostPortInfo()
    hp.add("127.0.0.1", "TCP", 80)
    clone = hp.clone()
    hp.remove("127.0.0.1", "TCP", 80)
    hp.add("", "UDP", 53)
    assert ports_of(clone) == {"127.0.0.1": {("TCP", 80)}}
    assert clone != hp and clone == clone.clone()


# --- property: incremental aggregates equal a rebuild from the remaining pods -------------------------------------

quantity_st = st.sampled_from(["", "50m", "250m", "1", "64Mi", "1Gi", "500"])


@st.composite
def pod_st(draw: st.DrawFn, index: int) -> Pod:
    requests = {k: v for k, v in (("cpu", draw(st.sampled_from(["", "50m", "250m", "1"]))),
                                  ("memory", draw(st.sampled_from(["", "64Mi", "1Gi", "500"]))),
                                  ("example.com/gpu", draw(st.sampled_from(["", "1", "2"])))) if v}
    # Host ports are unique per pod: HostPortInfo is a set, so two pods sharing a port would alias (as upstream).
    ports = [port(10000 + index, draw(st.sampled_from(["", "127.0.0.1"])), draw(st.sampled_from(["TCP", "UDP"])))] \
        if draw(st.booleans()) else None
    init = None
    if draw(st.booleans()):
        init = [{"name": "i", "restartPolicy": draw(st.sampled_from(["Always", "Never"])),
                 "resources": {"requests": {"cpu": draw(st.sampled_from(["100m", "2"]))}}}]
    overhead = {"cpu": "10m"} if draw(st.booleans()) else None
    pvcs = tuple(draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)))
    affinity = draw(st.sampled_from([None, AFFINITY, ANTI_AFFINITY]))
    return make_pod(f"p{index}", requests=requests, ports=ports, init=init, overhead=overhead, pvcs=pvcs,
                    affinity=affinity, namespace=draw(st.sampled_from(["ns1", "ns2"])))


@st.composite
def add_remove_script(draw: st.DrawFn) -> tuple[list[Pod], list[tuple[str, int]]]:
    pods = [draw(pod_st(i)) for i in range(draw(st.integers(1, 8)))]
    ops = draw(st.lists(st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, len(pods) - 1)), max_size=25))
    return pods, ops


def _same_aggregates(a: NodeInfo, b: NodeInfo) -> None:
    assert sorted(p.pod.uid for p in a.pods) == sorted(p.pod.uid for p in b.pods)
    assert sorted(p.pod.uid for p in a.pods_with_affinity) == sorted(p.pod.uid for p in b.pods_with_affinity)
    assert sorted(p.pod.uid for p in a.pods_with_required_anti_affinity) == sorted(
        p.pod.uid for p in b.pods_with_required_anti_affinity)
    assert a.requested == b.requested
    assert a.non_zero_requested == b.non_zero_requested
    assert a.allocatable == b.allocatable
    assert a.used_ports == b.used_ports
    assert a.pvc_ref_counts == b.pvc_ref_counts
    for p in a.pods:
        assert a.get_pod(p.pod.uid) is p


@settings(max_examples=80, deadline=None)
@given(add_remove_script())
def test_add_remove_matches_rebuild(script: tuple[list[Pod], list[tuple[str, int]]]) -> None:
    pods, ops = script
    node = make_node(allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"})
    ni = NodeInfo(node)
    present: dict[str, Pod] = {}
    gen = ni.generation
    for op, i in ops:
        p = pods[i]
        if op == "add" and p.uid not in present:
            ni.add_pod(p)
            present[p.uid] = p
            assert ni.generation > gen
        elif op == "remove":
            assert ni.remove_pod(p) is (p.uid in present)
            if present.pop(p.uid, None) is not None:
                assert ni.generation > gen
        gen = ni.generation
    _same_aggregates(ni, NodeInfo(node, list(present.values())))
    _same_aggregates(ni.clone(), ni)
