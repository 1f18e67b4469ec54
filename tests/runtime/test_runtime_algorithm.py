"""The scheduling algorithm of one cycle: upstream schedule_one_test.go TestNumFeasibleNodesToFind, TestSelectHost,
TestFindFitAllError, TestFindFitSomeError, TestFairEvaluationForNodes, TestPreferNominatedNodeFilterCallCounts and
TestSchedulerSchedulePod's PreFilter / Filter / PreScore cases, with the upstream FitError messages."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.runtime.algorithm import (
    Algorithm,
    CycleError,
    FitError,
    num_feasible_nodes_to_find,
)
from scheduling_framework.runtime.framework import Framework, NodePluginScores
from scheduling_framework.state.node_info import PodInfo
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import ERR_REASON_FAKE, build, make_node, make_pod

# --- fakes from upstream pkg/scheduler/testing/framework ------------------------------------------


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> None:
        return None


class MatchFilter:
    """Passes only the node whose name equals the pod's name."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        return None if node_info.name == pod.name else Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class FakeFilter:
    """Fails the nodes in ``codes`` with that code and "injecting failure for pod <name>"; counts calls."""

    def __init__(self, codes: dict[str, Code] | None = None, name: str = "FakeFilter") -> None:
        self.name = name
        self.codes = codes or {}
        self.num_filter_called = 0

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        self.num_filter_called += 1
        code = self.codes.get(node_info.name)
        if code is None:
            return None
        return Status(code, f"injecting failure for pod {pod.name}")


class FakePreFilter:
    def __init__(self, name: str, result: PreFilterResult | None, status: Status | None) -> None:
        self.name = name
        self.result = result
        self.status = status

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        return self.result, self.status

    def pre_filter_extensions(self) -> None:
        return None


class FakePreFilterAndFilter(FakePreFilter):
    def __init__(self, name: str, pre_filter_status: Status, filter_codes: dict[str, Code]) -> None:
        super().__init__(name, None, pre_filter_status)
        self.inner = FakeFilter(filter_codes, name)

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        return self.inner.filter(state, pod, node_info)


class NumericMap:
    """Scores a node by its (numeric) name."""

    name = "NumericMap"

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, None]:
        return int(node_info.name), None


class EqualPrioritizer:
    name = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, None]:
        return 1, None


class FakePreScoreAndScore:
    def __init__(self, name: str, pre_score: Status, score_status: Status) -> None:
        self.name = name
        self.pre_score_status = pre_score
        self.score_status = score_status

    def pre_score(self, state: CycleState, pod: Any, nodes: Any) -> Status:
        return self.pre_score_status

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, Status]:
        return 0, self.score_status


def _algorithm(points: dict[str, list[Any]], node_names: list[str], seed: int = 0, **kwargs: Any
               ) -> tuple[Framework, Algorithm]:
    snapshot = Snapshot.from_objects([make_node(n) for n in node_names])
    fwk = build(points, snapshot=snapshot, **kwargs)
    return fwk, Algorithm(fwk, random.Random(seed), fwk.percentage_of_nodes_to_score)


