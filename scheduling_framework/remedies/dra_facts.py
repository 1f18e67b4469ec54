"""DRA facts for a pending pod: a DeviceClass the cluster lacks, or one no device of any ResourceSlice matches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scheduling_framework.api import resource as r
from scheduling_framework.api.pod import Pod
from scheduling_framework.dra.claims import DEVICE_CLASS, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE, RESOURCE_SLICE
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.simulation.core import SimulatorCore


def _requests(sim: SimulatorCore, pod: Pod) -> Iterator[tuple[str, r.ExactDeviceRequest]]:
    """(claim/request, request) of every device request of the pod's claims (each firstAvailable alternative)."""
    for c in pod.spec.resource_claims:
        spec: r.ResourceClaimSpec | None = None
        if c.resource_claim_name:
            obj = sim.objects.get(RESOURCE_CLAIM, pod.namespace, c.resource_claim_name)
            spec = r.ResourceClaim.from_dict(obj.raw).spec if obj is not None else None
        elif c.resource_claim_template_name:
            obj = sim.objects.get(RESOURCE_CLAIM_TEMPLATE, pod.namespace, c.resource_claim_template_name)
            spec = r.ResourceClaimTemplate.from_dict(obj.raw).spec if obj is not None else None
        if spec is None:
            continue
        for req in spec.devices.requests:
            if req.exactly is not None:
                yield f"{c.name}/{req.name}", req.exactly
            for sub in req.first_available:
                yield f"{c.name}/{req.name}/{sub.name}", sub.request


def dra_facts(sim: SimulatorCore, pod: Pod) -> list[str]:
    """What no device of the cluster offers the pod's claims, in plain words (empty when the pod has none)."""
    if not pod.spec.resource_claims:
        return []
    from scheduling_framework.dra.cel import CELCache, CELError

    out: list[str] = []
    try:
        requests = list(_requests(sim, pod))
        slices = [r.ResourceSlice.from_dict(o.raw) for o in sim.objects.list(RESOURCE_SLICE)]
    except SchedulingFrameworkError:
        return []  # DynamicResources names a claim or slice it cannot read in its own message
    cache = CELCache()
    for where, req in requests:
        obj = sim.objects.get(DEVICE_CLASS, "", req.device_class_name)
        if obj is None:
            out.append(f"no DeviceClass {req.device_class_name} (request {where})")
            continue
        try:
            cls: Any = r.DeviceClass.from_dict(obj.raw)
        except SchedulingFrameworkError:
            continue
        exprs = [s.expression for s in cls.spec.selectors] + [s.expression for s in req.selectors]
        found = 0
        for sl in slices:
            for dev in sl.spec.devices:
                try:
                    if all(cache.matches(e, dev, sl.spec.driver) for e in exprs):
                        found += 1
                except CELError:
                    continue
        if not found:
            whose = f"DeviceClass {req.device_class_name}'s selector" + (
                " and the request's" if req.selectors else "")
            out.append(f"no device matches {whose} (request {where}; {len(slices)} ResourceSlice(s) listed)")
    return out


__all__ = ["dra_facts"]
