"""NodeResourcesFit: does the node have room for the pod's requests, and how good a fit is it?

Filter checks the pod count and every requested resource against the node's allocatable minus what its pods
already request, with one reason per short resource ("Insufficient cpu", "Too many pods"). A request larger
than the node's whole allocatable makes the node UnschedulableAndUnresolvable: evicting pods cannot help.
Scoring uses the configured strategy (LeastAllocated, MostAllocated or RequestedToCapacityRatio).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from plugins_intree.noderesources._args import coerce_args
from plugins_intree.noderesources.dra_capacity import DraCapacity, dra_capacity_for
from plugins_intree.noderesources.least_allocated import least_nodes_scorer, least_resource_scorer
from plugins_intree.noderesources.most_allocated import most_nodes_scorer, most_resource_scorer
from plugins_intree.noderesources.requested_to_capacity_ratio import requested_to_capacity_ratio_scorer
from plugins_intree.noderesources.resource_allocation import NodesScorer, ResourceAllocationScorer, Scorer
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resize import RequestRules
from scheduling_framework.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_extended_resource_name,
    pod_requests,
)
from scheduling_framework.config.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ScoringStrategy,
)
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.dra.claims import DEVICE_CLASS
from scheduling_framework.dra.extended import DeviceClassResolver, is_dra_extended_resource_name, resolver_for
from scheduling_framework.errors import PluginError
from scheduling_framework.features import features_of, gate_enabled
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.state.node_info import NodeInfo, Resource
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code, Status

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
_KEPT_STATES = 4096  # PreFilter states kept per plugin, for pods scheduled again (see Fit.pre_filter)
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

TOO_MANY_PODS: Final = "Too many pods"
_INSUFFICIENT_CPU: Final = "Insufficient cpu"
_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"


@attrs.frozen(slots=True)
class InsufficientResource:
    """A resource the node is short of for the pod.

    ``used`` is what the node's pods already request and ``capacity`` the node's allocatable, in the
    resource's integer unit (milli-cpu for cpu). ``unresolvable`` is set when the request alone exceeds
    ``capacity``, so no eviction could make room.
    """

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def compute_pod_resource_request(pod: Pod) -> Resource:
    """The pod's requests as a Resource: containers summed, init containers as peaks, sidecars, pod-level
    requests and overhead included (upstream's computePodResourceRequest)."""
    r = Resource()
    r.set_max(pod_requests(pod))
    return r


class _PreFilterState:
    """The pod's requests, with the scalar resources to check (non-zero, not ignored) and their reasons."""

    __slots__ = ("request", "milli_cpu", "memory", "ephemeral_storage", "scalars", "dra_backed")

    def __init__(self, request: Resource, ignored_resources: frozenset[str],
                 ignored_resource_groups: frozenset[str], resolver: DeviceClassResolver | None = None) -> None:
        self.request = request
        self.milli_cpu = request.milli_cpu
        self.memory = request.memory
        self.ephemeral_storage = request.ephemeral_storage
        scalars: list[tuple[str, int, str]] = []
        for name, quantity in request.scalar_resources.items():
            if quantity == 0:
                continue
            # only extended resources can be ignored; a resource name is guaranteed to have a "/" there
            if is_extended_resource_name(name) and (
                    name in ignored_resources
                    or (ignored_resource_groups and name.split("/", 1)[0] in ignored_resource_groups)):
                continue
            scalars.append((name, quantity, f"Insufficient {name}"))
        self.scalars: tuple[tuple[str, int, str], ...] = tuple(scalars)
        # DRAExtendedResource: the requested resources a DeviceClass backs; a node whose allocatable does not
        # list them (or lists 0) leaves them to DynamicResources
        self.dra_backed: frozenset[str] = frozenset() if not resolver else frozenset(
            name for name, _, _ in scalars if is_dra_extended_resource_name(name) and resolver.get(name) is not None)

    def clone(self) -> _PreFilterState:
        return self  # never mutated after PreFilter


class _PreScoreState:
    """The pod's request of each scored resource, in the order of the strategy's resources, and (DRAExtendedResource)
    the reader of what DRA serves on each node of the scored resources a DeviceClass backs."""

    __slots__ = ("pod_requests", "dra")

    def __init__(self, pod_requests: tuple[int, ...], dra: DraCapacity | None = None) -> None:
        self.pod_requests = pod_requests
        self.dra = dra

    def clone(self) -> _PreScoreState:
        return self


def _insufficient_resources(s: _PreFilterState, node_info: NodeInfo) -> list[InsufficientResource]:
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    num_pods = len(node_info.pods)
    if num_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource(PODS, TOO_MANY_PODS, 1, num_pods, alloc.allowed_pod_number))
    req = s.milli_cpu
    if req > 0 and req > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource(CPU, _INSUFFICIENT_CPU, req, used.milli_cpu, alloc.milli_cpu,
                                        req > alloc.milli_cpu))
    req = s.memory
    if req > 0 and req > alloc.memory - used.memory:
        out.append(InsufficientResource(MEMORY, _INSUFFICIENT_MEMORY, req, used.memory, alloc.memory,
                                        req > alloc.memory))
    req = s.ephemeral_storage
    if req > 0 and req > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource(EPHEMERAL_STORAGE, _INSUFFICIENT_EPHEMERAL_STORAGE, req,
                                        used.ephemeral_storage, alloc.ephemeral_storage,
                                        req > alloc.ephemeral_storage))
    if s.scalars:
        alloc_scalars = alloc.scalar_resources
        used_scalars = used.scalar_resources
        for name, req, reason in s.scalars:
            cap = alloc_scalars.get(name, 0)
            if cap <= 0 and name in s.dra_backed:
                continue
            in_use = used_scalars.get(name, 0)
            if req > cap - in_use:
                out.append(InsufficientResource(name, reason, req, in_use, cap, req > cap))
    return out


