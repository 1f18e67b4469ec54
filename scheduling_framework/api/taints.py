"""Taints and tolerations, matched as core/v1 ``Toleration.ToleratesTaint`` and component-helpers do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs

from scheduling_framework.api._parse import as_map, as_opt_int, as_str, as_time
from scheduling_framework.errors import ValidationError, brief_str

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists", "Lt", "Gt")


@attrs.frozen(slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""
    time_added: datetime | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Taint:
        m = as_map(d, path)
        effect = as_str(m.get("effect"), f"{path}.effect")
        if effect not in TAINT_EFFECTS:
            raise ValidationError(f'Unsupported value: "{brief_str(effect)}": supported values: "NoSchedule", '
                                  f'"PreferNoSchedule", "NoExecute"', f"{path}.effect")
        return cls(as_str(m.get("key"), f"{path}.key"), as_str(m.get("value"), f"{path}.value"), effect,
                   as_time(m.get("timeAdded"), f"{path}.timeAdded"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "effect": self.effect}
        if self.value:
            d["value"] = self.value
        return d

    def __str__(self) -> str:
        # Taint.ToString(): key=value:effect, with empty parts omitted.
        if not self.effect:
            return self.key if not self.value else f"{self.key}={self.value}:"
        if not self.value:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"


@attrs.frozen(slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> Toleration:
        return cls(*toleration_fields(d, path, TOLERATION_OPERATORS, '"Equal", "Exists", "Lt", "Gt"'))

    def to_dict(self) -> dict[str, Any]:
        return toleration_dict(self)

    def tolerates(self, taint: Taint) -> bool:
        """An empty effect tolerates every effect; an empty key with Exists tolerates every key."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == "Exists":
            return True
        if op in ("Equal", ""):
            return self.value == taint.value
        # Lt / Gt belong to the alpha TaintTolerationComparisonOperators feature, off by default:
        # such a toleration tolerates nothing (TaintToleration implements the gated comparison).
        return False


class _TolerationFields(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def operator(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def effect(self) -> str: ...
    @property
    def toleration_seconds(self) -> int | None: ...


def toleration_fields(d: Any, path: str, operators: Sequence[str], supported: str
                      ) -> tuple[str, str, str, str, int | None]:
    """A pod or device toleration's fields from its manifest (key, operator, value, effect, tolerationSeconds),
    the operator one of ``operators`` (``supported`` names them in the error) and "Equal" when unset."""
    m = as_map(d, path)
    op = as_str(m.get("operator"), f"{path}.operator") or "Equal"
    if op not in operators:
        raise ValidationError(f'Unsupported value: "{brief_str(op)}": supported values: {supported}',
                              f"{path}.operator")
    return (as_str(m.get("key"), f"{path}.key"), op, as_str(m.get("value"), f"{path}.value"),
            as_str(m.get("effect"), f"{path}.effect"),
            as_opt_int(m.get("tolerationSeconds"), f"{path}.tolerationSeconds"))


def toleration_dict(t: _TolerationFields) -> dict[str, Any]:
    """The manifest of a pod or device toleration (the two share their fields and their serialization)."""
    d: dict[str, Any] = {"operator": t.operator}
    for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)):
        if v:
            d[k] = v
    if t.toleration_seconds is not None:
        d["tolerationSeconds"] = t.toleration_seconds
    return d


def tolerations_tolerate_taint(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    for t in tolerations:
        if t.tolerates(taint):
            return True
    return False


def find_matching_untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                                    taint_filter: Callable[[Taint], bool] | None = None) -> Taint | None:
    """The first taint (passing ``taint_filter``) that no toleration tolerates, or None."""
    for taint in taints:
        if taint_filter is not None and not taint_filter(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def does_not_schedule_or_execute(taint: Taint) -> bool:
    return taint.effect in ("NoSchedule", "NoExecute")
