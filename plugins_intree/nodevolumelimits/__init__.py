"""The NodeVolumeLimits plugin (upstream pkg/scheduler/framework/plugins/nodevolumelimits, CSILimits)."""

from plugins_intree.nodevolumelimits.plugin import NodeVolumeLimits

__all__ = ["NodeVolumeLimits"]
