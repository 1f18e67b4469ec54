"""In-place pod resize: the Pod status fields that make a running pod's requests differ from its spec.

With InPlacePodVerticalScaling a pod's spec requests can change while it runs; until the kubelet has applied
the change, the node holds what it allocated (``allocatedResources``) and what the runtime reports
(``resources``). The scheduler counts the larger of desired, allocated and actual, so that neither a
pending upsize nor an unfinished downsize over-commits the node (upstream component-helpers
``resource.PodRequests`` with ``UseStatusResources``). A resize the kubelet found infeasible
(condition ``PodResizePending`` with reason ``Infeasible``) will not happen: the desired values are left out.

The status is parsed once with the Pod. When every reported value equals the spec, :attr:`PodStatus.resize`
stays None, and the requests are computed from the spec alone, exactly as for a pod without status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import attrs

from scheduling_framework.api._parse import as_list, as_map, as_str
from scheduling_framework.api._requests import aggregate_spec_requests
from scheduling_framework.api.frozen import freeze_map
from scheduling_framework.api.quantity import Quantity

#: the pod condition a pending resize sets, and its reasons.
POD_RESIZE_PENDING: Final = "PodResizePending"
POD_RESIZE_IN_PROGRESS: Final = "PodResizeInProgress"
REASON_INFEASIBLE: Final = "Infeasible"
REASON_DEFERRED: Final = "Deferred"


def _opt_map(value: Mapping[str, Quantity] | None) -> Mapping[str, Quantity] | None:
    return None if value is None else freeze_map(value)


@attrs.frozen(slots=True)
class ContainerResizeStatus:
    """One ``status.containerStatuses[]`` / ``initContainerStatuses[]`` entry, as far as requests go.

    ``has_resources``: the entry has ``resources``; ``requests``: its ``resources.requests`` (None when
    absent); ``allocated``: ``allocatedResources`` (None when absent).
    """

    name: str
    has_resources: bool = False
    requests: Mapping[str, Quantity] | None = attrs.field(default=None, converter=_opt_map)
    allocated: Mapping[str, Quantity] | None = attrs.field(default=None, converter=_opt_map)


@attrs.frozen(slots=True)
class PodResizeStatus:
    """The resize-relevant part of a pod's status: per-container status by container name, the pod-level
    ``status.resources`` (``pod_resources_set``, its ``requests``) and ``status.allocatedResources``, and
    whether the pending resize is infeasible."""

    containers: Mapping[str, ContainerResizeStatus] = attrs.field(factory=dict, converter=freeze_map)
    pod_resources_set: bool = False
    pod_requests: Mapping[str, Quantity] | None = attrs.field(default=None, converter=_opt_map)
    pod_allocated: Mapping[str, Quantity] | None = attrs.field(default=None, converter=_opt_map)
    infeasible: bool = False


class _Condition(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def reason(self) -> str: ...


def resize_infeasible(conditions: tuple[_Condition, ...]) -> bool:
    """Upstream ``IsPodResizeInfeasible``: the first PodResizePending condition has reason Infeasible."""
    for c in conditions:
        if c.type == POD_RESIZE_PENDING:
            return c.reason == REASON_INFEASIBLE
    return False


def _resources(d: Any, path: str) -> dict[str, Quantity]:
    return {str(k): Quantity.parse(v, f"{path}.{k}") for k, v in as_map(d, path).items()}


def _same(a: Mapping[str, Quantity] | None, b: Mapping[str, Quantity]) -> bool:
    """``a`` absent, or the same resources with equal quantities as ``b``."""
    if a is None:
        return True
    if a.keys() != b.keys():
        return False
    return all(q.cmp(b[k]) == 0 for k, q in a.items())


def parse_resize_status(m: Mapping[str, Any], spec: Any, conditions: tuple[_Condition, ...],
                        path: str = "status") -> PodResizeStatus | None:
    """The resize part of the pod status mapping ``m`` (``spec``: the parsed PodSpec); None when the status
    reports nothing that differs from the spec (then the spec alone gives the requests)."""
    containers: dict[str, ContainerResizeStatus] = {}
    for group in ("containerStatuses", "initContainerStatuses"):
        for i, cs in enumerate(as_list(m.get(group), f"{path}.{group}")):
            cpath = f"{path}.{group}[{i}]"
            cm = as_map(cs, cpath)
            name = as_str(cm.get("name"), f"{cpath}.name")
            res, alloc = cm.get("resources"), cm.get("allocatedResources")
            if res is None and alloc is None:
                continue
            reqs = None
            if res is not None:
                rm = as_map(res, f"{cpath}.resources")
                if rm.get("requests") is not None:
                    reqs = _resources(rm.get("requests"), f"{cpath}.resources.requests")
            containers[name] = ContainerResizeStatus(
                name, res is not None, reqs,
                None if alloc is None else _resources(alloc, f"{cpath}.allocatedResources"))
    pod_res, pod_alloc_raw = m.get("resources"), m.get("allocatedResources")
    pod_reqs = None
    if pod_res is not None:
        prm = as_map(pod_res, f"{path}.resources")
        if prm.get("requests") is not None:
            pod_reqs = _resources(prm.get("requests"), f"{path}.resources.requests")
    pod_alloc = None if pod_alloc_raw is None else _resources(pod_alloc_raw, f"{path}.allocatedResources")
    infeasible = resize_infeasible(conditions)
    if not containers and pod_res is None and pod_alloc is None and not infeasible:
        return None
    status = PodResizeStatus(containers, pod_res is not None, pod_reqs, pod_alloc, infeasible)
    return None if _matches_spec(status, spec) else status


def _matches_spec(status: PodResizeStatus, spec: Any) -> bool:
    """Whether ``status`` changes nothing: every reported value equals the spec, and no infeasible resize
    (which would drop the desired values). Every release's formula then gives the spec's requests."""
    if status.infeasible:
        return False
    by_name = {c.name: c for c in (*spec.init_containers, *spec.containers)}
    for cs in status.containers.values():
        c = by_name.get(cs.name)
        if c is None:
            continue  # a status for no container: no formula reads it
        want = c.resources.requests
        if not (_same(cs.requests, want) and _same(cs.allocated, want)):
            return False
    if status.pod_resources_set or status.pod_allocated is not None:
        pod_want = spec.resources.requests if spec.resources is not None else aggregate_spec_requests(spec)
        if not (_same(status.pod_requests, pod_want) and _same(status.pod_allocated, pod_want)):
            return False
    return True


@attrs.frozen(slots=True)
class RequestRules:
    """How a running pod's requests are computed in a run (the release and its gates).

    ``use_status``: InPlacePodVerticalScaling (status values count); ``pod_level``:
    InPlacePodLevelResourcesVerticalScaling (pod-level status values count); ``max_of_sums``: 1.37's
    aggregation (the largest of the desired, actual and allocated *totals*; up to 1.36 each container's
    largest value is summed).
    """

    use_status: bool = True
    pod_level: bool = True
    max_of_sums: bool = True

    @classmethod
    def for_gates(cls, gates: Any) -> RequestRules:
        """The rules of a :class:`~scheduling_framework.features.FeatureGates`."""
        from scheduling_framework.versions import at_least

        return cls(gates.enabled("InPlacePodVerticalScaling"),
                   gates.enabled("InPlacePodLevelResourcesVerticalScaling"),
                   at_least(gates.release, MAX_OF_SUMS_SINCE))


#: the release from which totals, not per-container maxima, are compared (component-helpers PR 9d1c3c2).
MAX_OF_SUMS_SINCE: Final = "1.37"
#: the newest release's defaults.
DEFAULT_RULES: Final = RequestRules()

__all__ = ["DEFAULT_RULES", "MAX_OF_SUMS_SINCE", "POD_RESIZE_IN_PROGRESS", "POD_RESIZE_PENDING", "REASON_DEFERRED",
           "REASON_INFEASIBLE", "ContainerResizeStatus", "PodResizeStatus", "RequestRules", "parse_resize_status",
           "resize_infeasible"]
