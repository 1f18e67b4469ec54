"""Real-shaped dumps (``kubectl get -o yaml`` output) get kube-scheduler's answer: tests/fixtures/real/."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.cluster import load_cluster
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator
from scheduling_framework.warning_list import MAX_ITEMS, Warnings, merged
from tests.fixture_runner import ROOT

REAL = ROOT / "tests" / "fixtures" / "real"


def run_json(*args: str) -> tuple[dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(["schedule", *args, "--output", "json", "--seed", "1"], stdout=out, stderr=err)
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()


def by_pod(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["pod"]: r for r in doc["pods"]}


# --- terminating pods, pods for other schedulers, orphans, unknown kinds --------------------------


TERMINATING = str(REAL / "terminating-and-foreign.yaml")


def test_terminating_pending_pod_is_skipped_and_takes_no_room() -> None:
    doc, _ = run_json("--cluster", TERMINATING)
    r = by_pod(doc)["default/batch-old"]
    assert r["outcome"] == "Skipped" and r["node"] is None
    assert "being deleted" in r["message"]
    assert doc["stats"]["skipped"] == 2


def test_bound_terminating_pod_still_holds_its_resources() -> None:
    # cache-0 (1.5 cpu, Terminating) still runs on node-a: web (1 cpu) only fits on node-b
    doc, _ = run_json("--cluster", TERMINATING)
    assert by_pod(doc)["default/web"]["node"] == "node-b"


def test_pod_for_another_scheduler_is_skipped_naming_it() -> None:
    doc, _ = run_json("--cluster", TERMINATING)
    r = by_pod(doc)["ml/gpu-job"]
    assert r["outcome"] == "Skipped" and r["schedulerName"] == "volcano"
    assert '"volcano"' in r["message"]
    assert any('"volcano"' in w and "ml/gpu-job" in w for w in doc["warnings"])


def test_warnings_list_everything_ignored() -> None:
    doc, err = run_json("--cluster", TERMINATING)
    assert doc["warnings"] == [
        'ignored object(s) of kind "ConfigMap" (nothing in the scheduler reads it): default/kube-root-ca.crt',
        'ignored bound pod(s) whose node is not in the input (they take no room): default/ghost (node "node-gone")',
        "skipped pending pod(s) being deleted (metadata.deletionTimestamp is set): default/batch-old",
        'skipped pending pod(s) for schedulerName "volcano", which no profile of the configuration serves: '
        "ml/gpu-job",
    ]
    assert err == ""  # JSON carries them; stderr stays quiet


def test_warnings_always_present_in_json(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: '1', pods: '9'}}\n")
    doc, _ = run_json("--cluster", str(f))
    assert doc["warnings"] == []


def test_table_prints_warnings_on_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", TERMINATING], stdout=out, stderr=err) == 0
    assert "default/batch-old  Skipped" in out.getvalue()
    assert "2 skipped" in out.getvalue()
    lines = err.getvalue().splitlines()
    assert len(lines) == 4 and all(x.startswith("warning: ") for x in lines)
    assert "warning" not in out.getvalue()


def test_cli_subprocess_json_has_warnings() -> None:
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", TERMINATING,
                        "--output", "json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["warnings"]) == 4


def test_python_api_scheduler_skips_and_warns() -> None:
    cluster = load_cluster(TERMINATING)
    assert cluster.warnings.to_list()[0].startswith('ignored object(s) of kind "ConfigMap"')
    sched = Scheduler(seed=1)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    sched.run()
    assert {k: r.outcome for k, r in sched.results.items()} == {
        "default/batch-old": "Skipped", "ml/gpu-job": "Skipped", "default/web": "Scheduled"}
    assert sched.results["default/web"].node == "node-b"
    assert sched.warnings.items_of(
        "ignored bound pod(s) whose node is not in the input (they take no room)") == [
        'default/ghost (node "node-gone")']
    assert sched.cache.get_pod("0a1b2c3d-0000-4000-8000-000000000004") is None  # the orphan takes no room


def test_simulator_from_cluster_skips_orphans_with_a_warning() -> None:
    cluster = load_cluster(TERMINATING)
    sim = Simulator.from_cluster(cluster, seed=1)
    assert any("default/ghost" in w for w in sim.warnings)
    assert any("ConfigMap" in w for w in sim.warnings)  # the cluster's loading warnings come along
    assert sim.cluster.get("node-a").requested.milli_cpu == 1500  # the terminating pod holds its room


# --- the Warnings mechanism ------------------------------------------------------------------------


def test_warnings_dedupe_group_and_merge() -> None:
    w = Warnings(["a", "a"])
    w.add_item("g", "x")
    w.add_item("g", "x")
    w.add_item("g", "y")
    w.add("b")
    assert w.to_list() == ["a", "g: x, y", "b"] and len(w) == 3 and "b" in w
    many = Warnings()
    for i in range(MAX_ITEMS + 2):
        many.add_item("h", str(i))
    assert many.to_list()[0].endswith(f"9 and 2 more ({MAX_ITEMS + 2} in all)")
    assert merged(w, ["a", "c"], many)[:4] == ["a", "g: x, y", "b", "c"]
    other = Warnings()
    other.add_item("g", "z")
    w.extend(other)
    assert w.items_of("g") == ["x", "y", "z"]


def _doc_example(doc: str, heading: str) -> tuple[str, str]:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and out is not None
    return code.group(1), out.group(1)


def test_embedding_doc_warnings_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    code, expected = _doc_example("embedding.md", "## Warnings")
    monkeypatch.chdir(ROOT)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "embedding.md", "exec"), {"__name__": "embedding_example"})
    assert buf.getvalue() == expected
