"""Toleration matching with upstream's numeric ``Lt``/``Gt`` operators and their feature gate.

The core model's ``Toleration.tolerates`` knows ``Equal`` and ``Exists`` only. Upstream (core/v1
``Toleration.ToleratesTaint`` and component-helpers ``FindMatchingUntoleratedTaint``) also compares
integer values when the TaintTolerationComparisonOperators gate is on, reports values that do not
parse, and treats ``Lt``/``Gt`` as non-matching while the gate is off. These helpers carry that
behaviour; each check returns ``(tolerated, error message or None)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduling_framework.api.taints import Taint, Toleration

#: the upstream feature gate that enables ``Lt``/``Gt`` tolerations (alpha, off by default).
COMPARISON_OPERATORS_GATE = "TaintTolerationComparisonOperators"

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_DECIMAL_INTEGER_MSG = "must be a valid decimal integer in canonical form"


def feature_enabled(handle: Any, gate: str) -> bool:
    """Whether ``gate`` is on in the handle's ``feature_gates`` (a mapping or an object with ``enabled``)."""
    gates = getattr(handle, "feature_gates", None)
    if gates is None:
        return False
    if isinstance(gates, Mapping):
        return bool(gates.get(gate, False))
    enabled = getattr(gates, "enabled", None)
    return bool(enabled(gate)) if callable(enabled) else False


def _decimal_integer_problem(value: str) -> str | None:
    """apimachinery's strict canonical-integer check: no sign but '-', no leading zeros, digits only."""
    if not value:
        return "must be non-empty"
    i = 1 if value[0] == "-" else 0
    if i == len(value):
        return _DECIMAL_INTEGER_MSG
    if value[i] == "0":
        return None if value == "0" else _DECIMAL_INTEGER_MSG
    if not all("0" <= ch <= "9" for ch in value[i:]):
        return _DECIMAL_INTEGER_MSG
    return None


def _parse(value: str, what: str) -> tuple[int | None, str | None]:
    problem = _decimal_integer_problem(value)
    if problem is not None:
        return None, f'failed to parse {what} value "{value}" as int64: {problem}'
    n = int(value)
    if not _INT64_MIN <= n <= _INT64_MAX:
        return None, (f'failed to parse {what} value "{value}" as int64: strconv.ParseInt: parsing "{value}": '
                      f"value out of range")
    return n, None


def _compare(toleration_value: str, taint_value: str, operator: str) -> tuple[bool, str | None]:
    want, err = _parse(toleration_value, "toleration")
    if err is not None:
        return False, err
    have, err = _parse(taint_value, "taint")
    if err is not None:
        return False, err
    assert want is not None and have is not None
    return (have < want, None) if operator == "Lt" else (have > want, None)


def tolerates(toleration: Toleration, taint: Taint, comparison_operators: bool) -> tuple[bool, str | None]:
    """One toleration against one taint: effect, then key, then the operator."""
    if toleration.effect and toleration.effect != taint.effect:
        return False, None
    if toleration.key and toleration.key != taint.key:
        return False, None
    op = toleration.operator
    if op in ("", "Equal"):
        return toleration.value == taint.value, None
    if op == "Exists":
        return True, None
    if op in ("Lt", "Gt"):
        if not comparison_operators:
            return False, None
        return _compare(toleration.value, taint.value, op)
    return False, None


def tolerations_tolerate(tolerations: Sequence[Toleration], taint: Taint,
                         comparison_operators: bool) -> tuple[bool, str | None]:
    """True when any toleration tolerates ``taint``; otherwise the first comparison error, if any."""
    first_err: str | None = None
    for t in tolerations:
        ok, err = tolerates(t, taint, comparison_operators)
        if ok:
            return True, None
        if first_err is None:
            first_err = err
    return False, first_err


def find_untolerated_do_not_schedule(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                                     comparison_operators: bool) -> tuple[Taint | None, str | None]:
    """The NoSchedule/NoExecute taint no toleration tolerates, and the parse error behind it if any.

    A taint that is plainly untolerated wins over one whose comparison failed to parse, so the
    answer does not depend on the order of the node's taints (as upstream).
    """
    err_taint: Taint | None = None
    first_err: str | None = None
    for taint in taints:
        if taint.effect != "NoSchedule" and taint.effect != "NoExecute":
            continue
        ok, err = tolerations_tolerate(tolerations, taint, comparison_operators)
        if err is not None:
            if first_err is None:
                first_err, err_taint = err, taint
            continue
        if not ok:
            return taint, None
    return err_taint, first_err
