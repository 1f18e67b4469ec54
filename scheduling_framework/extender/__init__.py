"""Scheduler extenders: call them as kube-scheduler does, and serve Python plugins as one.

- :class:`HTTPExtender` (``client``) — one entry of a KubeSchedulerConfiguration's ``extenders:``; the
  :class:`~scheduling_framework.Scheduler`, ``Framework.from_config`` and the simulation API build them
  from the configuration and call them at upstream's points (after Filter, next to Score, in preemption,
  instead of the bind plugins).
- :class:`ExtenderServer` / :func:`serve` (``server``) — a profile's Filter and Score plugins behind the
  extender protocol, so a real kube-scheduler can call Python plugins (``scheduling-framework serve-extender``).
- ``types`` — the wire types (upstream's Go field names as JSON keys).
"""

from __future__ import annotations

from scheduling_framework.extender.client import (
    DEFAULT_EXTENDER_TIMEOUT,
    ExtenderConfig,
    ExtenderError,
    HTTPExtender,
    ManagedResource,
    build_extenders,
    ignored_resources,
)
from scheduling_framework.extender.server import ExtenderServer, ExtenderServerError, PluginExtender, serve
from scheduling_framework.extender.types import (
    MAX_EXTENDER_PRIORITY,
    MIN_EXTENDER_PRIORITY,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    MetaVictims,
    WireError,
    WireVictims,
)

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "MAX_EXTENDER_PRIORITY",
    "MIN_EXTENDER_PRIORITY",
    "ExtenderArgs",
    "ExtenderBindingArgs",
    "ExtenderBindingResult",
    "ExtenderConfig",
    "ExtenderError",
    "ExtenderFilterResult",
    "ExtenderPreemptionArgs",
    "ExtenderPreemptionResult",
    "ExtenderServer",
    "ExtenderServerError",
    "HTTPExtender",
    "HostPriority",
    "ManagedResource",
    "MetaVictims",
    "PluginExtender",
    "WireError",
    "WireVictims",
    "build_extenders",
    "ignored_resources",
    "serve",
]
