"""Reading PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSI objects from the object store.

The volume plugins share these helpers (upstream's ``component-helpers/storage/volume`` and
``storage/ephemeral``). Cluster objects arrive as raw manifests; :class:`PVInfo` and :class:`PVCInfo` parse
the fields the scheduler reads once per object and are cached per object, so a PV read by every Filter call of
a cycle is parsed once. Objects are immutable: an update is a new object, hence a new cache entry.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod, Volume
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.selectors import LabelSelector, NodeSelector
from scheduling_framework.errors import SchedulingFrameworkError

PV: Final = "PersistentVolume"
PVC: Final = "PersistentVolumeClaim"
STORAGE_CLASS: Final = "StorageClass"
CSI_NODE: Final = "CSINode"
CSI_DRIVER: Final = "CSIDriver"
CSI_STORAGE_CAPACITY: Final = "CSIStorageCapacity"
VOLUME_ATTACHMENT: Final = "VolumeAttachment"

ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"
IMMEDIATE: Final = "Immediate"
FILESYSTEM: Final = "Filesystem"
MULTI_ZONE_DELIMITER: Final = "__"

ZERO: Final = Quantity()

# Feature gates these plugins read, with their state in the newest upstream release (all on).
STORAGE_CAPACITY_SCORING: Final = "StorageCapacityScoring"
VOLUME_LIMIT_SCALING: Final = "VolumeLimitScaling"
CSI_MIGRATION_PORTWORX: Final = "CSIMigrationPortworx"
VOLUME_ATTRIBUTES_CLASS: Final = "VolumeAttributesClass"
GATE_DEFAULTS: Final[Mapping[str, bool]] = {
    STORAGE_CAPACITY_SCORING: True,
    VOLUME_LIMIT_SCALING: True,
    CSI_MIGRATION_PORTWORX: True,
    VOLUME_ATTRIBUTES_CLASS: True,
}


def gate_enabled(handle: Any, gate: str) -> bool:
    """The gate's state from the handle's optional ``feature_gates`` (a mapping or an object with
    ``enabled(name)``), else its newest-upstream default."""
    gates = getattr(handle, "feature_gates", None)
    if gates is not None:
        enabled = getattr(gates, "enabled", None)
        if callable(enabled):
            return bool(enabled(gate))
        if isinstance(gates, Mapping) and gate in gates:
            return bool(gates[gate])
    return GATE_DEFAULTS.get(gate, False)


class StorageError(SchedulingFrameworkError):
    """A malformed storage object or an inconsistent claim; the message is upstream's error text."""


def not_found(resource: str, name: str) -> str:
    """The informer listers' not-found message, e.g. ``persistentvolumeclaim "x" not found``."""
    return f'{resource} "{name}" not found'


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def quantity(v: Any) -> Quantity:
    """A storage quantity from a manifest value (absent or unparsable counts as zero)."""
    if v is None:
        return ZERO
    try:
        return Quantity.parse(v)
    except (SchedulingFrameworkError, ValueError, TypeError):
        return ZERO


def opt_quantity(v: Any) -> Quantity | None:
    if v is None:
        return None
    try:
        return Quantity.parse(v)
    except (SchedulingFrameworkError, ValueError, TypeError):
        return None


def _access_modes(spec: Mapping[str, Any]) -> frozenset[str]:
    modes = spec.get("accessModes")
    return frozenset(_str(m) for m in modes) if isinstance(modes, list) else frozenset()


def parse_node_selector(d: Any) -> NodeSelector | None:
    """A NodeSelector from a manifest; a malformed one matches no node (as upstream's failing match does)."""
    if not isinstance(d, Mapping):
        return None
    try:
        return NodeSelector.from_dict(d, "nodeSelector")
    except SchedulingFrameworkError:
        return NodeSelector(())


# --------------------------------------------------------------------------- parsed views


