"""The Pod as the scheduler reads it: frozen, slotted, parsed once from a manifest."""

from __future__ import annotations

import copy
import marshal
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from scheduling_framework.api._parse import (
    as_bool,
    as_int,
    as_list,
    as_map,
    as_opt_int,
    as_str,
    as_time,
    str_map,
    str_tuple,
)
from scheduling_framework.api._requests import aggregate_spec_requests, is_supported_pod_level_resource
from scheduling_framework.api.declared_features import keep_feature_use
from scheduling_framework.api.frozen import deep_freeze, freeze_map
from scheduling_framework.api.meta import MetadataAccessors, ObjectMeta, check_kind, reraise_for
from scheduling_framework.api.packed import PackedManifest, unpacked
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resize import PodResizeStatus, parse_resize_status
from scheduling_framework.api.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm
from scheduling_framework.api.taints import Toleration
from scheduling_framework.api.workload import WorkloadReference, scheduling_group_from_dict
from scheduling_framework.errors import ValidationError, brief_str

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


def resource_list(d: Any, path: str) -> dict[str, Quantity]:
    m = as_map(d, path)
    return {str(k): Quantity.parse(v, f"{path}.{k}") for k, v in m.items()}


@attrs.frozen(slots=True)
class ResourceClaimRef:
    """An entry of ``resources.claims``: a pod claim (``spec.resourceClaims[].name``) this container uses,
    optionally only one of its requests."""

    name: str
    request: str = ""

    @classmethod
    def from_dict(cls, d: Any, path: str) -> ResourceClaimRef:
        m = as_map(d, path)
        name = as_str(m.get("name"), f"{path}.name")
        if not name:
            raise ValidationError("Required value", f"{path}.name")
        return cls(name, as_str(m.get("request"), f"{path}.request"))


@attrs.frozen(slots=True)
class ResourceRequirements:
    requests: Mapping[str, Quantity] = attrs.field(factory=dict, converter=freeze_map)
    limits: Mapping[str, Quantity] = attrs.field(factory=dict, converter=freeze_map)
    claims: tuple[ResourceClaimRef, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str, *, default_requests: bool = True) -> ResourceRequirements:
        m = as_map(d, path)
        limits = resource_list(m.get("limits"), f"{path}.limits")
        requests = resource_list(m.get("requests"), f"{path}.requests")
        if default_requests:
            # API defaulting (a container's resources): a limit with no request sets the request to the limit.
            for k, q in limits.items():
                requests.setdefault(k, q)
        claims = tuple(ResourceClaimRef.from_dict(c, f"{path}.claims[{i}]")
                       for i, c in enumerate(as_list(m.get("claims"), f"{path}.claims")))
        return cls(requests, limits, claims)


