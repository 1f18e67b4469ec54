"""Storage-capacity scoring: how full the node's storage of each class would be with the pod's volumes.

Per storage class, the utilization ``requested * 100 / capacity`` (100 when the capacity is zero or exceeded)
goes through the configured shape; the node's score is the mean over the classes, rounded half up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from plugins_intree.noderesources.shape_score import FunctionShapePoint, build_broken_linear_function
from scheduling_framework.config.args import MAX_CUSTOM_PRIORITY_SCORE, UtilizationShapePoint
from scheduling_framework.interfaces import MAX_NODE_SCORE

MAX_UTILIZATION: Final = 100


@attrs.define(slots=True)
class StorageResource:
    """Requested and available bytes of one storage class on a node."""

    requested: int = 0
    capacity: int = 0


ClassResources = Mapping[str, StorageResource]
VolumeCapacityScorer = Callable[[ClassResources], int]


def scaled_shape(shape: Sequence[UtilizationShapePoint]) -> list[FunctionShapePoint]:
    """The configured shape (scores 0-10) on the node score scale (0-100)."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return [FunctionShapePoint(p.utilization, p.score * factor) for p in shape]


def build_scorer_function(shape: Sequence[FunctionShapePoint]) -> VolumeCapacityScorer:
    """A scorer from a shape already on the 0-100 score scale."""
    raw = build_broken_linear_function(shape)

    def utilization_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(class_resources: ClassResources) -> int:
        node_score = weight_sum = 0
        for r in class_resources.values():
            node_score += utilization_score(r.requested, r.capacity)
            weight_sum += 1  # every class weighs the same
        if weight_sum == 0:
            return 0
        # math.Round of the mean: half away from zero (scores are never negative)
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return scorer
