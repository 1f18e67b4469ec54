"""What the streamed readers saw besides items: documents, duplicate keys, and hints for error messages.

The readers hand out ``(where, item)`` pairs; what they notice on the way that is not an item is kept here for
``cluster.cluster_from_source``, which turns it into warnings (duplicate keys), errors (duplicate keys under
``strict``) or a sentence added to an error (the input looks truncated, a document is not a Kubernetes object).
"""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.meta import object_ref


class Notes:
    """Filled by one read of a source (a restarted read starts with a fresh one)."""

    __slots__ = ("documents", "duplicates", "hints", "truncated")

    def __init__(self) -> None:
        #: non-empty documents
        self.documents = 0
        #: ``(where, object, field path)`` of every key given twice in one mapping (the last one is read)
        self.duplicates: list[tuple[str, str, str]] = []
        #: ``where`` -> a sentence to add to errors about that document or item
        self.hints: dict[str, str] = {}
        #: ``(where, sentence)`` when the input looks cut short although it parsed: the last item of a List at
        #: the end of an input that does not end with a newline (kubectl's output always does)
        self.truncated: tuple[str, str] | None = None

    def duplicate(self, where: str, item: Any, paths: list[str], ref: str | None = None) -> None:
        """Record the duplicate keys ``paths`` of ``item`` (named by ``ref``, or by its kind and name)."""
        if not paths:
            return
        if ref is None:
            kind = item.get("kind") if isinstance(item, dict) else None
            ref = object_ref(kind, item) if isinstance(kind, str) and kind else "object"
        self.duplicates.extend((where, ref, p) for p in paths)

    def not_an_object(self, where: str, location: str, keys: list[Any]) -> None:
        """``where`` is a mapping with no kind, apiVersion or metadata: say so where an error names it."""
        shown = ", ".join(str(k) for k in keys[:6]) + (", ..." if len(keys) > 6 else "")
        self.hints[where] = (f"{location}: not a Kubernetes object: it has no kind, apiVersion or metadata "
                             f"(its keys: {shown}); expected Nodes, Pods and other manifests as kubectl get -o yaml "
                             f"or -o json writes them")


def join_path(prefix: str, key: Any) -> str:
    """``spec`` + ``containers`` -> ``spec.containers`` (a field path as the API server writes it)."""
    return f"{prefix}.{key}" if prefix else str(key)


__all__ = ["Notes", "join_path"]
