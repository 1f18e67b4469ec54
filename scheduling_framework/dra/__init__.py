"""Dynamic Resource Allocation with structured parameters: CEL device selectors and the structured allocator.

``cel`` compiles and evaluates device selectors (DeviceClass and claim request ``selectors``);
``allocator`` picks devices from ResourceSlices for a node's ResourceClaims, as upstream's
``k8s.io/dynamic-resource-allocation/structured`` allocator does. The DynamicResources plugin drives both.
"""