def _mutable(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A top-level copy of a manifest to change (a packed one is unpacked once, not once per key)."""
    if isinstance(raw, PackedManifest):
        return raw.unpack()
    return dict(raw)


@attrs.frozen(slots=True)
class PodResourceClaim:
    """``spec.resourceClaims[]``: a name for the pod's use and exactly one source, an existing ResourceClaim
    or a ResourceClaimTemplate from which the resourceclaim controller generates one."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> PodResourceClaim:
        m = as_map(d, path)
        name = as_str(m.get("name"), f"{path}.name")
        if not name:
            raise ValidationError("Required value", f"{path}.name")
        rcn, rctn = m.get("resourceClaimName"), m.get("resourceClaimTemplateName")
        out = cls(name, None if rcn is None else as_str(rcn, f"{path}.resourceClaimName"),
                  None if rctn is None else as_str(rctn, f"{path}.resourceClaimTemplateName"))
        if (out.resource_claim_name is None) == (out.resource_claim_template_name is None):
            raise ValidationError("Invalid value: must specify one of: `resourceClaimName`, "
                                  "`resourceClaimTemplateName`", path)
        return out


@attrs.frozen(slots=True)
class PodResourceClaimStatus:
    """``status.resourceClaimStatuses[]``: the claim generated for a template-backed pod claim
    (``resource_claim_name`` None: none was needed)."""

    name: str
    resource_claim_name: str | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> PodResourceClaimStatus:
        m = as_map(d, path)
        rcn = m.get("resourceClaimName")
        return cls(as_str(m.get("name"), f"{path}.name"),
                   None if rcn is None else as_str(rcn, f"{path}.resourceClaimName"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.resource_claim_name is not None:
            d["resourceClaimName"] = self.resource_claim_name
        return d


@attrs.frozen(slots=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    host_ip: str = ""
    protocol: str = "TCP"
    name: str = ""

    @classmethod
    def from_dict(cls, d: Any, path: str) -> ContainerPort:
        m = as_map(d, path)
        return cls(as_int(m.get("containerPort"), f"{path}.containerPort"),
                   as_int(m.get("hostPort"), f"{path}.hostPort"),
                   as_str(m.get("hostIP"), f"{path}.hostIP"),
                   as_str(m.get("protocol"), f"{path}.protocol") or "TCP",
                   as_str(m.get("name"), f"{path}.name"))


@attrs.frozen(slots=True)
class Container:
    name: str
    image: str = ""
    resources: ResourceRequirements = attrs.field(factory=ResourceRequirements)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str = ""  # "Always" on an init container makes it a restartable sidecar

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Container:
        m = as_map(d, path)
        ports = tuple(ContainerPort.from_dict(p, f"{path}.ports[{i}]")
                      for i, p in enumerate(as_list(m.get("ports"), f"{path}.ports")))
        return cls(as_str(m.get("name"), f"{path}.name"), as_str(m.get("image"), f"{path}.image"),
                   ResourceRequirements.from_dict(m.get("resources"), f"{path}.resources"), ports,
                   as_str(m.get("restartPolicy"), f"{path}.restartPolicy"))

    @property
    def is_restartable(self) -> bool:
        return self.restart_policy == "Always"


# --- affinity -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class NodeAffinity:
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: tuple[PreferredSchedulingTerm, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> NodeAffinity:
        m = as_map(d, path)
        req = m.get("requiredDuringSchedulingIgnoredDuringExecution")
        rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        ppath = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
        prefs = []
        for i, p in enumerate(as_list(m.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath)):
            pm = as_map(p, f"{ppath}[{i}]")
            prefs.append(PreferredSchedulingTerm(as_int(pm.get("weight"), f"{ppath}[{i}].weight"),
                                                 NodeSelectorTerm.from_dict(pm.get("preference"),
                                                                            f"{ppath}[{i}].preference")))
        return cls(None if req is None else NodeSelector.from_dict(req, rpath), tuple(prefs))


@attrs.frozen(slots=True)
class PodAffinityTerm:
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> PodAffinityTerm:
        m = as_map(d, path)
        return cls(as_str(m.get("topologyKey"), f"{path}.topologyKey"),
                   LabelSelector.from_opt(m.get("labelSelector"), f"{path}.labelSelector"),
                   str_tuple(m.get("namespaces"), f"{path}.namespaces"),
                   LabelSelector.from_opt(m.get("namespaceSelector"), f"{path}.namespaceSelector"),
                   str_tuple(m.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
                   str_tuple(m.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"))


@attrs.frozen(slots=True)
class WeightedPodAffinityTerm:
    weight: int
    pod_affinity_term: PodAffinityTerm


@attrs.frozen(slots=True)
class PodAffinity:
    """Used for both podAffinity and podAntiAffinity (the shapes are identical)."""

    required_during_scheduling_ignored_during_execution: tuple[PodAffinityTerm, ...] = ()
    preferred_during_scheduling_ignored_during_execution: tuple[WeightedPodAffinityTerm, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> PodAffinity:
        m = as_map(d, path)
        rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        ppath = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
        req = tuple(PodAffinityTerm.from_dict(t, f"{rpath}[{i}]")
                    for i, t in enumerate(as_list(m.get("requiredDuringSchedulingIgnoredDuringExecution"), rpath)))
        prefs = []
        for i, p in enumerate(as_list(m.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath)):
            pm = as_map(p, f"{ppath}[{i}]")
            prefs.append(WeightedPodAffinityTerm(
                as_int(pm.get("weight"), f"{ppath}[{i}].weight"),
                PodAffinityTerm.from_dict(pm.get("podAffinityTerm"), f"{ppath}[{i}].podAffinityTerm")))
        return cls(req, tuple(prefs))


@attrs.frozen(slots=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Affinity:
        m = as_map(d, path)
        na, pa, paa = m.get("nodeAffinity"), m.get("podAffinity"), m.get("podAntiAffinity")
        return cls(None if na is None else NodeAffinity.from_dict(na, f"{path}.nodeAffinity"),
                   None if pa is None else PodAffinity.from_dict(pa, f"{path}.podAffinity"),
                   None if paa is None else PodAffinity.from_dict(paa, f"{path}.podAntiAffinity"))


#: Parsed ``spec.affinity`` by its manifest's content (marshal, version 2: no back-references, so equal data in
#: the same order gives equal bytes). Replicas of one template share one frozen Affinity: parsed once, held once,
#: and whatever the scheduler derives from its terms per object is derived once. Cleared beyond the bound.
_AFFINITIES: dict[bytes, Affinity] = {}
_AFFINITIES_KEPT = 4096
_AFFINITY_KEPT_BYTES = 16384  # a bigger affinity is parsed for its pod alone (the table stays small)


def _affinity_from_dict(d: Any, path: str) -> Affinity:
    """``Affinity.from_dict``, shared by manifests whose affinity is the same plain data. Errors are never kept
    (each manifest reports its own path)."""
    try:
        key = marshal.dumps(d, 2)
    except ValueError:  # not plain data (a mapping of another type): parse it alone
        return Affinity.from_dict(d, path)
    if len(key) > _AFFINITY_KEPT_BYTES:
        return Affinity.from_dict(d, path)
    hit = _AFFINITIES.get(key)
    if hit is None:
        hit = Affinity.from_dict(d, path)
        if len(_AFFINITIES) >= _AFFINITIES_KEPT:
            _AFFINITIES.clear()
        _AFFINITIES[key] = hit
    return hit


@attrs.frozen(slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None  # None = Honor
    node_taints_policy: str | None = None  # None = Ignore
    match_label_keys: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> TopologySpreadConstraint:
        m = as_map(d, path)
        wu = as_str(m.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable")
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            raise ValidationError(f'Unsupported value: "{brief_str(wu)}": supported values: "DoNotSchedule", '
                                  '"ScheduleAnyway"',
                                  f"{path}.whenUnsatisfiable")
        nap = m.get("nodeAffinityPolicy")
        ntp = m.get("nodeTaintsPolicy")
        return cls(as_int(m.get("maxSkew"), f"{path}.maxSkew"), as_str(m.get("topologyKey"), f"{path}.topologyKey"),
                   wu, LabelSelector.from_opt(m.get("labelSelector"), f"{path}.labelSelector"),
                   as_opt_int(m.get("minDomains"), f"{path}.minDomains"),
                   None if nap is None else as_str(nap, f"{path}.nodeAffinityPolicy"),
                   None if ntp is None else as_str(ntp, f"{path}.nodeTaintsPolicy"),
                   str_tuple(m.get("matchLabelKeys"), f"{path}.matchLabelKeys"))


# --- volumes --------------------------------------------------------------------------------

_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "rbd",
                   "iscsi", "azureDisk", "csi", "cinder", "hostPath", "emptyDir", "configMap", "secret",
                   "projected", "downwardAPI", "nfs")


@attrs.frozen(slots=True)
class Volume:
    """A pod volume: its name, which source kind it uses, and that source's raw fields."""

    name: str
    source_kind: str = ""
    source: Mapping[str, Any] = attrs.field(factory=dict, converter=deep_freeze)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Volume:
        m = as_map(d, path)
        kind: str = ""
        src: Mapping[str, Any] = {}
        for k, v in m.items():
            if k != "name":
                kind, src = k, as_map(v, f"{path}.{k}")
                break
        return cls(as_str(m.get("name"), f"{path}.name"), kind, dict(src))

    @property
    def claim_name(self) -> str | None:
        """The PVC this volume uses (persistentVolumeClaim, or the generated one for generic ephemeral)."""
        if self.source_kind == "persistentVolumeClaim":
            return str(self.source.get("claimName", ""))
        return None


# --- pod ------------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""


@attrs.frozen(slots=True)
class PodSpec:
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Mapping[str, Quantity] = attrs.field(factory=dict, converter=freeze_map)
    resources: ResourceRequirements | None = None  # pod-level resources
    node_name: str = ""
    node_selector: Mapping[str, str] = attrs.field(factory=dict, converter=freeze_map)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    scheduling_gates: tuple[str, ...] = ()
    volumes: tuple[Volume, ...] = ()
    host_network: bool = False
    resource_claims: tuple[PodResourceClaim, ...] = ()
    # spec.workloadRef (Workload API, GenericWorkload): the pod group this pod belongs to
    workload_ref: WorkloadReference | None = None
    # spec.schedulingGroup.podGroupName (Kubernetes 1.36+): the PodGroup this pod belongs to
    scheduling_group: str | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str = "spec") -> PodSpec:
        m = as_map(d, path)
        containers = tuple(Container.from_dict(c, f"{path}.containers[{i}]")
                           for i, c in enumerate(as_list(m.get("containers"), f"{path}.containers")))
        inits = tuple(Container.from_dict(c, f"{path}.initContainers[{i}]")
                      for i, c in enumerate(as_list(m.get("initContainers"), f"{path}.initContainers")))
        aff = m.get("affinity")
        tols = tuple(Toleration.from_dict(t, f"{path}.tolerations[{i}]")
                     for i, t in enumerate(as_list(m.get("tolerations"), f"{path}.tolerations")))
        tscs = tuple(TopologySpreadConstraint.from_dict(t, f"{path}.topologySpreadConstraints[{i}]")
                     for i, t in enumerate(as_list(m.get("topologySpreadConstraints"),
                                                   f"{path}.topologySpreadConstraints")))
        gates = []
        for i, g in enumerate(as_list(m.get("schedulingGates"), f"{path}.schedulingGates")):
            gates.append(as_str(as_map(g, f"{path}.schedulingGates[{i}]").get("name"),
                                f"{path}.schedulingGates[{i}].name"))
        vols = tuple(Volume.from_dict(v, f"{path}.volumes[{i}]")
                     for i, v in enumerate(as_list(m.get("volumes"), f"{path}.volumes")))
        host_network = as_bool(m.get("hostNetwork"), f"{path}.hostNetwork")
        if host_network:
            # API defaulting: with host networking, a port's hostPort defaults to its containerPort.
            containers = tuple(_default_host_ports(c) for c in containers)
            inits = tuple(_default_host_ports(c) for c in inits)
        res = m.get("resources")
        pp = m.get("preemptionPolicy")
        rc_path = f"{path}.resourceClaims"
        rclaims = tuple(PodResourceClaim.from_dict(c, f"{rc_path}[{i}]")
                        for i, c in enumerate(as_list(m.get("resourceClaims"), rc_path)))
        seen: set[str] = set()
        for i, c in enumerate(rclaims):
            if c.name in seen:
                raise ValidationError(f'Duplicate value: "{c.name}"', f"{rc_path}[{i}].name")
            seen.add(c.name)
        return cls(
            containers=containers,
            init_containers=inits,
            overhead=resource_list(m.get("overhead"), f"{path}.overhead"),
            resources=None if res is None else _default_pod_requests(
                ResourceRequirements.from_dict(res, f"{path}.resources", default_requests=False), containers, inits),
            node_name=as_str(m.get("nodeName"), f"{path}.nodeName"),
            node_selector=str_map(m.get("nodeSelector"), f"{path}.nodeSelector"),
            affinity=None if aff is None else _affinity_from_dict(aff, f"{path}.affinity"),
            tolerations=tols,
            topology_spread_constraints=tscs,
            scheduler_name=as_str(m.get("schedulerName"), f"{path}.schedulerName") or DEFAULT_SCHEDULER_NAME,
            priority=as_opt_int(m.get("priority"), f"{path}.priority"),
            priority_class_name=as_str(m.get("priorityClassName"), f"{path}.priorityClassName"),
            preemption_policy=None if pp is None else as_str(pp, f"{path}.preemptionPolicy"),
            scheduling_gates=tuple(gates),
            volumes=vols,
            host_network=host_network,
            resource_claims=rclaims,
            workload_ref=None if m.get("workloadRef") is None else WorkloadReference.from_dict(
                m.get("workloadRef"), f"{path}.workloadRef"),
            scheduling_group=None if m.get("schedulingGroup") is None else scheduling_group_from_dict(
                m.get("schedulingGroup"), f"{path}.schedulingGroup"),
        )


def _default_pod_requests(res: ResourceRequirements, containers: tuple[Container, ...],
                          inits: tuple[Container, ...]) -> ResourceRequirements:
    """API defaulting of pod-level requests (``defaultPodRequests``), done only when pod-level limits are set.

    A missing cpu / memory request becomes what the containers request altogether (after their own
    defaulting), when they request it; any supported pod-level resource still missing takes its limit.
    """
    if not res.limits:
        return res
    requests = dict(res.requests)
    aggregated = aggregate_spec_requests(PodSpec(containers=containers, init_containers=inits))
    for k, q in aggregated.items():
        if k not in requests and k in ("cpu", "memory"):
            requests[k] = q
    for k, q in res.limits.items():
        if k not in requests and is_supported_pod_level_resource(k):
            requests[k] = q
    return attrs.evolve(res, requests=requests)


def _default_host_ports(c: Container) -> Container:
    if not any(p.host_port == 0 for p in c.ports):
        return c
    ports = tuple(attrs.evolve(p, host_port=p.container_port) if p.host_port == 0 else p for p in c.ports)
    return attrs.evolve(c, ports=ports)


@attrs.frozen(slots=True)
class PodStatus:
    phase: str = ""
    nominated_node_name: str = ""
    conditions: tuple[PodCondition, ...] = ()
    start_time: datetime | None = None
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    #: in-place resize: status values that differ from the spec (None: none do); see api.resize
    resize: PodResizeStatus | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str = "status", spec: PodSpec | None = None) -> PodStatus:
        m = as_map(d, path)
        conds = []
        for i, c in enumerate(as_list(m.get("conditions"), f"{path}.conditions")):
            cm = as_map(c, f"{path}.conditions[{i}]")
            conds.append(PodCondition(as_str(cm.get("type"), f"{path}.conditions[{i}].type"),
                                      as_str(cm.get("status"), f"{path}.conditions[{i}].status"),
                                      as_str(cm.get("reason"), f"{path}.conditions[{i}].reason")))
        rcs_path = f"{path}.resourceClaimStatuses"
        rcs = tuple(PodResourceClaimStatus.from_dict(c, f"{rcs_path}[{i}]")
                    for i, c in enumerate(as_list(m.get("resourceClaimStatuses"), rcs_path)))
        resize = parse_resize_status(m, spec if spec is not None else PodSpec(), tuple(conds), path)
        return cls(as_str(m.get("phase"), f"{path}.phase"),
                   as_str(m.get("nominatedNodeName"), f"{path}.nominatedNodeName"), tuple(conds),
                   as_time(m.get("startTime"), f"{path}.startTime"), rcs, resize)


def _spec_with_node_name(spec: PodSpec, node_name: str) -> PodSpec:
    """``attrs.evolve(spec, node_name=node_name)``: every field copied as it is (evolve would run the
    converters again on values they already converted), then the node name set. Binding a pod and what-if
    placements copy specs all the time. Pinned by tests/test_perf_equivalence.py::
    test_spec_with_node_name_equals_evolve."""
    if type(spec) is not PodSpec:
        return attrs.evolve(spec, node_name=node_name)
    new = object.__new__(PodSpec)
    set_field = object.__setattr__
    for name in _POD_SPEC_FIELDS:
        set_field(new, name, getattr(spec, name))
    set_field(new, "node_name", node_name)
    return new


_POD_SPEC_FIELDS = tuple(f.name for f in attrs.fields(PodSpec))


@attrs.frozen(slots=True, eq=False)
class Pod(MetadataAccessors):
    """A v1 Pod. Build with ``Pod.from_dict(manifest)``; ``to_dict()`` returns the manifest.

    Pods compare by identity of content through ``key`` (namespace/name/uid) being unique in a cluster;
    ``==`` compares the parsed fields.
    """

    metadata: ObjectMeta
    spec: PodSpec
    status: PodStatus
    _raw: Mapping[str, Any] = attrs.field(repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> Pod:
        """A Pod from its manifest (a dict, or an object of a Python Kubernetes client: ``api.clients``).

        Fields the API does not define warn (UnknownFieldWarning) or, with ``strict=True``, raise
        ManifestValidationError; ``strict=None`` skips that check (the cluster readers report them on their own).
        """
        manifest = m = check_kind(manifest, "Pod", strict)
        try:
            meta = ObjectMeta.from_dict(m.get("metadata"), "metadata", namespaced=True)
            if not meta.name:
                raise ValidationError("Required value: name is required", "metadata.name")
            spec = PodSpec.from_dict(m.get("spec"), "spec")
            status = PodStatus.from_dict(m.get("status"), "status", spec)
        except ValidationError as e:
            raise reraise_for("Pod", manifest, e) from None
        if not meta.uid:
            # The API server assigns uids; a hand-written file often has none. Derive a stable one.
            meta = attrs.evolve(meta, uid=f"{meta.namespace}/{meta.name}")
        return cls(meta, spec, status, m)

    def to_dict(self) -> dict[str, Any]:
        return unpacked(self._raw)

    def raw_manifest(self) -> Mapping[str, Any]:
        """The manifest itself, not a copy: read it, never change it (``to_dict()`` gives a copy)."""
        return self._raw

    def with_packed_manifest(self) -> Pod:
        """The same pod, its manifest kept packed (:mod:`~scheduling_framework.api.packed`): for big dumps. What
        is read from the manifest alone besides the parsed fields (the node declared features' spec fields) is
        read first, so reading it later unpacks nothing."""
        packed = PackedManifest.pack(self._raw)
        keep_feature_use(self, packed)
        return Pod(self.metadata, self.spec, self.status, packed)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pod):
            return NotImplemented
        return (self.metadata, self.spec, self.status) == (other.metadata, other.spec, other.status)

    def __hash__(self) -> int:
        return hash(self.metadata.uid)

    # convenience accessors (name, namespace, uid, labels, annotations come from MetadataAccessors) ---
    @property
    def key(self) -> str:
        """``namespace/name``, as kube's cache keys and the CLI output use."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def priority(self) -> int:
        """corev1helpers.PodPriority: the spec priority, 0 when unset."""
        p = self.spec.priority
        return 0 if p is None else p

    @property
    def preemption_policy(self) -> str:
        return self.spec.preemption_policy or PREEMPT_LOWER_PRIORITY

    @property
    def is_terminating(self) -> bool:
        return self.metadata.deletion_timestamp is not None

    # copies with one change (pods are immutable) ------------------------------------------
    def with_node_name(self, node_name: str) -> Pod:
        spec_of_pod = _spec_with_node_name(self.spec, node_name)
        if isinstance(self._raw, PackedManifest):  # (a parsed pod's spec is a mapping, or absent)
            # (nothing derived from the manifest reads spec.nodeName)
            return Pod(self.metadata, spec_of_pod, self.status,
                       self._raw.with_field("spec", "nodeName", node_name, keep_derived=True))
        raw = _mutable(self._raw)
        spec = dict(raw.get("spec") or {})
        spec["nodeName"] = node_name
        raw["spec"] = spec
        return Pod(self.metadata, spec_of_pod, self.status, raw)

    def with_nominated_node_name(self, node_name: str) -> Pod:
        raw = _mutable(self._raw)
        status = dict(raw.get("status") or {})
        if node_name:
            status["nominatedNodeName"] = node_name
        else:
            status.pop("nominatedNodeName", None)
        raw["status"] = status
        return Pod(self.metadata, self.spec, attrs.evolve(self.status, nominated_node_name=node_name), raw)

    def with_resource_claim_statuses(self, statuses: tuple[PodResourceClaimStatus, ...]) -> Pod:
        """A copy whose status.resourceClaimStatuses is ``statuses`` (what the resourceclaim controller writes)."""
        raw = _mutable(self._raw)
        status = dict(raw.get("status") or {})
        if statuses:
            status["resourceClaimStatuses"] = [s.to_dict() for s in statuses]
        else:
            status.pop("resourceClaimStatuses", None)
        raw["status"] = status
        return Pod(self.metadata, self.spec, attrs.evolve(self.status, resource_claim_statuses=tuple(statuses)),
                   raw)

    def with_status_fields(self, fields: Mapping[str, Any]) -> Pod:
        """A copy whose manifest status has ``fields`` set (status fields the scheduler does not read, such as
        ``extendedResourceClaimStatus``)."""
        raw = _mutable(self._raw)
        raw["status"] = {**dict(raw.get("status") or {}), **{k: copy.deepcopy(v) for k, v in fields.items()}}
        return Pod(self.metadata, self.spec, self.status, raw)

    def with_priority(self, priority: int, preemption_policy: str | None, priority_class_name: str) -> Pod:
        """The pod as priority admission leaves it: ``spec.priority`` (and the class name and preemption
        policy it resolved) set."""
        raw = _mutable(self._raw)
        spec = dict(raw.get("spec") or {})
        spec["priority"] = priority
        if priority_class_name:
            spec["priorityClassName"] = priority_class_name
        if preemption_policy:
            spec["preemptionPolicy"] = preemption_policy
        raw["spec"] = spec
        new_spec = attrs.evolve(self.spec, priority=priority, preemption_policy=preemption_policy,
                                priority_class_name=priority_class_name or self.spec.priority_class_name)
        return Pod(self.metadata, new_spec, self.status, raw)

    def with_deletion_timestamp(self, ts: datetime) -> Pod:
        raw = _mutable(self._raw)
        meta = dict(raw.get("metadata") or {})
        meta["deletionTimestamp"] = ts.isoformat()
        raw["metadata"] = meta
        return Pod(attrs.evolve(self.metadata, deletion_timestamp=ts), self.spec, self.status, raw)

    def __repr__(self) -> str:
        return f"Pod({self.key}, node={self.spec.node_name!r})"


def pod_key(pod: Pod) -> str:
    return pod.key


def all_containers(spec: PodSpec) -> tuple[Container, ...]:
    return spec.init_containers + spec.containers


def str_or_empty(value: Any) -> str:
    return "" if value is None else str(value)


__all__ = [
    "Affinity", "Container", "ContainerPort", "NodeAffinity", "Pod", "PodAffinity", "PodAffinityTerm",
    "PodCondition", "PodResourceClaim", "PodResourceClaimStatus", "PodSpec", "PodStatus", "ResourceClaimRef",
    "ResourceRequirements", "TopologySpreadConstraint", "Volume",
    "WeightedPodAffinityTerm", "resource_list", "str_map", "DEFAULT_SCHEDULER_NAME",
]
