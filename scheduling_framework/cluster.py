"""Reading a cluster from YAML: multi-document files or ``kind: List`` (``kubectl get -o yaml`` output)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import yaml

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.errors import ManifestError, ValidationError
from scheduling_framework.warning_list import Warnings

try:  # the C loader is many times faster on big dumps; fall back to the pure-Python one
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


# Kinds something in the scheduler reads (plugins, admission, workload expansion). Objects of other kinds
# are kept in ``Cluster.objects`` (a third-party plugin may read them) but reported as ignored.
# Extend with :func:`register_object_kinds` (e.g. from a plugin package's registration hook).
READ_KINDS: set[str] = {
    "Namespace", "PodDisruptionBudget", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
    "Deployment", "DaemonSet", "Job", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
    "CSIDriver", "VolumeAttachment", "PriorityClass",
    # DRA objects (DynamicResources)
    "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass",
}


def register_object_kinds(*kinds: str) -> None:
    """Declare kinds a plugin reads, so that loading a cluster does not report them as ignored."""
    READ_KINDS.update(kinds)


@attrs.define
class Cluster:
    """Nodes, pods and other objects of a cluster file; ``warnings`` says what loading ignored or assumed."""

    nodes: list[Node] = attrs.field(factory=list)
    pods: list[Pod] = attrs.field(factory=list)
    objects: list[KubeObject] = attrs.field(factory=list)
    warnings: Warnings = attrs.field(factory=Warnings)

    @property
    def pending_pods(self) -> list[Pod]:
        return [p for p in self.pods if not p.spec.node_name]

    @property
    def bound_pods(self) -> list[Pod]:
        return [p for p in self.pods if p.spec.node_name]


def load_yaml_documents(text: str, source: str = "<input>") -> list[Any]:
    """All documents of a YAML stream (safe loading only); a syntax error names the source and line."""
    try:
        return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ValidationError(f"invalid YAML at {where}: {problem}") from None


def _flatten(docs: Iterable[Any]) -> Iterable[tuple[str, Any]]:
    for i, d in enumerate(docs):
        if isinstance(d, Mapping) and (d.get("kind") == "List" or str(d.get("kind", "")).endswith("List")) \
                and isinstance(d.get("items"), list):
            item_kind = str(d.get("kind"))[:-4] if d.get("kind") != "List" else ""
            for j, item in enumerate(d["items"]):
                if item_kind and isinstance(item, Mapping) and "kind" not in item:
                    item = {**item, "kind": item_kind}
                yield f"document {i + 1} items[{j}]", item
        else:
            yield f"document {i + 1}", d


def cluster_from_documents(docs: Iterable[Any]) -> Cluster:
    """Parse manifests into a Cluster; every error names the document, the object and the field path."""
    c = Cluster()
    for where, d in _flatten(docs):
        if not isinstance(d, Mapping):
            raise ManifestError(where, f"expected an object manifest, got {type(d).__name__}")
        kind = d.get("kind")
        try:
            if kind == "Node":
                c.nodes.append(Node.from_dict(d))
            elif kind == "Pod":
                c.pods.append(Pod.from_dict(d))
            elif isinstance(kind, str) and kind:
                c.objects.append(KubeObject.from_dict(d))
            else:
                raise ManifestError("object", "Required value: kind is required", "kind")
        except ManifestError as e:
            raise ManifestError(f"{where}: {e.obj}", e.detail, e.path) from None
    names: set[str] = set()
    for n in c.nodes:
        if n.name in names:
            raise ManifestError(f"Node {n.name}", "Duplicate value: a node with this name appears twice",
                                "metadata.name")
        names.add(n.name)
    keys: set[str] = set()
    for p in c.pods:
        if p.key in keys:
            raise ManifestError(f"Pod {p.key}", "Duplicate value: a pod with this namespace/name appears twice",
                                "metadata.name")
        keys.add(p.key)
    for o in c.objects:
        if o.kind not in READ_KINDS:
            c.warnings.add_item(f'ignored object(s) of kind "{o.kind}" (nothing in the scheduler reads it)',
                                f"{o.namespace}/{o.name}" if o.namespace else o.name)
    return c


def load_cluster(source: str | os.PathLike[str]) -> Cluster:
    """Read a cluster YAML file (``-`` is not special: pass the text to ``cluster_from_text`` instead)."""
    path = os.fspath(source)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        raise ValidationError(f"cannot read cluster file {path}: {e.strerror or e}") from None
    return cluster_from_documents(load_yaml_documents(text, path))


def cluster_from_text(text: str, source: str = "<input>") -> Cluster:
    return cluster_from_documents(load_yaml_documents(text, source))
