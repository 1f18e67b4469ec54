"""cluster-autoscaler's estimator test tables (tests/fixtures/autoscaler/estimator.yaml): binpacking, placement on
added nodes, the fast-path group choice, the pod orderer and the threshold limiter."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.api import Node, Pod
from scheduling_framework.autoscaler.estimator import (
    StaticThreshold,
    ThresholdLimiter,
    equivalence_groups,
    estimate,
    fastpath_group,
    min_limit,
    order_groups,
)
from scheduling_framework.simulation import ClusterSnapshot, Simulator

DATA = yaml.safe_load((Path(__file__).parent.parent / "fixtures" / "autoscaler" / "estimator.yaml").read_text())


def _cases(section: list[dict[str, Any]]) -> list[Any]:
    return [pytest.param(c, id=c["name"], marks=[pytest.mark.skip(reason=c["skip"])] if c.get("skip") else [])
            for c in section]


def _node(millicores: int, memory_mib: int, pods: int, name: str, zone: str) -> Node:
    """Upstream's makeNode."""
    alloc = {"cpu": f"{millicores}m", "memory": f"{memory_mib}Mi", "pods": str(pods)}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                                 "topology.kubernetes.io/zone": zone}},
                           "status": {"capacity": alloc, "allocatable": alloc,
                                      "conditions": [{"type": "Ready", "status": "True"}]}})


def _groups(spec: list[dict[str, Any]]) -> list[list[Pod]]:
    """The table's groups as pods: replicas named <name>-<group>-<i>, one ReplicaSet per group."""
    groups = []
    for g, entry in enumerate(spec):
        pods = []
        for i in range(entry["count"]):
            m = copy.deepcopy(entry["pod"])
            meta = m.setdefault("metadata", {})
            meta["name"] = f"{meta['name']}-{g}-{i}"
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs-{g}",
                                        "uid": f"rs-{g}", "controller": True}]
            pods.append(Pod.from_dict(m))
        groups.append(pods)
    return groups


def _sim() -> Simulator:
    return Simulator(seed=1, cluster=ClusterSnapshot(nodes=[_node(100, 100, 10, "oldnode", "zone-jupiter")]))


def _run(case: dict[str, Any], template: Node, *, fastpath: bool) -> tuple[Any, list[list[Pod]], Simulator]:
    groups = _groups(case["groups"])
    pods = [p for g in groups for p in g]
    assert [[p.key for p in g] for g in equivalence_groups(pods)] == [[p.key for p in g] for g in groups]
    sim = _sim()
    before = (sim.cluster.content, len(sim.cluster), len(sim.cluster.pods()))
    est = estimate(sim, pods, template, max_nodes=case.get("max_nodes"), fastpath=fastpath)
    assert (sim.cluster.content, len(sim.cluster), len(sim.cluster.pods())) == before  # left unchanged
    return est, groups, sim


@pytest.mark.parametrize("case", _cases(DATA["binpacking"]))
def test_binpacking_estimate(case: dict[str, Any]) -> None:
    t = case["template"]
    template = _node(t["millicores"], t["memory"], 10, "template", "zone-mars")
    est, groups, _ = _run(case, template, fastpath=case.get("fastpath", False))
    assert est.node_count == case["expect_node_count"]
    assert len(est.scheduled) == case["expect_pod_count"]
    if "expect_processed_group" in case:
        assert est.placed_pods() == [p.key for p in groups[case["expect_processed_group"]]]
    placed = set(est.placed_pods())
    assert set(est.unplaced) == {p.key for g in groups for p in g} - placed
    if len(groups) == 1:  # upstream: fast-path binpacking gives the same answer for a single group
        fast, _, _ = _run(case, template, fastpath=True)
        assert (fast.node_count, fast.placed_pods()) == (est.node_count, est.placed_pods())


@pytest.mark.parametrize("case", _cases(DATA["placement"]))
def test_binpacking_estimate_placement_on_added_nodes(case: dict[str, Any]) -> None:
    template = _node(1000, 1000, 10, "template", "zone-mars")
    est, _, _ = _run(case, template, fastpath=case.get("fastpath", False))
    assert est.node_count == case["expect_node_count"]
    assert len(est.scheduled) == case["expect_pod_count"]
    simulated = [n for n in est.added if "-fake-" not in n]
    assert {n: len(est.nodes.get(n, ())) for n in simulated} == case["expect_pods_per_node"]


