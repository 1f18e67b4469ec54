"""TaintToleration driven directly over the ported upstream fixtures and the shared sample, plus the
upstream cases the fixtures skip (TaintTolerationComparisonOperators on) as direct unit tests."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from plugins_intree.tainttoleration import TaintToleration
from plugins_intree.tainttoleration.plugin import ERR_REASON_UNTOLERATED, default_normalize_score
from plugins_intree.tainttoleration.tolerations import COMPARISON_OPERATORS_GATE, tolerates
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.taints import Taint, Toleration
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
FILES = [FIXTURES / "upstream" / "tainttoleration.yaml", FIXTURES / "samples" / "tainttoleration.yaml"]


class Handle:
    def __init__(self, snapshot: Snapshot | None = None, gates: dict[str, bool] | None = None) -> None:
        self.snapshot = snapshot
        self.feature_gates = gates or {}


def make_pod(manifest: dict[str, Any]) -> Pod:
    """Pod.from_dict, keeping numeric (Lt/Gt) tolerations the core parser does not accept yet."""
    spec = dict(manifest.get("spec") or {})
    tols = spec.pop("tolerations", None) or []
    pod = Pod.from_dict({**manifest, "spec": spec})
    parsed = tuple(Toleration(t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""), t.get("effect", ""))
                   for t in tols)
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, tolerations=parsed))


def _cases() -> Iterator[Any]:
    for path in FILES:
        doc = yamlio.load(path.read_text())
        assert doc["plugin"] == "TaintToleration"
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{path.parent.name}/{case['name']}")


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    snapshot = Snapshot.from_objects([Node.from_dict(n) for n in case["nodes"]],
                                     [Pod.from_dict(p) for p in case.get("pods") or []])
    plugin = TaintToleration(None, Handle(snapshot))
    pod = make_pod(case["pod"])
    expect = case["expect"]
    state = CycleState()
    if "filter" in case["points"]:
        for name, want in expect["filter"].items():
            got = plugin.filter(state, pod, snapshot.get(name))
            assert _code(got) == want["code"], name
            if "reasons" in want:
                assert got is not None and got.reasons == want["reasons"]
    if "score" in case["points"]:
        assert plugin.pre_score(state, pod, snapshot.list()) is None
        scores = []
        for ni in snapshot.list():
            score, st = plugin.score(state, pod, ni)
            assert st is None
            scores.append(NodeScore(ni.name, score))
        if "rawScores" in expect:
            assert {s.name: s.score for s in scores} == expect["rawScores"]
        assert plugin.score_extensions().normalize_score(state, pod, scores) is None
        assert {s.name: s.score for s in scores} == expect["scores"]


# --- cases the fixtures skip: the comparison-operators gate switched on ---------------------------

def _node(name: str, *taints: tuple[str, str, str]) -> NodeInfo:
    return NodeInfo(Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                                    "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]}}))


def _pod(*tols: tuple[str, str, str, str]) -> Pod:
    return make_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod1", "namespace": "default"},
                     "spec": {"containers": [{"name": "c", "image": "pause"}],
                              "tolerations": [{"key": k, "operator": o, "value": v, "effect": e}
                                              for k, o, v, e in tols]}})


GATED = Handle(gates={COMPARISON_OPERATORS_GATE: True})
UU = "UnschedulableAndUnresolvable"
NS = "NoSchedule"
SLA = "node.kubernetes.io/sla"
LEVEL = "node.example.com/priority-level"


@pytest.mark.parametrize(("tol", "taint", "want"), [
    pytest.param((LEVEL, "Gt", "950", NS), (LEVEL, "800", NS), (UU, ERR_REASON_UNTOLERATED),
                 id="Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold"),
    pytest.param((SLA, "Gt", "750", NS), (SLA, "950", NS), None,
                 id="Pod with Gt toleration can be scheduled on node when taint value is higher than threshold"),
    pytest.param((LEVEL, "Lt", "800", NS), (LEVEL, "950", NS), (UU, ERR_REASON_UNTOLERATED),
                 id="Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold"),
    pytest.param((SLA, "Lt", "950", NS), (SLA, "800", NS), None,
                 id="Pod with Lt toleration can be scheduled on node when taint value is lower than threshold"),
    pytest.param((SLA, "Gt", "950", NS), (SLA, "high", NS),
                 (UU, 'failed to parse taint value "high" as int64: must be a valid decimal integer in canonical form'),
                 id="Pod with Gt toleration cannot be scheduled on node with non-numeric taint value"),
    pytest.param((SLA, "Gt", "750", NS), (SLA, "950", NS), None,
                 id="Pod with Gt toleration can be scheduled when feature gate is enabled and taint value is higher"),
    pytest.param((SLA, "Lt", "950", NS), (SLA, "800", NS), None,
                 id="Pod with Lt toleration can be scheduled when feature gate is enabled and taint value is lower"),
])
def test_filter_with_comparison_operators(tol: tuple[str, str, str, str], taint: tuple[str, str, str],
                                          want: tuple[str, str] | None) -> None:
    got = TaintToleration(None, GATED).filter(CycleState(), _pod(tol), _node("nodeA", taint))
    if want is None:
        assert got is None
    else:
        assert got is not None and (str(got.code), got.reasons) == (want[0], [want[1]])


@pytest.mark.parametrize(("tol", "taints", "want"), [
    pytest.param((SLA, "Gt", "950", "PreferNoSchedule"),
                 {"nodeA": [(SLA, "800", "PreferNoSchedule")], "nodeB": [(SLA, "999", "PreferNoSchedule")]},
                 {"nodeA": 0, "nodeB": 100},
                 id="Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint"),
    pytest.param((SLA, "Lt", "800", "PreferNoSchedule"),
                 {"nodeA": [(SLA, "950", "PreferNoSchedule")], "nodeB": [(SLA, "700", "PreferNoSchedule")]},
                 {"nodeA": 0, "nodeB": 100},
                 id="Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint"),
    pytest.param((SLA, "Gt", "950", "PreferNoSchedule"),
                 {"nodeA": [], "nodeB": [(SLA, "high", "PreferNoSchedule")]},
                 {"nodeA": 100, "nodeB": 0},
                 id="Score ignores parse errors from numeric PreferNoSchedule taint value"),
])
def test_score_with_comparison_operators(tol: tuple[str, str, str, str],
                                         taints: dict[str, list[tuple[str, str, str]]],
                                         want: dict[str, int]) -> None:
    plugin = TaintToleration(None, GATED)
    pod = _pod(tol)
    state = CycleState()
    nodes = [_node(n, *ts) for n, ts in taints.items()]
    assert plugin.pre_score(state, pod, nodes) is None
    scores = []
    for ni in nodes:
        s, st = plugin.score(state, pod, ni)
        assert st is None
        scores.append(NodeScore(ni.name, s))
    assert plugin.normalize_score(state, pod, scores) is None
    assert {s.name: s.score for s in scores} == want


def test_gate_off_numeric_toleration_never_matches() -> None:
    got = TaintToleration(None, None).filter(CycleState(), _pod((SLA, "Gt", "750", NS)), _node("n", (SLA, "950", NS)))
    assert got is not None and got.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_plain_untolerated_taint_wins_over_parse_error() -> None:
    # the node's first taint fails to parse, the second is simply untolerated: the plain reason is reported
    node = _node("n", (SLA, "high", NS), ("dedicated", "user1", NS))
    got = TaintToleration(None, GATED).filter(CycleState(), _pod((SLA, "Gt", "1", NS)), node)
    assert got is not None and got.reasons == [ERR_REASON_UNTOLERATED]


@pytest.mark.parametrize(("value", "message"), [
    ("0700", 'failed to parse taint value "0700" as int64: must be a valid decimal integer in canonical form'),
    ("+5", 'failed to parse taint value "+5" as int64: must be a valid decimal integer in canonical form'),
    ("", 'failed to parse taint value "" as int64: must be non-empty'),
    ("99999999999999999999",
     'failed to parse taint value "99999999999999999999" as int64: strconv.ParseInt: parsing '
     '"99999999999999999999": value out of range'),
])
def test_comparison_parse_errors(value: str, message: str) -> None:
    ok, err = tolerates(Toleration("k", "Gt", "1", NS), Taint("k", value, NS), True)
    assert (ok, err) == (False, message)


def test_invalid_toleration_value_is_reported() -> None:
    ok, err = tolerates(Toleration("k", "Lt", "ten", NS), Taint("k", "5", NS), True)
    assert not ok
    assert err == 'failed to parse toleration value "ten" as int64: must be a valid decimal integer in canonical form'


def test_score_without_pre_score_is_an_error() -> None:
    _, st = TaintToleration(None, None).score(CycleState(), _pod(), _node("n"))
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == ['failed to read "PreScoreTaintToleration" from cycleState: not found']


@pytest.mark.parametrize(("raw", "reverse", "want"), [
    ([0, 0], True, [100, 100]),
    ([0, 0], False, [0, 0]),
    ([1, 2, 0], True, [50, 0, 100]),
    ([1, 3], False, [33, 100]),
])
def test_default_normalize_score(raw: list[int], reverse: bool, want: list[int]) -> None:
    scores = [NodeScore(str(i), s) for i, s in enumerate(raw)]
    default_normalize_score(100, reverse, scores)
    assert [s.score for s in scores] == want


def test_registered_points() -> None:
    from scheduling_framework.interfaces import points_of_class
    assert points_of_class(TaintToleration) == {"filter", "preScore", "score"}
