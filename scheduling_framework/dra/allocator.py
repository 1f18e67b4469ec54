"""The structured-parameters allocator: which devices a node's ResourceClaims get.

A reimplementation of upstream's ``k8s.io/dynamic-resource-allocation/structured`` allocator (the
"incubating" variant, which serves every feature that is GA or beta in the newest release). Given the
DeviceClasses, all ResourceSlices and the devices already allocated to other claims, ``Allocator.allocate``
searches, for one node, a set of devices satisfying every request of every claim:

* requests ``exactly`` (ExactCount with ``count``, or All) and ``firstAvailable`` (the first subrequest that
  can be satisfied wins);
* class and request CEL selectors; claim constraints ``matchAttribute`` / ``distinctAttribute``;
* ``adminAccess`` (may use devices in use by other claims); device taints and request tolerations;
* partitionable devices (``sharedCounters`` / ``consumesCounters``, including counters consumed by
  allocated devices on other nodes); slices selected by ``nodeName`` / ``nodeSelector`` / ``allNodes`` /
  ``perDeviceNodeSelection``; pool generations, incomplete and invalid pools;
* consumable capacity (``allowMultipleAllocations`` devices shared between claims, capacity requests and
  request policies) and binding conditions.

The search is upstream's: claims in order, requests in order, devices in pool/slice/device order, the first
complete solution wins, with backtracking; within one request only combinations (not permutations) are tried.
Pools are visited in the order their first slice appears in ``slices`` (upstream iterates a Go map, whose
order is unspecified) up to 1.35; from 1.36 (``Features.sorted_pools``) pools are visited by driver, then pool
name, and the slices of a pool by name, as upstream sorts them (PR #136641).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resource import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceSlice,
)
from scheduling_framework.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from scheduling_framework.dra.cel import CELCache, CELCompileError, CELRuntimeError
from scheduling_framework.errors import SchedulingFrameworkError


@attrs.frozen(slots=True, cache_hash=True)
class DeviceID:
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@attrs.frozen(slots=True)
class SharedDeviceID:
    """One share of a device that allows multiple allocations (consumable capacity)."""

    device: DeviceID
    share_id: str


@attrs.define
class AllocatedState:
    """What other claims already hold: whole devices, shares of shareable devices, and the capacity those
    shares consume (per device, capacity name qualified with the driver's domain)."""

    allocated_devices: set[DeviceID] = attrs.field(factory=set)
    allocated_shared_device_ids: set[SharedDeviceID] = attrs.field(factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Quantity]] = attrs.field(factory=dict)
    #: optional: the names in ``allocated_devices`` per (driver, pool), when the caller keeps them already
    #: (AllocationMemo's fingerprint; built from ``allocated_devices`` when None)
    allocated_by_pool: dict[tuple[str, str], frozenset[str]] | None = attrs.field(default=None, eq=False)

    def is_allocated(self, device: DeviceID) -> bool:
        if device in self.allocated_devices or device in self.aggregated_capacity:
            return True
        return any(s.device == device for s in self.allocated_shared_device_ids)

    @classmethod
    def from_claims(cls, claims: Sequence[ResourceClaim]) -> AllocatedState:
        """The state implied by the allocations recorded in ``claims`` (admin-access results do not block)."""
        state = cls()
        for claim in claims:
            alloc = claim.status.allocation
            if alloc is None:
                continue
            for r in alloc.results:
                if r.admin_access:
                    continue
                did = DeviceID(r.driver, r.pool, r.device)
                if r.share_id is not None:
                    state.allocated_shared_device_ids.add(SharedDeviceID(did, r.share_id))
                    agg = state.aggregated_capacity.setdefault(did, {})
                    for name, q in r.consumed_capacity.items():
                        key = name if "/" in name else f"{r.driver}/{name}"
                        agg[key] = agg[key] + q if key in agg else q
                else:
                    state.allocated_devices.add(did)
        return state


@attrs.frozen(slots=True)
class Features:
    """The feature gates the allocator honours; defaults are the newest release's defaults."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    #: DRAFractionalCapacityRange: request-policy ranges computed in milli units (fractional steps)
    fractional_capacity_range: bool = True
    #: the 1.34/1.35 allocator's slip (fixed in 1.36, upstream PR #137347): after the first device of an
    #: ``All`` subrequest, the search goes on with the first subrequest of the ``firstAvailable`` list instead
    #: of that one; for an ``All`` subrequest at position >= 1 it fails, or allocates too few devices, where
    #: the API says it succeeds. Not a gate: the release decides (``dra_allocator_flags``).
    all_subrequest_index_reset: bool = False
    #: 1.36+: pools searched by (driver, pool name) and each pool's slices by name (upstream PR #136641);
    #: before, in the order they are listed. Not a gate: the release decides (``dra_allocator_flags``).
    sorted_pools: bool = True
    # Kubernetes 1.37+ wording of CEL runtime errors: the device is named and a "no such key" error carries a
    # hint (k8s.io/dynamic-resource-allocation/cel.EnhanceRuntimeError); earlier releases print neither.
    cel_error_hints: bool = True


#: How often a search bounded by ``allocate(timeout=...)`` reads its clock: at its first step and every this
#: many steps after (calls of the recursive search, each trying one device for one request), a power of two.
DEADLINE_CHECK_STEPS = 256
_DEADLINE_MASK = DEADLINE_CHECK_STEPS - 1


class AllocatorError(SchedulingFrameworkError):
    """Allocation cannot proceed: invalid input (unknown class, CEL error, bad counters...).

    ``failed_on_node`` marks errors that concern only the node being tried (upstream's
    ErrFailedAllocationOnNode): the scheduler reports them as that node's failure, not as an error.
    """

    def __init__(self, message: str, failed_on_node: bool = False, timed_out: bool = False) -> None:
        self.failed_on_node = failed_on_node
        # The search hit ``allocate(timeout=...)`` (upstream's DRASchedulerFilterTimeout): the scheduler
        # reports "timed out trying to allocate devices" for the node.
        self.timed_out = timed_out
        super().__init__(message)


# --- pools ---------------------------------------------------------------------------------------


class _Pool:
    __slots__ = ("driver", "name", "incomplete", "invalid", "invalid_reason", "slices", "slices_elsewhere",
                 "counter_sets", "index")

    def __init__(self, driver: str, name: str) -> None:
        self.driver = driver
        self.name = name
        self.incomplete = False
        self.invalid = False
        self.invalid_reason = ""
        self.slices: list[ResourceSlice] = []  # device slices relevant for the node
        self.slices_elsewhere: list[ResourceSlice] = []  # device slices of the pool not targeting the node
        self.counter_sets: dict[str, CounterSet] = {}
        self.index = 0

    def __str__(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node: Node | None, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """Whether a slice (or, with per-device node selection, a device) is reachable from ``node``."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node is not None and selector.matches(node.name, node.labels)
    return False


