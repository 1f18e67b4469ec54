"""Node declared features: the Pod fields a node feature is inferred from, and the checks of a Node's
``status.declaredFeatures`` list.

A kubelet publishes, in ``status.declaredFeatures``, the names of the features its node supports (KEP-5328);
the NodeDeclaredFeatures scheduler plugin keeps a pod off nodes that do not declare a feature the pod's spec
needs. Which spec fields imply which feature is upstream's ``k8s.io/component-helpers/nodedeclaredfeatures``
registry (the plugin package holds it per release); this module reads those fields, which the Pod model does
not otherwise keep, from the manifest, with errors that name the field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

import attrs

from scheduling_framework.api._field import duplicate, go_quote, invalid
from scheduling_framework.api._parse import as_bool, as_list, as_map, as_str
from scheduling_framework.api.packed import PackedManifest
from scheduling_framework.errors import ValidationError


class Manifested(Protocol):
    """What this module reads of a pod: its manifest (api.pod imports this module to pack a pod's manifest, so the
    pod is taken by what it offers, not by its class)."""

    def raw_manifest(self) -> Mapping[str, Any]: ...

#: ``restartPolicyRules[].action`` that restarts every container of the pod (ContainerRestartRules).
RESTART_ALL_CONTAINERS: Final = "RestartAllContainers"

_FEATURE_NAME = re.compile(r"^[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*$")
_MAX_FEATURE_NAME = 253  # DNS1123SubdomainMaxLength


@attrs.frozen(slots=True)
class PodFeatureUse:
    """The spec fields of a pod that the node declared features registry looks at."""

    #: a container or init container has a ``restartPolicyRules`` entry with action RestartAllContainers
    restart_all_containers: bool = False
    #: ``spec.hostNetwork``
    host_network: bool = False
    #: ``spec.hostUsers`` (None when unset)
    host_users: bool | None = None
    #: a container, init container or ephemeral container mounts a volume with ``bindMountOptions``
    bind_mount_options: bool = False


_NONE: Final = PodFeatureUse()
_GROUPS: Final = ("initContainers", "containers", "ephemeralContainers")


#: The name under which a packed manifest keeps its pod's PodFeatureUse (or the ValidationError reading it gave).
_DERIVED = "declared-features/use"


def keep_feature_use(pod: Manifested, packed: PackedManifest) -> None:
    """Read ``pod``'s feature use from its manifest (not yet packed) and keep it in ``packed``: it depends on
    spec.containers, initContainers, ephemeralContainers (restartPolicyRules, volumeMounts), spec.hostUsers
    and spec.hostNetwork."""
    try:
        packed.derived[_DERIVED] = _read_feature_use(pod)
    except ValidationError as e:
        packed.derived[_DERIVED] = e


def pod_feature_use(pod: Manifested) -> PodFeatureUse:
    """What ``pod``'s spec uses of the fields features are inferred from; ValidationError (naming the field
    path) when one of them has the wrong shape."""
    raw = pod.raw_manifest()
    if isinstance(raw, PackedManifest):
        kept = raw.derived.get(_DERIVED)
        if isinstance(kept, PodFeatureUse):
            return kept
        if isinstance(kept, ValidationError):
            raise kept.with_traceback(None)
    return _read_feature_use(pod)


def _read_feature_use(pod: Manifested) -> PodFeatureUse:
    spec = as_map(pod.raw_manifest().get("spec"), "spec")
    restart_all = False
    bind_mounts = False
    for group in _GROUPS:
        items = spec.get(group)
        if items is None:
            continue
        for i, c in enumerate(as_list(items, f"spec.{group}")):
            # Field paths are built only for a field that is there (most pods have neither).
            cm = c if type(c) is dict else as_map(c, f"spec.{group}[{i}]")
            rules = cm.get("restartPolicyRules") if group != "ephemeralContainers" else None
            if rules is not None:
                rpath = f"spec.{group}[{i}].restartPolicyRules"
                for j, rule in enumerate(as_list(rules, rpath)):
                    action = as_str(as_map(rule, f"{rpath}[{j}]").get("action"), f"{rpath}[{j}].action")
                    restart_all = restart_all or action == RESTART_ALL_CONTAINERS
            mounts = cm.get("volumeMounts")
            if mounts is None:
                continue
            vpath = f"spec.{group}[{i}].volumeMounts"
            for j, vm in enumerate(as_list(mounts, vpath)):
                opts = as_list(as_map(vm, f"{vpath}[{j}]").get("bindMountOptions"), f"{vpath}[{j}].bindMountOptions")
                bind_mounts = bind_mounts or bool(opts)
    host_users_raw = spec.get("hostUsers")
    host_network_raw = spec.get("hostNetwork")
    host_network = False if host_network_raw is None else as_bool(host_network_raw, "spec.hostNetwork")
    host_users = None if host_users_raw is None else as_bool(host_users_raw, "spec.hostUsers")
    if not (restart_all or bind_mounts or host_network or host_users is not None):
        return _NONE
    return PodFeatureUse(restart_all, host_network, host_users, bind_mounts)


def pod_feature_use_errors(pod: Manifested) -> list[str]:
    """The shape problem :func:`pod_feature_use` would raise for ``pod``, as ``path: problem`` lines."""
    try:
        pod_feature_use(pod)
    except ValidationError as e:
        return [str(e)]
    return []


def declared_features_errors(features: Sequence[str], path: str = "status.declaredFeatures") -> list[str]:
    """Upstream's ``validateNodeDeclaredFeatures``: each name well formed, the list sorted, no repeats."""
    errs: list[str] = []
    for i, name in enumerate(features):
        if len(name) > _MAX_FEATURE_NAME:
            errs.append(invalid(f"{path}[{i}]", name, f"invalid feature name {go_quote(name)}: must be no more than "
                                                      f"{_MAX_FEATURE_NAME} characters"))
        elif not _FEATURE_NAME.match(name):
            errs.append(invalid(f"{path}[{i}]", name, f"invalid feature name {go_quote(name)}: must start with an "
                                "UpperCamelCase segment, with subsequent segments separated by '/' (e.g., "
                                "MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters "
                                "and slashes"))
        if i + 1 < len(features):
            nxt = features[i + 1]
            if name == nxt:
                errs.append(duplicate(f"{path}[{i + 1}]", nxt))
            elif name > nxt:
                errs.append(invalid(f"{path}[{i + 1}]", nxt, "list must be sorted alphabetically"))
    return errs


__all__ = ["RESTART_ALL_CONTAINERS", "PodFeatureUse", "declared_features_errors", "pod_feature_use",
           "pod_feature_use_errors"]
