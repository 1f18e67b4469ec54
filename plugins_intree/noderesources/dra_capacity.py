"""How much of an extended resource served through DRA a node has, for the resource scoring strategies
(upstream's DRAExtendedResource scoring in NodeResourcesFit and NodeResourcesBalancedAllocation).

A scored resource that a DeviceClass backs and that the node's allocatable does not list counts, on that node,
the devices of the class the node can reach (ResourceSlices for the node, ``allNodes`` or a matching node
selector; per-device node selection device by device) as its allocatable, and those of them allocated to
claims as its use. A CEL selector that fails leaves the resource out of the node's score, as upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plugins_intree.dynamicresources.state import manager_for
from scheduling_framework.api.node import Node
from scheduling_framework.dra.allocator import DeviceID, node_matches
from scheduling_framework.dra.cel import CELCompileError, CELRuntimeError
from scheduling_framework.dra.claims import DEVICE_CLASS
from scheduling_framework.dra.extended import DeviceClassResolver, is_dra_extended_resource_name, resolver_for
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore


class DraCapacity:
    """``(allocatable, allocated)`` of DRA-backed resources per node, for one scoring pass."""

    __slots__ = ("_resolver", "_mgr", "_slices", "_state", "_cel", "_multi", "_memo")

    def __init__(self, store: ObjectStore, resolver: DeviceClassResolver, consumable_capacity: bool) -> None:
        self._resolver = resolver
        self._mgr = manager_for(store)
        self._slices: list[Any] | None = None
        self._state: Any = None
        self._cel = self._mgr.cel_cache()
        self._multi = consumable_capacity
        self._memo: dict[tuple[str, str], tuple[int, int] | None] = {}

    def __call__(self, node_info: NodeInfo, resource: str) -> tuple[int, int] | None:
        node = node_info.node
        if node is None:
            return None
        key = (node.name, resource)
        if key in self._memo:
            return self._memo[key]
        cls_obj = self._resolver.get(resource)
        out: tuple[int, int] | None = None
        if cls_obj is not None:
            try:
                out = self._totals(node, self._mgr.typed(cls_obj))
            except (SchedulingFrameworkError, CELCompileError, CELRuntimeError):
                out = None
        self._memo[key] = out
        return out

    def _totals(self, node: Node, cls: Any) -> tuple[int, int]:
        if self._slices is None:
            self._slices = self._mgr.typed_all(self._mgr.slices())
            self._state = self._mgr.allocated_state()
        capacity = allocated = 0
        selectors = cls.spec.selectors
        for s in self._slices:
            spec = s.spec
            if spec.per_device_node_selection:
                devices = [d for d in spec.devices
                           if d.all_nodes or (d.node_name and d.node_name == node.name)
                           or (d.node_selector is not None
                               and node_matches(node, d.node_name or "", bool(d.all_nodes), d.node_selector))]
            else:
                if not spec.all_nodes and spec.node_name != node.name and spec.node_selector is not None:
                    if not node_matches(node, "", False, spec.node_selector):
                        continue
                elif not spec.all_nodes and spec.node_name and spec.node_name != node.name:
                    continue
                devices = list(spec.devices)
            for d in devices:
                if selectors and not all(self._cel.matches(sel.expression, d, spec.driver, self._multi)
                                         for sel in selectors):
                    continue
                capacity += 1
                if self._state.is_allocated(DeviceID(spec.driver, spec.pool.name, d.name)):
                    allocated += 1
        return capacity, allocated


def dra_capacity_for(handle: Any, enabled: bool, resources: Sequence[str],
                     consumable_capacity: bool) -> DraCapacity | None:
    """The per-node DRA capacity reader when DRAExtendedResource is ``enabled`` and a DeviceClass backs one of
    the scored ``resources``; None otherwise (nothing to compute)."""
    if not enabled:
        return None
    store = getattr(handle, "objects", None)
    if not isinstance(store, ObjectStore) or not store.has_any(DEVICE_CLASS):
        return None
    resolver = resolver_for(store)
    if not any(is_dra_extended_resource_name(r) and resolver.get(r) is not None for r in resources):
        return None
    return DraCapacity(store, resolver, consumable_capacity)


__all__ = ["DraCapacity", "dra_capacity_for"]
