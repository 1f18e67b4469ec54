"""NodeName: a pod that names a node (``spec.nodeName``) fits that node only."""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """True when the pod names no node, or names this one."""
    wanted = pod.spec.node_name
    return not wanted or (node_info.node is not None and wanted == node_info.node.name)


class NodeName:
    """Filter only.

    Upstream master also gives NodeName a PreFilter that narrows the cycle to ``spec.nodeName``; it only
    ever acts on pods that are already bound, which never enter a scheduling cycle here, so the plugin
    keeps the released extension points (Filter).
    """

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    def filter_signature(self, state: CycleState, pod: Pod) -> str:
        """Filter reads of the pod only the node it names."""
        return pod.spec.node_name

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = pod.spec.node_name
        if not wanted:  # fits() inlined for the common case: the pod names no node
            return None
        if fits(pod, node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
