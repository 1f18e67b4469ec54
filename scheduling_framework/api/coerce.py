"""One reading of "an object" for every entry point that takes them (Scheduler.load, add_* / update_*,
the Simulator): this package's Pod / Node / KubeObject as they are, anything else through its manifest
(a dict, or a client object: ``api.clients``), with unknown fields reported where the caller collects warnings.
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Iterator, Mapping
from typing import Any

from scheduling_framework.api.clients import as_manifest, is_client_object
from scheduling_framework.api.fields import (
    SNAKE_CASE_HINT,
    UnknownFieldWarning,
    snake_case_hint,
    summary,
    unknown_fields,
)
from scheduling_framework.api.meta import object_ref
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resource import PARSERS
from scheduling_framework.errors import ManifestValidationError
from scheduling_framework.warning_list import Warnings


def report_unknown_fields(manifest: Any, kind: str, *, strict: bool = False, warnings: Warnings | None = None) -> None:
    """Unknown fields of one manifest: ManifestValidationError with ``strict``; otherwise one warning per field
    in ``warnings`` (the object as its item), or an UnknownFieldWarning when there is no such channel."""
    found = unknown_fields(manifest, kind)
    if not found:
        return
    ref = object_ref(kind, manifest)
    if strict:
        raise ManifestValidationError([f"{ref}: {m}" for m in found])
    if warnings is None:
        _warnings.warn(UnknownFieldWarning(summary(ref, found)), stacklevel=4)
        return
    for m in found:
        warnings.add_item(f"{m} (ignored)", ref)
    if snake_case_hint(found):
        warnings.add(f"unknown fields: {SNAKE_CASE_HINT}")


def coerce_pod(obj: Any, *, strict: bool = False, warnings: Warnings | None = None) -> Pod:
    if isinstance(obj, Pod):
        return obj
    m = as_manifest(obj, "Pod")
    report_unknown_fields(m, "Pod", strict=strict, warnings=warnings)
    return Pod.from_dict(m, strict=None)


def coerce_node(obj: Any, *, strict: bool = False, warnings: Warnings | None = None) -> Node:
    if isinstance(obj, Node):
        return obj
    m = as_manifest(obj, "Node")
    report_unknown_fields(m, "Node", strict=strict, warnings=warnings)
    return Node.from_dict(m, strict=None)


def coerce_object(obj: Any, *, strict: bool = False, warnings: Warnings | None = None) -> KubeObject:
    """A KubeObject (DRA kinds parsed strictly once, as loading a cluster does, so a malformed one is refused)."""
    if isinstance(obj, KubeObject):
        return obj
    m = as_manifest(obj, "object")
    kind = m.get("kind")
    if isinstance(kind, str):
        report_unknown_fields(m, kind, strict=strict, warnings=warnings)
        parse = PARSERS.get(kind)
        if parse is not None:
            parse(m, strict=None)
    return KubeObject.from_dict(m, strict=None)


def iter_objects(objs: Any) -> Iterator[Any]:
    """The objects of ``objs``: an iterable of objects, or a list object (``V1PodList`` from a list call, a
    ``kind: PodList`` / ``List`` dict) read as its items."""
    if not isinstance(objs, Mapping) and is_client_object(objs):
        objs = as_manifest(objs)
    if isinstance(objs, Mapping):
        kind = objs.get("kind")
        items = objs.get("items")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            item_kind = kind[:-4]
            for item in items:
                if item_kind and isinstance(item, Mapping) and "kind" not in item:
                    item = {**item, "kind": item_kind}
                yield item
            return
        yield objs
        return
    yield from objs


__all__ = ["iter_objects", "coerce_node", "coerce_object", "coerce_pod", "report_unknown_fields"]
