"""What the resource scoring strategies share: the pod's request per scored resource, and the per-node
(requested, allocated, allocatable) vectors a strategy turns into a score.

Scoring differs from filtering in two ways that upstream relies on:

* the least/most/ratio strategies score with *non-zero* requests: a container that sets no cpu or memory
  request counts as 100m / 200Mi, so best-effort pods still spread; balanced allocation uses real requests;
* a scalar (extended, hugepages, ...) resource the pod does not request is left out of the score, and so is
  any resource the node has none of.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from scheduling_framework.api.pod import Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resize import DEFAULT_RULES, RequestRules
from scheduling_framework.api.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MEMORY,
    is_scalar_resource_name,
    pod_requests,
)
from scheduling_framework.config.args import ResourceSpec
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

#: A scoring strategy: ``scorer(requested, allocated, allocatable) -> score``. ``requested`` includes the
#: incoming pod, ``allocated`` is what the node's pods already use; an entry whose ``allocatable`` is 0 is
#: not part of the score.
Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]

#: The same computation as a ``Scorer`` for many nodes at once, reading each node directly:
#: ``nodes_scorer(node_infos, pod_requests) -> [score, ...]``. Strategies provide one for the layouts they
#: can specialise (cpu and memory), so the hot path builds no per-node vectors; it must return exactly what
#: the vector form returns.
NodesScorer = Callable[[Sequence[NodeInfo], Sequence[int]], list[int]]

#: DRAExtendedResource: ``dra(node_info, resource) -> (allocatable, allocated)`` of a resource served through DRA
#: on the node, or None (see plugins_intree.noderesources.dra_capacity).
DraResource = Callable[[NodeInfo, str], "tuple[int, int] | None"]

#: The resource layout the direct scorers specialise: upstream's default, cpu then memory.
CPU_MEMORY: Final = (CPU, MEMORY)


def weighted_resource_scorer(resources: Sequence[ResourceSpec], share: Callable[[int, int], int]) -> Scorer:
    """A scorer: the weighted mean of ``share(requested, capacity)`` over the resources a node has
    (resources with zero capacity carry no weight). LeastAllocated and MostAllocated differ only in ``share``."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: Sequence[int], _allocated: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, weights, strict=True):
            if cap == 0:
                continue
            node_score += share(req, cap) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    return scorer

#: Requests assumed for a container that sets none, when scoring (upstream DefaultMilliCPURequest /
#: DefaultMemoryRequest). An explicit zero request is kept as zero.
NON_ZERO_DEFAULTS: Final[dict[str, Quantity]] = {
    CPU: Quantity.parse(f"{DEFAULT_MILLI_CPU_REQUEST}m"),
    MEMORY: Quantity.parse(str(DEFAULT_MEMORY_REQUEST)),
}

# How a scored resource is read from a NodeInfo.
_CPU: Final = 0
_MEMORY: Final = 1
_EPHEMERAL: Final = 2
_SCALAR: Final = 3
_OTHER: Final = 4  # e.g. "pods" or an unknown name: never scored


def _kind(name: str) -> int:
    if name == CPU:
        return _CPU
    if name == MEMORY:
        return _MEMORY
    if name == EPHEMERAL_STORAGE:
        return _EPHEMERAL
    if is_scalar_resource_name(name):
        return _SCALAR
    return _OTHER


def pod_resource_request(pod: Pod, name: str, *, non_zero: bool, rules: RequestRules = DEFAULT_RULES) -> int:
    """The pod's request of one resource in its integer unit (milli-cpu for cpu), overhead included.

    With ``non_zero`` containers that set no cpu / memory request count with the scheduler's defaults; an
    in-place resize in the pod's status counts as ``rules`` say (upstream's scorers pass UseStatusResources).
    """
    reqs = pod_requests(pod, non_missing=NON_ZERO_DEFAULTS if non_zero else None, rules=rules)
    q = reqs.get(name)
    if q is None:
        return 0
    return q.milli_value() if name == CPU else q.value()


