"""Namespaces and every other object kind the scheduler may read, kept as parsed metadata + raw manifest."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.api.clients import as_manifest
from scheduling_framework.api.meta import MetadataAccessors, ObjectMeta, check_kind, reraise_for
from scheduling_framework.errors import ManifestError, ValidationError

# Kinds whose objects live in a namespace (metadata.namespace defaults to "default").
NAMESPACED_KINDS = frozenset({
    "Pod", "Service", "ReplicationController", "ReplicaSet", "StatefulSet", "Deployment", "DaemonSet", "Job",
    "PersistentVolumeClaim", "PodDisruptionBudget", "ResourceClaim", "ResourceClaimTemplate", "Workload", "PodGroup",
})


def api_group(manifest: Mapping[str, Any]) -> str:
    """The API group of a manifest's ``apiVersion`` (``scheduling.x-k8s.io`` of ``scheduling.x-k8s.io/v1alpha1``):
    "" for the core group (``v1``) and when the manifest names no apiVersion. Objects of one kind in two groups
    (Kubernetes' PodGroup and scheduler-plugins' one) are two objects to the API server."""
    v = manifest.get("apiVersion")
    return v.rpartition("/")[0] if isinstance(v, str) else ""


@attrs.frozen(slots=True, eq=False)
class KubeObject(MetadataAccessors):
    """Any object: its kind, parsed metadata and the manifest (plugins read what they need from ``raw``)."""

    kind: str
    metadata: ObjectMeta
    raw: Mapping[str, Any] = attrs.field(repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, kind: str | None = None, *, strict: bool | None = False) -> KubeObject:
        """Any object from its manifest (a dict or a client object); ``strict`` as for ``Pod.from_dict`` (kinds
        outside the API schema the package knows are not checked)."""
        manifest = as_manifest(manifest, kind or "object")
        raw_kind = manifest.get("kind")
        if kind is None and raw_kind is not None and not isinstance(raw_kind, str):
            raise ManifestError("object", f"expected a string, got {type(raw_kind).__name__}", "kind")
        k = kind or str(raw_kind or "")
        if not k:
            raise ManifestError("object", "Required value: kind is required", "kind")
        check_kind(manifest, k, strict)
        try:
            meta = ObjectMeta.from_dict(manifest.get("metadata"), "metadata", namespaced=k in NAMESPACED_KINDS)
            if not meta.name:
                raise ValidationError("Required value: name is required", "metadata.name")
        except ValidationError as e:
            raise reraise_for(k, manifest, e) from None
        return cls(k, meta, manifest)

    @property
    def api_group(self) -> str:
        """The API group of ``apiVersion`` (see :func:`api_group`)."""
        return api_group(self.raw)

    @property
    def spec(self) -> Mapping[str, Any]:
        s = self.raw.get("spec")
        return s if isinstance(s, Mapping) else {}

    @property
    def status(self) -> Mapping[str, Any]:
        s = self.raw.get("status")
        return s if isinstance(s, Mapping) else {}

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.raw))

    def __repr__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}({ns}{self.name})"


# Namespaces carry nothing the scheduler reads beyond their labels, so they are plain KubeObjects.
Namespace = KubeObject
