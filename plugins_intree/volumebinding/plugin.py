"""VolumeBinding: a pod's PersistentVolumeClaims must be satisfiable on the node, and the claims that bind
on first consumer get bound to the chosen node.

- Bound claims: the PV's required node affinity must match the node (of its translated CSI PV for an
  in-tree volume migrated on the node).
- Unbound claims of a WaitForFirstConsumer class: an available PV that fits the claim (size, access modes,
  class, volume mode, selector, node affinity; the smallest wins, a PV pre-bound to the claim first), or
  dynamic provisioning when the class has a provisioner, its allowedTopologies admit the node and, for CSI
  drivers that track capacity, a CSIStorageCapacity reachable from the node has room.
- Unbound claims of an Immediate class must be bound by the PV controller before the pod can be scheduled.

Score (StorageCapacityScoring): the node's storage utilization per class, through the ``shape`` of
VolumeBindingArgs. Reserve assumes the bindings for the chosen node, Unreserve drops them, PreBind records
them in the in-memory cluster.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

from plugins_intree.volumebinding.binder import PodVolumeClaims, PodVolumes, VolumeBinder
from plugins_intree.volumebinding.scorer import (
    StorageResource,
    VolumeCapacityScorer,
    build_scorer_function,
    scaled_shape,
)
from plugins_intree.volumebinding.storage import (
    STORAGE_CAPACITY_SCORING,
    StorageError,
    claim_name,
    gate_enabled,
    get_pvc,
    not_found,
    opt_quantity,
    volume_is_for_pod,
)
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import DEFAULT_VOLUME_BINDING_SHAPE, VolumeBindingArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, PluginError
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME: Final = "VolumeBinding"
STATE_KEY: Final = NAME
ERR_REASON_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"


_UNUSED_LOCK: Final = threading.Lock()


class _StateData:
    """The cycle's volume decisions; shared by every copy of the CycleState (upstream returns itself)."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "pod_volume_claims", "has_static_bindings", "lock")

    def __init__(self, claims: PodVolumeClaims | None = None) -> None:
        self.all_bound = False
        self.pod_volumes_by_node: dict[str, PodVolumes] | None = None if claims is None else {}
        self.pod_volume_claims = claims
        self.has_static_bindings = False
        # Only Filter takes the lock, to record a node's volumes: a state without claims (PreFilter SKIPped, so
        # Filter never runs) shares one.
        self.lock = threading.Lock() if claims is not None else _UNUSED_LOCK

    def clone(self) -> _StateData:
        return self


def _read(state: CycleState) -> _StateData | Status:
    try:
        s = state.read(STATE_KEY)
    except KeyError:
        return Status(Code.ERROR, f'reading "{STATE_KEY}" from cycleState: not found')
    if not isinstance(s, _StateData):
        return Status(Code.ERROR, "unable to convert state into stateData")
    return s


def _args(args: Any) -> VolumeBindingArgs:
    if args is None:
        return VolumeBindingArgs()
    if isinstance(args, VolumeBindingArgs):
        return args
    if isinstance(args, Mapping):
        try:
            return VolumeBindingArgs.from_dict(args)
        except ConfigError as e:
            raise PluginError(NAME, str(e)) from e
    raise PluginError(NAME, f"want args to be of type VolumeBindingArgs, got {type(args).__name__}")


