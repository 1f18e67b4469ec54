"""InterPodAffinity driven directly: the ported upstream fixtures, the shared samples, and unit tests for
the upstream tests that cannot be expressed black-box (PreFilter state, add/remove pod, internal counts).

Fixture cases build the snapshot from the fixture's nodes, pods and namespaces and call the plugin as the
framework would: PreFilter then Filter on every node, or PreScore, Score on every node and NormalizeScore,
then compare with ``expect``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins_intree.interpodaffinity import InterPodAffinity
from plugins_intree.interpodaffinity._terms import aggregate, pod_parse_error
from plugins_intree.interpodaffinity.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    incoming_affinity_anti_affinity_counts,
)
from plugins_intree.interpodaffinity.plugin import _required_terms
from scheduling_framework.api import KubeObject, Node, Pod
from scheduling_framework.config.args import InterPodAffinityArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.state.node_info import PodInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
FILES = sorted((FIXTURES / "upstream").glob("interpodaffinity-*.yaml")) + sorted(
    (FIXTURES / "samples").glob("interpodaffinity-*.yaml"))

BAD_VALUE_DETAIL = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


class Handle:
    """The slice of the framework handle the plugin reads."""

    def __init__(self, snapshot: Snapshot, objects: ObjectStore | None = None) -> None:
        self.snapshot = snapshot
        self.objects = objects if objects is not None else ObjectStore()
        self.parallelizer = None


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


def _as_expect(status: Status | None) -> dict[str, Any]:
    d: dict[str, Any] = {"code": _code(status)}
    if status is not None and status.reasons:
        d["reasons"] = list(status.reasons)
    return d


def _matches(want: dict[str, Any], status: Status | None) -> bool:
    got = _as_expect(status)
    if "reasons" not in want:
        got.pop("reasons", None)
    return got == want


# --- fixtures ------------------------------------------------------------------------------------------


def _cases() -> Iterator[Any]:
    for path in FILES:
        doc = yamlio.load(path.read_text())
        assert doc["plugin"] == "InterPodAffinity"
        for i, case in enumerate(doc["cases"]):
            yield pytest.param(case, id=f"{path.parent.name}/{path.stem}/{i}/{case['name']}")


def _plugin_args(case: dict[str, Any]) -> InterPodAffinityArgs | None:
    for pc in case.get("pluginConfig") or []:
        if pc["name"] == "InterPodAffinity":
            return InterPodAffinityArgs.from_dict(pc.get("args"))
    return None


def _setup(case: dict[str, Any]) -> tuple[InterPodAffinity, Snapshot, Pod]:
    nodes = [Node.from_dict(n) for n in case["nodes"]]
    pods = [Pod.from_dict(p) for p in case.get("pods") or []]
    snapshot = Snapshot.from_objects(nodes, pods)
    objects = ObjectStore(KubeObject.from_dict(o) for o in (case.get("namespaces") or []))
    return InterPodAffinity(_plugin_args(case), Handle(snapshot, objects)), snapshot, Pod.from_dict(case["pod"])


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    plugin, snapshot, pod = _setup(case)
    expect = case["expect"]
    state = CycleState()
    node_infos = snapshot.list()

    if "filter" in case["points"]:
        result, status = plugin.pre_filter(state, pod, node_infos)
        assert result is None
        if "prefilterStatus" in expect:
            assert _matches(expect["prefilterStatus"], status), status
        got: dict[str, dict[str, Any]] = {}
        for ni in node_infos:
            if status is not None and status.is_rejected():
                got[ni.name] = _as_expect(status)
            elif status is not None and status.is_skip():
                got[ni.name] = {"code": "Success"}
            else:
                got[ni.name] = _as_expect(plugin.filter(state, pod, ni))
        assert got == expect["filter"]

    if "score" in case["points"]:
        status = plugin.pre_score(state, pod, node_infos)
        if "prescoreStatus" in expect:
            assert _matches(expect["prescoreStatus"], status), status
        else:
            assert status is None, status
        if status is not None:
            assert "scores" not in expect
            return
        scores = []
        for ni in node_infos:
            s, st_ = plugin.score(state, pod, ni)
            assert st_ is None
            scores.append(NodeScore(ni.name, s))
        if "rawScores" in expect:
            assert {s.name: s.score for s in scores} == expect["rawScores"]
        assert plugin.score_extensions().normalize_score(state, pod, scores) is None
        assert {s.name: s.score for s in scores} == expect["scores"]


def test_fixtures_cover_the_samples() -> None:
    mine = {}
    for path in sorted((FIXTURES / "upstream").glob("interpodaffinity-*.yaml")):
        for case in yamlio.load(path.read_text())["cases"]:
            mine.setdefault(case["name"], []).append(case)
    for path in sorted((FIXTURES / "samples").glob("interpodaffinity-*.yaml")):
        for case in yamlio.load(path.read_text())["cases"]:
            assert case in mine.get(case["name"], []), case["name"]


# --- builders for the unit tests (the upstream test wrappers, as manifests) -------------------------------


def make_pod(name: str, labels: dict[str, str] | None = None, node: str = "", namespace: str = "default",
             affinity: list[dict[str, Any]] | None = None, anti: list[dict[str, Any]] | None = None,
             pref_affinity: list[dict[str, Any]] | None = None,
             pref_anti: list[dict[str, Any]] | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    aff: dict[str, Any] = {}
    if affinity or pref_affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity or [],
                              "preferredDuringSchedulingIgnoredDuringExecution": pref_affinity or []}
    if anti or pref_anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti or [],
                                  "preferredDuringSchedulingIgnoredDuringExecution": pref_anti or []}
    if aff:
        spec["affinity"] = aff
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def make_node(name: str, labels: dict[str, str]) -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})


def term(key: str, op: str, tk: str, values: list[str] | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        req["values"] = values
    return {"labelSelector": {"matchExpressions": [req]}, "topologyKey": tk}


def exists(key: str, tk: str) -> dict[str, Any]:
    return term(key, "Exists", tk)


# --- TestPreFilterDisabled -----------------------------------------------------------------------------


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin = InterPodAffinity(InterPodAffinityArgs(), Handle(Snapshot()))
    node = make_node("n", {})
    from scheduling_framework.state.node_info import NodeInfo

    status = plugin.filter(CycleState(), make_pod("p"), NodeInfo(node))
    assert status is not None and status.code == Code.ERROR
    assert status.reasons == ['error reading "PreFilterInterPodAffinity" from cycleState: not found']


def test_score_without_pre_score_state_is_an_error() -> None:
    plugin = InterPodAffinity(InterPodAffinityArgs(), Handle(Snapshot()))
    from scheduling_framework.state.node_info import NodeInfo

    score, status = plugin.score(CycleState(), make_pod("p"), NodeInfo(make_node("n", {})))
    assert score == 0 and status is not None and status.code == Code.ERROR
    assert status.reasons == ['failed to read "PreScoreInterPodAffinity" from cycleState: not found']


# --- TestPreFilterStateClone ---------------------------------------------------------------------------


def test_pre_filter_state_clone_is_equal_and_independent() -> None:
    pod = make_pod("p")
    source = PreFilterState(pod, (), (), {}, {("name", "node1"): 1, ("name", "node2"): 1},
                            {("name", "nodeA"): 1, ("name", "nodeC"): 2},
                            {("name", "nodeN"): 3, ("name", "nodeM"): 1})
    clone = source.clone()
    assert clone is not source
    for attr in ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts"):
        assert getattr(clone, attr) == getattr(source, attr)
        assert getattr(clone, attr) is not getattr(source, attr)
    clone.affinity_counts[("name", "nodeA")] = 5
    assert source.affinity_counts[("name", "nodeA")] == 1


def test_cycle_state_clone_clones_the_pre_filter_state() -> None:
    pod = make_pod("p", anti=[exists("foo", "region")])
    node = make_node("n1", {"region": "r1"})
    existing = make_pod("e", labels={"foo": ""}, node="n1")
    snapshot = Snapshot.from_objects([node], [existing])
    plugin = InterPodAffinity(None, Handle(snapshot))
    state = CycleState()
    assert plugin.pre_filter(state, pod, snapshot.list()) == (None, None)
    copy = state.clone()
    assert copy.read(PRE_FILTER_STATE_KEY) is not state.read(PRE_FILTER_STATE_KEY)
    plugin.remove_pod(copy, pod, snapshot.list()[0].pods[0], snapshot.list()[0])
    assert copy.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {}
    assert state.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {("region", "r1"): 1}


# --- TestPreFilterStateAddRemovePod --------------------------------------------------------------------

ANTI_FOO_BAR = [term("foo", "In", "region", ["bar"])]
ANTI_COMPLEX = [term("foo", "In", "region", ["bar", "buzz"]),
                term("service", "NotIn", "zone", ["bar", "security", "test"])]
AFFINITY_COMPLEX = ANTI_COMPLEX
ADD_REMOVE_NODES = [make_node("nodeA", {"region": "r1", "zone": "z11"}),
                    make_node("nodeB", {"region": "r1", "zone": "z12"}),
                    make_node("nodeC", {"region": "r2", "zone": "z21"})]

ADD_REMOVE_CASES = [
    pytest.param(
        make_pod("pending", {"foo": "bar"}, anti=ANTI_FOO_BAR),
        [make_pod("p1", {"foo": "bar"}, node="nodeA"), make_pod("p2", node="nodeC", anti=ANTI_FOO_BAR)],
        make_pod("addedPod", {"foo": "bar"}, node="nodeB", anti=ANTI_FOO_BAR),
        {("region", "r1"): 2}, {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
    ),
    pytest.param(
        make_pod("pending", {"foo": "bar"}, anti=ANTI_COMPLEX),
        [make_pod("p1", {"foo": "bar"}, node="nodeA"), make_pod("p2", node="nodeC", anti=ANTI_FOO_BAR)],
        make_pod("addedPod", {"foo": "bar"}, node="nodeA", anti=ANTI_COMPLEX),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod (2)",
    ),
    pytest.param(
        make_pod("pending", {"foo": "bar"}, affinity=AFFINITY_COMPLEX),
        [make_pod("p1", {"foo": "bar"}, node="nodeA"),
         make_pod("p2", node="nodeC", anti=ANTI_FOO_BAR, affinity=AFFINITY_COMPLEX)],
        make_pod("addedPod", {"foo": "bar"}, node="nodeA", anti=ANTI_COMPLEX),
        {}, {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and "
           "removing a pod",
    ),
]


def _state_for(pending: Pod, pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, Snapshot]:
    snapshot = Snapshot.from_objects(ADD_REMOVE_NODES, pods)
    plugin = InterPodAffinity(InterPodAffinityArgs(), Handle(snapshot))
    state = CycleState()
    _, status = plugin.pre_filter(state, pending, snapshot.list())
    assert status is None
    return plugin, state, snapshot


def _counts(s: PreFilterState) -> tuple[dict[Any, int], ...]:
    return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts


@pytest.mark.parametrize(("pending", "existing", "added", "want_anti", "want_affinity"), ADD_REMOVE_CASES)
def test_pre_filter_state_add_remove_pod(pending: Pod, existing: list[Pod], added: Pod,
                                         want_anti: dict[Any, int], want_affinity: dict[Any, int]) -> None:
    _, all_state, _ = _state_for(pending, [*existing, added])
    plugin, state, snapshot = _state_for(pending, existing)
    original = state.read(PRE_FILTER_STATE_KEY).clone()
    node_info = snapshot.get(added.spec.node_name or "")

    assert plugin.pre_filter_extensions().add_pod(state, pending, PodInfo(added), node_info) is None
    s = state.read(PRE_FILTER_STATE_KEY)
    assert s.anti_affinity_counts == want_anti
    assert s.affinity_counts == want_affinity
    assert _counts(s) == _counts(all_state.read(PRE_FILTER_STATE_KEY))

    assert plugin.pre_filter_extensions().remove_pod(state, pending, PodInfo(added), node_info) is None
    assert _counts(state.read(PRE_FILTER_STATE_KEY)) == _counts(original)


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    snapshot = Snapshot.from_objects(ADD_REMOVE_NODES)
    plugin = InterPodAffinity(None, Handle(snapshot))
    status = plugin.add_pod(CycleState(), make_pod("p"), PodInfo(make_pod("q", node="nodeA")), snapshot.list()[0])
    assert status is not None and status.code == Code.ERROR


# --- TestGetTPMapMatchingIncomingAffinityAntiAffinity ---------------------------------------------------


def _normal(*labels: str) -> Pod:
    return make_pod("normal", {k: "" for k in labels}, node="nodeA")


HOST_A = {("hostname", "nodeA"): 1}
TPMAP_CASES = [
    pytest.param([], make_pod("aaa-normal"), {}, {}, id="nil test"),
    pytest.param([_normal("aaa")], make_pod("aaa-normal"), {}, {},
                 id="incoming pod without affinity/anti-affinity causes a no-op"),
    pytest.param([_normal("bbb")],
                 make_pod("aaa-anti", affinity=[exists("aaa", "hostname")], anti=[exists("aaa", "hostname")]),
                 {}, {}, id="no pod has label that violates incoming pod's affinity and anti-affinity"),
    pytest.param([_normal("aaa")],
                 make_pod("affi-antiaffi", affinity=[exists("aaa", "hostname")], anti=[exists("aaa", "hostname")]),
                 HOST_A, HOST_A,
                 id="existing pod matches incoming pod's affinity and anti-affinity - single term case"),
    pytest.param([_normal("aaa", "bbb")],
                 make_pod("affi-antiaffi", affinity=[exists("aaa", "hostname"), exists("bbb", "hostname")],
                          anti=[exists("aaa", "hostname")]),
                 {("hostname", "nodeA"): 2}, HOST_A,
                 id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case"),
    pytest.param([_normal("aaa")],
                 make_pod("affi-antiaffi", affinity=[exists("aaa", "hostname"), exists("bbb", "hostname")],
                          anti=[exists("aaa", "hostname"), exists("bbb", "hostname")]),
                 {}, HOST_A, id="existing pod not match incoming pod's affinity but matches anti-affinity"),
    pytest.param([_normal("aaa", "bbb")],
                 make_pod("anaffi-antiaffiti", affinity=[exists("aaa", "hostname"), exists("ccc", "hostname")],
                          anti=[exists("aaa", "hostname"), exists("ccc", "hostname")]),
                 {}, HOST_A,
                 id="incoming pod's anti-affinity has more than one term - existing pod violates partial term "
                    "- case 1"),
    pytest.param([_normal("bbb")],
                 make_pod("affi-antiaffi", affinity=[exists("aaa", "hostname"), exists("bbb", "hostname")],
                          anti=[exists("aaa", "hostname"), exists("bbb", "hostname")]),
                 {}, HOST_A,
                 id="incoming pod's anti-affinity has more than one term - existing pod violates partial term "
                    "- case 2"),
]


@pytest.mark.parametrize(("existing", "pod", "want_affinity", "want_anti"), TPMAP_CASES)
def test_incoming_affinity_anti_affinity_counts(existing: list[Pod], pod: Pod, want_affinity: dict[Any, int],
                                                want_anti: dict[Any, int]) -> None:
    snapshot = Snapshot.from_objects([make_node("nodeA", {"hostname": "nodeA"})], existing)
    affinity, anti = _required_terms(pod)
    got_affinity, got_anti = incoming_affinity_anti_affinity_counts(affinity, anti, snapshot.list())
    assert got_affinity == want_affinity
    assert got_anti == want_anti


# --- TestPreferredAffinity: "No nodes to score" and the PreScore error message ---------------------------


def test_pre_score_with_no_nodes_skips() -> None:
    plugin = InterPodAffinity(InterPodAffinityArgs(1, False), Handle(Snapshot()))
    status = plugin.pre_score(CycleState(), make_pod("p", {"security": "S2"}), [])
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize(("field", "category", "tk"), [
    ("pref_affinity", "preferredAffinityTerms", "region"),
    ("pref_anti", "preferredAntiAffinityTerms", "az"),
])
def test_pre_score_invalid_label_value_is_an_error(field: str, category: str, tk: str) -> None:
    nodes = [make_node("node1", {"region": "China"}), make_node("node2", {"region": "China"})]
    snapshot = Snapshot.from_objects(nodes)
    plugin = InterPodAffinity(InterPodAffinityArgs(1, False), Handle(snapshot))
    pod = make_pod("p", **{field: [{"weight": 8, "podAffinityTerm": term("security", "In", tk, ["{{.bad-value.}}"])}]})
    status = plugin.pre_score(CycleState(), pod, snapshot.list())
    assert status is not None and status.code == Code.ERROR
    assert 'Invalid value: "{{.bad-value.}}"' in status.message()
    assert status.reasons == [
        f'failed to parse pod: {category}: values[0][security]: Invalid value: "{{{{.bad-value.}}}}": '
        f"{BAD_VALUE_DETAIL}"]


# --- selector validation and messages --------------------------------------------------------------------


def test_parse_error_aggregates_every_category() -> None:
    bad = term("service", "In", "zone", ["{{.bad-value.}}"])
    pod = make_pod("p", affinity=[bad], pref_anti=[{"weight": 1, "podAffinityTerm": bad}])
    detail = f'values[0][service]: Invalid value: "{{{{.bad-value.}}}}": {BAD_VALUE_DETAIL}'
    assert pod_parse_error(pod) == (f"[requiredAffinityTerms: {detail}, preferredAntiAffinityTerms: {detail}]")


def test_parse_error_reports_invalid_label_keys_and_match_labels() -> None:
    pod = make_pod("p", anti=[{"labelSelector": {"matchLabels": {"a/b/c": "x"}}, "topologyKey": "zone"}])
    err = pod_parse_error(pod)
    assert err is not None
    assert err.startswith('requiredAntiAffinityTerms: key: Invalid value: "a/b/c": a qualified name')


def test_parse_error_checks_namespace_selectors() -> None:
    t = term("service", "Exists", "zone")
    t["namespaceSelector"] = {"matchLabels": {"team": "bad value"}}
    err = pod_parse_error(make_pod("p", affinity=[t]))
    assert err is not None and err.startswith('requiredAffinityTerms: values[0][team]: Invalid value: "bad value"')


def test_valid_pods_have_no_parse_error() -> None:
    assert pod_parse_error(make_pod("p", affinity=[exists("a", "zone")], anti=[term("b", "In", "zone", ["x"])])) is None


def test_aggregate_deduplicates() -> None:
    assert aggregate(["a"]) == "a"
    assert aggregate(["a", "a"]) == "a"
    assert aggregate(["a", "b", "a"]) == "[a, b]"


def test_args_validation() -> None:
    with pytest.raises(ValueError, match="hardPodAffinityWeight"):
        InterPodAffinity(InterPodAffinityArgs(101, False), Handle(Snapshot()))
    assert InterPodAffinity({"hardPodAffinityWeight": 7}, Handle(Snapshot())).args == \
        InterPodAffinityArgs(7, False)


# --- behaviour around namespaces -------------------------------------------------------------------------


def test_existing_pod_namespace_selector_reads_the_incoming_pods_namespace_labels() -> None:
    t = exists("app", "zone")
    t["namespaceSelector"] = {"matchLabels": {"team": "a"}}
    existing = make_pod("e", node="n1", namespace="other", anti=[t])
    nodes = [make_node("n1", {"zone": "z1"}), make_node("n2", {"zone": "z2"})]
    snapshot = Snapshot.from_objects(nodes, [existing])
    ns = KubeObject.from_dict({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns-a",
                                                                                      "labels": {"team": "a"}}})
    plugin = InterPodAffinity(None, Handle(snapshot, ObjectStore([ns])))
    for namespace, want in (("ns-a", "Unschedulable"), ("ns-unknown", "Success")):
        state = CycleState()
        pod = make_pod("p", {"app": "x"}, namespace=namespace)
        _, status = plugin.pre_filter(state, pod, snapshot.list())
        if status is not None:
            assert status.code == Code.SKIP and want == "Success"
            continue
        assert _code(plugin.filter(state, pod, snapshot.get("n1"))) == want
        assert plugin.filter(state, pod, snapshot.get("n2")) is None


# --- invariants ------------------------------------------------------------------------------------------

LABEL_KEYS = ("a", "b")
_labels = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(("", "x")), max_size=2)
_term = st.builds(lambda k, tk: exists(k, tk), st.sampled_from(LABEL_KEYS), st.sampled_from(("zone", "host")))
_terms = st.lists(_term, max_size=2)
_pod_spec = st.tuples(_labels, st.sampled_from(("n1", "n2", "n3")), _terms, _terms)
NODES = [make_node("n1", {"zone": "z1", "host": "n1"}), make_node("n2", {"zone": "z1", "host": "n2"}),
         make_node("n3", {"zone": "z2"})]


@settings(max_examples=60, deadline=None)
@given(st.lists(_pod_spec, max_size=5), _pod_spec, _pod_spec)
def test_add_pod_matches_recomputing(existing_specs: list[Any], added_spec: Any, incoming_spec: Any) -> None:
    """PreFilter over pods + added pod equals PreFilter over pods followed by add_pod; remove_pod undoes it."""

    def build(i: int, spec: Any) -> Pod:
        labels, node, aff, anti = spec
        return make_pod(f"p{i}", labels, node=node, affinity=aff, anti=anti)

    existing = [build(i, s) for i, s in enumerate(existing_specs)]
    added = build(99, added_spec)
    labels, _, aff, anti = incoming_spec
    pending = make_pod("incoming", labels, affinity=aff, anti=anti)

    def run(pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, Snapshot, Status | None]:
        snapshot = Snapshot.from_objects(NODES, pods)
        plugin = InterPodAffinity(None, Handle(snapshot))
        state = CycleState()
        _, status = plugin.pre_filter(state, pending, snapshot.list())
        return plugin, state, snapshot, status

    _, full_state, _, full_status = run([*existing, added])
    plugin, state, snapshot, status = run(existing)
    if status is not None or full_status is not None:
        return  # a Skip on either side leaves no state to compare
    before = _counts(state.read(PRE_FILTER_STATE_KEY).clone())
    node_info = snapshot.get(added.spec.node_name or "")
    assert plugin.add_pod(state, pending, PodInfo(added), node_info) is None
    assert _counts(state.read(PRE_FILTER_STATE_KEY)) == _counts(full_state.read(PRE_FILTER_STATE_KEY))
    assert plugin.remove_pod(state, pending, PodInfo(added), node_info) is None
    assert _counts(state.read(PRE_FILTER_STATE_KEY)) == before


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-1000, max_value=1000), min_size=1, max_size=8))
def test_normalized_scores_are_in_range(raw: list[int]) -> None:
    from plugins_intree.interpodaffinity.scoring import PreScoreState, normalize

    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    normalize(PreScoreState({"zone": {"z": 1}}), scores)
    assert all(0 <= s.score <= 100 for s in scores)
    if max(raw) > min(raw):
        assert scores[raw.index(max(raw))].score == 100
        assert scores[raw.index(min(raw))].score == 0
    else:
        assert all(s.score == 0 for s in scores)
