"""StickyNode, a scheduling-framework plugin: a VM's pods run on the node where the VM first ran.

Installing this distribution registers the plugin: its ``scheduling_framework`` entry point names this
module, whose ``register_plugins`` hook the framework calls when it builds its registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import scheduling_framework as sf

from sticky_node.plugin import ERR_REASON, NAME, STATE_KEY, StickyNode, StickyNodeArgs
from sticky_node.store import JsonFileStore, MemoryStore, PlacementStore, memory_store

if TYPE_CHECKING:
    from scheduling_framework import Registry


@sf.hookimpl
def register_plugins(registry: Registry) -> None:
    registry.register(NAME, StickyNode)


__all__ = [
    "ERR_REASON", "NAME", "STATE_KEY", "JsonFileStore", "MemoryStore", "PlacementStore", "StickyNode",
    "StickyNodeArgs", "memory_store", "register_plugins",
]
