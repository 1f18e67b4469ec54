"""Cluster-wide resource limits: cluster-autoscaler's ``--cores-total``, ``--memory-total`` and ``--gpu-total``.

cluster-autoscaler keeps the cluster's cores, memory and GPUs (per GPU type) within a minimum and a maximum:

- scale-up (its resource quota tracker, fed by the cloud provider's resource limiter under the quota id
  ``cluster-wide``): what is left under each maximum is the maximum less what the cluster's nodes have; a node
  group whose next node (or, for a ``zeroOrMaxNodeScaling`` group, whose whole growth) would not fit is
  skipped with ``exceeded quota: "cluster-wide", resources: cpu``; the chosen option's node count is capped to
  what fits (:func:`check_delta`), and so is each group of a balanced scale-up, in turn;
- scale-down (its limits finder): what may go is each total less its minimum; a node whose removal would take
  a total under its minimum is kept, ``MinimalResourceLimitExceeded`` (:func:`try_decrement`).

A node counts its capacity (its allocatable when it has no capacity, as node-group templates written by hand
often do): cpu in whole cores rounded up, memory in bytes, and — only when a GPU limit is set — its
``nvidia.com/gpu`` under its GPU type, the value of its accelerator label (:data:`GPU_LABELS`). A maximum of 0
is no limit, as cluster-autoscaler reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.errors import ValidationError

if TYPE_CHECKING:
    from scheduling_framework.api.quantity import Quantity

#: resource names of the limits (cluster-autoscaler's cloudprovider.ResourceNameCores / ResourceNameMemory)
CORES = "cpu"
MEMORY = "memory"
GIB = 1024 ** 3
#: cluster-autoscaler's defaults: --cores-total 0:320000, --memory-total 0:6400000 (GiB)
DEFAULT_MAX_CORES = 5000 * 64
DEFAULT_MAX_MEMORY_GIB = 5000 * 64 * 20
#: the id of the cloud provider's limits among cluster-autoscaler's resource quotas
CLUSTER_WIDE = "cluster-wide"
#: node labels naming a node's GPU type (GKE's, AWS's), the resource a --gpu-total limit counts
GPU_LABELS = ("cloud.google.com/gke-accelerator", "k8s.amazonaws.com/accelerator")
GPU_RESOURCE = "nvidia.com/gpu"
#: cluster-autoscaler's scale-down reason for a node whose removal would break a minimum
MINIMAL_RESOURCE_LIMIT_EXCEEDED = "MinimalResourceLimitExceeded"
#: the flag that sets each kind of limit, for messages
FLAGS = {CORES: "--cores-total", MEMORY: "--memory-total"}


def _bounds(value: object, path: str) -> tuple[int, int]:
    if (not isinstance(value, tuple | list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise ValidationError(f"expected (min, max) integers, got {value!r}", path)
    lo, hi = value
    if lo < 0:
        raise ValidationError(f"min {lo} is negative", path)
    if hi < lo:
        raise ValidationError(f"max {hi} is below min {lo}", path)
    return lo, hi


def _int_map(m: Mapping[str, int]) -> dict[str, int]:
    return dict(m)


@attrs.frozen
class ResourceLimits:
    """Minimum and maximum per resource: ``cpu`` in cores, ``memory`` in bytes, a GPU type in GPUs. A resource
    without a maximum (or with 0) has no upper limit; without a minimum, none below."""

    min: Mapping[str, int] = attrs.field(factory=dict, converter=_int_map)
    max: Mapping[str, int] = attrs.field(factory=dict, converter=_int_map)

    def __attrs_post_init__(self) -> None:
        for res in set(self.min) | set(self.max):
            _bounds((self.min.get(res, 0), self.max.get(res, self.min.get(res, 0))), f"limits[{res}]")

    @classmethod
    def from_totals(cls, cores: tuple[int, int] | None = None, memory_gib: tuple[int, int] | None = None,
                    gpus: Mapping[str, tuple[int, int]] | None = None) -> ResourceLimits:
        """The limits cluster-autoscaler's flags set: ``cores`` and ``memory_gib`` as (min, max) — defaults
        0:320000 cores and 0:6400000 GiB — and ``gpus`` as {GPU type: (min, max)}. ValidationError names the
        argument at fault."""
        lo_c, hi_c = _bounds(cores, "cores_total") if cores is not None else (0, DEFAULT_MAX_CORES)
        lo_m, hi_m = _bounds(memory_gib, "memory_total") if memory_gib is not None else (0, DEFAULT_MAX_MEMORY_GIB)
        low = {CORES: lo_c, MEMORY: lo_m * GIB}
        high = {CORES: hi_c, MEMORY: hi_m * GIB}
        for gpu_type, bounds in (gpus or {}).items():
            if not isinstance(gpu_type, str) or not gpu_type or gpu_type in (CORES, MEMORY):
                raise ValidationError(f"expected a GPU type name, got {gpu_type!r}", "gpu_total")
            low[gpu_type], high[gpu_type] = _bounds(bounds, f"gpu_total[{gpu_type}]")
        return cls(low, high)

    def custom(self) -> bool:
        """Whether a GPU type has a limit (then nodes count their GPUs too)."""
        return any(r not in (CORES, MEMORY) for r in (*self.min, *self.max))


def _amount(node: Node, name: str) -> Quantity | None:
    q = node.status.capacity.get(name)
    return q if q is not None else node.status.allocatable.get(name)


def gpu_type(node: Node) -> str:
    """The node's GPU type (its accelerator label's value), "" when it has none."""
    labels = node.metadata.labels
    return next((labels[k] for k in GPU_LABELS if labels.get(k)), "")


def node_delta(node: Node, custom: bool = False) -> dict[str, int]:
    """What one node adds to the cluster's totals (cluster-autoscaler's DeltaForNode): its cores and memory,
    and with ``custom`` its GPUs under their type."""
    cpu, mem = _amount(node, CORES), _amount(node, MEMORY)
    delta = {CORES: max(0, cpu.value()) if cpu is not None else 0,
             MEMORY: max(0, mem.value()) if mem is not None else 0}
    if custom:
        kind = gpu_type(node)
        alloc, cap = node.status.allocatable.get(GPU_RESOURCE), node.status.capacity.get(GPU_RESOURCE)
        count = alloc.value() if alloc is not None else 0
        if count <= 0 and cap is not None:  # GPUs not allocatable yet: the capacity says how many will be
            count = cap.value()
        if kind and count > 0:
            delta[kind] = count
    return delta


def totals(nodes: Iterable[Node], custom: bool = False) -> dict[str, int]:
    """The nodes' cores, memory (and GPUs per type with ``custom``), summed."""
    out: dict[str, int] = {}
    for node in nodes:
        for res, v in node_delta(node, custom).items():
            out[res] = out.get(res, 0) + v
    return out


