"""PodTopologySpread driven directly over the ported upstream fixtures (and the shared samples).

Each case builds the snapshot from the fixture's nodes and pods and calls the plugin's extension points as
the framework would: PreFilter then Filter on every node, or (after the other enabled filters) PreScore,
Score on every feasible node and NormalizeScore, then compares with ``expect``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

from plugins_intree.podtopologyspread import PodTopologySpread
from scheduling_framework.api import KubeObject, Node, Pod
from scheduling_framework.api.taints import does_not_schedule_or_execute, find_matching_untolerated_taint
from scheduling_framework.config.args import PodTopologySpreadArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
FILES = sorted((FIXTURES / "upstream").glob("podtopologyspread-*.yaml")) + sorted(
    (FIXTURES / "samples").glob("podtopologyspread-*.yaml"))


class Handle:
    """The slice of the framework handle the plugin reads."""

    def __init__(self, snapshot: Snapshot, objects: ObjectStore) -> None:
        self.snapshot = snapshot
        self.objects = objects
        self.parallelizer = None


def _cases() -> Iterator[Any]:
    for path in FILES:
        doc = yamlio.load(path.read_text())
        assert doc["plugin"] == "PodTopologySpread"
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{path.parent.name}/{path.stem}/{case['name']}")


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


def _plugin_args(case: dict[str, Any]) -> PodTopologySpreadArgs | None:
    for pc in case.get("pluginConfig") or []:
        if pc["name"] == "PodTopologySpread":
            return PodTopologySpreadArgs.from_dict(pc.get("args"))
    return None


def _passes_other_filters(case: dict[str, Any], pod: Pod, node: Node) -> bool:
    for extra in case.get("alsoEnable") or []:
        if extra["name"] == "TaintToleration" and "filter" in extra["points"]:
            if find_matching_untolerated_taint(node.spec.taints, pod.spec.tolerations,
                                               does_not_schedule_or_execute) is not None:
                return False
        elif "filter" in extra["points"] or "preFilter" in extra["points"]:
            raise AssertionError(f"cannot emulate {extra['name']}")
    return True


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    nodes = [Node.from_dict(n) for n in case["nodes"]]
    pods = [Pod.from_dict(p) for p in case.get("pods") or []]
    snapshot = Snapshot.from_objects(nodes, pods)
    objects = ObjectStore(KubeObject.from_dict(o) for o in case.get("extraObjects") or [])
    plugin = PodTopologySpread(_plugin_args(case), Handle(snapshot, objects))
    pod = Pod.from_dict(case["pod"])
    points = case["points"]
    expect = case["expect"]
    state = CycleState()

    if "preFilter" in points or "filter" in points:
        skip_filter = False
        if "preFilter" in points:
            result, status = plugin.pre_filter(state, pod, snapshot.list())
            assert result is None
            if "prefilterStatus" in expect:
                assert _code(status) == expect["prefilterStatus"]["code"]
            else:
                assert status is None
            skip_filter = status is not None and status.code == Code.SKIP
        got: dict[str, Status | None] = {}
        for ni in snapshot.list():
            got[ni.name] = None if skip_filter else plugin.filter(state, pod, ni)
        for name, want in (expect.get("filter") or {}).items():
            assert _code(got[name]) == want["code"], name
            if "reasons" in want:
                st = got[name]
                assert st is not None
                assert st.reasons == want["reasons"], name

    if "score" in points or "preScore" in points:
        feasible = [ni for ni in snapshot.list() if ni.node is not None and _passes_other_filters(case, pod, ni.node)]
        status = plugin.pre_score(state, pod, feasible)
        if "prescoreStatus" in expect:
            assert _code(status) == expect["prescoreStatus"]["code"]
            if status is not None and status.code == Code.SKIP:
                return
        else:
            assert status is None
        scores = []
        for ni in feasible:
            score, st = plugin.score(state, pod, ni)
            assert st is None
            scores.append(NodeScore(ni.name, score))
        if "rawScores" in expect:
            assert {s.name: s.score for s in scores} == expect["rawScores"]
        ext = plugin.score_extensions()
        assert ext.normalize_score(state, pod, scores) is None
        if "scores" in expect:
            assert {s.name: s.score for s in scores} == expect["scores"]


def test_fixture_files_found() -> None:
    names = {p.name for p in FILES}
    assert {"podtopologyspread-filter.yaml", "podtopologyspread-score.yaml", "podtopologyspread-prefilter.yaml",
            "podtopologyspread-prescore.yaml"} <= names