def _shortage_status(s: _PreFilterState, node_info: NodeInfo) -> Status | None:
    """The Filter verdict from :func:`_insufficient_resources`' reasons, without building its records:
    one reason per short resource in the same order, UnschedulableAndUnresolvable when a request exceeds
    the node's whole allocatable."""
    reasons: list[str] = []
    unresolvable = False
    alloc = node_info.allocatable
    used = node_info.requested
    if len(node_info.pods) + 1 > alloc.allowed_pod_number:
        reasons.append(TOO_MANY_PODS)
    req = s.milli_cpu
    if req > 0 and req > alloc.milli_cpu - used.milli_cpu:
        reasons.append(_INSUFFICIENT_CPU)
        unresolvable = unresolvable or req > alloc.milli_cpu
    req = s.memory
    if req > 0 and req > alloc.memory - used.memory:
        reasons.append(_INSUFFICIENT_MEMORY)
        unresolvable = unresolvable or req > alloc.memory
    req = s.ephemeral_storage
    if req > 0 and req > alloc.ephemeral_storage - used.ephemeral_storage:
        reasons.append(_INSUFFICIENT_EPHEMERAL_STORAGE)
        unresolvable = unresolvable or req > alloc.ephemeral_storage
    if s.scalars:
        alloc_scalars = alloc.scalar_resources
        used_scalars = used.scalar_resources
        for name, req, reason in s.scalars:
            cap = alloc_scalars.get(name, 0)
            if cap <= 0 and name in s.dra_backed:
                continue
            in_use = used_scalars.get(name, 0)
            if req > cap - in_use:
                reasons.append(reason)
                unresolvable = unresolvable or req > cap
    if not reasons:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)


def fits_request(pod_request: Resource, node_info: NodeInfo, ignored_resources: Iterable[str] = (),
                 ignored_resource_groups: Iterable[str] = (),
                 resolver: DeviceClassResolver | None = None) -> list[InsufficientResource]:
    """Every resource ``node_info`` is short of for a pod requesting ``pod_request`` (empty: it fits).

    ``resolver`` (DRAExtendedResource on): resources a DeviceClass backs are left to DRA on nodes whose
    allocatable does not list them."""
    s = _PreFilterState(pod_request, frozenset(ignored_resources), frozenset(ignored_resource_groups), resolver)
    return _insufficient_resources(s, node_info)


def fits(pod: Pod, node_info: NodeInfo, ignored_resources: Iterable[str] = (),
         ignored_resource_groups: Iterable[str] = (),
         resolver: DeviceClassResolver | None = None) -> list[InsufficientResource]:
    """Every resource ``node_info`` is short of for ``pod`` (empty: the pod fits), as the Filter sees it."""
    return fits_request(compute_pod_resource_request(pod), node_info, ignored_resources, ignored_resource_groups,
                        resolver)


def _nodes_scorer(strategy: ScoringStrategy) -> NodesScorer | None:
    if strategy.type == LEAST_ALLOCATED:
        return least_nodes_scorer(strategy.resources)
    if strategy.type == MOST_ALLOCATED:
        return most_nodes_scorer(strategy.resources)
    return None


