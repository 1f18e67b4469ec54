"""Pod resource requests, computed as component-helpers ``resource.PodRequests`` does.

Containers add up; each regular init container needs its own requests plus every restartable (sidecar)
init container started before it; sidecars keep running, so they also add to the containers' sum; the pod
needs the maximum of those stages; pod-level requests (cpu, memory, hugepages) override; overhead adds.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from scheduling_framework.api._requests import (
    CPU,
    MEMORY,
    ResourceList,
    _add,
    aggregate_spec_requests,
    is_supported_pod_level_resource,
)
from scheduling_framework.api.names import is_qualified_name
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.quantity import Quantity

EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Scheduler defaults for containers that request no cpu / memory, used only for scoring spread.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NON_MISSING: dict[str, Quantity] = {
    CPU: Quantity.parse("100m"),
    MEMORY: Quantity.parse(str(DEFAULT_MEMORY_REQUEST)),
}

def pod_level_requests_set(pod: Pod) -> bool:
    res = pod.spec.resources
    return res is not None and any(is_supported_pod_level_resource(k) for k in res.requests)

def aggregate_container_requests(pod: Pod, non_missing: Mapping[str, Quantity] | None = None) -> ResourceList:
    return aggregate_spec_requests(pod.spec, non_missing)


def pod_requests(pod: Pod, *, non_missing: Mapping[str, Quantity] | None = None,
                 exclude_overhead: bool = False) -> ResourceList:
    """The pod's effective requests (component-helpers PodRequests with default options)."""
    reqs = aggregate_container_requests(pod, non_missing)
    res = pod.spec.resources
    if res is not None and pod_level_requests_set(pod):
        for k, q in res.requests.items():
            if is_supported_pod_level_resource(k):
                reqs[k] = q
    if not exclude_overhead and pod.spec.overhead:
        _add(reqs, pod.spec.overhead)
    return reqs


def non_zero_requests(pod: Pod, requests: Mapping[str, Quantity] | None = None) -> tuple[int, int]:
    """(milli-cpu, memory bytes) with the scheduler's defaults for containers that request none."""
    level_set = pod_level_requests_set(pod)
    if requests is None:
        requests = pod_requests(pod)
    if not level_set:
        defaults: Mapping[str, Quantity] = _NON_MISSING
    else:
        defaults = {k: q for k, q in _NON_MISSING.items() if k not in requests}
    if defaults:
        non0 = pod_requests(pod, non_missing=defaults)
    else:
        non0 = dict(requests)
    cpu = non0.get(CPU)
    mem = non0.get(MEMORY)
    return (0 if cpu is None else cpu.milli_value(), 0 if mem is None else mem.value())


# --- resource name classes (pkg/scheduler/util, v1helper) ------------------------------------


def is_prefixed_native_resource(name: str) -> bool:
    return "kubernetes.io/" in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


def is_hugepage_resource_name(name: str) -> bool:
    return name.startswith("hugepages-")


def is_attachable_volume_resource_name(name: str) -> bool:
    return name.startswith("attachable-volumes-")


@functools.lru_cache(maxsize=1024)
def is_extended_resource_name(name: str) -> bool:
    """Not native, and a valid qualified name once prefixed with ``requests.`` (the quota name it gets).

    Cached: plugins ask for the same few names once per pod and node.
    """
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def is_scalar_resource_name(name: str) -> bool:
    return (is_extended_resource_name(name) or is_hugepage_resource_name(name)
            or is_prefixed_native_resource(name) or is_attachable_volume_resource_name(name))


__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "aggregate_container_requests",
    "aggregate_spec_requests",
    "is_attachable_volume_resource_name",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_native_resource",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "non_zero_requests",
    "pod_level_requests_set",
    "pod_requests",
]
