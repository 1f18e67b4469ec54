"""Coscheduling for scheduling-framework: the kubernetes-sigs/scheduler-plugins plugin that schedules the pods
of a PodGroup (``scheduling.x-k8s.io/v1alpha1``, label ``scheduling.x-k8s.io/pod-group``) all together.

Installing this distribution registers the plugin through its ``scheduling_framework`` entry point, and
declares the PodGroup kind as read (so loading a cluster with PodGroups does not report them as ignored).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import scheduling_framework as sf
from scheduling_framework.ingest.cluster import register_object_kinds

from coscheduling.plugin import NAME, Coscheduling, CoschedulingArgs
from coscheduling.podgroup import POD_GROUP, POD_GROUP_LABEL, PodGroup

if TYPE_CHECKING:
    from scheduling_framework import Registry


@sf.hookimpl
def register_plugins(registry: Registry) -> None:
    register_object_kinds(POD_GROUP)
    registry.register(NAME, Coscheduling)


__all__ = ["NAME", "POD_GROUP", "POD_GROUP_LABEL", "Coscheduling", "CoschedulingArgs", "PodGroup",
           "register_plugins"]
