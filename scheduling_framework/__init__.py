"""scheduling-framework: the Kubernetes scheduling framework, reimplemented in pure Python.

Public names are re-exported here; implementation lives in private-by-convention modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import (
    ConfigError,
    InvalidQuantityError,
    ManifestError,
    PluginError,
    RegistryError,
    SchedulingFrameworkError,
    SnapshotError,
    ValidationError,
)
from scheduling_framework.hooks import hookimpl, hookspec
from scheduling_framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from scheduling_framework.registry import Registry
from scheduling_framework.state.node_info import NodeInfo, PodInfo, Resource
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status

if TYPE_CHECKING:
    from scheduling_framework.config import load_config
    from scheduling_framework.runtime import Framework
    from scheduling_framework.scheduler import Scheduler

__version__ = "0.1.0"

_LAZY = {
    "Framework": ("scheduling_framework.runtime", "Framework"),
    "Scheduler": ("scheduling_framework.scheduler", "Scheduler"),
    "load_config": ("scheduling_framework.config", "load_config"),
}


def __getattr__(name: str) -> Any:
    # The runtime, scheduler and config pull in more modules; load them on first use only.
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'scheduling_framework' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


__all__ = [
    "MAX_NODE_SCORE", "MIN_NODE_SCORE", "Code", "ConfigError", "CycleState", "Framework", "InvalidQuantityError",
    "ManifestError", "NodeInfo", "NodeScore", "PluginError", "PodInfo", "PostFilterResult", "PreFilterResult",
    "QueuedPodInfo", "Registry", "RegistryError", "Resource", "Scheduler", "SchedulingFrameworkError", "Snapshot",
    "SnapshotError", "Status", "ValidationError", "__version__", "hookimpl", "hookspec", "load_config",
]
