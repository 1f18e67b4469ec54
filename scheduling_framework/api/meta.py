"""ObjectMeta and the pieces every object shares."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from scheduling_framework.api._parse import as_bool, as_list, as_map, as_str, as_time, str_map
from scheduling_framework.api.clients import as_manifest
from scheduling_framework.api.fields import check_unknown_fields
from scheduling_framework.api.frozen import freeze_map, shared_labels
from scheduling_framework.errors import ManifestError, ValidationError, brief_str


@attrs.frozen(slots=True)
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool = False

    @classmethod
    def from_dict(cls, d: Any, path: str) -> OwnerReference:
        m = as_map(d, path)
        return cls(as_str(m.get("apiVersion"), f"{path}.apiVersion"), as_str(m.get("kind"), f"{path}.kind"),
                   as_str(m.get("name"), f"{path}.name"), as_str(m.get("uid"), f"{path}.uid"),
                   as_bool(m.get("controller"), f"{path}.controller"))


@attrs.frozen(slots=True)
class ObjectMeta:
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict, converter=shared_labels)
    annotations: Mapping[str, str] = attrs.field(factory=dict, converter=freeze_map)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    generate_name: str = ""

    @classmethod
    def from_dict(cls, d: Any, path: str = "metadata", namespaced: bool = False) -> ObjectMeta:
        m = as_map(d, path)
        ns = as_str(m.get("namespace"), f"{path}.namespace")
        if namespaced and not ns:
            ns = "default"
        owners = tuple(OwnerReference.from_dict(o, f"{path}.ownerReferences[{i}]")
                       for i, o in enumerate(as_list(m.get("ownerReferences"), f"{path}.ownerReferences")))
        return cls(
            name=as_str(m.get("name"), f"{path}.name"),
            namespace=ns,
            uid=as_str(m.get("uid"), f"{path}.uid"),
            labels=str_map(m.get("labels"), f"{path}.labels"),
            annotations=str_map(m.get("annotations"), f"{path}.annotations"),
            owner_references=owners,
            creation_timestamp=as_time(m.get("creationTimestamp"), f"{path}.creationTimestamp"),
            deletion_timestamp=as_time(m.get("deletionTimestamp"), f"{path}.deletionTimestamp"),
            generate_name=as_str(m.get("generateName"), f"{path}.generateName"),
        )

    def controller_ref(self) -> OwnerReference | None:
        for o in self.owner_references:
            if o.controller:
                return o
        return None


class MetadataAccessors:
    """``name``, ``namespace``, ``uid``, ``labels`` and ``annotations`` read through ``metadata``; shared by
    Pod, Node and KubeObject (``namespace`` is "" for cluster-scoped objects, as in the API)."""

    __slots__ = ()
    metadata: ObjectMeta

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        return self.metadata.uid

    @property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.labels

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.metadata.annotations


# Namespaced kinds whose error messages show the defaulted namespace.
_DEFAULT_NS_KINDS = ("Pod", "PersistentVolumeClaim", "ResourceClaim", "ResourceClaimTemplate")


def object_ref(kind: str, manifest: Any) -> str:
    """``Kind namespace/name`` (or ``Kind name``) for error messages, from a raw manifest."""
    meta = manifest.get("metadata") if isinstance(manifest, Mapping) else None
    if not isinstance(meta, Mapping):
        return kind
    name = brief_str(meta.get("name") or meta.get("generateName") or "<unnamed>")
    ns = brief_str(meta.get("namespace") or ("default" if kind in _DEFAULT_NS_KINDS else ""))
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def reraise_for(kind: str, manifest: Any, err: ValidationError) -> ManifestError:
    """Wrap a field-level error into one naming the object."""
    return ManifestError(object_ref(kind, manifest), err.detail, err.path)


def check_kind(manifest: Any, kind: str, strict: bool | None = None) -> Mapping[str, Any]:
    """The manifest of ``manifest`` (a mapping, or a client object: ``api.clients``) after checking its kind
    and, unless ``strict`` is None, its fields (unknown ones warn, or with ``strict=True`` are an error)."""
    m = as_manifest(manifest, kind)
    got = m.get("kind")
    if got not in (None, kind):
        raise ManifestError(object_ref(kind, m), f'expected kind "{kind}", got "{brief_str(got)}"', "kind")
    if strict is not None:
        check_unknown_fields(m, kind, object_ref(kind, m), strict, stacklevel=4)
    return m
