"""pluggy hook specifications. Plugin packages implement them with ``@scheduling_framework.hookimpl``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pluggy

PROJECT = "scheduling_framework"
ENTRY_POINT_GROUP = "scheduling_framework"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class PluginRegistry(Protocol):
    """What a plugin package's hook gets: :class:`scheduling_framework.registry.Registry` (which imports this
    module to discover the packages; the hook names it by what it offers)."""

    def register(self, name: str, factory: Callable[[Any, Any], Any] | str, *, origin: str | None = None) -> None:
        ...


@hookspec
def register_plugins(registry: PluginRegistry) -> None:
    """Register plugin factories: ``registry.register("MyPlugin", MyPlugin)``.

    Called once per discovered package when a registry is built. A factory is ``factory(args, handle)``;
    a class whose ``__init__(self, args, handle)`` has that shape is its own factory.
    """
