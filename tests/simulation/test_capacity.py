"""Simulator.capacity: cluster-capacity's question. The shortcut (per-node verdicts and raw scores kept
between copies) must decide exactly as a full cycle per copy does: checked on random clusters."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduling_framework.api import Pod
from scheduling_framework.errors import ValidationError
from scheduling_framework.simulation import Simulator
from scheduling_framework.simulation.capacity import (
    STOP_LIMIT,
    STOP_UNSCHEDULABLE,
    _FastPath,
    capacity,
    pod_copy,
)
from tests.simulation.sim_builders import default_config, make_node, make_pod

TAINTS = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
          {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]


def _pod_dict(pod: Pod) -> dict[str, Any]:
    return pod.to_dict()


def random_cluster(rnd: random.Random, n: int) -> Simulator:
    sim = Simulator(default_config({"percentageOfNodesToScore": rnd.choice([None, 10, 50])}) if n >= 100
                    else None, seed=rnd.randrange(1000))
    for i in range(n):
        taints = [t for t in TAINTS if rnd.random() < 0.15]
        labels = {"tier": rnd.choice(["a", "b", "c"])}
        images = [(["nginx:latest", "nginx"], 300_000_000)] if rnd.random() < 0.3 else []
        sim.add_node(make_node(f"n{i}", cpu=str(rnd.choice([1, 2, 4, 8])), memory=f"{rnd.choice([2, 4, 16])}Gi",
                               pods=str(rnd.choice([3, 10, 110])), zone=f"z{i % 3}", labels=labels, taints=taints,
                               images=images))
        for j in range(rnd.randrange(3)):
            sim.add_pod(make_pod(f"run-{i}-{j}", cpu=f"{rnd.choice([100, 500, 1000])}m", node=f"n{i}",
                                 labels={"app": rnd.choice(["x", "y"])}))
    return sim


def template(rnd: random.Random, kind: str) -> Pod:
    tolerations = [{"key": "spot", "operator": "Exists"}] if rnd.random() < 0.5 else []
    if kind == "plain":
        return make_pod("t", cpu=f"{rnd.choice([100, 250, 700])}m", memory="256Mi", tolerations=tolerations,
                        labels={"app": "t"})
    if kind == "ports":
        return make_pod("t", cpu="100m", host_ports=[8080], labels={"app": "t"})
    if kind == "preferred-affinity":
        p = _pod_dict(make_pod("t", cpu="300m", tolerations=tolerations))
        p["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}}],
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}]}}}
        return Pod.from_dict(p)
    if kind == "name-selector":  # a PreFilterResult narrows the nodes
        p = _pod_dict(make_pod("t", cpu="200m"))
        p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{i}"]}]}
                                  for i in (1, 3, 5, 7, 9, 11)]}}}
        return Pod.from_dict(p)
    if kind == "spread":  # not node-local: every copy takes a full cycle
        p = _pod_dict(make_pod("t", cpu="100m", labels={"app": "t"}))
        p["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"app": "t"}}}]
        return Pod.from_dict(p)
    if kind == "anti-affinity":
        return make_pod("t", cpu="100m", labels={"app": "t"}, anti_affinity_to={"app": "t"})
    raise AssertionError(kind)


KINDS = ["plain", "ports", "preferred-affinity", "name-selector", "spread", "anti-affinity"]
CASES = [pytest.param(seed, kind, n, id=f"{kind}-{n}nodes-seed{seed}")
         for kind in KINDS for n, seeds in ((12, (1, 2, 3)), (130, (4,))) for seed in seeds]


@pytest.mark.parametrize(("seed", "kind", "n"), CASES)
def test_shortcut_decides_as_a_full_cycle_per_copy(seed: int, kind: str, n: int) -> None:
    answers = []
    for fast in (True, False):
        rnd = random.Random(seed)
        sim = random_cluster(rnd, n)
        pod = template(rnd, kind)
        limit = 400 if n > 100 else None
        r = capacity(sim, pod, limit, fast=fast)
        answers.append((r, sim.algorithm.next_start_node_index, sim.rng.getstate()))
    (fast_r, fast_idx, fast_rng), (plain_r, plain_idx, plain_rng) = answers
    assert fast_r.placements == plain_r.placements
    assert fast_r.count > 0
    assert fast_r == plain_r
    assert (fast_idx, fast_rng) == (plain_idx, plain_rng)  # the simulator goes on exactly as after full cycles


@pytest.mark.parametrize(("kind", "expected"), [("plain", True), ("ports", True), ("preferred-affinity", True),
                                                ("name-selector", True), ("spread", False),
                                                ("anti-affinity", False)],
                         ids=["plain", "ports", "preferred-affinity", "name-selector", "spread", "anti-affinity"])
def test_shortcut_applies_only_where_nodes_are_judged_alone(kind: str, expected: bool) -> None:
    rnd = random.Random(7)
    sim = random_cluster(rnd, 12)
    assert (_FastPath.try_build(sim, template(rnd, kind)) is not None) is expected


def test_counts_placements_and_reasons_in_upstream_words() -> None:
    sim = Simulator(seed=1)
    sim.add_node(make_node("a", cpu="2"))
    sim.add_node(make_node("b", cpu="1"))
    sim.add_node(make_node("c", cpu="8", taints=[TAINTS[0]]))
    r = sim.capacity(make_pod("web", cpu="500m"))
    assert r.count == 6 and dict(r.per_node) == {"a": 4, "b": 2}
    assert r.stop_reason == STOP_UNSCHEDULABLE
    assert r.reasons == {"a": "Insufficient cpu", "b": "Insufficient cpu",
                         "c": "node(s) had untolerated taint(s)"}
    assert r.message == "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    assert r.to_dict() == {"pod": "default/web", "count": 6, "perNode": dict(r.per_node), "reasons": dict(r.reasons),
                           "stopReason": "Unschedulable", "message": r.message}
    # the cluster is unchanged: asking again gives the same answer
    assert sim.capacity(make_pod("web", cpu="500m")).count == 6
    assert sum(len(ni.pods) for ni in sim.cluster.snapshot.list()) == 0


def test_max_stops_early() -> None:
    sim = Simulator(seed=1)
    sim.add_node(make_node("a", cpu="4"))
    r = sim.capacity(make_pod("web", cpu="500m"), max=3)
    assert (r.count, r.stop_reason, dict(r.reasons)) == (3, STOP_LIMIT, {})
    assert sim.capacity(make_pod("web", cpu="500m"), max=0).count == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True], ids=["negative", "float", "string", "bool"])
def test_bad_max_is_a_validation_error(bad: Any) -> None:
    sim = Simulator()
    with pytest.raises(ValidationError, match="max must be a non-negative integer"):
        sim.capacity(make_pod("web"), max=bad)


def test_gated_pod_fits_zero_times() -> None:
    sim = Simulator()
    sim.add_node(make_node("a"))
    r = sim.capacity(make_pod("web", gates=["example.com/wait"]))
    assert r.count == 0 and r.stop_reason == STOP_UNSCHEDULABLE and "scheduling gates" in r.message


def test_no_nodes() -> None:
    r = Simulator().capacity(make_pod("web"))
    assert r.count == 0 and r.stop_reason == "Error" and r.message == "no nodes available to schedule pods"


def test_copies_are_fresh_pods() -> None:
    t = make_pod("web", node="x", nominated="y")
    c = pod_copy(t, 3)
    assert (c.name, c.namespace, c.spec.node_name, c.status.nominated_node_name) == ("web-3", "default", "", "")
    assert c.uid != t.uid and c.to_dict()["metadata"]["name"] == "web-3"
    assert "nodeName" not in c.to_dict()["spec"]


def test_capacity_benchmark_runs_small() -> None:
    from benchmarks import capacity as bench

    report = bench.measure(30, None, 10)
    assert report["copies"] == 180 and report["stopReason"] == "Unschedulable"  # 6 copies of 500m per node
    assert report["plain"]["same_placements"] is True
