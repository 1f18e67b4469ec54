"""NodeAffinity driven directly over the ported upstream fixtures and the shared sample, as the framework
would call it (PreFilter, its PreFilterResult, Filter; PreScore, Score, NormalizeScore), plus unit tests
of the matching rules the tables touch only indirectly."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

from plugins_intree.nodeaffinity import NodeAffinity
from plugins_intree.nodeaffinity.matching import CompiledTerm, compile_preferred, go_parse_int
from plugins_intree.nodeaffinity.plugin import ERR_REASON_ENFORCED, ERR_REASON_POD
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.selectors import NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm
from scheduling_framework.config.args import NodeAffinityArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import PluginError
from scheduling_framework.interfaces import NodeScore, PreFilterResult
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
FILES = [FIXTURES / "upstream" / "nodeaffinity.yaml", FIXTURES / "samples" / "nodeaffinity.yaml"]


class Handle:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot


def _cases() -> Iterator[Any]:
    for path in FILES:
        doc = yamlio.load(path.read_text())
        assert doc["plugin"] == "NodeAffinity"
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{path.parent.name}/{case['name']}")


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


def _check_status(got: Status | None, want: dict[str, Any], what: str) -> None:
    assert _code(got) == want["code"], what
    if "reasons" in want:
        assert got is not None and got.reasons == want["reasons"], what


def _args(case: dict[str, Any]) -> NodeAffinityArgs | None:
    for pc in case.get("pluginConfig") or []:
        if pc["name"] == "NodeAffinity":
            return NodeAffinityArgs.from_dict(pc.get("args"))
    return None


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    snapshot = Snapshot.from_objects([Node.from_dict(n) for n in case["nodes"]],
                                     [Pod.from_dict(p) for p in case.get("pods") or []])
    plugin = NodeAffinity(_args(case), Handle(snapshot))
    pod = Pod.from_dict(case["pod"])
    points = case["points"]
    expect = case["expect"]
    state = CycleState()

    if "filter" in points or "preFilter" in points:
        result: PreFilterResult | None = None
        pf_status: Status | None = None
        if "preFilter" in points:
            result, pf_status = plugin.pre_filter(state, pod, snapshot.list())
            if "prefilterStatus" in expect:
                want = expect["prefilterStatus"]
                _check_status(pf_status, want, "prefilter")
                if "nodeNames" in want:  # the shared sample's spelling of the PreFilterResult
                    assert result is not None and sorted(result.node_names or ()) == sorted(want["nodeNames"])
            if "prefilterResult" in expect:
                if expect["prefilterResult"] is None:
                    assert result is None
                else:
                    assert result is not None and sorted(result.node_names or ()) == sorted(expect["prefilterResult"])
        for name, want in (expect.get("filter") or {}).items():
            ni = snapshot.get(name)
            if pf_status is not None and pf_status.is_rejected():
                got: Status | None = pf_status
            elif pf_status is not None and pf_status.is_skip():
                got = None
            elif result is not None and result.node_names is not None and name not in result.node_names:
                got = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
            else:
                got = plugin.filter(state, pod, ni)
            _check_status(got, want, name)

    if "score" in points or "preScore" in points:
        if "preScore" in points:
            st = plugin.pre_score(state, pod, snapshot.list())
            if "prescoreStatus" in expect:
                _check_status(st, expect["prescoreStatus"], "prescore")
                if st is not None:
                    return
            else:
                assert st is None
        scores = []
        for ni in snapshot.list():
            s, st = plugin.score(state, pod, ni)
            assert st is None
            scores.append(NodeScore(ni.name, s))
        if "rawScores" in expect:
            assert {x.name: x.score for x in scores} == expect["rawScores"]
        assert plugin.score_extensions().normalize_score(state, pod, scores) is None
        assert {x.name: x.score for x in scores} == expect["scores"]


# --- unit tests ----------------------------------------------------------------------------------

def _node(name: str, labels: dict[str, str] | None = None) -> NodeInfo:
    return NodeInfo(Node.from_dict({"apiVersion": "v1", "kind": "Node",
                                    "metadata": {"name": name, "labels": labels or {}}}))


def _pod(spec: dict[str, Any]) -> Pod:
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": {"containers": [{"name": "c", "image": "pause"}], **spec}})


def _term(*exprs: tuple[str, str, list[str]]) -> NodeSelectorTerm:
    return NodeSelectorTerm(tuple(NodeSelectorRequirement(k, op, tuple(v)) for k, op, v in exprs))


@pytest.mark.parametrize(("value", "want"), [
    ("12", 12), ("-3", -3), ("+4", 4), ("0204", 204), ("", None), ("1_0", None), (" 1", None), ("1.5", None),
    ("9223372036854775807", 2**63 - 1), ("9223372036854775808", None),
])
def test_go_parse_int(value: str, want: int | None) -> None:
    assert go_parse_int(value) == want


@pytest.mark.parametrize(("expr", "labels", "want"), [
    (("k", "Gt", ["5"]), {"k": "6"}, True),
    (("k", "Gt", ["5"]), {"k": "5"}, False),
    (("k", "Lt", ["5"]), {"k": "-1"}, True),
    (("k", "Lt", ["5"]), {"k": "x"}, False),
    (("k", "Gt", ["5"]), {}, False),
    (("k", "NotIn", ["a"]), {}, True),
    (("k", "DoesNotExist", []), {"k": "a"}, False),
    (("k", "In", ["a", "b"]), {"k": "b"}, True),
])
def test_label_requirements(expr: tuple[str, str, list[str]], labels: dict[str, str], want: bool) -> None:
    term = CompiledTerm(_term(expr), "")
    assert not term.errors
    assert term.matches(_node("n", labels).node) is want  # type: ignore[arg-type]


def test_invalid_requirement_makes_the_term_unmatchable() -> None:
    term = CompiledTerm(_term(("k", "Gt", ["1", "2"])), "[0]")
    assert term.errors == ['[0].matchExpressions[0].values: Invalid value: []string{"1", "2"}: '
                           "for 'Gt', 'Lt' operators, exactly one value is required"]
    assert not term.matches(_node("n", {"k": "5"}).node)  # type: ignore[arg-type]


def test_preferred_parse_errors_are_aggregated_with_paths() -> None:
    terms = [PreferredSchedulingTerm(1, _term(("a b", "Exists", []))),
             PreferredSchedulingTerm(0, _term(("also bad", "Exists", []))),  # zero weight: not parsed
             PreferredSchedulingTerm(2, _term(("k", "In", ["bad value!"])))]
    compiled, err = compile_preferred(terms)
    assert compiled is None
    assert err is not None and err.startswith('[[0].matchExpressions[0].key: Invalid value: "a b": name part ')
    assert '[2].matchExpressions[0].values[0][k]: Invalid value: "bad value!": a valid label must be' in err


def test_unsupported_operator_message() -> None:
    term = CompiledTerm(_term(("k", "Like", ["x"])), "[0]")
    assert term.errors == ['[0].matchExpressions[0].operator: Unsupported value: "Like": supported values: '
                           '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"']


def test_match_fields_need_exactly_one_value() -> None:
    pod = _pod({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": ["n1", "n2"]}]}]}}}})
    plugin = NodeAffinity(None, None)
    state = CycleState()
    result, st = plugin.pre_filter(state, pod, [])
    # the PreFilterResult still narrows by the values; the unparseable term then matches no node
    assert st is None and result is not None and result.node_names == {"n1", "n2"}
    got = plugin.filter(state, pod, _node("n1"))
    assert got is not None and got.reasons == [ERR_REASON_POD]


def test_match_fields_not_in() -> None:
    pod = _pod({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]}}}})
    plugin = NodeAffinity(None, None)
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    assert plugin.filter(state, pod, _node("n1")) is not None
    assert plugin.filter(state, pod, _node("n2")) is None


def test_added_affinity_is_checked_before_the_pod_affinity() -> None:
    args = NodeAffinityArgs.from_dict({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}})
    plugin = NodeAffinity(args, None)
    state = CycleState()
    pod = _pod({"nodeSelector": {"x": "y"}})
    assert plugin.pre_filter(state, pod, []) == (None, None)
    got = plugin.filter(state, pod, _node("n", {"zone": "b"}))
    assert got is not None and got.reasons == [ERR_REASON_ENFORCED]
    got = plugin.filter(state, pod, _node("n", {"zone": "a"}))
    assert got is not None and got.reasons == [ERR_REASON_POD]
    assert plugin.filter(state, pod, _node("n", {"zone": "a", "x": "y"})) is None


def test_args_as_mapping_and_broken_added_affinity() -> None:
    assert NodeAffinity({"addedAffinity": {}}, None).added_node_selector is None
    broken = {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["x"]}]}}]}
    with pytest.raises(PluginError, match="the value must be an integer"):
        NodeAffinity({"addedAffinity": broken}, None)  # rejected by NodeAffinityArgs validation
    with pytest.raises(PluginError, match=r"parsing addedAffinity\.preferredDuringSchedulingIgnoredDuringExecution"):
        NodeAffinity(NodeAffinityArgs(added_affinity=broken), None)  # unvalidated args: the plugin's own parse
    with pytest.raises(PluginError, match="args are not of type NodeAffinityArgs"):
        NodeAffinity(42, None)


def test_score_without_pre_score_reports_parse_errors() -> None:
    pod = _pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["x"]}]}}]}}})
    _, st = NodeAffinity(None, None).score(CycleState(), pod, _node("n"))
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == ['[0].matchExpressions[0].values[0]: Invalid value: "x": '
                          "for 'Gt', 'Lt' operators, the value must be an integer"]


def test_required_parse_errors_are_ignored_by_filter() -> None:
    pod = _pod({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "bad key", "operator": "Exists"}]},
            {"matchExpressions": [{"key": "ok", "operator": "Exists"}]}]}}}})
    plugin = NodeAffinity(None, None)
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, _node("n", {"ok": "1"})) is None
    assert plugin.filter(state, pod, _node("n", {"bad key": "1"})) is not None


def test_registered_points() -> None:
    from scheduling_framework.interfaces import points_of_class
    assert points_of_class(NodeAffinity) == {"preFilter", "filter", "preScore", "score"}
    assert NodeAffinity(None, None).pre_filter_extensions() is None


def test_pre_score_reports_a_broken_preferred_term() -> None:
    # upstream TestNodeAffinityPriority "PreScore returns error when an incoming Pod has a broken affinity"
    pod = _pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [{"key": "invalid key", "operator": "In",
                                                           "values": ["bar"]}]}}]}}})
    st = NodeAffinity(None, None).pre_score(CycleState(), pod, [_node("node1", {"foo": "bar"})])
    assert st is not None and st.code == Code.ERROR
    assert st.reasons == [
        "[0].matchExpressions[0].key: Invalid value: \"invalid key\": name part must consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
