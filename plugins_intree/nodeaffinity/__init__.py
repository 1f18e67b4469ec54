"""The NodeAffinity plugin (upstream pkg/scheduler/framework/plugins/nodeaffinity)."""

from plugins_intree.nodeaffinity.plugin import NodeAffinity

__all__ = ["NodeAffinity"]
