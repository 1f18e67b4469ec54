"""JSON Patch (RFC 6902: add, remove, replace) on manifests: the changes remedies propose, in the form
``kubectl patch --type json -p '[...]'`` takes, and the very code that applies them for verification."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any


class PatchError(ValueError):
    """An operation that does not apply to the document (a path that does not exist, a bad index)."""


def escape(token: str) -> str:
    """One JSON Pointer reference token (``topology.kubernetes.io/zone`` -> ``topology.kubernetes.io~1zone``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _tokens(path: str) -> list[str]:
    if not path.startswith("/"):
        raise PatchError(f"path {path!r} does not start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _parent(doc: Any, tokens: Sequence[str], path: str) -> Any:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"{path}: {t!r} does not exist")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(t, len(cur), path)]
        else:
            raise PatchError(f"{path}: {t!r} is not in an object or array")
    return cur


def _index(token: str, size: int, path: str, append: bool = False) -> int:
    if append and token == "-":
        return size
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"{path}: {token!r} is not an array index")
    i = int(token)
    if i > size or (i == size and not append):
        raise PatchError(f"{path}: index {i} is out of range")
    return i


def apply(doc: Any, ops: Sequence[dict[str, Any]]) -> Any:
    """A copy of ``doc`` with ``ops`` applied in order (PatchError when one does not apply)."""
    out = copy.deepcopy(doc)
    for op in ops:
        kind, path = op.get("op"), str(op.get("path", ""))
        tokens = _tokens(path)
        parent = _parent(out, tokens, path)
        last = tokens[-1]
        if kind == "add":
            value = copy.deepcopy(op["value"])
            if isinstance(parent, dict):
                parent[last] = value
            elif isinstance(parent, list):
                parent.insert(_index(last, len(parent), path, append=True), value)
            else:
                raise PatchError(f"{path}: the parent is not an object or array")
        elif kind in ("remove", "replace"):
            if isinstance(parent, dict):
                if last not in parent:
                    raise PatchError(f"{path}: {last!r} does not exist")
                if kind == "remove":
                    del parent[last]
                else:
                    parent[last] = copy.deepcopy(op["value"])
            elif isinstance(parent, list):
                i = _index(last, len(parent), path)
                if kind == "remove":
                    del parent[i]
                else:
                    parent[i] = copy.deepcopy(op["value"])
            else:
                raise PatchError(f"{path}: the parent is not an object or array")
        else:
            raise PatchError(f"unsupported op {kind!r}")
    return out


__all__ = ["PatchError", "apply", "escape"]
