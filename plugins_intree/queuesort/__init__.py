"""The PrioritySort queue-sort plugin (upstream pkg/scheduler/framework/plugins/queuesort)."""

from plugins_intree.queuesort.plugin import PrioritySort

__all__ = ["PrioritySort"]
