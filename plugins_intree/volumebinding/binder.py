"""The volume binder: which claims of a pod are bound, which PVs could satisfy the unbound ones on a node,
which need dynamic provisioning, and the assumed bindings between Reserve and PreBind.

The binder reads PVs and PVCs through an assume cache: Reserve records the PV it picked for a claim (its
``claimRef`` set) and the claims to provision (their ``volume.kubernetes.io/selected-node`` set) as assumed
objects, which later scheduling cycles see in place of the stored ones, so two pods never pick the same PV.
PreBind writes the bindings to the object store (the in-memory cluster) and drops the assumed copies; Unreserve
drops them without writing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from plugins_intree.volumebinding.csi_translation import (
    TranslationError,
    migrated_on_node,
    plugin_for_pv,
    translate_pv,
)
from plugins_intree.volumebinding.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    NOT_SUPPORTED_PROVISIONER,
    PV,
    PVC,
    STORAGE_CLASS,
    VOLUME_ATTRIBUTES_CLASS,
    WAIT_FOR_FIRST_CONSUMER,
    PVCInfo,
    PVInfo,
    StorageError,
    claim_name,
    csi_node_migrated_plugins,
    gate_enabled,
    get_object,
    list_objects,
    match_topology_selector_terms,
    opt_quantity,
    pv_info,
    pvc_info,
    sort_by_request,
    storage_class_binding_mode,
    volume_is_for_pod,
    with_changes,
)
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.selectors import LabelSelector
from scheduling_framework.errors import SchedulingFrameworkError

ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


@attrs.define(slots=True)
class BindingInfo:
    """A static binding: the unbound claim and the PV chosen for it."""

    pvc: PVCInfo
    pv: PVInfo

    @property
    def storage_class_name(self) -> str:
        return str(self.pv.spec.get("storageClassName") or "")


@attrs.define(slots=True)
class DynamicProvision:
    """A claim to provision on the node, with the CSIStorageCapacity that admitted it (if capacity is tracked)."""

    pvc: PVCInfo
    node_capacity: KubeObject | None = None


@attrs.define(slots=True)
class PodVolumes:
    """What a node offers the pod's unbound claims."""

    static_bindings: list[BindingInfo] = attrs.field(factory=list)
    dynamic_provisions: list[DynamicProvision] = attrs.field(factory=list)


@attrs.define(slots=True)
class PodVolumeClaims:
    """The pod's claims by state, and the PVs of the delayed claims' classes (read once per cycle)."""

    bound_claims: list[PVCInfo] = attrs.field(factory=list)
    unbound_claims_delay_binding: list[PVCInfo] = attrs.field(factory=list)
    unbound_claims_immediate: list[PVCInfo] = attrs.field(factory=list)
    unbound_volumes_delay_binding: dict[str, list[PVInfo]] = attrs.field(factory=dict)


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def find_matching_volume(claim: PVCInfo, volumes: Sequence[PVInfo], node_labels: Mapping[str, str],
                         excluded: set[str], check_attributes_class: bool) -> PVInfo | None:
    """The smallest available PV that satisfies the claim on the node (a PV pre-bound to the claim wins), or
    None (upstream FindMatchingVolume on the scheduler path)."""
    smallest: PVInfo | None = None
    requested = claim.request
    for vol in volumes:
        if vol.name in excluded:
            continue
        if vol.claim_ref is not None and not vol.is_bound_to(claim):
            continue
        if vol.capacity.cmp(requested) < 0:
            continue
        if vol.volume_mode != claim.volume_mode:
            continue
        if vol.deleting:
            continue
        node_ok = vol.node_affinity_matches(node_labels)
        if vol.is_bound_to(claim):
            # pre-bound to this claim: it is the answer, provided the node can reach it
            return vol if node_ok else None
        if vol.phase != "Available":
            continue
        if not claim.selector_valid or (claim.selector is not None and not claim.selector.matches(vol.labels)):
            continue
        if vol.storage_class != claim.storage_class:
            continue
        if check_attributes_class and vol.vac_name != claim.vac_name:
            continue
        if not node_ok:
            continue
        if not claim.access_modes <= vol.access_modes:
            continue
        if smallest is None or smallest.capacity.cmp(vol.capacity) > 0:
            smallest = vol
    return smallest


