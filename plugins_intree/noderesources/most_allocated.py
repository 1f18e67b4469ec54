"""The MostAllocated strategy: favour the fullest nodes (bin packing), as a weighted mean over resources."""

from __future__ import annotations

from collections.abc import Sequence

from plugins_intree.noderesources.resource_allocation import (
    CPU_MEMORY,
    NodesScorer,
    Scorer,
    weighted_resource_scorer,
)
from scheduling_framework.config.args import ResourceSpec
from scheduling_framework.interfaces import MAX_NODE_SCORE
from scheduling_framework.state.node_info import NodeInfo


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of ``capacity`` on the 0-100 scale, capped at 100.

    Requests can exceed capacity because pods without requests are counted with non-zero defaults.
    """
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """A scorer weighting each resource's used share by its configured weight."""
    return weighted_resource_scorer(resources, most_requested_score)


def most_nodes_scorer(resources: Sequence[ResourceSpec]) -> NodesScorer | None:
    """The scorer above for many nodes, reading cpu and memory straight from each (None for other lists)."""
    if tuple(r.name for r in resources) != CPU_MEMORY:
        return None
    w_cpu, w_mem = resources[0].weight, resources[1].weight

    def nodes_scorer(node_infos: Sequence[NodeInfo], requests: Sequence[int]) -> list[int]:
        req_cpu, req_mem = requests[0], requests[1]
        out: list[int] = []
        append = out.append
        for ni in node_infos:
            alloc = ni.allocatable
            used = ni.non_zero_requested
            node_score = weight_sum = 0
            cap = alloc.milli_cpu
            if cap != 0:
                req = used.milli_cpu + req_cpu
                node_score = (req if req < cap else cap) * MAX_NODE_SCORE // cap * w_cpu
                weight_sum = w_cpu
            cap = alloc.memory
            if cap != 0:
                req = used.memory + req_mem
                node_score += (req if req < cap else cap) * MAX_NODE_SCORE // cap * w_mem
                weight_sum += w_mem
            append(node_score // weight_sum if weight_sum else 0)
        return out

    return nodes_scorer
