"""The RequestedToCapacityRatio strategy: score each resource's utilization through a user-given shape.

Shape scores are configured on a 0-10 scale and stretched to the scheduler's 0-100 scale. A resource whose
shape score is 0 does not count toward the weighted mean at all, and the mean is rounded half away from zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from plugins_intree.noderesources.resource_allocation import Scorer
from plugins_intree.noderesources.shape_score import FunctionShapePoint, build_broken_linear_function
from scheduling_framework.config.args import MAX_CUSTOM_PRIORITY_SCORE, ResourceSpec, UtilizationShapePoint
from scheduling_framework.interfaces import MAX_NODE_SCORE

MAX_UTILIZATION: Final = 100


def scaled_utilization(requested: int, capacity: int, maximum: int = MAX_UTILIZATION) -> int:
    """``requested * maximum // capacity`` with ``requested`` clamped to ``[0, capacity]``."""
    if capacity <= 0 or requested <= 0:
        return 0
    if requested >= capacity:
        return maximum
    return requested * maximum // capacity


def build_requested_to_capacity_ratio_scorer(shape: Sequence[FunctionShapePoint],
                                             resources: Sequence[ResourceSpec]) -> Scorer:
    """A scorer from a shape already on the 0-100 score scale."""
    raw = build_broken_linear_function(shape)
    full = raw(MAX_UTILIZATION)
    weights = tuple(r.weight for r in resources)

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, weights, strict=True):
            if cap == 0:
                continue
            resource_score = full if req > cap else raw(scaled_utilization(req, cap))
            if resource_score > 0:
                node_score += resource_score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        # round half away from zero; both terms are non-negative integers
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return scorer


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec],
                                       shape: Sequence[UtilizationShapePoint]) -> Scorer:
    """A scorer from the configured shape (scores 0-10), scaled to the node score range."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    points = [FunctionShapePoint(p.utilization, p.score * factor) for p in shape]
    return build_requested_to_capacity_ratio_scorer(points, resources)
