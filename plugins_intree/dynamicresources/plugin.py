"""DynamicResources: a pod's ResourceClaims must be allocatable on the node (upstream
pkg/scheduler/framework/plugins/dynamicresources).

- PreEnqueue: every claim the pod references must exist (a claim from a template must have been generated
  and be owned by the pod) and not be being deleted; otherwise the pod waits with upstream's message.
- PreFilter: reads the claims; an allocated claim in use by others and not reservable makes the pod wait;
  an allocated claim restricts the nodes through its allocation's node selector; unallocated claims are
  checked for their device classes and the structured allocator is set up for the cycle (devices allocated
  to other claims are unavailable).
- Filter: allocated claims must be available on the node; unallocated claims must all be allocatable
  there ("cannot allocate all claims"). The allocation found is kept for Reserve and Score. The search
  on one node stops after ``filterTimeout`` (DRASchedulerFilterTimeout): an Error naming the node from 1.36
  on, the node UnschedulableAndUnresolvable before ("timed out trying to allocate devices").
- PostFilter: when an allocated claim was unavailable and no other pod uses it, it is deallocated so that
  the next attempt can allocate it elsewhere ("deallocation of ResourceClaim completed").
- Score: prioritized-list requests score the node by how early in ``firstAvailable`` the allocated
  subrequests are; NormalizeScore scales to [0, 100].
- Reserve writes the allocation into the in-memory ResourceClaim (so the next pod sees the devices taken),
  Unreserve puts the claim back, PreBind adds the pod to ``status.reservedFor``.
"""

from __future__ import annotations

import importlib
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from plugins_intree.dynamicresources.state import DraManager, manager_for
from plugins_intree.nodeaffinity.matching import CompiledNodeSelector
from plugins_intree.tainttoleration.plugin import default_normalize_score, default_normalize_values
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.selectors import NodeSelector
from scheduling_framework.config.args import DynamicResourcesArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.dra.claims import (
    DEVICE_CLASS,
    RESOURCE_CLAIM,
    ClaimLookupError,
    allocation_of,
    can_be_reserved,
    claim_key,
    claim_name,
    generated_claim_name,
    is_for_pod,
    is_reserved_for_pod,
    pod_resource_claims,
    reserved_for,
    with_status,
)
from scheduling_framework.dra.extended import (
    SPECIAL_CLAIM_NAME,
    find_extended_resource_claim,
    node_claim,
    pod_scalar_requests,
    requests_and_mappings,
    requests_dra_candidate,
    resolver_for,
    special_claim,
)
from scheduling_framework.errors import ConfigError, PluginError, SchedulingFrameworkError, ValidationError
from scheduling_framework.features import dra_allocator_flags, features_of
from scheduling_framework.interfaces import MAX_NODE_SCORE, NodeScore, PostFilterResult, PreFilterResult
from scheduling_framework.runtime.signatures import KeptPerPod
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code, Status
from scheduling_framework.versions import at_least, release_of

NAME: Final = "DynamicResources"
#: the pod status field PreBind writes for the claim made for the pod's extended resources
EXTENDED_STATUS_FIELD: Final = "extendedResourceClaimStatus"
STATE_KEY: Final = NAME
#: upstream resourceapi.FirstAvailableDeviceRequestMaxSize: at most 8 subrequests, scored 8 down to 1.
FIRST_AVAILABLE_MAX_SIZE: Final = 8
ERR_CANNOT_ALLOCATE: Final = "cannot allocate all claims"
ERR_NOT_AVAILABLE: Final = "resourceclaim not available on the node"
ERR_TIMED_OUT: Final = "timed out trying to allocate devices"
#: From this release a timed-out allocation is an Error naming the node (the pod is retried with backoff);
#: before it, the node alone was UnschedulableAndUnresolvable (upstream PR #137607).
TIMEOUT_IS_ERROR_SINCE: Final = "1.36"


