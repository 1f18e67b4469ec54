"""In-place resize seen by the scheduler: a running pod whose resize is pending or in progress holds the larger
of its desired, allocated and actual requests on its node (NodeInfo accounting, NodeResourcesFit, the scorers),
per release, through Scheduler, Simulator and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.api import Pod
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_node, make_pod

NODE = make_node().name("n1").capacity(cpu="4", memory="8Gi").obj()


def _running(cpu_spec: str, cpu_allocated: str, cpu_actual: str, *, condition: str | None = None) -> Pod:
    status: dict[str, Any] = {"phase": "Running", "containerStatuses": [
        {"name": "app", "allocatedResources": {"cpu": cpu_allocated},
         "resources": {"requests": {"cpu": cpu_actual}}}]}
    if condition is not None:
        status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": condition}]
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "resizing", "namespace": "default"},
                          "spec": {"nodeName": "n1", "containers": [
                              {"name": "app", "resources": {"requests": {"cpu": cpu_spec}}}]},
                          "status": status})


PENDING = make_pod().name("new").req(cpu="2").obj()


@pytest.mark.parametrize(("running", "outcome"), [
    pytest.param(_running("1", "1", "1"), "Scheduled", id="no resize: 1 cpu held"),
    pytest.param(_running("3", "1", "1"), "Unschedulable", id="upsize pending (Deferred): desired 3 held"),
    pytest.param(_running("1", "3", "3"), "Unschedulable", id="downsize in progress: allocated 3 held"),
    pytest.param(_running("3", "1", "1", condition="Infeasible"), "Scheduled",
                 id="infeasible upsize: desired left out"),
])
def test_scheduler_counts_the_resize(running: Pod, outcome: str) -> None:
    sched = Scheduler(seed=1)
    sched.load([NODE], [running, PENDING])
    sched.run()
    r = sched.results[PENDING.key]
    assert r.outcome == outcome, r.message
    if outcome == "Unschedulable":
        assert "Insufficient cpu" in (r.message or "")


def _opposite() -> Pod:
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two", "namespace": "default"},
                          "spec": {"nodeName": "n1", "containers": [
                              {"name": "a", "resources": {"requests": {"cpu": "1"}}},
                              {"name": "b", "resources": {"requests": {"cpu": "2"}}}]},
                          "status": {"phase": "Running", "containerStatuses": [
                              {"name": "a", "resources": {"requests": {"cpu": "2"}}},
                              {"name": "b", "resources": {"requests": {"cpu": "1"}}}]}})


@pytest.mark.parametrize(("release", "outcome"), [("1.36", "Unschedulable"), ("1.37", "Scheduled")])
def test_opposite_resizes_per_release(release: str, outcome: str) -> None:
    # a 1-cpu pod fits next to 3 cpus (1.37: the larger total) but not next to 4 (1.36: each container's peak)
    pod = make_pod().name("new").req(cpu="1").obj()
    for engine in ("scheduler", "simulator"):
        if engine == "scheduler":
            sched = Scheduler(kubernetes_version=release, seed=1)
            sched.load([NODE], [_opposite(), pod])
            sched.run()
            got = sched.results[pod.key].outcome
        else:
            sim = Simulator(kubernetes_version=release)
            sim.add_node(NODE)
            sim.add_pod(_opposite())
            got = "Scheduled" if sim.find_node_for_pod(pod) is not None else "Unschedulable"
        assert got == outcome, engine


def test_scorers_see_the_resize() -> None:
    # two nodes, the same running pod on each; on n2 it is mid-downsize (allocated 3): n2 looks fuller
    n2 = make_node().name("n2").capacity(cpu="4", memory="8Gi").obj()
    on_n1 = _running("1", "1", "1")
    raw = _running("1", "3", "1").to_dict()
    on_n2 = Pod.from_dict({**raw, "metadata": {"name": "other", "namespace": "default"},
                           "spec": {**raw["spec"], "nodeName": "n2"}})
    small = make_pod().name("small").req(cpu="1").obj()
    sched = Scheduler(explain=True, seed=1)
    sched.load([NODE, n2], [on_n1, on_n2, small])
    sched.run()
    r = sched.results[small.key]
    fit = {n: s["NodeResourcesFit"]["raw"] for n, s in (r.scores or {}).items()}
    assert fit["n1"] > fit["n2"]
    assert r.node == "n1"


def test_cli_schedule_counts_the_resize(tmp_path: Path) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all([NODE.to_dict(), _running("3", "1", "1").to_dict(), PENDING.to_dict()]))
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", str(cluster),
                        "--output", "json"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    [result] = json.loads(p.stdout)["pods"]
    assert result["outcome"] == "Unschedulable"
    assert "Insufficient cpu" in result["message"]


def test_cli_reports_a_bad_status_quantity_with_its_path(tmp_path: Path) -> None:
    bad = _running("1", "1", "1").to_dict()
    bad["status"]["containerStatuses"][0]["allocatedResources"] = {"cpu": "many"}
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all([NODE.to_dict(), bad]))
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", str(cluster)],
                       capture_output=True, text=True, check=False)
    assert p.returncode != 0
    assert "status.containerStatuses[0].allocatedResources.cpu" in p.stderr
    assert "Traceback" not in p.stderr


def test_simulator_recounts_a_snapshot_built_for_other_rules() -> None:
    from scheduling_framework.simulation import ClusterSnapshot

    snapshot = ClusterSnapshot([NODE], [_opposite()])  # the newest release's rules: 3 cpus held
    sim = Simulator(kubernetes_version="1.36", cluster=snapshot)  # 1.36 counts 4
    assert sim.find_node_for_pod(make_pod().name("new").req(cpu="1").obj()) is None
    assert snapshot.node_infos()[0].requested.milli_cpu == 4000
