"""DefaultPreemption and the preemption evaluator, driven directly (upstream default_preemption_test.go,
framework/preemption/preemption_test.go, util/utils_test.go), plus the cases the fixtures skip."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from plugins_intree.defaultpreemption import DefaultPreemption
from plugins_intree.defaultpreemption.plugin import filter_pods_with_pdb_violation, pod_terminating_by_preemption
from plugins_intree.defaultpreemption.preemption import (
    Candidate,
    Evaluator,
    PodDisruptionBudget,
    Victims,
    aggregate_message,
    get_earliest_pod_start_time,
    more_important_pod,
    pdb_from_object,
    pick_one_node_for_preemption,
)
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.config import load_config
from scheduling_framework.config.args import DefaultPreemptionArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.interfaces import PostFilterResult
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.runtime import Framework
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from tests.fixture_runner import case_config, fixture_cases

NEG, LOW, MID, HIGH, VHIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VLARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
U = Code.UNSCHEDULABLE
FIT = {"name": "NodeResourcesFit", "points": ["preFilter", "filter"]}
PTS = {"name": "PodTopologySpread", "points": ["preFilter", "filter"]}
IPA = {"name": "InterPodAffinity", "points": ["preFilter", "filter"]}
ERR_REASON_FAKE = "Nodes failed the fake plugin"


# --- builders (upstream st.MakeNode / st.MakePod, as manifests) ------------------------------------------


def epoch(n: int) -> str:
    """upstream epochTimeN, in seconds (metav1.Time keeps seconds); the order is what the tests rely on."""
    return f"1970-01-01T00:00:0{n}Z"


def node(spec: str, res: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None,
         split: bool = False) -> dict[str, Any]:
    """A node with capacity = allocatable = {pods: 32} + res. ``split``: "name/zone/region" -> labels."""
    parts = spec.split("/")
    md: dict[str, Any] = {"name": parts[0]}
    lab = dict(labels or {})
    if split:
        lab.update(zip(["hostname", "zone", "region"], parts, strict=False))
    if lab:
        md["labels"] = lab
    rl = {"pods": "32", **(res or {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "status": {"capacity": rl, "allocatable": dict(rl)}}


def pod(name: str, node_name: str = "", priority: int | None = None, req: Mapping[str, str] | None = None, *,
        labels: Mapping[str, str] | None = None, start: int | None = None, uid: str | None = None,
        nominated: str = "", policy: str | None = None, terminating: bool = False,
        conditions: Sequence[Mapping[str, str]] = (), containers: int = 1,
        spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid or name}
    if labels:
        md["labels"] = dict(labels)
    if terminating:
        md["deletionTimestamp"] = "1970-01-01T00:00:10Z"
    cs = []
    for i in range(containers):
        c: dict[str, Any] = {"name": f"con{i}", "image": "registry.k8s.io/pause:3.10"}
        if req and i == 0:
            c["resources"] = {"requests": dict(req)}
        cs.append(c)
    sp: dict[str, Any] = {"containers": cs}
    if node_name:
        sp["nodeName"] = node_name
    if priority is not None:
        sp["priority"] = priority
    if policy is not None:
        sp["preemptionPolicy"] = policy
    sp.update(spec or {})
    st: dict[str, Any] = {}
    if start is not None:
        st["startTime"] = epoch(start)
    if nominated:
        st["nominatedNodeName"] = nominated
    if conditions:
        st["conditions"] = [dict(c) for c in conditions]
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": sp}
    if st:
        d["status"] = st
    return d


def pdb_obj(match_labels: Mapping[str, str] | None, allowed: int, disrupted: Iterable[str] = (),
            name: str = "pdb", namespace: str = "default", selector: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["selector"] = selector
    elif match_labels is not None:
        spec["selector"] = {"matchLabels": dict(match_labels)}
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "1970-01-01T00:00:00Z" for p in disrupted}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec, "status": status}


def pdbs_of(*docs: dict[str, Any]) -> list[PodDisruptionBudget]:
    return [pdb_from_object(KubeObject.from_dict(d)) for d in docs]


# --- fake plugins (upstream testing/framework fakes and default_preemption_test's TestPlugin) ------------


class FakeFilter:
    """Counts Filter calls; nodes in ``codes`` get that code (SUCCESS counts as passing)."""

    name = "FakeFilter"

    def __init__(self, codes: Mapping[str, Code] | None = None) -> None:
        self.codes = dict(codes or {})
        self.calls = 0

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        code = self.codes.get(node_info.name)
        if code is None or code == Code.SUCCESS:
            return None
        return Status(code, f"injecting failure for pod {p.name}")


class FalseFilter:
    name = "FalseFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        return Status(U, ERR_REASON_FAKE)


class TrueFilter:
    name = "TrueFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        return None


class MatchFilter:
    name = "MatchFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        return None if p.name == node_info.name else Status(U, ERR_REASON_FAKE)


class ErroringExtensionsPlugin:
    """upstream's "test-plugin": AddPod/RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def pre_filter(self, state: CycleState, p: Pod, nodes: Sequence[NodeInfo]) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> ErroringExtensionsPlugin:
        return self

    def add_pod(self, state: CycleState, p: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        if ni.node is not None and ni.node.labels.get("error") == "true":
            return Status(Code.ERROR, f"failed to add pod: {p.name}")
        return None

    def remove_pod(self, state: CycleState, p: Pod, pi: PodInfo, ni: NodeInfo) -> Status | None:
        if ni.node is not None and ni.node.labels.get("error") == "true":
            return Status(Code.ERROR, f"failed to remove pod: {p.name}")
        return None

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status | None:
        return None


# --- a framework around a snapshot ----------------------------------------------------------------------


class Env:
    """A profile (PrioritySort, DefaultBinder, DefaultPreemption + ``also``) over a snapshot of the inputs."""

    def __init__(self, nodes: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]],
                 also: Sequence[Mapping[str, Any]] = (FIT,), pdbs: Sequence[dict[str, Any]] = (),
                 args: Mapping[str, Any] | None = None, extra: Mapping[str, Any] | None = None,
                 offsets: Sequence[int] | None = None) -> None:
        cluster = cluster_from_documents([*nodes, *pods, *pdbs])
        self.snapshot = Snapshot.from_objects(cluster.nodes, cluster.bound_pods)
        self.objects = ObjectStore(cluster.objects)
        case: dict[str, Any] = {"points": ["postFilter"], "alsoEnable": list(also)}
        if args is not None:
            case["pluginConfig"] = [{"name": "DefaultPreemption", "args": dict(args)}]
        reg = Registry()
        reg.merge(default_registry())
        for name, factory in (extra or {}).items():
            reg.register(name, factory)
        self.fwk = Framework.from_config(load_config(case_config(case, "DefaultPreemption")), reg,
                                         snapshot=self.snapshot, objects=self.objects)
        self.pl: DefaultPreemption = self.fwk.plugins["DefaultPreemption"]
        if offsets is not None:
            seq = itertools.cycle(offsets)
            self.pl.offset_rand = lambda n: next(seq) % n

    def prefilter(self, p: Pod) -> CycleState:
        state = CycleState()
        _, st, _ = self.fwk.run_pre_filter_plugins(state, p)
        assert st is None or st.is_success(), st
        return state

    def filter_statuses(self, state: CycleState, p: Pod) -> dict[str, Status | None]:
        return {ni.name: self.fwk.run_filter_plugins_with_nominated_pods(state, p, ni) for ni in self.snapshot.list()}

    def sorted_nodes(self) -> list[NodeInfo]:
        return sorted(self.snapshot.list(), key=lambda ni: ni.name)


