"""The LeastAllocated strategy: favour nodes with the most room left, as a weighted mean over resources."""

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


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of ``capacity`` on the 0-100 scale; 0 when the node is full or overcommitted."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """A scorer weighting each resource's free share by its configured weight."""
    return weighted_resource_scorer(resources, least_requested_score)


def least_nodes_scorer(resources: Sequence[ResourceSpec]) -> NodesScorer | None:
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
                if req <= cap:
                    node_score = (cap - req) * MAX_NODE_SCORE // cap * w_cpu
                weight_sum = w_cpu
            cap = alloc.memory
            if cap != 0:
                req = used.memory + req_mem
                if req <= cap:
                    node_score += (cap - req) * MAX_NODE_SCORE // cap * w_mem
                weight_sum += w_mem
            append(node_score // weight_sum if weight_sum else 0)
        return out

    return nodes_scorer
