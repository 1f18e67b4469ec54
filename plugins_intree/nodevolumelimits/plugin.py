"""NodeVolumeLimits (upstream CSILimits): a node may not attach more volumes of a CSI driver than its CSINode
allows (``spec.drivers[].allocatable.count``).

Volumes are counted by unique ``<driver>/<volume handle>``: the volumes of the pods already on the node, then
VolumeAttachments to the node for volumes no such pod uses; a volume the incoming pod shares with a pod on the
node costs nothing more. Bound claims count under their PV's CSI source, unbound claims under their
StorageClass's provisioner (with a handle unique to the claim), and in-tree volumes under the CSI driver they
migrated to: AWS EBS, GCE PD, Azure Disk and Cinder volumes always (once the node has a CSINode), Portworx
volumes when the node's CSINode lists the plugin in ``storage.alpha.kubernetes.io/migrated-plugins``, as
upstream's ``isCSIMigrationOn`` of this plugin decides (VolumeBinding reads the annotation for all of them).

The per-plugin limits of EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits were removed upstream once
those plugins migrated to CSI; their volumes are counted here, against the CSI driver's limit.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from plugins_intree.volumebinding.csi_translation import (
    AWS_EBS,
    AZURE_DISK,
    BY_NAME,
    CINDER,
    GCE_PD,
    PORTWORX,
    TranslationError,
    migrated_on_node,
    plugin_for_pv,
    plugin_for_volume,
    translate_inline,
    translate_pv,
)
from plugins_intree.volumebinding.storage import (
    CSI_DRIVER,
    CSI_NODE,
    STORAGE_CLASS,
    VOLUME_ATTACHMENT,
    VOLUME_LIMIT_SCALING,
    PVCInfo,
    claim_name,
    csi_node_migrated_plugins,
    gate_enabled,
    get_object,
    get_pv,
    get_pvc,
    list_objects,
    not_found,
    volume_is_for_pod,
)
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME: Final = "NodeVolumeLimits"
STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"


# in-tree plugins whose volumes this plugin counts under their CSI driver without the CSINode annotation
_ALWAYS_MIGRATED: Final = frozenset({AWS_EBS, GCE_PD, AZURE_DISK, CINDER})


def csi_migration_on(plugin: str, migrated: frozenset[str], has_csi_node: bool, handle: Any) -> bool:
    """upstream nodevolumelimits ``isCSIMigrationOn``: the node needs a CSINode; EBS, GCE PD, Azure Disk and
    Cinder count as migrated outright; Portworx needs its gate and the CSINode's migrated-plugins annotation."""
    if not has_csi_node or not plugin:
        return False
    if plugin in _ALWAYS_MIGRATED:
        return True
    return plugin == PORTWORX and migrated_on_node(plugin, migrated, has_csi_node, handle)


class _PVCNotFound(Exception):
    """The incoming pod's claim does not exist: the pod cannot run anywhere until it is created."""


class _VolumeError(Exception):
    """Any other problem counting a pod's volumes (upstream returns it as an Error status)."""


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def volume_limits(csi_node: KubeObject | None) -> dict[str, int]:
    """Attach limits by driver name, from the CSINode's drivers that report one."""
    if csi_node is None:
        return {}
    out: dict[str, int] = {}
    drivers = csi_node.spec.get("drivers")
    for d in drivers if isinstance(drivers, list) else ():
        count = _map(_map(d).get("allocatable")).get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            out[str(_map(d).get("name", ""))] = count
    return out


class _CycleData:
    """Per-cycle data: the VolumeAttachments by node name (built once, read by every Filter call)."""

    __slots__ = ("attachments",)

    def __init__(self, attachments: dict[str, list[KubeObject]]) -> None:
        self.attachments = attachments

    def clone(self) -> _CycleData:
        return self