# --- numFeasibleNodesToFind ---------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "global_", "num_all", "want"), [
    pytest.param(None, None, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(40, None, 10, 10, id="set profile percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(None, None, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(40, None, 1000, 400, id="set profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(40, 100, 1000, 400,
                 id="set global and profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(None, 40, 1000, 400, id="set global percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(None, None, 6000, 300, id="not set percentageOfNodesToScore and nodes number more than 50*125"),
    pytest.param(40, None, 6000, 2400, id="set profile percentageOfNodesToScore and nodes number more than 50*125"),
    pytest.param(5, None, 1000, 100, id="never fewer than minFeasibleNodesToFind"),
    pytest.param(None, None, 100_000, 5000, id="adaptive percentage never below 5"),
    pytest.param(0, 40, 1000, 420, id="profile 0 means adaptive even when global is set"),
])
def test_num_feasible_nodes_to_find(profile: int | None, global_: int | None, num_all: int, want: int) -> None:
    assert num_feasible_nodes_to_find(profile, num_all, global_) == want


# --- selectHost ---------------------------------------------------------------------------------


def _scores(pairs: list[tuple[str, int]]) -> list[NodePluginScores]:
    return [NodePluginScores(n, [], s) for n, s in pairs]


SELECT_HOST_CASES = [
    pytest.param([("machine1.1", 1), ("machine2.1", 2)], {"machine2.1"}, id="unique properly ordered scores"),
    pytest.param([("machine1.1", 1), ("machine1.2", 2), ("machine1.3", 2), ("machine2.1", 2)],
                 {"machine1.2", "machine1.3", "machine2.1"}, id="equal scores"),
    pytest.param([("machine1.1", 3), ("machine1.2", 3), ("machine2.1", 2), ("machine3.1", 1), ("machine1.3", 3)],
                 {"machine1.1", "machine1.2", "machine1.3"}, id="out of order scores"),
]


@pytest.mark.parametrize(("pairs", "possible"), SELECT_HOST_CASES)
def test_select_host(pairs: list[tuple[str, int]], possible: set[str]) -> None:
    fwk, _ = _algorithm({}, ["n"])
    for seed in range(200):
        host = Algorithm(fwk, random.Random(seed)).select_host(_scores(pairs))
        assert host in possible


@pytest.mark.parametrize(("pairs", "possible"), SELECT_HOST_CASES)
def test_select_host_every_tied_top_node_can_win(pairs: list[tuple[str, int]], possible: set[str]) -> None:
    fwk, _ = _algorithm({}, ["n"])
    winners = {Algorithm(fwk, random.Random(seed)).select_host(_scores(pairs)) for seed in range(300)}
    assert winners == possible


def test_select_host_is_reproducible_with_a_seed() -> None:
    fwk, _ = _algorithm({}, ["n"])
    pairs = [(f"n{i}", 5) for i in range(10)]
    runs = {tuple(Algorithm(fwk, random.Random(7)).select_host(_scores(pairs)) for _ in range(3)) for _ in range(3)}
    assert len(runs) == 1


def test_select_host_empty_priority_list() -> None:
    _, algo = _algorithm({}, ["n"])
    with pytest.raises(CycleError):
        algo.select_host([])


# --- findNodesThatFitPod and FitError -------------------------------------------------------------


def test_find_fit_all_error() -> None:
    _, algo = _algorithm({"filter": [TrueFilter(), MatchFilter()]}, ["3", "2", "1"])
    pod = make_pod("nomatch")
    feasible, diagnosis = algo.find_nodes_that_fit_pod(CycleState(), pod)
    assert feasible == []
    assert {n: (st.code, st.reasons, st.plugin) for n, st in diagnosis.node_to_status.items()} == {
        n: (Code.UNSCHEDULABLE, [ERR_REASON_FAKE], "MatchFilter") for n in ("1", "2", "3")}
    assert diagnosis.unschedulable_plugins == {"MatchFilter"}
    assert str(FitError(pod, 3, diagnosis)) == f"0/3 nodes are available: 3 {ERR_REASON_FAKE}."


def test_find_fit_some_error() -> None:
    _, algo = _algorithm({"filter": [TrueFilter(), MatchFilter()]}, ["3", "2", "1"])
    feasible, diagnosis = algo.find_nodes_that_fit_pod(CycleState(), make_pod("1"))
    assert [ni.name for ni in feasible] == ["1"]
    assert sorted(diagnosis.node_to_status) == ["2", "3"]
    assert all(st.reasons == [ERR_REASON_FAKE] for st in diagnosis.node_to_status.values())
    assert diagnosis.unschedulable_plugins == {"MatchFilter"}


def test_schedule_pod_all_nodes_rejected_raises_fit_error_with_histogram() -> None:
    fake = FakeFilter({"1": Code.UNSCHEDULABLE, "2": Code.UNSCHEDULABLE_AND_UNRESOLVABLE})
    _, algo = _algorithm({"filter": [fake, MatchFilter()]}, ["1", "2", "3"])
    with pytest.raises(FitError) as ei:
        algo.schedule_pod(CycleState(), make_pod("x"))
    assert str(ei.value) == (f"0/3 nodes are available: 1 {ERR_REASON_FAKE}, 2 injecting failure for pod x.")


def test_schedule_pod_without_nodes() -> None:
    _, algo = _algorithm({}, [])
    with pytest.raises(CycleError) as ei:
        algo.schedule_pod(CycleState(), make_pod("p"))
    assert str(ei.value) == "no nodes available to schedule pods"


def test_filter_error_aborts_the_cycle() -> None:
    # no Score plugin: the first feasible node ends the search, so the erroring node comes first
    _, algo = _algorithm({"filter": [FakeFilter({"1": Code.ERROR})]}, ["1", "2", "3"])
    with pytest.raises(CycleError) as ei:
        algo.schedule_pod(CycleState(), make_pod("p"))
    assert (ei.value.status.code, ei.value.status.plugin) == (Code.ERROR, "FakeFilter")
    assert str(ei.value) == 'running "FakeFilter" filter plugin: injecting failure for pod p'


U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
BUG_NO_SCORE_ONE_NODE = (
    "BUG: runtime/algorithm.py Algorithm._find_nodes_that_pass_filters looks for numFeasibleNodesToFind nodes even "
    "when the profile has no Score plugin; upstream findNodesThatPassFilters sets numNodesToFind = 1 when "
    "!hasScoring (and no extender filters), so the first feasible node in round-robin order is chosen instead of a "
    "random one among all feasible nodes (schedule_one_test.go TestSchedulerSchedulePod)")

# upstream TestSchedulerSchedulePod cases: points, nodes, pod name, want hosts, want evaluated, want error message
SCHEDULE_POD_CASES = [
    pytest.param({"filter": [FakeFilter({"3": U})], "score": [NumericMap()]}, ["3"], "test-filter", None, None,
                 "0/1 nodes are available: 1 injecting failure for pod test-filter.",
                 id="test with filter plugin returning Unschedulable status"),
    pytest.param({"filter": [FakeFilter({"3": UU})], "score": [NumericMap()]}, ["3"], "test-filter", None, None,
                 "0/1 nodes are available: 1 injecting failure for pod test-filter.",
                 id="test with filter plugin returning UnschedulableAndUnresolvable status"),
    pytest.param({"filter": [FakeFilter({"1": U})], "score": [NumericMap()]}, ["1", "2"], "test-filter", {"2"}, 2,
                 None, id="test with partial failed filter plugin"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter", None, Status(UU, "injected unschedulable status"))]},
                 ["1", "2"], "test-prefilter", None, None,
                 "0/2 nodes are available: injected unschedulable status.",
                 id="test prefilter plugin returning Unschedulable status"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter1", None, None),
                                FakePreFilter("FakePreFilter2", PreFilterResult({"node2"}), None),
                                FakePreFilter("FakePreFilter3", PreFilterResult({"node1", "node2"}), None)]},
                 ["node1", "node2", "node3"], "test-prefilter", {"node2"}, 1, None,
                 id="test prefilter plugin returning node"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter1", None, None),
                                FakePreFilter("FakePreFilter2", PreFilterResult({"node2"}), None),
                                FakePreFilter("FakePreFilter3", PreFilterResult({"node1"}), None)]},
                 ["node1", "node2", "node3"], "test-prefilter", None, None,
                 "0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] "
                 "simultaneously.", id="test prefilter plugin returning non-intersecting nodes"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter1", None, None),
                                FakePreFilter("FakePreFilter2", PreFilterResult(set()), None)]},
                 ["node1"], "test-prefilter", None, None,
                 "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.",
                 id="test prefilter plugin returning empty node set"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter", PreFilterResult({"node2"}), None)],
                  "filter": [FakeFilter({"node2": U})]},
                 ["node1", "node2"], "test-prefilter", None, None,
                 "0/2 nodes are available: 1 injecting failure for pod test-prefilter, 1 node(s) didn't satisfy "
                 "plugin(s) [FakePreFilter].",
                 id="test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter1", None, None),
                                FakePreFilterAndFilter("FakeFilter2", Status(Code.SKIP),
                                                       {n: Code.ERROR for n in ("node1", "node2", "node3")})],
                  "filter": [FakeFilter({"node1": U}, name="FakeFilter1"), "FakeFilter2"],
                  "score": [EqualPrioritizer()]},
                 ["node1", "node2", "node3"], "test-prefilter", {"node2", "node3"}, 3, None,
                 id="test prefilter plugin returning skip"),
    pytest.param({"filter": [TrueFilter()],
                  "preScore": [FakePreScoreAndScore("FakePreScoreAndScorePlugin", Status(Code.SKIP, "fake skip"),
                                                    Status(Code.ERROR, "this score function shouldn't be executed"))],
                  "score": ["FakePreScoreAndScorePlugin"]},
                 ["node1", "node2"], "ignore", {"node1", "node2"}, 2, None, id="test all prescore plugins return skip"),
    pytest.param({"filter": [TrueFilter()]}, ["node1", "node2", "node3"], "pod1", {"node1", "node2", "node3"}, 1,
                 None, id="test without score plugin no extra nodes are evaluated"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter", PreFilterResult({"node1", "node2"}), None)]},
                 ["node1", "node2", "node3"], "test-prefilter", {"node1", "node2"}, 1, None,
                 id="test no score plugin, prefilter plugin returning 2 nodes"),
    pytest.param({"preFilter": [FakePreFilter("FakePreFilter", PreFilterResult({"invalid-node"}), None)],
                  "filter": [TrueFilter()]},
                 ["1", "2"], "test-prefilter", None, None,
                 "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].",
                 id="test prefilter plugin returned an invalid node"),
]


