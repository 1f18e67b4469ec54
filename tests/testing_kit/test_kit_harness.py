"""framework_for / FrameworkHarness: plugins in one call, every extension point answered in plain data."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from scheduling_framework import (
    Code,
    ConfigError,
    CycleState,
    NodeInfo,
    NodeScore,
    PluginError,
    PreFilterResult,
    SchedulingFrameworkError,
    SnapshotError,
    Status,
)
from scheduling_framework.api import Pod
from scheduling_framework.registry import default_registry
from scheduling_framework.runtime import CycleError
from scheduling_framework.testing import (
    TEST_ORIGIN,
    FakeCluster,
    build_registry,
    config_for,
    framework_for,
    make_node,
    make_pod,
)

UNRESOLVABLE = str(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


# --- fake plugins --------------------------------------------------------------------------------


class OnlyLabelled:
    """Filter: nodes labelled ``<labelKey>=<pod namespace>``."""

    name = "OnlyLabelled"

    def __init__(self, args: Any, handle: Any) -> None:
        self.key = (args or {}).get("labelKey", "dedicated")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.node is not None and node_info.node.labels.get(self.key) == pod.namespace:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) not dedicated")


class ByNumber:
    """Score: the number at the end of the node name, times ten; normalized to max 100."""

    name = "ByNumber"

    def __init__(self, args: Any, handle: Any) -> None:
        self.normalize = bool((args or {}).get("normalize"))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return int(node_info.name.rsplit("-", 1)[1]) * 10, None

    def score_extensions(self) -> Any:
        return self if self.normalize else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        top = max(s.score for s in scores)
        for s in scores:
            s.score = s.score * 100 // top
        return None


class Narrow:
    """PreFilter: only the nodes listed in the pod's ``allowed`` annotation (comma-separated); Skip without it."""

    name = "Narrow"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        allowed = pod.annotations.get("allowed")
        if allowed is None:
            return None, Status(Code.SKIP)
        if allowed == "reject":
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "rejected by Narrow")
        state.write("Narrow", allowed)
        return PreFilterResult(allowed.split(",")), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class Recorder:
    """Reserve, Permit, PreBind, PostBind, PreEnqueue: records calls; ``gate`` label gates the pod."""

    name = "Recorder"

    def __init__(self, args: Any, handle: Any) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def pre_enqueue(self, pod: Pod) -> Status | None:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated") if "gate" in pod.labels else None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("Reserve", pod.name, pod.spec.node_name))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("Unreserve", pod.name, node_name))

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        self.calls.append(("Permit", pod.name, node_name))
        return (Status(Code.WAIT), 5.0) if "wait" in pod.labels else (None, 0)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("PreBind", pod.name, node_name))
        return Status(Code.UNSCHEDULABLE, "volume not ready") if "fail" in pod.labels else None

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("PostBind", pod.name, node_name))


def nodes(count: int = 3, cpu: str = "4") -> list[Any]:
    return [make_node().name(f"node-{i}").capacity(cpu=cpu, memory="8Gi") for i in range(1, count + 1)]


# --- building ------------------------------------------------------------------------------------


def test_plugins_by_name_class_instance_and_factory() -> None:
    instance = ByNumber(None, None)
    pair = ("Rec", lambda args, handle: _named(Recorder, "Rec"))
    fw = framework_for(["NodeResourcesFit", OnlyLabelled, instance, pair], nodes=nodes())
    assert sorted(fw.framework.plugins) == ["ByNumber", "DefaultBinder", "NodeResourcesFit", "OnlyLabelled",
                                            "PrioritySort", "Rec"]
    assert fw.plugin("ByNumber") is instance
    assert fw.registry.origin("OnlyLabelled") == TEST_ORIGIN


def _named(cls: type[Any], name: str) -> Any:
    obj = cls(None, None)
    obj.name = name
    return obj


def test_queue_sort_and_binder_are_added_only_when_missing() -> None:
    doc = config_for(["OnlyLabelled"], build_registry([OnlyLabelled])[0])
    enabled = [p["name"] for p in doc["profiles"][0]["plugins"]["multiPoint"]["enabled"]]
    assert enabled == ["PrioritySort", "OnlyLabelled", "DefaultBinder"]
    assert doc["profiles"][0]["plugins"]["multiPoint"]["disabled"] == [{"name": "*"}]
    doc = config_for(["PrioritySort", "DefaultBinder"], default_registry())
    assert [p["name"] for p in doc["profiles"][0]["plugins"]["multiPoint"]["enabled"]] == ["PrioritySort",
                                                                                          "DefaultBinder"]


