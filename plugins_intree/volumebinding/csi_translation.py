"""In-tree volume plugins migrated to CSI drivers (the parts of upstream's csi-translation-lib the scheduler uses).

A migrated in-tree volume is scheduled as its CSI equivalent: NodeVolumeLimits counts it against the CSI
driver's attach limit under the CSI volume handle, and VolumeBinding checks the translated PV's node
affinity, in which the zone labels become the driver's topology key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlparse

import attrs

from plugins_intree.volumebinding.storage import (
    CSI_MIGRATION_PORTWORX,
    MULTI_ZONE_DELIMITER,
    PVInfo,
    gate_enabled,
)
from scheduling_framework.api.pod import Volume
from scheduling_framework.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm

LABEL_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_REGION: Final = "topology.kubernetes.io/region"
LABEL_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"

AWS_EBS: Final = "kubernetes.io/aws-ebs"
GCE_PD: Final = "kubernetes.io/gce-pd"
AZURE_DISK: Final = "kubernetes.io/azure-disk"
AZURE_FILE: Final = "kubernetes.io/azure-file"
CINDER: Final = "kubernetes.io/cinder"
VSPHERE: Final = "kubernetes.io/vsphere-volume"
PORTWORX: Final = "kubernetes.io/portworx-volume"
RBD: Final = "kubernetes.io/rbd"


@attrs.frozen(slots=True)
class InTreePlugin:
    """An in-tree plugin the translation library knows: its CSI driver, volume source field, topology key."""

    name: str
    driver: str
    source: str
    topology_key: str = ""


PLUGINS: Final[tuple[InTreePlugin, ...]] = (
    InTreePlugin(GCE_PD, "pd.csi.storage.gke.io", "gcePersistentDisk", "topology.gke.io/zone"),
    InTreePlugin(AWS_EBS, "ebs.csi.aws.com", "awsElasticBlockStore", "topology.ebs.csi.aws.com/zone"),
    InTreePlugin(CINDER, "cinder.csi.openstack.org", "cinder", "topology.cinder.csi.openstack.org/zone"),
    InTreePlugin(AZURE_DISK, "disk.csi.azure.com", "azureDisk", "topology.disk.csi.azure.com/zone"),
    InTreePlugin(AZURE_FILE, "file.csi.azure.com", "azureFile"),
    InTreePlugin(VSPHERE, "csi.vsphere.vmware.com", "vsphereVolume"),
    InTreePlugin(PORTWORX, "pxd.portworx.com", "portworxVolume"),
    InTreePlugin(RBD, "rbd.csi.ceph.com", "rbd"),
)
BY_NAME: Final[Mapping[str, InTreePlugin]] = {p.name: p for p in PLUGINS}
BY_SOURCE: Final[Mapping[str, InTreePlugin]] = {p.source: p for p in PLUGINS}
MIGRATABLE_SOURCES: Final = frozenset(BY_SOURCE)


def plugin_for_pv(pv: PVInfo) -> InTreePlugin | None:
    """upstream IsPVMigratable / GetInTreePluginNameFromSpec for a PV."""
    for p in PLUGINS:
        if isinstance(pv.spec.get(p.source), Mapping):
            return p
    return None


def plugin_for_volume(volume: Volume) -> InTreePlugin | None:
    """upstream IsInlineMigratable / GetInTreePluginNameFromSpec for a pod volume."""
    return BY_SOURCE.get(volume.source_kind)


def migration_on_for_plugin(plugin: str, handle: Any) -> bool:
    """Whether migration of ``plugin`` to CSI is on cluster-wide (upstream isCSIMigrationOnForPlugin)."""
    if plugin in (AWS_EBS, GCE_PD, AZURE_DISK, CINDER):
        return True
    if plugin == PORTWORX:
        return gate_enabled(handle, CSI_MIGRATION_PORTWORX)
    return False


def migrated_on_node(plugin: str, migrated_plugins: frozenset[str], has_csi_node: bool, handle: Any) -> bool:
    """upstream isCSIMigrationOn: on cluster-wide and listed in the node's CSINode migrated-plugins annotation."""
    if not has_csi_node or not plugin:
        return False
    return migration_on_for_plugin(plugin, handle) and plugin in migrated_plugins


class TranslationError(ValueError):
    pass


