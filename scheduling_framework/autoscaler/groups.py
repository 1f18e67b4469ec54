"""Node groups: the shapes a cluster can grow by, read from a small YAML file.

```yaml
nodeGroups:
- name: gpu
  minSize: 0
  maxSize: 10
  pricePerHour: 2.48          # optional, for the price expander
  priority: 10                # optional, for the priority expander
  zeroOrMaxNodeScaling: true  # optional: grows from empty straight to maxSize, or not at all
  template:                   # a Node manifest new nodes copy ...
    apiVersion: v1
    kind: Node
    metadata: {name: gpu-template, labels: {pool: gpu}}
    status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "4"}}
- name: general
  minSize: 1
  maxSize: 50
  templateNode: ip-10-0-1-7.ec2.internal   # ... or an existing node to copy, as cluster-autoscaler does
  nodeSelector: {eks.amazonaws.com/nodegroup: general}   # which existing nodes belong to the group
```

A group's members among the cluster's nodes are those matching ``nodeSelector``; without one, those sharing
the template's value of the first node-group label it has (``eks.amazonaws.com/nodegroup``,
``cloud.google.com/gke-nodepool``, ``karpenter.sh/nodepool``, ``kubernetes.azure.com/agentpool``,
``alpha.eksctl.io/nodegroup-name``); a template without any belongs to no node.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.errors import ConfigError, SchedulingFrameworkError

#: Labels cloud providers put on a node to name its group, in the order they are looked for.
GROUP_LABELS = ("eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool", "karpenter.sh/nodepool",
                "kubernetes.azure.com/agentpool", "alpha.eksctl.io/nodegroup-name")
#: Node labels a copy of an existing node does not keep (they name that node).
NODE_OWN_LABELS = ("kubernetes.io/hostname",)


@attrs.frozen
class NodeGroup:
    """One node group: its size bounds, the template its new nodes copy and which existing nodes it has."""

    name: str
    min_size: int
    max_size: int
    template: Node
    node_selector: Mapping[str, str] = attrs.field(factory=dict)
    price_per_hour: float | None = None
    priority: int | None = None
    #: cluster-autoscaler's ZeroOrMaxNodeScaling option: a scale-up takes the group to its max size at once
    zero_or_max_node_scaling: bool = False

    def owns(self, node: Node) -> bool:
        if not self.node_selector:
            return False
        labels = node.metadata.labels
        return all(labels.get(k) == v for k, v in self.node_selector.items())


def _int(d: Mapping[str, Any], key: str, path: str, default: int | None = None) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ConfigError(f"{path}.{key}: expected a non-negative integer, got {v!r}")
    return v


def _copy_of(node: Node, group: str) -> Node:
    """A template made from an existing node: its labels, taints and allocatable, none of its identity."""
    m = copy.deepcopy(node.to_dict())
    meta = m.setdefault("metadata", {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in NODE_OWN_LABELS}
    m["metadata"] = {"name": f"template-{group}", "labels": labels}
    spec = m.get("spec") or {}
    spec.pop("providerID", None)
    spec.pop("unschedulable", None)
    spec["taints"] = [t for t in spec.get("taints") or []
                      if not str(t.get("key", "")).startswith("node.kubernetes.io/")]
    m["spec"] = spec
    status = m.get("status") or {}
    m["status"] = {k: status[k] for k in ("allocatable", "capacity", "nodeInfo") if k in status}
    return Node.from_dict(m)


def load_node_groups(doc: Any, nodes: Sequence[Node], source: str = "node groups") -> list[NodeGroup]:
    """The node groups of a parsed document (``{nodeGroups: [...]}``); ``nodes`` are the cluster's, for
    ``templateNode``. ConfigError names the field at fault."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("nodeGroups"), list):
        raise ConfigError(f"{source}: expected a mapping with a nodeGroups list")
    by_name = {n.name: n for n in nodes}
    out: list[NodeGroup] = []
    seen: set[str] = set()
    for i, g in enumerate(doc["nodeGroups"]):
        path = f"nodeGroups[{i}]"
        if not isinstance(g, Mapping):
            raise ConfigError(f"{path}: expected a mapping")
        unknown = sorted(set(g) - {"name", "minSize", "maxSize", "pricePerHour", "priority", "template",
                                   "templateNode", "nodeSelector", "zeroOrMaxNodeScaling"})
        if unknown:
            raise ConfigError(f"{path}: unknown field(s) {', '.join(unknown)}")
        name = g.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{path}.name: expected a non-empty string")
        if name in seen:
            raise ConfigError(f"{path}.name: node group {name!r} is listed twice")
        seen.add(name)
        lo, hi = _int(g, "minSize", path, 0), _int(g, "maxSize", path)
        if hi < lo:
            raise ConfigError(f"{path}.maxSize: {hi} is below minSize {lo}")
        has_t, has_n = "template" in g, "templateNode" in g
        if has_t == has_n:
            raise ConfigError(f"{path}: give one of template (a Node manifest) and templateNode (a node's name)")
        if has_t:
            try:
                template = Node.from_dict(g["template"])
            except SchedulingFrameworkError as e:
                raise ConfigError(f"{path}.template: {e}") from None
        else:
            ref = g["templateNode"]
            if not isinstance(ref, str) or ref not in by_name:
                raise ConfigError(f"{path}.templateNode: the cluster has no node {ref!r}")
            template = _copy_of(by_name[ref], name)
        sel = g.get("nodeSelector")
        if sel is None:
            labels = template.metadata.labels
            key = next((k for k in GROUP_LABELS if k in labels), None)
            sel = {key: labels[key]} if key is not None else {}
        elif not isinstance(sel, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in sel.items()):
            raise ConfigError(f"{path}.nodeSelector: expected a mapping of label names to values")
        price = g.get("pricePerHour")
        if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float))
                                  or not math.isfinite(price) or price < 0):
            raise ConfigError(f"{path}.pricePerHour: expected a non-negative number, got {price!r}")
        prio = g.get("priority")
        if prio is not None and (isinstance(prio, bool) or not isinstance(prio, int)):
            raise ConfigError(f"{path}.priority: expected an integer, got {prio!r}")
        atomic = g.get("zeroOrMaxNodeScaling", False)
        if not isinstance(atomic, bool):
            raise ConfigError(f"{path}.zeroOrMaxNodeScaling: expected true or false, got {atomic!r}")
        out.append(NodeGroup(name, lo, hi, template, dict(sel), None if price is None else float(price), prio,
                             atomic))
    return out


__all__ = ["GROUP_LABELS", "NodeGroup", "load_node_groups"]
