"""Over-committed input (bound pods requesting more than allocatable) is reported, one item per node."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework import Scheduler
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.ingest.overcommit import WARN_OVERCOMMITTED
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_node, make_pod


def node(name: str, **cap: Any) -> Any:
    return make_node().name(name).capacity({"pods": "110", **cap}).obj()


def bound(name: str, node_name: str, **req: Any) -> Any:
    return make_pod().name(name).req(**req).node(node_name).obj()


def overcommit_warnings(warnings: Any) -> list[str]:
    return [w for w in warnings if w.startswith(WARN_OVERCOMMITTED)]


@pytest.mark.parametrize(("nodes", "pods", "expected"), [
    pytest.param([node("n1", cpu="8", memory="32Gi")], [bound("a", "n1", cpu="6"), bound("b", "n1", cpu="5960m")],
                 "n1 (cpu 11.96 > 8)", id="cpu-aggregated-over-pods"),
    pytest.param([node("n1", cpu="8", memory="32Gi")], [bound("a", "n1", cpu="1", memory="40Gi")],
                 "n1 (memory 40Gi > 32Gi)", id="memory"),
    pytest.param([node("n1", cpu="1", memory="1Gi"), node("n2", cpu="1", memory="1Gi")],
                 [bound("a", "n1", cpu="2", memory="2Gi"), bound("b", "n2", cpu="3")],
                 "n1 (cpu 2 > 1, memory 2Gi > 1Gi), n2 (cpu 3 > 1)", id="one-item-per-node"),
    pytest.param([make_node().name("n1").capacity(cpu="4", pods="1").obj()],
                 [bound("a", "n1", cpu="1"), bound("b", "n1", cpu="1")], "n1 (pods 2 > 1)", id="pods"),
    pytest.param([node("n1", cpu="4")], [bound("a", "n1", **{"example.com/gpu": "1"})],
                 "n1 (example.com/gpu 1 > 0)", id="extended-resource-the-node-lacks"),
])
def test_overcommitted_nodes_are_named(nodes: list[Any], pods: list[Any], expected: str) -> None:
    s = Scheduler()
    s.load(nodes, pods)
    assert overcommit_warnings(s.warnings) == [f"{WARN_OVERCOMMITTED}: {expected}"]


def test_a_node_within_allocatable_is_not_reported() -> None:
    s = Scheduler()
    s.load([node("n1", cpu="8")], [bound("a", "n1", cpu="8")])
    assert overcommit_warnings(s.warnings) == []


def test_pods_placed_by_the_run_never_count() -> None:
    """Only the input is checked: what the scheduler itself places always fits."""
    s = Scheduler()
    s.load([node("n1", cpu="2")], [make_pod().name("p").req(cpu="2").obj()])
    s.run()
    assert overcommit_warnings(s.warnings) == []


def test_simulator_from_cluster_reports_it() -> None:
    c = cluster_from_documents([node("n1", cpu="1").to_dict(), bound("a", "n1", cpu="2").to_dict()])
    sim = Simulator.from_cluster(c)
    assert overcommit_warnings(sim.warnings) == [f"{WARN_OVERCOMMITTED}: n1 (cpu 2 > 1)"]
