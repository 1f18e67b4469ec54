"""ResourceClaims of pods: name resolution, reservation checks, and what the resourceclaim controller does.

The scheduler reads ResourceClaims (``resource.k8s.io``) from the object store. This module holds the
claim logic shared by the DynamicResources plugin, the reference scheduler and the simulation API:

- resolving a pod's ``spec.resourceClaims`` entry to a claim name, as upstream's ``resourceclaim.Name``
  (a template reference resolves through ``status.resourceClaimStatuses``);
- the reservation rules (``reservedFor`` holds at most 256 consumers; a claim is reserved for a pod when
  its uid is listed);
- the resourceclaim controller's part: generating a claim from a ResourceClaimTemplate for a pending pod
  (named ``<pod>-<claim>-<5 random characters>``, recorded in the pod's status), and releasing a pod's
  claims when the pod goes (its ``reservedFor`` entry is removed; a claim no consumer is left on is
  deallocated);
- the per-pod summary printed by the CLI (``claims: [{name, allocation: {devices: [...]}}]``).

Claims are kept as :class:`~scheduling_framework.api.objects.KubeObject` manifests; changes replace
the object in the store (objects are never mutated in place), so a fork's undo can put the old one back.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod

RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
DEVICE_CLASS = "DeviceClass"
RESOURCE_SLICE = "ResourceSlice"
DEVICE_TAINT_RULE = "DeviceTaintRule"
DRA_KINDS = frozenset({RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE, DEVICE_CLASS, RESOURCE_SLICE, DEVICE_TAINT_RULE})

#: upstream ResourceClaimReservedForMaxSize: how many consumers a claim may be reserved for.
RESERVED_FOR_MAX_SIZE = 256
#: upstream's finalizer the scheduler adds to a claim it allocates.
CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"
#: the annotation the resourceclaim controller puts on claims it generates.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

# The API server's generateName suffix alphabet and length (k8s.io/apiserver names.SimpleNameGenerator:
# utilrand.String, which avoids vowels and confusable digits).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LEN = 5
# generateName prefixes longer than this are cut (63 - 5 random characters - 1).
_MAX_GENERATE_NAME_LEN = 57


class ClaimLookupError(Exception):
    """A pod's claim cannot be resolved now; the message is upstream's (the pod is unschedulable)."""


# --------------------------------------------------------------------------- reading manifests

def _raw_of(pod: Pod) -> Mapping[str, Any]:
    raw = getattr(pod, "_raw", None)
    return raw if isinstance(raw, Mapping) else pod.to_dict()


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def pod_resource_claims(pod: Pod) -> list[Mapping[str, Any]]:
    """The pod's ``spec.resourceClaims`` entries (name plus resourceClaimName or resourceClaimTemplateName)."""
    if not pod.spec.resource_claims:  # parsed from the same list: no need to read the (maybe packed) manifest
        return []
    return [c for c in _list(_map(_raw_of(pod).get("spec")).get("resourceClaims")) if isinstance(c, Mapping)]


def has_resource_claims(pod: Pod) -> bool:
    return bool(pod.spec.resource_claims)


def needs_generated_claims(pod: Pod) -> bool:
    """Whether the pod names a ResourceClaimTemplate whose claim has not been generated yet."""
    entries = pod_resource_claims(pod)
    if not entries:
        return False
    done = {str(s.get("name")) for s in pod_claim_statuses(pod)}
    return any(e.get("resourceClaimTemplateName") and str(e.get("name")) not in done for e in entries)


def pod_claim_statuses(pod: Pod) -> list[Mapping[str, Any]]:
    if not pod.status.resource_claim_statuses:
        return []
    return [s for s in _list(_map(_raw_of(pod).get("status")).get("resourceClaimStatuses"))
            if isinstance(s, Mapping)]


def claim_name(pod: Pod, pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """Upstream ``resourceclaim.Name``: the claim's name (None: no claim is needed) and whether the claim
    must be checked to be owned by the pod (true for claims generated from a template)."""
    if pod_claim.get("resourceClaimName"):
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName"):
        for st in pod_claim_statuses(pod):
            if st.get("name") == pod_claim.get("name"):
                name = st.get("resourceClaimName")
                return (str(name) if name else None), True
        raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pod_claim.get("name", "")}": '
                           "none of the supported fields are set")