def P(d: dict[str, Any]) -> Pod:
    return Pod.from_dict(d)


def cand_view(cands: Sequence[Candidate]) -> list[tuple[str, list[str], int]]:
    """Candidates sorted by node, victims sorted by name (as upstream's tests compare them)."""
    return sorted((c.name, sorted(v.name for v in c.victims.pods), c.victims.num_pdb_violations) for c in cands)


# ============================================================================================================
# Fixture cases, driven directly: PreFilter + Filter on every node, then PostFilter with that status map.
# ============================================================================================================

FIXTURES = fixture_cases(
    "tests/fixtures/upstream/defaultpreemption-postfilter.yaml",
    "tests/fixtures/upstream/defaultpreemption-dryrun.yaml",
    "tests/fixtures/upstream/defaultpreemption-select.yaml",
    "tests/fixtures/upstream/defaultpreemption-preempt.yaml",
    "tests/fixtures/samples/defaultpreemption.yaml",
)


@pytest.mark.parametrize(("plugin", "case"), FIXTURES, ids=[c["name"] for _, c in FIXTURES])
def test_fixture_direct(plugin: str, case: dict[str, Any]) -> None:
    env = Env(case["nodes"], case.get("pods") or [], case.get("alsoEnable") or [], case.get("pdbs") or [],
              args=next((pc["args"] for pc in case.get("pluginConfig") or [] if pc["name"] == plugin), None))
    p = P(case["pod"])
    state = env.prefilter(p)
    statuses = env.filter_statuses(state, p)
    assert all(st is not None and not st.is_success() for st in statuses.values()), statuses
    result, st = env.pl.post_filter(state, p, statuses)
    want = case["expect"]["preemption"]
    got_node = result.nominated_node_name if result is not None else None
    assert (got_node or None) == want["nominatedNode"]
    assert sorted(result.victims if result is not None else ()) == sorted(want.get("victims") or [])
    if "status" in want:
        assert str(st.code) == want["status"]["code"]
        if "reasons" in want["status"]:
            assert st.reasons == want["status"]["reasons"]


# ============================================================================================================
# TestPostFilter with the table's own status maps
# ============================================================================================================

POST_FILTER = [
    # (name, nodes, pods, pod, statuses, absent code, extra plugins, want node (None = no result), want code,
    #  want reasons)
    ("pod with higher priority can be made schedulable",
     [node("node1", ONE_POD)], [pod("p1", "node1")], pod("p", priority=HIGH),
     {"node1": U}, UU, (), "node1", Code.SUCCESS, []),
    ("pod with tied priority is still unschedulable",
     [node("node1", ONE_POD)], [pod("p1", "node1")], pod("p"),
     {"node1": U}, UU, (), "", U,
     ["preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."]),
    ("preemption should respect filteredNodesStatuses",
     [node("node1", ONE_POD)], [pod("p1", "node1")], pod("p", priority=HIGH),
     {"node1": UU}, UU, (), "", U,
     ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]),
    ("preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
     [node("node1", ONE_POD)], [pod("p1", "node1")], pod("p", priority=HIGH),
     {}, UU, (), "", U,
     ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]),
    ("pod can be made schedulable on one node",
     [node("node1", ONE_POD), node("node2", ONE_POD)],
     [pod("p1", "node1", HIGH), pod("p2", "node2", LOW)], pod("p", priority=MID),
     {"node1": U, "node2": U}, UU, (), "node2", Code.SUCCESS, []),
    ("no candidate nodes found, no enough resource after removing low priority pods",
     [node("node1", NODE_RES), node("node2", NODE_RES)],
     [pod("p1", "node1"), pod("p2", "node2")], pod("p", priority=HIGH, req=LARGE),
     {"node1": U, "node2": U}, UU, (), "", U,
     ["preemption: 0/2 nodes are available: 2 Insufficient cpu."]),
    ("no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
     [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
     [pod("p1", "node1", HIGH), pod("p2", "node2"), pod("p3", "node3", HIGH)], pod("p", priority=HIGH, req=LARGE),
     {"node1": U, "node2": U, "node3": U}, UU, (), "", U,
     ["preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."]),
    ("no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
     "enough CPU resource",
     [node("node1", NODE_RES), node("node2", NODE_RES), node("node3", NODE_RES), node("node4", NODE_RES)],
     [pod("p1", "node1"), pod("p2", "node2")], pod("p", priority=HIGH, req=LARGE),
     {"node1": U, "node2": U, "node4": UU}, UU, (), "", U,
     ["preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."]),
    ("only one node but failed with TestPlugin",
     [node("node1", LARGE, labels={"error": "true"})], [pod("p1", "node1")], pod("p", priority=HIGH, req=LARGE),
     {"node1": U}, UU, ("test-plugin",), None, Code.ERROR,
     ['preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p']),
    ("one failed with TestPlugin and the other pass",
     [node("node1", LARGE, labels={"error": "true"}), node("node2", LARGE)],
     [pod("p1", "node1"), pod("p2", "node2", req=MEDIUM)], pod("p", priority=HIGH, req=LARGE),
     {"node1": U, "node2": U}, UU, ("test-plugin",), "node2", Code.SUCCESS, []),
    ("pod with SchedulingGroup with TAS and WAP disabled should preempt",
     [node("node1", ONE_POD)], [pod("p1", "node1")],
     pod("p-with-podgroup", priority=HIGH, spec={"schedulingGroup": {"podGroupName": "foo"}}),
     {"node1": U}, UU, (), "node1", Code.SUCCESS, []),
]


class _StatusMap(dict):  # type: ignore[type-arg]
    """A node->status map with an absent-nodes status (upstream NodeToStatus)."""

    absent_nodes_status: Status


@pytest.mark.parametrize("row", POST_FILTER, ids=[r[0] for r in POST_FILTER])
def test_post_filter(row: tuple[Any, ...]) -> None:
    _, nodes, pods, p_doc, statuses, absent, extra, want_node, want_code, want_reasons = row
    also = [FIT] + [{"name": n, "points": ["preFilter"]} for n in extra]
    env = Env(nodes, pods, also, extra={"test-plugin": ErroringExtensionsPlugin} if extra else None)
    p = P(p_doc)
    state = env.prefilter(p)
    m = _StatusMap({n: Status(c) for n, c in statuses.items()})
    m.absent_nodes_status = Status(absent)
    result, st = env.pl.post_filter(state, p, m)
    if want_node is None:
        assert result is None
    else:
        assert result is not None and result.nominated_node_name == want_node
    assert st.code == want_code
    assert st.reasons == want_reasons


def test_post_filter_absent_status_defaults_to_unresolvable() -> None:
    env = Env([node("node1", ONE_POD)], [pod("p1", "node1")])
    p = P(pod("p", priority=HIGH))
    result, st = env.pl.post_filter(env.prefilter(p), p, {})
    assert result == PostFilterResult("")
    assert st.reasons == ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]


