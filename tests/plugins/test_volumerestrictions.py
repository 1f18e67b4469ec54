"""VolumeRestrictions driven directly over the ported upstream tables, plus the behaviour the tables leave
out: read-only sharing, RBD monitor overlap, PreFilterExtensions and state handling."""

from __future__ import annotations

from typing import Any

import pytest

from plugins_intree.volumerestrictions import VolumeRestrictions
from plugins_intree.volumerestrictions.plugin import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    PRE_FILTER_STATE_KEY,
    is_volume_conflict,
)
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Volume
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code
from tests.plugins.test_volumebinding_common import Handle, drive_case, load_cases

CASES = list(load_cases("volumerestrictions-gce.yaml", "volumerestrictions-aws.yaml", "volumerestrictions-rbd.yaml",
                        "volumerestrictions-iscsi.yaml", "volumerestrictions-access-modes.yaml"))


@pytest.mark.parametrize("case", CASES)
def test_fixture_case(case: dict[str, Any]) -> None:
    drive_case(case, VolumeRestrictions)


def vol(kind: str, **source: Any) -> Volume:
    return Volume("v", kind, source)


@pytest.mark.parametrize(("a", "b", "conflict"), [
    (vol("gcePersistentDisk", pdName="d"), vol("gcePersistentDisk", pdName="d", readOnly=True), True),
    (vol("gcePersistentDisk", pdName="d", readOnly=True), vol("gcePersistentDisk", pdName="d", readOnly=True), False),
    (vol("awsElasticBlockStore", volumeID="v", readOnly=True),
     vol("awsElasticBlockStore", volumeID="v", readOnly=True), True),
    (vol("iscsi", iqn="q", readOnly=True), vol("iscsi", iqn="q", readOnly=True), False),
    (vol("iscsi", iqn="q"), vol("iscsi", iqn="q", readOnly=True), True),
    (vol("rbd", monitors=["a", "b"], pool="p", image="i"), vol("rbd", monitors=["b", "c"], pool="p", image="i"), True),
    (vol("rbd", monitors=["a"], pool="p", image="i"), vol("rbd", monitors=["c"], pool="p", image="i"), False),
    (vol("rbd", monitors=["a"], image="i"), vol("rbd", monitors=["a"], pool="rbd", image="i"), True),
    (vol("rbd", monitors=["a"], pool="p", image="i", readOnly=True),
     vol("rbd", monitors=["a"], pool="p", image="i", readOnly=True), False),
    (vol("gcePersistentDisk", pdName="d"), vol("awsElasticBlockStore", volumeID="d"), False),
], ids=["gce one read-only", "gce both read-only", "ebs never shared", "iscsi both read-only", "iscsi one writer",
        "rbd overlapping monitors", "rbd disjoint monitors", "rbd default pool", "rbd both read-only",
        "different kinds"])
def test_is_volume_conflict(a: Volume, b: Volume, conflict: bool) -> None:
    assert is_volume_conflict(a, b) is conflict


def _pod(name: str, claims: list[str], node: str = "") -> Pod:
    spec: dict[str, Any] = {"volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": spec})


def _rwop_setup(existing: list[Pod]) -> tuple[VolumeRestrictions, Handle]:
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    pvc = KubeObject.from_dict({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                "metadata": {"name": "rwop", "namespace": "default"},
                                "spec": {"accessModes": ["ReadWriteOncePod"]}})
    handle = Handle(Snapshot.from_objects([node], existing), ObjectStore([pvc]))
    return VolumeRestrictions(None, handle), handle


def test_pre_filter_extensions_track_read_write_once_pod_users() -> None:
    user = _pod("user", ["rwop"], "n1")
    plugin, handle = _rwop_setup([user])
    incoming = _pod("incoming", ["rwop"])
    state = CycleState()
    assert plugin.pre_filter(state, incoming, handle.snapshot.list()) == (None, None)
    ni = handle.snapshot.get("n1")
    st = plugin.filter(state, incoming, ni)
    assert st is not None and st.code == Code.UNSCHEDULABLE and st.reasons == [ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT]
    # preemption simulation: removing the user makes the node fit, adding it back does not
    ext = plugin.pre_filter_extensions()
    copy = state.clone()
    assert ext.remove_pod(copy, incoming, PodInfo(user), ni) is None
    assert plugin.filter(copy, incoming, ni) is None
    assert plugin.filter(state, incoming, ni) is not None, "the original state must not change"
    assert ext.add_pod(copy, incoming, PodInfo(user), ni) is None
    assert plugin.filter(copy, incoming, ni) is not None


def test_skip_when_no_restricted_volume_and_claim_unused() -> None:
    plugin, handle = _rwop_setup([])
    _, st = plugin.pre_filter(CycleState(), _pod("incoming", ["rwop"]), handle.snapshot.list())
    assert st is not None and st.code == Code.SKIP


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin, _handle = _rwop_setup([])
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]}})
    st = plugin.filter(CycleState(), pod, NodeInfo())
    assert st is not None and st.code == Code.ERROR and PRE_FILTER_STATE_KEY in st.message()


def test_disk_conflict_reported_before_missing_state() -> None:
    plugin, _ = _rwop_setup([])
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]}})
    other = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "o"},
                           "spec": {"nodeName": "n1",
                                    "volumes": [{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]}})
    st = plugin.filter(CycleState(), pod, NodeInfo(None, [other]))
    assert st is not None and st.code == Code.UNSCHEDULABLE and st.reasons == [ERR_REASON_DISK_CONFLICT]


def test_pod_without_volumes_is_skipped_without_reading_objects() -> None:
    class NoObjects(Handle):
        @property  # type: ignore[override]
        def objects(self) -> Any:
            raise AssertionError("a pod without volumes must not read the object store")

        @objects.setter
        def objects(self, value: Any) -> None:
            pass

    plugin = VolumeRestrictions(None, NoObjects())
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    _, st = plugin.pre_filter(CycleState(), pod, [])
    assert st is not None and st.code == Code.SKIP
