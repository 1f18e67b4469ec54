"""Gang scheduling from the command line: `schedule` (table, JSON, HTML report) says whether each pod group
was placed whole and why not; `config view` shows GangScheduling behind its gates."""

from __future__ import annotations

import io
import json
from pathlib import Path

from scheduling_framework.cli import main

ROOT = Path(__file__).resolve().parents[2]
GATES = ["--kubernetes-version", "1.35", "--feature-gates", "GenericWorkload=true,GangScheduling=true"]


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_json_names_the_group_and_why_it_failed() -> None:
    code, out, _ = cli("schedule", "--cluster", str(ROOT / "examples/gang/too-small.yaml"), "--output", "json", *GATES)
    doc = json.loads(out)
    assert code == 0
    assert {p["outcome"] for p in doc["pods"]} == {"Unschedulable"}
    assert {p["podGroup"] for p in doc["pods"]} == {"default/train/workers"}
    (group,) = doc["podGroups"]
    assert (group["policy"], group["minCount"], group["outcome"], group["scheduled"]) == ("gang", 4, "Unschedulable", 0)
    assert "waited at Permit until the 5m0s timeout" in group["message"]


def test_table_lists_pod_groups() -> None:
    _, out, _ = cli("schedule", "--cluster", str(ROOT / "examples/gang/fits.yaml"), *GATES)
    assert "POD GROUP" in out
    assert "default/train/workers  gang (minCount 4)  Scheduled  4/4" in out


def test_json_without_workloads_has_no_pod_groups() -> None:
    _, out, _ = cli("schedule", "--cluster", str(ROOT / "examples/tiny-cluster.yaml"), "--output", "json")
    assert "podGroups" not in json.loads(out)


def test_html_report_carries_the_groups(tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    cli("schedule", "--cluster", str(ROOT / "examples/gang/too-small.yaml"), "--report", str(report), *GATES)
    html = report.read_text()
    assert '"podGroups":[{"podGroup":"default/train/workers"' in html


def test_config_view_shows_gang_scheduling_only_behind_its_gates() -> None:
    _, on, _ = cli("config", "view", "--output", "json", *GATES)
    _, off, _ = cli("config", "view", "--output", "json", "--kubernetes-version", "1.35")
    plugins_on = json.loads(on)["profiles"][0]["plugins"]
    plugins_off = json.loads(off)["profiles"][0]["plugins"]
    assert [p["name"] for p in plugins_on["permit"]] == ["GangScheduling"]
    assert plugins_on["preEnqueue"][-1]["name"] == "GangScheduling"
    assert plugins_on["reserve"][-1]["name"] == "GangScheduling"
    assert "GangScheduling" not in json.dumps(plugins_off)
