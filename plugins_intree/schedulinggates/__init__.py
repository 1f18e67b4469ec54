"""The SchedulingGates plugin (upstream pkg/scheduler/framework/plugins/schedulinggates)."""

from plugins_intree.schedulinggates.plugin import SchedulingGates

__all__ = ["SchedulingGates"]