def is_for_pod(pod: Pod, claim: KubeObject) -> str | None:
    """Upstream ``resourceclaim.IsForPod``: None when the pod controls the claim, else the error message."""
    ref = claim.metadata.controller_ref()
    if ref is None or ref.uid != pod.uid:
        return (f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)")
    return None


def claim_status(claim: KubeObject) -> Mapping[str, Any]:
    return claim.status


def allocation_of(claim: KubeObject) -> Mapping[str, Any] | None:
    a = claim.status.get("allocation")
    return a if isinstance(a, Mapping) else None


def reserved_for(claim: KubeObject) -> list[Mapping[str, Any]]:
    return [r for r in _list(claim.status.get("reservedFor")) if isinstance(r, Mapping)]


def can_be_reserved(claim: KubeObject) -> bool:
    return len(reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def is_reserved_for_pod(pod: Pod, claim: KubeObject) -> bool:
    return any(r.get("uid") == pod.uid for r in reserved_for(claim))


def claim_key(claim: KubeObject) -> str:
    """A claim's identity for in-flight bookkeeping: its uid, or namespace/name when it has none."""
    return claim.uid or f"{claim.namespace}/{claim.name}"


def allocated_devices(claim: KubeObject, include_admin_access: bool = False) -> list[tuple[str, str, str]]:
    """(driver, pool, device) of each device in the claim's allocation. Devices allocated with
    adminAccess do not make the device unavailable to others, so they are left out unless asked for."""
    alloc = allocation_of(claim)
    if alloc is None:
        return []
    out = []
    for r in _list(_map(alloc.get("devices")).get("results")):
        if not isinstance(r, Mapping):
            continue
        if r.get("adminAccess") and not include_admin_access:
            continue
        out.append((str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", ""))))
    return out


def with_status(claim: KubeObject, status: Mapping[str, Any] | None, finalizer: bool = False) -> KubeObject:
    """A new claim object: ``claim`` with its status replaced (and the scheduler's finalizer added)."""
    raw = dict(claim.raw)
    if status:
        raw["status"] = dict(status)
    else:
        raw.pop("status", None)
    if finalizer:
        meta = dict(_map(raw.get("metadata")))
        fins = [str(f) for f in _list(meta.get("finalizers"))]
        if CLAIM_FINALIZER not in fins:
            meta["finalizers"] = [*fins, CLAIM_FINALIZER]
            raw["metadata"] = meta
    return KubeObject(claim.kind, claim.metadata, raw)


# --------------------------------------------------------------------------- what the controller does

def generated_claim_name(pod_name: str, pod_claim_name: str, rng: random.Random) -> str:
    """``<pod>-<claim>-<5 random characters>``, as the controller's generateName and the API server make it."""
    prefix = f"{pod_name}-{pod_claim_name}-"
    if len(prefix) > _MAX_GENERATE_NAME_LEN:
        prefix = prefix[:_MAX_GENERATE_NAME_LEN]
    return prefix + "".join(rng.choice(_SUFFIX_ALPHABET) for _ in range(_SUFFIX_LEN))


def generate_claims(pod: Pod, get_object: Callable[[str, str, str], KubeObject | None],
                    rng: random.Random) -> tuple[Pod, list[KubeObject]]:
    """The resourceclaim controller's work for one pending pod.

    For each ``spec.resourceClaims`` entry that names a template and has no ``status.resourceClaimStatuses``
    entry yet: when the template exists, a claim is created from it (owned by the pod, annotated with the
    pod's claim name) and its name recorded in the pod's status. A missing template creates nothing: the
    pod then waits with upstream's "ResourceClaim not created yet". Returns the (possibly updated) pod and
    the new claims; the pod is returned unchanged when nothing had to be done.
    """
    entries = pod_resource_claims(pod)
    if not entries:
        return pod, []
    done = {str(s.get("name")) for s in pod_claim_statuses(pod)}
    new_claims: list[KubeObject] = []
    statuses: list[dict[str, Any]] = [dict(s) for s in pod_claim_statuses(pod)]
    for entry in entries:
        tmpl_name = entry.get("resourceClaimTemplateName")
        name = str(entry.get("name", ""))
        if not tmpl_name or name in done:
            continue
        tmpl = get_object(RESOURCE_CLAIM_TEMPLATE, pod.namespace, str(tmpl_name))
        if tmpl is None:
            continue
        tmpl_spec = _map(tmpl.raw.get("spec"))
        tmpl_meta = _map(tmpl_spec.get("metadata"))
        claim_name_ = generated_claim_name(pod.name, name, rng)
        meta: dict[str, Any] = {
            "name": claim_name_,
            "namespace": pod.namespace,
            "uid": f"{pod.namespace}/{claim_name_}",
            "annotations": {**dict(_map(tmpl_meta.get("annotations"))), POD_CLAIM_NAME_ANNOTATION: name},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                 "controller": True, "blockOwnerDeletion": True}],
        }
        if tmpl_meta.get("labels"):
            meta["labels"] = dict(_map(tmpl_meta.get("labels")))
        api_version = str(tmpl.raw.get("apiVersion") or "resource.k8s.io/v1")
        manifest = {"apiVersion": api_version, "kind": RESOURCE_CLAIM, "metadata": meta,
                    "spec": copy.deepcopy(dict(_map(tmpl_spec.get("spec"))))}
        new_claims.append(KubeObject.from_dict(manifest, strict=None))
        statuses.append({"name": name, "resourceClaimName": claim_name_})
        done.add(name)
    if not new_claims:
        return pod, []
    from scheduling_framework.api.pod import PodResourceClaimStatus

    typed = tuple(PodResourceClaimStatus(str(st.get("name", "")),
                                         None if st.get("resourceClaimName") is None
                                         else str(st.get("resourceClaimName")))
                  for st in statuses)
    return pod.with_resource_claim_statuses(typed), new_claims


def release_pod_claims(pod: Pod, claims: Iterable[KubeObject]) -> list[KubeObject]:
    """The claims to store after ``pod`` went away: its ``reservedFor`` entry removed, and a claim left
    with no consumer deallocated (the controller clears the allocation of a claim nobody uses)."""
    out = []
    for c in claims:
        res = reserved_for(c)
        if not any(r.get("uid") == pod.uid for r in res):
            continue
        rest = [dict(r) for r in res if r.get("uid") != pod.uid]
        status = dict(c.status)
        if rest:
            status["reservedFor"] = rest
        else:
            status.pop("reservedFor", None)
            status.pop("allocation", None)
            status.pop("devices", None)
        out.append(with_status(c, status))
    return out


def pod_claim_objects(pod: Pod, get_object: Callable[[str, str, str], KubeObject | None]
                      ) -> list[tuple[str, KubeObject | None]]:
    """(pod claim name, the ResourceClaim object or None) for each resolvable entry of the pod."""
    out: list[tuple[str, KubeObject | None]] = []
    for entry in pod_resource_claims(pod):
        try:
            name, _ = claim_name(pod, entry)
        except ClaimLookupError:
            out.append((str(entry.get("name", "")), None))
            continue
        if name is None:
            continue
        out.append((str(entry.get("name", "")), get_object(RESOURCE_CLAIM, pod.namespace, name)))
    return out


def claim_summaries(pod: Pod, get_object: Callable[[str, str, str], KubeObject | None],
                    extended_claim: str | None = None) -> list[dict[str, Any]]:
    """The CLI's per-pod ``claims`` entries: each claim's name and the devices allocated to it.

    ``extended_claim``: the name of the claim DynamicResources made for the pod's extended resources
    (DRAExtendedResource); its entry comes last, with ``podClaimName`` null."""
    out: list[dict[str, Any]] = []
    entries: list[tuple[str | None, KubeObject | None]] = list(pod_claim_objects(pod, get_object))
    if extended_claim:
        entries.append((None, get_object(RESOURCE_CLAIM, pod.namespace, extended_claim)))
    for entry_name, claim in entries:
        if claim is None:
            out.append({"name": None, "podClaimName": entry_name, "allocation": None})
            continue
        alloc = allocation_of(claim)
        devices: list[dict[str, Any]] | None = None
        if alloc is not None:
            devices = [
                {"request": r.get("request"), "driver": r.get("driver"), "pool": r.get("pool"),
                 "device": r.get("device")}
                for r in _list(_map(alloc.get("devices")).get("results")) if isinstance(r, Mapping)
            ]
        out.append({"name": claim.name, "podClaimName": entry_name,
                    "allocation": None if devices is None else {"devices": devices}})
    return out


def extended_claim_name(pod: Pod, pod_status: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The name of the claim made for ``pod``'s extended resources, from the status fields plugins wrote
    (``ObjectStore.pod_status``), or None."""
    st = _map(_map(pod_status.get(pod.uid)).get("extendedResourceClaimStatus"))
    name = st.get("resourceClaimName")
    return str(name) if name else None


def claims_reserved_for(pod: Pod, claims: Sequence[KubeObject]) -> list[KubeObject]:
    return [c for c in claims if any(r.get("uid") == pod.uid for r in reserved_for(c))]


def _request_classes(spec: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
    """(field path, deviceClassName) of each request and subrequest of a claim spec (v1 and v1beta1 shapes)."""
    out: list[tuple[str, str]] = []
    for i, req in enumerate(_list(_map(spec.get("devices")).get("requests"))):
        rm = _map(req)
        rp = f"{path}.devices.requests[{i}]"
        if isinstance(rm.get("exactly"), Mapping):
            out.append((f"{rp}.exactly.deviceClassName", str(_map(rm["exactly"]).get("deviceClassName") or "")))
        elif rm.get("firstAvailable"):
            for j, sub in enumerate(_list(rm.get("firstAvailable"))):
                out.append((f"{rp}.firstAvailable[{j}].deviceClassName", str(_map(sub).get("deviceClassName") or "")))
        elif rm.get("deviceClassName"):
            out.append((f"{rp}.deviceClassName", str(rm.get("deviceClassName"))))
    return out


def dra_reference_warnings(nodes: Sequence[Any], pods: Sequence[Pod], objects: Sequence[KubeObject]) -> list[str]:
    """Warnings for DRA references that cannot be satisfied in the given cluster (the run still goes on):
    a ResourceSlice on a node that is not in the cluster, a claim or template naming an unknown DeviceClass,
    a pod naming a claim or template that is not in its namespace (but exists in another)."""
    node_names = {n.name for n in nodes}
    classes = {o.name for o in objects if o.kind == DEVICE_CLASS}
    by_kind: dict[str, dict[str, list[str]]] = {}
    for o in objects:
        if o.kind in (RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE):
            by_kind.setdefault(o.kind, {}).setdefault(o.name, []).append(o.namespace)
    out: list[str] = []
    for o in objects:
        if o.kind == RESOURCE_SLICE:
            nn = _map(o.raw.get("spec")).get("nodeName")
            if nn and nn not in node_names:
                out.append(f'ResourceSlice {o.name}: spec.nodeName: node "{nn}" is not in the cluster; '
                           "its devices are not available to any pod")
        elif o.kind in (RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE):
            if o.kind == RESOURCE_CLAIM and allocation_of(o) is not None:
                continue  # allocated already: its class no longer matters
            spec = _map(o.raw.get("spec"))
            path = "spec"
            if o.kind == RESOURCE_CLAIM_TEMPLATE:
                spec, path = _map(spec.get("spec")), "spec.spec"
            for fpath, cls in _request_classes(spec, path):
                if cls and cls not in classes:
                    out.append(f'{o.kind} {o.namespace}/{o.name}: {fpath}: DeviceClass "{cls}" is not in the '
                               "cluster; pods using it stay pending")
    for p in pods:
        generated = {str(st.get("name")) for st in pod_claim_statuses(p)}
        for i, entry in enumerate(pod_resource_claims(p)):
            if entry.get("resourceClaimTemplateName") and str(entry.get("name")) in generated:
                continue  # the claim was generated already; the template is no longer read
            for field, kind in (("resourceClaimName", RESOURCE_CLAIM),
                                ("resourceClaimTemplateName", RESOURCE_CLAIM_TEMPLATE)):
                name = entry.get(field)
                if not name:
                    continue
                namespaces = by_kind.get(kind, {}).get(str(name), [])
                if p.namespace not in namespaces:
                    where = (f" (it exists in namespace {', '.join(sorted(namespaces))}; a pod can only use "
                             f"a {kind} of its own namespace)") if namespaces else ""
                    out.append(f'Pod {p.key}: spec.resourceClaims[{i}].{field}: {kind} "{name}" is not in '
                               f'namespace "{p.namespace}"{where}')
    return out
