"""The CLI through a subprocess, as a user runs it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixture_runner import ROOT

NO_VOLUME_OR_PREEMPTION = None  # the default profile once every default plugin exists


def cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scheduling_framework", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def write(tmp_path: Path, name: str, docs: list[dict]) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs))
    return str(p)


NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}


def pod(name: str, cpu: str = "1", node: str | None = None) -> dict:
    p: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}
    if node:
        p["spec"]["nodeName"] = node
    return p


MINIMAL_CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                      "enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"},
                                  {"name": "DefaultBinder"}],
                      "disabled": [{"name": "*"}]}}}]}


def test_schedule_json_shape(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", [NODE, pod("a"), pod("b"), pod("c")])
    cfg = write(tmp_path, "k.yaml", [MINIMAL_CONFIG])
    p = cli("schedule", "--cluster", cluster, "--config", cfg, "--output", "json", "--seed", "1")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    got = {r["pod"]: (r["outcome"], r["node"]) for r in out["pods"]}
    assert got == {"default/a": ("Scheduled", "n1"), "default/b": ("Scheduled", "n1"),
                   "default/c": ("Unschedulable", None)}
    c = next(r for r in out["pods"] if r["pod"] == "default/c")
    assert c["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert "filter" not in c  # only with --explain
    assert out["stats"]["scheduled"] == 2 and out["stats"]["unschedulable"] == 1
    assert set(c) >= {"pod", "schedulerName", "outcome", "node", "nominatedNode", "victims", "message"}


def test_schedule_explain_has_filter_and_scores(tmp_path: Path) -> None:
    n2 = {**NODE, "metadata": {"name": "n2"}}
    cluster = write(tmp_path, "c.yaml", [NODE, n2, pod("big", cpu="3"), pod("a")])
    cfg = write(tmp_path, "k.yaml", [MINIMAL_CONFIG])
    p = cli("schedule", "--cluster", cluster, "--config", cfg, "--output", "json", "--explain")
    out = json.loads(p.stdout)
    big = next(r for r in out["pods"] if r["pod"] == "default/big")
    # above the node's whole allocatable: preemption cannot help (newest upstream)
    assert big["filter"]["n1"] == {"code": "UnschedulableAndUnresolvable", "plugin": "NodeResourcesFit",
                                   "reasons": ["Insufficient cpu"]}
    a = next(r for r in out["pods"] if r["pod"] == "default/a")
    assert a["filter"] == {"n1": {"code": "Success"}, "n2": {"code": "Success"}}
    assert set(a["scores"]["n1"]["NodeResourcesFit"]) == {"raw", "normalized", "weighted"}
    assert a["totalScores"]["n1"] == a["scores"]["n1"]["NodeResourcesFit"]["weighted"]


def test_table_output_and_explain(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", [NODE, pod("a"), pod("huge", cpu="9")])
    cfg = write(tmp_path, "k.yaml", [MINIMAL_CONFIG])
    p = cli("schedule", "--cluster", cluster, "--config", cfg, "--explain")
    assert p.returncode == 0
    assert "default/a" in p.stdout and "Scheduled" in p.stdout
    assert "0/1 nodes are available: 1 Insufficient cpu." in p.stdout
    assert "NODE" in p.stdout and "FILTER" in p.stdout


def test_kind_list_input(tmp_path: Path) -> None:
    lst = {"apiVersion": "v1", "kind": "List", "items": [NODE, pod("a")]}
    cluster = write(tmp_path, "c.yaml", [lst])
    cfg = write(tmp_path, "k.yaml", [MINIMAL_CONFIG])
    p = cli("schedule", "--cluster", cluster, "--config", cfg, "--output", "json")
    assert json.loads(p.stdout)["pods"][0]["node"] == "n1"


@pytest.mark.parametrize(("docs", "needle"), [
    ([NODE, {**pod("x"), "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1.5.3"}}}]}}],
     'Pod default/x: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"'),
    ([{"kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": [{"key": "k", "effect": "Bogus"}]}}],
     "Node n: spec.taints[0].effect"),
    (["just a string"], "expected an object manifest"),
])
def test_bad_cluster_input_exit_2_one_line(tmp_path: Path, docs: list, needle: str) -> None:
    cluster = write(tmp_path, "c.yaml", docs)
    cfg = write(tmp_path, "k.yaml", [MINIMAL_CONFIG])
    p = cli("schedule", "--cluster", cluster, "--config", cfg)
    assert p.returncode == 2
    assert needle in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_malformed_yaml_names_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Node\nmetadata: {name: n1\n")
    p = cli("schedule", "--cluster", str(bad))
    assert p.returncode == 2 and "invalid YAML at" in p.stderr and "bad.yaml:" in p.stderr


def test_missing_file_exit_2(tmp_path: Path) -> None:
    p = cli("schedule", "--cluster", str(tmp_path / "nope.yaml"))
    assert p.returncode == 2 and "cannot read cluster file" in p.stderr


def test_invalid_config_exit_2(tmp_path: Path) -> None:
    cfg = write(tmp_path, "k.yaml", [{"apiVersion": "kubescheduler.config.k8s.io/v1",
                                      "kind": "KubeSchedulerConfiguration",
                                      "profiles": [{"schedulerName": "default-scheduler",
                                                    "plugins": {"filter": {"enabled": [{"name": "NoSuch"}]}}}]}])
    cluster = write(tmp_path, "c.yaml", [NODE])
    p = cli("schedule", "--cluster", cluster, "--config", cfg)
    assert p.returncode == 2 and "NoSuch" in p.stderr and "Traceback" not in p.stderr


def test_config_view_default_profile() -> None:
    p = cli("config", "view", "--output", "json")
    assert p.returncode == 0, p.stderr
    prof = json.loads(p.stdout)["profiles"][0]
    assert prof["schedulerName"] == "default-scheduler"
    assert [e["name"] for e in prof["plugins"]["queueSort"]] == ["PrioritySort"]
    score = {e["name"]: e["weight"] for e in prof["plugins"]["score"]}
    assert score["TaintToleration"] == 3 and score["NodeAffinity"] == 2 and score["NodeResourcesFit"] == 1


def test_plugins_lists_intree_with_origin() -> None:
    p = cli("plugins", "--output", "json")
    assert p.returncode == 0, p.stderr
    plugins = {i["name"]: i for i in json.loads(p.stdout)["plugins"]}
    assert "filter" in plugins["NodeResourcesFit"]["extensionPoints"]
    assert "scheduling-framework" in plugins["NodeResourcesFit"]["origin"]


def test_usage_error_exit_2() -> None:
    p = cli("schedule")
    assert p.returncode == 2


def test_demo_is_the_readme_demo() -> None:
    """``demo`` gives exactly what the README's command on examples/cluster.yaml gives."""
    from scheduling_framework.cli import main
    from tests.fixture_runner import ROOT

    demo_out, demo_err = io.StringIO(), io.StringIO()
    assert main(["demo", "--output", "json", "--seed", "1"], stdout=demo_out, stderr=demo_err) == 0
    ref_out, ref_err = io.StringIO(), io.StringIO()
    args = ["schedule", "--cluster", str(ROOT / "examples" / "cluster.yaml"), "--expand-workloads", "--explain",
            "--output", "json", "--seed", "1"]
    assert main(args, stdout=ref_out, stderr=ref_err) == 0
    demo, ref = json.loads(demo_out.getvalue()), json.loads(ref_out.getvalue())
    demo["stats"].pop("seconds"), ref["stats"].pop("seconds")
    assert demo == ref and demo_err.getvalue() == ref_err.getvalue() == ""
    printed = io.StringIO()
    assert main(["demo", "--print-cluster"], stdout=printed) == 0
    assert printed.getvalue() == (ROOT / "examples" / "cluster.yaml").read_text(encoding="utf-8")


def test_demo_rejects_unknown_flags() -> None:
    from scheduling_framework.cli import main

    err = io.StringIO()
    assert main(["demo", "--cluster", "x.yaml"], stdout=io.StringIO(), stderr=err) == 2


def test_loading_progress_bar_shows_megabytes_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """--progress draws a bar of the megabytes read while the cluster loads (the reader reports as it reads)."""
    import time

    from scheduling_framework import cli, cluster
    from scheduling_framework.report import progress

    def slow_load(path: str, *, max_input_bytes: int | None = None, progress: Any = None, strict: bool = False) -> str:
        if progress is not None:
            progress(3 << 20, 10 << 20)
            time.sleep(0.3)
        return "loaded"

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.05)
    monkeypatch.setattr(cluster, "load_cluster", slow_load)
    err = io.StringIO()
    assert cli.load_cluster_with_progress("dump.json", None, err, True) == "loaded"
    assert "3/10 MB" in err.getvalue()
    quiet = io.StringIO()
    assert cli.load_cluster_with_progress("dump.json", None, quiet, False) == "loaded" and quiet.getvalue() == ""
