"""NodePorts: a node fits when none of the pod's host ports is already taken there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import HostPortInfo, NodeInfo
from scheduling_framework.status import Code, Status

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

#: (host IP, protocol, host port) as the pod declares them; HostPortInfo fills in the defaults.
HostPort = tuple[str, str, int]


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """Host ports of the containers that run for the pod's whole life: sidecar init containers, then
    regular containers (a plain init container's ports are released before the pod runs)."""
    out: list[HostPort] = []
    for c in pod.spec.init_containers:
        if c.is_restartable:
            out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    for c in pod.spec.containers:
        out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    return tuple(out)


def fits_ports(wanted: Sequence[HostPort], in_use: HostPortInfo) -> bool:
    return all(not in_use.check_conflict(ip, protocol, port) for ip, protocol, port in wanted)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod's host ports are all free on the node (upstream's exported Fits)."""
    return fits_ports(host_ports(pod), node_info.used_ports)


class NodePorts:
    """PreFilter (SKIP when the pod asks for no host port) and Filter."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        wanted = host_ports(pod)
        if not wanted:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, wanted)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter_signature(self, state: CycleState, pod: Pod) -> tuple[HostPort, ...] | None:
        """Filter reads the host ports PreFilter kept."""
        wanted: tuple[HostPort, ...] | None = state.get(PRE_FILTER_STATE_KEY)
        return wanted

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            wanted: tuple[HostPort, ...] = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status(Code.ERROR, f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if fits_ports(wanted, node_info.used_ports):
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON)
