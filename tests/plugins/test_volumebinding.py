"""VolumeBinding driven directly over the ported upstream tables (volume_binding_test.go and binder_test.go),
plus what the fixtures cannot show: PreScore with StorageCapacityScoring off, the chosen bindings and
provisions, the capacity scorer, Reserve/Unreserve of assumed bindings, and what PreBind records in the
in-memory cluster."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
import yaml

from plugins_intree.volumebinding import VolumeBinding
from plugins_intree.volumebinding.binder import PodVolumes
from plugins_intree.volumebinding.plugin import STATE_KEY
from plugins_intree.volumebinding.scorer import StorageResource, build_scorer_function, scaled_shape
from plugins_intree.volumebinding.storage import ANN_BIND_COMPLETED, ANN_SELECTED_NODE, StorageError
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.config import load_config
from scheduling_framework.config.args import UtilizationShapePoint
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code
from tests.plugins.test_volumebinding_common import FIXTURES, Handle, build, drive_case, load_cases

FILES = ("volumebinding.yaml", "volumebinding-binder-without-provisioning.yaml",
         "volumebinding-binder-with-provisioning.yaml", "volumebinding-binder-csi-migration.yaml",
         "volumebinding-binder-capacity.yaml", "volumebinding-wffc.yaml")
CASES = list(load_cases(*FILES))
GATE_OFF = {"StorageCapacityScoring": False}


@pytest.mark.parametrize("case", CASES)
def test_fixture_case(case: dict[str, Any]) -> None:
    drive_case(case, VolumeBinding)


@functools.cache
def _doc(file: str) -> Any:
    return yaml.safe_load((FIXTURES / file).read_text())


def _case(file: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(next(c for c in _doc(file)["cases"] if c["name"] == name))


def _filtered(file: str, name: str, gates: dict[str, bool] | None = None
              ) -> tuple[VolumeBinding, Handle, CycleState, Pod]:
    case = _case(file, name)
    if gates:
        case["expect"].pop("scores", None)  # the expected scores are those of the gate on
    plugin, handle, state = drive_case(case, VolumeBinding, gates)
    return plugin, handle, state, Pod.from_dict(case["pod"])


# --------------------------------------------------------------------------- PreScore (TestVolumeBinding)

# upstream wantPreScoreStatus of the cases whose PreFilter succeeds, with the scoring gate off
PRE_SCORE_GATE_OFF = ["pod has not pvcs", "all bound", "all bound with local volumes", "unbound claims no matches",
                      "bound and unbound unsatisfied", "pv not found"]


@pytest.mark.parametrize("name", PRE_SCORE_GATE_OFF)
def test_pre_score_skips_with_capacity_scoring_off(name: str) -> None:
    plugin, handle, state, pod = _filtered("volumebinding.yaml", name, GATE_OFF)
    st = plugin.pre_score(state, pod, handle.snapshot.list())
    assert st is not None and st.code == Code.SKIP


@pytest.mark.parametrize("name", PRE_SCORE_GATE_OFF)
def test_pre_score_runs_with_capacity_scoring_on(name: str) -> None:
    # newest upstream: with the gate on PreScore never skips, and nodes without an offer score 0. We skip
    # where the column is provably all zeros (a pod without claims): totals and decisions are the same.
    plugin, handle, state, pod = _filtered("volumebinding.yaml", name)
    st = plugin.pre_score(state, pod, handle.snapshot.list())
    if pod.spec.volumes:
        assert st is None
    else:
        assert st is not None and st.code == Code.SKIP
    for ni in handle.snapshot.list():
        assert plugin.score(state, pod, ni) == (0, None)


def test_scorer_off_gives_zero_and_skip() -> None:
    plugin, handle, state, pod = _filtered("volumebinding.yaml", "local volumes with close capacity are preferred",
                                           GATE_OFF)
    assert plugin.scorer is None
    st = plugin.pre_score(state, pod, handle.snapshot.list())
    assert st is not None and st.code == Code.SKIP
    assert plugin.score(state, pod, handle.snapshot.get("node-a")) == (0, None)


# --------------------------------------------------------------------------- scorer_test.go TestScore

HDD, SSD = "hdd", "ssd"


def _res(hdd: tuple[int, int], ssd: tuple[int, int] | None = None) -> dict[str, StorageResource]:
    out = {HDD: StorageResource(*hdd)}
    if ssd is not None:
        out[SSD] = StorageResource(*ssd)
    return out


DEFAULT_TEST_SHAPE = [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]
SCORE_TABLE = [
    ("default shape, single class", scaled_shape(DEFAULT_TEST_SHAPE),
     [(_res((0, 100)), 0), (_res((30, 100)), 30), (_res((50, 100)), 50), (_res((100, 100)), 100)]),
    ("default shape, multiple classes", scaled_shape(DEFAULT_TEST_SHAPE),
     [(_res((0, 100), (0, 100)), 0), (_res((0, 100), (30, 100)), 15), (_res((30, 100), (30, 100)), 30),
      (_res((30, 100), (60, 100)), 45), (_res((50, 100), (50, 100)), 50), (_res((50, 100), (100, 100)), 75),
      (_res((100, 100), (100, 100)), 100)]),
    ("custom shape, multiple classes",
     scaled_shape([UtilizationShapePoint(50, 0), UtilizationShapePoint(80, 3), UtilizationShapePoint(100, 5)]),
     [(_res((0, 100), (0, 100)), 0), (_res((0, 100), (30, 100)), 0), (_res((30, 100), (30, 100)), 0),
      (_res((30, 100), (60, 100)), 5), (_res((50, 100), (100, 100)), 25), (_res((90, 100), (90, 100)), 40),
      (_res((100, 100), (100, 100)), 50)]),
]


@pytest.mark.parametrize(("name", "shape", "cases"), SCORE_TABLE, ids=[t[0] for t in SCORE_TABLE])
def test_score(name: str, shape: Any, cases: list[tuple[dict[str, StorageResource], int]]) -> None:
    f = build_scorer_function(shape)
    for resources, want in cases:
        assert f(resources) == want, resources


def test_scorer_full_or_zero_capacity_scores_as_full() -> None:
    f = build_scorer_function(scaled_shape(DEFAULT_TEST_SHAPE))
    assert f({HDD: StorageResource(200, 100)}) == 100
    assert f({HDD: StorageResource(1, 0)}) == 100
    assert f({}) == 0


# --------------------------------------------------------------------------- bindings and provisions chosen


def _offer(file: str, name: str, node: str = "node1") -> PodVolumes:
    _plugin, _handle, state, _pod = _filtered(file, name)
    s = state.read(STATE_KEY)
    assert s.pod_volumes_by_node is not None
    return s.pod_volumes_by_node[node]


@pytest.mark.parametrize(("name", "bindings"), [
    ("unbound-pvc,pv-same-node", [("unbound-pvc", "pv-node1a")]),
    ("two-unbound-pvcs", [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")]),
    ("two-unbound-pvcs,order-by-size", [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")]),
    ("one-bound,one-unbound", [("unbound-pvc", "pv-node1a")]),
    ("bound-pvc", []),
    ("immediate-bound-pvc", []),
    ("generic-ephemeral,with-pvc", []),
])
def test_expected_bindings(name: str, bindings: list[tuple[str, str]]) -> None:
    for variant in ("no CSIDriver", "CSIDriver with capacity tracking", "CSIDriver without capacity tracking"):
        pv = _offer("volumebinding-binder-without-provisioning.yaml", f"{variant}/{name}")
        assert [(b.pvc.name, b.pv.name) for b in pv.static_bindings] == bindings
        assert pv.dynamic_provisions == []


@pytest.mark.parametrize(("name", "bindings", "provisions"), [
    ("one-provisioned", [], ["provisioned-pvc"]),
    ("two-unbound-pvcs,one-matched,one-provisioned", [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"]),
    ("one-bound,one-provisioned", [], ["provisioned-pvc"]),
    ("one-binding,one-selected-node", [], ["provisioned-pvc"]),
    ("one-immediate-bound,one-provisioned", [], ["provisioned-pvc"]),
])
def test_expected_provisions(name: str, bindings: list[tuple[str, str]], provisions: list[str]) -> None:
    for variant in ("no CSIDriver", "CSIDriver without capacity tracking"):
        pv = _offer("volumebinding-binder-with-provisioning.yaml", f"{variant}/{name}")
        assert [(b.pvc.name, b.pv.name) for b in pv.static_bindings] == bindings
        assert [p.pvc.name for p in pv.dynamic_provisions] == provisions
        assert all(p.node_capacity is None for p in pv.dynamic_provisions)


@pytest.mark.parametrize(("name", "topology"), [
    ("network-attached", {}),
    ("local-storage", {"matchLabels": {"nodeKey": "node1"}}),
    ("multiple", {"matchLabels": {"nodeKey": "node1"}}),
])
def test_capacity_that_admitted_the_provision(name: str, topology: dict[str, Any]) -> None:
    pv = _offer("volumebinding-binder-capacity.yaml", f"CSIDriver.StorageCapacity=true/{name}")
    [p] = pv.dynamic_provisions
    assert p.node_capacity is not None and p.node_capacity.raw["nodeTopology"] == topology
    pv = _offer("volumebinding-binder-capacity.yaml", f"CSIDriver.StorageCapacity=false/{name}")
    [p] = pv.dynamic_provisions
    assert p.node_capacity is None


def test_dynamic_provision_scores_by_node_capacity() -> None:
    case = _case("volumebinding-binder-capacity.yaml", "CSIDriver.StorageCapacity=true/local-storage")
    for o in case["extraObjects"]:
        if o["kind"] == "CSIStorageCapacity":
            o["capacity"] = "4Gi"
    plugin, handle, state = drive_case(case, VolumeBinding)
    pod = Pod.from_dict(case["pod"])
    assert plugin.pre_score(state, pod, handle.snapshot.list()) is None
    # 1Gi of 4Gi: utilization 25 through the default shape (0 -> 10, 100 -> 0)
    assert plugin.score(state, pod, handle.snapshot.get("node1")) == (75, None)


# --------------------------------------------------------------------------- Reserve / Unreserve


def _reserve(name: str) -> tuple[VolumeBinding, Handle, CycleState, Pod]:
    plugin, handle, state, pod = _filtered("volumebinding-binder-without-provisioning.yaml", f"no CSIDriver/{name}")
    return plugin, handle, state, pod


def test_reserve_all_bound() -> None:
    plugin, _handle, state, pod = _reserve("bound-pvc")
    assert plugin.reserve(state, pod, "node1") is None
    assert state.read(STATE_KEY).all_bound
    assert plugin.pre_bind(state, pod, "node1") is None


def test_reserve_assumes_and_unreserve_reverts() -> None:
    plugin, handle, state, pod = _reserve("two-unbound-pvcs")
    assert plugin.reserve(state, pod, "node1") is None
    s = state.read(STATE_KEY)
    assert not s.all_bound
    cache = plugin.binder.cache
    for pvc, pv in (("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")):
        assumed = cache.get_pv(pv)
        assert assumed is not None and assumed.claim_ref == ("testns", pvc, "pvc-uid")
        assert assumed.annotations.get("pv.kubernetes.io/bound-by-controller") == "yes"
        stored = handle.objects.get("PersistentVolume", "", pv)
        assert stored is not None and "claimRef" not in stored.spec, "Reserve must not write the cluster"
    # another pod's cycle now finds the PVs taken
    other = _reserve_other(plugin, handle)
    assert other is not None
    plugin.unreserve(state, pod, "node1")
    for pv in ("pv-node1a", "pv-node1b"):
        info = cache.get_pv(pv)
        assert info is not None and info.claim_ref is None


def _reserve_other(plugin: VolumeBinding, handle: Handle) -> Any:
    claim = KubeObject.from_dict({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": "other", "namespace": "testns", "uid": "other-uid"},
                                  "spec": {"storageClassName": "waitClass", "volumeMode": "Filesystem",
                                           "resources": {"requests": {"storage": "1G"}}}})
    handle.objects.add(claim)
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other", "namespace": "testns"},
                         "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "other"}}]}})
    state = CycleState()
    assert plugin.pre_filter(state, pod, handle.snapshot.list()) == (None, None)
    return plugin.filter(state, pod, handle.snapshot.get("node1"))


def test_find_assume_find_again_returns_the_assumed_pv() -> None:
    # upstream TestFindAssumeVolumes: after assuming, the claim keeps finding its (now pre-bound) PV
    plugin, handle, state, pod = _reserve("unbound-pvc,pv-same-node")
    assert plugin.reserve(state, pod, "node1") is None
    for _ in range(3):
        again = CycleState()
        assert plugin.pre_filter(again, pod, handle.snapshot.list()) == (None, None)
        assert plugin.filter(again, pod, handle.snapshot.get("node1")) is None
        offer = again.read(STATE_KEY).pod_volumes_by_node["node1"]
        assert [(b.pvc.name, b.pv.name) for b in offer.static_bindings] == [("unbound-pvc", "pv-node1a")]


def test_assume_failure_reverts_everything() -> None:
    # upstream "tmpupdate-failed": the second binding's PV is gone from the cluster
    plugin, handle, state, pod = _reserve("two-unbound-pvcs")
    handle.objects.remove("PersistentVolume", "", "pv-node1b")
    st = plugin.reserve(state, pod, "node1")
    assert st is not None and st.code == Code.ERROR
    info = plugin.binder.cache.get_pv("pv-node1a")
    assert info is not None and info.claim_ref is None


def test_assume_marks_claims_to_provision() -> None:
    plugin, _handle, state, pod = _filtered("volumebinding-binder-with-provisioning.yaml",
                                           "no CSIDriver/two-unbound-pvcs,one-matched,one-provisioned")
    assert plugin.reserve(state, pod, "node1") is None
    pvc = plugin.binder.cache.get_pvc("testns", "provisioned-pvc")
    assert pvc is not None and pvc.annotations.get(ANN_SELECTED_NODE) == "node1"
    plugin.unreserve(state, pod, "node1")
    pvc = plugin.binder.cache.get_pvc("testns", "provisioned-pvc")
    assert pvc is not None and ANN_SELECTED_NODE not in pvc.annotations


def test_pre_bind_records_bindings_in_the_cluster() -> None:
    plugin, handle, state, pod = _filtered("volumebinding-binder-with-provisioning.yaml",
                                           "no CSIDriver/two-unbound-pvcs,one-matched,one-provisioned")
    assert plugin.reserve(state, pod, "node1") is None
    assert plugin.pre_bind(state, pod, "node1") is None
    pv = handle.objects.get("PersistentVolume", "", "pv-node1a")
    assert pv is not None
    assert pv.spec["claimRef"]["name"] == "unbound-pvc" and pv.status["phase"] == "Bound"
    pvc = handle.objects.get("PersistentVolumeClaim", "testns", "unbound-pvc")
    assert pvc is not None and pvc.spec["volumeName"] == "pv-node1a" and pvc.status["phase"] == "Bound"
    assert ANN_BIND_COMPLETED in pvc.metadata.annotations
    provisioned = handle.objects.get("PersistentVolumeClaim", "testns", "provisioned-pvc")
    assert provisioned is not None and provisioned.metadata.annotations[ANN_SELECTED_NODE] == "node1"
    # the pod's claims now read as bound / provisioning on node1 in the next cycle
    again = CycleState()
    assert plugin.pre_filter(again, pod, handle.snapshot.list()) == (None, None)
    claims = again.read(STATE_KEY).pod_volume_claims
    assert [c.name for c in claims.bound_claims] == ["unbound-pvc"]
    assert [c.name for c in claims.unbound_claims_delay_binding] == ["provisioned-pvc"]


def test_pre_bind_without_offer_for_the_node_is_an_error() -> None:
    plugin, _handle, state, pod = _reserve("two-unbound-pvcs")
    state.read(STATE_KEY).all_bound = False
    st = plugin.pre_bind(state, pod, "node-x")
    assert st is not None and st.code == Code.ERROR and st.message() == 'no pod volumes found for node "node-x"'


def test_missing_state_is_an_error() -> None:
    plugin = VolumeBinding(None, Handle())
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    st = plugin.filter(CycleState(), pod, NodeInfo(node))
    assert st is not None and st.code == Code.ERROR
    assert plugin.reserve(CycleState(), pod, "n") is not None
    plugin.unreserve(CycleState(), pod, "n")  # never raises


def test_unset_binding_mode_is_an_error() -> None:
    case = _case("volumebinding-binder-with-provisioning.yaml", "no CSIDriver/one-provisioned")
    for o in case["extraObjects"]:
        if o["kind"] == "StorageClass" and o["metadata"]["name"] == "waitClassWithProvisioner":
            o["volumeBindingMode"] = None
    handle, pod = build(case)
    _, st = VolumeBinding(None, handle).pre_filter(CycleState(), pod, handle.snapshot.list())
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'VolumeBindingMode not set for StorageClass "waitClassWithProvisioner"'


def test_deleting_claim_is_unresolvable() -> None:
    case = _case("volumebinding-binder-without-provisioning.yaml", "no CSIDriver/bound-pvc")
    for o in case["extraObjects"]:
        if o["kind"] == "PersistentVolumeClaim":
            o["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    handle, pod = build(case)
    _, st = VolumeBinding(None, handle).pre_filter(CycleState(), pod, handle.snapshot.list())
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ['persistentvolumeclaim "bound-pvc" is being deleted']


def test_storage_error_type() -> None:
    assert issubclass(StorageError, Exception)


# --------------------------------------------------------------------------- whole scheduler


CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _schedule(docs: list[dict[str, Any]]) -> tuple[Scheduler, dict[str, Any]]:
    cluster = cluster_from_documents(docs)
    sched = Scheduler(load_config(CONFIG), seed=1)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    sched.run()
    return sched, {k: r.to_dict() for k, r in sched.results.items()}


def _node(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _app(name: str, claim: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "app"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}}


def _claim(name: str, cls: str, size: str = "5Gi") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}}}


def _local_pv(name: str, host: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "10Gi"}, "storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                     "local": {"path": "/mnt"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}},
            "status": {"phase": "Available"}}


LOCAL_SC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}


def test_wait_for_first_consumer_pod_lands_on_the_pv_node_and_binds() -> None:
    docs = [_node("n1", "a"), _node("n2", "a"), _node("n3", "b"), LOCAL_SC, _local_pv("pv-n3", "n3"),
            _claim("data", "local"), _app("app", "data")]
    sched, results = _schedule(docs)
    assert results["default/app"]["node"] == "n3"
    pv = sched.objects.get("PersistentVolume", "", "pv-n3")
    pvc = sched.objects.get("PersistentVolumeClaim", "default", "data")
    assert pv is not None and pv.spec["claimRef"]["name"] == "data"
    assert pvc is not None and pvc.spec["volumeName"] == "pv-n3"


def test_one_pv_serves_one_claim() -> None:
    docs = [_node("n1", "a"), _node("n2", "a"), LOCAL_SC, _local_pv("pv-n1", "n1"),
            _claim("data-1", "local"), _claim("data-2", "local"), _app("app-1", "data-1"), _app("app-2", "data-2")]
    _, results = _schedule(docs)
    placed = {k: r["node"] for k, r in results.items()}
    assert sorted(n for n in placed.values() if n) == ["n1"]
    failed = next(r for r in results.values() if r["node"] is None)
    assert "didn't find available persistent volumes to bind" in failed["message"]


def test_provisioned_claim_keeps_its_pods_on_the_selected_node() -> None:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-b"},
          "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer",
          "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                            "values": ["b"]}]}]}
    docs = [_node("n1", "a"), _node("n2", "b"), _node("n3", "b"), sc, _claim("shared", "csi-b"),
            _app("first", "shared"), _app("second", "shared")]
    sched, results = _schedule(docs)
    first = results["default/first"]["node"]
    assert first in ("n2", "n3")
    assert results["default/second"]["node"] == first
    pvc = sched.objects.get("PersistentVolumeClaim", "default", "shared")
    assert pvc is not None and pvc.metadata.annotations[ANN_SELECTED_NODE] == first


def test_pods_without_volumes_skip_volume_binding_filter() -> None:
    handle = Handle(Snapshot.from_objects([Node.from_dict(_node("n1", "a"))]), ObjectStore())
    plugin = VolumeBinding(None, handle)
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "c", "image": "x"}]}})
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, handle.snapshot.list())
    assert st is not None and st.code == Code.SKIP
    assert plugin.score(state, pod, handle.snapshot.get("n1")) == (0, None)
    assert plugin.reserve(state, pod, "n1") is None and plugin.pre_bind(state, pod, "n1") is None
