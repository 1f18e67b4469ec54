"""Dynamic Resource Allocation with structured parameters: CEL device selectors and the structured allocator.

``cel`` compiles and evaluates device selectors (DeviceClass and claim request ``selectors``);
``allocator`` picks devices from ResourceSlices for a node's ResourceClaims, as upstream's
``k8s.io/dynamic-resource-allocation/structured`` allocator does. The DynamicResources plugin drives both.

Example::

    from scheduling_framework.dra import Allocator, AllocatedState, Features

    allocator = Allocator(Features(), AllocatedState.from_claims(allocated_claims),
                          {c.name: c for c in device_classes}, resource_slices)
    results = allocator.allocate(node, [claim])   # None: not on this node
"""

from scheduling_framework.dra.allocator import (
    AllocatedState,
    Allocator,
    AllocatorError,
    DeviceID,
    Features,
    SharedDeviceID,
)
from scheduling_framework.dra.cel import CELCache, CELCompileError, CELError, CELRuntimeError

__all__ = [
    "AllocatedState", "Allocator", "AllocatorError", "CELCache", "CELCompileError", "CELError", "CELRuntimeError",
    "DeviceID", "Features", "SharedDeviceID",
]