class NodeVolumeLimits:
    """PreFilter (SKIP when the pod has no claim, generic ephemeral or migratable in-tree volume) and Filter."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        # Unbound claims get this prefix in their made-up volume handle, so they never collide with real ones.
        self.random_volume_id_prefix = secrets.token_hex(16)
        self.enable_volume_limit_scaling = gate_enabled(handle, VOLUME_LIMIT_SCALING)

    @property
    def objects(self) -> Any:
        return getattr(self.handle, "objects", None)

    # PreFilter ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        for v in pod.spec.volumes:
            kind = v.source_kind
            if kind in ("persistentVolumeClaim", "ephemeral") or plugin_for_volume(v) is not None:
                by_node: dict[str, list[KubeObject]] = {}
                for va in list_objects(self.objects, VOLUME_ATTACHMENT):
                    node_name = _map(va.spec).get("nodeName")
                    if isinstance(node_name, str):
                        by_node.setdefault(node_name, []).append(va)
                state.write(STATE_KEY, _CycleData(by_node))
                return None, None
        return None, Status(Code.SKIP)

    # Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        csi_node = get_object(self.objects, CSI_NODE, node.metadata.name)
        new_volumes: dict[str, str] = {}
        try:
            self.filter_attachable_volumes(pod, csi_node, True, new_volumes)
        except _PVCNotFound as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(e))
        except _VolumeError as e:
            return Status(Code.ERROR, str(e))
        if not new_volumes:
            return None

        if self.enable_volume_limit_scaling:
            for driver in sorted(set(new_volumes.values())):
                if not self._driver_installed(driver, csi_node):
                    return Status(Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node")

        limits = volume_limits(csi_node)
        if not limits:
            return None

        attached: dict[str, str] = {}
        for pi in node_info.pods:
            if not pi.pod.spec.volumes:
                continue
            try:
                self.filter_attachable_volumes(pi.pod, csi_node, False, attached)
            except (_PVCNotFound, _VolumeError) as e:
                return Status(Code.ERROR, str(e))

        attached_count: Counter[str] = Counter()
        for unique_name, driver in attached.items():
            # a volume already used on the node costs the incoming pod nothing
            new_volumes.pop(unique_name, None)
            attached_count[driver] += 1
        data = state.get(STATE_KEY)
        attachments = data.attachments.get(node.metadata.name, ()) if isinstance(data, _CycleData) else \
            [va for va in list_objects(self.objects, VOLUME_ATTACHMENT)
             if _map(va.spec).get("nodeName") == node.metadata.name]
        for va in attachments:
            info = self._attachment_volume(va, csi_node)
            if info is not None and info[0] not in attached:
                attached_count[info[1]] += 1

        new_count: Counter[str] = Counter(new_volumes.values())
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count[driver] + count > limit:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    # counting -------------------------------------------------------------------------------------
    def filter_attachable_volumes(self, pod: Pod, csi_node: KubeObject | None, new_pod: bool,
                                  result: dict[str, str]) -> None:
        """Add ``<driver>/<handle> -> driver`` for each attachable volume of ``pod`` to ``result``."""
        objects = self.objects
        migrated = csi_node_migrated_plugins(csi_node)
        has_csi_node = csi_node is not None
        ns = pod.metadata.namespace
        for v in pod.spec.volumes:
            name = claim_name(pod, v)
            if name is None:
                plugin = plugin_for_volume(v)
                if plugin is None or not csi_migration_on(plugin.name, migrated, has_csi_node, self.handle):
                    continue
                try:
                    translated = translate_inline(v, plugin)
                except TranslationError as e:
                    raise _VolumeError(f"converting volume({v.name}) from inline to csi: {e}") from None
                result[f"{translated.driver}/{translated.handle}"] = translated.driver
                continue
            if not name:
                raise _VolumeError("PersistentVolumeClaim had no name")
            pvc = get_pvc(objects, ns, name)
            if pvc is None:
                if new_pod:
                    raise _PVCNotFound(f"looking up PVC {ns}/{name}: {not_found('persistentvolumeclaim', name)}")
                continue  # an existing pod's missing claim is not counted
            if v.source_kind == "ephemeral":
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise _VolumeError(err)
            driver, handle = self._csi_driver_info(csi_node, migrated, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    def _csi_driver_info(self, csi_node: KubeObject | None, migrated: frozenset[str], pvc: PVCInfo
                         ) -> tuple[str, str]:
        """The CSI driver and volume handle of a claim (of its migrated CSI driver for in-tree volumes)."""
        if not pvc.volume_name:
            return self._csi_driver_info_from_class(csi_node, migrated, pvc)
        pv = get_pv(self.objects, pvc.volume_name)
        if pv is None:
            # the PV may be gone or not created yet for a pre-bound claim: count by the class instead
            return self._csi_driver_info_from_class(csi_node, migrated, pvc)
        if isinstance(pv.spec.get("csi"), Mapping):
            return pv.csi_driver, pv.csi_handle
        plugin = plugin_for_pv(pv)
        if plugin is None or not csi_migration_on(plugin.name, migrated, csi_node is not None, self.handle):
            return "", ""
        try:
            translated = translate_pv(pv, plugin)
        except TranslationError:
            return "", ""
        return translated.driver, translated.handle

    def _csi_driver_info_from_class(self, csi_node: KubeObject | None, migrated: frozenset[str], pvc: PVCInfo
                                    ) -> tuple[str, str]:
        # A claim without a class must use immediate binding and is bound before scheduling: not counted.
        if not pvc.storage_class:
            return "", ""
        sc = get_object(self.objects, STORAGE_CLASS, pvc.storage_class)
        if sc is None:
            return "", ""
        handle = f"{self.random_volume_id_prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = sc.raw.get("provisioner")
        provisioner = provisioner if isinstance(provisioner, str) else ""
        plugin = BY_NAME.get(provisioner)
        if plugin is not None:
            if not csi_migration_on(provisioner, migrated, csi_node is not None, self.handle):
                return "", ""
            return plugin.driver, handle
        return provisioner, handle

    def _attachment_volume(self, va: KubeObject, csi_node: KubeObject | None) -> tuple[str, str] | None:
        """The ``(<driver>/<handle>, driver)`` a VolumeAttachment attaches, or None."""
        spec = _map(va.spec)
        attacher = spec.get("attacher")
        if not isinstance(attacher, str) or not attacher:
            return None
        source = _map(spec.get("source"))
        pv_name = source.get("persistentVolumeName")
        handle = ""
        if isinstance(pv_name, str) and pv_name:
            pv = get_pv(self.objects, pv_name)
            if pv is None:
                return None
            if isinstance(pv.spec.get("csi"), Mapping):
                handle = pv.csi_handle
            else:
                plugin = plugin_for_pv(pv)
                if plugin is None:
                    return None
                try:
                    handle = translate_pv(pv, plugin).handle
                except TranslationError:
                    return None
        else:
            inline = _map(_map(source.get("inlineVolumeSpec")).get("csi"))
            handle = str(inline.get("volumeHandle") or "")
        if not handle:
            return None
        return f"{attacher}/{handle}", attacher

    def _driver_installed(self, driver: str, csi_node: KubeObject | None) -> bool:
        """With VolumeLimitScaling, a driver whose CSIDriver sets preventPodSchedulingIfMissing must be
        installed on the node (listed in its CSINode)."""
        csi_driver = get_object(self.objects, CSI_DRIVER, driver)
        if csi_driver is None or _map(csi_driver.spec).get("preventPodSchedulingIfMissing") is not True:
            return True
        if csi_node is None:
            return False
        drivers = csi_node.spec.get("drivers")
        return any(_map(d).get("name") == driver for d in (drivers if isinstance(drivers, list) else ()))
