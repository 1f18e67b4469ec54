"""The in-tree plugins, registered through the ``scheduling_framework`` entry point like any other package."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduling_framework.hooks import hookimpl

if TYPE_CHECKING:
    from scheduling_framework.registry import Registry

# Upstream plugin name -> "module:class"; imported lazily on first use.
INTREE_PLUGINS: dict[str, str] = {
    "PrioritySort": "plugins_intree.queuesort.plugin:PrioritySort",
    "SchedulingGates": "plugins_intree.schedulinggates.plugin:SchedulingGates",
    "NodeUnschedulable": "plugins_intree.nodeunschedulable.plugin:NodeUnschedulable",
    "NodeName": "plugins_intree.nodename.plugin:NodeName",
    "NodePorts": "plugins_intree.nodeports.plugin:NodePorts",
    "NodeResourcesFit": "plugins_intree.noderesources.fit:Fit",
    "NodeResourcesBalancedAllocation": "plugins_intree.noderesources.balanced_allocation:BalancedAllocation",
    "TaintToleration": "plugins_intree.tainttoleration.plugin:TaintToleration",
    "NodeAffinity": "plugins_intree.nodeaffinity.plugin:NodeAffinity",
    "ImageLocality": "plugins_intree.imagelocality.plugin:ImageLocality",
    "PodTopologySpread": "plugins_intree.podtopologyspread.plugin:PodTopologySpread",
    "InterPodAffinity": "plugins_intree.interpodaffinity.plugin:InterPodAffinity",
    "VolumeRestrictions": "plugins_intree.volumerestrictions.plugin:VolumeRestrictions",
    "NodeVolumeLimits": "plugins_intree.nodevolumelimits.plugin:NodeVolumeLimits",
    "VolumeBinding": "plugins_intree.volumebinding.plugin:VolumeBinding",
    "VolumeZone": "plugins_intree.volumezone.plugin:VolumeZone",
    "DefaultBinder": "plugins_intree.defaultbinder.plugin:DefaultBinder",
    "DefaultPreemption": "plugins_intree.defaultpreemption.plugin:DefaultPreemption",
    "DynamicResources": "plugins_intree.dynamicresources.plugin:DynamicResources",
    "NodeDeclaredFeatures": "plugins_intree.nodedeclaredfeatures.plugin:NodeDeclaredFeatures",
    "GangScheduling": "plugins_intree.gangscheduling.plugin:GangScheduling",
}


@hookimpl
def register_plugins(registry: Registry) -> None:
    for name, ref in INTREE_PLUGINS.items():
        registry.register(name, ref)
