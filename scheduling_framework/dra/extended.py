"""Extended resources served through DRA (upstream's DRAExtendedResource): which DeviceClass backs a resource
name, and the device requests and container mappings of the claim the scheduler makes for a pod.

A DeviceClass backs two extended resource names: ``spec.extendedResourceName`` when it sets one, and always
the implicit ``deviceclass.resource.kubernetes.io/<class name>``. When several classes set the same
``extendedResourceName``, the most recently created one backs it (ties: the alphabetically lower name), as
upstream's extended-resource cache decides. A pod requesting such a resource on a node whose allocatable
does not list it (or lists 0) gets its devices from DRA instead of a device plugin: NodeResourcesFit skips
the resource there, and DynamicResources allocates a claim made for the pod (one ExactCount request per
container and resource, named ``container-<i>-request-<j>``) and records which container uses which request
in the pod's ``status.extendedResourceClaimStatus``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Container, Pod
from scheduling_framework.api.resources import is_extended_resource_name, pod_requests

#: the prefix of the implicit extended resource name of every DeviceClass (upstream ResourceDeviceClassPrefix)
DEVICE_CLASS_PREFIX: Final = "deviceclass.resource.kubernetes.io/"
#: the annotation that marks the claim the scheduler created for a pod's extended resources
EXTENDED_RESOURCE_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
#: the name of that claim while it exists only in the scheduler's memory (not a valid object name)
SPECIAL_CLAIM_NAME: Final = "<extended-resources>"


def is_dra_extended_resource_name(name: str) -> bool:
    """An extended resource name, or an implicit ``deviceclass.resource.kubernetes.io/<class>`` name."""
    return name.startswith(DEVICE_CLASS_PREFIX) or is_extended_resource_name(name)


def requests_dra_candidate(pod: Pod) -> bool:
    """Whether any container (or init container) of ``pod`` requests a resource a DeviceClass could back.

    Cheap and conservative: used to decide whether a pod may need DynamicResources without any claim."""
    return any(is_dra_extended_resource_name(name) and not q.is_zero()
               for c in (*pod.spec.init_containers, *pod.spec.containers)
               for name, q in c.resources.requests.items())


def _created(obj: KubeObject) -> float:
    ts = obj.metadata.creation_timestamp
    return ts.timestamp() if isinstance(ts, datetime) else 0.0


def _explicit_name(obj: KubeObject) -> str | None:
    spec = obj.raw.get("spec")
    name = spec.get("extendedResourceName") if isinstance(spec, Mapping) else None
    return name if isinstance(name, str) and name else None


class DeviceClassResolver:
    """Extended resource name -> the DeviceClass (manifest object) backing it."""

    __slots__ = ("_by_resource", "classes")

    def __init__(self, classes: Iterable[KubeObject]) -> None:
        self.classes = tuple(classes)
        by_resource: dict[str, KubeObject] = {}
        best: dict[str, tuple[float, str]] = {}
        for c in self.classes:
            by_resource[DEVICE_CLASS_PREFIX + c.name] = c
        for c in self.classes:
            name = _explicit_name(c)
            if name is None:
                continue
            # newest wins; equal creation times: the lower name
            rank = (_created(c), c.name)
            have = best.get(name)
            if have is None or rank[0] > have[0] or (rank[0] == have[0] and rank[1] < have[1]):
                best[name] = rank
                by_resource[name] = c
        self._by_resource = by_resource

    def get(self, resource_name: str) -> KubeObject | None:
        """The class backing ``resource_name``, or None."""
        return self._by_resource.get(resource_name)

    def __bool__(self) -> bool:
        return bool(self._by_resource)


_resolvers: weakref.WeakKeyDictionary[Any, tuple[tuple[int, ...], tuple[KubeObject, ...], DeviceClassResolver]] = \
    weakref.WeakKeyDictionary()
_resolvers_lock = threading.Lock()


def resolver_for(store: Any) -> DeviceClassResolver:
    """The resolver of the DeviceClasses in ``store`` (an ObjectStore), rebuilt only when they change."""
    classes = tuple(store.list("DeviceClass"))
    ids = tuple(id(c) for c in classes)
    with _resolvers_lock:
        hit = _resolvers.get(store)
        if hit is not None and hit[0] == ids:
            return hit[2]
        resolver = DeviceClassResolver(classes)
        _resolvers[store] = (ids, classes, resolver)  # holding the classes keeps their ids unique
        return resolver


def pod_scalar_requests(pod: Pod) -> dict[str, int]:
    """The pod's requests of DRA-capable resource names with a non-zero integer value."""
    out: dict[str, int] = {}
    for name, q in pod_requests(pod).items():
        if is_dra_extended_resource_name(name) and not q.is_zero():
            out[name] = q.value()
    return out


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: Sequence[dict[str, Any] | None]) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """The device request container ``index`` needs for ``resource`` beyond what ``reusable`` requests
    already give it, and its mappings to requests."""
    reqs = container.resources.requests
    q = reqs.get(resource)
    if q is None:
        return None, []
    want = q.value()
    if want == 0 or q.milli_value() % 1000 != 0:
        return None, []
    mappings: list[dict[str, str]] = []
    have = 0
    for r in reusable:
        if r is None:
            continue
        have += int(r["exactly"]["count"])
        mappings.append({"containerName": container.name, "resourceName": resource, "requestName": r["name"]})
        if have >= want:
            return None, mappings
    position = sorted(reqs).index(resource)
    name = f"container-{index}-request-{position}"
    request = {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                         "count": want - have}}
    mappings.append({"containerName": container.name, "resourceName": resource, "requestName": name})
    return request, mappings