# ============================================================================================================
# TestDryRunPreemption (default_preemption_test.go)
# ============================================================================================================

NN12 = ["node1", "node2"]
NN5 = ["node1", "node2", "node3", "node4", "node5"]
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}

DRY_RUN: list[dict[str, Any]] = [
    {"name": "a pod that does not fit on any node", "plugins": ["FalseFilter"], "nodes": NN12,
     "test": [pod("p", priority=HIGH)],
     "init": [pod("p1", "node1", MID), pod("p2", "node2", MID)], "want": [[]], "calls": [2]},
    {"name": "a pod that fits with no preemption", "plugins": ["TrueFilter"], "nodes": NN12,
     "test": [pod("p", priority=HIGH)],
     "init": [pod("p1", "node1", MID), pod("p2", "node2", MID)], "want": [[]], "rc": U, "calls": [2]},
    {"name": "a pod that fits on one node with no preemption", "plugins": ["MatchFilter"], "nodes": NN12,
     "test": [pod("node1", priority=HIGH)],
     "init": [pod("p1", "node1", MID), pod("p2", "node2", MID)], "want": [[]], "rc": U, "calls": [2]},
    {"name": "a pod that fits on both nodes when lower priority pods are preempted", "nodes": NN12,
     "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
     "want": [[("node1", ["p1"], 0), ("node2", ["p2"], 0)]], "calls": [4]},
    {"name": "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would "
             "happen", "nodes": NN12,
     "test": [pod("p", priority=LOW, req=LARGE)],
     "init": [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)], "want": [[]], "calls": [0]},
    {"name": "medium priority pod is preempted, but lower priority one stays as it is small", "nodes": NN12,
     "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1.1", "node1", LOW, SMALL), pod("p1.2", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)],
     "want": [[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]], "calls": [5]},
    {"name": "mixed priority pods are preempted", "nodes": NN12,
     "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1.1", "node1", MID, SMALL), pod("p1.2", "node1", LOW, SMALL), pod("p1.3", "node1", MID, MEDIUM),
              pod("p1.4", "node1", HIGH, SMALL), pod("p2", "node2", HIGH, LARGE)],
     "want": [[("node1", ["p1.2", "p1.3"], 0)]], "calls": [4]},
    {"name": "mixed priority pods are preempted, pick later StartTime one when priorities are equal", "nodes": NN12,
     "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1.1", "node1", LOW, SMALL, start=5), pod("p1.2", "node1", LOW, SMALL, start=4),
              pod("p1.3", "node1", MID, MEDIUM, start=3), pod("p1.4", "node1", HIGH, SMALL, start=2),
              pod("p2", "node2", HIGH, LARGE, start=1)],
     "want": [[("node1", ["p1.1", "p1.3"], 0)]], "calls": [4]},
    {"name": "pod with anti-affinity is preempted", "also": [FIT, IPA], "nodes": NN12,
     "test": [pod("p", priority=HIGH, req=SMALL, labels={"foo": ""})],
     "init": [pod("p1.1", "node1", LOW, SMALL, labels={"foo": ""}, spec={"affinity": {"podAntiAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": [{
                      "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                      "topologyKey": "hostname"}]}}}),
              pod("p1.2", "node1", MID, SMALL), pod("p1.3", "node1", HIGH, SMALL), pod("p2", "node2", HIGH, SMALL)],
     "want": [[("node1", ["p1.1"], 0)]], "calls": [3]},
    {"name": "preemption to resolve pod topology spread filter failure", "also": [PTS],
     "nodes": ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
     "test": [pod("p", priority=HIGH, labels={"foo": ""}, spec={"topologySpreadConstraints": [
         {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
          "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}},
         {"maxSkew": 1, "topologyKey": "hostname", "whenUnsatisfiable": "DoNotSchedule",
          "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]})],
     "init": [pod("pod-a1", "node-a", MID, labels={"foo": ""}), pod("pod-a2", "node-a", LOW, labels={"foo": ""}),
              pod("pod-b1", "node-b", LOW, labels={"foo": ""}), pod("pod-x1", "node-x", HIGH, labels={"foo": ""}),
              pod("pod-x2", "node-x", HIGH, labels={"foo": ""})],
     "want": [[("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)]], "calls": [5]},
    {"name": "get Unschedulable in the preemption phase when the filter plugins filtering the nodes", "nodes": NN12,
     "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1", "node1", MID, LARGE), pod("p2", "node2", MID, LARGE)], "rc": U, "want": [[]],
     "calls": [2]},
    {"name": "preemption with violation of same pdb", "nodes": ["node1"],
     "test": [pod("p", priority=HIGH, req=VLARGE)],
     "init": [pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
              pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"})],
     "pdbs": [pdb_obj({"app": "foo"}, 1)], "want": [[("node1", ["p1.1", "p1.2"], 1)]], "calls": [3]},
    {"name": "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong "
             "to DisruptedPods", "nodes": ["node1"],
     "test": [pod("p", priority=HIGH, req=VLARGE)],
     "init": [pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
              pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"})],
     "pdbs": [pdb_obj({"app": "foo"}, 1, ["p2"])], "want": [[("node1", ["p1.1", "p1.2"], 1)]], "calls": [3]},
    {"name": "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
             "DisruptedPods", "nodes": ["node1"],
     "test": [pod("p", priority=HIGH, req=VLARGE)],
     "init": [pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
              pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"})],
     "pdbs": [pdb_obj({"app": "foo"}, 1, ["p1.2"])], "want": [[("node1", ["p1.1", "p1.2"], 0)]], "calls": [3]},
    {"name": "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs "
             "to DisruptedPods is treated as 'nonViolating'", "nodes": ["node1"],
     "test": [pod("p", priority=HIGH, req=VLARGE)],
     "init": [pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
              pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"}),
              pod("p1.3", "node1", MID, MEDIUM, labels={"app": "foo"})],
     "pdbs": [pdb_obj({"app": "foo"}, 1, ["p1.3"])], "want": [[("node1", ["p1.1", "p1.2", "p1.3"], 1)]],
     "calls": [4]},
    {"name": "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", "args": ARGS_40_1,
     "nodes": NN5, "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod(f"p{i}", f"node{i}", MID, LARGE) for i in range(1, 6)],
     "want": [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]], "calls": [4]},
    {"name": "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", "args": ARGS_40_1,
     "nodes": NN5, "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1", "node1", MID, LARGE), pod("p2", "node2", VHIGH, LARGE), pod("p3", "node3", MID, LARGE),
              pod("p4", "node4", MID, LARGE), pod("p5", "node5", VHIGH, LARGE)],
     "want": [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]], "calls": [4]},
    {"name": "preemption offset across multiple scheduling cycles and wrap around", "args": ARGS_40_1,
     "nodes": NN5, "test": [pod(f"tp{i}", priority=HIGH, req=LARGE) for i in (1, 2, 3)],
     "init": [pod(f"p{i}", f"node{i}", MID, LARGE) for i in range(1, 6)],
     "want": [[("node1", ["p1"], 0), ("node5", ["p5"], 0)], [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
              [("node4", ["p4"], 0), ("node5", ["p5"], 0)]], "calls": [4, 4, 4]},
    {"name": "preemption looks past numCandidates until a non-PDB violating node is found",
     "args": {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}, "nodes": NN5,
     "test": [pod("p", priority=HIGH, req=LARGE)],
     "init": [pod("p1", "node1", MID, LARGE, labels={"app": "foo"}), pod("p2", "node2", MID, LARGE,
                                                                         labels={"app": "foo"}),
              pod("p3", "node3", MID, LARGE), pod("p4", "node4", MID, LARGE),
              pod("p5", "node5", MID, LARGE, labels={"app": "foo"})],
     "pdbs": [pdb_obj({"app": "foo"}, 0)],
     "want": [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]], "calls": [8]},
]

FAKE_FILTERS: dict[str, Any] = {"FalseFilter": FalseFilter, "TrueFilter": TrueFilter, "MatchFilter": MatchFilter}


@pytest.mark.parametrize("tt", DRY_RUN, ids=[t["name"] for t in DRY_RUN])
def test_dry_run_preemption(tt: dict[str, Any]) -> None:
    rc = tt.get("rc", Code.SUCCESS)
    fake = FakeFilter({n: rc for n in tt["nodes"]})
    also: list[Mapping[str, Any]] = [{"name": "FakeFilter", "points": ["filter"]}]
    also += [{"name": n, "points": ["filter"]} for n in tt.get("plugins", [])]
    if not tt.get("plugins"):
        also += tt.get("also", [FIT])
    extra = {"FakeFilter": lambda args, handle: fake, **{n: FAKE_FILTERS[n] for n in tt.get("plugins", [])}}
    # upstream seeds the offset source with 4: Int31n(5) gives 4, 1, 3
    env = Env([node(n, VLARGE, split=True) for n in tt["nodes"]], tt["init"], also, args=tt.get("args"),
              extra=extra, offsets=[4, 1, 3])
    pdbs = pdbs_of(*tt.get("pdbs", []))
    nodes = env.sorted_nodes()
    prev = 0
    for cycle, p_doc in enumerate(tt["test"]):
        p = P(p_doc)
        state = env.prefilter(p)
        prev = fake.calls
        offset, num = env.pl.get_offset_and_num_candidates(len(nodes))
        got, _, _ = env.pl.evaluator.dry_run_preemption(state, p, nodes, pdbs, offset, num)
        assert cand_view(got) == sorted(tt["want"][cycle]), f"cycle {cycle}"
        assert fake.calls - prev == tt["calls"][cycle], f"cycle {cycle}: filter calls"


# ============================================================================================================
# TestSelectBestCandidate
# ============================================================================================================

SELECT: list[tuple[str, list[str], dict[str, Any], list[dict[str, Any]], list[str]]] = [
    ("a pod that fits on both nodes when lower priority pods are preempted", NN12, pod("p", priority=HIGH, req=LARGE),
     [pod("p1", "node1", MID, LARGE, start=0), pod("p2", "node2", MID, LARGE, start=0)], ["node1", "node2"]),
    ("node with min highest priority pod is picked", ["node1", "node2", "node3"],
     pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, MEDIUM, start=0), pod("p1.2", "node1", MID, LARGE, start=0),
      pod("p2.1", "node2", MID, MEDIUM, start=0), pod("p2.2", "node2", LOW, MEDIUM, start=0),
      pod("p3.1", "node3", LOW, MEDIUM, start=0), pod("p3.2", "node3", LOW, MEDIUM, start=0)], ["node3"]),
    ("when highest priorities are the same, minimum sum of priorities is picked", ["node1", "node2", "node3"],
     pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, MEDIUM, start=0), pod("p1.2", "node1", MID, LARGE, start=0),
      pod("p2.1", "node2", MID, LARGE, start=0), pod("p2.2", "node2", LOW, MEDIUM, start=0),
      pod("p3.1", "node3", MID, MEDIUM, start=0), pod("p3.2", "node3", MID, MEDIUM, start=0)], ["node2"]),
    ("when highest priority and sum are the same, minimum number of pods is picked", ["node1", "node2", "node3"],
     pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, SMALL, start=0), pod("p1.2", "node1", NEG, SMALL, start=0),
      pod("p1.3", "node1", MID, SMALL, start=0), pod("p1.4", "node1", NEG, SMALL, start=0),
      pod("p2.1", "node2", MID, LARGE, start=0), pod("p2.2", "node2", NEG, MEDIUM, start=0),
      pod("p3.1", "node3", MID, MEDIUM, start=0), pod("p3.2", "node3", NEG, SMALL, start=0),
      pod("p3.3", "node3", LOW, SMALL, start=0)], ["node2"]),
    ("sum of adjusted priorities is considered", ["node1", "node2", "node3"], pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, SMALL, start=0), pod("p1.2", "node1", NEG, SMALL, start=0),
      pod("p1.3", "node1", NEG, SMALL, start=0),
      pod("p2.1", "node2", MID, LARGE, start=0), pod("p2.2", "node2", NEG, MEDIUM, start=0),
      pod("p3.1", "node3", MID, MEDIUM, start=0), pod("p3.2", "node3", NEG, SMALL, start=0),
      pod("p3.3", "node3", LOW, SMALL, start=0)], ["node2"]),
    ("non-overlapping lowest high priority, sum priorities, and number of pods", ["node1", "node2", "node3", "node4"],
     pod("p", priority=VHIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, SMALL, start=0), pod("p1.2", "node1", LOW, SMALL, start=0),
      pod("p1.3", "node1", LOW, SMALL, start=0), pod("p2.1", "node2", HIGH, LARGE, start=0),
      pod("p3.1", "node3", MID, MEDIUM, start=0), pod("p3.2", "node3", LOW, SMALL, start=0),
      pod("p3.3", "node3", LOW, SMALL, start=0), pod("p3.4", "node3", LOW, MEDIUM, start=0),
      pod("p4.1", "node4", MID, MEDIUM, start=0), pod("p4.2", "node4", MID, SMALL, start=0),
      pod("p4.3", "node4", MID, SMALL, start=0), pod("p4.4", "node4", NEG, SMALL, start=0)], ["node1"]),
    ("same priority, same number of victims, different start time for each node's pod", ["node1", "node2", "node3"],
     pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, MEDIUM, start=2), pod("p1.2", "node1", MID, MEDIUM, start=2),
      pod("p2.1", "node2", MID, MEDIUM, start=3), pod("p2.2", "node2", MID, MEDIUM, start=3),
      pod("p3.1", "node3", MID, MEDIUM, start=1), pod("p3.2", "node3", MID, MEDIUM, start=1)], ["node2"]),
    ("same priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"],
     pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", MID, MEDIUM, start=4), pod("p1.2", "node1", MID, MEDIUM, start=2),
      pod("p2.1", "node2", MID, MEDIUM, start=5), pod("p2.2", "node2", MID, MEDIUM, start=1),
      pod("p3.1", "node3", MID, MEDIUM, start=3), pod("p3.2", "node3", MID, MEDIUM, start=6)], ["node3"]),
    ("different priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"],
     pod("p", priority=HIGH, req=VLARGE),
     [pod("p1.1", "node1", LOW, MEDIUM, start=4), pod("p1.2", "node1", MID, MEDIUM, start=2),
      pod("p2.1", "node2", MID, MEDIUM, start=6), pod("p2.2", "node2", LOW, MEDIUM, start=1),
      pod("p3.1", "node3", LOW, MEDIUM, start=3), pod("p3.2", "node3", MID, MEDIUM, start=5)], ["node2"]),
]


