"""Preemption seen from the command line: a full cluster, a high-priority pending pod, the nominated node and
the victims in the output, and the pod finally scheduled on that node."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.fixture_runner import ROOT

# The default profile minus the volume plugins, which take no part here.
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [
              {"name": "VolumeRestrictions"}, {"name": "NodeVolumeLimits"}, {"name": "VolumeBinding"},
              {"name": "VolumeZone"}]}}}]}


def _command() -> list[str]:
    exe = shutil.which("scheduling-framework", path=os.path.dirname(sys.executable)) or shutil.which(
        "scheduling-framework")
    return [exe] if exe else [sys.executable, "-m", "scheduling_framework"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_command(), *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}


def pod(name: str, cpu: str, priority: int, node_name: str = "", labels: dict[str, str] | None = None
        ) -> dict[str, Any]:
    p: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": {"priority": priority,
                 "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
        p["status"] = {"phase": "Running", "startTime": "2024-05-01T10:00:00Z"}
    return p


def full_cluster() -> list[dict[str, Any]]:
    """Three full nodes. node-a runs the lowest-priority pods, but one is covered by a PDB with no budget
    left; node-c's pods are cheap to evict; node-b runs a pod as important as the pending one."""
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
           "status": {"disruptionsAllowed": 0}}
    return [
        node("node-a"), node("node-b"), node("node-c"),
        pod("db-0", "1500m", 10, "node-a", {"app": "db"}),
        pod("batch-a", "500m", 10, "node-a"),
        pod("critical", "2", 1000, "node-b"),
        pod("web-1", "1", 100, "node-c"),
        pod("web-2", "1", 100, "node-c"),
        pdb,
        pod("urgent", "1500m", 1000),
    ]


def write(tmp_path: Path, name: str, docs: list[dict[str, Any]]) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs))
    return str(p)


def test_cli_json_shows_nominated_node_victims_and_final_node(tmp_path: Path) -> None:
    """The default profile (no --config), as a user runs it."""
    cluster = write(tmp_path, "cluster.yaml", full_cluster())
    p = cli("schedule", "--cluster", cluster, "--output", "json", "--seed", "3")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    [r] = out["pods"]
    # node-a would need the PDB-protected db-0 evicted; node-b's pod is not lower priority: node-c it is.
    assert r["pod"] == "default/urgent"
    assert r["nominatedNode"] == "node-c"
    assert sorted(r["victims"]) == ["default/web-1", "default/web-2"]
    assert r["outcome"] == "Scheduled"
    assert r["node"] == "node-c"
    assert out["stats"]["scheduled"] == 1


def test_cli_table_and_unschedulable_message(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", full_cluster())
    cfg = write(tmp_path, "config.yaml", [CONFIG])
    p = cli("schedule", "--cluster", cluster, "--config", cfg)
    assert p.returncode == 0, p.stderr
    assert "default/urgent  Scheduled  node-c" in p.stdout
    assert "[nominated node-c; victims: default/web-1, default/web-2]" in p.stdout

    # The same pod at priority 10 preempts nobody: the upstream FitError message gains the preemption part.
    docs = full_cluster()
    docs[-1]["spec"]["priority"] = 10
    cluster = write(tmp_path, "low.yaml", docs)
    p = cli("schedule", "--cluster", cluster, "--config", cfg, "--output", "json")
    assert p.returncode == 0, p.stderr
    [r] = json.loads(p.stdout)["pods"]
    assert (r["outcome"], r["nominatedNode"], r["victims"]) == ("Unschedulable", None, [])
    # DynamicResources runs first at PostFilter (default profile, as upstream since DRA GA) and adds its reason
    assert r["message"] == ("0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: "
                            "0/3 nodes are available: 3 No preemption victims found for incoming pod..")