def _strategy_scorer(strategy: ScoringStrategy) -> Scorer:
    if strategy.type == LEAST_ALLOCATED:
        return least_resource_scorer(strategy.resources)
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scorer(strategy.resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        rtcr = strategy.requested_to_capacity_ratio
        shape = () if rtcr is None else rtcr.shape
        return requested_to_capacity_ratio_scorer(strategy.resources, shape)
    raise PluginError(NAME, f"scoring strategy {strategy.type} is not supported")


class Fit:
    """The NodeResourcesFit plugin (PreFilter, Filter, PreScore, Score)."""

    name = NAME

    def __init__(self, args: NodeResourcesFitArgs | Mapping[str, Any] | None = None,
                 handle: Any = None) -> None:
        fit_args = coerce_args(NAME, args, NodeResourcesFitArgs)
        strategy = fit_args.scoring_strategy
        if strategy is None:  # rejected by validation; kept for type narrowing
            raise PluginError(NAME, "scoring strategy not specified")
        self.args = fit_args
        self.handle = handle
        self.ignored_resources = frozenset(fit_args.ignored_resources)
        self.ignored_resource_groups = frozenset(fit_args.ignored_resource_groups)
        self.scorer = ResourceAllocationScorer(strategy.type, strategy.resources, _strategy_scorer(strategy),
                                               use_requested=False, nodes_scorer=_nodes_scorer(strategy),
                                               rules=RequestRules.for_gates(features_of(handle)),
                                               # upstream's Fit never hands PodLevelResources to its scorer:
                                               # the incoming pod's score request is its containers' sum
                                               # (v1.35.4 and v1.36.2, checked against both)
                                               pod_level=False)
        self._pre_filter_states: dict[int, tuple[Pod, _PreFilterState, Any]] = {}  # by id(pod), see pre_filter
        # DRAExtendedResource: extended resources backed by a DeviceClass are DynamicResources' business on
        # nodes that do not list them in allocatable
        self.dra_extended_resource = gate_enabled(handle, "DRAExtendedResource")
        self._consumable_capacity = gate_enabled(handle, "DRAConsumableCapacity")
        self._scored_resources = tuple(r.name for r in strategy.resources)
        store = getattr(handle, "objects", None)
        self._store: ObjectStore | None = store if isinstance(store, ObjectStore) else None

    def _resolver(self) -> DeviceClassResolver | None:
        if not self.dra_extended_resource or self._store is None or not self._store.has_any(DEVICE_CLASS):
            return None
        return resolver_for(self._store)

    # PreFilter / Filter ----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        # The state depends on the pod and the plugin's arguments only, and nothing changes it once written:
        # what-if loops scheduling the same Pod objects again get the one made last time. Pinned by
        # tests/test_perf_equivalence.py::test_fit_prefilter_state_kept_per_pod_equals_a_fresh_one.
        resolver = self._resolver()
        kept = self._pre_filter_states.get(id(pod))
        if kept is not None and kept[0] is pod and kept[2] is resolver:
            state.write(PRE_FILTER_STATE_KEY, kept[1])
            return None, None
        s = _PreFilterState(compute_pod_resource_request(pod), self.ignored_resources, self.ignored_resource_groups,
                            resolver)
        if len(self._pre_filter_states) >= _KEPT_STATES:
            self._pre_filter_states.clear()
        # (the pod and the resolver are held: their ids are not reused meanwhile)
        self._pre_filter_states[id(pod)] = (pod, s, resolver)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter_signature(self, state: CycleState, pod: Pod) -> tuple[Any, ...] | None:
        """Filter reads the requests PreFilter kept (the ignored resources are the plugin's own)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return None
        return s.milli_cpu, s.memory, s.ephemeral_storage, s.scalars, s.dra_backed

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        # The common verdict first, without building the list of shortages: everything fits.
        alloc = node_info.allocatable
        used = node_info.requested
        if (not s.scalars and len(node_info.pods) < alloc.allowed_pod_number
                and (s.milli_cpu <= 0 or s.milli_cpu <= alloc.milli_cpu - used.milli_cpu)
                and (s.memory <= 0 or s.memory <= alloc.memory - used.memory)
                and (s.ephemeral_storage <= 0
                     or s.ephemeral_storage <= alloc.ephemeral_storage - used.ephemeral_storage)):
            return None
        return _shortage_status(s, node_info)

    def fits(self, pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
        """The resources ``node_info`` is short of for ``pod`` under this plugin's ignored resources."""
        return fits(pod, node_info, self.ignored_resources, self.ignored_resource_groups, self._resolver())

    # PreScore / Score ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self.scorer.pod_requests(pod), self._dra_capacity()))
        return None

    def _dra_capacity(self) -> DraCapacity | None:
        return dra_capacity_for(self.handle, self.dra_extended_resource, self._scored_resources,
                                self._consumable_capacity)

    def score_signature(self, state: CycleState, pod: Pod) -> tuple[int, ...] | None:
        """Score reads the requests PreScore kept (the scoring strategy is the plugin's own); a score that
        counts devices served through DRA also reads the cluster's claims: no signature then."""
        s = state.get(PRE_SCORE_STATE_KEY)
        return s.pod_requests if isinstance(s, _PreScoreState) and s.dra is None else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return self.scorer.score(node_info, s.pod_requests, s.dra)
        return self.scorer.score(node_info, self.scorer.pod_requests(pod), self._dra_capacity())

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState) or s.dra is not None:
            return None
        return self.scorer.score_nodes(nodes, s.pod_requests)

    def score_extensions(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"Fit(strategy={self.scorer.name})"