def test_a_class_given_directly_replaces_the_registered_plugin_of_that_name() -> None:
    class FakeFit:
        name = "NodeResourcesFit"

        def __init__(self, args: Any, handle: Any) -> None:
            self.args = args

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            return None

    fw = framework_for([FakeFit], nodes=nodes(1))
    assert type(fw.plugin("NodeResourcesFit")) is FakeFit
    # the configuration still decodes the in-tree args kind of that name
    assert type(fw.plugin("NodeResourcesFit").args).__name__ == "NodeResourcesFitArgs"
    assert default_registry().origin("NodeResourcesFit") != TEST_ORIGIN  # the shared registry is untouched


def test_with_defaults_adds_the_plugins_to_the_default_profile() -> None:
    fw = framework_for([OnlyLabelled], with_defaults=True, weights={"TaintToleration": 5}, nodes=nodes(1))
    filters = [p["name"] for p in fw.framework.list_plugins()["filter"]]
    assert filters[0] == "NodeUnschedulable" and filters[-1] == "OnlyLabelled"
    assert {"name": "TaintToleration", "weight": 5} in fw.framework.list_plugins()["score"]


def test_a_whole_config_can_be_given() -> None:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "special", "plugins": {"multiPoint": {
               "enabled": [{"name": "PrioritySort"}, {"name": "OnlyLabelled"}, {"name": "DefaultBinder"}],
               "disabled": [{"name": "*"}]}},
               "pluginConfig": [{"name": "OnlyLabelled", "args": {"labelKey": "team"}}]}]}
    fw = framework_for([OnlyLabelled], config=cfg, nodes=[make_node().name("n").label("team", "default")])
    assert fw.profile_name == "special"
    assert fw.filter(make_pod().name("p"))["n"] == {"code": "Success"}


