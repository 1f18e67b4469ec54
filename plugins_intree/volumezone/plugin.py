"""VolumeZone: the zone and region labels of the PVs a pod's claims are bound to must match the node's.

Only bound claims constrain the node (their PV's topology labels, beta or GA, where a beta PV label also
matches the node's GA label); unbound claims of a WaitForFirstConsumer class are VolumeBinding's business.
A node without any zone/region label accepts every volume (single-zone clusters often label nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from plugins_intree.volumebinding.storage import (
    STORAGE_CLASS,
    WAIT_FOR_FIRST_CONSUMER,
    get_object,
    get_pv,
    get_pvc,
    label_zones_to_set,
    not_found,
    storage_class_binding_mode,
)
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME: Final = "VolumeZone"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"

LABEL_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_REGION: Final = "topology.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_TO_GA: Final = {LABEL_BETA_REGION: LABEL_REGION, LABEL_BETA_ZONE: LABEL_ZONE}


@attrs.frozen(slots=True)
class PVTopology:
    """One topology label of a PV the pod uses: the node must carry ``key`` with one of ``values``."""

    pv_name: str
    key: str
    values: frozenset[str]


class _State:
    __slots__ = ("topologies",)

    def __init__(self, topologies: tuple[PVTopology, ...]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        return self


def _unresolvable(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


class VolumeZone:
    """PreFilter (collects the bound PVs' topology; SKIP when there is none) and Filter."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def pv_topologies(self, pod: Pod) -> tuple[tuple[PVTopology, ...], Status | None]:
        objects = getattr(self.handle, "objects", None)
        out: list[PVTopology] = []
        ns = pod.metadata.namespace
        for v in pod.spec.volumes:
            if v.source_kind != "persistentVolumeClaim":
                continue
            claim = v.source.get("claimName")
            claim = claim if isinstance(claim, str) else ""
            if not claim:
                return (), _unresolvable("PersistentVolumeClaim had no name")
            pvc = get_pvc(objects, ns, claim)
            if pvc is None:
                return (), _unresolvable(not_found("persistentvolumeclaim", claim))
            if not pvc.volume_name:
                sc_name = pvc.storage_class
                if not sc_name:
                    return (), _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = get_object(objects, STORAGE_CLASS, sc_name)
                if sc is None:
                    return (), _unresolvable(not_found("storageclass.storage.k8s.io", sc_name))
                mode = storage_class_binding_mode(sc)
                if mode is None:
                    return (), _unresolvable(f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # unbound and delayed: nothing to check yet
                return (), _unresolvable("PersistentVolume had no name")
            pv = get_pv(objects, pvc.volume_name)
            if pv is None:
                return (), _unresolvable(not_found("persistentvolume", pvc.volume_name))
            for key in TOPOLOGY_LABELS:
                value = pv.labels.get(key)
                if value is None:
                    continue
                zones = label_zones_to_set(value)
                if zones is None:
                    continue  # upstream logs the malformed label and ignores it
                out.append(PVTopology(pv.name, key, frozenset(zones)))
        return tuple(out), None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.volumes:
            return None, Status(Code.SKIP)
        topologies, st = self.pv_topologies(pod)
        if st is not None:
            return None, st
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _State):
            topologies = s.topologies
        else:
            topologies, st = self.pv_topologies(pod)
            if st is not None:
                return st
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        labels = node.metadata.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_TO_GA.get(t.key, t.key))
            if v is None or v not in t.values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None
