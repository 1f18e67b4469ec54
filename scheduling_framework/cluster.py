"""Reading a cluster from YAML: multi-document files or ``kind: List`` (``kubectl get -o yaml`` output)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from scheduling_framework._input import STDIN, check_size, load_yaml_documents, read_input
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.validation import validate_node, validate_pod
from scheduling_framework.errors import (
    InputError,
    ManifestError,
    ManifestValidationError,
    ValidationError,
    brief_str,
)
from scheduling_framework.warning_list import Warnings

# Kinds something in the scheduler reads (plugins, admission, workload expansion). Objects of other kinds
# are kept in ``Cluster.objects`` (a third-party plugin may read them) but reported as ignored.
# Extend with :func:`register_object_kinds` (e.g. from a plugin package's registration hook).
READ_KINDS: set[str] = {
    "Namespace", "PodDisruptionBudget", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
    "Deployment", "DaemonSet", "Job", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
    "CSIDriver", "VolumeAttachment", "PriorityClass", "LimitRange", "RuntimeClass",
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


def cluster_from_documents(docs: Iterable[Any], *, validate: bool = True) -> Cluster:
    """Parse manifests into a Cluster.

    Raises ManifestValidationError listing every problem found (each naming the document, the object and
    the field path): malformed objects, Pods and Nodes that fail API validation (``api.validation``), and
    pods or nodes that share a name or a uid. ``validate=False`` skips API validation (not the duplicate
    checks): for test tables that build objects the API server would refuse, as upstream's unit tests do.
    """
    c = Cluster()
    errors: list[str] = []
    pod_where: list[str] = []
    node_where: list[str] = []
    for where, d in _flatten(docs):
        if not isinstance(d, Mapping):
            errors.append(f"{where}: expected an object manifest, got {type(d).__name__}")
            continue
        kind = d.get("kind")
        try:
            if kind == "Node":
                c.nodes.append(Node.from_dict(d))
                node_where.append(where)
            elif kind == "Pod":
                c.pods.append(Pod.from_dict(d))
                pod_where.append(where)
            elif isinstance(kind, str) and kind in _DRA_PARSERS:
                # Parsed strictly once so that a malformed DRA object is refused at load, naming the field.
                _DRA_PARSERS[kind](d)
                c.objects.append(KubeObject.from_dict(d))
            elif isinstance(kind, str) and kind:
                c.objects.append(KubeObject.from_dict(d))
            else:
                raise ManifestError("object", "Required value: kind is required", "kind")
        except ManifestError as e:
            errors.append(str(ManifestError(f"{where}: {e.obj}", e.detail, e.path)))
        except ValidationError as e:  # a parser that does not name the object: name it here
            errors.append(f"{where}: {kind}: {e}")
    if validate:
        for n, where in zip(c.nodes, node_where, strict=True):
            errors.extend(f"{where}: Node {n.name}: {e}" for e in validate_node(n))
        for p, where in zip(c.pods, pod_where, strict=True):
            errors.extend(f"{where}: Pod {p.key}: {e}" for e in validate_pod(p))
    errors.extend(_duplicates(c, pod_where, node_where))
    if errors:
        raise ManifestValidationError(errors)
    for o in c.objects:
        if o.kind not in READ_KINDS:
            c.warnings.add_item(f'ignored object(s) of kind "{o.kind}" (nothing in the scheduler reads it)',
                                f"{o.namespace}/{o.name}" if o.namespace else o.name)
    from scheduling_framework.workloads import not_expanded_warning

    not_expanded_warning(c, c.warnings)
    for w in dra_warnings(c):
        c.warnings.add(w)
    return c


def _dra_parsers() -> dict[str, Any]:
    from scheduling_framework.api import resource as r

    return {"DeviceClass": r.DeviceClass.from_dict, "ResourceSlice": r.ResourceSlice.from_dict,
            "ResourceClaim": r.ResourceClaim.from_dict, "ResourceClaimTemplate": r.ResourceClaimTemplate.from_dict}


_DRA_PARSERS: dict[str, Any] = _dra_parsers()


def dra_warnings(c: Cluster) -> list[str]:
    """References among DRA objects that cannot be satisfied: the scheduler still runs (the pods concerned
    get upstream's status), but the user learns which object and field are wrong."""
    from scheduling_framework.resource_claims import dra_reference_warnings

    return dra_reference_warnings(c.nodes, c.pods, c.objects)


def _duplicates(c: Cluster, pod_where: list[str], node_where: list[str]) -> list[str]:
    """Pods or nodes that the scheduler would take for one object: one would silently vanish."""
    errors: list[str] = []
    names: dict[str, str] = {}
    node_uids: dict[str, str] = {}
    for n, where in zip(c.nodes, node_where, strict=True):
        if n.name in names:
            errors.append(f"{where}: Node {n.name}: metadata.name: Duplicate value: \"{brief_str(n.name)}\": "
                          f"same name as the Node in {names[n.name]}")
        else:
            names[n.name] = where
        if n.uid != n.name:  # an explicit uid (a derived one equals the name, checked above)
            if n.uid in node_uids:
                errors.append(f"{where}: Node {n.name}: metadata.uid: Duplicate value: \"{brief_str(n.uid)}\": "
                              f"same uid as {node_uids[n.uid]}")
            else:
                node_uids[n.uid] = f"Node {n.name} ({where})"
    keys: dict[str, str] = {}
    uids: dict[str, str] = {}
    for p, where in zip(c.pods, pod_where, strict=True):
        if p.key in keys:
            errors.append(f"{where}: Pod {p.key}: metadata.name: Duplicate value: \"{brief_str(p.name)}\": "
                          f"same namespace/name as the Pod in {keys[p.key]}")
            continue
        keys[p.key] = where
        if p.uid in uids:
            errors.append(f"{where}: Pod {p.key}: metadata.uid: Duplicate value: \"{brief_str(p.uid)}\": "
                          f"same uid as {uids[p.uid]}")
        else:
            uids[p.uid] = f"Pod {p.key} ({where})"
    return errors


def load_cluster(source: str | os.PathLike[str], *, max_input_bytes: int | None = None) -> Cluster:
    """Read a cluster YAML file, or standard input when ``source`` is ``-``.

    Only regular files are read (a FIFO, a device or a directory is refused), at most ``max_input_bytes``
    (default ``DEFAULT_MAX_INPUT_BYTES``), decoded from UTF-8 (BOM optional) or BOM-marked UTF-16/UTF-32.
    Raises InputError for unreadable, oversized, undecodable, invalid, too deeply nested or empty input,
    ManifestValidationError (listing every problem) for invalid objects.
    """
    path = os.fspath(source)
    text = read_input(path, what="cluster file", max_bytes=max_input_bytes)
    return cluster_from_text(text, "standard input" if path == STDIN else path, max_input_bytes=max_input_bytes)


def cluster_from_text(text: str, source: str = "<input>", *, max_input_bytes: int | None = None) -> Cluster:
    """Parse cluster YAML text (multi-document or ``kind: List``); the same checks as :func:`load_cluster`.

    Input with no objects at all (empty, or only comments) is an error: a run over it would report
    nothing, which looks like success.
    """
    check_size(text, source, max_input_bytes, "cluster input")
    docs = load_yaml_documents(text, source)
    if not docs:
        raise InputError(source, f"{source}: no objects found: the cluster input is empty or holds only comments "
                                 "(expected Nodes, Pods and other manifests)")
    c = cluster_from_documents(docs)
    if not (c.nodes or c.pods or c.objects):
        raise InputError(source, f"{source}: no objects found: the cluster input holds only empty lists "
                                 "(expected Nodes, Pods and other manifests)")
    return c


__all__ = ["Cluster", "cluster_from_documents", "cluster_from_text", "load_cluster", "load_yaml_documents"]
