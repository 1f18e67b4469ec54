"""A manifest kept packed: the read-only ``raw`` of a Pod or Node loaded from a big dump, in ~15 % of the memory.

A parsed Pod keeps its manifest (``to_dict()``, ``--output yaml``, extenders send it on the wire), but as
Python dicts and strings a typical 8 kB pod manifest takes about 24 kB, which is 3.6 GB for 150,000 pods. The
cluster readers keep it marshalled instead (about 3.6 kB, 10 us to pack) and unpack it on each read.
zlib on top would halve that again but cost three times the packing time (measured: 58 against 10 us per
pod, a fifth of a big load), so it is not used. Reads are rare and cold (export, extenders, ``with_*``
copies); the scheduler itself reads the parsed fields.

marshal is used on data this process built itself from safely parsed input, never on input bytes.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator, Mapping
from typing import Any


class PackedManifest(Mapping[str, Any]):
    """A read-only mapping over a packed manifest; every access unpacks (nothing is cached)."""

    __slots__ = ("_blob", "_sets", "derived")

    def __init__(self, blob: bytes, sets: tuple[tuple[str, str, Any], ...] = (),
                 derived: dict[str, Any] | None = None) -> None:
        self._blob = blob
        # (section, field, value) set on top of the blob when unpacked: a copy that differs in a field or two
        # (a pod bound to a node) costs no unpacking and no second blob
        self._sets = sets
        #: Values readers derived from the manifest before it was packed (by name), so that reading them again
        #: costs no unpacking; each reader says which fields its value depends on.
        self.derived: dict[str, Any] = {} if derived is None else derived

    @classmethod
    def pack(cls, manifest: Mapping[str, Any]) -> PackedManifest:
        return cls(marshal.dumps(dict(manifest)))

    def unpack(self) -> dict[str, Any]:
        """A fresh, mutable copy of the manifest."""
        value: dict[str, Any] = marshal.loads(self._blob)
        for section, field, v in self._sets:
            part = value.get(section)
            if not isinstance(part, dict):
                part = value[section] = {}
            part[field] = v
        return value

    def with_field(self, section: str, field: str, value: Any, keep_derived: bool = False) -> PackedManifest:
        """The manifest with ``manifest[section][field] = value`` (a section that is not a mapping is replaced by
        one), still packed. ``value`` must be plain data that is never changed afterwards (a str, a number).
        ``keep_derived``: the derived values do not depend on that field (they are carried over)."""
        sets = (*[t for t in self._sets if t[:2] != (section, field)], (section, field, value))
        return PackedManifest(self._blob, sets, dict(self.derived) if keep_derived else None)

    def __getitem__(self, key: str) -> Any:
        return self.unpack()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.unpack().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.unpack())

    def __len__(self) -> int:
        return len(self.unpack())

    def __contains__(self, key: object) -> bool:
        return key in self.unpack()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedManifest):
            return (self._blob == other._blob and self._sets == other._sets) or self.unpack() == other.unpack()
        if isinstance(other, Mapping):
            return self.unpack() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedManifest({len(self._blob)} bytes)"

    @property
    def packed_size(self) -> int:
        return len(self._blob)


def unpacked(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` as a fresh dict (a deep copy for ordinary mappings, one unpacking for packed ones)."""
    if isinstance(raw, PackedManifest):
        return raw.unpack()
    import copy

    return copy.deepcopy(dict(raw))


__all__ = ["PackedManifest", "unpacked"]
