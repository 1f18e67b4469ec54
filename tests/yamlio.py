"""Test data read with libyaml when PyYAML was built with it: the suite reads megabytes of fixture tables while
it collects, and the C loader is about ten times the pure-Python one. Both are PyYAML's safe loaders (the same
constructors: plain data only)."""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str | bytes) -> Any:
    return yaml.load(text, Loader=_LOADER)  # a safe loader, C or Python


def load_all(text: str | bytes) -> list[Any]:
    return list(yaml.load_all(text, Loader=_LOADER))
