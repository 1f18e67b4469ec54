"""A tiny stand-in for the structured allocator, used by the DynamicResources tests only while the real one
(scheduling_framework.dra.allocator) is not installed: first free devices of the request's class on the
node, ``exactly`` requests and ``firstAvailable`` (first subrequest that fits); no selectors or constraints."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import pytest

from scheduling_framework.api import resource as r
from scheduling_framework.api.selectors import NodeSelector


@attrs.frozen
class DeviceID:
    driver: str
    pool: str
    device: str


@attrs.define
class AllocatedState:
    allocated_devices: set[DeviceID]


@attrs.frozen
class Features:
    pass


class Allocator:
    def __init__(self, features: Features, allocated_state: AllocatedState, device_classes: Mapping[str, Any],
                 slices: Sequence[r.ResourceSlice], cel_cache: Any = None) -> None:
        self.taken = set(allocated_state.allocated_devices)
        self.slices = slices

    def _free(self, node_name: str, taken: set[DeviceID]) -> Iterator[DeviceID]:
        for s in self.slices:
            if s.spec.node_name == node_name or s.spec.all_nodes:
                for d in s.spec.devices:
                    did = DeviceID(s.spec.driver, s.spec.pool.name, d.name)
                    if did not in taken:
                        yield did

    def allocate(self, node: Any, claims: Sequence[r.ResourceClaim], timeout: float | None = None,
                 clock: Any = None) -> list[r.AllocationResult] | None:
        taken = set(self.taken)
        out = []
        for claim in claims:
            results: list[r.DeviceRequestAllocationResult] = []
            for req in claim.spec.devices.requests:
                options = [(req.name, req.exactly)] if req.exactly is not None else [
                    (f"{req.name}/{sub.name}", sub.request) for sub in req.first_available]
                for name, exact in options:
                    free = list(self._free(node.name, taken))
                    if len(free) >= exact.count:
                        for did in free[:exact.count]:
                            taken.add(did)
                            results.append(r.DeviceRequestAllocationResult(name, did.driver, did.pool, did.device))
                        break
                else:
                    return None
            sel = NodeSelector.from_dict({"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}, "nodeSelector")
            out.append(r.AllocationResult(tuple(results), node_selector=sel))
        return out


def real_allocator_available() -> bool:
    try:
        importlib.import_module("scheduling_framework.dra.allocator")
    except ImportError:
        return False
    return True


@pytest.fixture
def allocator_module(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real allocator when installed, else this stand-in under its module name."""
    if real_allocator_available():
        return "real"
    mod = types.ModuleType("scheduling_framework.dra.allocator")
    for name in ("DeviceID", "AllocatedState", "Features", "Allocator"):
        setattr(mod, name, globals()[name])
    monkeypatch.setitem(sys.modules, "scheduling_framework.dra.allocator", mod)
    return "standin"
