"""The Node as the scheduler reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.api._parse import as_bool, as_int, as_list, as_map, as_str, str_tuple
from scheduling_framework.api.frozen import freeze_map
from scheduling_framework.api.meta import MetadataAccessors, ObjectMeta, check_kind, reraise_for
from scheduling_framework.api.packed import PackedManifest, unpacked
from scheduling_framework.api.pod import resource_list
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.taints import Taint
from scheduling_framework.errors import ValidationError


@attrs.frozen(slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int = 0


@attrs.frozen(slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str = ""


@attrs.frozen(slots=True)
class NodeSpec:
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()


@attrs.frozen(slots=True)
class NodeStatus:
    capacity: Mapping[str, Quantity] = attrs.field(factory=dict, converter=freeze_map)
    allocatable: Mapping[str, Quantity] = attrs.field(factory=dict, converter=freeze_map)
    images: tuple[ContainerImage, ...] = ()
    conditions: tuple[NodeCondition, ...] = ()
    #: ``status.declaredFeatures``: the features the kubelet says this node supports (NodeDeclaredFeatures).
    declared_features: tuple[str, ...] = ()


@attrs.frozen(slots=True, eq=False)
class Node(MetadataAccessors):
    """A v1 Node. ``Node.from_dict(manifest)`` applies API defaulting: allocatable defaults to capacity."""

    metadata: ObjectMeta
    spec: NodeSpec
    status: NodeStatus
    _raw: Mapping[str, Any] = attrs.field(repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> Node:
        """A Node from its manifest (a dict or a client object); ``strict`` as for ``Pod.from_dict``."""
        manifest = m = check_kind(manifest, "Node", strict)
        try:
            meta = ObjectMeta.from_dict(m.get("metadata"), "metadata")
            if not meta.name:
                raise ValidationError("Required value: name is required", "metadata.name")
            spec_m = as_map(m.get("spec"), "spec")
            taints = tuple(Taint.from_dict(t, f"spec.taints[{i}]")
                           for i, t in enumerate(as_list(spec_m.get("taints"), "spec.taints")))
            spec = NodeSpec(as_bool(spec_m.get("unschedulable"), "spec.unschedulable"), taints)
            st = as_map(m.get("status"), "status")
            capacity = resource_list(st.get("capacity"), "status.capacity")
            alloc_raw = st.get("allocatable")
            allocatable = dict(capacity) if alloc_raw is None else resource_list(alloc_raw, "status.allocatable")
            images = []
            for i, im in enumerate(as_list(st.get("images"), "status.images")):
                imm = as_map(im, f"status.images[{i}]")
                images.append(ContainerImage(str_tuple(imm.get("names"), f"status.images[{i}].names"),
                                             as_int(imm.get("sizeBytes"), f"status.images[{i}].sizeBytes")))
            conds = []
            for i, c in enumerate(as_list(st.get("conditions"), "status.conditions")):
                cm = as_map(c, f"status.conditions[{i}]")
                conds.append(NodeCondition(as_str(cm.get("type"), f"status.conditions[{i}].type"),
                                           as_str(cm.get("status"), f"status.conditions[{i}].status"),
                                           as_str(cm.get("reason"), f"status.conditions[{i}].reason")))
            declared = str_tuple(st.get("declaredFeatures"), "status.declaredFeatures")
            status = NodeStatus(capacity, allocatable, tuple(images), tuple(conds), declared)
        except ValidationError as e:
            raise reraise_for("Node", manifest, e) from None
        if not meta.uid:
            meta = attrs.evolve(meta, uid=meta.name)
        return cls(meta, spec, status, m)

    def to_dict(self) -> dict[str, Any]:
        return unpacked(self._raw)

    def raw_manifest(self) -> Mapping[str, Any]:
        """The manifest itself, not a copy: read it, never change it (``to_dict()`` gives a copy)."""
        return self._raw

    def with_packed_manifest(self) -> Node:
        """The same node, its manifest kept packed (:mod:`~scheduling_framework.api.packed`): for big dumps."""
        return Node(self.metadata, self.spec, self.status, PackedManifest.pack(self._raw))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Node):
            return NotImplemented
        return (self.metadata, self.spec, self.status) == (other.metadata, other.spec, other.status)

    def __hash__(self) -> int:
        return hash(self.metadata.name)

    def __repr__(self) -> str:
        return f"Node({self.name})"
