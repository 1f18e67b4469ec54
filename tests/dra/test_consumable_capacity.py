"""Consumable capacity request policies (DRAConsumableCapacity, DRAFractionalCapacityRange): upstream's
consumablecapacity_test.go tables, ported as data in tests/fixtures/upstream/dra-consumable-capacity.yaml, run
against the allocator's policy helpers, and a fractional-step allocation."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resource import DeviceCapacity
from scheduling_framework.dra.allocator import (
    Allocator,
    AllocatorError,
    _consumed_quantity,
    _milli,
    _use_milli,
    _violates_policy,
)
from tests.dra import allocator_table as t
from tests.fixture_runner import ROOT

TABLE = yaml.safe_load((ROOT / "tests/fixtures/upstream/dra-consumable-capacity.yaml").read_text())
NAMED = TABLE["quantities"]


def q(text: str) -> Quantity:
    return Quantity.parse(NAMED.get(text, text))


def policy_dict(p: dict[str, Any] | None) -> dict[str, Any] | None:
    if p is None:
        return None
    out: dict[str, Any] = {}
    if "default" in p:
        out["default"] = NAMED.get(p["default"], p["default"])
    rng = {k: NAMED.get(p[k], p[k]) for k in ("min", "max", "step") if k in p}
    if rng:
        out["validRange"] = rng
    if "validValues" in p:
        out["validValues"] = p["validValues"]
    return out


def capacity(value: str, policy: dict[str, Any] | None) -> DeviceCapacity:
    d: dict[str, Any] = {"value": NAMED.get(value, value)}
    pd = policy_dict(policy)
    if pd is not None:
        d["requestPolicy"] = pd
    return DeviceCapacity.from_dict(d, "capacity")


@pytest.mark.parametrize("case", TABLE["violate"], ids=[c["name"] for c in TABLE["violate"]])
def test_violates_policy(case: dict[str, Any]) -> None:
    cap = capacity("1000", case.get("policy"))
    assert _violates_policy(q(case["value"]), cap, case.get("fractional", False)) is case["expect"]


@pytest.mark.parametrize("case", TABLE["consumed"], ids=[c["name"] for c in TABLE["consumed"]])
def test_consumed_capacity(case: dict[str, Any]) -> None:
    cap = capacity(case["capacity"], case.get("policy"))
    requested = None if case["requested"] is None else q(case["requested"])
    if case.get("error"):
        with pytest.raises(AllocatorError, match="cannot be represented in the device's range arithmetic"):
            _consumed_quantity(requested, cap, case.get("fractional", False))
        return
    assert _consumed_quantity(requested, cap, case.get("fractional", False)).cmp(q(case["expect"])) == 0


@pytest.mark.parametrize("case", TABLE["use_milli"], ids=[c["name"] for c in TABLE["use_milli"]])
def test_use_milli(case: dict[str, Any]) -> None:
    rng = capacity("1", case["range"]).request_policy
    assert rng is not None and rng.valid_range is not None
    assert _use_milli(rng.valid_range, case["fractional"]) is case["expect"]


@pytest.mark.parametrize("case", TABLE["safe_milli"], ids=[c["name"] for c in TABLE["safe_milli"]])
def test_safe_milli_value(case: dict[str, Any]) -> None:
    assert _milli(q(case["value"])) == case["expect"]


def test_unrepresentable_request_aborts_even_when_another_capacity_does_not_fit() -> None:
    """testCmpRequestOverCapacityFatalBeatsSoft: capacity-0 is too small (skip the device), capacity-1's request
    cannot be rounded (abort): the abort wins, whatever the order of the capacities."""
    case = {
        "claims": [{"name": "claim-0", "requests": [{"name": "req-0", "exactly": {
            "deviceClassName": "class-a", "capacity": {"requests": {"capacity-0": "2",
                                                                    "capacity-1": NAMED["maxInt64"]}}}}]}],
        "classes": [["class-a", "driver-a"]],
        "slices": [["slice-1", "node-1", "pool-1", "driver-a", [{
            "name": "device-1", "allowMultipleAllocations": True,
            "capacity": {"capacity-0": {"value": "1"},
                         "capacity-1": {"value": NAMED["maxInt64P1"],
                                        "requestPolicy": {"validRange": {"min": "0", "step": "2"}}}}}]]],
    }
    alloc = Allocator(t.features(["ConsumableCapacity"]), t.allocated_state(case),
                      {c.name: c for c in (t.device_class(x) for x in case["classes"])},
                      [t.resource_slice(s) for s in case["slices"]])
    with pytest.raises(AllocatorError, match="cannot be represented"):
        alloc.allocate(t.node(None), [t.claim(c) for c in case["claims"]])


@pytest.mark.parametrize(("features", "consumed"), [
    (["ConsumableCapacity", "FractionalCapacityRange"], "300m"),
    (["ConsumableCapacity"], "1"),
], ids=["fractional-on-rounds-to-the-next-step", "fractional-off-whole-number-steps"])
def test_fractional_step_allocation(features: list[str], consumed: str) -> None:
    """A shareable device with a 0.1 step from 0.2: a request of 250m consumes 300m with
    DRAFractionalCapacityRange (1.37); before, the step arithmetic is whole-number (250m, 200m and 100m all
    round up to 1), so it consumes the whole 1."""
    case = {
        "claims": [{"name": "claim-0", "requests": [{"name": "req-0", "exactly": {
            "deviceClassName": "class-a", "capacity": {"requests": {"bandwidth": "250m"}}}}]}],
        "classes": [["class-a", "driver-a"]],
        "slices": [["slice-1", "node-1", "pool-1", "driver-a", [{
            "name": "device-1", "allowMultipleAllocations": True,
            "capacity": {"bandwidth": {"value": "1", "requestPolicy": {
                "default": "200m", "validRange": {"min": "200m", "max": "1", "step": "100m"}}}}}]]],
    }
    alloc = Allocator(t.features(features), t.allocated_state(case),
                      {c.name: c for c in (t.device_class(x) for x in case["classes"])},
                      [t.resource_slice(s) for s in case["slices"]])
    got = alloc.allocate(t.node(None), [t.claim(c) for c in case["claims"]])
    assert got is not None
    [result] = got[0].results
    assert result.consumed_capacity["bandwidth"].cmp(Quantity.parse(consumed)) == 0
