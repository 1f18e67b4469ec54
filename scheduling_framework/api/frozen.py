"""Read-only containers for the API model: the mappings of a frozen Pod or Node stay unchanged.

``Pod`` and ``Node`` are frozen attrs classes, but a plain ``dict`` field (labels, node selector, resource
lists) could still be changed in place by a plugin, and the change would leak into the caller's objects and
into every later cycle. :class:`FrozenDict` is a ``dict`` whose mutating methods raise ``TypeError``: reads
cost what a dict's do (it *is* a dict to C code, ``json`` and ``isinstance``), writes fail loudly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A dict that cannot be changed after construction (``copy()`` gives a plain, mutable dict)."""

    __slots__ = ()

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only: API objects (Pod, Node, ...) are immutable; "
                        f"build a changed copy instead")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle / copy.deepcopy rebuild through the constructor, never through __setitem__
        return (type(self), (dict(self),))


class FrozenList(list[V]):
    """A list that cannot be changed after construction (raw manifest lists inside frozen objects)."""

    __slots__ = ()

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only: API objects (Pod, Node, ...) are immutable; "
                        f"build a changed copy instead")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __iadd__ = _readonly
    __imul__ = _readonly
    append = _readonly
    extend = _readonly
    insert = _readonly
    pop = _readonly
    remove = _readonly
    clear = _readonly
    sort = _readonly
    reverse = _readonly

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self),))


EMPTY: FrozenDict[Any, Any] = FrozenDict()


def freeze_map(value: Mapping[str, Any] | None) -> FrozenDict[str, Any]:
    """``value`` as a FrozenDict (itself when it already is one)."""
    if type(value) is FrozenDict:
        return value
    if not value:
        return EMPTY
    return FrozenDict(value)


#: Label maps met lately, by content: equal maps (a workload's replicas carry the same labels) are one
#: FrozenDict, so a pass over many pods' labels reads a few maps that stay in the CPU cache, and memory holds
#: each once. Bounded: past the limit the table starts afresh (maps already shared stay as they are).
_SHARED_LABELS: dict[tuple[tuple[str, str], ...], FrozenDict[str, str]] = {}
MAX_SHARED_LABELS = 16384
#: Maps with more entries than this are not shared (their content would make a costly key).
MAX_SHARED_LABEL_ENTRIES = 32


def shared_labels(value: Mapping[str, str] | None) -> FrozenDict[str, str]:
    """``value`` as a FrozenDict (:func:`freeze_map`), the same object as the last equal map when there was one
    (see above)."""
    if type(value) is FrozenDict or not value or len(value) > MAX_SHARED_LABEL_ENTRIES:
        return freeze_map(value)
    key = tuple(value.items())
    try:
        got = _SHARED_LABELS.get(key)
    except TypeError:  # an unhashable value (a map built by hand): not shared
        return freeze_map(value)
    if got is None:
        if len(_SHARED_LABELS) >= MAX_SHARED_LABELS:
            _SHARED_LABELS.clear()
        got = _SHARED_LABELS[key] = FrozenDict(value)
    return got


_ATOMS = frozenset((str, int, float, bool, type(None)))


def deep_freeze(value: Any) -> Any:
    """Raw manifest data made read-only all the way down: mappings become FrozenDicts, lists FrozenLists
    (still a dict and a list to whoever reads them)."""
    atoms = _ATOMS
    t = type(value)
    if t in atoms:
        return value
    if t is dict or t is FrozenDict or (t is not list and t is not FrozenList and isinstance(value, Mapping)):
        return FrozenDict({k: v if type(v) in atoms else deep_freeze(v) for k, v in value.items()})
    if t is list or t is FrozenList or isinstance(value, list):
        return FrozenList([v if type(v) in atoms else deep_freeze(v) for v in value])
    return value


__all__ = ["EMPTY", "FrozenDict", "FrozenList", "deep_freeze", "freeze_map"]
