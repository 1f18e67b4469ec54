"""Field-path error messages worded like k8s.io/apimachinery's ``field.Error``, and a strict reader.

Every message has the shape ``<path>: <Type>[: <value>][: <detail>]`` so that a user who knows the
upstream validation output finds the same text here.  The reader decodes plain YAML/JSON data
into Python values strictly (unknown fields and wrong types are errors) and never raises: it
appends messages to a shared list so that one load reports every problem at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from scheduling_framework.errors import MAX_VALUE_CHARS, brief

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def child(path: str, name: str) -> str:
    """``path.name`` (or just ``name`` at the root)."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def go_quote(s: str) -> str:
    """A string quoted the way Go's ``%q`` does for the common (printable) cases."""
    return json.dumps(s, ensure_ascii=False)


def _quote_brief(s: str) -> str:
    if len(s) <= MAX_VALUE_CHARS:
        return go_quote(s)
    return go_quote(s[:MAX_VALUE_CHARS])[:-1] + '..."'


def fmt_value(value: Any) -> str:
    """Render a bad value as upstream does: strings quoted, numbers plain, lists of strings Go-style.

    Long values are cut (see ``errors.brief``): a value can be an alias bomb that stands for billions of nodes.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return brief(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return _quote_brief(value)
    if isinstance(value, (list, tuple)) and len(value) <= 16 and all(isinstance(v, str) for v in value):
        text = "[]string{" + ", ".join(_quote_brief(v) for v in value) + "}"
        if len(text) <= 2 * MAX_VALUE_CHARS:
            return text
    return brief(value)


def _with_detail(head: str, detail: str) -> str:
    return f"{head}: {detail}" if detail else head


def invalid(path: str, value: Any, detail: str = "") -> str:
    return _with_detail(f"{path}: Invalid value: {fmt_value(value)}", detail)


def required(path: str, detail: str = "") -> str:
    return _with_detail(f"{path}: Required value", detail)


def forbidden(path: str, detail: str = "") -> str:
    return _with_detail(f"{path}: Forbidden", detail)


def duplicate(path: str, value: Any) -> str:
    return f"{path}: Duplicate value: {fmt_value(value)}"


def not_supported(path: str, value: Any, valid: Iterable[str]) -> str:
    quoted = ", ".join(go_quote(v) for v in valid)
    return _with_detail(
        f"{path}: Unsupported value: {fmt_value(value)}", f"supported values: {quoted}" if quoted else ""
    )


def unknown_field(path: str) -> str:
    return f'strict decoding error: unknown field "{path}"'


class Reader:
    """Strict decoding of untyped data; problems are appended to ``errors`` instead of raised."""

    __slots__ = ("errors",)

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors

    def obj(self, value: Any, path: str, known: Iterable[str]) -> Mapping[str, Any] | None:
        """The mapping at ``path`` ({} for null), or None (with an error) when it is not a mapping."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.errors.append(invalid(path or "<root>", _type_name(value), "expected an object"))
            return None
        allowed = set(known)
        for key in value:
            if not isinstance(key, str) or key not in allowed:
                self.errors.append(unknown_field(child(path, str(key))))
        return value

    def seq(self, value: Any, path: str) -> list[Any] | None:
        if value is None:
            return []
        if not isinstance(value, list):
            self.errors.append(invalid(path, _type_name(value), "expected a list"))
            return None
        return value

    def string(self, value: Any, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.errors.append(invalid(path, value, "expected a string"))
            return None
        return value

    def integer(self, value: Any, path: str, bits: int = 32) -> int | None:
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.errors.append(invalid(path, value, f"expected an int{bits}"))
            return None
        low, high = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
        if not low <= value <= high:
            self.errors.append(invalid(path, value, f"does not fit in an int{bits}"))
            return None
        return value

    def number(self, value: Any, path: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.errors.append(invalid(path, value, "expected a number"))
            return None
        return float(value)

    def boolean(self, value: Any, path: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            self.errors.append(invalid(path, value, "expected a boolean"))
            return None
        return value

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        items = self.seq(value, path)
        out: list[str] = []
        for i, item in enumerate(items or ()):
            s = self.string(item, index(path, i))
            if s is not None:
                out.append(s)
        return tuple(out)


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration string (``"1m30s"``, ``"-2.5h"``, ``"0"``), or None if malformed."""
    s = text.strip()
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        return None
    pos = 0
    total = 0.0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None:
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total
