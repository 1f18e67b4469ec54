"""What containers request altogether: the part of ``resources`` that the Pod model's own API defaulting needs.

Kept apart from :mod:`scheduling_framework.api.resources` (which reads whole Pods) so that ``api.pod`` can use
it while a PodSpec is being built, without the two modules importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from scheduling_framework.api.quantity import Quantity

CPU = "cpu"
MEMORY = "memory"


class _Resources(Protocol):
    @property
    def requests(self) -> Mapping[str, Quantity]: ...


class _Container(Protocol):
    @property
    def resources(self) -> _Resources: ...

    @property
    def is_restartable(self) -> bool: ...


class _Spec(Protocol):
    @property
    def containers(self) -> Sequence[_Container]: ...

    @property
    def init_containers(self) -> Sequence[_Container]: ...


ResourceList = dict[str, Quantity]


def _add(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    for k, q in other.items():
        have = into.get(k)
        into[k] = q if have is None else have + q


def _max(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    for k, q in other.items():
        have = into.get(k)
        if have is None or q.cmp(have) > 0:
            into[k] = q


def _with_defaults(reqs: Mapping[str, Quantity], defaults: Mapping[str, Quantity] | None) -> Mapping[str, Quantity]:
    if not defaults:
        return reqs
    out = dict(reqs)
    for k, q in defaults.items():
        if k not in reqs:
            out[k] = q
    return out


def is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


_C = TypeVar("_C", bound=_Container)


def sum_container_requests(containers: Sequence[_C], init_containers: Sequence[_C],
                           requests_of: Callable[[_C, bool], Mapping[str, Quantity] | None],
                           non_missing: Mapping[str, Quantity] | None = None) -> ResourceList:
    """The containers' total as component-helpers aggregates it: containers add up; each regular init container
    needs its own requests plus the sidecars started before it; sidecars also add to the sum; the pod needs the
    largest stage. ``requests_of(container, is_init)`` gives the values that count for each container (its
    declared requests, or those an in-place resize makes count); None counts as nothing."""
    reqs: ResourceList = {}
    for c in containers:
        _add(reqs, _with_defaults(requests_of(c, False) or {}, non_missing))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for ic in init_containers:
        creqs = _with_defaults(requests_of(ic, True) or {}, non_missing)
        if ic.is_restartable:
            _add(reqs, creqs)
            _add(sidecars, creqs)
            stage: Mapping[str, Quantity] = sidecars
        else:
            tmp = dict(creqs)
            _add(tmp, sidecars)
            stage = tmp
        _max(init_peak, stage)
    _max(reqs, init_peak)
    return reqs


def _declared(c: _Container, is_init: bool) -> Mapping[str, Quantity]:
    return c.resources.requests


def aggregate_spec_requests(spec: _Spec, non_missing: Mapping[str, Quantity] | None = None) -> ResourceList:
    """What the containers of ``spec`` request altogether (the pod-level defaulting needs it before a Pod exists)."""
    return sum_container_requests(spec.containers, spec.init_containers, _declared, non_missing)

__all__ = ["CPU", "MEMORY", "ResourceList", "aggregate_spec_requests", "is_supported_pod_level_resource",
           "sum_container_requests"]
