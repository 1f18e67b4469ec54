"""The DRA manager: what the plugin reads about claims, classes and slices, and the typed objects it hands to
the structured allocator.

The cluster's DRA objects live in the object store as manifests (``KubeObject``); the allocator wants the
typed model (``scheduling_framework.api.resource``). Each manifest is parsed once (cached per object; an
object is replaced, never mutated, when it changes). The set of devices allocated to claims is computed
from the claims in the store and cached until the store changes.

Claims the plugin allocated in Reserve are written to the store at once with their allocation (upstream
keeps them in its assume cache, where later cycles see them the same way) and remembered as in flight
until PreBind records the reservation; another pod that shares such a claim waits, as upstream.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.dra.cel import CELCompileError, CELRuntimeError
from scheduling_framework.dra.claims import (
    DEVICE_CLASS,
    DEVICE_TAINT_RULE,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    allocated_devices,
    claim_key,
)
from scheduling_framework.state.snapshot import ObjectStore


class DraManager:
    """Per object store: typed-object caches, the allocated-device cache and in-flight allocations."""

    #: False: allocated_state compares every claim with the previous ones (the plain path of the tests)
    incremental_claims = True

    def __init__(self, store: ObjectStore) -> None:
        self._store_ref = weakref.ref(store)
        self.lock = threading.Lock()
        # claim key -> the claim object as it was before Reserve wrote the allocation (for Unreserve)
        self.in_flight: dict[str, KubeObject] = {}
        # keys of the claims Reserve created for pods' extended resources and PreBind has not reserved yet
        # (Unreserve deletes them)
        self.created: set[str] = set()
        # typed_slices' last answer: (ids of the slices and rules, the objects, the typed slices)
        self._tainted: tuple[Any, Any, list[Any]] | None = None
        self._typed: weakref.WeakKeyDictionary[KubeObject, Any] = weakref.WeakKeyDictionary()
        self._alloc_gen = -1
        self._allocated: set[tuple[str, str, str]] = set()
        self._state_gen = -1
        self._state: Any = None
        self._cel: Any = None
        self._memo: Any = None
        # allocated_state's incremental bookkeeping: the claims counted (by key), their contributions, the
        # claims holding shares, how many counted claims hold each device, the device names per pool
        self._seen: dict[tuple[str, str], KubeObject] = {}
        self._claims_mark = 0  # the store's ResourceClaim change mark when _seen was taken
        self._seen_contrib: dict[tuple[str, str], tuple[tuple[Any, ...], bool]] = {}
        self._shared: dict[tuple[str, str], KubeObject] = {}
        self._counts: dict[Any, int] = {}
        self._by_pool: dict[tuple[str, str], frozenset[str]] = {}
        self._pool_names: dict[tuple[str, str], set[str]] = {}
        self._contrib: weakref.WeakKeyDictionary[KubeObject, tuple[tuple[Any, ...], bool]] = \
            weakref.WeakKeyDictionary()

    @property
    def store(self) -> ObjectStore:
        s = self._store_ref()
        if s is None:  # pragma: no cover - the store outlives the frameworks that read it
            raise RuntimeError("object store is gone")
        return s

    # lookups -----------------------------------------------------------------------------------
    def claim(self, namespace: str, name: str) -> KubeObject | None:
        return self.store.get(RESOURCE_CLAIM, namespace, name)

    def device_class(self, name: str) -> KubeObject | None:
        return self.store.get(DEVICE_CLASS, "", name)

    def device_classes(self) -> list[KubeObject]:
        return self.store.list(DEVICE_CLASS)

    def slices(self) -> list[KubeObject]:
        return self.store.list(RESOURCE_SLICE)

    def typed_slices(self, taint_rules: bool, rule_cel_selectors: bool) -> list[Any]:
        """The typed ResourceSlices; with ``taint_rules`` (DRADeviceTaintRules) each device carries, after its
        own taints, the taints of the DeviceTaintRules that select it (upstream's slice tracker does the same;
        ``rule_cel_selectors``: see ``apply_taint_rules``).
        The list is kept while the slices and rules are the same objects, so that the allocator's memo, which
        compares slices by identity, keeps its outcomes."""
        slices = self.store.list(RESOURCE_SLICE)
        rules = self.store.list(DEVICE_TAINT_RULE) if taint_rules else []
        key = (tuple(map(id, slices)), tuple(map(id, rules)), rule_cel_selectors)
        hit = self._tainted
        if hit is not None and hit[0] == key:
            return list(hit[2])
        typed = self.typed_all(slices)
        if rules:
            classes = {c.name: self.typed(c) for c in self.device_classes()}
            typed = apply_taint_rules(typed, [self.typed(r) for r in rules], classes, self.cel_cache(),
                                      cel_selectors=rule_cel_selectors)
        self._tainted = (key, (slices, rules), typed)  # holding the objects keeps their ids unique
        return list(typed)

    def allocated_device_ids(self) -> set[tuple[str, str, str]]:
        """(driver, pool, device) of every device allocated to a claim (admin-access allocations excluded)."""
        store = self.store
        gen = getattr(store, "generation", None)
        if gen is not None and gen == self._alloc_gen:
            return self._allocated
        out: set[tuple[str, str, str]] = set()
        for c in store.list(RESOURCE_CLAIM):
            out.update(allocated_devices(c))
        self._allocated = out
        self._alloc_gen = gen if gen is not None else -1
        return out

    def allocated_state(self) -> Any:
        """The allocator's AllocatedState for the claims in the store (whole devices, shares of shareable
        devices and the capacity they consume; admin-access allocations excluded); cached until the store
        changes (the allocator does not modify it).

        Fast path: kept up to date from the claims added, replaced or removed since the previous state
        (a count per device, and the allocated device names per pool for the allocator's memo) instead of
        the pass over every claim of ``_allocated_state_rebuilt``, the plain path. Pinned by
        tests/test_perf_equivalence.py::test_dra_incremental_allocated_state_equals_rebuilt."""
        store = self.store
        gen = store.generation
        if gen == self._state_gen and self._state is not None:
            return self._state
        alloc_mod: Any = importlib.import_module("scheduling_framework.dra.allocator")
        prev = self._seen
        # by identity: a replaced claim is one removed and one added
        changed = store.changes_since(RESOURCE_CLAIM, self._claims_mark) if self.incremental_claims else None
        if changed is None:  # compare every claim
            cur = dict(store.by_key(RESOURCE_CLAIM))
            cur_get, prev_get = cur.get, prev.get
            removed = [(k, o) for k, o in prev.items() if cur_get(k) is not o]
            added = [(k, o) for k, o in cur.items() if prev_get(k) is not o]
        else:  # only the claims changed since then (test_dra_claims_changes_since_equal_a_full_diff)
            live = store.by_key(RESOURCE_CLAIM)
            cur = prev  # brought up to date in place: nothing else holds it
            removed, added = [], []
            for k in dict.fromkeys(changed):
                old, new = prev.get(k), live.get(k)
                if old is new:
                    continue
                if old is not None:
                    removed.append((k, old))
                if new is not None:
                    added.append((k, new))
                    cur[k] = new
                else:
                    del cur[k]
        self._claims_mark = store.change_mark(RESOURCE_CLAIM)
        counts, contribs, touched = self._counts, self._seen_contrib, set()
        for key, _ in removed:
            whole, is_shared = contribs.pop(key)
            if is_shared:
                self._shared.pop(key, None)
            for did in whole:
                n = counts[did] - 1
                if n:
                    counts[did] = n
                else:
                    del counts[did]
                    pool = (did.driver, did.pool)
                    self._pool_names[pool].discard(did.device)
                    touched.add(pool)
        for key, c in added:
            contrib = contribs[key] = self._contribution(c, alloc_mod)
            whole, is_shared = contrib
            if is_shared:
                self._shared[key] = c
            for did in whole:
                n = counts.get(did, 0)
                counts[did] = n + 1
                if not n:
                    pool = (did.driver, did.pool)
                    self._pool_names.setdefault(pool, set()).add(did.device)
                    touched.add(pool)
        self._seen = cur
        shared = [self.typed(c) for c in self._shared.values()]
        state = alloc_mod.AllocatedState.from_claims(shared) if shared else alloc_mod.AllocatedState()
        state.allocated_devices.update(counts)
        by_pool = dict(self._by_pool)
        for pool in touched:
            names = frozenset(self._pool_names.get(pool, ()))
            if names:
                by_pool[pool] = names
            else:
                by_pool.pop(pool, None)
        self._by_pool = by_pool
        if not shared:
            # only whole devices: the names per pool are the allocator memo's fingerprint (AllocationMemo)
            state.allocated_by_pool = by_pool
        self._state = state
        self._state_gen = gen
        return state

    def _allocated_state_rebuilt(self) -> Any:
        """The plain path of :meth:`allocated_state`: one pass over every claim in the store."""
        store = self.store
        alloc_mod: Any = importlib.import_module("scheduling_framework.dra.allocator")
        devices: set[Any] = set()
        shared: list[Any] = []
        for c in store.list(RESOURCE_CLAIM):
            contrib = self._contrib.get(c)
            if contrib is None:
                contrib = self._contrib[c] = self._contribution(c, alloc_mod)
            whole, is_shared = contrib
            if is_shared:
                shared.append(self.typed(c))
            else:
                devices.update(whole)
        state = alloc_mod.AllocatedState.from_claims(shared) if shared else alloc_mod.AllocatedState()
        state.allocated_devices.update(devices)
        return state

    @staticmethod
    def _contribution(claim: KubeObject, alloc_mod: Any) -> tuple[tuple[Any, ...], bool]:
        """(DeviceIDs the claim holds whole, whether it holds shares and needs the full model)."""
        alloc = claim.status.get("allocation")
        if not isinstance(alloc, dict):
            return (), False
        out = []
        for r in (alloc.get("devices") or {}).get("results") or []:
            if not isinstance(r, dict) or r.get("adminAccess"):
                continue
            if r.get("shareID") is not None:
                return (), True
            out.append(alloc_mod.DeviceID(str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", ""))))
        return tuple(out), False

    def cel_cache(self) -> Any:
        """One cache of compiled selectors and their results per device, shared by every cycle."""
        if self._cel is None:
            cel: Any = importlib.import_module("scheduling_framework.dra.cel")
            self._cel = cel.CELCache()
        return self._cel

    def allocation_memo(self) -> Any:
        """The allocator's cross-cycle memo of per-node outcomes (AllocationMemo), shared by every cycle."""
        if self._memo is None:
            alloc_mod: Any = importlib.import_module("scheduling_framework.dra.allocator")
            self._memo = alloc_mod.AllocationMemo()
        return self._memo

    def has_pending_allocation(self, claim: KubeObject) -> bool:
        return claim_key(claim) in self.in_flight

    # typed objects for the allocator -------------------------------------------------------------
    def typed(self, obj: KubeObject) -> Any:
        """The typed model of ``obj`` (parsed once). Raises the model's ValidationError on bad manifests."""
        hit = self._typed.get(obj)
        if hit is not None:
            return hit
        from scheduling_framework.api import resource as r

        cls: Any = {RESOURCE_CLAIM: r.ResourceClaim, DEVICE_CLASS: r.DeviceClass,
               RESOURCE_SLICE: r.ResourceSlice, DEVICE_TAINT_RULE: r.DeviceTaintRule}[obj.kind]
        typed = cls.from_dict(obj.raw)
        self._typed[obj] = typed
        return typed

    def typed_all(self, objs: Iterable[KubeObject]) -> list[Any]:
        return [self.typed(o) for o in objs]


def apply_taint_rules(slices: list[Any], rules: list[Any], classes: Mapping[str, Any], cel: Any, *,
                      cel_selectors: bool) -> list[Any]:
    """``slices`` (typed) with each device's taints extended by those of the ``rules`` (typed DeviceTaintRules,
    in order) that select it, as upstream's ResourceSlice tracker does: driver, pool and device name must match.
    With ``cel_selectors`` (the 1.34 tracker; the API dropped both fields in 1.35) a rule's ``deviceClassName``
    and ``selectors`` count too: a rule naming a DeviceClass that does not exist taints nothing; the class's and
    the rule's CEL selectors must all be true (a runtime error leaves the device untainted), and a selector that
    does not compile makes the tracker fail on the slice, which then is not listed at all. Without it they are
    ignored. Untouched slices are returned as they are."""
    out = []
    for s in slices:
        spec = s.spec
        driver, pool = spec.driver, spec.pool.name
        devices = []
        changed = False
        try:
            for d in spec.devices:
                extra = tuple(r.taint for r in rules if r.matches(driver, pool, d.name)
                              and (not cel_selectors or _cel_selects(r, d, driver, classes, cel)))
                if extra:
                    d = attrs.evolve(d, taints=(*d.taints, *extra))
                    changed = True
                devices.append(d)
        except CELCompileError:
            continue
        out.append(attrs.evolve(s, spec=attrs.evolve(spec, devices=tuple(devices))) if changed else s)
    return out


def _cel_selects(rule: Any, device: Any, driver: str, classes: Mapping[str, Any], cel: Any) -> bool:
    sel = rule.selector
    if sel is None:
        return True
    exprs: list[str] = []
    if sel.device_class_name is not None:
        cls = classes.get(sel.device_class_name)
        if cls is None:
            return False
        exprs += [x.expression for x in cls.spec.selectors]
    exprs += [x.expression for x in sel.selectors]
    for expr in exprs:
        try:
            if not cel.matches(expr, device, driver, True):
                return False
        except CELRuntimeError:
            return False
    return True


_managers: weakref.WeakKeyDictionary[ObjectStore, DraManager] = weakref.WeakKeyDictionary()
_managers_lock = threading.Lock()


def manager_for(store: ObjectStore) -> DraManager:
    """The one DraManager of ``store`` (shared by every profile's plugin reading that store)."""
    with _managers_lock:
        m = _managers.get(store)
        if m is None:
            m = _managers[store] = DraManager(store)
        return m