def _ebs_volume_id(kube_id: str) -> str:
    """upstream KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<vol-id> or a bare volume id."""
    if not kube_id.startswith("aws://"):
        return kube_id
    u = urlparse(kube_id)
    aws_id = u.path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise TranslationError(f"Invalid format for AWS volume ({kube_id})")
    return aws_id


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for z in zones:
        parts = z.split("-")
        if len(parts) != 3:
            raise TranslationError(f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {z}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return regions.pop()


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def volume_handle(plugin: InTreePlugin, source: Mapping[str, Any], pv_labels: Mapping[str, str] | None) -> str:
    """The CSI volume handle the translation gives an in-tree volume source (PV or inline)."""
    if plugin.name == AWS_EBS:
        return _ebs_volume_id(_str(source.get("volumeID")))
    if plugin.name == GCE_PD:
        pd = _str(source.get("pdName"))
        if pv_labels is None:
            return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{pd}"
        label = pv_labels.get(LABEL_BETA_ZONE) or pv_labels.get(LABEL_ZONE) or ""
        zones = label.split(MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return f"projects/UNSPECIFIED/zones/{zones[0]}/disks/{pd}"
        if len(zones) > 1:
            return f"projects/UNSPECIFIED/regions/{_gce_region(zones)}/disks/{pd}"
        return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{pd}"
    if plugin.name == AZURE_DISK:
        return _str(source.get("diskURI"))
    if plugin.name in (CINDER, PORTWORX):
        return _str(source.get("volumeID"))
    if plugin.name == VSPHERE:
        return _str(source.get("volumePath"))
    if plugin.name == AZURE_FILE:
        return _str(source.get("shareName"))
    return _str(source.get("image"))


@attrs.frozen(slots=True)
class TranslatedPV:
    """The parts of a translated (CSI) PV the scheduler reads."""

    driver: str
    handle: str
    node_affinity: NodeSelector | None

    def node_affinity_matches(self, labels: Mapping[str, str]) -> bool:
        return self.node_affinity is None or self.node_affinity.matches("", labels)


def _topology_labels(pv: PVInfo) -> tuple[str, str]:
    """upstream getTopologyLabel: the GA or beta zone/region label pair the PV uses."""
    terms = pv.node_affinity.node_selector_terms if pv.node_affinity is not None else ()
    keys = {r.key for t in terms for r in t.match_expressions}
    if LABEL_ZONE in keys:
        return LABEL_ZONE, LABEL_REGION
    if LABEL_BETA_ZONE in keys:
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    if LABEL_ZONE in pv.labels:
        return LABEL_ZONE, LABEL_REGION
    if LABEL_BETA_ZONE in pv.labels:
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    return LABEL_ZONE, LABEL_REGION


def _translate_topology(pv: PVInfo, csi_key: str) -> NodeSelector | None:
    """upstream translateTopologyFromInTreeToCSI, on the PV's required node affinity."""
    zone_label, region_label = _topology_labels(pv)
    terms = [list(t.match_expressions) for t in pv.node_affinity.node_selector_terms] \
        if pv.node_affinity is not None else []
    orig = list(pv.node_affinity.node_selector_terms) if pv.node_affinity is not None else []
    fields = [t.match_fields for t in orig]
    valid = [t.valid for t in orig]
    has_zone = any(r.key == zone_label and r.values for t in terms for r in t)
    if has_zone:
        terms = [[attrs.evolve(r, key=csi_key) if r.key == zone_label else r for r in t] for t in terms]
    elif zone_label in pv.labels:
        zones = sorted({z.strip() for z in pv.labels[zone_label].split(MULTI_ZONE_DELIMITER) if z.strip()})
        if zones:
            req = NodeSelectorRequirement(csi_key, "In", tuple(zones))
            if not terms:
                terms, fields, valid = [[]], [()], [True]
            terms = [[*t, req] for t in terms]
    if region_label == LABEL_BETA_REGION and any(r.key == region_label and r.values for t in terms for r in t):
        terms = [[attrs.evolve(r, key=LABEL_REGION) if r.key == region_label else r for r in t] for t in terms]
    if not terms:
        return pv.node_affinity
    return NodeSelector(tuple(NodeSelectorTerm(tuple(t), tuple(f), v)
                              for t, f, v in zip(terms, fields, valid, strict=True)))


def translate_pv(pv: PVInfo, plugin: InTreePlugin) -> TranslatedPV:
    """upstream TranslateInTreePVToCSI, reduced to driver, handle and node affinity."""
    source = pv.spec.get(plugin.source)
    handle = volume_handle(plugin, source if isinstance(source, Mapping) else {}, pv.labels)
    affinity = _translate_topology(pv, plugin.topology_key) if plugin.topology_key else pv.node_affinity
    return TranslatedPV(plugin.driver, handle, affinity)


def translate_inline(volume: Volume, plugin: InTreePlugin) -> TranslatedPV:
    """upstream TranslateInTreeInlineVolumeToCSI, reduced to driver and handle."""
    return TranslatedPV(plugin.driver, volume_handle(plugin, volume.source, None), None)