@pytest.mark.parametrize("row", SELECT, ids=[r[0] for r in SELECT])
def test_select_best_candidate(row: tuple[Any, ...]) -> None:
    _, names, p_doc, pods, expected = row
    env = Env([node(n, VLARGE) for n in names], pods, offsets=[4])
    p = P(p_doc)
    state = env.prefilter(p)
    nodes = env.snapshot.list()
    offset, num = env.pl.get_offset_and_num_candidates(len(nodes))
    cands, _, _ = env.pl.evaluator.dry_run_preemption(state, p, nodes, [], offset, num)
    best = env.pl.evaluator.select_candidate(cands)
    assert best is not None and best.name in expected


# ============================================================================================================
# TestCustomSelection / TestCustomOrdering
# ============================================================================================================


def label_is(key: str, val: str) -> Callable[[NodeInfo, PodInfo, Pod], bool]:
    return lambda ni, victim, preemptor: victim.pod.labels.get(key) == val if key in victim.pod.labels else False


def node_is(name: str) -> Callable[[NodeInfo, PodInfo, Pod], bool]:
    return lambda ni, victim, preemptor: ni.name == name


def preemptor_at_least(prio: int) -> Callable[[NodeInfo, PodInfo, Pod], bool]:
    return lambda ni, victim, preemptor: preemptor.priority >= prio