@pytest.mark.parametrize(("points", "nodes", "pod_name", "want_hosts", "want_evaluated", "want_err"),
                         SCHEDULE_POD_CASES)
def test_schedule_pod(points: dict[str, list[Any]], nodes: list[str], pod_name: str, want_hosts: set[str] | None,
                      want_evaluated: int | None, want_err: str | None) -> None:
    _, algo = _algorithm(points, nodes)
    pod = make_pod(pod_name)
    if want_err is not None:
        with pytest.raises(FitError) as ei:
            algo.schedule_pod(CycleState(), pod)
        assert str(ei.value) == want_err
        return
    result = algo.schedule_pod(CycleState(), pod)
    assert want_hosts is not None and result.suggested_host in want_hosts
    assert result.evaluated_nodes == (len(nodes) if want_evaluated is None else want_evaluated)


def test_prefilter_error_aborts_the_cycle() -> None:
    """upstream "test prefilter plugin returning error status"."""
    _, algo = _algorithm({"preFilter": [FakePreFilter("FakePreFilter", None, Status(Code.ERROR,
                                                                                     "injected error status"))]},
                         ["1", "2"])
    with pytest.raises(CycleError) as ei:
        algo.schedule_pod(CycleState(), make_pod("test-prefilter"))
    assert str(ei.value) == 'running PreFilter plugin "FakePreFilter": injected error status'
    assert ei.value.status.plugin == "FakePreFilter"


