"""The node declared features registry, per Kubernetes release (upstream
``k8s.io/component-helpers/nodedeclaredfeatures/features``), and the inference of a pod's requirements.

Each feature has a name (what a kubelet puts in ``status.declaredFeatures``), a test of whether scheduling a
pod needs it, and an optional last release for which it still matters (``max_version``: past it every node
of a supported skew has the feature, so no pod requires it). Most registered features are checked only when
a running pod is updated (the admission side); the ones that need a node to *schedule* a pod are:

* RestartAllContainersOnContainerExits: a container or init container has a ``restartPolicyRules`` entry
  whose action is ``RestartAllContainers`` (1.35+);
* UserNamespacesHostNetworkSupport: ``hostNetwork: true`` with ``hostUsers: false`` (1.36+);
* VolumeBindMountOptions: a (init, ephemeral) container's volume mount sets ``bindMountOptions`` (1.37+).

Sources: component-helpers v0.35.4 (1.35), v0.36.0 to v0.36.3 (1.36), and master as of the 1.37 code freeze
(its nine features, the set 1.37 shipped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

import attrs

from scheduling_framework.api.declared_features import PodFeatureUse


def _never(use: PodFeatureUse) -> bool:
    return False


def _restart_all_containers(use: PodFeatureUse) -> bool:
    return use.restart_all_containers


def _user_namespaces_host_network(use: PodFeatureUse) -> bool:
    return use.host_network and use.host_users is False


def _bind_mount_options(use: PodFeatureUse) -> bool:
    return use.bind_mount_options


@attrs.frozen(slots=True)
class Feature:
    """One registered declared feature: its name, whether scheduling a pod requires it, and the last
    Kubernetes version (``"1.38.0"``) for which it is still required (None: no bound)."""

    name: str
    infer_for_scheduling: Callable[[PodFeatureUse], bool] = _never
    max_version: str | None = None


RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS: Final = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK_SUPPORT: Final = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS: Final = "VolumeBindMountOptions"

_RESTART_ALL: Final = Feature(RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS, _restart_all_containers)
_POD_LEVEL_RESIZE: Final = Feature("InPlacePodLevelResourcesVerticalScaling")
_USERNS_HOST_NETWORK: Final = Feature(USER_NAMESPACES_HOST_NETWORK_SUPPORT, _user_namespaces_host_network)

#: release -> the registered features (update-only ones included: they make the universe a node's list is
#: read against from 1.36 on, where names the registry does not know are ignored).
REGISTRY: Final[dict[str, tuple[Feature, ...]]] = {
    "1.35": (_RESTART_ALL, Feature("GuaranteedQoSPodCPUResize"), _POD_LEVEL_RESIZE),
    "1.36": (_RESTART_ALL, _POD_LEVEL_RESIZE, Feature("ExtendWebSocketsToKubelet"),
             Feature("InPlacePodVerticalScalingInitContainers"), _USERNS_HOST_NETWORK),
    "1.37": (_RESTART_ALL, _POD_LEVEL_RESIZE, Feature("ExtendWebSocketsToKubelet"),
             Feature("InPlacePodVerticalScalingInitContainers"),
             Feature("InPlacePodVerticalScalingMemoryBackedVolumes"), _USERNS_HOST_NETWORK,
             Feature("DRANodeAllocatableResources"),
             Feature(VOLUME_BIND_MOUNT_OPTIONS, _bind_mount_options), Feature("DRAOptionalNodeOperations")),
}


def registry_for(release: str) -> tuple[Feature, ...]:
    """The features registered in ``release`` (none before 1.35, where the framework does not exist)."""
    return REGISTRY.get(release, ())


def parse_version(text: str) -> tuple[int, int, int]:
    """``"1.36"`` / ``"v1.36.2"`` as (1, 36, 2); ValueError otherwise."""
    parts = text.lstrip("v").split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"invalid version {text!r}")
    nums = [int(p) for p in parts] + [0] * (3 - len(parts))
    return nums[0], nums[1], nums[2]


def infer_for_pod_scheduling(features: Iterable[Feature], use: PodFeatureUse,
                             target_version: str | None) -> frozenset[str]:
    """The names of the features scheduling a pod needs on a cluster at ``target_version`` (upstream's
    ``InferForPodScheduling``); ValueError when there is no target version."""
    if target_version is None:
        raise ValueError("target version cannot be nil")
    target = parse_version(target_version)
    out: set[str] = set()
    for f in features:
        if f.max_version is not None and target > parse_version(f.max_version):
            continue
        if f.infer_for_scheduling(use):
            out.add(f.name)
    return frozenset(out)


__all__ = ["REGISTRY", "RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS", "USER_NAMESPACES_HOST_NETWORK_SUPPORT",
           "VOLUME_BIND_MOUNT_OPTIONS", "Feature", "infer_for_pod_scheduling", "parse_version", "registry_for"]
