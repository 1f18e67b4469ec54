"""The Workload API (``scheduling.k8s.io/v1alpha1``, Kubernetes 1.35, gate GenericWorkload) and the Pod's
``spec.workloadRef``: which pods belong together, and how the scheduler must place them. From Kubernetes 1.36
the scheduler reads standalone PodGroup objects instead (``scheduling.k8s.io/v1alpha2``; ``v1beta1`` later),
each with its ``spec.schedulingPolicy``, joined by the Pod's ``spec.schedulingGroup.podGroupName``
(:class:`PodGroupObject`).

A Workload lists ``spec.podGroups``; each has a ``name`` and a ``policy`` that is exactly one of ``basic: {}``
(no constraint) or ``gang: {minCount: N}`` (no pod of the group binds until ``N`` of them can). A pod joins a
group through ``spec.workloadRef`` (``name`` of the Workload in the pod's namespace, ``podGroup``, and an
optional ``podGroupReplicaKey`` that splits one group template into independent replicas).

Validation follows the API server's (messages name the field path): at least one and at most 8 pod groups,
unique DNS-label names, exactly one policy, ``minCount`` greater than 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from scheduling_framework.api._parse import as_int, as_list, as_map, as_str
from scheduling_framework.api.meta import MetadataAccessors, ObjectMeta, object_ref, reraise_for
from scheduling_framework.errors import ManifestError, ValidationError, brief_str

WORKLOAD: Final = "Workload"
API_VERSION: Final = "scheduling.k8s.io/v1alpha1"
BASIC: Final = "Basic"
GANG: Final = "Gang"
MAX_POD_GROUPS: Final = 8
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _dns_label_error(value: str) -> str | None:
    if len(value) > 63:
        return f'Invalid value: "{value}": must be no more than 63 characters'
    if not _DNS_LABEL.match(value):
        return (f'Invalid value: "{value}": a lowercase RFC 1123 label must consist of lower case alphanumeric '
                "characters or '-', and must start and end with an alphanumeric character")
    return None


@attrs.frozen(slots=True)
class PodGroupPolicy:
    """``basic`` or ``gang``; ``min_count`` is the gang's quorum (0 for basic)."""

    kind: str = BASIC
    min_count: int = 0

    @property
    def is_gang(self) -> bool:
        return self.kind == GANG

    @classmethod
    def from_dict(cls, d: Any, path: str) -> PodGroupPolicy:
        m = as_map(d, path)
        has_basic = m.get("basic") is not None
        has_gang = m.get("gang") is not None
        if has_basic == has_gang:
            raise ValidationError("Invalid value: must specify exactly one of: `basic`, `gang`", path)
        if has_basic:
            as_map(m.get("basic"), f"{path}.basic")
            return cls(BASIC, 0)
        g = as_map(m.get("gang"), f"{path}.gang")
        if g.get("minCount") is None:
            raise ValidationError("Required value", f"{path}.gang.minCount")
        n = as_int(g.get("minCount"), f"{path}.gang.minCount")
        if n <= 0:
            raise ValidationError(f"Invalid value: {n}: must be greater than 0", f"{path}.gang.minCount")
        return cls(GANG, n)

    def describe(self) -> str:
        return f"gang, minCount {self.min_count}" if self.is_gang else "basic"


@attrs.frozen(slots=True)
class PodGroup:
    name: str
    policy: PodGroupPolicy


@attrs.frozen(slots=True, eq=False)
class Workload(MetadataAccessors):
    """A namespaced Workload: its pod groups, by name."""

    metadata: ObjectMeta
    pod_groups: tuple[PodGroup, ...]
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any) -> Workload:
        if not isinstance(manifest, Mapping):
            raise ManifestError(WORKLOAD, f"expected a mapping, got {type(manifest).__name__}")
        got = manifest.get("kind")
        if got not in (None, WORKLOAD):
            raise ManifestError(object_ref(WORKLOAD, manifest), f'expected kind "{WORKLOAD}", got "{brief_str(got)}"',
                                "kind")
        av = manifest.get("apiVersion")
        if av is not None and av != API_VERSION:
            raise ManifestError(object_ref(WORKLOAD, manifest),
                                f'unsupported apiVersion "{brief_str(av)}" for Workload: supported versions: '
                                f'"{API_VERSION}"', "apiVersion")
        try:
            meta = ObjectMeta.from_dict(manifest.get("metadata"), "metadata", namespaced=True)
            if not meta.name:
                raise ValidationError("Required value: name is required", "metadata.name")
            spec = as_map(manifest.get("spec"), "spec")
            raw_groups = as_list(spec.get("podGroups"), "spec.podGroups")
            if not raw_groups:
                raise ValidationError("Required value: must have at least one pod group", "spec.podGroups")
            if len(raw_groups) > MAX_POD_GROUPS:
                raise ValidationError(f"Too many: {len(raw_groups)}: must have at most {MAX_POD_GROUPS} items",
                                      "spec.podGroups")
            groups: list[PodGroup] = []
            seen: set[str] = set()
            for i, g in enumerate(raw_groups):
                path = f"spec.podGroups[{i}]"
                gm = as_map(g, path)
                name = as_str(gm.get("name"), f"{path}.name")
                if not name:
                    raise ValidationError("Required value", f"{path}.name")
                bad = _dns_label_error(name)
                if bad:
                    raise ValidationError(bad, f"{path}.name")
                if name in seen:
                    raise ValidationError(f'Duplicate value: "{name}"', f"{path}.name")
                seen.add(name)
                if gm.get("policy") is None:
                    raise ValidationError("Required value", f"{path}.policy")
                groups.append(PodGroup(name, PodGroupPolicy.from_dict(gm.get("policy"), f"{path}.policy")))
        except ValidationError as e:
            raise reraise_for(WORKLOAD, manifest, e) from None
        return cls(meta, tuple(groups), manifest)

    def pod_group(self, name: str) -> PodGroup | None:
        for g in self.pod_groups:
            if g.name == name:
                return g
        return None

    def to_dict(self) -> dict[str, Any]:
        return dict(self._raw)