def requests_and_mappings(pod: Pod, resources: Iterable[str], resolver: DeviceClassResolver
                          ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The device requests (manifest mappings, sorted by name) of the pod's claim for ``resources`` and the
    container-to-request mappings, as upstream builds them: regular containers and sidecars each get their
    own request; a plain init container first reuses the requests of the long-lived containers after it,
    and the init containers share the largest of their own requests."""
    containers = (*pod.spec.init_containers, *pod.spec.containers)
    n_init = len(pod.spec.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.is_restartable]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and not c.is_restartable]
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(resources):
        cls = resolver.get(resource)
        if cls is None:
            continue
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            req, maps = _container_request(i, containers[i], resource, cls.name, ())
            long_requests[i] = req
            long_mappings += maps
        biggest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            req, maps = _container_request(i, containers[i], resource, cls.name, long_requests[i:])
            if req is not None:
                short_names.add(req["name"])
                if biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]:
                    biggest = req
            short_mappings += maps
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings


def is_extended_resource_claim_of(claim: KubeObject, pod: Pod) -> bool:
    """Whether ``claim`` is the claim the scheduler created for ``pod``'s extended resources."""
    if claim.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
        return False
    ref = claim.metadata.controller_ref()
    return ref is not None and ref.name == pod.name and ref.uid == pod.uid


def find_extended_resource_claim(pod: Pod, claims: Iterable[KubeObject]) -> KubeObject | None:
    """The claim created for ``pod``'s extended resources in an earlier attempt, if any."""
    for c in claims:
        if is_extended_resource_claim_of(c, pod):
            return c
    return None


def special_claim(pod: Pod) -> KubeObject:
    """The pod's extended-resource claim as it exists in memory before it is created (no requests yet)."""
    return KubeObject.from_dict({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": SPECIAL_CLAIM_NAME, "namespace": pod.namespace, "uid": f"{pod.uid}/extended-resources",
                     "generateName": f"{pod.name}-extended-resources-",
                     "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                          "controller": True}]},
        "spec": {}})


def node_claim(claim: KubeObject, requests: Sequence[Mapping[str, Any]]) -> KubeObject:
    """``claim`` with the device requests a node needs."""
    raw = dict(claim.raw)
    raw["spec"] = {"devices": {"requests": [dict(r) for r in requests]}}
    return KubeObject(claim.kind, claim.metadata, raw)


__all__ = [
    "DEVICE_CLASS_PREFIX", "EXTENDED_RESOURCE_CLAIM_ANNOTATION", "SPECIAL_CLAIM_NAME", "DeviceClassResolver",
    "find_extended_resource_claim", "is_dra_extended_resource_name", "is_extended_resource_claim_of", "node_claim",
    "pod_scalar_requests", "requests_and_mappings", "requests_dra_candidate", "resolver_for", "special_claim",
]
