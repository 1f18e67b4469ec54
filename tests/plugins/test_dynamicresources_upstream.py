"""Upstream's TestPlugin table (dynamicresources_test.go), ported as data in
tests/fixtures/upstream/dynamicresources-plugin.yaml, run through the plugin's extension points in the order of
upstream's test loop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from plugins_intree.dynamicresources.plugin import DynamicResources
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.features import FeatureGates
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code, Status
from tests import yamlio
from tests.fixture_runner import ROOT

DATA = yamlio.load((ROOT / "tests/fixtures/upstream/dynamicresources-plugin.yaml").read_text())
FIX = DATA["fixtures"]
CASES = DATA["cases"]
SKIPPED = DATA["skipped"]

# upstream's test defaults: features its table turns on per case are off unless the case says so
UPSTREAM_TEST_GATES = {"DRAAdminAccess": False, "DRAPrioritizedList": False, "DRADeviceTaints": False,
                       "DRADeviceBindingConditions": False, "DRAResourceClaimDeviceStatus": False}


class Handle:
    def __init__(self, objects: ObjectStore, gates: Mapping[str, bool] | FeatureGates,
                 release: str | None = None) -> None:
        self.objects = objects
        self.feature_gates = gates if isinstance(gates, FeatureGates) else dict(gates)
        if release is not None:
            self.kubernetes_version = release  # a case of an older release's table


def check(step: str, want: Mapping[str, Any] | None, got: Status | None, problems: list[str]) -> None:
    code = Code.SUCCESS if got is None else got.code
    if not want:
        if code != Code.SUCCESS:
            problems.append(f"{step}: got {got!r}, want success")
        return
    if str(code) != want["code"]:
        problems.append(f"{step}: code {code}, want {want['code']} ({got.reasons if got else []})")
        return
    if "reasons" in want:
        reasons = got.reasons if got is not None else []
        if want["code"] == "Error":
            # upstream compares error strings by containment
            if not any(want["reasons"][0] in r for r in reasons):
                problems.append(f"{step}: reasons {reasons}, want containing {want['reasons']}")
        elif reasons != want["reasons"]:
            problems.append(f"{step}: reasons {reasons}, want {want['reasons']}")


def check_claims(step: str, store: ObjectStore, want: Mapping[str, Any] | None, problems: list[str]) -> None:
    for name, w in (want or {}).items():
        c = store.get("ResourceClaim", "default", name)
        if c is None:
            problems.append(f"{step}: claim {name} missing")
            continue
        alloc = c.status.get("allocation")
        if "allocated" in w and bool(alloc) != w["allocated"]:
            problems.append(f"{step}: claim {name} allocated={bool(alloc)}, want {w['allocated']}")
        if "reservedFor" in w:
            got = [r.get("uid") for r in c.status.get("reservedFor") or []]
            if got != w["reservedFor"]:
                problems.append(f"{step}: claim {name} reservedFor {got}, want {w['reservedFor']}")
        if "finalizer" in w:
            has = "resource.kubernetes.io/delete-protection" in (c.raw.get("metadata", {}).get("finalizers") or [])
            if has != w["finalizer"]:
                problems.append(f"{step}: claim {name} finalizer={has}, want {w['finalizer']}")
        if "adminAccess" in w:
            results = (alloc or {}).get("devices", {}).get("results", [])
            if not results or any(bool(r.get("adminAccess")) != w["adminAccess"] for r in results):
                problems.append(f"{step}: claim {name} results {results}, want adminAccess={w['adminAccess']}")


def run(case: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    want = case.get("want") or {}
    store = ObjectStore()
    for kind, names in (("claims", case.get("claims")), ("classes", case.get("classes")),
                        ("slices", case.get("slices"))):
        for n in names or []:
            store.add(KubeObject.from_dict(FIX[kind][n]))
    gates: Mapping[str, bool] | FeatureGates = {**UPSTREAM_TEST_GATES, **(case.get("gates") or {})}
    if "release" in case:
        # a case pinned to the release whose wording it expects (that release's defaults: some of the test
        # defaults above are locked on there)
        gates = FeatureGates.for_release(case["release"], case.get("gates") or {})
    pl = DynamicResources(case.get("args"), Handle(store, gates, case.get("release")))
    pod = Pod.from_dict(FIX["pods"][case["pod"]])
    nodes = [NodeInfo(Node.from_dict(FIX["nodes"][n])) for n in case.get("nodes") or ["workerNode"]]
    state = CycleState()

    st = pl.pre_enqueue(pod)
    check("preenqueue", want.get("preenqueue"), st, problems)
    if st is not None and not st.is_success():
        return problems
    _, st = pl.pre_filter(state, pod, [NodeInfo()])
    check("prefilter", want.get("prefilter"), st, problems)
    unschedulable = st is not None and st.is_rejected()
    feasible: list[NodeInfo] = []
    if not unschedulable:
        for ni in nodes:
            st = pl.filter(state, pod, ni)
            check(f"filter/{ni.name}", (want.get("filter") or {}).get(ni.name), st, problems)
            if st is None or st.is_success():
                feasible.append(ni)
            elif st.code == Code.ERROR:
                return problems  # an error aborts scheduling
        unschedulable = not feasible
    scores: list[NodeScore] = []
    if not unschedulable and len(feasible) > 1:
        for ni in feasible:
            sc, st = pl.score(state, pod, ni)
            check(f"score/{ni.name}", None, st, problems)
            if "scores" in want and sc != want["scores"].get(ni.name, 0):
                problems.append(f"score/{ni.name}: {sc}, want {want['scores'].get(ni.name, 0)}")
            scores.append(NodeScore(ni.name, sc))
        pl.normalize_score(state, pod, scores)
        if "normalized" in want and {s.name: s.score for s in scores} != want["normalized"]:
            problems.append(f"normalizeScore: {[(s.name, s.score) for s in scores]}, want {want['normalized']}")
    selected = ""
    if not unschedulable and feasible:
        selected = max(scores, key=lambda s: s.score).name if scores else feasible[0].name
        st = pl.reserve(state, pod, selected)
        rw = want.get("reserve") or {}
        check("reserve", rw if "code" in rw else None, st, problems)
        in_flight = sorted(k.split("/", 1)[1] for k in pl.manager.in_flight)
        if in_flight != sorted(rw.get("inFlight") or []):
            problems.append(f"reserve: in flight {in_flight}, want {rw.get('inFlight') or []}")
        if st is not None and not st.is_success():
            unschedulable = True
    if selected:
        if unschedulable:
            pl.unreserve(state, pod, selected)
        elif "unreserveBeforePreBind" in want:
            pl.unreserve(state, pod, selected)
            check_claims("unreserveBeforePreBind", store, want["unreserveBeforePreBind"].get("claims"), problems)
            if pl.manager.in_flight:
                problems.append(f"unreserveBeforePreBind: still in flight {sorted(pl.manager.in_flight)}")
        else:
            pw = want.get("prebind") or {}
            st = pl.pre_bind(state, pod, selected)
            check("prebind", pw if "code" in pw else None, st, problems)
            check_claims("prebind", store, pw.get("claims"), problems)
            if pl.manager.in_flight:
                problems.append(f"prebind: still in flight {sorted(pl.manager.in_flight)}")
            if "unreserveAfterBindFailure" in want:
                pl.unreserve(state, pod, selected)
                check_claims("unreserveAfterBindFailure", store, want["unreserveAfterBindFailure"].get("claims"),
                             problems)
    elif not feasible:
        pw = want.get("postfilter") or {}
        _, st = pl.post_filter(state, pod, {})
        check("postfilter", pw if "code" in pw else None, st, problems)
        check_claims("postfilter", store, pw.get("claims"), problems)
    return problems


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_plugin(case: Mapping[str, Any]) -> None:
    problems = run(case)
    if case.get("xfail"):
        # a known difference (listed in the data with its reason): the case must still fail, so that a fix
        # is noticed and the mark removed
        assert problems, f"{case['name']} passes now: remove its xfail"
        pytest.xfail(case["xfail"])
    assert problems == []


@pytest.mark.parametrize("case", SKIPPED, ids=[c["name"] for c in SKIPPED])
def test_plugin_skipped(case: Mapping[str, Any]) -> None:
    pytest.skip(case["reason"])


def test_table_is_complete() -> None:
    names = [c["name"] for c in CASES] + [c["name"] for c in SKIPPED]
    assert len(names) == len(set(names))
    assert len(CASES) >= 35