@pytest.mark.parametrize(("call", "error", "message"), [
    pytest.param(lambda: framework_for([type("Nameless", (), {})]), PluginError,
                 "class Nameless has no `name` class attribute", id="class-without-name"),
    pytest.param(lambda: framework_for([42]), PluginError, "cannot enable 42", id="not-a-plugin"),
    pytest.param(lambda: framework_for([("X", 3)]), PluginError, "expected a (name, factory) pair", id="bad-pair"),
    pytest.param(lambda: framework_for([OnlyLabelled, OnlyLabelled]), ConfigError, "listed twice", id="twice"),
    pytest.param(lambda: framework_for(["NoSuchPlugin"]), ConfigError, '"NoSuchPlugin" does not exist',
                 id="unknown-name"),
    pytest.param(lambda: framework_for([OnlyLabelled], weights={"ByNumber": 2}), ConfigError,
                 'weights: plugin "ByNumber" is not enabled', id="weight-for-a-plugin-not-enabled"),
    pytest.param(lambda: framework_for(config={}, args={"a": 1}), ConfigError, "go into the config",
                 id="config-and-args"),
    pytest.param(lambda: framework_for(["NodeResourcesFit"], args={"NodeResourcesFit": {"scoringStrategy": {
        "type": "Nope"}}}), ConfigError, "scoringStrategy.type", id="in-tree-args-rejected"),
])
def test_construction_errors_name_what_is_wrong(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as err:
        call()
    assert message in str(err.value)


# --- one extension point at a time -------------------------------------------------------------


def test_filter_answers_per_node_in_plain_data() -> None:
    fw = framework_for([OnlyLabelled], args={"OnlyLabelled": {"labelKey": "team"}},
                       nodes=[make_node().name("a").label("team", "shop"), make_node().name("b")])
    out = fw.filter(make_pod().name("p").namespace("shop"))
    assert out == {"a": {"code": "Success"},
                   "b": {"code": UNRESOLVABLE, "plugin": "OnlyLabelled", "reasons": ["node(s) not dedicated"]}}
    json.dumps(out)  # plain data


def test_pre_filter_reports_result_skip_and_state() -> None:
    fw = framework_for([Narrow], nodes=nodes())
    assert fw.pre_filter(make_pod().name("p")) == {"code": "Success", "nodes": None, "skipped": ["Narrow"]}
    assert fw.pre_filter(make_pod().name("p").annotation("allowed", "node-3,node-1")) == {
        "code": "Success", "nodes": ["node-1", "node-3"], "skipped": []}
    assert fw.state.read("Narrow") == "node-3,node-1"


def test_filter_applies_pre_filter_results_and_rejections() -> None:
    fw = framework_for([Narrow], nodes=nodes())
    narrowed = fw.filter(make_pod().name("p").annotation("allowed", "node-2"))
    assert narrowed["node-2"] == {"code": "Success"}
    assert narrowed["node-1"] == {"code": UNRESOLVABLE, "reasons": ["node(s) didn't satisfy plugin(s) [Narrow]"]}
    rejected = fw.filter(make_pod().name("p").annotation("allowed", "reject"))
    assert set(rejected) == {"node-1", "node-2", "node-3"}
    assert rejected["node-1"] == {"code": UNRESOLVABLE, "plugin": "Narrow", "reasons": ["rejected by Narrow"]}


def test_feasible_nodes() -> None:
    fw = framework_for(["NodeResourcesFit"], nodes=nodes(2), pods=[make_pod().name("big").req(cpu="3").node("node-1")])
    assert fw.feasible_nodes(make_pod().name("p").req(cpu="2")) == ["node-2"]


def test_score_reports_raw_normalized_and_weighted() -> None:
    fw = framework_for([ByNumber], args={"ByNumber": {"normalize": True}}, weights={"ByNumber": 3}, nodes=nodes(2))
    assert fw.score(make_pod().name("p")) == {
        "node-1": {"ByNumber": {"raw": 10, "normalized": 50, "weighted": 150}},
        "node-2": {"ByNumber": {"raw": 20, "normalized": 100, "weighted": 300}},
    }
    assert fw.total_scores(make_pod().name("p")) == {"node-1": 150, "node-2": 300}


def test_score_defaults_to_feasible_nodes_and_accepts_explicit_ones() -> None:
    fw = framework_for([ByNumber, OnlyLabelled], nodes=[*nodes(2), make_node().name("node-3").label("dedicated", "x")])
    pod = make_pod().name("p").namespace("x")
    assert list(fw.score(pod)) == ["node-3"]
    assert list(fw.score(pod, nodes=["node-1", "node-2"])) == ["node-1", "node-2"]


def test_an_in_tree_plugin_scores_like_the_framework() -> None:
    fw = framework_for(["NodeResourcesFit"], nodes=nodes(2), pods=[make_pod().name("a").req(cpu="2").node("node-1")])
    scores = fw.score(make_pod().name("p").req(cpu="1", memory="1Gi"))
    assert scores["node-2"]["NodeResourcesFit"]["raw"] > scores["node-1"]["NodeResourcesFit"]["raw"]
    assert fw.pre_score(make_pod().name("p").req(cpu="1")) == {"code": "Success", "skipped": []}


def test_a_score_out_of_range_raises_a_cycle_error_naming_the_plugin() -> None:
    fw = framework_for([ByNumber], nodes=[make_node().name("node-11")])
    with pytest.raises(CycleError, match='plugin "ByNumber" returns an invalid score 110') as err:
        fw.score(make_pod().name("p"))
    assert err.value.status.plugin == "ByNumber"


def test_binding_points_see_the_assumed_pod() -> None:
    fw = framework_for([Recorder], nodes=nodes(1))
    rec = fw.plugin("Recorder")
    pod = make_pod().name("p")
    assert fw.reserve(pod, "node-1") == {"code": "Success"}
    assert fw.permit(pod, "node-1") == {"code": "Success"}
    assert fw.pre_bind(make_pod().name("p").label("fail", ""), "node-1") == {
        "code": "Unschedulable", "plugin": "Recorder", "reasons": ["volume not ready"]}
    assert fw.bind(pod, "node-1") == {"code": "Success"}
    fw.post_bind(pod, "node-1")
    fw.unreserve(pod, "node-1")
    assert rec.calls == [("Reserve", "p", "node-1"), ("Permit", "p", "node-1"), ("PreBind", "p", "node-1"),
                         ("PostBind", "p", "node-1"), ("Unreserve", "p", "node-1")]
    assert fw.placements() == {}  # running one point never changes the cluster


def test_permit_wait_leaves_a_waiting_pod() -> None:
    fw = framework_for([Recorder], nodes=nodes(1))
    pod = make_pod().name("p").label("wait", "")
    assert fw.permit(pod, "node-1")["code"] == "Wait"
    assert fw.framework.get_waiting_pod(pod.obj().uid) is not None


def test_pre_enqueue() -> None:
    fw = framework_for([Recorder], nodes=nodes(1))
    assert fw.pre_enqueue(make_pod().name("p")) == {"code": "Success"}
    assert fw.pre_enqueue(make_pod().name("p").label("gate", "")) == {
        "code": UNRESOLVABLE, "plugin": "Recorder", "reasons": ["gated"]}


def test_post_filter_runs_preemption_over_the_rejected_nodes() -> None:
    fw = framework_for(["NodeResourcesFit", "DefaultPreemption"], nodes=nodes(1),
                       pods=[make_pod().name("low").req(cpu="3").priority(1).node("node-1")])
    out = fw.post_filter(make_pod().name("high").req(cpu="2").priority(100))
    assert out["code"] == "Success"
    assert (out["nominatedNode"], out["victims"]) == ("node-1", ["default/low"])


# --- whole cycles --------------------------------------------------------------------------------


def test_schedule_returns_the_cli_json_entry_and_binds() -> None:
    fw = framework_for(["NodeResourcesFit", Recorder], nodes=nodes(2),
                       pods=[make_pod().name("a").req(cpu="3").node("node-1")])
    result = fw.schedule(make_pod().name("p").req(cpu="2"))
    assert set(result) == {"pod", "schedulerName", "outcome", "node", "nominatedNode", "victims", "message",
                           "filter", "scores", "totalScores"}
    assert (result["pod"], result["outcome"], result["node"]) == ("default/p", "Scheduled", "node-2")
    assert result["filter"]["node-1"] == {"code": "Unschedulable", "plugin": "NodeResourcesFit",
                                          "reasons": ["Insufficient cpu"]}
    assert fw.placements() == {"default/a": "node-1", "default/p": "node-2"}
    assert [c[0] for c in fw.plugin("Recorder").calls] == ["Reserve", "Permit", "PreBind", "PostBind"]
    assert fw.node_info("node-2").requested.milli_cpu == 2000


def test_schedule_scores_when_several_nodes_fit() -> None:
    fw = framework_for([ByNumber], nodes=nodes(3))
    result = fw.schedule(make_pod().name("p"))
    assert result["node"] == "node-3"
    assert result["totalScores"] == {"node-1": 10, "node-2": 20, "node-3": 30}


def test_an_unschedulable_pod_is_reported_and_dropped() -> None:
    fw = framework_for(["NodeResourcesFit"], nodes=nodes(2, cpu="1"))
    result = fw.schedule(make_pod().name("p").req(cpu="2"))
    assert result["outcome"] == "Unschedulable"
    assert result["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert len(fw.scheduler.queue) == 0
    assert fw.schedule(make_pod().name("q").req(cpu="1"))["node"] is not None


def test_a_failing_binding_cycle_unreserves() -> None:
    fw = framework_for([Recorder], nodes=nodes(1))
    result = fw.schedule(make_pod().name("p").label("fail", ""))
    assert result["outcome"] == "Unschedulable"
    assert ("Unreserve", "p", "node-1") in fw.plugin("Recorder").calls
    assert fw.placements() == {}


def test_a_gated_pod_is_not_scheduled() -> None:
    fw = framework_for([Recorder], nodes=nodes(1))
    result = fw.schedule(make_pod().name("p").label("gate", ""))
    assert (result["outcome"], result["message"]) == ("Unschedulable", "gated")


def test_schedule_all_orders_by_priority_and_retries_after_preemption() -> None:
    fw = framework_for(["NodeResourcesFit", "DefaultPreemption"], nodes=nodes(1),
                       pods=[make_pod().name("low").req(cpu="3").priority(1).node("node-1")])
    results = fw.schedule_all([make_pod().name("small").req(cpu="1").priority(5),
                               make_pod().name("high").req(cpu="3").priority(100)])
    by_pod = {r["pod"]: r for r in results}
    assert [r["pod"] for r in results] == ["default/small", "default/high"]
    assert by_pod["default/high"]["node"] == "node-1"
    assert "default/low" not in fw.placements()


def test_schedule_all_defaults_to_the_pending_pods_given() -> None:
    fw = framework_for(["NodeResourcesFit"], nodes=nodes(1),
                       pods=[make_pod().name("a").req(cpu="3"), make_pod().name("b").req(cpu="3")])
    assert [(r["pod"], r["outcome"]) for r in fw.schedule_all()] == [("default/a", "Scheduled"),
                                                                     ("default/b", "Unschedulable")]
    assert fw.schedule_all() == []


def test_seed_makes_tie_breaking_reproducible() -> None:
    def run(seed: int) -> list[str]:
        fw = framework_for(["NodeResourcesFit"], nodes=nodes(5), seed=seed)
        return [fw.schedule(make_pod().name(f"p{i}"))["node"] for i in range(5)]

    assert run(3) == run(3)


@pytest.mark.parametrize(("pod", "error", "message"), [
    pytest.param(make_pod().name("p").node("node-1"), SchedulingFrameworkError, "only pending pods are scheduled",
                 id="bound-pod"),
    pytest.param(make_pod().name("running"), SnapshotError, "pod default/running is already running on node",
                 id="same-pod-twice"),
])
def test_schedule_refuses_pods_that_are_not_pending(pod: Any, error: type[Exception], message: str) -> None:
    fw = framework_for([], nodes=nodes(1), pods=[make_pod().name("running").node("node-1")])
    with pytest.raises(error, match=message):
        fw.schedule(pod)


def test_cluster_changes_are_seen_by_the_next_call() -> None:
    fw = framework_for(["NodeResourcesFit"], nodes=nodes(1, cpu="2"))
    pod = make_pod().name("p").req(cpu="2")
    fw.add_pod(make_pod().name("a").req(cpu="1").node("node-1"))
    assert fw.feasible_nodes(pod) == []
    fw.delete_pod("default/a")
    assert fw.feasible_nodes(pod) == ["node-1"]
    fw.add_node(make_node().name("node-9").capacity(cpu="8"))
    fw.update_node(make_node().name("node-1").capacity(cpu="1"))
    assert fw.feasible_nodes(pod) == ["node-9"]
    fw.remove_node("node-9")
    assert fw.node_names() == ["node-1"]
    fw.add_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    assert fw.framework.objects.get("Namespace", "", "shop") is not None
    with pytest.raises(SnapshotError, match="pod default/zzz is not running"):
        fw.delete_pod("default/zzz")


def test_plugin_lookup_names_the_enabled_plugins() -> None:
    fw = framework_for([OnlyLabelled])
    with pytest.raises(PluginError, match=r"not enabled in profile 'default-scheduler'.*OnlyLabelled"):
        fw.plugin("Other")


# --- FakeCluster ---------------------------------------------------------------------------------


def test_fake_cluster_builds_frameworks_over_its_objects() -> None:
    cluster = FakeCluster().add_nodes(2).add_node(make_node().name("big").capacity(cpu="32"))
    cluster.add_nodes(1)
    cluster.add_pod(make_pod().name("a").req(cpu="3").node("node-1"))
    assert [n.name for n in cluster.nodes] == ["node-1", "node-2", "big", "node-3"]
    fw = cluster.framework(["NodeResourcesFit"])
    assert fw.feasible_nodes(make_pod().name("p").req(cpu="2")) == ["node-2", "big", "node-3"]


def test_fake_cluster_from_yaml() -> None:
    cluster = FakeCluster.from_yaml("""
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2", pods: "10"}}
---
kind: Pod
metadata: {name: p, namespace: shop}
spec: {nodeName: n1}
---
kind: Namespace
metadata: {name: shop}
""")
    assert (len(cluster.nodes), len(cluster.pods), len(cluster.objects)) == (1, 1, 1)
    assert cluster.framework().placements() == {"shop/p": "n1"}