def gather_pools(slices_for_node: Sequence[ResourceSlice], node: Node, features: Features,
                 all_slices: Sequence[ResourceSlice]) -> list[_Pool]:
    """The pools with devices reachable from ``node``, each marked incomplete or invalid as upstream does."""
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices_for_node:
        spec = s.spec
        if not features.partitionable_devices and (spec.per_device_node_selection is not None
                                                   or spec.shared_counters):
            continue
        if spec.shared_counters:
            _add_slice(by_pool, s)
        elif spec.node_name or spec.all_nodes or spec.node_selector is not None:
            if node_matches(node, spec.node_name or "", bool(spec.all_nodes), spec.node_selector):
                _add_slice(by_pool, s)
        elif spec.per_device_node_selection:
            for d in spec.devices:
                if node_matches(node, d.node_name or "", bool(d.all_nodes), d.node_selector):
                    _add_slice(by_pool, s)
                    break
        # Anything else is an unknown future form of node selection: skipped.

    pools: list[_Pool] = []
    entries = sorted(by_pool.items()) if features.sorted_pools else by_pool.items()
    for (driver, name), pool_slices in entries:
        if features.sorted_pools:
            pool_slices.sort(key=_slice_name)
        generation = pool_slices[0].spec.pool.generation
        count = pool_slices[0].spec.pool.resource_slice_count
        if len(pool_slices) == count:
            pools.append(_build_pool(driver, name, pool_slices, features, None))
            continue
        obsolete, all_for_pool = _slices_in_pool(all_slices, driver, name, generation)
        if obsolete:
            continue
        if len(all_for_pool) != count:
            p = _Pool(driver, name)
            p.incomplete = True
            pools.append(p)
            continue
        pools.append(_build_pool(driver, name, pool_slices, features, all_for_pool))
    for i, p in enumerate(pools):
        p.index = i
    return pools


def _slice_name(s: ResourceSlice) -> str:
    return s.metadata.name


