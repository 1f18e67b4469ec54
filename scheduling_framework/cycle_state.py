"""CycleState: per-cycle scratch space plugins share, keyed by string."""

from __future__ import annotations

import threading
from typing import Any


class CycleState:
    """A thread-safe mapping from key to plugin state, for one scheduling cycle.

    ``read`` raises ``KeyError`` for a missing key (upstream returns ErrNotFound). ``clone`` copies the
    mapping and clones each value that defines ``clone()`` (others are shared, so keep them immutable).
    """

    __slots__ = ("_data", "_lock", "skip_filter_plugins", "skip_score_plugins", "skip_pre_bind_plugins",
                 "record_plugin_metrics")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._lock = threading.RLock()
        # Plugins whose PreFilter / PreScore returned SKIP: the framework does not run their Filter / Score.
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def write(self, key: str, value: Any) -> None:
        with self._lock:
            self._data[key] = value

    def read(self, key: str) -> Any:
        # dict reads are atomic under the GIL; no lock on the hot path.
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        c = CycleState()
        with self._lock:
            for k, v in self._data.items():
                cl = getattr(v, "clone", None)
                c._data[k] = cl() if callable(cl) else v
            c.skip_filter_plugins = set(self.skip_filter_plugins)
            c.skip_score_plugins = set(self.skip_score_plugins)
            c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
            c.record_plugin_metrics = self.record_plugin_metrics
        return c

    def keys(self) -> list[str]:
        return list(self._data)
