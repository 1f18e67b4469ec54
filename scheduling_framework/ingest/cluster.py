"""Reading a cluster from YAML: multi-document files or ``kind: List`` (``kubectl get -o yaml`` output)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scheduling_framework.api.clients import as_manifest, is_client_object
from scheduling_framework.api.fields import SNAKE_CASE_HINT, snake_case_hint, unknown_fields
from scheduling_framework.api.meta import object_ref
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resource import PARSERS as _DRA_PARSERS
from scheduling_framework.api.validation import validate_node, validate_pod
from scheduling_framework.api.workload import POD_GROUP, WORKLOAD, PodGroupObject, Workload, is_kubernetes_pod_group
from scheduling_framework.errors import (
    InputError,
    ManifestError,
    ManifestValidationError,
    ValidationError,
    brief_str,
)
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.ingest.untrusted import check_size, load_yaml_documents
from scheduling_framework.ingest.workloads import not_expanded_warning

if TYPE_CHECKING:
    from scheduling_framework.ingest.notes import Notes
    from scheduling_framework.ingest.source import ProgressFn, Source

# Kinds something in the scheduler reads (plugins, admission, workload expansion). Objects of other kinds
# are kept in ``Cluster.objects`` (a third-party plugin may read them) but reported as ignored.
# Extend with :func:`register_object_kinds` (e.g. from a plugin package's registration hook).
READ_KINDS: set[str] = {
    "Namespace", "PodDisruptionBudget", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
    "Deployment", "DaemonSet", "Job", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
    "CSIDriver", "VolumeAttachment", "PriorityClass", "LimitRange", "RuntimeClass",
    # DRA objects (DynamicResources)
    "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass", "DeviceTaintRule",
    # Workload API (GangScheduling): Workload (1.35), PodGroup (1.36+)
    "Workload", "PodGroup",
}


def register_object_kinds(*kinds: str) -> None:
    """Declare kinds a plugin reads, so that loading a cluster does not report them as ignored."""
    READ_KINDS.update(kinds)


def _flatten(docs: Iterable[Any]) -> Iterable[tuple[str, Any]]:
    for i, d in enumerate(docs):
        if not isinstance(d, Mapping) and is_client_object(d):
            d = as_manifest(d)  # V1Pod, V1PodList, lightkube and kr8s objects
        if isinstance(d, Mapping) and (d.get("kind") == "List" or str(d.get("kind", "")).endswith("List")) \
                and isinstance(d.get("items"), list):
            item_kind = str(d.get("kind"))[:-4] if d.get("kind") != "List" else ""
            for j, item in enumerate(d["items"]):
                if item_kind and isinstance(item, Mapping) and "kind" not in item:
                    item = {**item, "kind": item_kind}
                yield f"document {i + 1} items[{j}]", item
        else:
            yield f"document {i + 1}", d


def cluster_from_documents(docs: Iterable[Any], *, validate: bool = True, strict: bool = False) -> Cluster:
    """Parse manifests into a Cluster: dicts, or objects of the Python Kubernetes clients (``V1Pod``, a
    ``V1PodList`` from a list call, lightkube and kr8s objects: see ``api.clients``).

    Raises ManifestValidationError listing every problem found (each naming the document, the object and
    the field path): malformed objects, Pods and Nodes that fail API validation (``api.validation``), pods
    or nodes that share a name or a uid, and objects of any other kind that share their API group, kind,
    namespace and name (two versions of one object included), naming both. ``validate=False`` skips API
    validation (not the duplicate checks): for test tables that build objects the API server would refuse,
    as upstream's unit tests do.
    Fields the API does not define are reported in ``Cluster.warnings`` (``unknown field "spec.node_selector"
    (did you mean "spec.nodeSelector"?)``); ``strict=True`` makes them errors, as ``kubectl --validate=strict``.
    """
    return cluster_from_items(_flatten(docs), validate=validate, strict=strict)


def cluster_from_items(items: Iterable[tuple[str, Any]], *, validate: bool = True, compact: bool = False,
                       strict: bool = False) -> Cluster:
    """:func:`cluster_from_documents` over ``(where, manifest)`` pairs, ``where`` naming each in messages.

    ``compact=True`` (the file readers, which own the dicts they pass) drops ``metadata.managedFields`` and
    keeps Pod and Node manifests packed (:mod:`scheduling_framework.api.packed`): a big dump then holds its
    parsed objects, not its dicts.
    """
    c = Cluster()
    errors: list[str] = []
    pod_where: list[str] = []
    node_where: list[str] = []
    object_where: list[str] = []
    snake_case = False
    for where, d in items:
        if not isinstance(d, Mapping):
            if is_client_object(d):
                d = as_manifest(d)
            else:
                errors.append(f"{where}: expected an object manifest, got {type(d).__name__}")
                continue
        kind = d.get("kind")
        if isinstance(kind, str):
            unknown = unknown_fields(d, kind)
            if unknown:
                ref = object_ref(kind, d)
                if strict:
                    errors.extend(f"{where}: {ref}: {m}" for m in unknown)
                else:
                    for m in unknown:
                        c.warnings.add_item(f"{m} (ignored)", ref)
                    snake_case = snake_case or bool(snake_case_hint(unknown))
        if compact:
            meta = d.get("metadata")
            if isinstance(meta, dict) and "managedFields" in meta:
                d = {**d, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
        try:
            if kind == "Node":
                node = Node.from_dict(d, strict=None)
                c.nodes.append(node.with_packed_manifest() if compact else node)
                node_where.append(where)
            elif kind == "Pod":
                pod = Pod.from_dict(d, strict=None)
                c.pods.append(pod.with_packed_manifest() if compact else pod)
                pod_where.append(where)
            elif kind == WORKLOAD:
                Workload.from_dict(d)  # refused at load, naming the field, when malformed
                c.objects.append(KubeObject.from_dict(d))
            elif kind == POD_GROUP and is_kubernetes_pod_group(d):
                PodGroupObject.from_dict(d)
                c.objects.append(KubeObject.from_dict(d))
            elif isinstance(kind, str) and kind in _DRA_PARSERS:
                # Parsed strictly once so that a malformed DRA object is refused at load, naming the field.
                _DRA_PARSERS[kind](d, strict=None)
                c.objects.append(KubeObject.from_dict(d, strict=None))
            elif isinstance(kind, str) and kind:
                c.objects.append(KubeObject.from_dict(d, strict=None))
            else:
                raise ManifestError("object", "Required value: kind is required", "kind")
        except ManifestError as e:
            errors.append(str(ManifestError(f"{where}: {e.obj}", e.detail, e.path)))
        except ValidationError as e:  # a parser that does not name the object: name it here
            errors.append(f"{where}: {kind}: {e}")
        if len(object_where) < len(c.objects):
            object_where.append(where)
    if validate:
        for n, where in zip(c.nodes, node_where, strict=True):
            errors.extend(f"{where}: Node {n.name}: {e}" for e in validate_node(n))
        for p, where in zip(c.pods, pod_where, strict=True):
            errors.extend(f"{where}: Pod {p.key}: {e}" for e in validate_pod(p))
    errors.extend(_duplicates(c.nodes, c.pods, pod_where, node_where))
    errors.extend(_object_duplicates(c.objects, object_where))
    if errors:
        raise ManifestValidationError(errors)
    if snake_case:
        c.warnings.add(f"unknown fields: {SNAKE_CASE_HINT}")
    for o in c.objects:
        if o.kind not in READ_KINDS:
            c.warnings.add_item(f'ignored object(s) of kind "{o.kind}" (nothing in the scheduler reads it)',
                                f"{o.namespace}/{o.name}" if o.namespace else o.name)
    not_expanded_warning(c, c.warnings)
    for w in dra_warnings(c):
        c.warnings.add(w)
    return c




def dra_warnings(c: Cluster) -> list[str]:
    """References among DRA objects that cannot be satisfied: the scheduler still runs (the pods concerned
    get upstream's status), but the user learns which object and field are wrong."""
    from scheduling_framework.dra.claims import dra_reference_warnings

    return dra_reference_warnings(c.nodes, c.pods, c.objects)


def _duplicate_name(where: str, ref: str, name: str, same: str, first: str) -> str:
    """The API server's answer to a second object of one name (``same``: what they share), naming the first."""
    return f'{where}: {ref}: metadata.name: Duplicate value: "{brief_str(name)}": same {same} as {first}'


def _duplicates(nodes: Sequence[Node], pods: Sequence[Pod], pod_where: Sequence[str],
                node_where: Sequence[str]) -> list[str]:
    """Pods or nodes that the scheduler would take for one object: one would silently vanish."""
    errors: list[str] = []
    names: dict[str, str] = {}
    node_uids: dict[str, str] = {}
    for n, where in zip(nodes, node_where, strict=True):
        if n.name in names:
            errors.append(_duplicate_name(where, f"Node {n.name}", n.name, "name", f"the Node in {names[n.name]}"))
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
    for p, where in zip(pods, pod_where, strict=True):
        if p.key in keys:
            errors.append(_duplicate_name(where, f"Pod {p.key}", p.name, "namespace/name",
                                          f"the Pod in {keys[p.key]}"))
            continue
        keys[p.key] = where
        if p.uid in uids:
            errors.append(f"{where}: Pod {p.key}: metadata.uid: Duplicate value: \"{brief_str(p.uid)}\": "
                          f"same uid as {uids[p.uid]}")
        else:
            uids[p.uid] = f"Pod {p.key} ({where})"
    return errors


def object_key(o: KubeObject) -> tuple[str, str, str, str]:
    """What the API server knows an object by: API group (any version), kind, namespace and name."""
    return (o.api_group, o.kind, o.namespace, o.name)


def _object_duplicates(objects: Sequence[KubeObject], where: Sequence[str]) -> list[str]:
    """Objects the API server would hold as one (same API group, kind, namespace and name; any version):
    every index of the scheduler keeps one of them, so the other would silently vanish (a PodGroup's
    minCount, a DeviceClass's selectors)."""
    errors: list[str] = []
    seen: dict[tuple[str, str, str, str], str] = {}
    for o, at in zip(objects, where, strict=True):
        key = object_key(o)
        first = seen.get(key)
        if first is None:
            seen[key] = at
        else:
            ref = f"{o.kind} {o.namespace}/{o.name}" if o.namespace else f"{o.kind} {o.name}"
            errors.append(_duplicate_name(at, ref, o.name, "namespace/name" if o.namespace else "name",
                                          f"the {o.kind} in {first}"))
    return errors


def refuse_duplicates(nodes: Sequence[Node] = (), pods: Sequence[Pod] = (),
                      objects: Sequence[KubeObject] = ()) -> None:
    """Raise ManifestValidationError, listing each, when two of ``nodes``, ``pods`` or ``objects`` are one object
    to the API server (which answers the second AlreadyExists): nodes of one name or uid, pods of one
    namespace/name or uid, objects of one API group, kind, namespace and name. Each names both by their
    positions, as a cluster file's names both documents: ``objects[3]: PodGroup default/workers:
    metadata.name: Duplicate value: "workers": same namespace/name as the PodGroup in objects[1]``.

    For the Python API's lists (``Scheduler.load``, ``Simulator(objects=...)``): a set of keys per list, so it
    is cheap when there is no duplicate; the positions are only worked out when there is one."""
    errors: list[str] = []
    node_uids = [n.uid for n in nodes if n.uid != n.name]
    if len({n.name for n in nodes}) != len(nodes) or len(set(node_uids)) != len(node_uids) \
            or len({p.key for p in pods}) != len(pods) or len({p.uid for p in pods}) != len(pods):
        errors.extend(_duplicates(nodes, pods, [f"pods[{i}]" for i in range(len(pods))],
                                  [f"nodes[{i}]" for i in range(len(nodes))]))
    if len({object_key(o) for o in objects}) != len(objects):
        errors.extend(_object_duplicates(objects, [f"objects[{i}]" for i in range(len(objects))]))
    if errors:
        raise ManifestValidationError(errors)


def load_cluster(source: str | os.PathLike[str], *, max_input_bytes: int | None = None,
                 progress: ProgressFn | None = None, strict: bool = False) -> Cluster:
    """Read a cluster file (YAML or JSON, optionally gzip-compressed), or standard input when ``source`` is ``-``.

    Only regular files are read (a FIFO, a device or a directory is refused), at most ``max_input_bytes``
    (default ``DEFAULT_MAX_CLUSTER_BYTES``, counted after decompression), decoded from UTF-8 (BOM optional)
    or BOM-marked UTF-16/UTF-32. The dump is streamed: a List's items are parsed and turned into objects
    one at a time, so memory follows the objects, not the file. ``progress(bytes_read, total_or_None)``
    is called as the input is read. Raises InputError for unreadable, oversized, undecodable, invalid,
    too deeply nested or empty input, ManifestValidationError (listing every problem) for invalid objects.
    Unknown fields are warnings, or with ``strict=True`` errors (see :func:`cluster_from_documents`).
    """
    from scheduling_framework.ingest import DEFAULT_MAX_CLUSTER_BYTES, open_source

    limit = DEFAULT_MAX_CLUSTER_BYTES if max_input_bytes is None else max_input_bytes
    with open_source(source, what="cluster file", max_bytes=limit) as src:
        src.progress = progress
        return cluster_from_source(src, strict=strict)


def cluster_from_text(text: str, source: str = "<input>", *, max_input_bytes: int | None = None,
                      strict: bool = False) -> Cluster:
    """Parse cluster YAML or JSON text (multi-document or ``kind: List``); the same checks as :func:`load_cluster`.

    Input with no objects at all (empty, or only comments) is an error: a run over it would report
    nothing, which looks like success.
    """
    from scheduling_framework.ingest import text_source

    check_size(text, source, max_input_bytes, "cluster input")
    with text_source(text, source, "cluster input", len(text) * 4 + 16) as src:
        return cluster_from_source(src, strict=strict)


def cluster_from_source(src: Source, *, strict: bool = False) -> Cluster:
    """A Cluster from a :class:`~scheduling_framework.ingest.Source`, streamed item by item.

    A key given twice in one mapping is a warning naming the object and the field path (the last one is read,
    as a client that decodes the file into maps reads it), or with ``strict=True`` an error, as the API
    server's strict decoding makes it (``duplicate field "spec"``). Errors about a document that is not a
    Kubernetes object, or about the last item of an input that looks truncated, say so.
    """
    from scheduling_framework.ingest import Notes, RereadWhole, gc_paused, stream_items

    whole: frozenset[int] = frozenset()
    with gc_paused():
        while True:
            notes = Notes()
            try:
                c = cluster_from_items(stream_items(src, notes, whole=whole), compact=True, strict=strict)
                break
            except RereadWhole as e:  # a document whose items are not a List's: read again, building it whole
                if e.document in whole:  # pragma: no cover - a document built whole streams nothing
                    raise
                whole |= {e.document}
            except ManifestValidationError as e:
                raise ManifestValidationError(_reader_errors(notes, strict, e.errors)) from None
    if notes.duplicates:
        if strict:
            raise ManifestValidationError(_reader_errors(notes, strict, []))
        for _, ref, path in notes.duplicates:
            c.warnings.add_item(f'duplicate field "{path}" (the last one is read)', ref)
    if notes.truncated is not None:
        c.warnings.add(notes.truncated[1])
    if not notes.documents:
        raise InputError(src.name, f"{src.name}: no objects found: the cluster input is empty or holds only "
                                   "comments (expected Nodes, Pods and other manifests)")
    if not (c.nodes or c.pods or c.objects):
        raise InputError(src.name, f"{src.name}: no objects found: the cluster input holds only empty lists "
                                   "(expected Nodes, Pods and other manifests)")
    return c


def _reader_errors(notes: Notes, strict: bool, errors: list[str]) -> list[str]:
    """``errors`` with what the readers noted: the duplicate keys first (under ``strict``), a hint added to the
    errors about a document that is not a Kubernetes object, and first of all the input looking truncated when
    its last item has an error."""
    hints = notes.hints
    out = [f'{where}: {ref}: duplicate field "{path}"' for where, ref, path in notes.duplicates] if strict else []
    for e in errors:
        where = e.split(": ", 1)[0]
        out.append(f"{e} ({hints[where]})" if where in hints else e)
    if notes.truncated is not None and any(e.startswith(notes.truncated[0] + ": ") for e in errors):
        out.insert(0, notes.truncated[1])
    return out


__all__ = ["Cluster", "cluster_from_documents", "cluster_from_items", "cluster_from_source", "cluster_from_text",
           "load_cluster", "load_yaml_documents", "refuse_duplicates"]