def resources_left(limits: ResourceLimits, nodes: Iterable[Node]) -> dict[str, int]:
    """What scale-up may still add under each maximum (0 when a total is already over it); a resource without
    a maximum has no entry."""
    used = totals(nodes, limits.custom())
    return {res: max(0, hi - used.get(res, 0)) for res, hi in limits.max.items() if hi > 0}


def check_delta(left: Mapping[str, int], delta: Mapping[str, int], count: int) -> tuple[int, list[str]]:
    """How many of ``count`` nodes of ``delta`` fit in ``left``, and the resources that do not fit them all
    (sorted). A resource the node does not have, or without a limit, never caps."""
    allowed, exceeded = count, []
    for res in sorted(delta):
        d = delta[res]
        if d <= 0 or res not in left:
            continue
        if left[res] < d * count:
            allowed = min(allowed, left[res] // d)
            exceeded.append(res)
    return allowed, exceeded


def consume(left: dict[str, int], delta: Mapping[str, int], count: int) -> None:
    """Take ``count`` nodes of ``delta`` out of ``left`` (never below 0)."""
    for res, d in delta.items():
        if res in left:
            left[res] = max(0, left[res] - d * count)


def exceeded_reason(resources: Iterable[str]) -> str:
    """cluster-autoscaler's skip reason for a node group the cluster-wide limits leave no room for."""
    return f'exceeded quota: "{CLUSTER_WIDE}", resources: {", ".join(resources)}'


#: how every reason :func:`exceeded_reason` gives starts
EXCEEDED_QUOTA_PREFIX = 'exceeded quota: "'


# ---- scale-down ----------------------------------------------------------------------------------------------
def scale_down_limits_left(limits: ResourceLimits, nodes: Iterable[Node]) -> dict[str, int]:
    """What scale-down may remove before each total reaches its minimum (cluster-autoscaler's LimitsLeft): only
    resources with a minimum above 0 have an entry. ``nodes`` are those not already being deleted."""
    used = totals(nodes, limits.custom())
    return {res: max(0, used.get(res, 0) - lo) for res, lo in limits.min.items() if lo > 0}


def check_removal(left: Mapping[str, int], delta: Mapping[str, int]) -> list[str]:
    """The resources whose minimum removing a node of ``delta`` would break (sorted)."""
    return sorted(res for res, d in delta.items() if d > 0 and res in left and d > left[res])


def try_decrement(left: dict[str, int], delta: Mapping[str, int]) -> list[str]:
    """Take a removed node's ``delta`` out of ``left`` unless a minimum would break; the resources that would
    (nothing is taken then)."""
    exceeded = check_removal(left, delta)
    if not exceeded:
        for res, d in delta.items():
            if res in left:
                left[res] -= d
    return exceeded


__all__ = ["CLUSTER_WIDE", "CORES", "DEFAULT_MAX_CORES", "DEFAULT_MAX_MEMORY_GIB", "EXCEEDED_QUOTA_PREFIX", "FLAGS",
           "GIB", "GPU_LABELS", "GPU_RESOURCE", "MEMORY", "MINIMAL_RESOURCE_LIMIT_EXCEEDED", "ResourceLimits",
           "check_delta", "check_removal", "consume", "exceeded_reason", "gpu_type", "node_delta", "resources_left",
           "scale_down_limits_left", "totals", "try_decrement"]
