"""The NodeUnschedulable plugin (upstream pkg/scheduler/framework/plugins/nodeunschedulable)."""

from plugins_intree.nodeunschedulable.plugin import NodeUnschedulable

__all__ = ["NodeUnschedulable"]