def victim_at_most(prio: int) -> Callable[[NodeInfo, PodInfo, Pod], bool]:
    return lambda ni, victim, preemptor: victim.pod.priority <= prio


LABEL_PODS = [pod("v1", "node1", MID, LARGE, start=0, labels={"preemptible": "no"}),
              pod("v2", "node2", MID, LARGE, start=0, labels={"preemptible": "yes"}),
              pod("v3", "node3", LOW, LARGE, start=0, labels={"preemptible": "yes"}),
              pod("v4", "node4", LOW, LARGE, start=0)]
NODE_PODS_HIGH = [pod("v1", "node1", HIGH, MEDIUM, start=0), pod("v2", "node1", MID, SMALL, start=0),
                  pod("v3", "node1", LOW, SMALL, start=0), pod("v4", "node2", MID, LARGE, start=0),
                  pod("v5", "node3", LOW, LARGE, start=0)]
NODE_PODS = [pod("v1", "node1", HIGH, SMALL, start=0), pod("v2", "node1", MID, SMALL, start=0),
             pod("v3", "node1", LOW, SMALL, start=0), pod("v4", "node2", MID, LARGE, start=0),
             pod("v5", "node3", LOW, LARGE, start=0)]
PRIO_PODS = [pod("v1", "node1", HIGH, LARGE, start=0), pod("v2", "node2", MID, LARGE, start=0),
             pod("v3", "node3", LOW, LARGE, start=0)]
N4 = ["node1", "node2", "node3", "node4"]
N3 = ["node1", "node2", "node3"]

CUSTOM_SELECTION = [
    ("filter for matching pod label: high priority", label_is("preemptible", "yes"), N4,
     pod("p1", priority=HIGH, req=LARGE), LABEL_PODS, {"node2": ["v2"], "node3": ["v3"]}),
    ("filter for matching pod label: mid priority", label_is("preemptible", "yes"), N4,
     pod("p2", priority=MID, req=LARGE), LABEL_PODS, {"node3": ["v3"]}),
    ("filter for matching pod label: low priority", label_is("preemptible", "yes"), N4,
     pod("p3", priority=LOW, req=LARGE), LABEL_PODS, {}),
    ("filter for matching victim node: high priority", node_is("node1"), N3,
     pod("p3", priority=HIGH, req=LARGE), NODE_PODS_HIGH, {"node1": ["v2", "v3"]}),
    ("filter for matching victim node: mid priority", node_is("node1"), N3,
     pod("p3", priority=MID, req=LARGE), NODE_PODS, {"node1": ["v3"]}),
    ("filter for matching victim node: low priority", node_is("node1"), N3,
     pod("p3", priority=LOW, req=LARGE), NODE_PODS, {}),
    ("only pods at or above specified priority can preempted: high priority", preemptor_at_least(HIGH), N3,
     pod("p1", priority=HIGH, req=LARGE), PRIO_PODS, {"node2": ["v2"], "node3": ["v3"]}),
    ("only pods at or above specified priority can preempted: mid priority", preemptor_at_least(HIGH), N3,
     pod("p2", priority=MID, req=LARGE), PRIO_PODS, {}),
    ("only pods at or below specified priority can be preempted: high priority", victim_at_most(MID), N3,
     pod("p1", priority=HIGH, req=LARGE), PRIO_PODS, {"node2": ["v2"], "node3": ["v3"]}),
]


@pytest.mark.parametrize("row", CUSTOM_SELECTION, ids=[r[0] for r in CUSTOM_SELECTION])
def test_custom_selection(row: tuple[Any, ...]) -> None:
    _, eligible, names, p_doc, pods, expected = row
    env = Env([node(n, VLARGE) for n in names], pods)
    env.pl.is_eligible_pod = eligible
    p = P(p_doc)
    state = env.prefilter(p)
    nodes = env.snapshot.list()
    offset, num = env.pl.get_offset_and_num_candidates(len(nodes))
    cands, _, _ = env.pl.evaluator.dry_run_preemption(state, p, nodes, [], offset, num)
    assert len(cands) == len(expected)
    while cands:
        sel = env.pl.evaluator.select_candidate(cands)
        assert sel is not None and sel.name in expected
        assert [v.name for v in sel.victims.pods] == expected[sel.name]
        cands = [c for c in cands if c.name != sel.name]


def _older_first(a: Pod, b: Pod) -> bool:
    sa, sb = a.status.start_time, b.status.start_time
    assert sa is not None and sb is not None
    return sa < sb


CUSTOM_ORDERING = [
    ("select newest pods", _older_first, pod("p2", priority=HIGH, req=LARGE),
     [pod("v1", "node1", LOW, MEDIUM, start=2), pod("v2", "node1", LOW, MEDIUM, start=0),
      pod("v3", "node1", MID, MEDIUM, start=1)], ["v3", "v1"]),
    ("select alphabetically-last pods", lambda a, b: a.name < b.name, pod("p2", priority=HIGH, req=LARGE),
     [pod("foo", "node1", LOW, MEDIUM, start=0, uid="v1"), pod("bar", "node1", LOW, MEDIUM, start=0, uid="v2"),
      pod("baz", "node1", MID, MEDIUM, start=0, uid="v3")], ["baz", "foo"]),
]


@pytest.mark.parametrize("row", CUSTOM_ORDERING, ids=[r[0] for r in CUSTOM_ORDERING])
def test_custom_ordering(row: tuple[Any, ...]) -> None:
    _, order, p_doc, pods, expected = row
    env = Env([node("node1", VLARGE)], pods)
    env.pl.more_important_pod = order
    p = P(p_doc)
    state = env.prefilter(p)
    nodes = env.snapshot.list()
    offset, num = env.pl.get_offset_and_num_candidates(len(nodes))
    cands, _, _ = env.pl.evaluator.dry_run_preemption(state, p, nodes, [], offset, num)
    assert len(cands) == 1
    assert [v.name for v in cands[0].victims.pods] == expected


