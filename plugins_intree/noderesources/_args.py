"""Accepting a plugin's args: the typed args object, ``None`` for defaults, or a raw ``args`` mapping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from scheduling_framework.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from scheduling_framework.errors import ConfigError, PluginError

A = TypeVar("A", NodeResourcesFitArgs, NodeResourcesBalancedAllocationArgs)


def coerce_args(plugin: str, args: Any, kind: type[A]) -> A:
    """``args`` as a validated ``kind`` instance; raises ConfigError listing every problem."""
    if args is None:
        obj = kind()
    elif isinstance(args, kind):
        obj = args
    elif isinstance(args, Mapping):
        return kind.from_dict(args)  # decodes, defaults and validates
    else:
        raise PluginError(plugin, f"want args to be of type {kind.__name__}, got {type(args).__name__}")
    errors = obj.validate()
    if errors:
        raise ConfigError(errors)
    return obj