class AssumeCache:
    """PVs and PVCs as the scheduler believes them: the stored objects, overlaid by assumed updates.

    An assumed object remembers the stored object it was derived from; once the store holds a different
    object (the binding was written, or someone else changed it), the store wins.
    """

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._lock = threading.Lock()
        self._pvs: dict[str, tuple[KubeObject | None, KubeObject]] = {}
        self._pvcs: dict[tuple[str, str], tuple[KubeObject | None, KubeObject]] = {}

    @property
    def objects(self) -> Any:
        return getattr(self.handle, "objects", None)

    def _current(self, kind: str, ns: str, name: str, assumed: tuple[KubeObject | None, KubeObject] | None
                 ) -> KubeObject | None:
        stored = get_object_ns(self.objects, kind, ns, name)
        if assumed is not None and assumed[0] is stored:
            return assumed[1]
        return stored

    def get_pv(self, name: str) -> PVInfo | None:
        obj = self._current(PV, "", name, self._pvs.get(name))
        return None if obj is None else pv_info(obj)

    def get_pvc(self, namespace: str, name: str) -> PVCInfo | None:
        obj = self._current(PVC, namespace, name, self._pvcs.get((namespace, name)))
        return None if obj is None else pvc_info(obj)

    def list_pvs(self, storage_class: str) -> list[PVInfo]:
        out: list[PVInfo] = []
        assumed = self._pvs
        for obj in list_objects(self.objects, PV):
            a = assumed.get(obj.metadata.name)
            info = pv_info(a[1] if a is not None and a[0] is obj else obj)
            if info.storage_class == storage_class:
                out.append(info)
        return out

    def assume_pv(self, new: KubeObject) -> None:
        name = new.metadata.name
        stored = get_object_ns(self.objects, PV, "", name)
        if stored is None:
            raise StorageError(f'persistentvolume "{name}" not found')
        with self._lock:
            self._pvs[name] = (stored, new)

    def assume_pvc(self, new: KubeObject) -> None:
        key = (new.metadata.namespace, new.metadata.name)
        stored = get_object_ns(self.objects, PVC, key[0], key[1])
        if stored is None:
            raise StorageError(f'persistentvolumeclaim "{key[1]}" not found')
        with self._lock:
            self._pvcs[key] = (stored, new)

    def restore_pv(self, name: str) -> None:
        with self._lock:
            self._pvs.pop(name, None)

    def restore_pvc(self, namespace: str, name: str) -> None:
        with self._lock:
            self._pvcs.pop((namespace, name), None)


def get_object_ns(objects: Any, kind: str, namespace: str, name: str) -> KubeObject | None:
    return objects.get(kind, namespace, name) if objects is not None else None