class ResourceAllocationScorer:
    """Scores a node from the pod's requests of ``resources`` with a strategy ``scorer``.

    ``use_requested`` selects the node's real requested cpu/memory (balanced allocation) instead of its
    non-zero requested cpu/memory (the Fit strategies); the incoming pod's requests follow the same choice.
    """

    __slots__ = ("name", "resources", "scorer", "use_requested", "nodes_scorer", "_slots", "rules", "pod_level")

    def __init__(self, name: str, resources: Sequence[ResourceSpec], scorer: Scorer, *, use_requested: bool,
                 nodes_scorer: NodesScorer | None = None, rules: RequestRules = DEFAULT_RULES,
                 pod_level: bool = True) -> None:
        self.name = name
        self.rules = rules
        self.pod_level = pod_level
        self.resources: tuple[ResourceSpec, ...] = tuple(resources)
        self.scorer = scorer
        self.use_requested = use_requested
        self._slots: tuple[tuple[int, str], ...] = tuple((_kind(r.name), r.name) for r in self.resources)
        # only used when there is something to score (an empty resource list is an error in score())
        self.nodes_scorer: NodesScorer | None = nodes_scorer if self._slots else None

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request of each scored resource, in the order of ``resources``."""
        reqs = pod_requests(pod, non_missing=None if self.use_requested else NON_ZERO_DEFAULTS, rules=self.rules,
                            pod_level=self.pod_level)
        out: list[int] = []
        for r in self.resources:
            name = r.name
            q = reqs.get(name)
            out.append(0 if q is None else (q.milli_value() if name == CPU else q.value()))
        return tuple(out)

    @staticmethod
    def is_best_effort(requests: Sequence[int]) -> bool:
        """True when the pod requests none of the scored resources."""
        return not any(requests)

    def score(self, node_info: NodeInfo, requests: Sequence[int],
              dra: DraResource | None = None) -> tuple[int, Status | None]:
        """The node's score for a pod whose requests (from :meth:`pod_requests`) are ``requests``.

        ``dra`` (DRAExtendedResource): ``(allocatable, allocated)`` on a node of a scored scalar resource that a
        DeviceClass backs, read when the node's allocatable does not list it (None: not backed)."""
        slots = self._slots
        if not slots:
            return 0, Status(Code.ERROR, "resources not found")
        nodes_scorer = self.nodes_scorer
        if nodes_scorer is not None and dra is None:
            return nodes_scorer((node_info,), requests)[0], None
        n = len(slots)
        requested = [0] * n
        allocated = [0] * n
        allocatable = [0] * n
        alloc = node_info.allocatable
        used_all = node_info.requested
        used_cpu_mem = used_all if self.use_requested else node_info.non_zero_requested
        for i, (kind, name) in enumerate(slots):
            pod_req = requests[i]
            if kind == _CPU:
                cap, used = alloc.milli_cpu, used_cpu_mem.milli_cpu
            elif kind == _MEMORY:
                cap, used = alloc.memory, used_cpu_mem.memory
            elif kind == _EPHEMERAL:
                cap, used = alloc.ephemeral_storage, used_all.ephemeral_storage
            elif kind == _SCALAR and pod_req:
                cap = alloc.scalar_resources.get(name, 0)
                used = used_all.scalar_resources.get(name, 0)
                if cap == 0 and dra is not None:
                    served = dra(node_info, name)
                    if served is not None and served[0] > 0:
                        cap, used = served
            else:
                continue  # a scalar resource the pod does not ask for, or a resource never scored
            if cap == 0:
                continue
            allocatable[i] = cap
            allocated[i] = used
            requested[i] = used + pod_req
        return self.scorer(requested, allocated, allocatable), None

    def score_nodes(self, node_infos: Sequence[NodeInfo], requests: Sequence[int]) -> list[int] | None:
        """:meth:`score` of every node at once (its status is always None then); None when this scorer
        has no specialised form and each node must go through :meth:`score`."""
        nodes_scorer = self.nodes_scorer
        return None if nodes_scorer is None else nodes_scorer(node_infos, requests)