def _add_slice(by_pool: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    key = (s.spec.driver, s.spec.pool.name)
    existing = by_pool.get(key)
    if existing is None:
        by_pool[key] = [s]
        return
    gen, have = s.spec.pool.generation, existing[0].spec.pool.generation
    if gen < have:
        return
    if gen > have:
        by_pool[key] = [s]
        return
    existing.append(s)


def _slices_in_pool(all_slices: Sequence[ResourceSlice], driver: str, name: str,
                    generation: int) -> tuple[bool, list[ResourceSlice]]:
    found: list[ResourceSlice] = []
    for s in all_slices:
        if s.spec.driver != driver or s.spec.pool.name != name:
            continue
        g = s.spec.pool.generation
        if g == generation:
            found.append(s)
        elif g > generation:
            return True, []
    return False, found


def _build_pool(driver: str, name: str, slices: list[ResourceSlice], features: Features,
                all_for_pool: list[ResourceSlice] | None) -> _Pool:
    pool = _Pool(driver, name)
    if features.partitionable_devices:
        device_slices = [s for s in slices if not s.spec.shared_counters]
        counter_slices = [s for s in slices if s.spec.shared_counters]
    else:
        device_slices, counter_slices = slices, []
    seen: set[str] = set()
    for s in device_slices:
        for d in s.spec.devices:
            if d.name in seen:
                pool.invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
                return pool
            seen.add(d.name)
    if not features.partitionable_devices:
        pool.slices = device_slices
        return pool
    for s in counter_slices:
        for cs in s.spec.shared_counters:
            if cs.name in pool.counter_sets:
                pool.invalid, pool.invalid_reason = True, f"duplicate counter set name {cs.name}"
                return pool
            pool.counter_sets[cs.name] = cs
    reason = _check_counter_consumption(pool.counter_sets, slices)
    if reason:
        pool.invalid, pool.invalid_reason = True, reason
        return pool
    pool.slices = device_slices
    if all_for_pool is None or len(slices) == len(all_for_pool):
        return pool
    names = {s.name for s in slices}
    elsewhere = [s for s in all_for_pool if s.name not in names]
    reason = _check_counter_consumption(pool.counter_sets, elsewhere)
    if reason:
        p = _Pool(driver, name)
        p.invalid, p.invalid_reason = True, reason
        return p
    pool.slices_elsewhere = elsewhere
    return pool


def _check_counter_consumption(counter_sets: Mapping[str, CounterSet], slices: Sequence[ResourceSlice]) -> str:
    for s in slices:
        for d in s.spec.devices:
            for cc in d.consumes_counters:
                cs = counter_sets.get(cc.counter_set)
                if cs is None:
                    return f"counter set {cc.counter_set} not found"
                for counter in cc.counters:
                    if counter not in cs.counters:
                        return f"counter {counter} not found in counter set {cs.name}"
    return ""


# --- requests ------------------------------------------------------------------------------------


class _Request:
    """One request without subrequests, or one subrequest (``parent`` set) of a claim."""

    __slots__ = ("name", "parent", "exact", "cls", "num_devices", "all_devices", "admin_access", "key")

    def __init__(self, name: str, parent: str, exact: ExactDeviceRequest, cls: DeviceClass | None,
                 key: tuple[int, int, int]) -> None:
        self.name = name
        self.parent = parent
        self.exact = exact
        self.cls = cls
        self.num_devices = 0
        self.all_devices: list[_Candidate] = []
        self.admin_access = bool(exact.admin_access)
        self.key = key

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


class _Candidate:
    __slots__ = ("id", "device", "slice", "pool")

    def __init__(self, did: DeviceID, device: Device, s: ResourceSlice, pool: _Pool) -> None:
        self.id = did
        self.device = device
        self.slice = s
        self.pool = pool


class _Result:
    __slots__ = ("request", "parent", "id", "device", "slice", "admin_access", "share_id", "consumed",
                 "tolerations")

    def __init__(self, req: _Request, cand: _Candidate, share_id: str | None,
                 consumed: dict[str, Quantity] | None) -> None:
        self.request = req.name
        self.parent = req.parent
        self.id = cand.id
        self.device = cand.device
        self.slice = cand.slice
        self.admin_access = True if req.admin_access else None
        self.share_id = share_id
        self.consumed = consumed
        self.tolerations = req.exact.tolerations


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """A fully-qualified attribute of a device; unqualified device attributes belong to the driver's domain."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class _AttributeConstraint:
    """A constraint over one attribute of the devices picked for some requests (all requests when empty)."""

    __slots__ = ("requests", "attribute")

    def __init__(self, requests: frozenset[str], attribute: str) -> None:
        self.requests = requests
        self.attribute = attribute

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)


class _MatchAttribute(_AttributeConstraint):
    __slots__ = ("value", "count")

    def __init__(self, requests: frozenset[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: DeviceAttribute | None = None
        self.count = 0

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = lookup_attribute(device, did.driver, self.attribute)
        if attr is None:
            return False
        if self.count == 0:
            self.value = attr
            self.count = 1
            return True
        if self.value is None or self.value.kind != attr.kind or self.value.value != attr.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device: Device, did: DeviceID) -> None:
        if self._applies(request, sub):
            self.count -= 1


class _DistinctAttribute(_AttributeConstraint):
    __slots__ = ("values",)

    def __init__(self, requests: frozenset[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: list[DeviceAttribute] = []

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = lookup_attribute(device, did.driver, self.attribute)
        if attr is None:
            return False
        for existing in self.values:
            # As upstream: the comparison stops at the first recorded value of another type.
            if existing.kind != attr.kind:
                break
            if existing.value == attr.value:
                return False
        self.values.append(attr)
        return True

    def remove(self, request: str, sub: str, device: Device, did: DeviceID) -> None:
        if self._applies(request, sub):
            self.values.pop()


_Constraint = _MatchAttribute | _DistinctAttribute


class _MaxSizeExceeded(Exception):
    """More than ALLOCATION_RESULTS_MAX_SIZE devices in one claim: backtrack further (not an error)."""


# --- consumable capacity -------------------------------------------------------------------------


def _resolve_capacity(device: Device, driver: str) -> dict[str, DeviceCapacity]:
    """Device capacities keyed by fully-qualified name; an explicit driver-domain entry wins."""
    out: dict[str, DeviceCapacity] = {}
    prefix = driver + "/"
    for name, cap in device.capacity.items():
        if name.startswith(prefix):
            out[name] = cap
    for name, cap in device.capacity.items():
        if name.startswith(prefix):
            continue
        key = name if "/" in name else prefix + name
        out.setdefault(key, cap)
    return out


def _resolve_requests(requests: Mapping[str, Quantity], device: Device,
                      driver: str) -> dict[str, Quantity] | None:
    out: dict[str, Quantity] = {}
    for name, q in requests.items():
        key: str | None = None
        if name in device.capacity:
            key = name if "/" in name else f"{driver}/{name}"
        else:
            domain, sep, ident = name.partition("/")
            if sep:
                if domain == driver and ident in device.capacity:
                    key = name
            elif f"{driver}/{name}" in device.capacity:
                key = f"{driver}/{name}"
        if key is None:
            return None
        if key in out:
            ident = key.split("/", 1)[1]
            other = key if name != key else ident
            raise AllocatorError(f'capacity "{ident}" requested both as "{name}" and as "{other}"')
        out[key] = q
    return out


_INT64_MAX = 2**63 - 1
_NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"


def _milli(q: Quantity) -> int | None:
    """``q`` in milli units when that is exact (and within int64), else None."""
    m = q.milli_value()
    return m if Quantity(m, -3).cmp(q) == 0 else None


def _use_milli(rng: Any, fractional: bool) -> bool:
    """Upstream's useMilli: with DRAFractionalCapacityRange, a range whose min / max / step are all exact in
    milli units (and whose step is at least 1m) is computed in milli units."""
    if not fractional:
        return False
    for q in (rng.min, rng.max, rng.step):
        if q is not None and _milli(q) is None:
            return False
    if rng.step is None:
        return True
    step = _milli(rng.step)
    return step is not None and step >= 1


def _consumed_quantity(requested: Quantity | None, cap: DeviceCapacity, fractional: bool = False) -> Quantity:
    """The capacity a request consumes under the device's request policy (upstream calculateConsumedCapacity):
    the default (or the whole capacity) without a request, rounded up to the range's next step or the next valid
    value otherwise. AllocatorError when the request cannot be represented in the range's arithmetic."""
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    rng = policy.valid_range
    if rng is not None:
        if requested < rng.min:
            return rng.min
        if rng.step is None:
            return requested
        if _use_milli(rng, fractional):
            req_m = _milli(requested)
            if req_m is None:
                raise AllocatorError(f"{_NOT_REPRESENTABLE}: request {requested} is not a representable milli value")
            step_m, min_m = rng.step.milli_value(), rng.min.milli_value()
            n = -(-(req_m - min_m) // step_m)
            if n > (_INT64_MAX - min_m) // step_m:
                raise AllocatorError(f"{_NOT_REPRESENTABLE}: rounding request {requested} up to the next step "
                                     "passes the milli-value range")
            val_m = min_m + step_m * n
            return Quantity.parse(val_m // 1000) if val_m % 1000 == 0 else Quantity(val_m, -3)
        if requested.cmp(Quantity(_INT64_MAX)) > 0:
            raise AllocatorError(f"{_NOT_REPRESENTABLE}: request {requested} exceeds MaxInt64")
        req, step, mn = requested.value(), rng.step.value(), rng.min.value()
        added = req - mn
        n = -(-added // step) if step else 0
        if mn >= 0 and step and n > (_INT64_MAX - mn) // step:
            raise AllocatorError(f"{_NOT_REPRESENTABLE}: rounding request {requested} up to the next step passes "
                                 "MaxInt64")
        return Quantity.parse(mn + step * n)
    if policy.valid_values:
        for v in policy.valid_values:
            if requested <= v:
                return v
    return requested


def _violates_policy(value: Quantity, cap: DeviceCapacity, fractional: bool = False) -> bool:
    policy = cap.request_policy
    if policy is None:
        return False
    if policy.default is not None and value == policy.default:
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and value > rng.max:
            return True
        if rng.step is not None:
            if _use_milli(rng, fractional):
                req_m = _milli(value)
                if req_m is None:
                    return True
                return (req_m - rng.min.milli_value()) % rng.step.milli_value() != 0
            if rng.step.value():
                return (value.value() - rng.min.value()) % rng.step.value() != 0
        return False
    if policy.valid_values:
        return not any(value == v for v in policy.valid_values)
    return False


# --- the allocator ---------------------------------------------------------------------------------


_EMPTY_NAMES: frozenset[str] = frozenset()
#: outcomes kept per node by AllocationMemo (older ones are dropped all at once: the allocated devices of a
#: node's pools move on, so old fingerprints rarely come back)
_MEMO_OUTCOMES_PER_NODE = 16


class _MemoNode:
    """What AllocationMemo knows about one node: its pools and the outcomes computed on it."""

    __slots__ = ("node", "pools", "pool_keys", "outcomes")

    def __init__(self, node: Node, pools: list[_Pool]) -> None:
        self.node = node
        self.pools = pools
        self.pool_keys = tuple((p.driver, p.name) for p in pools)
        # (claims key, allocated fingerprint) -> the results (None: the claims do not fit on the node)
        self.outcomes: dict[tuple[int, tuple[frozenset[str], ...]], list[AllocationResult] | None] = {}


class AllocationMemo:
    """Outcomes of ``Allocator.allocate`` per node, kept across allocators (scheduling cycles).

    The outcome on a node is a function of the features, the device classes, the ResourceSlices (the node's
    pools, and every slice for pool completeness), the node object, the claims' specs and the devices of the
    node's pools already allocated to other claims. The memo keys an outcome on exactly those: classes, slices,
    features and the CEL cache by object identity (an "epoch": any change forgets everything), the node by
    identity, the claims by spec equality, and the allocated devices per pool by name. Errors are never kept
    (they are recomputed, with the claims' own names), nor results holding a share of a shareable device
    (its share id derives from the claim's uid); while any claim holds shares or consumable capacity, the
    memo steps aside and every allocation runs the search.

    Pinned by tests/test_perf_equivalence.py::test_dra_allocation_memo_matches_plain_search.
    """

    def __init__(self) -> None:
        self._epoch_inputs: tuple[Any, ...] = ()
        self._nodes: dict[str, _MemoNode] = {}
        self._claim_specs: dict[tuple[Any, ...], int] = {}
        self._next_key = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _begin(self, a: Allocator) -> bool:
        """Called by a new Allocator: forget everything when its inputs differ; whether the memo may be used."""
        state = a.allocated_state
        if state.allocated_shared_device_ids or state.aggregated_capacity:
            return False
        # Holding the objects keeps their ids unique while they are compared.
        inputs = (a.features, a.cel_cache, tuple(a.all_slices),
                  tuple(sorted(a.device_classes.items(), key=lambda kv: str(kv[0]))))
        old = self._epoch_inputs
        if not (len(old) == 4 and old[0] == inputs[0] and old[1] is inputs[1] and _same_objects(old[2], inputs[2])
                and len(old[3]) == len(inputs[3])
                and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(old[3], inputs[3], strict=True))):
            self._epoch_inputs = inputs
            self._nodes.clear()
            self._claim_specs.clear()
        return True

    def claims_key(self, claims: Sequence[ResourceClaim]) -> int | None:
        """A small int standing for the claims' specs (equal specs, same int); None when not hashable."""
        specs = tuple(c.spec for c in claims)
        with self._lock:  # Filter may run on several threads: one int per spec, never reused
            try:
                key = self._claim_specs.get(specs)
            except TypeError:
                return None
            if key is None:
                if len(self._claim_specs) > 1024:
                    self._claim_specs.clear()
                self._next_key += 1
                key = self._claim_specs[specs] = self._next_key
            return key

    def node_entry(self, node: Node, a: Allocator) -> _MemoNode:
        entry = self._nodes.get(node.name)
        if entry is None or entry.node is not node:
            slices_for_node = a._on_node.get(node.name, []) + a._shared
            entry = self._nodes[node.name] = _MemoNode(node, gather_pools(slices_for_node, node, a.features,
                                                                          a.all_slices))
        return entry


def _same_objects(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class Allocator:
    """Allocates devices for claims on one node at a time; build once per scheduling cycle (or per pod).

    ``device_classes`` maps class names to DeviceClasses; ``slices`` is every ResourceSlice in the cluster.
    Reusable and side-effect free: ``allocate`` does not change ``allocated_state``. ``memo`` (optional,
    shared by the allocators of successive cycles) reuses outcomes whose inputs did not change.
    """

    def __init__(self, features: Features, allocated_state: AllocatedState,
                 device_classes: Mapping[str, DeviceClass], slices: Sequence[ResourceSlice],
                 cel_cache: CELCache | None = None, memo: AllocationMemo | None = None) -> None:
        self.features = features
        self.allocated_state = allocated_state
        self.device_classes = device_classes
        self.all_slices = list(slices)
        self.cel_cache = cel_cache if cel_cache is not None else CELCache()
        self._on_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        for s in self.all_slices:
            if s.spec.node_name:
                self._on_node.setdefault(s.spec.node_name, []).append(s)
            else:
                self._shared.append(s)
        # Counters consumed by allocated devices, per pool; the allocated state never changes.
        self._available_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.num_allocate_one = 0
        self._memo = memo if memo is not None and memo._begin(self) else None
        # allocated device names per (driver, pool), built on the memo's first use in this allocator
        self._allocated_by_pool: dict[tuple[str, str], frozenset[str]] | None = None
        self._claims_keys: dict[tuple[ResourceClaim, ...], int | None] = {}

    def allocate(self, node: Node, claims: Sequence[ResourceClaim], timeout: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> list[AllocationResult] | None:
        """One AllocationResult per claim (same order), or None when they cannot all be allocated here.

        Raises AllocatorError with upstream's message when the input is unusable. ``timeout`` (seconds, read
        on ``clock``) bounds the search as upstream's filter timeout does: the clock is read at the first
        search step and every :data:`DEADLINE_CHECK_STEPS` steps after, and once past the deadline the
        AllocatorError has ``timed_out`` set. A memoized outcome is returned at once, whatever the timeout.
        """
        deadline = None if timeout is None else clock() + timeout
        memo = self._memo
        if memo is not None:
            # Fast path: the outcome this node had for equal inputs (AllocationMemo); the plain path below
            # is the reference. Pinned by test_dra_allocation_memo_matches_plain_search.
            return self._allocate_memo(memo, node, tuple(claims), deadline, clock)
        run = _Run(self, node, list(claims))
        run.deadline, run.clock = deadline, clock
        return run.run()

    def _allocate_memo(self, memo: AllocationMemo, node: Node, claims: tuple[ResourceClaim, ...],
                       deadline: float | None, clock: Callable[[], float]) -> list[AllocationResult] | None:
        ckey = self._claims_keys.get(claims, 0)
        if ckey == 0:
            ckey = self._claims_keys[claims] = memo.claims_key(claims)
        entry = memo.node_entry(node, self)
        if ckey is None:
            run = _Run(self, node, list(claims))
            run.pools, run.deadline, run.clock = entry.pools, deadline, clock
            return run.run(gathered=True)
        by_pool = self._allocated_by_pool
        if by_pool is None:
            by_pool = self._allocated_by_pool = self.allocated_state.allocated_by_pool
            if by_pool is None:
                by_pool = self._allocated_by_pool = _allocated_by_pool(self.allocated_state)
        key = (ckey, tuple([by_pool.get(k, _EMPTY_NAMES) for k in entry.pool_keys]))
        outcomes = entry.outcomes
        if key in outcomes:
            memo.hits += 1
            hit = outcomes[key]
            return None if hit is None else list(hit)
        memo.misses += 1
        run = _Run(self, node, list(claims))
        run.pools, run.deadline, run.clock = entry.pools, deadline, clock
        out = run.run(gathered=True)  # a timed-out search raises: nothing is memoized
        if out is not None and any(r.share_id is not None for res in out for r in res.results):
            return out
        if len(outcomes) >= _MEMO_OUTCOMES_PER_NODE:
            outcomes.clear()
        outcomes[key] = None if out is None else list(out)
        return out


def _allocated_by_pool(state: AllocatedState) -> dict[tuple[str, str], frozenset[str]]:
    names: dict[tuple[str, str], list[str]] = {}
    for did in state.allocated_devices:
        k = (did.driver, did.pool)
        have = names.get(k)
        if have is None:
            names[k] = [did.device]
        else:
            have.append(did.device)
    return {k: frozenset(v) for k, v in names.items()}


class _Run:
    """State of one ``allocate`` call (upstream's per-call ``allocator``)."""

    def __init__(self, a: Allocator, node: Node, claims: list[ResourceClaim]) -> None:
        self.a = a
        # ``allocate(timeout=...)``: the search stops past ``deadline`` on ``clock``
        self.deadline: float | None = None
        self.clock: Callable[[], float] = time.monotonic
        self.steps = 0
        self.features = a.features
        self.node = node
        self.claims = claims
        self.pools: list[_Pool] = []
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_Constraint]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}

    def _claim_ref(self, i: int) -> str:
        c = self.claims[i]
        return f"{c.namespace}/{c.name}"

    # -- setup ---------------------------------------------------------------------------------
    def run(self, gathered: bool = False) -> list[AllocationResult] | None:
        """``gathered``: ``self.pools`` holds the node's pools already (AllocationMemo keeps them per node)."""
        a = self.a
        if not gathered:
            slices_for_node = a._on_node.get(self.node.name, []) + a._shared
            self.pools = gather_pools(slices_for_node, self.node, self.features, a.all_slices)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.spec.devices.requests):
                if request.first_available:
                    if not self.features.prioritized_list:
                        raise AllocatorError(f"claim {self._claim_ref(ci)}, request {request.name}: has "
                                             "subrequests, but the DRAPrioritizedList feature is disabled")
                    if self._refuses_capacity_requests:
                        for sub in request.first_available:
                            if sub.request.capacity is not None:
                                raise AllocatorError(
                                    f"claim {self._claim_ref(ci)}, subrequest {sub.name}: has capacity "
                                    "requests, but the DRAConsumableCapacity feature is disabled")
                    least: int | None = None
                    for si, sub in enumerate(request.first_available):
                        rd = self._validate(ci, sub.name, request.name, sub.request, (ci, ri, si))
                        self.requests[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                else:
                    exact = request.exactly
                    assert exact is not None
                    if self._refuses_capacity_requests and exact.capacity is not None:
                        raise AllocatorError(f"claim {self._claim_ref(ci)}, request {request.name}: has capacity "
                                             "requests, but the DRAConsumableCapacity feature is disabled")
                    rd = self._validate(ci, request.name, "", exact, (ci, ri, 0))
                    self.requests[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocatorError(f"claim {self._claim_ref(ci)}: number of requested devices {min_devices} "
                                     f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            cons: list[_Constraint] = []
            for i, c in enumerate(claim.spec.devices.constraints):
                if c.match_attribute is not None:
                    cons.append(_MatchAttribute(frozenset(c.requests), c.match_attribute))
                elif c.distinct_attribute is not None:
                    cons.append(_DistinctAttribute(frozenset(c.requests), c.distinct_attribute))
                else:
                    raise AllocatorError(f"claim {self._claim_ref(ci)}, constraint #{i}: empty constraint "
                                         "(unsupported constraint type?)")
            self.constraints.append(cons)

        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            done = False
        if not done:
            for p in self.pools:
                if p.invalid:
                    raise AllocatorError("invalid resource pools were encountered", failed_on_node=True)
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    @property
    def _refuses_capacity_requests(self) -> bool:
        """Whether capacity requests are an error: upstream picks the first allocator variant that serves every
        enabled feature, and only the variants that know consumable capacity check for it (in v1.35.4 and
        v1.36.2 alike those are the ones needed once DRADeviceBindingConditions is on); the others read no
        capacity at all, so with DRAConsumableCapacity off the requests are ignored there."""
        f = self.features
        return not f.consumable_capacity and f.device_binding_and_status

    def _validate(self, ci: int, name: str, parent: str, exact: ExactDeviceRequest,
                  key: tuple[int, int, int]) -> _Request:
        claim_ref = self._claim_ref(ci)
        if not self.features.admin_access and exact.admin_access is not None:
            raise AllocatorError(f"claim {claim_ref}, request {name}: admin access is requested, but the "
                                 "feature is disabled")
        if not exact.device_class_name:
            raise AllocatorError(f"claim {claim_ref}, request {name}: missing device class name "
                                 "(unsupported request type?)")
        cls = self.a.device_classes.get(exact.device_class_name)
        if cls is None:
            raise AllocatorError(f"claim {claim_ref}, request {name}: could not retrieve device class "
                                 f'{exact.device_class_name}: deviceclass.resource.k8s.io "'
                                 f'{exact.device_class_name}" not found')
        rd = _Request(name, parent, exact, cls, key)
        if exact.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            rd.num_devices = exact.count
        elif exact.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocatorError(f"claim {claim_ref}, request {name}: asks for all devices, but "
                                         f"resource pool {pool} is currently being updated")
                if pool.invalid:
                    raise AllocatorError(f"claim {claim_ref}, request {name}: asks for all devices, but "
                                         f"resource pool {pool} is currently invalid")
                for s in pool.slices:
                    for d in s.spec.devices:
                        if not self._selectable(ci, rd, s, d):
                            continue
                        cand = _Candidate(DeviceID(s.spec.driver, s.spec.pool.name, d.name), d, s, pool)
                        if self.features.consumable_capacity and not self._capacity_fits(rd, cand)[0]:
                            continue
                        rd.all_devices.append(cand)
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocatorError(f"claim {claim_ref}, request {name}: unsupported count mode "
                                 f"{exact.allocation_mode}")
        return rd

    # -- search --------------------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool,
                      start: tuple[int, int, int]) -> bool:
        self.a.num_allocate_one += 1
        if self.deadline is not None:
            # Reading the clock on every step would dominate small searches: look at the first step (a
            # deadline already past stops any search, as upstream's) and every 256 steps after it.
            self.steps += 1
            if self.steps & _DEADLINE_MASK == 1 and self.clock() > self.deadline:
                raise AllocatorError("filter operation aborted: context deadline exceeded", timed_out=True)
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.devices.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        rd = self.requests[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self._allocate_one(ci, ri, sub, 0, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False

        exact = rd.exact
        do_all = exact.allocation_mode == ALLOCATION_MODE_ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded

        if do_all:
            cand = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, cand, True)
            if undo is None:
                return False
            try:
                nxt = 0 if self.features.all_subrequest_index_reset else si
                done = self._allocate_one(ci, ri, nxt, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        admin = rd.admin_access
        pools = self.pools
        for pi in range(start[0], len(pools)):
            pool = pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            slice_start = start[1] if pi == start[0] else 0
            for sli in range(slice_start, len(pool.slices)):
                s = pool.slices[sli]
                devices = s.spec.devices
                dev_start = start[2] if (pi == start[0] and sli == start[1]) else 0
                for dvi in range(dev_start, len(devices)):
                    d = devices[dvi]
                    did = DeviceID(pool.driver, pool.name, d.name)
                    if admin:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self._selectable(ci, rd, s, d):
                        continue
                    cand = _Candidate(did, d, s, pool)
                    if self.features.consumable_capacity and not self._capacity_fits(rd, cand)[0]:
                        continue
                    undo = self._allocate_device(ci, rd, cand, False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated_state.allocated_devices or bool(self.allocating.get(did))

    def _selectable(self, ci: int, rd: _Request, s: ResourceSlice, d: Device) -> bool:
        if not self.features.device_binding_and_status and d.binding_conditions:
            return False
        did = DeviceID(s.spec.driver, s.spec.pool.name, d.name)
        mk = (did, rd.key)
        hit = self.matches.get(mk)
        if hit is not None:
            return hit
        ok = True
        if rd.cls is not None and not self._selectors_match(ci, d, did, rd.cls, rd.cls.spec.selectors):
            ok = False
        if ok and not self._selectors_match(ci, d, did, None, rd.exact.selectors):
            ok = False
        if ok and s.spec.per_device_node_selection:
            ok = node_matches(self.node, d.node_name or "", bool(d.all_nodes), d.node_selector)
        self.matches[mk] = ok
        return ok

    def _selectors_match(self, ci: int, d: Device, did: DeviceID, cls: DeviceClass | None,
                         selectors: Sequence[Any]) -> bool:
        cache = self.a.cel_cache
        multi = self.features.consumable_capacity
        for i, sel in enumerate(selectors):
            who = f"class {cls.name}" if cls is not None else f"claim {self._claim_ref(ci)}"
            try:
                if not cache.matches(sel.expression, d, did.driver, multi):
                    return False
            except CELCompileError as e:
                raise AllocatorError(f"{who}: selector #{i}: CEL compile error: {e.detail}") from None
            except CELRuntimeError as e:
                if not self.features.cel_error_hints:
                    raise AllocatorError(f"{who}: selector #{i}: CEL runtime error: {e.detail}") from None
                detail = e.detail
                if "no such key:" in detail:
                    detail += (". consider using CEL optional chaining (.? followed by orValue()) or guarding "
                               "the check with has() for optional fields")
                raise AllocatorError(f"{who}: selector #{i} on device {did}: CEL runtime error: "
                                     f"{detail}") from None
        return True

    def _capacity_fits(self, rd: _Request, cand: _Candidate) -> tuple[bool, dict[str, Quantity] | None]:
        """Whether ``cand`` has room for ``rd``'s capacity request, and the capacity it would consume."""
        requested = rd.exact.capacity.requests if rd.exact.capacity is not None else {}
        d = cand.device
        if not requested and not d.allow_multiple_allocations and cand.id not in self.allocating_capacity \
                and cand.id not in self.a.allocated_state.aggregated_capacity \
                and all(c.request_policy is None for c in d.capacity.values()):
            # Nothing requested from an unshared device without policies: it consumes its full capacity,
            # which always fits (the common case, kept cheap).
            return True, None
        driver = cand.id.driver
        capacity = _resolve_capacity(cand.device, driver)
        resolved = _resolve_requests(requested, cand.device, driver) if requested else {}
        if resolved is None:
            return False, None
        consumed: dict[str, Quantity] = {}
        for name, cap in capacity.items():
            q = _consumed_quantity(resolved.get(name), cap, self.features.fractional_capacity_range)
            if q.sign() < 0:
                raise AllocatorError(f'capacity "{name}": capacity value is negative')
            consumed[name] = q
        already = self.a.allocated_state.aggregated_capacity.get(cand.id, {})
        allocating = self.allocating_capacity.get(cand.id, {})
        for name, cap in capacity.items():
            q = consumed[name]
            if _violates_policy(q, cap, self.features.fractional_capacity_range):
                return False, None
            total = q
            if name in already:
                total = total + already[name]
            if name in allocating:
                total = total + allocating[name]
            if total > cap.value:
                return False, None
        return True, consumed

    def _allocate_device(self, ci: int, rd: _Request, cand: _Candidate, must: bool) -> Callable[[], None] | None:
        """Tentatively allocate ``cand`` for ``rd``; the undo function, or None when it cannot be used."""
        did, d = cand.id, cand.device
        multi = self.features.consumable_capacity and bool(d.allow_multiple_allocations)
        if not multi and rd.admin_access and ci in self.allocating.get(did, ()):
            return None
        if not rd.admin_access and self._in_use(did):
            return None
        if not self.features.partitionable_devices and d.consumes_counters:
            return None
        skip_counters = multi and (did in self.a.allocated_state.aggregated_capacity
                                   or did in self.allocating_capacity)
        counters_taken = False
        if not skip_counters and d.consumes_counters:
            if not self._take_counters(cand):
                return None
            counters_taken = True
        base, sub = (rd.parent, rd.name) if rd.parent else (rd.name, "")
        if self.features.device_taints and _taint_prevents(d, rd.exact.tolerations):
            if counters_taken:
                self._release_counters(cand)
            return None
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, d, did):
                if must:
                    if counters_taken:
                        self._release_counters(cand)
                    raise AllocatorError(f"claim {self._claim_ref(ci)}, request {rd.name}: cannot add device "
                                         f"{did} because a claim constraint would not be satisfied")
                for e in range(i):
                    cons[e].remove(base, sub, d, did)
                if counters_taken:
                    self._release_counters(cand)
                return None
        holders = self.allocating.setdefault(did, set())
        if not multi:
            holders.add(ci)
        share_id: str | None = None
        consumed: dict[str, Quantity] | None = None
        if self.features.consumable_capacity:
            fits, would = self._capacity_fits(rd, cand)
            if not fits:
                for c in cons:
                    c.remove(base, sub, d, did)
                holders.discard(ci)
                if counters_taken:
                    self._release_counters(cand)
                return None
            if multi and would is not None:
                consumed = would
                share_id = self._share_id(ci, rd, did)
                acc = self.allocating_capacity.setdefault(did, {})
                for k, q in would.items():
                    acc[k] = acc[k] + q if k in acc else q
        results = self.results[ci]
        results.append(_Result(rd, cand, share_id, consumed))
        n = len(results) - 1

        def undo() -> None:
            for c in cons:
                c.remove(base, sub, d, did)
            holders.discard(ci)
            if consumed is not None:
                acc = self.allocating_capacity[did]
                for k, q in consumed.items():
                    acc[k] = acc[k] - q
                    if acc[k].is_zero():
                        del acc[k]
                if not acc:
                    del self.allocating_capacity[did]
            if counters_taken:
                self._release_counters(cand)
            del results[n:]
        return undo

    def _share_id(self, ci: int, rd: _Request, did: DeviceID) -> str:
        # Upstream draws a random id; a digest keeps runs reproducible and ids distinct per claim/request.
        claim = self.claims[ci]
        text = f"{claim.uid}/{rd.full_name}/{did}/{len(self.results[ci])}"
        return hashlib.sha256(text.encode()).hexdigest()[:5]

    # -- counters ------------------------------------------------------------------------------
    def _available(self, pool: _Pool) -> dict[str, dict[str, Quantity]]:
        key = (pool.driver, pool.name)
        cached = self.a._available_counters.get(key)
        if cached is not None:
            return cached
        avail = {name: dict(cs.counters) for name, cs in pool.counter_sets.items()}
        state = self.a.allocated_state
        for s in pool.slices + pool.slices_elsewhere:
            for d in s.spec.devices:
                if not d.consumes_counters:
                    continue
                if not state.is_allocated(DeviceID(s.spec.driver, s.spec.pool.name, d.name)):
                    continue
                for cc in d.consumes_counters:
                    counters = avail.get(cc.counter_set)
                    if counters is None:
                        continue
                    for name, q in cc.counters.items():
                        if name in counters:
                            counters[name] = counters[name] - q
        self.a._available_counters[key] = avail
        return avail

    def _take_counters(self, cand: _Candidate) -> bool:
        pool = cand.pool
        avail = self._available(pool)
        consumed = self.consumed_counters.setdefault((pool.driver, pool.name), {})
        for cc in cand.device.consumes_counters:
            cs = consumed.setdefault(cc.counter_set, {})
            for name, q in cc.counters.items():
                cs[name] = cs[name] + q if name in cs else q
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for name, have in counters.items():
                if name in used and have < used[name]:
                    self._release_counters(cand)
                    return False
        return True

    def _release_counters(self, cand: _Candidate) -> None:
        consumed = self.consumed_counters[(cand.pool.driver, cand.pool.name)]
        for cc in cand.device.consumes_counters:
            cs = consumed[cc.counter_set]
            for name, q in cc.counters.items():
                cs[name] = cs[name] - q

    # -- result --------------------------------------------------------------------------------
    def _result(self, ci: int) -> AllocationResult:
        claim = self.claims[ci]
        binding = self.features.device_binding_and_status
        results = tuple(
            DeviceRequestAllocationResult(
                request=f"{r.parent}/{r.request}" if r.parent else r.request,
                driver=r.id.driver, pool=r.id.pool, device=r.id.device, admin_access=r.admin_access,
                tolerations=tuple(r.tolerations),
                binding_conditions=r.device.binding_conditions if binding else (),
                binding_failure_conditions=r.device.binding_failure_conditions if binding else (),
                share_id=r.share_id, consumed_capacity=_status_capacity(r) if r.consumed else {})
            for r in self.results[ci])
        configs: list[DeviceAllocationConfiguration] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        requests = claim.spec.devices.requests
        for ri in range(len(requests)):
            rd = self.requests[(ci, ri, 0)]
            if rd.parent:
                rd = self.requests[(ci, ri, self.selected_sub.get((ci, ri), 0))]
            cls = rd.cls
            if cls is None:
                continue
            rng = class_ranges.get(cls.name)
            if rng is not None:
                for i in range(*rng):
                    c = configs[i]
                    configs[i] = attrs.evolve(c, requests=(*c.requests, rd.full_name))
                continue
            first = len(configs)
            for cfg in cls.spec.config:
                configs.append(DeviceAllocationConfiguration("FromClass", cfg.opaque, (rd.full_name,)))
            class_ranges[cls.name] = (first, len(configs))
        for cfg in claim.spec.devices.config:
            if not cfg.requests:
                configs.append(DeviceAllocationConfiguration("FromClaim", cfg.opaque, cfg.requests))
                continue
            for ri, request in enumerate(requests):
                if request.name in cfg.requests:
                    configs.append(DeviceAllocationConfiguration("FromClaim", cfg.opaque, cfg.requests))
                    continue
                rd = self.requests[(ci, ri, 0)]
                if not rd.parent:
                    continue
                chosen = request.first_available[self.selected_sub.get((ci, ri), 0)]
                if f"{request.name}/{chosen.name}" in cfg.requests:
                    configs.append(DeviceAllocationConfiguration("FromClaim", cfg.opaque, cfg.requests))
        return AllocationResult(results, tuple(configs), self._node_selector(self.results[ci]))

    def _node_selector(self, results: list[_Result]) -> NodeSelector | None:
        fields: list[NodeSelectorRequirement] = []
        exprs: list[NodeSelectorRequirement] = []
        for r in results:
            s = r.slice
            if s.spec.per_device_node_selection:
                node_name, selector = r.device.node_name, r.device.node_selector
            else:
                node_name, selector = s.spec.node_name, s.spec.node_selector
            if node_name or r.device.binds_to_node:
                return NodeSelector((NodeSelectorTerm(match_fields=(
                    NodeSelectorRequirement("metadata.name", "In", (self.node.name,)),)),))
            if selector is not None:
                terms = selector.node_selector_terms
                if len(terms) == 1:
                    _add_requirements(terms[0].match_fields, fields)
                    _add_requirements(terms[0].match_expressions, exprs)
                elif len(terms) > 1:
                    raise AllocatorError(f"create NodeSelector for claim: unsupported ResourceSlice.NodeSelector "
                                         f"with {len(terms)} terms")
        if fields or exprs:
            return NodeSelector((NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=tuple(fields)),))
        return None


def _status_capacity(r: _Result) -> dict[str, Quantity]:
    """Consumed capacity named as the device publishes it (qualified or not)."""
    out: dict[str, Quantity] = {}
    assert r.consumed is not None
    for name, q in r.consumed.items():
        out[name if name in r.device.capacity else name.split("/", 1)[1]] = q
    return out


def _add_requirements(src: Sequence[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for req in src:
        if not any(e.key == req.key and e.operator == req.operator and set(e.values) == set(req.values)
                   for e in dst):
            dst.append(req)


def _taint_prevents(device: Device, tolerations: Sequence[DeviceToleration]) -> bool:
    for taint in device.taints:
        if taint.effect in ("NoExecute", "NoSchedule") and not any(t.tolerates(taint) for t in tolerations):
            return True
    return False


__all__ = [
    "AllocatedState", "AllocationMemo", "Allocator", "AllocatorError", "DeviceID", "Features", "SharedDeviceID",
    "gather_pools", "lookup_attribute", "node_matches",
]
