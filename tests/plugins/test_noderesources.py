"""NodeResourcesFit and NodeResourcesBalancedAllocation driven directly on the ported upstream tables.

Each fixture case builds a snapshot from its nodes and running pods, then calls the plugin's extension
points listed in ``points`` the way the framework would (PreFilter before Filter, PreScore before Score, a
PreFilter rejection applying to every node, a PreScore Skip meaning no scores) and compares to ``expect``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plugins_intree.noderesources import BalancedAllocation, Fit
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.features import FeatureGates
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from scheduling_framework.versions import NEWEST_RELEASE
from tests import yamlio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLUGINS: dict[str, tuple[type[Any], type[Any]]] = {
    "NodeResourcesFit": (Fit, NodeResourcesFitArgs),
    "NodeResourcesBalancedAllocation": (BalancedAllocation, NodeResourcesBalancedAllocationArgs),
}


def _load(pattern: str) -> list[Any]:
    out = []
    for path in sorted(FIXTURES.glob(pattern)):
        doc = yamlio.load(path.read_text())
        for case in doc["cases"]:
            if doc.get("kubernetesVersion"):
                case = {**case, "kubernetesVersion": doc["kubernetesVersion"]}
            out.append(pytest.param(doc["plugin"], case, id=f"{path.stem}::{case['name']}"))
    return out


UPSTREAM = _load("upstream/noderesources-*.yaml")
SAMPLES = _load("samples/noderesources-*.yaml")


def _make_plugin(plugin: str, case: dict[str, Any]) -> Any:
    cls, args_cls = PLUGINS[plugin]
    raw = next((pc.get("args") for pc in case.get("pluginConfig", ()) if pc["name"] == plugin), None)
    # the release the expectations follow, and the cluster's other objects (DeviceClasses backing extended
    # resources), reach the plugin through its handle, as in a framework
    handle = _Handle(case.get("kubernetesVersion") or NEWEST_RELEASE, case.get("extraObjects") or [])
    return cls(args_cls.from_dict(raw or {}), handle)


class _Handle:
    def __init__(self, kubernetes_version: str, objects: list[dict[str, Any]]) -> None:
        self.kubernetes_version = kubernetes_version
        self.feature_gates = FeatureGates.for_release(kubernetes_version)
        self.objects = ObjectStore(KubeObject.from_dict(o) for o in objects)


def _code(status: Status | None) -> str:
    return str(Code.SUCCESS if status is None else status.code)


def _check_status(got: Status | None, want: dict[str, Any], where: str) -> None:
    assert _code(got) == want["code"], f"{where}: got {got!r}"
    if "reasons" in want:
        assert got is not None and got.reasons == want["reasons"], f"{where}: got {got!r}"


def run_case(plugin: str, case: dict[str, Any]) -> None:
    p = _make_plugin(plugin, case)
    nodes = [Node.from_dict(n) for n in case["nodes"]]
    pods = [Pod.from_dict(m) for m in case.get("pods") or ()]
    pod = Pod.from_dict(case["pod"])
    snapshot = Snapshot.from_objects(nodes, pods)
    points = set(case["points"])
    expect = case["expect"]
    state = CycleState()
    infos = snapshot.list()

    if "filter" in expect:
        node_status: dict[str, Status | None] = {}
        pre_status: Status | None = None
        if "preFilter" in points:
            result, pre_status = p.pre_filter(state, pod, infos)
            assert result is None
            if "prefilterStatus" in expect:
                _check_status(pre_status, expect["prefilterStatus"], "preFilter")
        for ni in infos:
            if pre_status is not None and not pre_status.is_success():
                node_status[ni.name] = pre_status
            else:
                node_status[ni.name] = p.filter(state, pod, ni) if "filter" in points else None
        assert set(node_status) == set(expect["filter"])
        for name, want in expect["filter"].items():
            _check_status(node_status[name], want, f"filter {name}")

    if "scores" in expect or "prescoreStatus" in expect or "rawScores" in expect:
        pre_score: Status | None = None
        if "preScore" in points:
            pre_score = p.pre_score(state, pod, infos)
        if "prescoreStatus" in expect:
            _check_status(pre_score, expect["prescoreStatus"], "preScore")
        skipped = pre_score is not None and pre_score.code == Code.SKIP
        want_scores = expect.get("scores") or expect.get("rawScores")
        if want_scores is not None:
            assert not skipped
            got = {}
            for ni in infos:
                score, status = p.score(state, pod, ni)
                assert status is None, f"score {ni.name}: {status!r}"
                got[ni.name] = score
            # Neither plugin normalizes, so raw and normalized scores are the same.
            assert got == want_scores


@pytest.mark.parametrize(("plugin", "case"), UPSTREAM)
def test_upstream_table(plugin: str, case: dict[str, Any]) -> None:
    run_case(plugin, case)


@pytest.mark.parametrize(("plugin", "case"), SAMPLES)
def test_shared_sample(plugin: str, case: dict[str, Any]) -> None:
    run_case(plugin, case)


def test_fixtures_were_found() -> None:
    assert len(UPSTREAM) >= 100
    assert len(SAMPLES) >= 30
