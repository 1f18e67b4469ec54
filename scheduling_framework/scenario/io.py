"""Reading scenario, sweep, cluster and config files named by a scenario (one place, safe loading only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduling_framework._input import load_yaml_documents, read_input
from scheduling_framework.errors import SchedulingFrameworkError


def _read_text(path: str, what: str) -> str:
    # The hardened reader: regular files only, size cap, encodings, then nesting/alias checks on loading.
    return read_input(path, what=f"{what} file")


def read_yaml_documents(path: str, what: str) -> list[Any]:
    """Every document of a YAML file, ``kind: List`` documents flattened into their items."""
    docs = load_yaml_documents(_read_text(path, what), path)
    out: list[Any] = []
    for d in docs:
        if isinstance(d, Mapping) and str(d.get("kind", "")).endswith("List") and isinstance(d.get("items"), list):
            out.extend(d["items"])
        else:
            out.append(d)
    return out


def read_yaml_mapping(path: str, what: str) -> Mapping[str, Any]:
    """A YAML file holding exactly one mapping (a scenario, a sweep, a configuration)."""
    docs = load_yaml_documents(_read_text(path, what), path)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise SchedulingFrameworkError(f"{path}: expected one YAML mapping ({what}), found {len(docs)} document(s)")
    return docs[0]
