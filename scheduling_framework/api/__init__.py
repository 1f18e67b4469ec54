"""Typed, immutable model of the Kubernetes objects the scheduler reads, parsed from manifest dicts."""

from scheduling_framework.api.meta import ObjectMeta, OwnerReference
from scheduling_framework.api.node import ContainerImage, Node, NodeCondition, NodeSpec, NodeStatus
from scheduling_framework.api.objects import KubeObject, Namespace
from scheduling_framework.api.pod import (
    Affinity,
    Container,
    ContainerPort,
    NodeAffinity,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    ResourceClaimRef,
    ResourceRequirements,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from scheduling_framework.api.quantity import Quantity, parse_quantity
from scheduling_framework.api.resource import (
    AllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from scheduling_framework.api.resources import non_zero_requests, pod_requests
from scheduling_framework.api.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    selector_matches,
)
from scheduling_framework.api.taints import (
    Taint,
    Toleration,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)

__all__ = [
    "Affinity", "AllocationResult", "Container", "DeviceClass", "DeviceRequestAllocationResult",
    "ResourceClaim", "ResourceClaimRef", "ResourceClaimTemplate", "ResourceSlice", "PodResourceClaim",
    "PodResourceClaimStatus", "ContainerImage", "ContainerPort", "KubeObject", "LabelSelector",
    "LabelSelectorRequirement", "Namespace", "Node", "NodeAffinity", "NodeCondition", "NodeSelector",
    "NodeSelectorRequirement", "NodeSelectorTerm", "NodeSpec", "NodeStatus", "ObjectMeta", "OwnerReference", "Pod",
    "PodAffinity", "PodAffinityTerm", "PodCondition", "PodSpec", "PodStatus", "PreferredSchedulingTerm", "Quantity",
    "ResourceRequirements", "Taint", "Toleration", "TopologySpreadConstraint", "Volume", "WeightedPodAffinityTerm",
    "find_matching_untolerated_taint", "non_zero_requests", "parse_quantity", "pod_requests", "selector_matches",
    "tolerations_tolerate_taint",
]
