"""The GangScheduling plugin (upstream pkg/scheduler/framework/plugins/gangscheduling, Kubernetes 1.35)."""

from plugins_intree.gangscheduling.plugin import GangScheduling

__all__ = ["GangScheduling"]
