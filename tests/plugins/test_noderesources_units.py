"""Direct unit tests for the noderesources package: the upstream cases the fixtures skip, the public
``fits`` API with its per-resource details, args handling, and invariants of the scoring strategies."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import plugins_intree
from plugins_intree.noderesources import BalancedAllocation, Fit, InsufficientResource, fits
from plugins_intree.noderesources.balanced_allocation import balanced_resource_scorer
from plugins_intree.noderesources.least_allocated import least_resource_scorer
from plugins_intree.noderesources.most_allocated import most_resource_scorer
from plugins_intree.noderesources.requested_to_capacity_ratio import (
    build_requested_to_capacity_ratio_scorer,
    requested_to_capacity_ratio_scorer,
)
from plugins_intree.noderesources.resource_allocation import ResourceAllocationScorer, pod_resource_request
from plugins_intree.noderesources.shape_score import FunctionShapePoint, build_broken_linear_function, div_trunc
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, PluginError
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code

ONE_MI = 1024 * 1024
DEFAULT_CPU = 100
DEFAULT_MEM = 200 * ONE_MI


def pod(name: str = "p", containers: list[dict[str, Any]] | None = None, init: list[dict[str, Any]] | None = None,
        overhead: dict[str, str] | None = None, node: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": containers or []}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": spec})


def ctr(name: str, requests: dict[str, str] | None = None, restart: str = "") -> dict[str, Any]:
    c: dict[str, Any] = {"name": name}
    if requests is not None:
        c["resources"] = {"requests": requests}
    if restart:
        c["restartPolicy"] = restart
    return c


def node(name: str, allocatable: dict[str, str]) -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"capacity": allocatable, "allocatable": allocatable}})


# --- requested_to_capacity_ratio_test.go TestBrokenLinearFunction -------------------------------------

BROKEN_LINEAR = [
    pytest.param([(10, 1), (90, 9)],
                 [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9),
                  (110, 9)], id="case_0"),
    pytest.param([(0, 2), (40, 10), (100, 0)],
                 [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)], id="case_1"),
    pytest.param([(0, 2), (40, 2), (100, 2)],
                 [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)], id="case_2"),
]


@pytest.mark.parametrize(("points", "assertions"), BROKEN_LINEAR)
def test_broken_linear_function(points: list[tuple[int, int]], assertions: list[tuple[int, int]]) -> None:
    fn = build_broken_linear_function([FunctionShapePoint(u, s) for u, s in points])
    for p, expected in assertions:
        assert fn(p) == expected, p


def test_broken_linear_function_truncates_toward_zero_on_falling_segments() -> None:
    # 100 + (-100 * 10) / 30 = 100 - 33.3..: Go truncates the quotient to -33, giving 67 (flooring gives 66).
    fn = build_broken_linear_function([FunctionShapePoint(0, 100), FunctionShapePoint(30, 0)])
    assert fn(10) == 67
    assert fn(20) == 34


def test_broken_linear_function_needs_a_point() -> None:
    with pytest.raises(ValueError, match="at least one point"):
        build_broken_linear_function([])


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6).filter(bool))
def test_div_trunc_matches_go_integer_division(a: int, b: int) -> None:
    q = div_trunc(a, b)
    assert q == int(a / b) or abs(a) > 2**52  # float check is exact in this range
    assert abs(q * b) <= abs(a)


# --- resource_allocation_test.go TestResourceAllocationScorerCalculateRequests -----------------------

CALCULATE_REQUESTS = [
    ("overhead only", pod(overhead={"cpu": "1", "memory": "1Mi"}), 1000, ONE_MI),
    ("1x requestless container", pod(containers=[ctr("a")]), DEFAULT_CPU, DEFAULT_MEM),
    ("2x requestless container", pod(containers=[ctr("a"), ctr("b")]), 2 * DEFAULT_CPU, 2 * DEFAULT_MEM),
    ("request container + requestless container",
     pod(containers=[ctr("a", {"cpu": "1", "memory": "1Mi"}), ctr("b")]), 1000 + DEFAULT_CPU, ONE_MI + DEFAULT_MEM),
    ("container + requestless container + overhead",
     pod(containers=[ctr("a", {"cpu": "1", "memory": "1Mi"}), ctr("b")], overhead={"cpu": "1", "memory": "1Mi"}),
     2000 + DEFAULT_CPU, 2 * ONE_MI + DEFAULT_MEM),
    ("init container + container + requestless container + overhead",
     pod(containers=[ctr("a", {"cpu": "1", "memory": "1Mi"}), ctr("b")], init=[ctr("i", {"cpu": "3"})],
         overhead={"cpu": "1", "memory": "1Mi"}),
     4000, 2 * ONE_MI + DEFAULT_MEM),
    ("requestless init container + small init container + small container ",
     pod(containers=[ctr("a", {"cpu": "3m", "memory": "3"})],
         init=[ctr("i0"), ctr("i1", {"cpu": "1m", "memory": "1"})]),
     DEFAULT_CPU, DEFAULT_MEM),
    ("requestless init container + small init container + small container + requestless container ",
     pod(containers=[ctr("a", {"cpu": "3m", "memory": "3"}), ctr("b")],
         init=[ctr("i0"), ctr("i1", {"cpu": "1m", "memory": "1"})]),
     3 + DEFAULT_CPU, 3 + DEFAULT_MEM),
]


@pytest.mark.parametrize(("name", "p", "cpu", "memory"), CALCULATE_REQUESTS, ids=[c[0] for c in CALCULATE_REQUESTS])
def test_calculate_pod_resource_request(name: str, p: Pod, cpu: int, memory: int) -> None:
    assert pod_resource_request(p, "cpu", non_zero=True) == cpu
    assert pod_resource_request(p, "memory", non_zero=True) == memory
    scorer = ResourceAllocationScorer("x", (ResourceSpec("cpu"), ResourceSpec("memory")), lambda *a: 0,
                                      use_requested=False)
    assert scorer.pod_requests(p) == (cpu, memory)


def test_explicit_zero_request_is_not_defaulted() -> None:
    p = pod(containers=[ctr("a", {"cpu": "0", "memory": "0"})])
    assert pod_resource_request(p, "cpu", non_zero=True) == 0
    assert pod_resource_request(p, "memory", non_zero=True) == 0


def test_real_requests_have_no_defaults() -> None:
    p = pod(containers=[ctr("a")])
    assert pod_resource_request(p, "cpu", non_zero=False) == 0
    scorer = ResourceAllocationScorer("x", (ResourceSpec("cpu"), ResourceSpec("memory")), lambda *a: 0,
                                      use_requested=True)
    assert scorer.pod_requests(p) == (0, 0)


# --- least/most_allocated_test.go cases the fixtures cannot express ----------------------------------


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
def test_resources_not_set_score_is_an_error(strategy: str) -> None:
    # "Resources not set, pods scheduled with error": config defaulting would fill resources in.
    plugin = Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, ())))
    p = pod(containers=[ctr("a", {"cpu": "1000", "memory": "2000"}), ctr("b", {"cpu": "2000", "memory": "3000"})])
    state = CycleState()
    ni = NodeInfo(node("node1", {"cpu": "4000", "memory": "10000", "pods": "32"}))
    assert plugin.pre_score(state, p, [ni]) is None
    score, status = plugin.score(state, p, ni)
    assert score == 0
    assert status is not None and status.code == Code.ERROR and status.reasons == ["resources not found"]


@pytest.mark.parametrize(("strategy", "resources", "field"), [
    ("LeastAllocated", [("memory", -1), ("cpu", 1)], "scoringStrategy.resources[0].weight"),
    ("LeastAllocated", [("memory", 1), ("cpu", 0)], "scoringStrategy.resources[1].weight"),
    ("LeastAllocated", [("memory", 1), ("cpu", 101)], "scoringStrategy.resources[1].weight"),
    ("MostAllocated", [("memory", -1), ("cpu", 1)], "scoringStrategy.resources[0].weight"),
    ("MostAllocated", [("memory", 1), ("cpu", 0)], "scoringStrategy.resources[1].weight"),
    ("MostAllocated", [("memory", 101)], "scoringStrategy.resources[0].weight"),
], ids=["least negative", "least zero", "least >100", "most negative", "most zero", "most >100"])
def test_resource_weight_out_of_range_is_rejected(strategy: str, resources: list[tuple[str, int]], field: str) -> None:
    specs = tuple(ResourceSpec(n, w) for n, w in resources)
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, specs))
    with pytest.raises(ConfigError) as exc:
        Fit(args)
    assert any(e.startswith(field) for e in exc.value.errors), exc.value.errors


def test_rtcr_without_shape_is_rejected() -> None:
    with pytest.raises(ConfigError, match="requestedToCapacityRatio"):
        Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("RequestedToCapacityRatio")))


def test_missing_scoring_strategy_is_rejected() -> None:
    with pytest.raises(ConfigError, match="scoringStrategy"):
        Fit(NodeResourcesFitArgs(scoring_strategy=None))


def test_args_forms() -> None:
    assert Fit(None).scorer.name == "LeastAllocated"
    assert [r.name for r in Fit(None).scorer.resources] == ["cpu", "memory"]
    assert Fit({"scoringStrategy": {"type": "MostAllocated"}}).scorer.name == "MostAllocated"
    with pytest.raises(PluginError, match="NodeResourcesFitArgs"):
        Fit(NodeResourcesBalancedAllocationArgs())  # type: ignore[arg-type]
    assert [r.name for r in BalancedAllocation(None).scorer.resources] == ["cpu", "memory"]
    with pytest.raises(ConfigError, match="must be 1"):
        BalancedAllocation(NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 2),)))


def test_plugins_are_registered_under_their_upstream_names() -> None:
    for name, cls in (("NodeResourcesFit", Fit), ("NodeResourcesBalancedAllocation", BalancedAllocation)):
        mod, _, attr = plugins_intree.INTREE_PLUGINS[name].partition(":")
        assert getattr(importlib.import_module(mod), attr) is cls
        assert cls.name == name


# --- fit_test.go: Filter without PreFilter, and wantInsufficientResources details ---------------------


def test_filter_without_prefilter_state_is_an_error() -> None:
    plugin = Fit(None)
    status = plugin.filter(CycleState(), pod(), NodeInfo(node("node1", {})))
    assert status is not None and status.code == Code.ERROR
    assert "PreFilterNodeResourcesFit" in status.message()


STD_NODE = {"cpu": "10m", "memory": "20", "pods": "32", "example.com/aaa": "5", "ephemeral-storage": "20",
            "hugepages-2Mi": "5"}


def _node_with(used: dict[str, str]) -> NodeInfo:
    return NodeInfo(node("node1", STD_NODE), [pod("e1", [ctr("c0", used)], node="node1")])


@pytest.mark.parametrize(("p", "used", "want"), [
    pytest.param(pod(containers=[ctr("c0", {"cpu": "1m", "memory": "1"})]), {"cpu": "10m", "memory": "20"},
                 [InsufficientResource("cpu", "Insufficient cpu", 1, 10, 10),
                  InsufficientResource("memory", "Insufficient memory", 1, 20, 20)], id="too many resources fails"),
    pytest.param(pod(containers=[ctr("c0", {"cpu": "1m", "memory": "1", "example.com/aaa": "10"})]),
                 {"example.com/aaa": "0"},
                 [InsufficientResource("example.com/aaa", "Insufficient example.com/aaa", 10, 0, 5, True)],
                 id="extended resource capacity enforced"),
    pytest.param(pod(containers=[ctr("c0", {"cpu": "1m", "memory": "1", "example.com/aaa": "1"})]),
                 {"example.com/aaa": "5"},
                 [InsufficientResource("example.com/aaa", "Insufficient example.com/aaa", 1, 5, 5)],
                 id="extended resource allocatable enforced"),
    pytest.param(pod(containers=[ctr("c0", {"cpu": "1m", "memory": "1"})], overhead={"cpu": "1m", "memory": "15"}),
                 {"cpu": "5m", "memory": "5"},
                 [InsufficientResource("memory", "Insufficient memory", 16, 5, 20)],
                 id="requests + overhead does not fit for memory"),
    pytest.param(pod(containers=[ctr("c0", {"cpu": "1m", "memory": "1",
                                            "extended.resource.dra.io/something": "1"})]), {},
                 [InsufficientResource("extended.resource.dra.io/something",
                                       "Insufficient extended.resource.dra.io/something", 1, 0, 0, True)],
                 id="extended resource backed by DRA not enabled"),
    pytest.param(pod(containers=[ctr("c0", {"cpu": "1m", "memory": "1"})]), {"cpu": "5m", "memory": "5"}, [],
                 id="both resources fit"),
])
def test_fits_reports_each_insufficient_resource(p: Pod, used: dict[str, str],
                                                 want: list[InsufficientResource]) -> None:
    ni = _node_with(used)
    assert fits(p, ni) == want
    plugin = Fit(None)
    state = CycleState()
    plugin.pre_filter(state, p, [ni])
    status = plugin.filter(state, p, ni)
    if not want:
        assert status is None
    else:
        assert status is not None and status.reasons == [r.reason for r in want]
        unresolvable = any(r.unresolvable for r in want)
        assert status.code == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE)


def test_ignored_resources_apply_to_extended_resources_only() -> None:
    p = pod(containers=[ctr("c0", {"example.com/bbb": "1", "kubernetes.io/something": "1", "hugepages-2Mi": "9"})])
    ni = _node_with({})
    ignored = ["example.com/bbb", "kubernetes.io/something", "hugepages-2Mi"]
    assert [r.resource_name for r in fits(p, ni, ignored)] == ["kubernetes.io/something", "hugepages-2Mi"]
    assert [r.resource_name for r in fits(p, ni, ignored_resource_groups=["example.com", "kubernetes.io"])] == [
        "kubernetes.io/something", "hugepages-2Mi"]
    assert Fit(NodeResourcesFitArgs(ignored_resources=("example.com/bbb",))).fits(p, ni)[0].resource_name == (
        "kubernetes.io/something")


def test_too_many_pods_comes_first_and_is_resolvable() -> None:
    ni = NodeInfo(node("node1", {"cpu": "1m", "pods": "1"}), [pod("e1", [ctr("c0")], node="node1")])
    p = pod(containers=[ctr("c0", {"cpu": "2m"})])
    got = fits(p, ni)
    assert [(r.reason, r.unresolvable) for r in got] == [("Too many pods", False), ("Insufficient cpu", True)]


# --- scoring strategies -------------------------------------------------------------------------------


def test_rtcr_rounds_half_away_from_zero() -> None:
    # shape identity on 0..100: resource scores are the utilizations 6 and 7; (6 + 7) / 2 = 6.5 -> 7
    scorer = build_requested_to_capacity_ratio_scorer(
        [FunctionShapePoint(0, 0), FunctionShapePoint(100, 100)], [ResourceSpec("a"), ResourceSpec("b")])
    assert scorer([6, 7], [0, 0], [100, 100]) == 7
    assert scorer([6, 8], [0, 0], [100, 100]) == 7


def test_rtcr_zero_scores_do_not_count_toward_the_mean() -> None:
    scorer = requested_to_capacity_ratio_scorer([ResourceSpec("a"), ResourceSpec("b")],
                                                [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])
    assert scorer([0, 50], [0, 0], [100, 100]) == 50  # resource "a" scores 0 and is left out
    assert scorer([200, 0], [0, 0], [100, 100]) == 100  # over capacity scores as full utilization


def test_balanced_best_effort_pod_is_skipped_or_scored_zero() -> None:
    plugin = BalancedAllocation(None)
    p = pod(containers=[ctr("c0")])
    ni = NodeInfo(node("node1", {"cpu": "4", "memory": "4Gi"}))
    state = CycleState()
    status = plugin.pre_score(state, p, [ni])
    assert status is not None and status.code == Code.SKIP
    assert plugin.score(CycleState(), p, ni) == (0, None)


def test_balanced_score_rewards_evening_out() -> None:
    # cpu full, memory empty (balance 50): a memory-only pod filling memory evens it out (balance 100)
    assert balanced_resource_scorer([10, 10], [10, 0], [10, 10]) == 100
    # cpu 50% used, memory 0% (75) -> both 50% (100): 50 + (50 + 25) / 2, truncated
    assert balanced_resource_scorer([5, 5], [5, 0], [10, 10]) == 87
    # a pod that changes nothing scores 75
    assert balanced_resource_scorer([5, 5], [5, 5], [10, 10]) == 75


usage = st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**12)), min_size=1, max_size=5)


@given(usage)
def test_strategy_scores_stay_in_range(pairs: list[tuple[int, int]]) -> None:
    requested = [r for r, _ in pairs]
    allocatable = [c for _, c in pairs]
    allocated = [r // 2 for r in requested]
    resources = [ResourceSpec(f"r{i}", 1 + i) for i in range(len(pairs))]
    shape = [UtilizationShapePoint(0, 10), UtilizationShapePoint(50, 3), UtilizationShapePoint(100, 7)]
    for scorer in (least_resource_scorer(resources), most_resource_scorer(resources),
                   requested_to_capacity_ratio_scorer(resources, shape)):
        assert 0 <= scorer(requested, allocated, allocatable) <= 100
    assert 50 <= balanced_resource_scorer(requested, allocated, allocatable) <= 100


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 3), st.integers(0, 12), st.integers(0, 12))
def test_filter_agrees_with_fits(cpu: int, mem: int, pods: int, used_cpu: int, used_mem: int) -> None:
    ni = NodeInfo(node("node1", {"cpu": "20m", "memory": "20", "pods": str(pods)}),
                  [pod("e1", [ctr("c0", {"cpu": f"{used_cpu}m", "memory": str(used_mem)})], node="node1")])
    p = pod(containers=[ctr("c0", {"cpu": f"{cpu}m", "memory": str(mem)})])
    plugin = Fit(None)
    state = CycleState()
    plugin.pre_filter(state, p, [ni])
    status = plugin.filter(state, p, ni)
    want = fits(p, ni)
    assert (status is None) == (not want)
    if status is not None:
        assert status.reasons == [r.reason for r in want]
    assert (cpu > 20 - used_cpu) == any(r.resource_name == "cpu" for r in want)
    assert (cpu > 20) == any(r.resource_name == "cpu" and r.unresolvable for r in want)


def test_rtcr_args_shape_is_scaled_to_node_scores() -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
        "RequestedToCapacityRatio", (ResourceSpec("cpu"),),
        RequestedToCapacityRatioParam((UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)))))
    plugin = Fit(args)
    ni = NodeInfo(node("node1", {"cpu": "4", "pods": "10"}))
    p = pod(containers=[ctr("c0", {"cpu": "1"})])
    assert plugin.score(CycleState(), p, ni) == (25, None)
