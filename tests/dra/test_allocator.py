"""Allocator behaviour outside the upstream table: defaults, allocated state from claims, error wording."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.api import Node
from scheduling_framework.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from scheduling_framework.dra import AllocatedState, Allocator, AllocatorError, DeviceID, Features
from scheduling_framework.dra.allocator import DEADLINE_CHECK_STEPS
from scheduling_framework.dra.cel import CELCache
from scheduling_framework.features import FeatureGates, dra_allocator_flags

V1 = "resource.k8s.io/v1"
NODE = Node.from_dict({"kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}})


def gpu_class(expr: str = 'device.driver == "gpu.example.com"') -> DeviceClass:
    return DeviceClass.from_dict({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                  "spec": {"selectors": [{"cel": {"expression": expr}}]}})


def gpu_slice(n: int = 2, node: str = "n1", **device: Any) -> ResourceSlice:
    return ResourceSlice.from_dict({
        "apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
        "spec": {"driver": "gpu.example.com", "pool": {"name": node, "resourceSliceCount": 1}, "nodeName": node,
                 "devices": [{"name": f"gpu-{i}", **device} for i in range(n)]}})


def claim(count: int = 1, name: str = "c", api_version: str = V1, **status: Any) -> ResourceClaim:
    req: dict[str, Any] = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}
    if api_version.endswith("v1beta1"):
        req = {"name": "gpu", "deviceClassName": "gpu", "count": count}
    m: dict[str, Any] = {"apiVersion": api_version, "kind": "ResourceClaim",
                         "metadata": {"name": name, "namespace": "ns"},
                         "spec": {"devices": {"requests": [req]}}}
    if status:
        m["status"] = status
    return ResourceClaim.from_dict(m)


def test_default_features_are_the_newest_release_defaults() -> None:
    f = Features()
    assert (f.admin_access, f.prioritized_list, f.partitionable_devices, f.device_taints,
            f.device_binding_and_status, f.consumable_capacity) == (True,) * 6


def test_allocates_and_respects_other_claims_devices() -> None:
    a = Allocator(Features(), AllocatedState({DeviceID("gpu.example.com", "n1", "gpu-0")}), {"gpu": gpu_class()},
                  [gpu_slice()])
    got = a.allocate(NODE, [claim()])
    assert got is not None and [r.device for r in got[0].results] == ["gpu-1"]
    assert a.allocate(NODE, [claim(2)]) is None


def test_v1beta1_claim_allocates_like_v1() -> None:
    a = Allocator(Features(), AllocatedState(), {"gpu": gpu_class()}, [gpu_slice()])
    one, beta = a.allocate(NODE, [claim()]), a.allocate(NODE, [claim(api_version="resource.k8s.io/v1beta1")])
    assert one == beta


def test_allocated_state_from_claims() -> None:
    alloc = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "d", "pool": "p", "device": "x"},
        {"request": "gpu", "driver": "d", "pool": "p", "device": "admin", "adminAccess": True},
        {"request": "gpu", "driver": "d", "pool": "p", "device": "shared", "shareID": "abcde",
         "consumedCapacity": {"memory": "1Gi"}}]}}}
    state = AllocatedState.from_claims([claim(**alloc), claim(name="other")])
    assert state.allocated_devices == {DeviceID("d", "p", "x")}
    assert state.aggregated_capacity[DeviceID("d", "p", "shared")]["d/memory"].value() == 2**30
    assert state.is_allocated(DeviceID("d", "p", "shared")) and not state.is_allocated(DeviceID("d", "p", "admin"))


def test_shared_cel_cache_is_reused_across_allocators() -> None:
    cache = CELCache(10)
    s = [gpu_slice(4)]
    for _ in range(3):
        assert Allocator(Features(), AllocatedState(), {"gpu": gpu_class()}, s, cache).allocate(NODE, [claim()])
    assert len(cache._programs) == 1


ERRORS = [
    ("class-compile-error", gpu_class("device.driver =="), claim(),
     "class gpu: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:"),
    ("class-runtime-error", gpu_class('device.attributes["x"].missing'), claim(),
     "class gpu: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such key: missing. "
     "consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for "
     "optional fields"),
    ("class-not-bool", gpu_class("device.driver"), claim(),
     "CEL runtime error: CEL result of type string could not be converted to bool"),
    ("unknown-class", None, claim(),
     'claim ns/c, request gpu: could not retrieve device class gpu: deviceclass.resource.k8s.io "gpu" not found'),
]


@pytest.mark.parametrize(("cls", "the_claim", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_name_the_object_and_field(cls: DeviceClass | None, the_claim: ResourceClaim, message: str) -> None:
    a = Allocator(Features(), AllocatedState(), {"gpu": cls} if cls else {}, [gpu_slice()])
    with pytest.raises(AllocatorError) as ei:
        a.allocate(NODE, [the_claim])
    assert message in str(ei.value)
    assert not ei.value.failed_on_node


CEL_WORDING = [
    # up to 1.36: neither the device nor a hint (k8s.io/dynamic-resource-allocation v0.34-v0.36 allocators)
    ("1.34", 'device.attributes["x"].missing', "class gpu: selector #0: CEL runtime error: no such key: missing"),
    ("1.35", 'device.attributes["x"].missing', "class gpu: selector #0: CEL runtime error: no such key: missing"),
    ("1.36", "device.driver", "class gpu: selector #0: CEL runtime error: CEL result of type string could not "
     "be converted to bool: unsupported native conversion from string to 'bool'"),
    ("1.37", 'device.attributes["x"].missing', "class gpu: selector #0 on device gpu.example.com/n1/gpu-0: CEL "
     "runtime error: no such key: missing. consider using CEL optional chaining (.? followed by orValue()) or "
     "guarding the check with has() for optional fields"),
    ("1.37", "device.driver", "class gpu: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: CEL "
     "result of type string could not be converted to bool: unsupported native conversion from string to 'bool'"),
]


@pytest.mark.parametrize(("release", "expression", "message"), CEL_WORDING,
                         ids=[f"{r}-{m.split(': ')[-1][:20]}" for r, _, m in CEL_WORDING])
def test_cel_runtime_error_wording_follows_the_release(release: str, expression: str, message: str) -> None:
    features = Features(**dra_allocator_flags(FeatureGates.for_release(release)))
    a = Allocator(features, AllocatedState(), {"gpu": gpu_class(expression)}, [gpu_slice()])
    with pytest.raises(AllocatorError) as ei:
        a.allocate(NODE, [claim()])
    assert str(ei.value) == message


def test_invalid_pool_fails_only_this_node() -> None:
    dup = ResourceSlice.from_dict({**gpu_slice().to_dict(), "metadata": {"name": "dup"}})
    a = Allocator(Features(), AllocatedState(), {"gpu": gpu_class()},
                  [ResourceSlice.from_dict({**gpu_slice().to_dict(), "spec": {
                      **gpu_slice().to_dict()["spec"], "pool": {"name": "n1", "resourceSliceCount": 2}}}),
                   ResourceSlice.from_dict({**dup.to_dict(), "spec": {
                       **dup.to_dict()["spec"], "pool": {"name": "n1", "resourceSliceCount": 2}}})])
    with pytest.raises(AllocatorError, match="invalid resource pools were encountered") as ei:
        a.allocate(NODE, [claim()])
    assert ei.value.failed_on_node


def test_taints_block_unless_tolerated() -> None:
    s = gpu_slice(1, taints=[{"key": "broken", "effect": "NoSchedule"}])
    a = Allocator(Features(), AllocatedState(), {"gpu": gpu_class()}, [s])
    assert a.allocate(NODE, [claim()]) is None
    assert Allocator(Features(device_taints=False), AllocatedState(), {"gpu": gpu_class()}, [s]).allocate(
        NODE, [claim()]) is not None


def test_timeout_aborts_an_exhaustive_search() -> None:
    # 16 of 32 devices for req-0, then a req-1 that no device satisfies: every combination would be tried.
    c = ResourceClaim.from_dict({
        "apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [
            {"name": "many", "exactly": {"deviceClassName": "gpu", "count": 16}},
            {"name": "none", "exactly": {"deviceClassName": "gpu",
                                         "selectors": [{"cel": {"expression": "false"}}]}}]}}})
    a = Allocator(Features(), AllocatedState(), {"gpu": gpu_class()}, [gpu_slice(32)])
    with pytest.raises(AllocatorError, match="filter operation aborted: context deadline exceeded") as ei:
        a.allocate(NODE, [c], timeout=0.05)
    assert ei.value.timed_out


def _prioritized_claim(first: dict[str, Any]) -> ResourceClaim:
    """One request whose firstAvailable is ``first`` then "all" GPUs."""
    return ResourceClaim.from_dict({
        "apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [{"name": "req", "firstAvailable": [
            {"name": "first", **first}, {"name": "all", "deviceClassName": "gpu", "allocationMode": "All"}]}]}}})


# (first subrequest, devices the API allocates, devices 1.34/1.35's allocator allocates (None: fails))
ALL_AT_INDEX_ONE = [
    pytest.param({"deviceClassName": "nothing", "allocationMode": "All"}, ["gpu-0", "gpu-1"], None,
                 id="first-all-without-devices"),
    pytest.param({"deviceClassName": "nothing", "allocationMode": "ExactCount", "count": 1},
                 ["gpu-0", "gpu-1"], ["gpu-0"], id="first-exact-count-one-unsatisfiable"),
]


@pytest.mark.parametrize(("first", "want", "want_reset"), ALL_AT_INDEX_ONE)
@pytest.mark.parametrize("reset", [False, True], ids=["fixed-1.36", "index-reset-1.35"])
def test_all_subrequest_after_the_first(first: dict[str, Any], want: list[str], want_reset: list[str] | None,
                                        reset: bool) -> None:
    classes = {"gpu": gpu_class(), "nothing": gpu_class('device.driver == "none.example.com"')}
    a = Allocator(Features(all_subrequest_index_reset=reset), AllocatedState(), classes, [gpu_slice()])
    got = a.allocate(NODE, [_prioritized_claim(first)])
    expected = want_reset if reset else want
    if expected is None:
        assert got is None
    else:
        assert got is not None
        assert [(r.request, r.device) for r in got[0].results] == [("req/all", d) for d in expected]


@pytest.mark.parametrize(("sorted_pools", "want"), [(False, "n1-b"), (True, "n1-a")], ids=["listed-1.35", "sorted-1.36"])
def test_pool_search_order(sorted_pools: bool, want: str) -> None:
    # two single-device pools of one driver, listed "b" then "a": 1.35 takes the first listed, 1.36 the first by name
    def pool_slice(pool: str) -> ResourceSlice:
        return ResourceSlice.from_dict({
            "apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"slice-{pool}"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": pool, "resourceSliceCount": 1}, "nodeName": "n1",
                     "devices": [{"name": "gpu-0"}]}})

    a = Allocator(Features(sorted_pools=sorted_pools), AllocatedState(), {"gpu": gpu_class()},
                  [pool_slice("n1-b"), pool_slice("n1-a")])
    got = a.allocate(NODE, [claim()])
    assert got is not None and [r.pool for r in got[0].results] == [want]


class StepClock:
    """A virtual clock that moves one second each time it is read: a search reading it every
    DEADLINE_CHECK_STEPS steps passes a 10 s deadline after about 10 x 256 steps, whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += 1.0
        return self.now