class VolumeBinder:
    """upstream volumeBinder, over the handle's object store."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.cache = AssumeCache(handle)
        self.check_attributes_class = gate_enabled(handle, VOLUME_ATTRIBUTES_CLASS)

    @property
    def objects(self) -> Any:
        return getattr(self.handle, "objects", None)

    # classification ---------------------------------------------------------------------------------
    def is_delay_binding_mode(self, pvc: PVCInfo) -> bool:
        """Whether the claim's class binds on first consumer (a missing class means immediate binding)."""
        if not pvc.storage_class:
            return False
        sc = get_object(self.objects, STORAGE_CLASS, pvc.storage_class)
        if sc is None:
            return False
        mode = storage_class_binding_mode(sc)
        if mode is None:
            raise StorageError(f'VolumeBindingMode not set for StorageClass "{pvc.storage_class}"')
        return mode == WAIT_FOR_FIRST_CONSUMER

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """The pod's claims split into bound, unbound-delayed and unbound-immediate (pre-bound included),
        with the PVs of the delayed claims' classes."""
        claims = PodVolumeClaims()
        ns = pod.metadata.namespace
        for v in pod.spec.volumes:
            name = claim_name(pod, v)
            if name is None:
                continue
            pvc = self.cache.get_pvc(ns, name)
            if pvc is None:
                raise StorageError(f'error getting PVC "{ns}/{name}": persistentvolumeclaim "{name}" not found')
            if v.source_kind == "ephemeral":
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise StorageError(err)
            if pvc.fully_bound:
                claims.bound_claims.append(pvc)
            elif self.is_delay_binding_mode(pvc) and not pvc.volume_name:
                claims.unbound_claims_delay_binding.append(pvc)
            else:
                claims.unbound_claims_immediate.append(pvc)
        for pvc in claims.unbound_claims_delay_binding:
            cls = pvc.storage_class
            if cls not in claims.unbound_volumes_delay_binding:
                claims.unbound_volumes_delay_binding[cls] = self.cache.list_pvs(cls)
        return claims

    # FindPodVolumes -----------------------------------------------------------------------------------
    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """The node's offer for the pod's claims and, when the node does not fit, the reasons why."""
        pod_volumes = PodVolumes()
        bound_satisfied = unbound_satisfied = sufficient_storage = bound_pvs_found = True
        if claims.bound_claims:
            bound_satisfied, bound_pvs_found = self.check_bound_claims(claims.bound_claims, node)
        if claims.unbound_claims_delay_binding:
            to_match: list[PVCInfo] = []
            to_provision: list[PVCInfo] = []
            fast_fail = False
            for c in claims.unbound_claims_delay_binding:
                selected = c.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.metadata.name:
                        # provisioning already started for another node
                        unbound_satisfied = False
                        fast_fail = True
                        break
                    to_provision.append(c)
                else:
                    to_match.append(c)
            if not fast_fail:
                if to_match:
                    unbound_satisfied, pod_volumes.static_bindings, unmatched = self.find_matching_volumes(
                        to_match, claims.unbound_volumes_delay_binding, node)
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_satisfied, sufficient_storage, pod_volumes.dynamic_provisions = \
                        self.check_volume_provisions(to_provision, node)
        reasons: list[str] = []
        if not bound_satisfied:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_satisfied:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not bound_pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return pod_volumes, reasons

    def check_bound_claims(self, claims: Sequence[PVCInfo], node: Node) -> tuple[bool, bool]:
        """(node affinity of every bound PV satisfied, every bound PV found)."""
        csi_node = get_object(self.objects, CSI_NODE, node.metadata.name)
        migrated = csi_node_migrated_plugins(csi_node)
        labels = node.metadata.labels
        for pvc in claims:
            pv = self.cache.get_pv(pvc.volume_name)
            if pv is None:
                return True, False
            plugin = plugin_for_pv(pv)
            if plugin is not None and migrated_on_node(plugin.name, migrated, csi_node is not None, self.handle):
                try:
                    ok = translate_pv(pv, plugin).node_affinity_matches(labels)
                except TranslationError as e:
                    raise StorageError(f"could not translate pv: {e}") from None
            else:
                ok = pv.node_affinity_matches(labels)
            if not ok:
                return False, True
        return True, True

    def find_matching_volumes(self, claims: Sequence[PVCInfo], volumes: Mapping[str, list[PVInfo]], node: Node
                              ) -> tuple[bool, list[BindingInfo], list[PVCInfo]]:
        """Pick a PV for each claim, smallest claims first, never the same PV twice."""
        chosen: set[str] = set()
        found = True
        bindings: list[BindingInfo] = []
        unbound: list[PVCInfo] = []
        labels = node.metadata.labels
        for pvc in sort_by_request(claims):
            pv = find_matching_volume(pvc, volumes.get(pvc.storage_class, ()), labels, chosen,
                                      self.check_attributes_class)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unbound

    def check_volume_provisions(self, claims: Sequence[PVCInfo], node: Node
                                ) -> tuple[bool, bool, list[DynamicProvision]]:
        """(provisioning possible on the node, enough storage capacity, the provisions)."""
        out: list[DynamicProvision] = []
        for claim in claims:
            cls_name = claim.storage_class
            if not cls_name:
                raise StorageError(f'no class for claim "{claim.key}"')
            sc = get_object(self.objects, STORAGE_CLASS, cls_name)
            if sc is None:
                raise StorageError(f'failed to find storage class "{cls_name}"')
            provisioner = sc.raw.get("provisioner")
            if not isinstance(provisioner, str) or not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.raw.get("allowedTopologies"), node.metadata.labels):
                return False, True, []
            sufficient, capacity = self.has_enough_capacity(provisioner, claim, sc, node)
            if not sufficient:
                return True, False, []
            out.append(DynamicProvision(claim, capacity))
        return True, True, out

    def has_enough_capacity(self, provisioner: str, claim: PVCInfo, sc: KubeObject, node: Node
                            ) -> tuple[bool, KubeObject | None]:
        """With a CSI driver that tracks storage capacity, some CSIStorageCapacity of the class reachable from
        the node must fit the claim."""
        requests = _map(_map(claim.obj.spec.get("resources")).get("requests"))
        if "storage" not in requests:
            return True, None
        driver = get_object(self.objects, CSI_DRIVER, provisioner)
        if driver is None or _map(driver.spec).get("storageCapacity") is not True:
            return True, None
        size = claim.request.value()
        for cap in list_objects(self.objects, CSI_STORAGE_CAPACITY):
            raw = cap.raw
            if raw.get("storageClassName") == sc.metadata.name and capacity_sufficient(raw, size) \
                    and node_has_access(raw, node):
                return True, cap
        return False, None

    # Reserve / Unreserve / PreBind ----------------------------------------------------------------
    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        ns = pod.metadata.namespace
        for v in pod.spec.volumes:
            name = claim_name(pod, v)
            if name is None:
                continue
            pvc = self.cache.get_pvc(ns, name)
            if pvc is None or not pvc.fully_bound:
                return False
            if v.source_kind == "ephemeral" and volume_is_for_pod(pod, pvc) is not None:
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """Record the node's bindings as assumed; True when every claim was bound already."""
        if self.are_pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        try:
            for b in pod_volumes.static_bindings:
                new_pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
                if dirty:
                    self.cache.assume_pv(new_pv)
                new_bindings.append(BindingInfo(b.pvc, pv_info(new_pv)))
        except StorageError:
            self._revert_pvs(new_bindings)
            raise
        new_provisions: list[DynamicProvision] = []
        try:
            for p in pod_volumes.dynamic_provisions:
                annotated = with_changes(p.pvc.obj, {"metadata": {"annotations": {ANN_SELECTED_NODE: node_name}}})
                self.cache.assume_pvc(annotated)
                new_provisions.append(DynamicProvision(pvc_info(annotated)))
        except StorageError:
            self._revert_pvs(new_bindings)
            self._revert_pvcs(new_provisions)
            raise
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self._revert_pvs(pod_volumes.static_bindings)
        self._revert_pvcs(pod_volumes.dynamic_provisions)

    def _revert_pvs(self, bindings: Sequence[BindingInfo]) -> None:
        for b in bindings:
            self.cache.restore_pv(b.pv.name)

    def _revert_pvcs(self, provisions: Sequence[DynamicProvision]) -> None:
        for p in provisions:
            self.cache.restore_pvc(p.pvc.namespace, p.pvc.name)

    def bind_pod_volumes(self, pod: Pod, pod_volumes: PodVolumes) -> None:
        """Write the assumed bindings to the in-memory cluster.

        A static binding is completed as the PV controller would complete it: the PV is bound to the claim
        and the claim to the PV (both phase Bound). A claim to provision gets its selected-node annotation,
        which is the request to the provisioner; with no provisioner in an in-memory cluster it stays
        unbound, and pods sharing it are kept on the selected node.
        """
        objects = self.objects
        if objects is None:
            raise StorageError("no object store to record volume bindings in")
        for b in pod_volumes.static_bindings:
            pvc = self.cache.get_pvc(b.pvc.namespace, b.pvc.name)
            if pvc is None:
                raise StorageError(f'failed to check binding: persistentvolumeclaim "{b.pvc.name}" not found')
            pv_obj = with_changes(b.pv.obj, {"status": {"phase": "Bound"}})
            pvc_patch: dict[str, Any] = {
                "metadata": {"annotations": {ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}},
                "spec": {"volumeName": b.pv.name},
                "status": {"phase": "Bound"},
            }
            capacity = _map(b.pv.spec.get("capacity"))
            if capacity:
                pvc_patch["status"]["capacity"] = dict(capacity)
            modes = b.pv.spec.get("accessModes")
            if isinstance(modes, list):
                pvc_patch["status"]["accessModes"] = list(modes)
            pvc_obj = with_changes(pvc.obj, pvc_patch)
            objects.add(pv_obj)
            objects.add(pvc_obj)
            self.cache.restore_pv(b.pv.name)
            self.cache.restore_pvc(pvc.namespace, pvc.name)
        for p in pod_volumes.dynamic_provisions:
            objects.add(p.pvc.obj)
            self.cache.restore_pvc(p.pvc.namespace, p.pvc.name)


