"""The storage helpers the volume plugins share (plugins_intree.volumebinding.storage / csi_translation), and
the direct fixture driver the volume plugins' unit tests use (``drive_case``)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from plugins_intree.volumebinding.csi_translation import (
    BY_NAME,
    GCE_PD,
    TranslationError,
    migrated_on_node,
    plugin_for_pv,
    translate_pv,
    volume_handle,
)
from plugins_intree.volumebinding.storage import (
    IMMEDIATE,
    gate_enabled,
    label_zones_to_set,
    match_topology_selector_terms,
    pv_info,
    pvc_info,
    storage_class_binding_mode,
    with_changes,
)
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "upstream"


class Handle:
    """The parts of the framework handle the volume plugins read."""

    def __init__(self, snapshot: Snapshot | None = None, objects: ObjectStore | None = None,
                 feature_gates: dict[str, bool] | None = None) -> None:
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self.objects = objects if objects is not None else ObjectStore()
        self.feature_gates = feature_gates or {}


def load_cases(*names: str) -> Iterator[Any]:
    """pytest params, one per fixture case, with ids ``<file stem>/<case name>``."""
    for name in names:
        doc = yamlio.load((FIXTURES / name).read_text())
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{name.removesuffix('.yaml')}/{case['name']}")


def build(case: dict[str, Any], gates: dict[str, bool] | None = None) -> tuple[Handle, Pod]:
    nodes = [Node.from_dict(n) for n in case["nodes"]]
    pods = [Pod.from_dict(p) for p in case.get("pods") or []]
    objects = ObjectStore(KubeObject.from_dict(o) for o in case.get("extraObjects") or [])
    return Handle(Snapshot.from_objects(nodes, pods), objects, gates), Pod.from_dict(case["pod"])


def code_of(st: Status | None) -> str:
    return "Success" if st is None else str(st.code)


def check_status(got: Status | None, want: dict[str, Any], what: str) -> None:
    assert code_of(got) == want["code"], f"{what}: {got!r}"
    if "reasons" in want:
        assert got is not None and sorted(got.reasons) == sorted(want["reasons"]), f"{what}: {got!r}"


def drive_case(case: dict[str, Any], make_plugin: Callable[[Any, Handle], Any],
               gates: dict[str, bool] | None = None) -> tuple[Any, Handle, CycleState]:
    """Run the plugin's PreFilter, Filter (and PreScore/Score when the case expects scores) the way the
    framework does, and compare with the case's ``expect``."""
    handle, pod = build(case, gates)
    args = None
    for pc in case.get("pluginConfig") or []:
        args = pc.get("args")
    plugin = make_plugin(args, handle)
    expect = case["expect"]
    state = CycleState()
    nodes: list[NodeInfo] = handle.snapshot.list()
    pre_status: Status | None = None
    if "preFilter" in case["points"]:
        result, pre_status = plugin.pre_filter(state, pod, nodes)
        if "prefilterResult" in expect:
            want_nodes = expect["prefilterResult"]
            got_nodes = None if result is None or result.all_nodes() else sorted(result.node_names or ())
            assert got_nodes == (None if want_nodes is None else sorted(want_nodes))
    if "prefilterStatus" in expect:
        check_status(pre_status, expect["prefilterStatus"], "PreFilter")
    rejected = pre_status is not None and pre_status.code in (Code.UNSCHEDULABLE,
                                                              Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    skipped = pre_status is not None and pre_status.code == Code.SKIP
    feasible = []
    for ni in nodes:
        if rejected:
            got = pre_status
        elif skipped:
            got = None
        else:
            got = plugin.filter(state, pod, ni)
        want = expect["filter"].get(ni.name)
        if want is not None:
            check_status(got, want, f"Filter({ni.name})")
        if got is None:
            feasible.append(ni)
    if expect.get("scores") and not rejected:
        assert plugin.pre_score(state, pod, feasible) is None
        got_scores = {}
        for ni in feasible:
            score, st = plugin.score(state, pod, ni)
            assert st is None
            got_scores[ni.name] = score
        assert got_scores == expect["scores"]
    return plugin, handle, state


# --------------------------------------------------------------------------- storage helpers


def _obj(manifest: dict[str, Any]) -> KubeObject:
    return KubeObject.from_dict(manifest)


def test_binding_mode_defaults_to_immediate_and_null_means_not_set() -> None:
    base = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"}}
    assert storage_class_binding_mode(_obj(base)) == IMMEDIATE
    assert storage_class_binding_mode(_obj({**base, "volumeBindingMode": None})) is None
    assert storage_class_binding_mode(_obj({**base, "volumeBindingMode": "WaitForFirstConsumer"})) \
        == "WaitForFirstConsumer"


@pytest.mark.parametrize(("value", "want"), [
    ("us-west1-a", {"us-west1-a"}),
    ("us-west1-c__us-west1-a", {"us-west1-a", "us-west1-c"}),
    (" a __ b ", {"a", "b"}),
    ("a____b", None),
    ("", None),
], ids=["single", "multi", "trimmed", "empty element", "empty"])
def test_label_zones_to_set(value: str, want: set[str] | None) -> None:
    assert label_zones_to_set(value) == want


@pytest.mark.parametrize(("terms", "labels", "want"), [
    (None, {}, True),
    ([], {"zone": "a"}, True),
    ([{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}], {"zone": "b"}, True),
    ([{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}], {"zone": "b"}, False),
    ([{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}], {}, False),
    ([{}, {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}], {"zone": "a"}, True),
    ([{}], {"zone": "a"}, False),
    ([{"matchLabelExpressions": [{"key": "zone", "values": []}]}], {"zone": "a"}, False),
], ids=["nil", "empty list", "in", "not in", "missing label", "empty term skipped", "only empty term",
        "no values"])
def test_match_topology_selector_terms(terms: Any, labels: dict[str, str], want: bool) -> None:
    assert match_topology_selector_terms(terms, labels) is want


def test_parsed_views_are_cached_per_object() -> None:
    o = _obj({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
              "spec": {"capacity": {"storage": "1Gi"}, "storageClassName": "c",
                       "claimRef": {"namespace": "ns", "name": "claim", "uid": "u"}}})
    info = pv_info(o)
    assert info is pv_info(o)
    assert info.capacity.value() == 1 << 30
    assert info.claim_ref == ("ns", "claim", "u")
    changed = with_changes(o, {"spec": {"claimRef": None}})
    assert pv_info(changed).claim_ref is None
    assert pv_info(o).claim_ref == ("ns", "claim", "u")


def test_claim_class_prefers_the_beta_annotation() -> None:
    o = _obj({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
              "metadata": {"name": "c", "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
              "spec": {"storageClassName": "ga"}})
    assert pvc_info(o).storage_class == "beta"
    assert pvc_info(o).namespace == "default"


def test_gates_default_on_and_follow_the_handle() -> None:
    assert gate_enabled(Handle(), "StorageCapacityScoring")
    assert not gate_enabled(Handle(feature_gates={"StorageCapacityScoring": False}), "StorageCapacityScoring")
    assert not gate_enabled(Handle(), "NoSuchGate")


def test_gce_pd_translation_moves_zone_labels_to_the_csi_topology_key() -> None:
    pv = pv_info(_obj({"apiVersion": "v1", "kind": "PersistentVolume",
                       "metadata": {"name": "pv", "labels": {"failure-domain.beta.kubernetes.io/zone": "us-east-1"}},
                       "spec": {"gcePersistentDisk": {"pdName": "disk"}}}))
    plugin = plugin_for_pv(pv)
    assert plugin is not None and plugin.name == GCE_PD
    t = translate_pv(pv, plugin)
    assert (t.driver, t.handle) == ("pd.csi.storage.gke.io", "projects/UNSPECIFIED/zones/us-east-1/disks/disk")
    assert t.node_affinity_matches({"topology.gke.io/zone": "us-east-1"})
    assert not t.node_affinity_matches({"topology.gke.io/zone": "us-east-2"})
    assert not t.node_affinity_matches({"failure-domain.beta.kubernetes.io/zone": "us-east-1"})


def test_gce_pd_regional_handle_and_aws_volume_ids() -> None:
    gce = BY_NAME[GCE_PD]
    labels = {"topology.kubernetes.io/zone": "us-east1-b__us-east1-c"}
    assert volume_handle(gce, {"pdName": "d"}, labels) == "projects/UNSPECIFIED/regions/us-east1/disks/d"
    ebs = BY_NAME["kubernetes.io/aws-ebs"]
    assert volume_handle(ebs, {"volumeID": "aws://us-east-1a/vol-123"}, None) == "vol-123"
    assert volume_handle(ebs, {"volumeID": "vol-9"}, None) == "vol-9"
    with pytest.raises(TranslationError):
        volume_handle(ebs, {"volumeID": "aws://us-east-1a/bad"}, None)


def test_migration_needs_the_node_annotation_and_a_migrated_plugin() -> None:
    h = Handle()
    assert migrated_on_node(GCE_PD, frozenset({GCE_PD}), True, h)
    assert not migrated_on_node(GCE_PD, frozenset({GCE_PD}), False, h)
    assert not migrated_on_node(GCE_PD, frozenset(), True, h)
    assert not migrated_on_node("kubernetes.io/rbd", frozenset({"kubernetes.io/rbd"}), True, h)
    portworx = "kubernetes.io/portworx-volume"
    assert migrated_on_node(portworx, frozenset({portworx}), True, h)
    assert not migrated_on_node(portworx, frozenset({portworx}), True,
                                Handle(feature_gates={"CSIMigrationPortworx": False}))