class _ClaimInfo:
    __slots__ = ("available_on", "allocation")

    def __init__(self) -> None:
        # Node selector of an allocated claim's allocation (None: any node).
        self.available_on: CompiledNodeSelector | None = None
        # Set by Reserve: the allocation the plugin made for the claim (a manifest mapping).
        self.allocation: Mapping[str, Any] | None = None


class _StateData:
    """The cycle's claims and allocations; shared by every copy of the CycleState (as upstream's pointer)."""

    __slots__ = ("claims", "infos", "to_allocate", "typed_to_allocate", "prioritized", "allocator", "unavailable",
                 "node_allocations", "lock", "ext_index", "ext_requests", "node_ext", "ext_variants")

    def __init__(self) -> None:
        self.claims: list[KubeObject] = []
        self.infos: list[_ClaimInfo] = []
        # indices of the claims the scheduler must allocate (unallocated ones), in claim order
        self.to_allocate: list[int] = []
        # the typed ResourceClaims of to_allocate, parsed once for every node's Filter
        self.typed_to_allocate: list[Any] = []
        # whether a claim to allocate has a firstAvailable request (else every node scores 0)
        self.prioritized = True
        self.allocator: Any = None
        self.unavailable: set[int] = set()
        # node name -> one allocation (manifest mapping) per claim to allocate
        self.node_allocations: dict[str, list[Mapping[str, Any]]] = {}
        self.lock = threading.Lock()
        # DRAExtendedResource: the index in ``claims`` of the claim for the pod's extended resources (it comes
        # last; -1: none), the pod's requests of DRA-capable resources, per node the claim variant the node
        # needs (None: its device plugins serve everything) with the container mappings, and the variants
        # built so far by their requests (typed claim, claim object, mappings)
        self.ext_index = -1
        self.ext_requests: dict[str, int] = {}
        self.node_ext: dict[str, tuple[KubeObject, list[dict[str, str]]] | None] = {}
        self.ext_variants: dict[tuple[tuple[str, int], ...], tuple[Any, KubeObject, list[dict[str, str]]]] = {}

    def clone(self) -> _StateData:
        return self


#: the state of every cycle whose pod has no claim and requests no resource a DeviceClass could back (read-only)
_NO_CLAIMS: Final = _StateData()
_KEPT_PODS: Final = 4096  # pods whose DRA candidacy is kept (see DynamicResources._dra_candidate)


def _read(state: CycleState) -> _StateData | Status:
    try:
        s = state.read(STATE_KEY)
    except KeyError:
        return Status(Code.ERROR, "not found")
    if not isinstance(s, _StateData):
        return Status(Code.ERROR, "unable to convert state into stateData")
    return s


def _args(args: Any) -> DynamicResourcesArgs:
    if args is None:
        return DynamicResourcesArgs()
    if isinstance(args, DynamicResourcesArgs):
        return args
    if isinstance(args, Mapping):
        try:
            return DynamicResourcesArgs.from_dict(args)
        except ConfigError as e:
            raise PluginError(NAME, str(e)) from e
    raise PluginError(NAME, f"got args of type {type(args).__name__}, want *DynamicResourcesArgs")


def _unresolvable(msg: str) -> Status:
    # upstream's statusUnschedulable: the pod cannot be helped by another node in this cycle
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def allocation_to_dict(a: Any) -> dict[str, Any]:
    """An AllocationResult of the allocator as the manifest mapping stored in ``status.allocation``."""
    if isinstance(a, Mapping):
        return dict(a)
    to_dict = getattr(a, "to_dict", None)
    if callable(to_dict):
        out = to_dict()
        if isinstance(out, Mapping):
            return dict(out)
    raise TypeError(f"allocation result of type {type(a).__name__} has no to_dict()")


def _gate_overrides(handle: Any) -> Mapping[str, bool]:
    """Gates given to the handle as a plain mapping (tests, embedding applications); a FeatureGates object
    (``--feature-gates`` / release) is read through :func:`features_of` instead."""
    gates = getattr(handle, "feature_gates", None)
    return {str(k): bool(v) for k, v in gates.items()} if isinstance(gates, Mapping) else {}


