"""pluggy hook specifications. Plugin packages implement them with ``@scheduling_framework.hookimpl``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from scheduling_framework.registry import Registry

PROJECT = "scheduling_framework"
ENTRY_POINT_GROUP = "scheduling_framework"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_plugins(registry: Registry) -> None:
    """Register plugin factories: ``registry.register("MyPlugin", MyPlugin)``.

    Called once per discovered package when a registry is built. A factory is ``factory(args, handle)``;
    a class whose ``__init__(self, args, handle)`` has that shape is its own factory.
    """
