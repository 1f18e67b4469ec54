"""``compare`` in Python: a side against itself changes nothing, known release differences are reported with the
plugin responsible, ties are not counted, earlier placements are told apart, and recording changes no decision."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.api import Node, Pod
from scheduling_framework.comparison import Comparison, Side, compare
from scheduling_framework.errors import ConfigError
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.testing import make_node, make_pod
from tests.fixture_runner import ROOT

EXAMPLES = ROOT / "examples" / "compare"
CLUSTER = str(EXAMPLES / "cluster.yaml")
BINPACK = str(EXAMPLES / "binpack.yaml")


def balanced_cluster() -> Cluster:
    """One pod, two nodes of one cpu size and two memory sizes: NodeResourcesBalancedAllocation's 1.35 formula
    (balance with the pod) prefers node-a by one point, the 1.36 one (change in balance) node-b."""
    nodes = [make_node().name("node-a").capacity(cpu="4", memory="8Gi", pods="110").obj(),
             make_node().name("node-b").capacity(cpu="4", memory="16Gi", pods="110").obj()]
    return Cluster(nodes, [make_pod().name("web").req(cpu="1", memory="2Gi").obj()])


def tie_cluster() -> Cluster:
    """Three equal nodes; n1 holds p1's image. Without ImageLocality p1's choice is a random pick among all three;
    with it, n1. p2 and p3 tie everywhere."""
    nodes = [make_node().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in (1, 2, 3)]
    n1 = nodes[0].to_dict()
    n1["status"]["images"] = [{"names": ["foo:1"], "sizeBytes": 800 * 1024 * 1024}]
    nodes[0] = Node.from_dict(n1)
    pods = []
    for name, image in (("p1", "foo:1"), ("p2", "bar:1"), ("p3", "bar:1")):
        p = make_pod().name(name).req(cpu="100m", memory="100Mi").obj().to_dict()
        p["spec"]["containers"][0]["image"] = image
        pods.append(Pod.from_dict(p))
    return Cluster(nodes, pods)


NO_IMAGE_LOCALITY: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}}}]}


def only(result: Comparison) -> Any:
    assert len(result.pods) == 1
    return result.pods[0]


# --------------------------------------------------------------------------- a side against itself


@pytest.mark.parametrize("seed", [None, 0, 1, 7, 42, 2024])
@pytest.mark.parametrize("mode", ["sequential", "independent"])
def test_a_side_against_itself_changes_nothing_whatever_the_seed(seed: int | None, mode: str) -> None:
    cluster = load_cluster(CLUSTER)
    for side in (Side(), Side(kubernetes_version="1.35"), Side(config=BINPACK)):
        result = compare(cluster, side, side, seed=seed, mode=mode)
        assert result.summary["changed"] == 0 and result.summary["ties"] == 0
        assert all(not p.changed and not p.tie and p.why is None for p in result.pods)
        assert result.nodes == () and result.config_changes == ()
        assert result.summary["pods"] == 7


@pytest.mark.parametrize("seed", [1, 2, 3, 5, 8])
def test_a_side_against_itself_with_ties_everywhere(seed: int) -> None:
    # every choice of tie_cluster under this side is a random pick: both sides draw the same numbers
    result = compare(tie_cluster(), Side(config=NO_IMAGE_LOCALITY), Side(config=NO_IMAGE_LOCALITY), seed=seed,
                     ties="seed")
    assert result.summary["changed"] == 0 and result.summary["ties"] == 0
    assert all(p.a.tied == p.b.tied for p in result.pods)
    assert result.pod("default/p1").a.tied == ("n1", "n2", "n3")


# --------------------------------------------------------------------------- known release differences


def test_balanced_allocation_formula_1_35_to_1_36() -> None:
    p = only(compare(balanced_cluster(), Side(kubernetes_version="1.35"), Side(kubernetes_version="1.36"), seed=1))
    assert (p.a.node, p.b.node, p.kind, p.changed, p.tie, p.cause) == ("node-a", "node-b", "moved", True, False, "own")
    assert p.plugins == ["NodeResourcesBalancedAllocation"]
    row = p.why["scores"][0]
    assert row["plugin"] == "NodeResourcesBalancedAllocation" and row["shift"] > 0
    assert row["a"]["weight"] == row["b"]["weight"] == 1
    # the shift is the swing of the totals: B's margin of node-b over node-a, less A's
    ta, tb = p.why["totals"]["a"], p.why["totals"]["b"]
    assert sum(r["shift"] for r in p.why["scores"]) == (tb["node-b"] - tb["node-a"]) - (ta["node-b"] - ta["node-a"])
    assert any("PR #135573" in n for n in p.why["releaseNotes"])
    assert p.why["verdicts"] == []


def test_node_declared_features_join_the_default_profile_in_1_36() -> None:
    result = compare(str(EXAMPLES / "node-features.yaml"), Side(kubernetes_version="1.35"),
                     Side(kubernetes_version="1.36"), seed=1)
    p = only(result)
    assert (p.a.node, p.b.node, p.plugins) == ("old", "new", ["NodeDeclaredFeatures"])
    [v] = p.why["verdicts"]
    assert v["node"] == "old" and v["a"] == {"code": "Success"}
    assert v["b"]["plugin"] == "NodeDeclaredFeatures" and v["b"]["code"] == "UnschedulableAndUnresolvable"
    assert {"kind": "plugin", "profile": "default-scheduler", "plugin": "NodeDeclaredFeatures", "a": [],
            "b": ["preFilter", "filter"]} in result.config_changes


def test_bind_mount_options_need_a_declared_feature_from_1_37() -> None:
    p = only(compare(str(EXAMPLES / "bind-mounts.yaml"), Side(kubernetes_version="1.36"),
                     Side(kubernetes_version="1.37"), seed=1))
    assert (p.a.node, p.b.node, p.plugins) == ("old", "new", ["NodeDeclaredFeatures"])


def test_dra_pool_order_by_name_from_1_36() -> None:
    p = only(compare(str(EXAMPLES / "dra-pools.yaml"), Side(kubernetes_version="1.35"),
                     Side(kubernetes_version="1.36"), seed=1))
    assert p.a.node == p.b.node == "gpu-1"
    assert (p.kind, p.changed, p.plugins) == ("devices", True, ["DynamicResources"])
    assert p.a.devices == ("gpu/gpu: gpu.example.com/gpu-1-b/gpu-0",)
    assert p.b.devices == ("gpu/gpu: gpu.example.com/gpu-1-a/gpu-0",)
    assert any("#136641" in n for n in p.why["releaseNotes"])


def test_dynamic_resources_scores_from_1_35() -> None:
    result = compare(str(EXAMPLES / "dra-prioritized.yaml"), Side(kubernetes_version="1.34"),
                     Side(kubernetes_version="1.35"), seed=1)
    p = only(result)
    assert (p.a.node, p.b.node, p.plugins) == ("small-gpu", "large-gpu", ["DynamicResources"])
    row = p.why["scores"][0]
    assert row["plugin"] == "DynamicResources" and row["a"] is None and row["b"]["weight"] == 2


def test_least_allocated_to_most_allocated() -> None:
    result = compare(CLUSTER, Side(), Side(config=BINPACK), seed=1)
    assert {"kind": "args", "profile": "default-scheduler", "plugin": "NodeResourcesFit",
            "field": "scoringStrategy.type", "a": "LeastAllocated", "b": "MostAllocated"} in result.config_changes
    assert result.summary["changed"] > 0 and set(result.summary["plugins"]) == {"NodeResourcesFit"}
    assert result.summary["b"]["nodesUsed"] < result.summary["a"]["nodesUsed"]  # packed onto fewer nodes
    first = next(p for p in result.pods if p.changed)
    assert first.cause == "own" and first.diverged_after is None
    later = [p for p in result.pods if p.changed and p is not first]
    assert later and all(p.cause == "earlier" and p.diverged_after == first.pod for p in later)
    assert all(p.why["text"].startswith(f"after earlier placements differed (from {first.pod})") for p in later)
    # the nodes' pods at the end: what each side placed
    for n in result.nodes:
        assert n.a_pods != n.b_pods or n.a_cpu != n.b_cpu


def test_independent_mode_judges_each_pod_on_the_starting_cluster() -> None:
    result = compare(CLUSTER, Side(), Side(config=BINPACK), seed=1, mode="independent")
    assert result.summary["afterEarlierPlacements"] == 0 and result.summary["divergedAfter"] is None
    assert all(p.cause == "own" for p in result.pods if p.changed)
    # every pod alone against the same cluster: MostAllocated sends each one to the fullest node that fits
    assert result.summary["changed"] >= 3
    assert sum(n.a_pods for n in result.nodes) == sum(n.b_pods for n in result.nodes)


# --------------------------------------------------------------------------- ties


@pytest.mark.parametrize("seed", range(1, 11))
def test_tie_breaking_is_not_a_change(seed: int) -> None:
    # p1: n1 alone on A (its image is there), a random pick among three on B: aligned, B takes A's node, so the
    # runs never diverge and nothing is counted
    result = compare(tie_cluster(), Side(), Side(config=NO_IMAGE_LOCALITY), seed=seed)
    assert result.summary["changed"] == 0 and result.summary["divergedAfter"] is None
    assert all(p.a.node == p.b.node for p in result.pods)
    p1 = result.pod("default/p1")
    assert p1.a.node == "n1" and p1.a.tied == () and p1.b.tied == ("n1", "n2", "n3")
    if p1.tie:  # B's own draw was another node: said so
        assert p1.why["text"].startswith("tie: n1, A's node, was among B's equally top-scored nodes (n1, n2, n3); "
                                         "B took it where its own draw picked n")
        assert not p1.changed and p1.why["plugins"] == []


@pytest.mark.parametrize("ties", ["align", "seed"])
def test_a_tie_on_the_first_side_is_reported_as_a_tie(ties: str) -> None:
    # the other way round, A's pick among three is random and B's is n1: the pod lands elsewhere only when A's
    # draw was another node, which is a tie (n1 was among A's top-scored nodes), not a change
    seen = 0
    for seed in range(1, 11):
        result = compare(tie_cluster(), Side(config=NO_IMAGE_LOCALITY), Side(), seed=seed, ties=ties)
        p1 = result.pod("default/p1")
        assert not p1.changed
        if p1.a.node != p1.b.node:
            seen += 1
            assert p1.tie and p1.kind == "moved" and p1.why["plugins"] == []
            assert p1.why["text"].startswith("tie: n1 was among A's equally top-scored nodes")
            # later pods may land elsewhere because of it: said so
            assert result.summary["divergedAfter"] == "default/p1" and result.summary["divergedOnTie"]
            assert all(p.cause == "earlier" for p in result.pods if p.changed)
    assert seen > 0


def test_recording_changes_no_decision() -> None:
    # unaligned, each side is exactly a plain Scheduler run with the same seed
    cluster = load_cluster(CLUSTER)
    for seed in (1, 2):
        result = compare(cluster, Side(kubernetes_version="1.35"), Side(config=BINPACK), seed=seed, ties="seed")
        for side, kw in (("a", {"kubernetes_version": "1.35"}), ("b", {"config": BINPACK})):
            sched = Scheduler(seed=seed, **kw)
            sched.load(cluster.nodes, cluster.pods, cluster.objects)
            sched.run()
            for p in result.pods:
                r = sched.results[p.pod]
                got = getattr(p, side)
                assert (got.outcome, got.node) == (r.outcome, r.node)


def test_unschedulable_on_one_side_names_the_rejecting_plugin() -> None:
    # node "old" is the only node; from 1.36 it lacks the feature the pod needs
    cluster = load_cluster(str(EXAMPLES / "node-features.yaml"))
    cluster = Cluster([n for n in cluster.nodes if n.name == "old"], cluster.pods, cluster.objects)
    p = only(compare(cluster, Side(kubernetes_version="1.35"), Side(kubernetes_version="1.36"), seed=1))
    assert (p.a.outcome, p.b.outcome, p.kind) == ("Scheduled", "Unschedulable", "newlyUnschedulable")
    assert p.plugins == ["NodeDeclaredFeatures"]
    assert "0/1 nodes are available" in p.b.message


# --------------------------------------------------------------------------- results and bad input


def test_records_and_dict() -> None:
    result = compare(balanced_cluster(), Side(kubernetes_version="1.35"), Side(), seed=1)
    [rec] = result.to_records()
    assert rec["pod"] == "default/web" and rec["aNode"] == "node-a" and rec["bNode"] == "node-b"
    assert rec["plugins"] == ["NodeResourcesBalancedAllocation"] and rec["changed"] is True
    d = result.to_dict()
    assert d["a"]["kubernetesVersion"] == "1.35" and d["b"]["kubernetesVersion"] == "1.37"
    assert d["summary"]["changed"] == 1 and d["pods"][0]["why"]["plugins"] == ["NodeResourcesBalancedAllocation"]
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            result.to_dataframe()
    else:
        assert list(result.to_dataframe()["bNode"]) == ["node-b"]


@pytest.mark.parametrize(("a", "b", "field"), [
    (Side(kubernetes_version="1.99"), Side(), "a.kubernetes_version"),
    (Side(), Side(feature_gates="NoSuchGate=true"), "b.feature_gates"),
    (Side(), Side(config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "Nope"}]}}}]}),
     "b.config"),
], ids=["unknown-version", "unknown-gate", "bad-config"])
def test_bad_sides_name_the_field(a: Side, b: Side, field: str) -> None:
    with pytest.raises(ConfigError, match=f"^{field.replace('.', '[.]')}: "):
        compare(balanced_cluster(), a, b)


def test_bad_mode_and_ties() -> None:
    with pytest.raises(ConfigError, match="mode"):
        compare(balanced_cluster(), mode="parallel")
    with pytest.raises(ConfigError, match="ties"):
        compare(balanced_cluster(), ties="random")


# --------------------------------------------------------------------------- the two sides in step


def test_a_nodes_the_second_side_did_not_reach_get_a_verdict() -> None:
    # 150 nodes: percentageOfNodesToScore has each cycle stop after 100 feasible nodes. From 1.36 the first 50
    # (not declaring the feature the pod needs) are rejected, so 1.36 reaches the roomiest node, n149, which a
    # 1.35 cycle never reaches; 1.35's best among its first 100 is n010.
    nodes = []
    for i in range(150):
        cpu = "64" if i == 149 else "32" if i == 10 else "8"
        b = make_node().name(f"n{i:03d}").capacity(cpu=cpu, memory="64Gi", pods="110")
        if i >= 50:
            b = b.declared_features("RestartAllContainersOnContainerExits")
        nodes.append(b.obj())
    cluster = Cluster(nodes, load_cluster(str(EXAMPLES / "node-features.yaml")).pending_pods)
    # B (1.35) did not reach A's node n149: its Filter plugins judged it after B's decision, and it passed
    p = only(compare(cluster, Side(kubernetes_version="1.36"), Side(kubernetes_version="1.35"), seed=1))
    assert (p.a.node, p.b.node, p.plugins) == ("n149", "n010", ["NodeDeclaredFeatures"])
    assert [v["node"] for v in p.why["verdicts"]] == ["n010"]
    assert p.why["scores"] == []  # B did not score n149
    # the first side ran before it knew B's node: n149 is reported as not evaluated on A
    p = only(compare(cluster, Side(kubernetes_version="1.35"), Side(kubernetes_version="1.36"), seed=1))
    assert (p.a.node, p.b.node) == ("n010", "n149")
    assert {v["node"]: v["a"]["code"] for v in p.why["verdicts"]} == {"n010": "Success", "n149": "NotEvaluated"}
    assert "n149 was not evaluated on A" in p.why["text"]
