"""KubeSchedulerConfiguration ``kubescheduler.config.k8s.io/v1``: load, default, merge, expand, validate.

``load_config`` gives a defaulted, validated :class:`KubeSchedulerConfiguration`;
``expand_profile`` resolves a profile's plugin sets (multiPoint included) into the ordered
plugins of every extension point; ``config_view`` renders the effective configuration.
"""

from __future__ import annotations

from scheduling_framework.config.args import (
    ARGS_TYPES,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
    parse_args,
)
from scheduling_framework.config.defaults import default_plugins, merge_plugin_set, merge_plugins
from scheduling_framework.config.expand import expand_profile
from scheduling_framework.config.intree import INTREE_POINTS, intree_points_of
from scheduling_framework.config.loader import load_config, resolve_config
from scheduling_framework.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    POINTS,
    EffectivePlugin,
    EffectiveProfile,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from scheduling_framework.config.validation import validate_profiles
from scheduling_framework.config.view import config_document, config_view

__all__ = [
    "API_VERSION",
    "ARGS_TYPES",
    "DEFAULT_SCHEDULER_NAME",
    "INTREE_POINTS",
    "KIND",
    "POINTS",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "EffectivePlugin",
    "EffectiveProfile",
    "InterPodAffinityArgs",
    "KubeSchedulerConfiguration",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "PodTopologySpreadArgs",
    "Profile",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
    "config_document",
    "config_view",
    "default_plugins",
    "expand_profile",
    "intree_points_of",
    "load_config",
    "merge_plugin_set",
    "merge_plugins",
    "parse_args",
    "resolve_config",
    "validate_profiles",
]
