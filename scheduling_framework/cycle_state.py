"""CycleState: per-cycle scratch space plugins share, keyed by string."""

from __future__ import annotations

from typing import Any


class CycleState:
    """A thread-safe mapping from key to plugin state, for one scheduling cycle.

    ``read`` raises ``KeyError`` for a missing key (upstream returns ErrNotFound). ``clone`` copies the
    mapping and clones each value that defines ``clone()`` (others are shared, so keep them immutable).

    Every access is one dict operation, atomic on its own (no lock: a cycle writes a dozen keys); ``clone``
    copies the dict in one step before it walks the copy, so a concurrent write never breaks its iteration.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "skip_pre_bind_plugins",
                 "record_plugin_metrics")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        # Plugins whose PreFilter / PreScore returned SKIP: the framework does not run their Filter / Score.
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.copy().items():
            cl = getattr(v, "clone", None)
            c._data[k] = cl() if callable(cl) else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        return c

    def keys(self) -> list[str]:
        return list(self._data)
