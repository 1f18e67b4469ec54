"""Copies of nodes and pods under new names, for scale-up simulation from node templates."""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod

HOSTNAME_LABEL = "kubernetes.io/hostname"


def node_from_template(template: Node, name: str) -> Node:
    """A copy of ``template`` named ``name``: new uid, ``kubernetes.io/hostname`` label set to ``name``.

    Like cluster-autoscaler's template sanitizing, the hostname label is set even when the template has
    none, so that topology spread and anti-affinity over hostnames see a distinct node.
    """
    manifest: dict[str, Any] = template.to_dict()
    meta = dict(manifest.get("metadata") or {})
    meta["name"] = name
    meta["uid"] = name
    meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
    meta.pop("resourceVersion", None)
    manifest["metadata"] = meta
    return Node.from_dict(manifest)


def pod_for_node(pod: Pod, node_name: str) -> Pod:
    """A copy of a template pod (a DaemonSet pod, say) bound to ``node_name``, named ``<pod>-<node>``."""
    manifest: dict[str, Any] = pod.to_dict()
    meta = dict(manifest.get("metadata") or {})
    meta["name"] = f"{pod.name}-{node_name}"
    meta["uid"] = f"{pod.uid}-{node_name}"
    meta.pop("resourceVersion", None)
    manifest["metadata"] = meta
    spec = dict(manifest.get("spec") or {})
    spec["nodeName"] = node_name
    manifest["spec"] = spec
    return Pod.from_dict(manifest)


def template_node_names(prefix: str, count: int, taken: Any) -> list[str]:
    """``count`` names ``<prefix>-<i>`` for the smallest ``i`` not in ``taken`` (so a reverted fork reuses them)."""
    names: list[str] = []
    i = 0
    while len(names) < count:
        name = f"{prefix}-{i}"
        i += 1
        if name not in taken:
            names.append(name)
    return names
