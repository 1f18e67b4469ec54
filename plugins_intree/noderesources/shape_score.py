"""Piecewise-linear scoring functions ("broken linear" shapes), as upstream's ``helper.BuildBrokenLinearFunction``.

A shape is a list of points sorted by strictly increasing utilization. Below the first point the function is
flat at the first score, above the last point flat at the last score, and linear in between. Arithmetic is
integer with Go's truncating division, so decreasing segments round toward the higher score exactly as
upstream does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs


@attrs.frozen(slots=True)
class FunctionShapePoint:
    """One point of a scoring shape: at ``utilization`` the function is worth ``score``."""

    utilization: int
    score: int


def div_trunc(a: int, b: int) -> int:
    """Integer division rounding toward zero (Go's ``/`` on integers), unlike Python's flooring ``//``."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def build_broken_linear_function(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """The function through ``shape``'s points; ``shape`` must be non-empty and sorted by utilization."""
    points = tuple((p.utilization, p.score) for p in shape)
    if not points:
        raise ValueError("a function shape needs at least one point")
    first_score = points[0][1]
    last_score = points[-1][1]

    def function(p: int) -> int:
        prev_u, prev_s = points[0]
        if p <= prev_u:
            return first_score
        for u, s in points[1:]:
            if p <= u:
                return prev_s + div_trunc((s - prev_s) * (p - prev_u), u - prev_u)
            prev_u, prev_s = u, s
        return last_score

    return function
