"""Pod resource requests, computed as component-helpers ``resource.PodRequests`` does.

Containers add up; each regular init container needs its own requests plus every restartable (sidecar)
init container started before it; sidecars keep running, so they also add to the containers' sum; the pod
needs the maximum of those stages; pod-level requests (cpu, memory, hugepages) override; overhead adds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from scheduling_framework.api._requests import (
    CPU,
    MEMORY,
    ResourceList,
    _add,
    _max,
    aggregate_spec_requests,
    is_supported_pod_level_resource,
    sum_container_requests,
)
from scheduling_framework.api.names import is_qualified_name
from scheduling_framework.api.pod import Container, Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resize import ContainerResizeStatus, PodResizeStatus, RequestRules

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
                 exclude_overhead: bool = False, rules: RequestRules | None = None,
                 pod_level: bool = True) -> ResourceList:
    """The pod's effective requests (component-helpers PodRequests).

    ``rules`` None reads the spec alone (a pod not yet running, as NodeResourcesFit's PreFilter does);
    otherwise an in-place resize in the pod's status counts as those rules say (``UseStatusResources``).
    ``pod_level`` False sums the containers and ignores ``spec.resources`` (``SkipPodLevelResources``).
    """
    rs = pod.status.resize
    if not pod_level:
        reqs = aggregate_container_requests(pod, non_missing)
        if not exclude_overhead and pod.spec.overhead:
            _add(reqs, pod.spec.overhead)
        return reqs
    if rs is not None and rules is not None and rules.use_status:
        return _resized_pod_requests(pod, rs, rules, non_missing, exclude_overhead)
    reqs = aggregate_container_requests(pod, non_missing)
    res = pod.spec.resources
    if res is not None and pod_level_requests_set(pod):
        for k, q in res.requests.items():
            if is_supported_pod_level_resource(k):
                reqs[k] = q
    if not exclude_overhead and pod.spec.overhead:
        _add(reqs, pod.spec.overhead)
    return reqs


# --- in-place resize (status values count) -------------------------------------------------------------------

_ZERO = Quantity.parse("0")
_Requests = Callable[[Container, "ContainerResizeStatus | None", bool], Mapping[str, Quantity] | None]


def _max_of(*lists: Mapping[str, Quantity] | None) -> ResourceList:
    out: ResourceList = {}
    for rl in lists:
        if rl:
            _max(out, rl)
    return out


def _effective(infeasible: bool, spec: Mapping[str, Quantity], actuated: Mapping[str, Quantity] | None,
               allocated: Mapping[str, Quantity] | None) -> ResourceList:
    """Upstream determineEffectiveRequests: the largest of desired, actual and allocated; without the desired
    values when the resize is infeasible."""
    return _max_of(actuated, allocated) if infeasible else _max_of(spec, actuated, allocated)


def _sum_of_max(pod: Pod, rs: PodResizeStatus, non_missing: Mapping[str, Quantity] | None) -> ResourceList:
    """Up to 1.36: each container (and sidecar) with a reported ``resources`` counts its largest value."""
    statuses, infeasible = rs.containers, rs.infeasible

    def requests_of(c: Container, is_init: bool) -> Mapping[str, Quantity]:
        creqs: Mapping[str, Quantity] = c.resources.requests
        cs = None if is_init and not c.is_restartable else statuses.get(c.name)
        if cs is not None and cs.has_resources:
            return _effective(infeasible, creqs, cs.requests, cs.allocated)
        return creqs

    return sum_container_requests(pod.spec.containers, pod.spec.init_containers, requests_of, non_missing)


def _spec_requests(c: Container, cs: ContainerResizeStatus | None, infeasible: bool) -> Mapping[str, Quantity]:
    return c.resources.requests


def _allocated_requests(c: Container, cs: ContainerResizeStatus | None,
                        infeasible: bool) -> Mapping[str, Quantity] | None:
    if cs is not None and cs.allocated is not None:
        return cs.allocated
    return None if infeasible else c.resources.requests


def _actuated_requests(c: Container, cs: ContainerResizeStatus | None,
                       infeasible: bool) -> Mapping[str, Quantity] | None:
    if cs is not None and cs.requests is not None:
        return cs.requests
    if cs is not None and cs.allocated is not None:
        return cs.allocated
    return None if infeasible else c.resources.requests


def _aggregate_by(pod: Pod, rs: PodResizeStatus, fn: _Requests,
                  non_missing: Mapping[str, Quantity] | None) -> ResourceList:
    """The containers' total (sidecars and init peaks as usual) of the values ``fn`` picks per container."""
    statuses, infeasible = rs.containers, rs.infeasible
    return sum_container_requests(pod.spec.containers, pod.spec.init_containers,
                                  lambda c, _is_init: fn(c, statuses.get(c.name), infeasible), non_missing)


def _max_of_sums(pod: Pod, rs: PodResizeStatus, rules: RequestRules,
                 non_missing: Mapping[str, Quantity] | None) -> ResourceList:
    """1.37: the largest of the desired, actual and allocated totals (so that one container growing while
    another shrinks does not count both at their peak)."""
    spec_reqs = _aggregate_by(pod, rs, _spec_requests, non_missing)
    if rules.pod_level and rs.pod_allocated is not None and rs.pod_requests is not None:
        allocated: Mapping[str, Quantity] = rs.pod_allocated
        actuated: Mapping[str, Quantity] = rs.pod_requests
    else:
        allocated = _aggregate_by(pod, rs, _allocated_requests, non_missing)
        actuated = _aggregate_by(pod, rs, _actuated_requests, non_missing)
    if rs.infeasible:
        return _max_of(actuated, allocated)
    return _max_of(spec_reqs, actuated, allocated)


def _resized_pod_requests(pod: Pod, rs: PodResizeStatus, rules: RequestRules,
                          non_missing: Mapping[str, Quantity] | None, exclude_overhead: bool) -> ResourceList:
    if rules.max_of_sums:
        reqs = _max_of_sums(pod, rs, rules, non_missing)
    else:
        reqs = _sum_of_max(pod, rs, non_missing)
    res = pod.spec.resources
    if res is not None and pod_level_requests_set(pod):
        spec_level = res.requests
        if rules.max_of_sums:
            effective: Mapping[str, Quantity] = spec_level
            if rules.pod_level and rs.pod_resources_set:
                effective = _max_of(None if rs.infeasible else spec_level, rs.pod_requests, rs.pod_allocated)
            for k, q in effective.items():
                if is_supported_pod_level_resource(k):
                    reqs[k] = q
        else:
            eff = (_effective(rs.infeasible, spec_level, rs.pod_requests, rs.pod_allocated)
                   if rules.pod_level and rs.pod_resources_set else None)
            for k, q in spec_level.items():
                if is_supported_pod_level_resource(k):
                    # a resource the effective list lacks is zero (Go's map read of a missing key)
                    reqs[k] = q if eff is None else eff.get(k, _ZERO)
    if not exclude_overhead and pod.spec.overhead:
        _add(reqs, pod.spec.overhead)
    return reqs


def non_zero_requests(pod: Pod, requests: Mapping[str, Quantity] | None = None,
                      rules: RequestRules | None = None) -> tuple[int, int]:
    """(milli-cpu, memory bytes) with the scheduler's defaults for containers that request none (``requests``:
    the pod's requests under the same ``rules``, when already computed)."""
    level_set = pod_level_requests_set(pod)
    if requests is None:
        requests = pod_requests(pod, rules=rules)
    if not level_set:
        defaults: Mapping[str, Quantity] = _NON_MISSING
    else:
        defaults = {k: q for k, q in _NON_MISSING.items() if k not in requests}
    if not level_set and _requests_cpu_and_memory(pod, rules):
        # every container declares both: the defaults fill nothing in, the sum is the requests (the usual pod)
        non0 = dict(requests)
    elif defaults:
        non0 = pod_requests(pod, non_missing=defaults, rules=rules)
    else:
        non0 = dict(requests)
    cpu = non0.get(CPU)
    mem = non0.get(MEMORY)
    return (0 if cpu is None else cpu.milli_value(), 0 if mem is None else mem.value())


def _requests_cpu_and_memory(pod: Pod, rules: RequestRules | None) -> bool:
    """Whether the requests that count for every container and init container (the declared ones: no resize
    read from the status) name both cpu and memory."""
    if pod.status.resize is not None and rules is not None and rules.use_status:
        return False
    for group in (pod.spec.containers, pod.spec.init_containers):
        for c in group:
            r = c.resources.requests
            if CPU not in r or MEMORY not in r:
                return False
    return True


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
