"""The MostAllocated strategy: favour the fullest nodes (bin packing), as a weighted mean over resources."""

from __future__ import annotations

from collections.abc import Sequence

from plugins_intree.noderesources.resource_allocation import Scorer
from scheduling_framework.config.args import ResourceSpec
from scheduling_framework.interfaces import MAX_NODE_SCORE


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of ``capacity`` on the 0-100 scale, capped at 100.

    Requests can exceed capacity because pods without requests are counted with non-zero defaults.
    """
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """A scorer weighting each resource's used share by its configured weight."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, weights, strict=True):
            if cap == 0:
                continue
            node_score += most_requested_score(req, cap) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    return scorer