class PVInfo:
    """What the scheduler reads from a PersistentVolume."""

    __slots__ = ("obj", "name", "storage_class", "capacity", "claim_ref", "phase", "labels", "annotations",
                 "volume_mode", "access_modes", "node_affinity", "deleting", "csi_driver", "csi_handle",
                 "spec", "vac_name", "__weakref__")

    def __init__(self, obj: KubeObject) -> None:
        spec = obj.spec
        meta = obj.metadata
        self.obj = obj
        self.spec = spec
        self.name = meta.name
        self.labels: Mapping[str, str] = meta.labels
        self.annotations: Mapping[str, str] = meta.annotations
        cls = meta.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
        self.storage_class = cls if cls is not None else _str(spec.get("storageClassName"))
        self.capacity = quantity(_map(spec.get("capacity")).get("storage"))
        ref = spec.get("claimRef")
        self.claim_ref: tuple[str, str, str] | None = None if not isinstance(ref, Mapping) else (
            _str(ref.get("namespace")), _str(ref.get("name")), _str(ref.get("uid")))
        self.phase = _str(obj.status.get("phase"))
        self.volume_mode = _str(spec.get("volumeMode")) or FILESYSTEM
        self.access_modes = _access_modes(spec)
        na = _map(spec.get("nodeAffinity"))
        self.node_affinity = parse_node_selector(na.get("required")) if "required" in na else None
        self.deleting = meta.deletion_timestamp is not None
        csi = spec.get("csi")
        self.csi_driver = _str(_map(csi).get("driver")) if isinstance(csi, Mapping) else ""
        self.csi_handle = _str(_map(csi).get("volumeHandle")) if isinstance(csi, Mapping) else ""
        self.vac_name = _str(spec.get("volumeAttributesClassName"))

    def node_affinity_matches(self, labels: Mapping[str, str]) -> bool:
        """upstream CheckNodeAffinity: no required node affinity matches every node."""
        na = self.node_affinity
        return na is None or na.matches("", labels)

    def is_bound_to(self, claim: PVCInfo) -> bool:
        """upstream IsVolumeBoundToClaim."""
        ref = self.claim_ref
        if ref is None or ref[0] != claim.namespace or ref[1] != claim.name:
            return False
        return ref[2] == "" or ref[2] == claim.uid

    def __repr__(self) -> str:
        return f"PVInfo({self.name})"


class PVCInfo:
    """What the scheduler reads from a PersistentVolumeClaim."""

    __slots__ = ("obj", "name", "namespace", "key", "uid", "storage_class", "request", "volume_name",
                 "annotations", "phase", "deleting", "access_modes", "volume_mode", "selector", "selector_valid",
                 "vac_name", "owner_references", "__weakref__")

    def __init__(self, obj: KubeObject) -> None:
        spec = obj.spec
        meta = obj.metadata
        self.obj = obj
        self.name = meta.name
        self.namespace = meta.namespace
        self.key = f"{meta.namespace}/{meta.name}"
        self.uid = meta.uid
        self.annotations: Mapping[str, str] = meta.annotations
        cls = meta.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
        self.storage_class = cls if cls is not None else _str(spec.get("storageClassName"))
        self.request = quantity(_map(_map(spec.get("resources")).get("requests")).get("storage"))
        self.volume_name = _str(spec.get("volumeName"))
        self.phase = _str(obj.status.get("phase"))
        self.deleting = meta.deletion_timestamp is not None
        self.access_modes = _access_modes(spec)
        self.volume_mode = _str(spec.get("volumeMode")) or FILESYSTEM
        sel = spec.get("selector")
        self.selector: LabelSelector | None = None
        # a selector that does not parse selects no volume (upstream's conversion error)
        self.selector_valid = True
        if isinstance(sel, Mapping):
            try:
                self.selector = LabelSelector.from_dict(sel, "spec.selector")
            except SchedulingFrameworkError:
                self.selector_valid = False
        self.vac_name = _str(spec.get("volumeAttributesClassName"))
        self.owner_references = meta.owner_references

    @property
    def fully_bound(self) -> bool:
        """upstream isPVCFullyBound: bound to a volume and the PV controller finished binding."""
        return self.volume_name != "" and ANN_BIND_COMPLETED in self.annotations

    def __repr__(self) -> str:
        return f"PVCInfo({self.key})"


_cache_lock = threading.Lock()
_pv_cache: weakref.WeakKeyDictionary[KubeObject, PVInfo] = weakref.WeakKeyDictionary()
_pvc_cache: weakref.WeakKeyDictionary[KubeObject, PVCInfo] = weakref.WeakKeyDictionary()


