"""``config view``: the effective configuration as a JSON-ready dict."""

from __future__ import annotations

import copy
from typing import Any

from scheduling_framework.config.args import args_to_dict
from scheduling_framework.config.expand import PointsOf, expand_profile
from scheduling_framework.config.types import POINTS, EffectiveProfile, KubeSchedulerConfiguration, Profile


def effective_plugins_doc(eff: EffectiveProfile) -> dict[str, list[dict[str, Any]]]:
    """Every point (in run order) -> its plugins; score entries carry their weight."""
    out: dict[str, list[dict[str, Any]]] = {}
    for point in POINTS:
        if point == "score":
            out[point] = [{"name": p.name, "weight": p.weight} for p in eff.points[point]]
        else:
            out[point] = [{"name": p.name} for p in eff.points[point]]
    return out


def _profile_view(profile: Profile, points_of: PointsOf, cfg: KubeSchedulerConfiguration) -> dict[str, Any]:
    eff = expand_profile(profile, points_of, cfg.kubernetes_version, config=cfg)
    return {
        "schedulerName": profile.scheduler_name,
        "plugins": effective_plugins_doc(eff),
        "pluginConfig": [
            {"name": pc.name, "args": args_to_dict(pc.args)} if pc.args is not None else {"name": pc.name}
            for pc in profile.plugin_config
        ],
        "percentageOfNodesToScore": profile.percentage_of_nodes_to_score,
    }


def config_view(cfg: KubeSchedulerConfiguration, points_of: PointsOf) -> dict[str, Any]:
    """Per profile, the ordered enabled plugins of every point after defaults, merge and multiPoint
    expansion, the plugin args with defaults applied, and the global settings.

    Raises ConfigError when a profile cannot be built (unknown plugin, missing binder, ...).
    """
    return {
        "kubernetesVersion": cfg.kubernetes_version,
        "profiles": [_profile_view(p, points_of, cfg) for p in cfg.profiles],
        "parallelism": cfg.parallelism,
        "percentageOfNodesToScore": cfg.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": cfg.pod_initial_backoff_seconds,
        "podMaxBackoffSeconds": cfg.pod_max_backoff_seconds,
        "featureGates": cfg.feature_gates.to_dict(),
    }


def explicit_plugins_doc(eff: EffectiveProfile) -> dict[str, Any]:
    """A v1 ``plugins`` block that yields exactly ``eff`` when loaded again: at every point the
    defaults are disabled (``"*"``) and the effective plugins are enabled in run order, score entries
    with their weight; multiPoint disables the defaults and enables nothing, so nothing is expanded a
    second time and no default plugin comes back (with defaulted args) through it."""
    out: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    for point in POINTS:
        enabled = [{"name": p.name, "weight": p.weight} if point == "score" else {"name": p.name}
                   for p in eff.points[point]]
        out[point] = {"enabled": enabled, "disabled": [{"name": "*"}]} if enabled else {"disabled": [{"name": "*"}]}
    return out


def config_document(cfg: KubeSchedulerConfiguration, points_of: PointsOf) -> dict[str, Any]:
    """The effective configuration as a KubeSchedulerConfiguration document that ``load_config``
    accepts and that yields the same effective profiles: the defaulted document with each profile's
    plugins written out point by point (:func:`explicit_plugins_doc`) and every pluginConfig entry,
    defaulted args included.

    Raises ConfigError when a profile cannot be built (unknown plugin, missing binder, ...).
    """
    doc = copy.deepcopy(cfg.raw)
    profiles = []
    for prof, raw in zip(cfg.profiles, doc.get("profiles") or [], strict=True):
        eff = expand_profile(prof, points_of, cfg.kubernetes_version, config=cfg)
        out = {k: v for k, v in raw.items() if k != "plugins"}
        out["plugins"] = explicit_plugins_doc(eff)
        # schedulerName first and plugins before pluginConfig, as people write them
        ordered = {"schedulerName": out.pop("schedulerName")}
        if "percentageOfNodesToScore" in out:
            ordered["percentageOfNodesToScore"] = out.pop("percentageOfNodesToScore")
        ordered["plugins"] = out.pop("plugins")
        ordered.update(out)
        profiles.append(ordered)
    doc["profiles"] = profiles
    return doc
