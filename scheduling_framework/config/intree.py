"""Facts about the bundled (in-tree) plugins that configuration handling needs without importing them.

``INTREE_POINTS`` lists, for each in-tree plugin, the extension points it implements, so that
multiPoint expansion can be computed (``config view``, tests) before any plugin is instantiated.
It follows upstream's plugin sources; the runtime finds the points of a live plugin from its
methods, so this table must stay in step with the plugins in ``plugins_intree``.
"""

from __future__ import annotations

#: plugin name -> extension point keys it implements.
INTREE_POINTS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    # Upstream's DefaultPreemption also has a PreEnqueue hook, but it only gates pods while an
    # asynchronous preemption is in flight; this library preempts synchronously, so the plugin
    # has no PreEnqueue and the effective default profile keeps SchedulingGates alone there.
    # Upstream's DynamicResources has Score without PreScore. Here it also has a PreScore (Skip for pods
    # with nothing to allocate, else a no-op) so that configurations naming it at preScore load; the
    # decisions are the same (docs/differences.md).
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "preScore", "score",
                                   "reserve", "preBind"}),
    "DefaultPreemption": frozenset({"postFilter"}),
    # The 1.35 plugin's points, in every release (later upstream releases drop Reserve; docs/differences.md).
    "GangScheduling": frozenset({"preEnqueue", "reserve", "permit"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

#: upstream's default multiPoint list (v1.34+, DynamicResourceAllocation GA) with the score weights it sets.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 0),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

#: plugins removed from the v1 API; naming them is a validation error worded as upstream's.
REMOVED_PLUGINS: tuple[str, ...] = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def intree_points_of(name: str) -> frozenset[str] | None:
    """``points_of`` for :func:`scheduling_framework.config.expand_profile` covering in-tree plugins only."""
    return INTREE_POINTS.get(name)
