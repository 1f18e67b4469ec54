"""Simulator: placement queries on a Framework over a ClusterSnapshot."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

import pytest
from sim_builders import default_config, make_node, make_pod

from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SnapshotError
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import ClusterSnapshot, Simulator
from scheduling_framework.status import Code, Status

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def simulator(nodes: Sequence[Node], pods: Sequence[Pod] = (), **kw: Any) -> Simulator:
    return Simulator(kw.pop("config", default_config()), seed=kw.pop("seed", 7),
                     cluster=ClusterSnapshot(nodes, pods), **kw)


def small() -> Simulator:
    return simulator([make_node("a", cpu="4"), make_node("b", cpu="4"), make_node("gpu", cpu="8", taints=[TAINT])],
                     [make_pod("run-a", cpu="3", node="a")])


# --- check_pod_on_node ------------------------------------------------------------------------


def test_check_pod_on_node_passes() -> None:
    assert small().check_pod_on_node(make_pod("p", cpu="1"), "b") is None


@pytest.mark.parametrize("pod,node,code,plugin,reasons", [
    (make_pod("p", cpu="2"), "a", Code.UNSCHEDULABLE, "NodeResourcesFit", ("Insufficient cpu",)),
    (make_pod("p", cpu="1"), "gpu", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "TaintToleration",
     ("node(s) had untolerated taint(s)",)),
], ids=["insufficient cpu", "untolerated taint"])
def test_check_pod_on_node_reports_the_filter_status(pod: Pod, node: str, code: Code, plugin: str,
                                                     reasons: tuple[str, ...]) -> None:
    st = small().check_pod_on_node(pod, node)
    assert st is not None and (st.code, st.plugin, tuple(st.reasons)) == (code, plugin, reasons)


def test_check_pod_on_node_outside_the_prefilter_result() -> None:
    pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": "pinned"}, "spec": {
        "containers": [{"name": "c", "image": "x"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}}})
    sim = small()
    assert sim.check_pod_on_node(pod, "a") is None
    st = sim.check_pod_on_node(pod, "b")
    assert st is not None
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     ["node(s) didn't satisfy plugin(s) [NodeAffinity]"])


def test_check_pod_on_node_honours_nominated_pods() -> None:
    sim = small()
    sim.nominate(make_pod("preemptor", cpu="3", priority=100), "b")
    st = sim.check_pod_on_node(make_pod("low", cpu="2", priority=10), "b")
    assert st is not None and st.reasons == ["Insufficient cpu"]
    assert sim.check_pod_on_node(make_pod("high", cpu="2", priority=1000), "b") is None
    sim.nominate(make_pod("preemptor", cpu="3", priority=100), "")
    assert sim.check_pod_on_node(make_pod("low", cpu="2", priority=10), "b") is None


def test_nominations_made_in_a_fork_are_reverted() -> None:
    sim = small()
    with sim.fork():
        sim.nominate(make_pod("preemptor", cpu="3", priority=100), "b")
        assert sim.check_pod_on_node(make_pod("low", cpu="2"), "b") is not None
    assert sim.check_pod_on_node(make_pod("low", cpu="2"), "b") is None


def test_check_pod_on_node_sees_the_fork() -> None:
    sim = small()
    pod = make_pod("p", cpu="3")
    with sim.fork():
        sim.add_pod(make_pod("filler", cpu="2"), "b")
        assert sim.check_pod_on_node(pod, "b") is not None
    assert sim.check_pod_on_node(pod, "b") is None


def test_unknown_profile_is_a_config_error() -> None:
    from scheduling_framework.errors import ConfigError

    with pytest.raises(ConfigError, match="profile 'nope' not found"):
        Simulator(default_config(), profile="nope")


def test_check_pod_on_unknown_node() -> None:
    with pytest.raises(SnapshotError, match='node "zz" is not in the snapshot'):
        small().check_pod_on_node(make_pod("p"), "zz")


# --- find_node_for_pod ------------------------------------------------------------------------


def test_find_node_for_pod_goes_round_robin_from_the_last_hit() -> None:
    sim = simulator([make_node(n) for n in "abc"])
    pod = make_pod("p")
    assert [sim.find_node_for_pod(pod) for _ in range(4)] == ["a", "b", "c", "a"]


def test_find_node_for_pod_skips_nodes_that_fail_and_resumes_after_the_hit() -> None:
    sim = simulator([make_node("a", cpu="1"), make_node("b", cpu="4"), make_node("c", cpu="1"), make_node("d")])
    pod = make_pod("p", cpu="2")
    assert sim.find_node_for_pod(pod) == "b"
    assert sim.find_node_for_pod(pod) == "d"
    assert sim.find_node_for_pod(pod) == "b"
    assert sim.find_node_for_pod(pod, node_filter=lambda ni: ni.name != "b") == "d"
    assert sim.find_node_for_pod(make_pod("huge", cpu="64")) is None


# --- best_node_for_pod ------------------------------------------------------------------------


def test_best_node_for_pod_scores_and_leaves_the_snapshot_alone() -> None:
    sim = simulator([make_node("a"), make_node("b")], [make_pod("run", cpu="3", node="a")])
    before = sim.cluster.snapshot.describe()
    best = sim.best_node_for_pod(make_pod("p", cpu="500m"))
    assert best.node == "b" and best.scheduled
    assert set(best.total_scores) == {"a", "b"} and best.total_scores["b"] > best.total_scores["a"]
    assert sim.cluster.snapshot.describe() == before


def test_best_node_for_pod_gives_the_fit_error_message() -> None:
    best = small().best_node_for_pod(make_pod("p", cpu="5"))
    assert best.node is None
    assert best.message == "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."


# --- schedule_pods ----------------------------------------------------------------------------


def test_schedule_pods_in_queue_sort_order_each_placement_visible() -> None:
    sim = simulator([make_node("a", cpu="4")])
    low = make_pod("low", cpu="3", priority=1)
    high = make_pod("high", cpu="3", priority=100)
    out = sim.schedule_pods([low, high])
    assert [r.pod for r in out.results] == ["default/high", "default/low"]
    assert out.placements == {"default/high": "a"}
    assert out.unschedulable == {"default/low": "0/1 nodes are available: 1 Insufficient cpu."}
    assert sim.cluster.pod_node("default/high") == "a"
    assert sim.cluster.get("a").pods[0].pod.spec.node_name == "a"


def test_schedule_pods_inside_a_fork_is_reverted() -> None:
    sim = small()
    before = sim.cluster.snapshot.describe()
    with sim.fork():
        out = sim.schedule_pods([make_pod(f"p{i}", cpu="1") for i in range(3)])
        assert len(out.placements) == 3
    assert sim.cluster.snapshot.describe() == before


def test_schedule_pods_matches_the_scheduler_on_the_demo_cluster() -> None:
    cluster = load_cluster(ROOT / "examples" / "cluster.yaml")
    # schedule_pods runs no PostFilter: compare with a scheduler that does not preempt either
    cfg = default_config({"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}})
    sched = Scheduler(cfg, seed=3)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    want = {r.pod: r.node for r in sched.run()}
    sim = Simulator.from_cluster(cluster, cfg, seed=3)
    out = sim.schedule_pods(cluster.pending_pods)
    assert {r.pod: r.node for r in out.results} == want


def test_schedule_pods_skips_gated_pods() -> None:
    out = small().schedule_pods([make_pod("gated", gates=["wait-for-quota"])])
    assert out.placements == {}
    assert out.results[0].status is not None and out.results[0].status.plugin == "SchedulingGates"


def test_schedule_pods_restricted_to_candidate_nodes() -> None:
    sim = small()
    with sim.fork():
        new = sim.add_node_from_template(make_node("m5", cpu="2"), count=2, name_prefix="m5")
        out = sim.schedule_pods([make_pod(f"p{i}", cpu="1500m") for i in range(3)], nodes=new)
        assert out.placements == {"default/p0": "m5-0", "default/p1": "m5-1"}
        assert out.unschedulable == {"default/p2": "0/2 nodes are available: 2 Insufficient cpu."}


def test_schedule_pods_nominated_pod_goes_to_its_nominated_node_and_leaves_the_nominator() -> None:
    sim = simulator([make_node("a"), make_node("b")])
    nominated = make_pod("p", nominated="b")
    out = sim.schedule_pods([nominated])
    assert out.placements == {"default/p": "b"}
    assert sim.framework.nominator.nominated_node_of(nominated.uid) == ""
    assert sim.cluster.get("b").pods[0].pod.status.nominated_node_name == ""


@pytest.mark.parametrize("pods,nodes,message", [
    ([make_pod("p"), make_pod("p")], None, "appears twice"),
    ([make_pod("run-a")], None, 'is already in the snapshot, on node "a"'),
    ([make_pod("p")], ["zz"], 'candidate node "zz" is not in the snapshot'),
], ids=["duplicate", "already placed", "unknown candidate"])
def test_schedule_pods_bad_input_changes_nothing(pods: list[Pod], nodes: list[str] | None, message: str) -> None:
    sim = small()
    before = sim.cluster.snapshot.describe()
    with pytest.raises(SnapshotError, match=message):
        sim.schedule_pods([make_pod("first"), *pods], nodes=nodes)
    assert sim.cluster.snapshot.describe() == before


def test_reusing_failures_decides_exactly_as_running_every_cycle() -> None:
    nodes = [make_node(f"n{i:03d}", cpu="2", zone=f"z{i % 3}") for i in range(150)]
    bound = [make_pod(f"run{i}", cpu="1500m", node=f"n{i:03d}") for i in range(150) if i % 5]
    batch = []
    for i in range(40):
        batch.append(make_pod(f"big{i}", cpu="1500m", labels={"app": "big"}))
        if i % 7 == 0:
            batch.append(make_pod(f"small{i}", cpu="100m", labels={"app": "small"}, spread_on="kubernetes.io/hostname"))
        if i % 3 == 0:
            # fails on the three full nodes its PreFilterResult allows: the cycle evaluates 3 nodes only,
            # which moves the next cycle's start index by 3
            batch.append(pinned(f"pinned{i}", ["n001", "n002", "n003"]))
    outcomes = []
    for reuse in (True, False):
        sim = simulator(nodes, bound, reuse_failures=reuse)
        out = sim.schedule_pods(batch)
        outcomes.append(([(r.pod, r.node, r.message) for r in out.results], sim.algorithm.next_start_node_index,
                         sim.cluster.snapshot.describe()))
    assert outcomes[0] == outcomes[1]
    assert len([r for r in outcomes[0][0] if r[1] is None]) > 5  # failures were there to reuse


def test_a_failure_is_not_reused_after_the_snapshot_changed() -> None:
    sim = simulator([make_node("a"), make_node("b")])
    def follower(name: str) -> Pod:
        return make_pod(name, labels={"app": "web"}, affinity_to={"app": "db"})

    out = sim.schedule_pods([follower("web-1"), make_pod("db", labels={"app": "db"}), follower("web-2")])
    assert "default/web-1" in out.unschedulable
    assert out.placements["default/web-2"] == out.placements["default/db"]


def pinned(name: str, nodes: list[str]) -> Pod:
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": nodes}]}]}}}}})


# --- Reserve --------------------------------------------------------------------------------


class Ledger:
    """A Reserve plugin keeping its own books, rejecting pods labelled reject=yes."""

    name = "Ledger"
    reserved: list[str] = []

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        Ledger.reserved = []

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.labels.get("reject") == "yes":
            return Status(Code.UNSCHEDULABLE, "ledger is closed")
        Ledger.reserved.append(pod.name)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if pod.name in Ledger.reserved:
            Ledger.reserved.remove(pod.name)


def ledger_simulator() -> Simulator:
    reg = Registry()
    reg.merge(default_registry())
    reg.register("Ledger", Ledger)
    cfg = default_config({"plugins": {"reserve": {"enabled": [{"name": "Ledger"}]}}})
    return Simulator(cfg, reg, seed=1, cluster=ClusterSnapshot([make_node("a"), make_node("b")]))


def test_reserve_runs_for_placed_pods_and_unreserve_on_revert() -> None:
    sim = ledger_simulator()
    with sim.fork():
        sim.schedule_pods([make_pod("p1"), make_pod("p2")])
        assert Ledger.reserved == ["p1", "p2"]
        with sim.fork() as inner:
            sim.schedule_pods([make_pod("p3")])
            inner.commit()
        assert Ledger.reserved == ["p1", "p2", "p3"]
    assert Ledger.reserved == []


def test_reserve_rejection_leaves_the_pod_out() -> None:
    sim = ledger_simulator()
    out = sim.schedule_pods([make_pod("bad", labels={"reject": "yes"}), make_pod("good")])
    assert out.unschedulable == {"default/bad": "0/1 nodes are available: 1 ledger is closed."}
    assert not sim.cluster.has_pod("default/bad") and sim.cluster.has_pod("default/good")


# --- drain --------------------------------------------------------------------------------------


def drain_cluster() -> Simulator:
    return simulator([make_node("a"), make_node("b"), make_node("c", cpu="1")], [
        make_pod("web-1", cpu="1", node="a"), make_pod("web-2", cpu="1", node="a"),
        make_pod("agent-a", cpu="100m", node="a", owner_kind="DaemonSet"),
        make_pod("big", cpu="3", node="b"),
    ])


def test_drain_node_says_where_pods_go_and_changes_nothing() -> None:
    sim = drain_cluster()
    before = sim.cluster.snapshot.describe()
    res = sim.drain_node("a")
    assert res.ok and res.not_moved == ("default/agent-a",)
    assert set(res.placements) == {"default/web-1", "default/web-2"}
    assert set(res.placements.values()) <= {"b", "c"}
    assert sim.cluster.snapshot.describe() == before


def test_drain_node_reports_pods_that_cannot_move_and_commit_needs_all_to_move() -> None:
    sim = drain_cluster()
    before = sim.cluster.snapshot.describe()
    res = sim.drain_node("b", commit=True)
    assert not res.ok
    assert res.unschedulable == {"default/big": "0/2 nodes are available: 2 Insufficient cpu."}
    assert sim.cluster.snapshot.describe() == before


def test_drain_node_commit_keeps_the_moves() -> None:
    sim = drain_cluster()
    res = sim.drain_node("a", commit=True)
    assert res.ok and "a" not in sim.cluster
    assert {sim.cluster.pod_node("default/web-1"), sim.cluster.pod_node("default/web-2")} <= {"b", "c"}