class VolumeBinding:
    """PreFilter (SKIP when the pod uses no claim), Filter, PreScore/Score, Reserve/Unreserve, PreBind."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.args = _args(args)
        self.binder = VolumeBinder(handle)
        self.enable_storage_capacity_scoring = gate_enabled(handle, STORAGE_CAPACITY_SCORING)
        self.scorer: VolumeCapacityScorer | None = None
        if self.enable_storage_capacity_scoring:
            shape = self.args.shape or DEFAULT_VOLUME_BINDING_SHAPE
            self.scorer = build_scorer_function(scaled_shape(shape))

    @property
    def objects(self) -> Any:
        return getattr(self.handle, "objects", None)

    # PreFilter ------------------------------------------------------------------------------------
    def pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """Whether the pod uses any claim, and the reason it cannot be scheduled because of one (or None)."""
        has_pvc = False
        objects = self.objects
        ns = pod.metadata.namespace
        for v in pod.spec.volumes:
            name = claim_name(pod, v)
            if name is None:
                continue
            has_pvc = True
            ephemeral = v.source_kind == "ephemeral"
            pvc = get_pvc(objects, ns, name)
            if pvc is None:
                if ephemeral:
                    return True, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return True, not_found("persistentvolumeclaim", name)
            if pvc.phase == "Lost":
                return True, (f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume '
                              f'"{pvc.volume_name}"')
            if pvc.deleting:
                return True, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    return True, err
        return has_pvc, None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.volumes:
            state.write(STATE_KEY, _StateData())
            return None, Status(Code.SKIP)
        has_pvc, reason = self.pod_has_pvcs(pod)
        if reason is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
        if not has_pvc:
            state.write(STATE_KEY, _StateData())
            return None, Status(Code.SKIP)
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except StorageError as e:
            return None, Status(Code.ERROR, str(e))
        if claims.unbound_claims_immediate:
            # the PV controller binds these; the pod is retried once they are bound
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _StateData(claims))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = _read(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        claims = s.pod_volume_claims
        if claims is None:
            return None
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(pod, claims, node)
        except StorageError as e:
            return Status(Code.ERROR, str(e))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        with s.lock:
            assert s.pod_volumes_by_node is not None
            s.pod_volumes_by_node[node.metadata.name] = pod_volumes
            if pod_volumes.static_bindings:
                s.has_static_bindings = True
        return None

    # PreScore / Score -----------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if self.scorer is None:
            return Status(Code.SKIP)
        s = _read(state)
        if isinstance(s, Status):
            return s
        if s.pod_volumes_by_node is None:
            # A pod without claims scores 0 on every node (Score finds no volumes), and a constant zero column
            # adds nothing to any total: skipping it changes no decision and saves a call per node.
            # Pinned by tests/test_perf_equivalence.py::test_volumebinding_skip_keeps_totals.
            return Status(Code.SKIP)
        if s.has_static_bindings or self.enable_storage_capacity_scoring:
            return None
        return Status(Code.SKIP)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        scorer = self.scorer
        if scorer is None:
            return 0, None
        s = _read(state)
        if isinstance(s, Status):
            return 0, s
        by_node = s.pod_volumes_by_node
        pod_volumes = None if by_node is None else by_node.get(node_info.name)
        if pod_volumes is None:
            return 0, None
        classes: dict[str, StorageResource] = {}
        if pod_volumes.static_bindings or not self.enable_storage_capacity_scoring:
            for b in pod_volumes.static_bindings:
                r = classes.setdefault(b.storage_class_name, StorageResource())
                r.requested += b.pvc.request.value()
                r.capacity += b.pv.capacity.value()
        else:
            for p in pod_volumes.dynamic_provisions:
                if p.node_capacity is None:
                    continue
                r = classes.setdefault(p.pvc.storage_class, StorageResource())
                # the capacity is the node's, not per volume: set, never add up
                cap = opt_quantity(p.node_capacity.raw.get("capacity"))
                r.capacity = 0 if cap is None else cap.value()
                r.requested += p.pvc.request.value()
        return scorer(classes), None

    def score_extensions(self) -> None:
        return None

    # Reserve / Unreserve / PreBind ----------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _read(state)
        if isinstance(s, Status):
            return s
        pod_volumes = None if s.pod_volumes_by_node is None else s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            # the pod uses no claim
            s.all_bound = True
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except StorageError as e:
            return Status(Code.ERROR, str(e))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _StateData) or s.pod_volumes_by_node is None:
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is not None:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _read(state)
        if isinstance(s, Status):
            return s
        if s.all_bound:
            return None
        pod_volumes = None if s.pod_volumes_by_node is None else s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod, pod_volumes)
        except StorageError as e:
            return Status(Code.ERROR, f"binding volumes: {e}")
        return None
