"""Upstream's TestPlugin cases for extended resources backed by DRA (DRAExtendedResource), ported as data in
tests/fixtures/upstream/dynamicresources-extended.yaml and run through the plugin's extension points in the order
of upstream's test loop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from plugins_intree.dynamicresources.plugin import EXTENDED_STATUS_FIELD, DynamicResources
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.dra.extended import EXTENDED_RESOURCE_CLAIM_ANNOTATION
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code, Status
from tests import yamlio
from tests.fixture_runner import ROOT

DATA = yamlio.load((ROOT / "tests/fixtures/upstream/dynamicresources-extended.yaml").read_text())
FIX = DATA["fixtures"]
CASES = DATA["cases"]

GATES = {"DRAExtendedResource": True, "DRAAdminAccess": False, "DRAPrioritizedList": False,
         "DRADeviceTaints": False, "DRADeviceBindingConditions": False, "DRAResourceClaimDeviceStatus": False}


class Handle:
    def __init__(self, objects: ObjectStore, gates: Mapping[str, bool]) -> None:
        self.objects = objects
        self.feature_gates = dict(gates)


def _status(st: Status | None) -> dict[str, Any]:
    if st is None:
        return {"code": "Success"}
    return {"code": str(st.code), "reasons": list(st.reasons)}


def _check(step: str, want: Mapping[str, Any] | None, got: Status | None, problems: list[str]) -> None:
    have = _status(got)
    if not want:
        if have["code"] != "Success":
            problems.append(f"{step}: got {have}, want success")
        return
    if have["code"] != want["code"] or ("reasons" in want and have.get("reasons") != want["reasons"]):
        problems.append(f"{step}: got {have}, want {dict(want)}")


def _extended_claims(store: ObjectStore) -> list[KubeObject]:
    return [c for c in store.list("ResourceClaim")
            if c.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"]


def _check_claim(step: str, store: ObjectStore, want: Mapping[str, Any] | None, problems: list[str]) -> None:
    claims = _extended_claims(store)
    if want is None:
        if claims:
            problems.append(f"{step}: unexpected extended-resource claims {[c.name for c in claims]}")
        return
    if len(claims) != 1:
        problems.append(f"{step}: {len(claims)} extended-resource claims, want 1")
        return
    c = claims[0]
    if not c.name.startswith("my-pod-extended-resources-"):
        problems.append(f"{step}: claim name {c.name}")
    if "requests" in want:
        got = [[r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]]
               for r in c.raw["spec"]["devices"]["requests"]]
        if got != want["requests"]:
            problems.append(f"{step}: requests {got}, want {want['requests']}")
    if "allocated" in want:
        results = ((c.status.get("allocation") or {}).get("devices") or {}).get("results") or []
        got = [[r["request"], r["device"]] for r in results]
        if got != want["allocated"]:
            problems.append(f"{step}: allocated {got}, want {want['allocated']}")
    if "reservedFor" in want:
        got = [r.get("uid") for r in c.status.get("reservedFor") or []]
        if got != want["reservedFor"]:
            problems.append(f"{step}: reservedFor {got}, want {want['reservedFor']}")
    if "finalizer" in want:
        has = "resource.kubernetes.io/delete-protection" in (c.raw.get("metadata", {}).get("finalizers") or [])
        if has != want["finalizer"]:
            problems.append(f"{step}: finalizer={has}, want {want['finalizer']}")


def run(case: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    want = case.get("want") or {}
    store = ObjectStore()
    for kind in ("claims", "classes", "slices"):
        for n in case.get(kind) or []:
            store.add(KubeObject.from_dict(FIX[kind][n]))
    pl = DynamicResources(None, Handle(store, GATES))
    pod = Pod.from_dict(FIX["pods"][case["pod"]])
    nodes = [NodeInfo(Node.from_dict(FIX["nodes"][n])) for n in case.get("nodes") or ["workerNode"]]
    state = CycleState()
    _, st = pl.pre_filter(state, pod, nodes)
    _check("prefilter", want.get("prefilter"), st, problems)
    if st is not None and st.code == Code.SKIP:
        return problems
    feasible = []
    for ni in nodes:
        st = pl.filter(state, pod, ni)
        _check(f"filter/{ni.name}", (want.get("filter") or {}).get(ni.name), st, problems)
        if st is None:
            feasible.append(ni)
    if not feasible:
        _, st = pl.post_filter(state, pod, {})
        _check("postfilter", want.get("postfilter"), st, problems)
        for name in want.get("removed") or []:
            if store.get("ResourceClaim", "default", name) is not None:
                problems.append(f"postfilter: claim {name} not removed")
        return problems
    node = feasible[0].name
    st = pl.reserve(state, pod, node)
    _check("reserve", None, st, problems)
    _check_claim("reserve", store, (want.get("reserve") or {}).get("claim"), problems)
    if "unreserveBeforePreBind" in want:
        pl.unreserve(state, pod, node)
        _check_claim("unreserveBeforePreBind", store, want["unreserveBeforePreBind"].get("claim"), problems)
        return problems
    st = pl.pre_bind(state, pod, node)
    _check("prebind", None, st, problems)
    pw = want.get("prebind") or {}
    _check_claim("prebind", store, pw.get("claim"), problems)
    status = store.pod_status.get(pod.uid, {}).get(EXTENDED_STATUS_FIELD)
    if "mappings" in pw:
        got = [[m["containerName"], m["resourceName"], m["requestName"]]
               for m in (status or {}).get("requestMappings", [])]
        if got != pw["mappings"]:
            problems.append(f"prebind: mappings {got}, want {pw['mappings']}")
        claims = _extended_claims(store)
        if status is None or not claims or status["resourceClaimName"] != claims[0].name:
            problems.append(f"prebind: status {status} does not name the claim")
    elif status is not None:
        problems.append(f"prebind: unexpected extendedResourceClaimStatus {status}")
    if "unreserveAfterBindFailure" in want:
        pl.unreserve(state, pod, node)
        _check_claim("unreserveAfterBindFailure", store, want["unreserveAfterBindFailure"].get("claim"), problems)
        if store.pod_status:
            problems.append(f"unreserveAfterBindFailure: pod status left {store.pod_status}")
    if pl.manager.in_flight or pl.manager.created:
        problems.append(f"still in flight: {sorted(pl.manager.in_flight)} {sorted(pl.manager.created)}")
    return problems


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_extended_resource_case(case: Mapping[str, Any]) -> None:
    assert run(case) == []


def test_gate_off_leaves_extended_resources_alone() -> None:
    """DRAExtendedResource off (before 1.36): the pod has no claim, DynamicResources skips it."""
    store = ObjectStore([KubeObject.from_dict(FIX["classes"]["deviceClassWithExtendResourceName"]),
                         KubeObject.from_dict(FIX["slices"]["workerNodeSlice"])])
    pl = DynamicResources(None, Handle(store, {**GATES, "DRAExtendedResource": False}))
    _, st = pl.pre_filter(CycleState(), Pod.from_dict(FIX["pods"]["podWithExtendedResourceName"]), [])
    assert st is not None and st.code == Code.SKIP
