"""The NodePorts plugin (upstream pkg/scheduler/framework/plugins/nodeports)."""

from plugins_intree.nodeports.plugin import NodePorts, fits, host_ports

__all__ = ["NodePorts", "fits", "host_ports"]
