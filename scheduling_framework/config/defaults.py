"""Upstream v1 defaulting: the default plugin set, the merge of a profile's plugins into it, and
the default ``pluginConfig`` entries added for in-tree plugins that take arguments.
"""

from __future__ import annotations

from scheduling_framework.config.args import ARGS_TYPES, default_args
from scheduling_framework.config.intree import DEFAULT_MULTI_POINT, INTREE_POINTS
from scheduling_framework.config.types import MULTI_POINT, POINTS, PluginConfig, PluginRef, Plugins, PluginSet
from scheduling_framework.features import FeatureGates
from scheduling_framework.versions import at_least

DYNAMIC_RESOURCES = "DynamicResources"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"
GANG_SCHEDULING = "GangScheduling"


def default_multi_point(features: FeatureGates | None = None) -> tuple[tuple[str, int], ...]:
    """(name, weight) of upstream's default multiPoint list for the release and gates of ``features``.

    DynamicResources joins (before DefaultPreemption, as upstream's ``applyFeatureGates`` puts it) while
    the DynamicResourceAllocation gate is on, provided this distribution ships the plugin; it leaves
    when the gate is off. Its weight is 2 from 1.35 on; 1.34 sets none (its plugin has no Score there).
    NodeDeclaredFeatures is appended at the end while its gate is on (1.36+ by default).
    GangScheduling is appended after it while the GenericWorkload and GangScheduling gates are both on
    (Kubernetes 1.35 and 1.36), while GenericWorkload is on (1.37+, where the GangScheduling gate is gone).
    """
    gates = features if features is not None else FeatureGates()
    entries = [e for e in DEFAULT_MULTI_POINT if e[0] != DYNAMIC_RESOURCES]
    if gates.enabled("DynamicResourceAllocation") and DYNAMIC_RESOURCES in INTREE_POINTS:
        names = [n for n, _ in entries]
        at = names.index("DefaultPreemption") if "DefaultPreemption" in names else len(entries)
        entries.insert(at, (DYNAMIC_RESOURCES, 2 if at_least(gates.release, "1.35") else 0))
    if gates.enabled(NODE_DECLARED_FEATURES) and NODE_DECLARED_FEATURES in INTREE_POINTS:
        entries.append((NODE_DECLARED_FEATURES, 0))
    if gang_scheduling_enabled(gates) and GANG_SCHEDULING in INTREE_POINTS:
        entries.append((GANG_SCHEDULING, 0))
    return tuple(entries)


def gang_scheduling_enabled(gates: FeatureGates) -> bool:
    """GangScheduling joins the default profile (last) while both GenericWorkload and GangScheduling are on;
    from 1.37, which folded the GangScheduling gate into GenericWorkload (kubernetes#139520), while
    GenericWorkload is on."""
    if not gates.enabled("GenericWorkload"):
        return False
    return gates.enabled("GangScheduling") or not gates.known_gate("GangScheduling")


def default_plugins(features: FeatureGates | None = None) -> Plugins:
    """Upstream's ``getDefaultPlugins``: every default plugin of the release enabled through multiPoint."""
    return Plugins(multi_point=PluginSet(enabled=tuple(PluginRef(n, w) for n, w in default_multi_point(features))))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream's ``mergePluginSet``.

    Defaults keep their order unless disabled (``"*"`` drops them all); a default the user enables
    again is replaced in place by the user's entry (the last one, when repeated); the user's other
    entries follow in their order.  Both disabled lists are kept, the user's first, so multiPoint
    expansion can tell which points must not receive multiPoint plugins.
    """
    disabled = tuple(PluginRef(p.name) for p in (*custom.disabled, *default.disabled))
    disabled_names = {p.name for p in disabled}
    custom_by_name: dict[str, tuple[int, PluginRef]] = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            hit = custom_by_name.get(plugin.name)
            if hit is not None:
                replaced.add(hit[0])
                plugin = hit[1]
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Upstream's ``mergePlugins``: :func:`merge_plugin_set` at multiPoint and every extension point."""
    if custom is None:
        return default
    return default.replace(
        **{key: merge_plugin_set(default.get(key), custom.get(key)) for key in (MULTI_POINT, *POINTS)}
    )


def enabled_plugin_names(plugins: Plugins) -> list[str]:
    """Sorted names of every plugin enabled anywhere (upstream's ``pluginsNames``)."""
    return sorted({p.name for key in (MULTI_POINT, *POINTS) for p in plugins.get(key).enabled})


def default_plugin_configs(plugins: Plugins, existing: tuple[PluginConfig, ...],
                           features: FeatureGates | None = None) -> tuple[PluginConfig, ...]:
    """``existing`` followed by defaulted args for each enabled in-tree plugin that has an args kind
    and no entry yet, in name order (as upstream's profile defaulting appends them)."""
    have = {pc.name for pc in existing}
    added = [
        PluginConfig(name, default_args(name, features))
        for name in enabled_plugin_names(plugins)
        if name in ARGS_TYPES and name not in have
    ]
    return (*existing, *added)
