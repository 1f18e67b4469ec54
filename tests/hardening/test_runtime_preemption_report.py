"""Issue 14 item 4: the report matches the final cluster after preemption.

A pod this run scheduled and a later preemptor evicted reads ``Preempted`` (its message names the preemptor and
the node), a preemptor's ``victims`` keeps every pod it evicted across its preemption rounds, and the CLI's
``stats`` counts the preempted pods."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from scheduling_framework.cli import main
from scheduling_framework.scheduler import PREEMPTED, SCHEDULED, PodResult, Scheduler
from tests.runtime.runtime_fakes import make_node, make_pod


def assert_report_matches_cluster(s: Scheduler) -> None:
    """Per node, the pods reported Scheduled are bound there and fit; Preempted pods are gone; every pod in
    a victims list is gone from the cluster."""
    bound = {p.key: p.spec.node_name for p in s.cache.pods()}
    for r in s.results.values():
        if r.outcome == SCHEDULED:
            assert bound.get(r.pod) == r.node, f"{r.pod} reported on {r.node}, cluster says {bound.get(r.pod)}"
        if r.outcome == PREEMPTED:
            assert r.pod not in bound and r.node is None
        for v in r.victims:
            assert v not in bound, f"victim {v} of {r.pod} still runs"
    for node in s.cache.nodes():
        ni = s.cache.node_info(node.name)
        assert ni is not None
        assert ni.requested.milli_cpu <= ni.allocatable.milli_cpu


def test_a_scheduled_pod_evicted_later_reads_preempted_and_victims_span_rounds() -> None:
    s = Scheduler(None, seed=1)
    s.load([make_node("n1", cpu="2"), make_node("n2", cpu="2")],
           [make_pod("v1", cpu="2", priority=0, node="n1"), make_pod("v2", cpu="2", priority=0)])
    s.run()
    assert (s.results["default/v2"].outcome, s.results["default/v2"].node) == (SCHEDULED, "n2")

    # round 1: p preempts on one node and is nominated there
    s.add_pod(make_pod("p", cpu="2", priority=100))
    s.run(max_cycles=1)
    rp = s.results["default/p"]
    first = rp.nominated_node
    assert first in ("n1", "n2") and len(rp.victims) == 1

    # x, more important than p, takes p's nominated node; round 2: p preempts on the other node
    s.add_pod(make_pod("x", cpu="2", priority=1000))
    s.run()
    rx = s.results["default/x"]
    assert (rx.outcome, rx.node) == (SCHEDULED, first)
    other = "n2" if first == "n1" else "n1"
    assert (rp.outcome, rp.node, rp.nominated_node) == (SCHEDULED, other, other)
    assert sorted(rp.victims) == ["default/v1", "default/v2"]

    rv2 = s.results["default/v2"]
    assert (rv2.outcome, rv2.node) == (PREEMPTED, None)
    assert rv2.message == "Preempted by pod default/p on node n2"
    assert_report_matches_cluster(s)


def test_the_issue_case_a_2cpu_node_is_never_reported_holding_more() -> None:
    """Before the fix: low was reported Scheduled on n1 next to high (2 + 1.1 cpu on a 2-cpu node)."""
    s = Scheduler(None)
    s.load([make_node("n1", cpu="2")], [make_pod("low", cpu="2", priority=0)])
    s.run()
    s.add_pod(make_pod("high", cpu="1100m", priority=10))
    results: dict[str, PodResult] = {r.pod: r for r in s.run()}
    assert results["default/low"].outcome == PREEMPTED
    assert (results["default/high"].outcome, results["default/high"].victims) == (SCHEDULED, ["default/low"])
    reported = sum({"default/low": 2000, "default/high": 1100}[k] for k, r in results.items()
                   if r.outcome == SCHEDULED)
    assert reported <= 2000
    assert_report_matches_cluster(s)


def _pod_doc(name: str, cpu: str, priority: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"priority": priority, "containers": [{"name": "c", "image": "x",
                                                            "resources": {"requests": {"cpu": cpu}}}]}}


def test_cli_reports_preempted_outcome_and_counts_it(tmp_path: Path) -> None:
    """One CLI run where a lower-priority pod is scheduled, then evicted: high needs a pod labelled app=mid
    on its node, so it fails first (no such pod yet); mid (as important as high: never a victim) and low are
    scheduled onto n1; high, requeued when mid is bound, then preempts low (high fits beside mid)."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
    high = _pod_doc("high", "1", 100)
    high["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "mid"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    docs = [node, high, _pod_doc("mid", "500m", 100, {"app": "mid"}), _pod_doc("low", "1500m", 0)]
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(cluster), "--output", "json"], out, err) == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    pods = {p["pod"]: p for p in doc["pods"]}
    assert (pods["default/high"]["outcome"], pods["default/high"]["node"]) == ("Scheduled", "n1")
    assert pods["default/high"]["victims"] == ["default/low"]
    assert (pods["default/mid"]["outcome"], pods["default/mid"]["node"]) == ("Scheduled", "n1")
    low = pods["default/low"]
    assert (low["outcome"], low["node"], low["message"]) == ("Preempted", None, "Preempted by pod default/high on "
                                                                                "node n1")
    assert doc["stats"]["preempted"] == 1 and doc["stats"]["scheduled"] == 2

    out = io.StringIO()
    assert main(["schedule", "--cluster", str(cluster)], out, io.StringIO()) == 0
    table = out.getvalue()
    assert "default/low   Preempted  -" in table
    assert "2 scheduled, 0 unschedulable, 0 errors, 1 preempted in" in table
