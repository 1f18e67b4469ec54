"""What a configuration's extenders change in the profiles: NodeResourcesFit's ignored resources.

kube-scheduler (``buildExtenders``) collects the managed resources marked ``ignoredByScheduler`` of every
extender and sets them as NodeResourcesFit's ``ignoredResources`` in every profile, replacing what the
profile's own NodeResourcesFitArgs said: the extender owns those resources, the scheduler does not count them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from scheduling_framework.config.args import NodeResourcesFitArgs
from scheduling_framework.config.types import EffectiveProfile

FIT = "NodeResourcesFit"


def apply_ignored_resources(profile: EffectiveProfile, ignored: Sequence[str]) -> EffectiveProfile:
    """``profile`` with NodeResourcesFit's ignoredResources set to ``ignored`` (unchanged when empty)."""
    if not ignored:
        return profile
    args = dict(profile.plugin_args)
    current = args.get(FIT)
    if isinstance(current, NodeResourcesFitArgs):
        args[FIT] = attrs.evolve(current, ignored_resources=tuple(ignored))
    else:
        args[FIT] = NodeResourcesFitArgs(ignored_resources=tuple(ignored))
    return attrs.evolve(profile, plugin_args=args)
