"""``schedule --report`` at 500 and 5,000 nodes, in a real headless Chromium (as tests/cli/test_report_html.py):
pending and failed pods first, the node table collapsible / filterable / sortable with over-committed nodes
flagged, an unschedulable pod's requests beside the nodes closest to fitting it, a link per pod, explanations
compressed (a 500-node report stays under 5 MB) and header counts equal to the JSON's (``preempted`` counts
the victims, including a pod that was running before the run). Screenshots go to the test's tmp dir."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_report_html import CHROMIUM, LAUNCH_ARGS, embedded, run

OVERCOMMITTED = ("n-1", "n-2")


def cluster(n_nodes: int) -> dict[str, Any]:
    """n nodes of 4 cpu, one bound pod each (n-0's is a low-priority pod filling it, n-1 and n-2 are
    over-committed); pending: small pods that fit, pods too big for any node, one high-priority pod that
    only n-0 may take (it preempts n-0's running pod)."""
    items: list[dict[str, Any]] = []
    for i in range(n_nodes):
        items.append({"kind": "Node", "metadata": {"name": f"n-{i}", "labels": {"kubernetes.io/hostname": f"n-{i}"}},
                      "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
        cpu = "4" if i == 0 else "6" if f"n-{i}" in OVERCOMMITTED else "1"
        items.append(pod(f"run-{i}", cpu, node=f"n-{i}", priority=0))
    for i in range(12):
        items.append(pod(f"small-{i}", "500m"))
    for i in range(3):
        items.append(pod(f"huge-{i}", "9"))
    high = pod("high", "2", priority=1000)
    high["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n-0"}
    items.append(high)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def pod(name: str, cpu: str, node: str | None = None, priority: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def make_report(tmp_path: Path, n_nodes: int) -> tuple[Path, dict[str, Any]]:
    src = tmp_path / f"c{n_nodes}.json"
    src.write_text(json.dumps(cluster(n_nodes)))
    page = tmp_path / f"run{n_nodes}.html"
    code, out, err = run("schedule", "--cluster", str(src), "--seed", "1", "--output", "json", "--explain",
                         "--report", str(page))
    assert code == 0, err
    return page, json.loads(out)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("scale")
    return {n: make_report(tmp, n) for n in (500, 5000)}


def test_the_json_counts_victims_as_preempted(reports: dict[int, tuple[Path, dict[str, Any]]]) -> None:
    """The victim was running before the run (never a pending pod): it still counts (0 before the fix)."""
    _, doc = reports[500]
    high = next(p for p in doc["pods"] if p["pod"] == "default/high")
    assert (high["outcome"], high["node"], high["victims"]) == ("Scheduled", "n-0", ["default/run-0"])
    assert doc["stats"]["preempted"] == 1


def test_a_500_node_report_stays_under_5_mb(reports: dict[int, tuple[Path, dict[str, Any]]]) -> None:
    page, doc = reports[500]
    assert all(p["filter"] for p in doc["pods"])  # every pod explained (--explain): the heavy case
    assert page.stat().st_size < 5 * 1024 * 1024


def test_over_committed_nodes_are_flagged_in_the_data_and_warned(
        reports: dict[int, tuple[Path, dict[str, Any]]]) -> None:
    page, doc = reports[500]
    data = embedded(page)
    assert {n["name"]: n["overcommitted"] for n in data["nodes"] if "overcommitted" in n} == {
        "n-1": ["cpu"], "n-2": ["cpu"]}
    assert any("over-committed" in w and "n-1 (cpu 6 > 4)" in w for w in doc["warnings"])


@pytest.fixture(scope="module")
def browser() -> Any:
    if CHROMIUM is None:
        pytest.skip("no Chromium: install Debian's chromium (apt-get install -y chromium) to run the browser test")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("n_nodes", [500, 5000])
def test_report_at_scale_in_a_real_browser(reports: dict[int, tuple[Path, dict[str, Any]]], browser: Any,
                                           tmp_path: Path, n_nodes: int) -> None:
    page_file, doc = reports[n_nodes]
    ctx = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    page.screenshot(path=str(tmp_path / f"report-{n_nodes}-top.png"))
    # header counts are the JSON's, preempted included
    for key in ("scheduled", "unschedulable", "errors", "skipped", "preempted"):
        assert page.inner_text(f"#stat-{key} b") == str(doc["stats"][key]), key
    # pending and failed pods first; the pods section comes before the nodes
    outcomes = [r.query_selector_all("td")[1].inner_text() for r in page.query_selector_all("#pods tbody tr.pod")]
    n_bad = sum(o == "Unschedulable" for o in outcomes)
    assert n_bad == 3 and outcomes[:n_bad] == ["Unschedulable"] * n_bad
    assert page.evaluate("document.getElementById('pods').compareDocumentPosition("
                         "document.getElementById('nodes')) & Node.DOCUMENT_POSITION_FOLLOWING") != 0
    # the node table: collapsed at this size, built when opened, filterable, sortable, over-committed flagged
    assert page.evaluate("document.getElementById('nodes-section').open") is False
    assert page.query_selector_all("#nodes tbody tr") == []
    page.click("#nodes-summary")
    page.wait_for_selector("#nodes tbody tr")  # built on the details' toggle event
    rows = page.query_selector_all("#nodes tbody tr")
    assert len(rows) == min(n_nodes, 1000)
    page.fill("#node-filter", "n-42")
    assert [r.get_attribute("data-node") for r in page.query_selector_all("#nodes tbody tr")] == ["n-42"] + [
        f"n-42{i}" for i in range(10) if 420 + i < n_nodes] + [f"n-42{i:02d}" for i in range(100) if 4200 + i < n_nodes]
    page.fill("#node-filter", "")
    page.check("#node-over")
    flagged = page.query_selector_all("#nodes tbody tr.over")
    assert sorted(r.get_attribute("data-node") for r in flagged) == list(OVERCOMMITTED)
    assert all("over-committed: cpu" in r.inner_text() for r in flagged)
    page.uncheck("#node-over")
    page.click("#nodes th[data-key='cpu']")  # busiest first
    top = page.query_selector_all("#nodes tbody tr")[:2]
    assert sorted(r.get_attribute("data-node") for r in top) == list(OVERCOMMITTED)
    # a link per pod: following #pod=ns/name opens it, with its requests beside the closest nodes
    link = page.query_selector("#pods tr[data-pod='default/huge-0'] a.link")
    assert link.get_attribute("href") == "#pod=default/huge-0"
    page.evaluate("location.hash = '#pod=default/huge-0'")
    page.wait_for_selector("#pods tr.pod.open[data-pod='default/huge-0']")
    page.wait_for_selector(".drill table.closest")
    assert page.inner_text(".drill table.closest tr.requests td.num") == "9"
    assert len(page.query_selector_all(".drill table.closest tbody tr[data-node]")) == 5
    # its explanation, decompressed on opening: the nodes grouped by Filter verdict, one row per reason
    [group] = page.query_selector_all(".drill table.verdicts tbody tr.group")
    assert group.get_attribute("data-count") == str(n_nodes)
    shot = tmp_path / f"report-{n_nodes}.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 0
    if os.environ.get("SF_REPORT_SCREENSHOT_DIR"):
        for f in (shot, tmp_path / f"report-{n_nodes}-top.png"):
            shutil.copy(f, os.environ["SF_REPORT_SCREENSHOT_DIR"])
    assert errors == []
    ctx.close()