class DynamicResources:
    """PreEnqueue, PreFilter, Filter, PostFilter, Score, Reserve/Unreserve and PreBind for DRA."""

    name = NAME
    #: the fast paths (AllocationMemo reusing per-node outcomes across cycles, Score's shortcut); False runs the
    #: plain search on every node and the plain Score (the reference tests/test_perf_equivalence.py compares
    #: against)
    fast_paths: bool = True
    #: the clock filterTimeout is measured on: wall time, as upstream (computation time, not the scheduler's
    #: simulated time); tests set a virtual one
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.args = _args(args)
        gates = features_of(handle)
        overrides = _gate_overrides(handle)

        def on(name: str) -> bool:
            return overrides[name] if name in overrides else gates.enabled(name)

        # DynamicResourceAllocation off: the plugin does nothing, as upstream's.
        self.enabled = on("DynamicResourceAllocation")
        self._features: dict[str, bool] = dict(dra_allocator_flags(gates))
        for gate, field in (("DRAAdminAccess", "admin_access"), ("DRAPrioritizedList", "prioritized_list"),
                            ("DRAPartitionableDevices", "partitionable_devices"),
                            ("DRADeviceTaints", "device_taints"), ("DRAConsumableCapacity", "consumable_capacity"),
                            ("DRAFractionalCapacityRange", "fractional_capacity_range")):
            if gate in overrides:
                self._features[field] = overrides[gate]
        if "DRADeviceBindingConditions" in overrides or "DRAResourceClaimDeviceStatus" in overrides:
            self._features["device_binding_and_status"] = (on("DRADeviceBindingConditions")
                                                           and on("DRAResourceClaimDeviceStatus"))
        self.prioritized_list = self._features["prioritized_list"]
        self.extended_resource = on("DRAExtendedResource")
        # DeviceTaintRules taint the devices they select: DRADeviceTaintRules from 1.35; in 1.34 (no such gate)
        # they came with DRADeviceTaints
        self.taint_rules = (on("DRADeviceTaintRules") if "DRADeviceTaintRules" in overrides
                            or "DRADeviceTaintRules" in gates.known() else on("DRADeviceTaints"))
        # a rule's deviceClassName and CEL selectors left the API in 1.35 (the 1.34 tracker evaluates them)
        self.taint_rule_cel_selectors = not at_least(gates.release, "1.35")
        # filterTimeout bounds each node's search while DRASchedulerFilterTimeout is on; 0 turns it off
        ft = self.args.filter_timeout
        self.filter_timeout: float | None = ft if on("DRASchedulerFilterTimeout") and ft else None
        self.timeout_is_error = at_least(release_of(handle), TIMEOUT_IS_ERROR_SINCE)
        store = getattr(handle, "objects", None)
        self._store: ObjectStore = store if isinstance(store, ObjectStore) else ObjectStore()
        self.manager: DraManager = manager_for(self._store)
        # AllocationResult (by identity, held) -> its manifest mapping: a memoized outcome is converted once
        self._manifests: dict[int, tuple[Any, Mapping[str, Any]]] = {}
        # pod uid -> (the Pod object, whether it requests a resource a DeviceClass could back)
        self._candidates: KeptPerPod[bool] = KeptPerPod(_KEPT_PODS)

    # events ----------------------------------------------------------------------------------------
    def events_to_register(self) -> list[tuple[str, str]]:
        """Upstream's EventsToRegister: nodes (add, label, taint, allocatable), claims, pods getting their
        generated claim, device classes, resource slices."""
        return [("Node", "Add|UpdateNodeLabel|UpdateNodeTaint|UpdateNodeAllocatable"),
                ("ResourceClaim", "Add|Update"), ("Pod", "UpdatePodGeneratedResourceClaim"),
                ("DeviceClass", "Add|Update"), ("ResourceSlice", "Add|Update")]

    # claims of a pod ---------------------------------------------------------------------------------
    def _pod_claims(self, pod: Pod) -> list[KubeObject]:
        """Upstream foreachPodResourceClaim: every claim of the pod, or ClaimLookupError with the reason
        the pod cannot be scheduled now."""
        out: list[KubeObject] = []
        for entry in pod_resource_claims(pod):
            name, must_check_owner = claim_name(pod, entry)
            if name is None:
                continue  # no claim was needed for this entry
            claim = self.manager.claim(pod.namespace, name)
            if claim is None:
                raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim.metadata.deletion_timestamp is not None:
                raise ClaimLookupError(f'resourceclaim "{claim.name}" is being deleted')
            if must_check_owner:
                err = is_for_pod(pod, claim)
                if err is not None:
                    raise ClaimLookupError(err)
            out.append(claim)
        return out

    # PreEnqueue --------------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled or not pod.spec.resource_claims:
            return None
        try:
            self._pod_claims(pod)
        except ClaimLookupError as e:
            return _unresolvable(str(e))
        return None

    def _dra_candidate(self, pod: Pod) -> bool:
        """``requests_dra_candidate(pod)``, kept per Pod object while ``fast_paths`` is on (pods are immutable)."""
        if not self.fast_paths:
            return requests_dra_candidate(pod)
        return self._candidates.get(pod, requests_dra_candidate)

    # PreFilter ---------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.SKIP)
        maybe_extended = self.extended_resource and self._dra_candidate(pod)
        if not pod.spec.resource_claims and not maybe_extended:
            # Nothing reads more than "no claims" from this state, and nothing changes it (every point returns
            # on an empty ``claims``): one shared state serves every such cycle. Pinned by
            # tests/test_perf_equivalence.py::test_dra_shared_no_claims_state_equals_plain.
            state.write(STATE_KEY, _NO_CLAIMS if self.fast_paths else _StateData())
            return None, Status(Code.SKIP)
        s = _StateData()
        state.write(STATE_KEY, s)
        try:
            claims = self._pod_claims(pod)
        except ClaimLookupError as e:
            return None, _unresolvable(str(e))
        ext = self._pre_filter_extended(pod, s) if maybe_extended else None
        if ext is not None:
            s.ext_index = len(claims)
            claims.append(ext)
        if not claims:
            return None, Status(Code.SKIP)
        infos = [_ClaimInfo() for _ in claims]
        to_allocate: list[int] = []
        mgr = self.manager
        for i, claim in enumerate(claims):
            alloc = allocation_of(claim)
            if alloc is not None and not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                return None, _unresolvable("resourceclaim in use")
            if alloc is not None:
                sel = alloc.get("nodeSelector")
                if sel is not None:
                    try:
                        compiled = CompiledNodeSelector(NodeSelector.from_dict(sel, "nodeSelector"), "nodeSelector")
                    except ValidationError as e:
                        return None, Status(Code.ERROR, f"ResourceClaim {claim.namespace}/{claim.name}: "
                                                        f"status.allocation.{e}")
                    errs = compiled.errors()
                    if errs:
                        return None, Status(Code.ERROR, "; ".join(errs))
                    infos[i].available_on = compiled
                continue
            to_allocate.append(i)
            if mgr.has_pending_allocation(claim):
                return None, _unresolvable(f"resource claim {claim.namespace}/{claim.name} "
                                           "is in the process of being allocated")
            if i == s.ext_index:
                continue  # its requests depend on the node (Filter)
            st = self._check_requests(claim)
            if st is not None:
                return None, st
        if to_allocate:
            try:
                s.typed_to_allocate = [mgr.typed(claims[i]) for i in to_allocate]
                s.prioritized = any(req.exactly is None for c in s.typed_to_allocate
                                    for req in c.spec.devices.requests)
                s.allocator = self._new_allocator()
            except SchedulingFrameworkError as e:
                return None, Status(Code.ERROR, str(e))
        s.claims = claims
        s.infos = infos
        s.to_allocate = to_allocate
        return None, None

    def _pre_filter_extended(self, pod: Pod, s: _StateData) -> KubeObject | None:
        """The claim for the pod's extended resources a DeviceClass backs: the one created in an earlier attempt,
        or a new one in memory (no requests yet). None when no requested resource is backed by a class."""
        if not self._store.has_any(DEVICE_CLASS):
            return None
        resolver = resolver_for(self._store)
        requests = pod_scalar_requests(pod)
        if not any(resolver.get(name) is not None for name in requests):
            return None
        s.ext_requests = requests
        found = find_extended_resource_claim(pod, self._store.list(RESOURCE_CLAIM, pod.namespace))
        return found if found is not None else special_claim(pod)

    def _filter_extended(self, s: _StateData, pod: Pod, node_info: NodeInfo
                         ) -> tuple[Status | None, tuple[Any, KubeObject, list[dict[str, str]]] | None]:
        """Upstream filterExtendedResources: the variant of the pod's extended-resource claim this node needs
        (None: nothing to allocate through DRA here), or the node's rejection."""
        claim = s.claims[s.ext_index]
        if _map(_map(claim.raw.get("spec")).get("devices")).get("requests"):
            # created in an earlier attempt: PostFilter deletes it, the next attempt starts anew
            return _unresolvable("cannot schedule extended resource claim"), None
        resolver = resolver_for(self._store)
        allocatable = node_info.allocatable.scalar_resources
        needed: list[tuple[str, int]] = []
        for name, quantity in s.ext_requests.items():
            have = allocatable.get(name)
            if (have is None or have == 0) and resolver.get(name) is not None:
                needed.append((name, quantity))
            elif have is None:
                return _unresolvable("cannot fit resource"), None
        if not needed or allocation_of(claim) is not None:
            return None, None
        key = tuple(sorted(needed))
        variant = s.ext_variants.get(key)
        if variant is None:
            requests, mappings = requests_and_mappings(pod, (n for n, _ in key), resolver)
            obj = node_claim(claim, requests)
            try:
                typed = self.manager.typed(obj)
            except ValidationError as e:
                return Status(Code.ERROR, str(e)), None
            variant = (typed, obj, mappings)
            with s.lock:
                s.ext_variants[key] = variant
        return None, variant

    def _check_requests(self, claim: KubeObject) -> Status | None:
        """Every request names an existing device class (each subrequest of firstAvailable too)."""
        try:
            typed = self.manager.typed(claim)
        except ValidationError as e:
            return Status(Code.ERROR, str(e))
        for req in typed.spec.devices.requests:
            if req.exactly is not None:
                st = self._validate_device_class(req.exactly.device_class_name, req.name)
                if st is not None:
                    return st
            elif req.first_available:
                if not self.prioritized_list:
                    return _unresolvable(f"resource claim {claim.namespace}/{claim.name}, request {req.name}: has "
                                         "subrequests, but the DRAPrioritizedList feature is disabled")
                for sub in req.first_available:
                    st = self._validate_device_class(sub.request.device_class_name, f"{req.name}/{sub.name}")
                    if st is not None:
                        return st
            else:
                return _unresolvable(f"resource claim {claim.namespace}/{claim.name}, request {req.name}: "
                                     "unknown request type")
        return None

    def _validate_device_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status(Code.ERROR, f"request {request_name}: unsupported request type")
        if self.manager.device_class(class_name) is None:
            return _unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    def _new_allocator(self) -> Any:
        """The structured allocator for this cycle: devices allocated to any claim are taken."""
        # Imported by name: the allocator module is optional at type-checking time (it ships separately).
        alloc_mod: Any = importlib.import_module("scheduling_framework.dra.allocator")
        mgr = self.manager
        classes = {c.name: mgr.typed(c) for c in mgr.device_classes()}
        slices = mgr.typed_slices(self.taint_rules, self.taint_rule_cel_selectors)
        # the allocator's features follow the DRA gates of the release the profile follows
        # The memo reuses a node's outcome while its inputs are unchanged; see AllocationMemo.
        return alloc_mod.Allocator(alloc_mod.Features(**self._features), mgr.allocated_state(), classes, slices,
                                   mgr.cel_cache(), mgr.allocation_memo() if self.fast_paths else None)

    def pre_filter_extensions(self) -> None:
        return None

    # Filter ----------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s = _read(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        variant: tuple[Any, KubeObject, list[dict[str, str]]] | None = None
        if s.ext_index >= 0:
            st, variant = self._filter_extended(s, pod, node_info)
            if st is not None:
                return st
            if variant is None and s.ext_index == 0:
                return None  # no claim of its own, and the node's device plugins serve every extended resource
        unavailable: list[int] = []
        for i, info in enumerate(s.infos):
            sel = info.available_on
            if sel is not None and not sel.matches(node):
                unavailable.append(i)
        allocations: list[Mapping[str, Any]] | None = None
        if s.allocator is not None:
            to_allocate = s.typed_to_allocate
            if variant is not None:
                # the extended-resource claim (last to allocate) with the requests this node needs
                to_allocate = [*to_allocate[:-1], variant[0]]
            try:
                result = s.allocator.allocate(node, to_allocate, self.filter_timeout, clock=self.clock)
            except SchedulingFrameworkError as e:
                if getattr(e, "timed_out", False):
                    if self.timeout_is_error:
                        return Status(Code.ERROR, f"node {node.name}: {ERR_TIMED_OUT}")
                    return _unresolvable(ERR_TIMED_OUT)
                # something is wrong with a claim, class or pool (a CEL error, ...): abort the pod's cycle
                return Status(Code.ERROR, str(e))
            if result is None or len(result) != len(s.to_allocate):
                return _unresolvable(ERR_CANNOT_ALLOCATE)
            allocations = [self._manifest(a) for a in result]
        if unavailable:
            with s.lock:
                s.unavailable.update(unavailable)
            return _unresolvable(ERR_NOT_AVAILABLE)
        if allocations is not None:
            with s.lock:
                s.node_allocations[node.name] = allocations
                if s.ext_index >= 0:
                    s.node_ext[node.name] = None if variant is None else (variant[1], variant[2])
        return None

    def _manifest(self, a: Any) -> Mapping[str, Any]:
        """``allocation_to_dict(a)``, converted once per result object (the memo hands the same object to
        many nodes and cycles); Reserve copies it before it goes into a claim."""
        hit = self._manifests.get(id(a))
        if hit is not None and hit[0] is a:
            return hit[1]
        out = allocation_to_dict(a)
        if len(self._manifests) >= 4096:
            self._manifests.clear()
        self._manifests[id(a)] = (a, out)
        return out

    # PostFilter ------------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: Mapping[str, Status]
                    ) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, "plugin disabled")
        s = _read(state)
        if isinstance(s, Status):
            return None, s
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, "no new claims to deallocate")
        # Upstream picks one of the unavailable claims at random; the lowest index keeps runs reproducible.
        ext = s.claims[s.ext_index] if s.ext_index >= 0 else None
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            if i == s.ext_index:
                if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
                    break  # deleted below
                continue
            res = reserved_for(claim)
            if not res or (len(res) == 1 and res[0].get("uid") == pod.uid):
                status = dict(claim.status)
                for k in ("reservedFor", "allocation", "devices"):
                    status.pop(k, None)
                self._store.add(with_status(claim, status))
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
            # the claim made for the pod's extended resources in an earlier attempt is stale: it goes
            self._store.remove(RESOURCE_CLAIM, ext.namespace, ext.name)
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")

    # Score (upstream's plugin has no PreScore, so Score runs for every pod; from 1.35 on) ---------------
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if not self.enabled:
            return 0, None
        s = _read(state)
        if isinstance(s, Status):
            return 0, s
        if not s.claims:
            return 0, None
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0, None
        if not s.prioritized and self.fast_paths:
            # compute_score counts firstAvailable requests only: none, so 0 without reading the allocations
            # (pinned by test_dra_plugin_memo_matches_plain_plugin)
            return 0, None
        return compute_score(s.typed_to_allocate, allocations), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score's zeros for a pod with no claims (most pods) or none with firstAvailable requests, in one go;
        None (node by node) otherwise."""
        if self.enabled:
            s = _read(state)
            if isinstance(s, Status) or (s.claims and (s.prioritized or not self.fast_paths)):
                return None
        return [0] * len(nodes)

    def score_constant(self, state: CycleState, pod: Pod) -> int | None:
        """0 when Score gives 0 on every node for this pod (no claims, or none with firstAvailable requests):
        the framework then fills the column without calling Score per node (DefaultNormalizeScore leaves
        zeros as they are). None otherwise, and for a missing state (Score reports it)."""
        if not self.enabled:
            return 0
        s = _read(state)
        if isinstance(s, Status):
            return None
        if not s.claims or (not s.prioritized and self.fast_paths):
            return 0
        return None

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_values(self, state: CycleState, pod: Pod, node_names: list[str], scores: list[int]) -> list[int]:
        """``normalize_score`` on plain scores, for the framework."""
        return default_normalize_values(MAX_NODE_SCORE, False, scores)

    # Reserve / Unreserve ---------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = _read(state)
        if isinstance(s, Status):
            return s
        if not s.claims or not s.to_allocate:
            return None
        if s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if s.ext_index == 0:
                return None  # only the extended-resource claim, served by the node's device plugins
            return Status(Code.ERROR, "claim allocation not found for node")
        if len(allocations) != len(s.to_allocate):
            return Status(Code.ERROR, f"internal error, have {len(allocations)} allocations, "
                                      f"{len(s.to_allocate)} claims to allocate, want {len(s.to_allocate)} claims")
        mgr = self.manager
        with mgr.lock:
            for alloc, i in zip(allocations, s.to_allocate, strict=True):
                claim = s.claims[i]
                if i == s.ext_index:
                    ext = s.node_ext.get(node_name)
                    if ext is None:
                        continue  # nothing for DRA on this node
                    claim = self._create_extended_claim(pod, ext[0], node_name)
                    s.claims[i] = claim
                    mgr.created.add(claim_key(claim))
                s.infos[i].allocation = alloc
                key = claim_key(claim)
                mgr.in_flight[key] = claim
                self._store.add(with_status(claim, {**claim.status, "allocation": _copy_manifest(alloc)},
                                            finalizer=True))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if not self.enabled:
            return
        s = _read(state)
        if isinstance(s, Status) or not s.claims:
            return
        mgr = self.manager
        with mgr.lock:
            for i, claim in enumerate(s.claims):
                key = claim_key(claim)
                if i == s.ext_index and claim.name != SPECIAL_CLAIM_NAME:
                    # the claim created for the pod's extended resources goes again (upstream deletes it)
                    mgr.created.discard(key)
                    mgr.in_flight.pop(key, None)
                    self._store.remove(RESOURCE_CLAIM, claim.namespace, claim.name)
                    self._store.set_pod_status(pod.uid, EXTENDED_STATUS_FIELD, None)
                    s.claims[i] = special_claim(pod)
                    s.infos[i].allocation = None
                    continue
                original = mgr.in_flight.pop(key, None)
                if original is not None:
                    # the claim goes back to what it was before Reserve
                    self._store.add(original)
                    s.infos[i].allocation = None
                    continue
                cur = self.manager.claim(claim.namespace, claim.name)
                if cur is not None and allocation_of(cur) is not None and is_reserved_for_pod(pod, cur):
                    rest = [dict(r) for r in reserved_for(cur) if r.get("uid") != pod.uid]
                    status = dict(cur.status)
                    if rest:
                        status["reservedFor"] = rest
                    else:
                        status.pop("reservedFor", None)
                    self._store.add(with_status(cur, status))
                    s.claims[i] = self._store.get(cur.kind, cur.namespace, cur.name) or cur

    # PreBind ---------------------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = _read(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        mgr = self.manager
        with mgr.lock:
            for i, claim in enumerate(s.claims):
                if is_reserved_for_pod(pod, claim):
                    continue
                if i == s.ext_index and s.infos[i].allocation is None and claim.name == SPECIAL_CLAIM_NAME:
                    continue  # the node's device plugins serve the extended resources
                cur = self._store.get(claim.kind, claim.namespace, claim.name)
                if cur is None:
                    return Status(Code.ERROR, f"claim {claim.namespace}/{claim.name} got deleted in the meantime")
                if cur.metadata.deletion_timestamp is not None:
                    return Status(Code.ERROR, f"claim {claim.namespace}/{claim.name} got deleted in the meantime")
                allocation = s.infos[i].allocation
                status = dict(cur.status)
                if allocation is not None:
                    # written by Reserve; anything else means another pod allocated it in between
                    if allocation_of(cur) is not None and mgr.in_flight.get(claim_key(claim)) is None:
                        return Status(Code.ERROR, f"claim {claim.namespace}/{claim.name} got allocated "
                                                  "elsewhere in the meantime")
                    status["allocation"] = dict(allocation)
                elif allocation_of(cur) is None:
                    return Status(Code.ERROR, f"add reservation to claim {claim.namespace}/{claim.name}: "
                                              "claim is not allocated")
                status["reservedFor"] = [*(dict(r) for r in reserved_for(cur)),
                                         {"resource": "pods", "name": pod.name, "uid": pod.uid}]
                updated = with_status(cur, status, finalizer=allocation is not None)
                self._store.add(updated)
                mgr.in_flight.pop(claim_key(claim), None)
                s.claims[i] = updated
                if i == s.ext_index:
                    mgr.created.discard(claim_key(claim))
                    ext = s.node_ext.get(node_name)
                    self._store.set_pod_status(pod.uid, EXTENDED_STATUS_FIELD, {
                        "requestMappings": [dict(m) for m in (ext[1] if ext is not None else [])],
                        "resourceClaimName": updated.name})
        return None

    def _create_extended_claim(self, pod: Pod, variant: KubeObject, node_name: str) -> KubeObject:
        """The pod's extended-resource claim as the API server creates it: a generated name, a uid."""
        rng = random.Random(f"{pod.uid}/{node_name}")
        name = generated_claim_name(pod.name, "extended-resources", rng)
        raw = dict(variant.raw)
        meta = dict(_map(raw.get("metadata")))
        meta["name"] = name
        meta["uid"] = f"{pod.namespace}/{name}"
        raw["metadata"] = meta
        raw.pop("status", None)
        return KubeObject.from_dict(raw)


def _copy_manifest(v: Any) -> Any:
    """A copy of a manifest's mappings and lists (the converted allocations are shared between nodes)."""
    if isinstance(v, Mapping):
        return {k: _copy_manifest(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy_manifest(x) for x in v]
    return v


def compute_score(claims: Sequence[Any], allocations: Sequence[Mapping[str, Any]]) -> int:
    """Sum over prioritized-list requests of (8 - index of the subrequest that was allocated); ``claims`` are
    typed ResourceClaims, ``allocations`` their allocation manifests."""
    score = 0
    for claim, allocation in zip(claims, allocations, strict=False):
        allocated_sub: set[str] = set()
        for res in _list(_map(allocation.get("devices")).get("results")):
            req = str(_map(res).get("request", ""))
            if "/" in req:
                allocated_sub.add(req)
        for req in claim.spec.devices.requests:
            if req.exactly is not None:
                continue
            for idx, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in allocated_sub:
                    score += FIRST_AVAILABLE_MAX_SIZE - idx
    return score