def pv_info(obj: KubeObject) -> PVInfo:
    info = _pv_cache.get(obj)
    if info is None:
        info = PVInfo(obj)
        with _cache_lock:
            _pv_cache[obj] = info
    return info


def pvc_info(obj: KubeObject) -> PVCInfo:
    info = _pvc_cache.get(obj)
    if info is None:
        info = PVCInfo(obj)
        with _cache_lock:
            _pvc_cache[obj] = info
    return info


# --------------------------------------------------------------------------- object store access


def get_pvc(objects: Any, namespace: str, name: str) -> PVCInfo | None:
    obj = objects.get(PVC, namespace, name) if objects is not None else None
    return None if obj is None else pvc_info(obj)


def get_pv(objects: Any, name: str) -> PVInfo | None:
    obj = objects.get(PV, "", name) if objects is not None else None
    return None if obj is None else pv_info(obj)


def get_object(objects: Any, kind: str, name: str) -> KubeObject | None:
    return objects.get(kind, "", name) if objects is not None else None


def list_objects(objects: Any, kind: str) -> list[KubeObject]:
    return objects.list(kind) if objects is not None else []


# --------------------------------------------------------------------------- pods and claims


def claim_name(pod: Pod, volume: Volume) -> str | None:
    """The PVC a volume uses: its claimName, or ``<pod>-<volume>`` for a generic ephemeral volume."""
    kind = volume.source_kind
    if kind == "persistentVolumeClaim":
        return _str(volume.source.get("claimName"))
    if kind == "ephemeral":
        return f"{pod.metadata.name}-{volume.name}"
    return None


def volume_is_for_pod(pod: Pod, pvc: PVCInfo) -> str | None:
    """upstream ephemeral.VolumeIsForPod: the error text when the claim is not owned by the pod, else None."""
    for ref in pvc.owner_references:
        if ref.controller:
            if ref.uid == pod.metadata.uid:
                return None
            break
    return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.metadata.namespace}/{pod.metadata.name} "
            f"(pod is not owner)")


def storage_class_binding_mode(sc: KubeObject) -> str | None:
    """A StorageClass's volumeBindingMode. An absent field gets the API server's default (Immediate); an
    explicit null stands for a class built without defaulting (Go's nil pointer) and gives None."""
    raw = sc.raw
    if "volumeBindingMode" not in raw:
        return IMMEDIATE
    v = raw.get("volumeBindingMode")
    return None if v is None else _str(v)


def label_zones_to_set(value: str) -> set[str] | None:
    """upstream LabelZonesToSet: zones joined by "__"; None when an element is empty."""
    out: set[str] = set()
    for z in value.split(MULTI_ZONE_DELIMITER):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return out


def match_topology_selector_terms(terms: Any, labels: Mapping[str, str]) -> bool:
    """upstream MatchTopologySelectorTerms: no terms match everything; an empty term matches nothing."""
    if not isinstance(terms, list) or not terms:
        return True
    for term in terms:
        exprs = _map(term).get("matchLabelExpressions")
        if not isinstance(exprs, list) or not exprs:
            continue
        ok = True
        for e in exprs:
            em = _map(e)
            values = em.get("values")
            key = _str(em.get("key"))
            if not isinstance(values, list) or not values or key not in labels \
                    or labels[key] not in [_str(v) for v in values]:
                ok = False
                break
        if ok:
            return True
    return False


def csi_node_migrated_plugins(csi_node: KubeObject | None) -> frozenset[str]:
    if csi_node is None:
        return frozenset()
    mpa = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return frozenset(mpa.split(",")) if mpa else frozenset()


def deep_merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``base`` with ``patch`` merged in (mappings recursively; None deletes a key)."""
    out: dict[str, Any] = dict(base)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def with_changes(obj: KubeObject, patch: Mapping[str, Any]) -> KubeObject:
    """A new KubeObject: ``obj``'s manifest with ``patch`` merged in."""
    return KubeObject.from_dict(deep_merge(obj.raw, patch), obj.kind, strict=None)


def sort_by_request(claims: Sequence[PVCInfo]) -> list[PVCInfo]:
    """Claims ordered by requested storage, smallest first (upstream byPVCSize; ties keep their order)."""
    return sorted(claims, key=_request_key)


def _request_key(c: PVCInfo) -> Quantity:
    return c.request
