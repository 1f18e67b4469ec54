"""The TaintToleration plugin (upstream pkg/scheduler/framework/plugins/tainttoleration)."""

from plugins_intree.tainttoleration.plugin import TaintToleration

__all__ = ["TaintToleration"]
