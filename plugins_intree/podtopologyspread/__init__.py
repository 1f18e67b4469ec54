"""The PodTopologySpread plugin (upstream pkg/scheduler/framework/plugins/podtopologyspread)."""

from plugins_intree.podtopologyspread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
