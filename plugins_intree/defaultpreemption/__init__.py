"""The DefaultPreemption plugin (upstream pkg/scheduler/framework/plugins/defaultpreemption) and the
generic preemption evaluator it runs (upstream pkg/scheduler/framework/preemption)."""

from plugins_intree.defaultpreemption.plugin import DefaultPreemption

__all__ = ["DefaultPreemption"]