def grouped_slice(per_group: int) -> ResourceSlice:
    """Two groups of ``per_group`` devices (attribute ``group`` a / b)."""
    return gpu_slice_with([{"name": f"{g}-{i}", "attributes": {"group": {"string": g}}}
                           for g in "ab" for i in range(per_group)])


def gpu_slice_with(devices: list[dict[str, Any]]) -> ResourceSlice:
    return ResourceSlice.from_dict({
        "apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
        "spec": {"driver": "gpu.example.com", "pool": {"name": "n1", "resourceSliceCount": 1}, "nodeName": "n1",
                 "devices": devices}})


def matching_claim(requests: int, count: int) -> ResourceClaim:
    """``requests`` requests of ``count`` devices each, all from the same ``group``."""
    return ResourceClaim.from_dict({
        "apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {
            "requests": [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu", "count": count}}
                         for i in range(requests)],
            "constraints": [{"matchAttribute": "gpu.example.com/group"}]}}})


def test_issue_26_matchattribute_search_without_solution_ends_at_the_deadline() -> None:
    # 4 requests x 4 devices, one group of 15 each: no solution, and the exhaustive search would run for hours.
    a = Allocator(Features(), AllocatedState(), {"gpu": gpu_class()}, [grouped_slice(15)])
    clock = StepClock()
    with pytest.raises(AllocatorError, match="filter operation aborted: context deadline exceeded") as ei:
        a.allocate(NODE, [matching_claim(4, 4)], timeout=10.0, clock=clock)
    assert ei.value.timed_out
    # the clock read at the start, at the first step and every DEADLINE_CHECK_STEPS steps until past 10 s
    assert clock.reads == 12
    assert a.num_allocate_one == 10 * DEADLINE_CHECK_STEPS + 1


def test_search_without_timeout_never_reads_the_clock() -> None:
    clock = StepClock()
    a = Allocator(Features(), AllocatedState(), {"gpu": gpu_class()}, [grouped_slice(4)])
    assert a.allocate(NODE, [matching_claim(3, 2)], clock=clock) is None
    assert clock.reads == 0