# ============================================================================================================
# TestPodEligibleToPreemptOthers
# ============================================================================================================

DISRUPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
ELIGIBLE = [
    ("Pod with nominated node", pod("p_with_nominated_node", priority=HIGH, uid="p", nominated="node1"),
     [pod("p1", "node1", LOW, terminating=True)], ["node1"],
     Status(UU, "node(s) had untolerated taint(s)"), True),
    ("Pod without nominated node", pod("p_without_nominated_node", priority=HIGH, uid="p"), [], [], None, True),
    ("Pod with 'PreemptNever' preemption policy",
     pod("p_with_preempt_never_policy", priority=HIGH, uid="p", policy="Never"), [], [], None, False),
    ("preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
     pod("p_with_nominated_node", priority=HIGH, uid="p", nominated="node1"),
     [pod("p1", "node1", LOW, terminating=True, conditions=[DISRUPTED])], ["node1"], None, False),
    ("non-victim Pods terminating", pod("p_with_nominated_node", priority=HIGH, uid="p", nominated="node1"),
     [pod("p1", "node1", LOW, terminating=True)], ["node1"], None, True),
]


@pytest.mark.parametrize("row", ELIGIBLE, ids=[r[0] for r in ELIGIBLE])
def test_pod_eligible_to_preempt_others(row: tuple[Any, ...]) -> None:
    _, p_doc, pods, names, nominated_status, expected = row
    env = Env([node(n) for n in names], pods, also=[])
    ok, msg = env.pl.pod_eligible_to_preempt_others(P(p_doc), nominated_status)
    assert ok is expected
    assert (msg == "") is expected


def test_pod_eligible_messages() -> None:
    env = Env([node("node1")], [pod("p1", "node1", LOW, terminating=True, conditions=[DISRUPTED])], also=[])
    assert env.pl.pod_eligible_to_preempt_others(P(pod("p", priority=HIGH, policy="Never")), None) == (
        False, "not eligible due to preemptionPolicy=Never.")
    assert env.pl.pod_eligible_to_preempt_others(P(pod("p", priority=HIGH, nominated="node1")), None) == (
        False, "not eligible due to a terminating pod on the nominated node.")
    # a terminating pod of equal priority is no victim of this pod: it does not block
    assert env.pl.pod_eligible_to_preempt_others(P(pod("p", priority=LOW, nominated="node1")), None) == (True, "")


def test_pod_terminating_by_preemption() -> None:
    assert pod_terminating_by_preemption(P(pod("a", terminating=True, conditions=[DISRUPTED])))
    assert not pod_terminating_by_preemption(P(pod("b", conditions=[DISRUPTED])))
    assert not pod_terminating_by_preemption(P(pod("c", terminating=True, conditions=[
        {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}])))


# ============================================================================================================
# TestPreempt: evict through the pod deleter; a second attempt preempts nothing more
# ============================================================================================================

PREEMPT_PODS = [pod("p1.1", "node1", LOW, SMALL), pod("p1.2", "node1", LOW, SMALL), pod("p2.1", "node2", HIGH, LARGE),
                pod("p3.1", "node3", MID, MEDIUM)]
PREEMPT = [
    ("basic preemption logic", N3, PREEMPT_PODS,
     pod("p", priority=HIGH, req=VLARGE, policy="PreemptLowerPriority"), [FIT], "node1", ["p1.1", "p1.2"]),
    ("preemption for topology spread constraints", ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
     [pod("p-a1", "node-a", HIGH, labels={"foo": ""}), pod("p-a2", "node-a", HIGH, labels={"foo": ""}),
      pod("p-b1", "node-b", LOW, labels={"foo": ""}), pod("p-x1", "node-x", HIGH, labels={"foo": ""}),
      pod("p-x2", "node-x", HIGH, labels={"foo": ""})],
     DRY_RUN[9]["test"][0], [PTS], "node-b", ["p-b1"]),
    ("no preempting in pod", N3, PREEMPT_PODS, pod("p", priority=HIGH, req=VLARGE, policy="Never"), [FIT], None, []),
    ("PreemptionPolicy is nil", N3, PREEMPT_PODS, pod("p", priority=HIGH, req=VLARGE), [FIT], "node1",
     ["p1.1", "p1.2"]),
]


@pytest.mark.parametrize("row", PREEMPT, ids=[r[0] for r in PREEMPT])
def test_preempt(row: tuple[Any, ...]) -> None:
    _, names, pods, p_doc, also, want_node, want_victims = row
    env = Env([node(n, VLARGE, split=True) for n in names], pods, also)
    deleted: list[str] = []
    env.fwk.pod_deleter = lambda victim: deleted.append(victim.name)
    p = P(p_doc)
    state = env.prefilter(p)
    res, st = env.pl.evaluator.preempt(state, p, {ni.name: Status(U) for ni in env.snapshot.list()})
    assert st.is_success() or st.is_rejected()
    got = res.nominated_node_name if res is not None and res.nominated_node_name else None
    assert got == want_node
    assert sorted(deleted) == sorted(want_victims)
    # The victims are now terminating; the pod is nominated. Preempting again must not evict more pods.
    for ni in env.snapshot.list():
        for pi in list(ni.pods):
            if pi.pod.name in deleted:
                ni.remove_pod(pi)
                ni.add_pod(pi.pod.with_deletion_timestamp(datetime(1970, 1, 1, tzinfo=UTC)))
    if got:
        p = p.with_nominated_node_name(got)
    deleted.clear()
    res, st = env.pl.evaluator.preempt(state, p, {})
    assert st.is_success() or st.is_rejected()
    assert not deleted


# ============================================================================================================
# framework/preemption: TestDryRunPreemption / TestSelectCandidate with fake interfaces
# ============================================================================================================


