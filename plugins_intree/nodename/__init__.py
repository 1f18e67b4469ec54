"""The NodeName plugin (upstream pkg/scheduler/framework/plugins/nodename)."""

from plugins_intree.nodename.plugin import NodeName

__all__ = ["NodeName"]
