"""Facts about the bundled (in-tree) plugins that configuration handling needs without importing them.

``INTREE_POINTS`` lists, for each in-tree plugin, the extension points it implements, so that
multiPoint expansion can be computed (``config view``, tests) before any plugin is instantiated.
It follows upstream's plugin sources; the runtime finds the points of a live plugin from its
methods, so this table must stay in step with the plugins in ``plugins_intree``.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduling_framework.versions import at_least

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
    # Upstream's DynamicResources has no PreScore; its Score exists from 1.35 on (POINTS_SINCE).
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve",
                                   "preBind"}),
    # Upstream's PreEnqueue only holds back pods whose asynchronous preemption is in flight; preemption
    # runs synchronously here, so it admits every pod, but the point is there as upstream's is.
    "DefaultPreemption": frozenset({"preEnqueue", "postFilter"}),
    # Reserve is the 1.35 plugin's only (POINTS_UNTIL): from 1.36 the scheduler's cache counts assumed pods.
    "GangScheduling": frozenset({"preEnqueue", "reserve", "permit"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
    "NodeDeclaredFeatures": frozenset({"preFilter", "filter"}),
}

#: extension points an in-tree plugin implements here that upstream's plugin only has from a later release on:
#: (plugin, point) -> that release. Profiles of older releases do not expand the plugin to the point, and naming
#: it there is refused as upstream refuses it ("does not extend").
POINTS_SINCE: dict[tuple[str, str], str] = {
    ("DynamicResources", "score"): "1.35",
}

#: in-tree plugins upstream's registry only has from a release on: plugin -> that release. A profile of an older
#: release naming one is refused as upstream refuses an unregistered plugin ("does not exist").
PLUGINS_SINCE: dict[str, str] = {
    "NodeDeclaredFeatures": "1.35",
    "GangScheduling": "1.35",
}

#: extension points an in-tree plugin implements here that upstream's plugin no longer has from a release on:
#: (plugin, point) -> the first release without it. Profiles of that release and later do not expand the
#: plugin to the point, and naming it there is refused as upstream refuses it ("does not extend").
POINTS_UNTIL: dict[tuple[str, str], str] = {
    ("GangScheduling", "reserve"): "1.36",
}

#: upstream's default multiPoint list of the newest release with the score weights it sets (DynamicResources
#: is inserted by its gate; ``scheduling_framework.config.defaults.default_multi_point`` gives each release's).
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
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

#: plugins removed from the v1 API; naming them is a validation error worded as upstream's.
REMOVED_PLUGINS: tuple[str, ...] = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def points_at_release(points_of: Callable[[str], frozenset[str] | None], release: str
                      ) -> Callable[[str], frozenset[str] | None]:
    """``points_of`` less the points :data:`POINTS_SINCE` and :data:`POINTS_UNTIL` say upstream's plugin
    lacks at ``release``, and without the plugins :data:`PLUGINS_SINCE` says upstream's registry lacks there."""
    missing: dict[str, frozenset[str]] = {}
    for (name, point), since in POINTS_SINCE.items():
        if not at_least(release, since):
            missing[name] = missing.get(name, frozenset()) | {point}
    for (name, point), until in POINTS_UNTIL.items():
        if at_least(release, until):
            missing[name] = missing.get(name, frozenset()) | {point}
    absent = frozenset(name for name, since in PLUGINS_SINCE.items() if not at_least(release, since))
    if not missing and not absent:
        return points_of

    def of(name: str) -> frozenset[str] | None:
        points = points_of(name)
        if name in absent and points == INTREE_POINTS.get(name):
            return None  # the in-tree plugin (not a third party's of that name) is not in this release
        drop = missing.get(name)
        return points - drop if points is not None and drop else points

    return of


def intree_points_of(name: str) -> frozenset[str] | None:
    """``points_of`` for :func:`scheduling_framework.config.expand_profile` covering in-tree plugins only."""
    return INTREE_POINTS.get(name)