@pytest.mark.parametrize("case", _cases(DATA["fastpath_group"]))
def test_determine_best_pod_equivalence_group_to_fastpath(case: dict[str, Any]) -> None:
    template = _node(100, 100, 10, "oldnode", "zone-jupiter")
    assert fastpath_group(_groups(case["groups"]), template) == case["expect"]


@pytest.mark.parametrize("case", _cases(DATA["pod_orderer"]["cases"]))
def test_pod_priority_processor(case: dict[str, Any]) -> None:
    node = Node.from_dict(DATA["pod_orderer"]["node"])
    pods = {name: Pod.from_dict(m) for name, m in DATA["pod_orderer"]["pods"].items()}
    ordered = order_groups([[pods[n]] for n in case["input"]], node)
    assert [g[0].name for g in ordered] == case["expected"]


class _DynamicThreshold:
    """Upstream's test threshold whose node limit grows by one at every estimation start."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def node_limit(self) -> int:
        self.limit += 1
        return self.limit

    def duration_limit(self) -> float:
        return 0.0


@pytest.mark.parametrize("case", _cases(DATA["limiter"]))
def test_threshold_based_limiter(case: dict[str, Any]) -> None:
    thresholds: list[Any] = [_DynamicThreshold(t["dynamic"]) if "dynamic" in t
                             else StaticThreshold(t["nodes"], t["seconds"]) for t in case.get("thresholds", [])]
    limiter = ThresholdLimiter(thresholds)
    limiter.start()
    if case.get("start_delta"):
        assert limiter.started is not None
        limiter.started += case["start_delta"]
    for op in case["operations"]:
        if op == "reset":
            limiter.end()
            limiter.start()
        else:
            assert limiter.permission_to_add_node() is (op == "allow")
    assert limiter.nodes == case["expect_node_count"]
    limiter.end()


@pytest.mark.parametrize("case", _cases(DATA["min_limit"]))
def test_min_limit(case: dict[str, Any]) -> None:
    assert min_limit(case["base"], case["target"]) == case["want"]


# ---- beyond upstream's tables: what the port adds on top (reasons, DaemonSets, the simulator untouched) ----
def _pod(name: str, cpu: str, **spec: Any) -> Pod:
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec}})


def test_pods_that_do_not_fit_the_template_get_its_filter_message() -> None:
    sim = _sim()
    template = _node(1000, 1000, 10, "template", "zone-mars")
    est = estimate(sim, [_pod("huge", "2"), _pod("fits", "500m")], template)
    assert est.node_count == 1
    assert est.placed_pods() == ["ns/fits"]
    assert est.unplaced == {"ns/huge": "Insufficient cpu"}


def test_daemonset_pods_take_room_on_new_nodes() -> None:
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "template": {"metadata": {"labels": {"app": "agent"}},
                                "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "300m"}}}]}}}}
    sim = Simulator(seed=1, cluster=ClusterSnapshot(nodes=[_node(100, 100, 10, "oldnode", "zone-jupiter")]),
                    objects=[ds])
    template = _node(1000, 1000, 10, "template", "zone-mars")
    pods = [_pod(f"p{i}", "400m") for i in range(4)]
    assert estimate(sim, pods, template).node_count == 4  # 300m taken by the agent: one 400m pod per node
    assert estimate(sim, pods, template, daemon_sets=False).node_count == 2
    assert len(sim.cluster) == 1


def test_capped_estimate_says_why_pods_are_left() -> None:
    sim = _sim()
    template = _node(1000, 1000, 10, "template", "zone-mars")
    est = estimate(sim, [_pod(f"p{i}", "600m") for i in range(3)], template, max_nodes=2)
    assert (est.node_count, est.capped) == (2, True)
    assert est.unplaced == {"ns/p2": "the node limit was reached"}
    assert est.pod_requests()["cpu"].milli_value() == 1200
