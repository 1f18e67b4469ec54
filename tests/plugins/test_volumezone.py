"""VolumeZone driven directly over the ported upstream tables, plus the paths the tables leave out."""

from __future__ import annotations

from typing import Any

import pytest

from plugins_intree.volumezone import VolumeZone
from plugins_intree.volumezone.plugin import ERR_REASON_CONFLICT, PVTopology
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code
from tests.plugins.test_volumebinding_common import Handle, drive_case, load_cases

CASES = list(load_cases("volumezone-single-zone.yaml", "volumezone-multi-zone.yaml", "volumezone-with-binding.yaml"))
ZONE = "topology.kubernetes.io/zone"


@pytest.mark.parametrize("case", CASES)
def test_fixture_case(case: dict[str, Any]) -> None:
    drive_case(case, VolumeZone)


def _objects(*manifests: dict[str, Any]) -> ObjectStore:
    return ObjectStore(KubeObject.from_dict(m) for m in manifests)


def _pv(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels}}


def _pvc(name: str, volume: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"volumeName": volume}}


def _pod(*claims: str) -> Pod:
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}}
                                               for c in claims]}})


def _node(labels: dict[str, str]) -> NodeInfo:
    return NodeInfo(Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": labels}}))


def test_filter_computes_topology_when_pre_filter_did_not_run() -> None:
    plugin = VolumeZone(None, Handle(objects=_objects(_pv("pv", {ZONE: "a"}), _pvc("c", "pv"))))
    assert plugin.filter(CycleState(), _pod("c"), _node({ZONE: "a"})) is None
    st = plugin.filter(CycleState(), _pod("c"), _node({ZONE: "b"}))
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == [ERR_REASON_CONFLICT]


def test_malformed_zone_label_is_ignored() -> None:
    plugin = VolumeZone(None, Handle(objects=_objects(_pv("pv", {ZONE: "a____b"}), _pvc("c", "pv"))))
    _, st = plugin.pre_filter(CycleState(), _pod("c"), [])
    assert st is not None and st.code == Code.SKIP


def test_missing_pv_is_unresolvable() -> None:
    plugin = VolumeZone(None, Handle(objects=_objects(_pvc("c", "gone"))))
    _, st = plugin.pre_filter(CycleState(), _pod("c"), [])
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ['persistentvolume "gone" not found']


def test_every_bound_pv_must_match() -> None:
    plugin = VolumeZone(None, Handle(objects=_objects(_pv("pv1", {ZONE: "a"}), _pv("pv2", {ZONE: "a__b"}),
                                                      _pvc("c1", "pv1"), _pvc("c2", "pv2"))))
    state = CycleState()
    assert plugin.pre_filter(state, _pod("c1", "c2"), []) == (None, None)
    assert plugin.filter(state, _pod("c1", "c2"), _node({ZONE: "a"})) is None
    assert plugin.filter(state, _pod("c1", "c2"), _node({ZONE: "b"})) is not None


def test_topologies_read_in_upstream_label_order() -> None:
    labels = {ZONE: "z", "topology.kubernetes.io/region": "r", "failure-domain.beta.kubernetes.io/zone": "bz"}
    plugin = VolumeZone(None, Handle(objects=_objects(_pv("pv", labels), _pvc("c", "pv"))))
    topologies, st = plugin.pv_topologies(_pod("c"))
    assert st is None
    assert [t.key for t in topologies] == ["failure-domain.beta.kubernetes.io/zone", ZONE,
                                          "topology.kubernetes.io/region"]
    assert topologies[0] == PVTopology("pv", "failure-domain.beta.kubernetes.io/zone", frozenset({"bz"}))
