"""Where StickyNode remembers the node each VM first ran on: a JSON file, or a named in-process dict.

A store maps ``"<namespace>/<vm name>"`` to a node name. ``record_first`` keeps the first placement only.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from typing import Protocol


class PlacementStore(Protocol):
    def get(self, key: str) -> str | None:
        """The node the VM ``key`` sticks to, or None when it has not run yet."""

    def record_first(self, key: str, node_name: str) -> bool:
        """Remember ``node_name`` for ``key`` unless a node is already recorded; True when recorded."""

    def placements(self) -> dict[str, str]:
        """Every recorded placement."""


class MemoryStore:
    """Placements in a dict, shared by every plugin instance configured with the same ``storeName``."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        return self._data.get(key)

    def record_first(self, key: str, node_name: str) -> bool:
        with self._lock:
            if key in self._data:
                return False
            self._data[key] = node_name
            return True

    def placements(self) -> dict[str, str]:
        return dict(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class JsonFileStore:
    """Placements in a JSON object on disk, so they outlive the process (one CLI run to the next).

    The file is read on every lookup (another scheduler may have written it) and replaced atomically.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._read()  # fail at construction, naming the file, rather than in the middle of a cycle

    def _read(self) -> dict[str, str]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise ValueError(f"{self.path}: cannot read placements: {e}") from None
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise ValueError(f'{self.path}: expected a JSON object of "namespace/vm": "node" strings')
        return data

    def get(self, key: str) -> str | None:
        return self._read().get(key)

    def record_first(self, key: str, node_name: str) -> bool:
        with self._lock:
            data = self._read()
            if key in data:
                return False
            data[key] = node_name
            directory = os.path.dirname(os.path.abspath(self.path))
            fd, tmp = tempfile.mkstemp(prefix=".placements-", dir=directory)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2, sort_keys=True)
                fh.write("\n")
            os.replace(tmp, self.path)
            return True

    def placements(self) -> dict[str, str]:
        return self._read()


_MEMORY_STORES: dict[str, MemoryStore] = {}
_MEMORY_LOCK = threading.Lock()


def memory_store(name: str) -> MemoryStore:
    """The in-process store called ``name`` (created empty on first use)."""
    with _MEMORY_LOCK:
        store = _MEMORY_STORES.get(name)
        if store is None:
            store = _MEMORY_STORES[name] = MemoryStore()
        return store
