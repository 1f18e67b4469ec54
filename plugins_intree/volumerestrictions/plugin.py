"""VolumeRestrictions: a pod may not share certain volumes with pods already on the node, and a
ReadWriteOncePod claim may be used by one pod only.

Shared-disk rules (per volume type): a GCE PD or an iSCSI target may be mounted by several pods only if every
mount is read-only; an AWS EBS volume by one pod only; an RBD image (same monitor, pool and image) by several
pods only if all of them mount it read-only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from plugins_intree.volumebinding.storage import PVC, not_found, pvc_info
from scheduling_framework.api.pod import Pod, Volume
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.status import Code, Status

NAME: Final = "VolumeRestrictions"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
# upstream's wording from 1.34 on (every supported release)
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod")
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"

# Volume sources the shared-disk rules apply to.
RESTRICTED_SOURCES: Final = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"})
_DEFAULT_RBD_POOL: Final = "rbd"


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def _ro(src: Mapping[str, Any]) -> bool:
    return src.get("readOnly") is True


def _rbd_key(src: Mapping[str, Any]) -> tuple[frozenset[str], str, str]:
    mons = src.get("monitors")
    monitors = frozenset(_str(m) for m in mons) if isinstance(mons, list) else frozenset()
    return monitors, _str(src.get("pool")) or _DEFAULT_RBD_POOL, _str(src.get("image"))


def is_volume_conflict(volume: Volume, existing: Volume) -> bool:
    """Whether ``volume`` of the incoming pod conflicts with ``existing`` of a pod on the node."""
    kind = volume.source_kind
    if kind != existing.source_kind:
        return False
    a, b = volume.source, existing.source
    if kind == "gcePersistentDisk":
        return _str(a.get("pdName")) == _str(b.get("pdName")) and not (_ro(a) and _ro(b))
    if kind == "awsElasticBlockStore":
        return _str(a.get("volumeID")) == _str(b.get("volumeID"))
    if kind == "iscsi":
        return _str(a.get("iqn")) == _str(b.get("iqn")) and not (_ro(a) and _ro(b))
    if kind == "rbd":
        mon_a, pool_a, image_a = _rbd_key(a)
        mon_b, pool_b, image_b = _rbd_key(b)
        return (not mon_a.isdisjoint(mon_b)) and pool_a == pool_b and image_a == image_b and not (_ro(a) and _ro(b))
    return False


def satisfy_volume_conflicts(restricted: Sequence[Volume], node_info: NodeInfo) -> bool:
    """No restricted volume of the incoming pod conflicts with a volume of a pod on the node."""
    if not restricted:
        return True
    for pi in node_info.pods:
        existing_volumes = pi.pod.spec.volumes
        if not existing_volumes:
            continue
        for v in restricted:
            for ev in existing_volumes:
                if is_volume_conflict(v, ev):
                    return False
    return True


class _PreFilterState:
    """The pod's ReadWriteOncePod claims and how many scheduled pods use them; cloned per cycle copy."""

    __slots__ = ("restricted", "rwop_claims", "conflicting_pvc_ref_count")

    def __init__(self, restricted: tuple[Volume, ...], rwop_claims: frozenset[str], count: int) -> None:
        self.restricted = restricted
        self.rwop_claims = rwop_claims
        self.conflicting_pvc_ref_count = count

    def conflicts_of(self, pod: Pod) -> int:
        # Upstream matches claim names only, whatever the other pod's namespace.
        n = 0
        for v in pod.spec.volumes:
            if v.source_kind == "persistentVolumeClaim" and _str(v.source.get("claimName")) in self.rwop_claims:
                n += 1
        return n

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.restricted, self.rwop_claims, self.conflicting_pvc_ref_count)


class VolumeRestrictions:
    """PreFilter (SKIP when the pod has no restricted volume and no in-use ReadWriteOncePod claim),
    PreFilterExtensions (track ReadWriteOncePod users) and Filter."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    # PreFilter ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        volumes = pod.spec.volumes
        if not volumes:
            return None, Status(Code.SKIP)
        restricted = tuple(v for v in volumes if v.source_kind in RESTRICTED_SOURCES)
        objects = getattr(self.handle, "objects", None)
        ns = pod.metadata.namespace
        rwop: set[str] = set()
        for v in volumes:
            if v.source_kind != "persistentVolumeClaim":
                continue
            name = _str(v.source.get("claimName"))
            obj = objects.get(PVC, ns, name) if objects is not None else None
            if obj is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found("persistentvolumeclaim", name))
            if READ_WRITE_ONCE_POD in pvc_info(obj).access_modes:
                rwop.add(name)
        count = 0
        if rwop:
            snapshot = self.handle.snapshot
            for name in rwop:
                if snapshot.is_pvc_used_by_pods(f"{ns}/{name}"):
                    # at most one pod can be using a ReadWriteOncePod claim
                    count += 1
        if not restricted and count == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(restricted, frozenset(rwop), count))
        return None, None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        s = _read(state)
        if isinstance(s, Status):
            return s
        s.conflicting_pvc_ref_count += s.conflicts_of(pod_info_to_add.pod)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
                   ) -> Status | None:
        s = _read(state)
        if isinstance(s, Status):
            return s
        s.conflicting_pvc_ref_count -= s.conflicts_of(pod_info_to_remove.pod)
        return None

    # Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = _read(state)
        if isinstance(s, Status):
            # Without PreFilter state the shared-disk rules still apply; upstream checks them first too.
            restricted = tuple(v for v in pod.spec.volumes if v.source_kind in RESTRICTED_SOURCES)
            if not satisfy_volume_conflicts(restricted, node_info):
                return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
            return s
        if not satisfy_volume_conflicts(s.restricted, node_info):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        if s.conflicting_pvc_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None


def _read(state: CycleState) -> _PreFilterState | Status:
    try:
        s = state.read(PRE_FILTER_STATE_KEY)
    except KeyError:
        return Status(Code.ERROR, f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
    if not isinstance(s, _PreFilterState):
        return Status(Code.ERROR, f"{s!r} convert to volumerestrictions.state error")
    return s
