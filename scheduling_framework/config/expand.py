"""Resolve a profile's plugin sets into the ordered plugins of each extension point.

This is the configuration half of upstream's ``NewFramework``: each point's own ``enabled`` list
is checked (plugin registered, implements the point, not listed twice), then multiPoint plugins
are expanded into every point they implement, and finally score weights are settled.  The
result is what a framework instantiates; errors carry upstream's wording.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduling_framework.config.intree import points_at_release
from scheduling_framework.config.types import (
    POINTS,
    EffectivePlugin,
    EffectiveProfile,
    PluginRef,
    Profile,
)
from scheduling_framework.errors import ConfigError
from scheduling_framework.versions import NEWEST_RELEASE

PointsOf = Callable[[str], "frozenset[str] | None"]

#: the Go interface upstream names in construction errors, per point key.
INTERFACE_NAMES: dict[str, str] = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}

#: the order upstream walks the points while building a framework (decides which error comes first).
CONSTRUCTION_ORDER: tuple[str, ...] = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)

MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = 2**63 - 1


def expand_profile(profile: Profile, points_of: PointsOf, release: str | None = None) -> EffectiveProfile:
    """The effective plugins of ``profile`` at every extension point, in run order.

    ``points_of(name)`` returns the point keys the named plugin implements, or None when no such
    plugin is registered.  ``release`` (default the newest) leaves out the points upstream's in-tree
    plugins gained after it (``POINTS_SINCE``) or dropped by it (``POINTS_UNTIL``).  Raises ConfigError
    (one message, upstream's wording, prefixed with the profile's scheduler name) when the profile cannot be
    built.
    """
    points_of = points_at_release(points_of, NEWEST_RELEASE if release is None else release)
    try:
        points = _expand(profile, points_of)
    except _BuildError as exc:
        raise ConfigError(f"creating profile for scheduler name {profile.scheduler_name}: {exc}") from None
    args = {pc.name: pc.args for pc in profile.plugin_config}
    return EffectiveProfile(
        scheduler_name=profile.scheduler_name,
        points=points,
        plugin_args=args,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
    )


class _BuildError(Exception):
    pass


def _load_note(points_of: PointsOf) -> str:
    """When points_of is a Registry's, name the plugin packages that failed to load."""
    note = getattr(getattr(points_of, "__self__", None), "load_errors_note", None)
    return str(note()) if callable(note) else ""


def _implements(points_of: PointsOf, name: str) -> frozenset[str] | None:
    return points_of(name)


def _expand(profile: Profile, points_of: PointsOf) -> dict[str, tuple[EffectivePlugin, ...]]:
    plugins = profile.plugins
    multi = plugins.multi_point.enabled
    lists: dict[str, list[str]] = {}
    configured: set[str] = set()
    for pc in profile.plugin_config:
        if pc.name in configured:
            raise _BuildError(f"repeated config for plugin {pc.name}")
        configured.add(pc.name)

    # 1. the lists configured at each point
    for point in CONSTRUCTION_ORDER:
        iface = INTERFACE_NAMES[point]
        names: list[str] = []
        for ref in plugins.get(point).enabled:
            implemented = _implements(points_of, ref.name)
            if implemented is None:
                raise _BuildError(f'{iface} "{ref.name}" does not exist{_load_note(points_of)}')
            if point not in implemented:
                raise _BuildError(f'plugin "{ref.name}" does not extend {iface} plugin')
            if ref.name in names:
                raise _BuildError(f'plugin "{ref.name}" already registered as "{iface}"')
            names.append(ref.name)
        lists[point] = names

    # 2. multiPoint expansion: plugins named at a point itself come first in that point's order,
    # then the multiPoint plugins, then the rest of the point's own list.
    if multi:
        for point in CONSTRUCTION_ORDER:
            iface = INTERFACE_NAMES[point]
            ps = plugins.get(point)
            disabled = {p.name for p in ps.disabled}
            if "*" in disabled:
                continue
            own = lists[point]
            overrides: set[str] = set()
            from_multi: list[str] = []
            for ref in multi:
                implemented = _implements(points_of, ref.name)
                if implemented is None:
                    raise _BuildError(f'{iface} "{ref.name}" does not exist{_load_note(points_of)}')
                if point not in implemented or ref.name in disabled:
                    continue
                if ref.name in own:
                    overrides.add(ref.name)
                    continue
                if ref.name in from_multi:
                    raise _BuildError(f'plugin "{ref.name}" already registered as "{iface}"')
                from_multi.append(ref.name)
            first = [n for n in own if n in overrides]
            rest = [n for n in own if n not in overrides]
            lists[point] = first + from_multi + rest

    # 3. the queue needs exactly one sorter and binding needs a binder
    if len(lists["queueSort"]) != 1:
        raise _BuildError(
            f'only one queue sort plugin required for profile with scheduler name "{profile.scheduler_name}", '
            f"but got {len(lists['queueSort'])}"
        )
    if not lists["bind"]:
        raise _BuildError(
            f'at least one bind plugin is needed for profile with scheduler name "{profile.scheduler_name}"'
        )

    weights = _score_weights((*plugins.score.enabled, *multi), points_of)
    out: dict[str, tuple[EffectivePlugin, ...]] = {}
    for point in POINTS:
        if point == "score":
            out[point] = tuple(EffectivePlugin(n, weights.get(n, 1)) for n in lists[point])
        else:
            out[point] = tuple(EffectivePlugin(n, 0) for n in lists[point])
    return out


def _score_weights(refs: tuple[PluginRef, ...], points_of: PointsOf) -> dict[str, int]:
    """A score plugin's weight comes from the score set first, then multiPoint; unset means 1."""
    weights: dict[str, int] = {}
    total = 0
    for ref in refs:
        implemented = _implements(points_of, ref.name)
        if implemented is None or "score" not in implemented or ref.name in weights:
            continue
        weight = ref.weight or 1
        weights[ref.name] = weight
        if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise _BuildError("total score of Score plugins could overflow")
        total += weight * MAX_NODE_SCORE
    return weights
