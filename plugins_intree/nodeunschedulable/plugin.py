"""NodeUnschedulable: rejects cordoned nodes (``spec.unschedulable``) unless the pod tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.api.taints import Taint
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME = "NodeUnschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: kept for parity with upstream's exported constants; no check of this plugin reports it.
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"

_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")


def tolerates_unschedulable(pod: Pod) -> bool:
    """Whether the pod tolerates the unschedulable taint (which has an empty value).

    Numeric Lt/Gt tolerations never match it: with their feature gate off they match nothing, and with
    it on the empty taint value does not parse as an integer.
    """
    for t in pod.spec.tolerations:
        if t.operator in ("", "Equal", "Exists") and t.tolerates(_UNSCHEDULABLE_TAINT):
            return True
    return False


class NodeUnschedulable:
    """Filter only."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    def filter_signature(self, state: CycleState, pod: Pod) -> bool:
        """Filter reads of the pod only whether it tolerates the unschedulable taint."""
        return tolerates_unschedulable(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        if not node.spec.unschedulable or tolerates_unschedulable(pod):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)
