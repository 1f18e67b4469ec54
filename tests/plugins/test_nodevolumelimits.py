"""NodeVolumeLimits driven directly over the ported upstream table, plus the case the fixtures skip (an Error
status) and the newest behaviour the stored table predates (VolumeLimitScaling)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from plugins_intree.nodevolumelimits import NodeVolumeLimits
from plugins_intree.nodevolumelimits.plugin import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, volume_limits
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code
from tests.plugins.test_volumebinding_common import FIXTURES, Handle, build, drive_case, load_cases

CASES = list(load_cases("nodevolumelimits-csi.yaml"))
EBS = "ebs.csi.aws.com"


@pytest.mark.parametrize("case", CASES)
def test_fixture_case(case: dict[str, Any]) -> None:
    drive_case(case, NodeVolumeLimits)


def _case(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((FIXTURES / "nodevolumelimits-csi.yaml").read_text())
    return copy.deepcopy(next(c for c in doc["cases"] if c["name"] == name))


def test_ephemeral_volume_not_owned_is_an_error() -> None:
    # upstream "ephemeral volume not owned": the claim exists but has no owner reference to the pod
    case = _case("ephemeral volume unbound")
    for o in case["extraObjects"]:
        if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == "abc-xyz":
            del o["metadata"]["ownerReferences"]
    handle, pod = build(case)
    plugin = NodeVolumeLimits(None, handle)
    state = CycleState()
    assert plugin.pre_filter(state, pod, handle.snapshot.list()) == (None, None)
    st = plugin.filter(state, pod, handle.snapshot.list()[0])
    assert st is not None and st.code == Code.ERROR
    assert st.message() == "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"


def _objects(*manifests: dict[str, Any]) -> ObjectStore:
    return ObjectStore(KubeObject.from_dict(m) for m in manifests)


def _csi_node(drivers: dict[str, int | None]) -> dict[str, Any]:
    ds = []
    for name, count in drivers.items():
        d: dict[str, Any] = {"name": name, "nodeID": "n1"}
        if count is not None:
            d["allocatable"] = {"count": count}
        ds.append(d)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
            "spec": {"drivers": ds}}


def _bound(name: str, driver: str = EBS, ns: str = "default") -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
             "spec": {"csi": {"driver": driver, "volumeHandle": name}}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
             "spec": {"volumeName": name}}]


def _pod(name: str, claims: list[str], node: str = "") -> Pod:
    spec: dict[str, Any] = {"volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def _run(objects: ObjectStore, pod: Pod, existing: list[Pod] = (), gates: dict[str, bool] | None = None
         ) -> Any:
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    handle = Handle(Snapshot.from_objects([node], list(existing)), objects, gates)
    plugin = NodeVolumeLimits(None, handle)
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, handle.snapshot.list())
    assert st is None
    return plugin.filter(state, pod, handle.snapshot.get("n1"))


def test_missing_driver_blocks_only_when_the_csidriver_asks() -> None:
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
              "spec": {"preventPodSchedulingIfMissing": True}}
    other_node = _csi_node({"other.csi": 5})
    pod = _pod("p", ["v"])
    st = _run(_objects(*_bound("v"), driver, other_node), pod)
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert st.reasons == [f"{EBS} CSI driver is not installed on the node"]
    # without the opt-in, or with the gate off, a missing driver is not the scheduler's concern
    relaxed = copy.deepcopy(driver)
    relaxed["spec"]["preventPodSchedulingIfMissing"] = False
    assert _run(_objects(*_bound("v"), relaxed, other_node), pod) is None
    assert _run(_objects(*_bound("v"), driver, other_node), pod, gates={"VolumeLimitScaling": False}) is None
    # no CSINode at all counts as missing
    assert _run(_objects(*_bound("v"), driver), pod) is not None
    # installed: fine
    assert _run(_objects(*_bound("v"), driver, _csi_node({EBS: None})), pod) is None


def test_shared_volume_costs_nothing_and_attachments_count() -> None:
    objs = [*_bound("a"), *_bound("b"), _csi_node({EBS: 2})]
    existing = [_pod("e", ["a", "b"], "n1")]
    # the node is full, but the incoming pod reuses an attached volume
    assert _run(_objects(*objs), _pod("p", ["a"]), existing) is None
    st = _run(_objects(*objs, *_bound("c")), _pod("p", ["c"]), existing)
    assert st is not None and st.reasons == [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED]
    # a VolumeAttachment for a volume no pod on the node uses still occupies a slot
    va = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
          "spec": {"nodeName": "n1", "attacher": EBS, "source": {"persistentVolumeName": "b"}}}
    assert _run(_objects(*_bound("a"), *_bound("b"), *_bound("c"), _csi_node({EBS: 2}), va),
                _pod("p", ["c"]), [_pod("e", ["a"], "n1")]) is not None
    # ... but one for a volume a pod on the node uses is not counted twice
    va_a = copy.deepcopy(va)
    va_a["spec"]["source"]["persistentVolumeName"] = "a"
    assert _run(_objects(*_bound("a"), *_bound("c"), _csi_node({EBS: 2}), va_a),
                _pod("p", ["c"]), [_pod("e", ["a"], "n1")]) is None


def test_inline_volume_attachment_counts() -> None:
    va = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
          "spec": {"nodeName": "n1", "attacher": EBS,
                   "source": {"inlineVolumeSpec": {"csi": {"driver": EBS, "volumeHandle": "vol-1"}}}}}
    assert _run(_objects(*_bound("c"), _csi_node({EBS: 1}), va), _pod("p", ["c"])) is not None
    assert _run(_objects(*_bound("c"), _csi_node({EBS: 2}), va), _pod("p", ["c"])) is None


def test_volume_limits_read_only_drivers_with_a_count() -> None:
    csi_node = KubeObject.from_dict(_csi_node({"a": 3, "b": None, "c": 0}))
    assert volume_limits(csi_node) == {"a": 3, "c": 0}
    assert volume_limits(None) == {}


def test_existing_pod_missing_claim_is_not_counted() -> None:
    objs = [*_bound("a"), _csi_node({EBS: 1})]
    assert _run(_objects(*objs), _pod("p", ["a"]), [_pod("e", ["gone"], "n1")]) is None


def test_pod_without_volumes_skips() -> None:
    plugin = NodeVolumeLimits(None, Handle())
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"volumes": [{"name": "c", "configMap": {"name": "x"}}]}})
    _, st = plugin.pre_filter(CycleState(), pod, [])
    assert st is not None and st.code == Code.SKIP
    assert plugin.filter(CycleState(), Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                                                      "metadata": {"name": "q"}}), NodeInfo()) is None


# Upstream's table annotates every CSINode with the migrated EBS plugin. Its isCSIMigrationOn does not read
# that annotation for EBS, GCE PD, Azure Disk or Cinder, so the in-tree cases decide the same without it.
ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
IN_TREE_CASES = [c.values[0] for c in CASES if "in-tree" in c.values[0]["name"]
                 or "inline migratable" in c.values[0]["name"]]


def _without_annotation(case: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(case)
    for o in out.get("extraObjects") or []:
        if o["kind"] == "CSINode":
            (o["metadata"].get("annotations") or {}).pop(ANNOTATION, None)
    return out


@pytest.mark.parametrize("case", IN_TREE_CASES, ids=[c["name"] for c in IN_TREE_CASES])
def test_in_tree_cases_without_the_migrated_plugins_annotation(case: dict[str, Any]) -> None:
    stripped = _without_annotation(case)
    assert stripped != case  # the case had the annotation to remove
    drive_case(stripped, NodeVolumeLimits)


def _inline_pod(name: str, source: str, volume: dict[str, Any], node: str = "") -> Pod:
    spec: dict[str, Any] = {"volumes": [{"name": name, source: volume}]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


INLINE = [
    pytest.param("awsElasticBlockStore", {"volumeID": "vol-1"}, {"volumeID": "vol-2"}, EBS, id="aws-ebs"),
    pytest.param("gcePersistentDisk", {"pdName": "pd-1"}, {"pdName": "pd-2"}, "pd.csi.storage.gke.io", id="gce-pd"),
    pytest.param("azureDisk", {"diskName": "d1", "diskURI": "/sub/d1"}, {"diskName": "d2", "diskURI": "/sub/d2"},
                 "disk.csi.azure.com", id="azure-disk"),
    pytest.param("cinder", {"volumeID": "c1"}, {"volumeID": "c2"}, "cinder.csi.openstack.org", id="cinder"),
]


@pytest.mark.parametrize(("source", "existing", "incoming", "driver"), INLINE)
def test_inline_in_tree_volumes_count_without_the_annotation(source: str, existing: dict[str, Any],
                                                             incoming: dict[str, Any], driver: str) -> None:
    # one volume attached by a pod on the node, a limit of 1: the second in-tree volume does not fit
    st = _run(_objects(_csi_node({driver: 1})), _inline_pod("p", source, incoming),
              [_inline_pod("e", source, existing, "n1")])
    assert st is not None and st.code == Code.UNSCHEDULABLE
    assert st.reasons == [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED]


def test_inline_in_tree_volumes_need_a_csinode() -> None:
    source, volume = "awsElasticBlockStore", {"volumeID": "vol-2"}
    assert _run(_objects(), _inline_pod("p", source, volume),
                [_inline_pod("e", source, {"volumeID": "vol-1"}, "n1")]) is None


@pytest.mark.parametrize("annotated", [False, True], ids=["no-annotation", "annotated"])
def test_portworx_needs_the_migrated_plugins_annotation(annotated: bool) -> None:
    csi_node = _csi_node({"pxd.portworx.com": 1})
    if annotated:
        csi_node["metadata"]["annotations"] = {ANNOTATION: "kubernetes.io/portworx-volume"}
    st = _run(_objects(csi_node), _inline_pod("p", "portworxVolume", {"volumeID": "px-2"}),
              [_inline_pod("e", "portworxVolume", {"volumeID": "px-1"}, "n1")])
    assert (st is not None) is annotated
