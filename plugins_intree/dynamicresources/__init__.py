"""The DynamicResources plugin (upstream pkg/scheduler/framework/plugins/dynamicresources)."""

from plugins_intree.dynamicresources.plugin import DynamicResources, compute_score

__all__ = ["DynamicResources", "compute_score"]