class FakeInterface:
    """Victim = the node's first pod; every node is a candidate (upstream FakePostFilterPlugin)."""

    def __init__(self, num_violating: int = 0, score_by_containers: bool = False) -> None:
        self.num_violating = num_violating
        self.score_by_containers = score_by_containers

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(self, p: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(self, state: CycleState, p: Pod, node_info: NodeInfo,
                               pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        return [node_info.pods[0].pod], self.num_violating, None

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[Callable[[str], float]] | None:
        if not self.score_by_containers:
            return None

        def fewer_containers(n: str) -> float:
            return -sum(len(v.spec.containers) + len(v.spec.init_containers) for v in nodes_to_victims[n].pods)

        return [fewer_containers]


@pytest.mark.parametrize(("name", "num_violating"), [("no pdb violation", 0), ("pdb violation on each node", 1)])
def test_evaluator_dry_run_preemption(name: str, num_violating: int) -> None:
    env = Env([node("node1", VLARGE), node("node2", VLARGE)],
              [pod("p1", "node1", MID), pod("p2", "node2", MID)], also=[])
    ev = Evaluator("FakePostFilter", env.fwk, FakeInterface(num_violating))
    p = P(pod("p", priority=HIGH))
    got, _, _ = ev.dry_run_preemption(CycleState(), p, env.sorted_nodes(), [], 0, 2)
    assert cand_view(got) == [("node1", ["p1"], num_violating), ("node2", ["p2"], num_violating)]


def test_evaluator_select_candidate_custom_score() -> None:
    """TestSelectCandidate/pod has different number of containers on each node"""
    env = Env([node(n, VLARGE) for n in N3],
              [pod("p1.1", "node1", MID, containers=2), pod("p2.1", "node2", MID, containers=1),
               pod("p3.1", "node3", MID, containers=3)], also=[])
    ev = Evaluator("FakePreemptionScorePostFilter", env.fwk, FakeInterface(1, score_by_containers=True))
    p = P(pod("p", priority=HIGH, req=VLARGE))
    cands, _, _ = ev.dry_run_preemption(CycleState(), p, env.snapshot.list(), [], 0, 3)
    best = ev.select_candidate(cands)
    assert best is not None and best.name == "node2"


# ============================================================================================================
# framework/preemption: TestPrepareCandidate (the deletion part; the library patches no pod status)
# ============================================================================================================


def _candidate(*victims: dict[str, Any]) -> Candidate:
    return Candidate("node1", Victims(tuple(P(v) for v in victims)))


VICTIM1 = pod("victim1", "node1", MID)
FAIL_VICTIM = pod("fail-victim", "node1", MID, uid="victim1")
PREPARE = [
    ("no victims", Candidate("", Victims()), [], None),
    ("one victim without condition", _candidate(VICTIM1), ["victim1"], None),
    ("one victim with same condition", _candidate(pod("victim1", "node1", MID, conditions=[DISRUPTED])),
     ["victim1"], None),
    ("one victim, but pod deletion failed", _candidate(pod("fail-victim", "node1", MID, uid="victim1",
                                                           conditions=[DISRUPTED])), [], "delete pod failed"),
    ("one victim, not-found victim error is ignored when deleting", _candidate(VICTIM1), ["victim1"], None),
]


@pytest.mark.parametrize("row", PREPARE, ids=[r[0] for r in PREPARE])
def test_prepare_candidate(row: tuple[Any, ...]) -> None:
    _, cand, want_deleted, want_error = row
    env = Env([node("node1", VLARGE)], [], also=[])
    deleted: list[str] = []

    def deleter(victim: Pod) -> None:
        if victim.name == "fail-victim":
            raise RuntimeError("delete pod failed")
        deleted.append(victim.name)  # a victim already gone is simply not found: no error

    env.fwk.pod_deleter = deleter
    st = env.pl.evaluator.prepare_candidate(cand, P(pod("preemptor", priority=HIGH)))
    assert deleted == want_deleted
    if want_error is None:
        assert st is None
    else:
        assert st is not None and st.code == Code.ERROR and st.message() == want_error


def test_prepare_candidate_skips_victims_already_deleting() -> None:
    env = Env([node("node1", VLARGE)], [], also=[])
    deleted: list[str] = []
    env.fwk.pod_deleter = lambda v: deleted.append(v.name)
    st = env.pl.evaluator.prepare_candidate(_candidate(pod("v", "node1", LOW, terminating=True), VICTIM1),
                                            P(pod("preemptor", priority=HIGH)))
    assert st is None and deleted == ["victim1"]


def test_prepare_candidate_rejects_waiting_victims_and_clears_lower_nominations() -> None:
    env = Env([node("node1", VLARGE)], [], also=[])
    deleted: list[str] = []
    env.fwk.pod_deleter = lambda v: deleted.append(v.name)
    rejected: list[tuple[str, str]] = []

    class Waiting:
        def reject(self, plugin: str, msg: str) -> None:
            rejected.append((plugin, msg))

    setattr(env.fwk, "get_waiting_pod", lambda uid: Waiting() if uid == "waiting" else None)  # noqa: B010
    low = PodInfo(P(pod("low", priority=LOW, nominated="node1")))
    higher = PodInfo(P(pod("higher", priority=VHIGH, nominated="node1")))
    env.fwk.nominator.add_nominated_pod(low, "node1")
    env.fwk.nominator.add_nominated_pod(higher, "node1")
    st = env.pl.evaluator.prepare_candidate(_candidate(pod("waiting", "node1", LOW), VICTIM1),
                                            P(pod("preemptor", priority=HIGH)))
    assert st is None
    assert rejected == [("DefaultPreemption", "preempted")]
    assert deleted == ["victim1"]
    assert [pi.pod.name for pi in env.fwk.nominator.nominated_pods_for_node("node1")] == ["higher"]


def test_post_filter_reports_deleter_failure() -> None:
    env = Env([node("node1", ONE_POD)], [pod("p1", "node1")])

    def deleter(victim: Pod) -> None:
        raise RuntimeError("delete pod failed")

    env.fwk.pod_deleter = deleter
    p = P(pod("p", priority=HIGH))
    res, st = env.pl.post_filter(env.prefilter(p), p, {"node1": Status(U)})
    assert res is None
    assert st.code == Code.ERROR and st.reasons == ["preemption: delete pod failed"]


# ============================================================================================================
# util: TestGetEarliestPodStartTime / TestMoreImportantPod
# ============================================================================================================


def _prio_start(name: str, prio: int, start: int | None) -> Pod:
    d = pod(name, priority=prio)
    if start is not None:
        d["status"] = {"startTime": f"2024-01-01T00:00:{start:02d}Z"}
    return P(d)


def _ts(second: int) -> float:
    return datetime(2024, 1, 1, 0, 0, second, tzinfo=UTC).timestamp()


EARLIEST = [
    ("Pods length is 0", [], None),
    ("generate new startTime", [_prio_start("pod1", 1, 9), _prio_start("pod2", 1, None)], _ts(9)),
    ("Pod with earliest start time last in the list",
     [_prio_start("pod1", 1, 11), _prio_start("pod2", 2, 11), _prio_start("pod3", 2, 10)], _ts(10)),
    ("Pod with earliest start time first in the list",
     [_prio_start("pod1", 2, 10), _prio_start("pod2", 2, 11), _prio_start("pod3", 2, 12)], _ts(10)),
]


@pytest.mark.parametrize("row", EARLIEST, ids=[r[0] for r in EARLIEST])
def test_get_earliest_pod_start_time(row: tuple[Any, ...]) -> None:
    _, pods, want = row
    assert get_earliest_pod_start_time(pods) == want


POD1, POD2, POD3 = _prio_start("pod1", 1, 10), _prio_start("pod2", 2, 11), _prio_start("pod3", 2, 10)
MORE_IMPORTANT = [
    ("Pod with higher priority", POD1, POD2, False),
    ("Pod with older created time", POD2, POD3, False),
    ("Pods with same start time", POD3, POD1, True),
]


@pytest.mark.parametrize("row", MORE_IMPORTANT, ids=[r[0] for r in MORE_IMPORTANT])
def test_more_important_pod(row: tuple[Any, ...]) -> None:
    _, a, b, want = row
    assert more_important_pod(a, b) is want


# ============================================================================================================
# Pieces of the plugin with no upstream table of their own
# ============================================================================================================


@pytest.mark.parametrize(("pct", "absolute", "nodes", "want"), [
    (10, 100, 5, 5), (10, 100, 5000, 500), (40, 1, 5, 2), (40, 2, 5, 2), (10, 0, 5, 0), (0, 3, 10, 3),
])
def test_calculate_num_candidates(pct: int, absolute: int, nodes: int, want: int) -> None:
    pl = DefaultPreemption(DefaultPreemptionArgs(pct, absolute), None)
    assert pl.calculate_num_candidates(nodes) == want


def test_invalid_args_rejected() -> None:
    with pytest.raises(ValueError, match="minCandidateNodesPercentage"):
        DefaultPreemption(DefaultPreemptionArgs(0, 0), None)


def test_offset_comes_from_handle_rng() -> None:
    import random

    class Handle:
        rng = random.Random(7)

    want = random.Random(7).randrange(10)
    assert DefaultPreemption(None, Handle()).get_offset_and_num_candidates(10) == (want, 10)
    # no rng on the handle: a fixed seed, so runs are reproducible
    fixed = random.Random(0)
    pl = DefaultPreemption(None, None)
    assert [pl.get_offset_and_num_candidates(10)[0] for _ in range(3)] == [fixed.randrange(10) for _ in range(3)]
    # the handle's rng is read when needed (a scheduler may attach it after building the plugins)
    late = type("Late", (), {})()
    pl = DefaultPreemption(None, late)
    late.rng = random.Random(7)
    assert pl.get_offset_and_num_candidates(10) == (want, 10)


def test_pdb_parsing_and_matching() -> None:
    labelled = PodInfo(P(pod("a", labels={"app": "foo"})))
    other_ns = PodInfo(P({**pod("b", labels={"app": "foo"}), "metadata": {
        "name": "b", "namespace": "other", "uid": "b", "labels": {"app": "foo"}}}))
    unlabelled = PodInfo(P(pod("c")))
    pdbs = pdbs_of(pdb_obj({"app": "foo"}, 0))
    assert filter_pods_with_pdb_violation([labelled, other_ns, unlabelled], pdbs) == (
        [labelled], [other_ns, unlabelled])
    # nil, empty and invalid selectors match nothing
    for sel in (None, {}, {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}):
        doc = pdb_obj(None, 0, selector=sel)
        assert filter_pods_with_pdb_violation([labelled], pdbs_of(doc)) == ([], [labelled])
    # the budget is shared by the pods it covers, in order
    two = [PodInfo(P(pod(n, labels={"app": "foo"}))) for n in ("x", "y")]
    assert filter_pods_with_pdb_violation(two, pdbs_of(pdb_obj({"app": "foo"}, 1))) == ([two[1]], [two[0]])


def test_pick_one_node_ties_go_to_node_order() -> None:
    v = Victims((P(pod("a", priority=LOW)),))
    assert pick_one_node_for_preemption({"n2": v, "n1": v}, None, ["n2", "n1"]) == "n2"
    assert pick_one_node_for_preemption({"n2": v, "n1": v}, None, ["n1", "n2"]) == "n1"
    assert pick_one_node_for_preemption({}, None) == ""


def test_aggregate_message() -> None:
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "a"]) == "a"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"