def test_prefilter_diagnosis_marks_absent_nodes_and_plugins() -> None:
    _, algo = _algorithm({"preFilter": [FakePreFilter("FakePreFilter", PreFilterResult({"node2"}), None)],
                          "filter": [FakeFilter({"node2": U})]}, ["node1", "node2"])
    with pytest.raises(FitError) as ei:
        algo.schedule_pod(CycleState(), make_pod("test-prefilter"))
    d = ei.value.diagnosis
    assert d.unschedulable_plugins == {"FakePreFilter", "FakeFilter"}
    assert (d.absent_nodes_status.code, d.absent_nodes_status.reasons) == (
        UU, ["node(s) didn't satisfy plugin(s) [FakePreFilter]"])
    assert d.pre_filter_msg == ""
    assert set(d.node_to_status) == {"node2"}


def test_fair_evaluation_for_nodes() -> None:
    """upstream TestFairEvaluationForNodes: the round-robin start index walks over all nodes."""
    num_all = 500
    _, algo = _algorithm({"filter": [TrueFilter()], "score": [EqualPrioritizer()]}, [str(i) for i in range(num_all)],
                         percentage_of_nodes_to_score=30)
    nodes_to_find = num_feasible_nodes_to_find(30, num_all)
    assert num_all % nodes_to_find != 0
    for i in range(2 * (num_all // nodes_to_find + 1)):
        feasible, _ = algo.find_nodes_that_fit_pod(CycleState(), make_pod("p"))
        assert len(feasible) == nodes_to_find
        assert algo.next_start_node_index == (i + 1) * nodes_to_find % num_all


@pytest.mark.parametrize(("nominated", "codes", "want_count"), [
    pytest.param("node1", {}, 1, id="pod has the nominated node set, filter is called only once"),
    pytest.param("", {}, 3, id="pod without the nominated pod, filter is called for each node"),
    pytest.param("node1", {"node1": U}, 4, id="nominated pod cannot pass the filter, filter is called for each node"),
])
def test_prefer_nominated_node_filter_call_counts(nominated: str, codes: dict[str, Code], want_count: int) -> None:
    fake = FakeFilter(codes)
    _, algo = _algorithm({"filter": [fake], "score": [EqualPrioritizer()]}, ["node1", "node2", "node3"])
    algo.find_nodes_that_fit_pod(CycleState(), make_pod("p", priority=1000, nominated=nominated))
    assert fake.num_filter_called == want_count


def test_nominated_node_is_chosen_when_it_fits() -> None:
    _, algo = _algorithm({"filter": [TrueFilter()], "score": [NumericMap()]}, ["1", "2", "3"])
    result = algo.schedule_pod(CycleState(), make_pod("p", nominated="1"))
    assert result.suggested_host == "1"


def test_highest_total_score_wins() -> None:
    _, algo = _algorithm({"filter": [TrueFilter()], "score": [NumericMap()]}, ["3", "1", "9", "4"])
    assert algo.schedule_pod(CycleState(), make_pod("p")).suggested_host == "9"


def test_score_plugin_error_aborts_the_cycle() -> None:
    failing = FakePreScoreAndScore("Failing", Status(Code.SUCCESS), Status(Code.ERROR, "no score"))
    _, algo = _algorithm({"preScore": [failing], "score": [failing]}, ["1", "2"])
    with pytest.raises(CycleError) as ei:
        algo.schedule_pod(CycleState(), make_pod("p"))
    assert (ei.value.status.code, ei.value.status.plugin) == (Code.ERROR, "Failing")


@pytest.mark.parametrize(("priority", "want_count"), [
    pytest.param(1000, 1, id="nominated pods have lower priority, predicate is called once"),
    pytest.param(0, 2, id="nominated pods have higher priority, predicate is called twice"),
])
def test_find_fit_predicate_call_counts(priority: int, want_count: int) -> None:
    """upstream TestFindFitPredicateCallCounts, through the algorithm's filtering loop."""
    fake = FakeFilter()
    fwk, algo = _algorithm({"filter": [fake]}, ["1"])
    fwk.nominator.add_nominated_pod(PodInfo(make_pod("nominated", uid="nominated", priority=100)), "1")
    algo.find_nodes_that_fit_pod(CycleState(), make_pod("1", uid="1", priority=priority))
    assert fake.num_filter_called == want_count


@pytest.mark.parametrize("bad", [pytest.param(lambda *a: "no", id="wrong shape"),
                                 pytest.param(lambda *a: 1 / 0, id="raises")])
def test_bad_filter_aborts_the_cycle_naming_the_plugin(bad: Any) -> None:
    fake = FakeFilter()
    fake.filter = bad  # type: ignore[method-assign]
    _, algo = _algorithm({"filter": [TrueFilter(), fake]}, ["1", "2"])
    with pytest.raises(CycleError) as ei:
        algo.schedule_pod(CycleState(), make_pod("p"))
    assert (ei.value.status.code, ei.value.status.plugin) == (Code.ERROR, "FakeFilter")
    assert "FakeFilter" in str(ei.value)
