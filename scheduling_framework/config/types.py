"""The typed, immutable model of a KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``).

Instances come out of :func:`scheduling_framework.config.load_config` with upstream defaults
applied; :func:`scheduling_framework.config.expand_profile` turns a :class:`Profile` into the
per-extension-point plugin lists a framework runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.features import FeatureGates
from scheduling_framework.versions import NEWEST_RELEASE

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: Extension point keys in the order a scheduling + binding cycle runs them.
POINTS: tuple[str, ...] = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

MULTI_POINT = "multiPoint"

#: attribute name on :class:`Plugins` for each point key (and ``multiPoint``).
POINT_ATTRS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    MULTI_POINT: "multi_point",
}


@attrs.frozen
class PluginRef:
    """A plugin named in a plugin set; ``weight`` 0 means unset (only Score uses weights)."""

    name: str
    weight: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.weight:
            out["weight"] = self.weight
        return out


@attrs.frozen
class PluginSet:
    """Plugins enabled and disabled at one extension point (``"*"`` in ``disabled`` means all defaults)."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[PluginRef, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.enabled:
            out["enabled"] = [p.to_dict() for p in self.enabled]
        if self.disabled:
            out["disabled"] = [p.to_dict() for p in self.disabled]
        return out


@attrs.frozen
class Plugins:
    """One :class:`PluginSet` per extension point plus ``multi_point``."""

    pre_enqueue: PluginSet = PluginSet()
    queue_sort: PluginSet = PluginSet()
    pre_filter: PluginSet = PluginSet()
    filter: PluginSet = PluginSet()
    post_filter: PluginSet = PluginSet()
    pre_score: PluginSet = PluginSet()
    score: PluginSet = PluginSet()
    reserve: PluginSet = PluginSet()
    permit: PluginSet = PluginSet()
    pre_bind: PluginSet = PluginSet()
    bind: PluginSet = PluginSet()
    post_bind: PluginSet = PluginSet()
    multi_point: PluginSet = PluginSet()

    def get(self, point: str) -> PluginSet:
        """The set for a point key (``"score"``, ``"multiPoint"``, ...); KeyError for an unknown key."""
        ps: PluginSet = getattr(self, POINT_ATTRS[point])
        return ps

    def replace(self, **sets: PluginSet) -> Plugins:
        """A copy with the sets given by point key replaced."""
        return attrs.evolve(self, **{POINT_ATTRS[k]: v for k, v in sets.items()})

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in (*POINTS, MULTI_POINT):
            d = self.get(key).to_dict()
            if d:
                out[key] = d
        return out


@attrs.frozen
class PluginConfig:
    """Arguments for one plugin: the typed args object for in-tree args kinds, else the raw mapping or None."""

    name: str
    args: Any = None


@attrs.frozen
class Profile:
    """A scheduling profile after defaulting: ``plugins`` is the default set merged with the user's."""

    scheduler_name: str
    plugins: Plugins = Plugins()
    plugin_config: tuple[PluginConfig, ...] = ()
    percentage_of_nodes_to_score: int | None = None

    def args_for(self, plugin: str) -> Any:
        """The args configured for ``plugin`` (None when it has none)."""
        for pc in self.plugin_config:
            if pc.name == plugin:
                return pc.args
        return None


@attrs.frozen
class KubeSchedulerConfiguration:
    """A loaded, defaulted and validated configuration.  ``raw`` is the defaulted document (camelCase)."""

    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int | None = 0
    parallelism: int = 16
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False)
    #: the Kubernetes minor release ("1.N") whose scheduler behaviour the configuration follows.
    kubernetes_version: str = NEWEST_RELEASE
    #: every feature gate's state: the release's defaults and the validated overrides.
    feature_gates: FeatureGates = attrs.field(factory=FeatureGates)
    #: the document it was loaded from (to load it again for another release), None when unknown.
    source: Any = attrs.field(default=None, eq=False, repr=False)
    #: the file it was read from ("standard input" for ``-``), None when given as a document; errors name it.
    file: str | None = attrs.field(default=None, eq=False, repr=False)

    def profile(self, scheduler_name: str) -> Profile:
        """The profile serving ``scheduler_name``; KeyError when there is none."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        raise KeyError(scheduler_name)


@attrs.frozen
class EffectivePlugin:
    """A plugin as it runs at one point; ``weight`` is meaningful for Score only (0 elsewhere)."""

    name: str
    weight: int = 0


@attrs.frozen
class EffectiveProfile:
    """Per-point plugin lists after multiPoint expansion; ``points`` has every key of POINTS, in order."""

    scheduler_name: str
    points: Mapping[str, tuple[EffectivePlugin, ...]]
    plugin_args: Mapping[str, Any] = attrs.field(factory=dict)
    percentage_of_nodes_to_score: int | None = None

    def names(self, point: str) -> tuple[str, ...]:
        """Plugin names enabled at ``point``, in run order."""
        return tuple(p.name for p in self.points[point])
