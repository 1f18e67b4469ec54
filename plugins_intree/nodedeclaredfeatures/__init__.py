"""The NodeDeclaredFeatures plugin (upstream pkg/scheduler/framework/plugins/nodedeclaredfeatures)."""

from plugins_intree.nodedeclaredfeatures.plugin import NodeDeclaredFeatures
from plugins_intree.nodedeclaredfeatures.registry import Feature, infer_for_pod_scheduling, registry_for

__all__ = ["Feature", "NodeDeclaredFeatures", "infer_for_pod_scheduling", "registry_for"]