def test_expected_victims_error_when_node_needs_none() -> None:
    class NoVictims(FakeInterface):
        def select_victims_on_node(self, state: CycleState, p: Pod, node_info: NodeInfo,
                                   pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
            return [], 0, None

    env = Env([node("node1", VLARGE)], [pod("p1", "node1", MID)], also=[])
    ev = Evaluator("X", env.fwk, NoVictims())
    res, st = ev.preempt(CycleState(), P(pod("p", priority=HIGH)), {"node1": Status(U)})
    assert res is None and st.code == Code.ERROR
    assert st.reasons == ['expected at least one victim pod on node "node1"']


# ============================================================================================================
# The reference scheduler's flow: evict, nominate, then schedule on the nominated node
# ============================================================================================================


def _scheduler(docs: Sequence[dict[str, Any]], also: Sequence[Mapping[str, Any]] = (FIT,),
               seed: int | None = 1) -> tuple[Scheduler, Any]:
    cluster = cluster_from_documents(docs)
    case = {"points": ["postFilter"], "alsoEnable": list(also)}
    sched = Scheduler(load_config(case_config(case, "DefaultPreemption")), seed=seed, explain=True)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    return sched, cluster


def test_scheduler_evicts_and_schedules_on_nominated_node() -> None:
    sched, _ = _scheduler([node("node1", ONE_POD), node("node2", ONE_POD), pod("low", "node1", LOW, start=1),
                           pod("mid", "node2", MID, start=1), pod("urgent", priority=HIGH)])
    sched.run()
    r = sched.results["default/urgent"]
    assert (r.outcome, r.node, r.nominated_node, r.victims) == ("Scheduled", "node1", "node1", ["default/low"])
    assert sched.cache.get_pod("low") is None
    assert r.attempts == 2


def test_scheduler_message_when_preemption_cannot_help() -> None:
    sched, _ = _scheduler([node("node1", ONE_POD), pod("p1", "node1", HIGH), pod("p", priority=HIGH)])
    sched.run()
    r = sched.results["default/p"]
    assert r.outcome == "Unschedulable" and r.nominated_node is None
    assert r.message == ("0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: "
                         "1 No preemption victims found for incoming pod..")


def test_scheduler_preemptor_and_lower_priority_pending_pod() -> None:
    """The high-priority pod preempts first (queue order); the evicted room is not taken by the lower pod."""
    sched, _ = _scheduler([node("node1", ONE_POD), pod("old", "node1", LOW, start=1),
                           pod("mid-pending", priority=MID), pod("urgent", priority=HIGH)])
    sched.run()
    urgent, mid = sched.results["default/urgent"], sched.results["default/mid-pending"]
    assert (urgent.outcome, urgent.node, urgent.victims) == ("Scheduled", "node1", ["default/old"])
    assert mid.outcome == "Unschedulable"


def test_scheduler_respects_pdbs() -> None:
    docs = [node("node1", ONE_POD), node("node2", ONE_POD),
            pod("guarded", "node1", LOW, labels={"app": "db"}, start=1), pod("free", "node2", MID, start=1),
            pdb_obj({"app": "db"}, 0), pod("urgent", priority=HIGH)]
    sched, _ = _scheduler(docs)
    sched.run()
    r = sched.results["default/urgent"]
    assert (r.outcome, r.node, r.victims) == ("Scheduled", "node2", ["default/free"])


def test_pdb_violating_victims_are_reprieved_first() -> None:
    """Room for one of two pods: the PDB-covered one stays even though the other is more important."""
    env = Env([node("node1", {"pods": "2"})],
              [pod("guarded", "node1", LOW, labels={"app": "db"}, start=1), pod("plain", "node1", MID, start=1)])
    p = P(pod("p", priority=HIGH))
    state = env.prefilter(p)
    pdbs = pdbs_of(pdb_obj({"app": "db"}, 0))
    victims, violations, st = env.pl.select_victims_on_node(state, p, env.snapshot.list()[0].clone(), pdbs)
    assert st is not None and st.is_success()
    assert ([v.name for v in victims], violations) == (["plain"], 0)
    # without the PDB the more important pod is reprieved and the other one goes
    victims, violations, _ = env.pl.select_victims_on_node(state, p, env.snapshot.list()[0].clone(), [])
    assert ([v.name for v in victims], violations) == (["guarded"], 0)
