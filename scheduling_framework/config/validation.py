"""Upstream ``ValidateKubeSchedulerConfiguration`` on a defaulted configuration, with its messages.

The functions return lists of messages (``<field path>: <problem>``); the loader gathers them all
into a single :class:`~scheduling_framework.errors.ConfigError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduling_framework.api import _field as f
from scheduling_framework.api.names import is_qualified_name
from scheduling_framework.config.args import args_to_dict
from scheduling_framework.config.intree import REMOVED_PLUGINS
from scheduling_framework.config.types import API_VERSION, POINTS, KubeSchedulerConfiguration, PluginSet, Profile


def validate_percentage(path: str, value: int | None) -> list[str]:
    if value is not None and not 0 <= value <= 100:
        return [f.invalid(path, value, "not in valid range [0-100]")]
    return []


def _removed_message(name: str) -> str:
    return f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'


def validate_profile(path: str, profile: Profile) -> list[str]:
    """One profile: scheduler name, percentage, removed plugins, duplicate pluginConfig entries.

    (Args are validated when they are decoded, with the same field paths.)
    """
    errs: list[str] = []
    if not profile.scheduler_name:
        errs.append(f.required(f.child(path, "schedulerName")))
    errs.extend(validate_percentage(f.child(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score))
    plugins_path = f.child(path, "plugins")
    # upstream checks every extension point's set but not multiPoint: a removed plugin there is
    # reported when the framework is built (it is not registered).
    for point in POINTS:
        for i, ref in enumerate(profile.plugins.get(point).enabled):
            if ref.name in REMOVED_PLUGINS:
                p = f.index(f.child(f.child(plugins_path, point), "enabled"), i)
                errs.append(f.invalid(p, ref.name, _removed_message(ref.name)))
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        p = f.index(f.child(path, "pluginConfig"), i)
        if pc.name in seen:
            errs.append(f.duplicate(p, pc.name))
        seen.add(pc.name)
        if pc.name in REMOVED_PLUGINS:
            errs.append(f.invalid(p, pc.name, _removed_message(pc.name)))
    return errs


def _same_set(a: PluginSet, b: PluginSet) -> bool:
    return a.enabled == b.enabled and a.disabled == b.disabled


def _args_of(profile: Profile, name: str) -> tuple[bool, Any]:
    for pc in profile.plugin_config:
        if pc.name == name:
            return True, args_to_dict(pc.args)
    return False, None


def validate_common_queue_sort(path: str, profiles: Sequence[Profile]) -> list[str]:
    """Every profile must configure the same queueSort plugin set and the same args for it."""
    errs: list[str] = []
    if not profiles:
        return errs
    canon = profiles[0].plugins.queue_sort
    sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            f.invalid(
                f.child(f.index(path, 0), "plugins.queueSort.Enabled"),
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    canon_args = _args_of(profiles[0], sort_name)[1] if sort_name else None
    for i in range(1, len(profiles)):
        curr = profiles[i].plugins.queue_sort
        if not _same_set(canon, curr):
            errs.append(
                f.invalid(
                    f.child(f.index(path, i), "plugins.queueSort"), curr.to_dict(), "must be the same for all profiles"
                )
            )
        for pc in profiles[i].plugin_config:
            if pc.name == sort_name and args_to_dict(pc.args) != canon_args:
                errs.append(
                    f.invalid(
                        f.child(f.index(path, i), "pluginConfig.args"),
                        args_to_dict(pc.args),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def validate_profiles(profiles: Sequence[Profile] | KubeSchedulerConfiguration) -> list[str]:
    """Profile-level rules: each profile valid, scheduler names unique, one common queueSort."""
    if isinstance(profiles, KubeSchedulerConfiguration):
        profiles = profiles.profiles
    errs: list[str] = []
    if not profiles:
        return [f.required("profiles")]
    existing: dict[str, int] = {}
    for i, profile in enumerate(profiles):
        p = f.index("profiles", i)
        errs.extend(validate_profile(p, profile))
        if profile.scheduler_name in existing:
            errs.append(f.duplicate(f.child(p, "schedulerName"), profile.scheduler_name))
        existing[profile.scheduler_name] = i
    errs.extend(validate_common_queue_sort("profiles", profiles))
    return errs


def validate_leader_election(path: str, le: Mapping[str, Any], durations: Mapping[str, float | None]) -> list[str]:
    errs: list[str] = []
    if not le.get("leaderElect"):
        return errs
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        d = durations.get(key)
        if d is not None and d <= 0:
            errs.append(f.invalid(f.child(path, key), le.get(key), "must be greater than zero"))
    lease, renew = durations.get("leaseDuration"), durations.get("renewDeadline")
    if lease is not None and renew is not None and lease <= renew:
        errs.append(
            f.invalid(
                f.child(path, "leaseDuration"),
                le.get("renewDeadline"),
                "LeaseDuration must be greater than RenewDeadline",
            )
        )
    for key in ("resourceLock", "resourceNamespace", "resourceName"):
        if not le.get(key):
            errs.append(f.invalid(f.child(path, key), le.get(key, ""), f"{key} is required"))
    lock = le.get("resourceLock")
    if lock and lock != "leases":
        errs.append(f.invalid(f.child(path, "resourceLock"), lock, 'resourceLock value must be "leases"'))
    return errs


def _is_extended_resource_name(name: str) -> bool:
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def validate_extenders(path: str, extenders: Sequence[Mapping[str, Any]]) -> list[str]:
    errs: list[str] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        p = f.index(path, i)
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(
                f.invalid(f.child(p, "weight"), ext.get("weight", 0), "must have a positive weight applied to it")
            )
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or ()):
            rp = f.child(f.index(f.child(p, "managedResources"), j), "name")
            name = res.get("name", "")
            name_errs = [f.invalid(rp, name, m) for m in is_qualified_name(name)]
            if not name_errs and not _is_extended_resource_name(name):
                name_errs.append(f.invalid(rp, name, "is an invalid extended resource name"))
            errs.extend(name_errs)
            if name in managed:
                errs.append(f.invalid(rp, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(
            f.invalid(path, f"found {binders} extenders implementing bind", "only one extender can implement bind")
        )
    return errs


def validate_global(
    *,
    parallelism: int,
    percentage_of_nodes_to_score: int | None,
    pod_initial_backoff_seconds: int,
    pod_max_backoff_seconds: int,
) -> list[str]:
    """The scalar top-level settings (parallelism, percentage, backoffs)."""
    errs: list[str] = []
    if parallelism <= 0:
        errs.append(f.invalid("parallelism", parallelism, "should be an integer value greater than zero"))
    errs.extend(validate_percentage("percentageOfNodesToScore", percentage_of_nodes_to_score))
    if pod_initial_backoff_seconds <= 0:
        errs.append(f.invalid("podInitialBackoffSeconds", pod_initial_backoff_seconds, "must be greater than 0"))
    if pod_max_backoff_seconds < pod_initial_backoff_seconds:
        errs.append(
            f.invalid(
                "podMaxBackoffSeconds",
                pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    return errs