def bind_volume_to_claim(pv: PVInfo, claim: PVCInfo) -> tuple[KubeObject, bool]:
    """upstream GetBindVolumeToClaim: the PV with its claimRef pointing at the claim (and bound-by-controller
    set unless the user pre-bound it), and whether anything changed."""
    patch: dict[str, Any] = {}
    ref = pv.claim_ref
    if ref is None or ref != (claim.namespace, claim.name, claim.uid):
        claim_ref: dict[str, Any] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                     "namespace": claim.namespace, "name": claim.name}
        if claim.uid:
            claim_ref["uid"] = claim.uid
        patch["spec"] = {"claimRef": claim_ref}
    if not pv.is_bound_to(claim) and ANN_BOUND_BY_CONTROLLER not in pv.annotations:
        patch["metadata"] = {"annotations": {ANN_BOUND_BY_CONTROLLER: "yes"}}
    if not patch:
        return pv.obj, False
    return with_changes(pv.obj, patch), True


def capacity_limit(raw: Mapping[str, Any]) -> Quantity | None:
    """upstream volumeLimit: maximumVolumeSize when set, else capacity."""
    mvs = opt_quantity(raw.get("maximumVolumeSize"))
    if mvs is not None:
        return mvs
    return opt_quantity(raw.get("capacity"))


def capacity_sufficient(raw: Mapping[str, Any], size: int) -> bool:
    limit = capacity_limit(raw)
    return limit is not None and limit.value() >= size


def node_has_access(raw: Mapping[str, Any], node: Node) -> bool:
    topology = raw.get("nodeTopology")
    if not isinstance(topology, Mapping):
        return False
    try:
        selector = LabelSelector.from_dict(topology, "nodeTopology")
    except SchedulingFrameworkError:
        return False
    return selector.matches(node.metadata.labels)
