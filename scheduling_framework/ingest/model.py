"""What a read cluster is: its Nodes, Pods and other objects, and the warnings loading gave.

The end of the ingest pipeline (``source`` → ``jsonstream`` / ``yamlstream`` → ``cluster.cluster_from_items``,
which builds each object and applies what the API server and controllers would, → this). Kept in its own
module so that the stages that read a Cluster (workload expansion, simulation) need not import the reader.
"""

from __future__ import annotations

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.warning_list import Warnings


@attrs.define
class Cluster:
    """Nodes, pods and other objects of a cluster file; ``warnings`` says what loading ignored or assumed."""

    nodes: list[Node] = attrs.field(factory=list)
    pods: list[Pod] = attrs.field(factory=list)
    objects: list[KubeObject] = attrs.field(factory=list)
    warnings: Warnings = attrs.field(factory=Warnings)

    @property
    def pending_pods(self) -> list[Pod]:
        return [p for p in self.pods if not p.spec.node_name]

    @property
    def bound_pods(self) -> list[Pod]:
        return [p for p in self.pods if p.spec.node_name]


__all__ = ["Cluster"]