@attrs.frozen(slots=True)
class WorkloadReference:
    """A pod's ``spec.workloadRef``."""

    name: str
    pod_group: str
    pod_group_replica_key: str = ""

    @classmethod
    def from_dict(cls, d: Any, path: str) -> WorkloadReference:
        m = as_map(d, path)
        name = as_str(m.get("name"), f"{path}.name")
        if not name:
            raise ValidationError("Required value", f"{path}.name")
        group = as_str(m.get("podGroup"), f"{path}.podGroup")
        if not group:
            raise ValidationError("Required value", f"{path}.podGroup")
        return cls(name, group, as_str(m.get("podGroupReplicaKey"), f"{path}.podGroupReplicaKey"))

    def describe(self) -> str:
        """``workload/podGroup`` (``[replicaKey]`` when set), as the outputs name a group."""
        key = f"[{self.pod_group_replica_key}]" if self.pod_group_replica_key else ""
        return f"{self.name}/{self.pod_group}{key}"


POD_GROUP: Final = "PodGroup"
#: the API group of Kubernetes' own PodGroup and Workload (an ObjectStore reader passes it to tell them apart)
SCHEDULING_GROUP: Final = "scheduling.k8s.io"
#: the API versions of Kubernetes' own PodGroup (scheduler-plugins' PodGroup is scheduling.x-k8s.io)
POD_GROUP_API_VERSIONS: Final = ("scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha3",
                                  "scheduling.k8s.io/v1beta1")


def is_kubernetes_pod_group(manifest: Mapping[str, Any]) -> bool:
    """A PodGroup of Kubernetes' scheduling.k8s.io group (not scheduler-plugins' scheduling.x-k8s.io one)."""
    return str(manifest.get("apiVersion", "")).startswith("scheduling.k8s.io/")


@attrs.frozen(slots=True, eq=False)
class PodGroupObject(MetadataAccessors):
    """A PodGroup (``scheduling.k8s.io/v1alpha2``, Kubernetes 1.36+): one group of pods and its policy."""

    metadata: ObjectMeta
    policy: PodGroupPolicy
    #: the Workload and its pod group template the PodGroup was made from ("" when not given)
    workload_name: str = ""
    template_name: str = ""
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any) -> PodGroupObject:
        if not isinstance(manifest, Mapping):
            raise ManifestError(POD_GROUP, f"expected a mapping, got {type(manifest).__name__}")
        got = manifest.get("kind")
        if got not in (None, POD_GROUP):
            raise ManifestError(object_ref(POD_GROUP, manifest), f'expected kind "{POD_GROUP}", got "{brief_str(got)}"',
                                "kind")
        av = manifest.get("apiVersion")
        if av is not None and av not in POD_GROUP_API_VERSIONS:
            raise ManifestError(object_ref(POD_GROUP, manifest),
                                f'unsupported apiVersion "{brief_str(av)}" for PodGroup: supported versions: '
                                + ", ".join(f'"{v}"' for v in POD_GROUP_API_VERSIONS), "apiVersion")
        try:
            meta = ObjectMeta.from_dict(manifest.get("metadata"), "metadata", namespaced=True)
            if not meta.name:
                raise ValidationError("Required value: name is required", "metadata.name")
            spec = as_map(manifest.get("spec"), "spec")
            if spec.get("schedulingPolicy") is None:
                raise ValidationError("Required value", "spec.schedulingPolicy")
            policy = PodGroupPolicy.from_dict(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
            ref = as_map(as_map(spec.get("podGroupTemplateRef"), "spec.podGroupTemplateRef").get("workload"),
                         "spec.podGroupTemplateRef.workload")
            wl = as_str(ref.get("workloadName"), "spec.podGroupTemplateRef.workload.workloadName")
            tpl = as_str(ref.get("podGroupTemplateName"), "spec.podGroupTemplateRef.workload.podGroupTemplateName")
        except ValidationError as e:
            raise reraise_for(POD_GROUP, manifest, e) from None
        return cls(meta, policy, wl, tpl, manifest)

    def to_dict(self) -> dict[str, Any]:
        return dict(self._raw)


def scheduling_group_from_dict(d: Any, path: str) -> str:
    """The Pod's ``spec.schedulingGroup`` (Kubernetes 1.36+): the name of its PodGroup."""
    m = as_map(d, path)
    name = as_str(m.get("podGroupName"), f"{path}.podGroupName")
    if not name:
        raise ValidationError("Required value", f"{path}.podGroupName")
    return name


def group_key(namespace: str, ref: WorkloadReference) -> tuple[str, str, str, str]:
    """One pod group instance: namespace, workload, pod group, replica key (upstream's podGroupKey)."""
    return (namespace, ref.name, ref.pod_group, ref.pod_group_replica_key)
