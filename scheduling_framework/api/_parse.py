"""Small, fast helpers for reading manifest dicts with errors that name the field path."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduling_framework.errors import ValidationError, brief


def as_map(value: Any, path: str) -> Mapping[str, Any]:
    if type(value) is dict:  # the common case, without the ABC check
        return value
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"expected an object, got {type(value).__name__}", path)
    return value


def as_list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"expected a list, got {type(value).__name__}", path)
    return value


def as_str(value: Any, path: str, default: str = "") -> str:
    if type(value) is str:
        return value
    if value is None:
        return default
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise ValidationError(f"expected a string, got {brief(value)}", path)
    if isinstance(value, (int, float)):
        # YAML turns unquoted label values like 1 or 1.5 into numbers; the API server would not,
        # but a hand-written cluster file often does, so read them back as their text.
        return str(value)
    raise ValidationError(f"expected a string, got {type(value).__name__}", path)


def as_int(value: Any, path: str, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, bool):
        raise ValidationError(f"expected an integer, got {brief(value)}", path)
    if isinstance(value, int):
        return value
    # A string is refused, as the API server's decoder refuses "80" for an integer field.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValidationError(f"expected an integer, got {brief(value)}", path)


def as_opt_int(value: Any, path: str) -> int | None:
    return None if value is None else as_int(value, path)


def as_bool(value: Any, path: str, default: bool = False) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    # "false" (a string) is refused, never read as a boolean: bool("false") is True.
    raise ValidationError(f"expected a boolean, got {brief(value)}", path)


def str_map(value: Any, path: str) -> dict[str, str]:
    m = as_map(value, path)
    out: dict[str, str] = {}
    for k, v in m.items():
        # (the field path is formatted only for a value that is not a string)
        out[k if type(k) is str else str(k)] = v if type(v) is str else as_str(v, f"{path}.{k}")
    return out


def str_tuple(value: Any, path: str) -> tuple[str, ...]:
    return tuple(as_str(v, f"{path}[{i}]") for i, v in enumerate(as_list(value, path)))


def as_time(value: Any, path: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValidationError(f"expected an RFC 3339 timestamp, got {brief(value)}", path)
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValidationError(f"expected an RFC 3339 timestamp, got {brief(value)}", path) from None
