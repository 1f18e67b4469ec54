"""Resolve a profile's plugin sets into the ordered plugins of each extension point.

This is the configuration half of upstream's ``NewFramework``: each point's own ``enabled`` list
is checked (plugin registered, implements the point, not listed twice), then multiPoint plugins
are expanded into every point they implement, and finally score weights are settled.  The
result is what a framework instantiates; errors carry upstream's wording.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence

from scheduling_framework.config.intree import INTREE_POINTS, intree_points_of, points_at_release
from scheduling_framework.config.types import (
    MULTI_POINT,
    POINTS,
    EffectivePlugin,
    EffectiveProfile,
    KubeSchedulerConfiguration,
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


def expand_profile(profile: Profile, points_of: PointsOf, release: str | None = None, *,
                   config: KubeSchedulerConfiguration | None = None) -> EffectiveProfile:
    """The effective plugins of ``profile`` at every extension point, in run order.

    ``points_of(name)`` returns the point keys the named plugin implements, or None when no such
    plugin is registered.  ``release`` (default the newest) leaves out the points upstream's in-tree
    plugins gained after it (``POINTS_SINCE``) or dropped by it (``POINTS_UNTIL``).  Raises ConfigError
    (one message, upstream's wording, prefixed with the profile's scheduler name) when the profile cannot be
    built.  A plugin that does not exist is also located, after upstream's words: the configuration file and
    field path where ``config`` (the configuration ``profile`` belongs to) names it, and the installed
    plugins whose names are closest (for a Registry's ``points_of`` or the in-tree one).
    """
    installed = points_of
    points_of = points_at_release(points_of, NEWEST_RELEASE if release is None else release)
    try:
        points = _expand(profile, points_of)
    except _BuildError as exc:
        hint = "" if exc.missing is None else _missing_hint(exc.missing, profile, config, installed, points_of)
        raise ConfigError(f"creating profile for scheduler name {profile.scheduler_name}: {exc}{hint}") from None
    args = {pc.name: pc.args for pc in profile.plugin_config}
    return EffectiveProfile(
        scheduler_name=profile.scheduler_name,
        points=points,
        plugin_args=args,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
    )


class _BuildError(Exception):
    """A construction error in upstream's words; ``missing``: (plugin name, plugins key naming it) when the
    plugin does not exist."""

    def __init__(self, message: str, missing: tuple[str, str] | None = None) -> None:
        super().__init__(message)
        self.missing = missing


#: How many close names a "does not exist" error suggests, and how close (difflib's ratio) they must be.
CLOSE_NAMES = 3
CLOSE_CUTOFF = 0.6


def _missing_hint(missing: tuple[str, str], profile: Profile, config: KubeSchedulerConfiguration | None,
                  installed: PointsOf, points_of: PointsOf) -> str:
    """`` (<file>, <field path>; closest installed plugins: "A", "B")`` for a plugin that does not exist; the
    parts that are not known are left out (no parenthesis at all when none is)."""
    name, key = missing
    parts = []
    where = _where(name, key, profile, config)
    if where:
        parts.append(where)
    names = _installed_names(installed)
    if names is not None:
        close = [n for n in _close_names(name, names) if _exists(points_of, n)]
        if close:
            parts.append("closest installed plugins: " + ", ".join(f'"{n}"' for n in close))
        elif where:
            parts.append("no installed plugin has a close name")
    return f" ({'; '.join(parts)})" if parts else ""


def _where(name: str, key: str, profile: Profile, config: KubeSchedulerConfiguration | None) -> str:
    """The configuration file and the field path naming plugin ``name`` (under ``plugins.<key>`` first), or
    where the name comes from when the document does not name it (the release's default plugins)."""
    if config is None:
        return ""
    index = next((i for i, p in enumerate(config.profiles) if p is profile), None)
    if index is None:
        return ""
    prefix = f"{config.file}, " if config.file else ""
    doc = config.source if isinstance(config.source, Mapping) else {}
    profiles = doc.get("profiles")
    raw = profiles[index] if isinstance(profiles, Sequence) and index < len(profiles) else None
    plugins = raw.get("plugins") if isinstance(raw, Mapping) else None
    if isinstance(plugins, Mapping):
        for k in (key, MULTI_POINT, *POINTS):
            pset = plugins.get(k)
            enabled = pset.get("enabled") if isinstance(pset, Mapping) else None
            if not isinstance(enabled, Sequence) or isinstance(enabled, str):
                continue
            for j, ref in enumerate(enabled):
                if isinstance(ref, Mapping) and ref.get("name") == name:
                    return f"{prefix}profiles[{index}].plugins.{k}.enabled[{j}]"
    return f"{prefix}profiles[{index}]: a default plugin of Kubernetes {config.kubernetes_version}"


def _installed_names(points_of: PointsOf) -> list[str] | None:
    """The plugin names ``points_of`` knows, when it can list them (a Registry's, the in-tree one)."""
    owner = getattr(points_of, "__self__", None)
    names = getattr(owner, "names", None)
    if callable(names):
        listed = names()
        if isinstance(listed, list) and all(isinstance(n, str) for n in listed):
            return listed
    if points_of is intree_points_of:
        return list(INTREE_POINTS)
    return None


def _close_names(name: str, names: list[str]) -> list[str]:
    """The names closest to ``name``, case aside (``nodeaffinity`` finds ``NodeAffinity``)."""
    by_lower: dict[str, str] = {}
    for n in sorted(names):
        by_lower.setdefault(n.lower(), n)
    return [by_lower[n] for n in difflib.get_close_matches(name.lower(), list(by_lower), CLOSE_NAMES, CLOSE_CUTOFF)]


def _exists(points_of: PointsOf, name: str) -> bool:
    """Whether ``name`` is a plugin of the release (a broken third-party package's is not suggested)."""
    try:
        return points_of(name) is not None
    except Exception:
        return False


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
                raise _BuildError(f'{iface} "{ref.name}" does not exist{_load_note(points_of)}', (ref.name, point))
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
                    raise _BuildError(f'{iface} "{ref.name}" does not exist{_load_note(points_of)}',
                                      (ref.name, MULTI_POINT))
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
