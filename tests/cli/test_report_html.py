"""``schedule --report run.html``: the page's data, and the page itself in a real headless Chromium
(Debian's package, driven by Playwright): it loads offline, logs no console error, and shows the numbers
of the JSON output of the same run."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.report.html import read_explain_blob, render
from tests.cli.test_cli_chaining import node, pod, write
from tests.fixture_runner import ROOT

EXAMPLE = str(ROOT / "examples" / "cluster.yaml")
CHROMIUM = os.environ.get("SF_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def report(tmp_path: Path, cluster: str, *extra: str) -> tuple[Path, dict[str, Any]]:
    page = tmp_path / "run.html"
    code, out, err = run("schedule", "--cluster", cluster, "--seed", "1", "--output", "json", "--explain",
                         "--report", str(page), *extra)
    assert code == 0, err
    return page, json.loads(out)


def embedded(page: Path) -> dict[str, Any]:
    text = page.read_text()
    start = text.index('<script type="application/json" id="run-data">') + len(
        '<script type="application/json" id="run-data">')
    return json.loads(text[start:text.index("</script>", start)].replace("<\\/", "</"))


def unpacked(data: dict[str, Any], p: dict[str, Any]) -> dict[str, Any]:
    """A pod of the report as the JSON output has it: its compressed explanation put back, the report's own
    additions (requests and closest nodes of an unschedulable pod) left out."""
    out = {k: v for k, v in p.items() if k not in ("requests", "closest")}
    blob = data["explain"].get(p["pod"])
    out.update(read_explain_blob(blob) if blob else {"filter": {}, "scores": {}, "totalScores": {}})
    return out


def test_report_is_self_contained_and_its_data_is_the_run(tmp_path: Path) -> None:
    page, doc = report(tmp_path, EXAMPLE)
    text = page.read_text()
    assert "http://" not in text and "https://" not in text and "<link" not in text and " src=" not in text
    data = embedded(page)
    assert [unpacked(data, p) for p in data["pods"]] == doc["pods"]
    assert data["stats"]["scheduled"] == doc["stats"]["scheduled"]
    names = [n["name"] for n in data["nodes"]]
    assert names[:2] == ["node-1", "node-2"] and "gpu-1" in names
    gpu = next(n for n in data["nodes"] if n["name"] == "gpu-1")
    assert "nvidia.com/gpu" in data["resources"] and gpu["allocatable"]["nvidia.com/gpu"] > 0
    placed = sum(1 for p in doc["pods"] if p["node"])
    evicted = sum(len(p["victims"]) for p in doc["pods"])
    assert sum(n["after"]["pods"] - n["before"]["pods"] for n in data["nodes"]) == placed - evicted
    assert any(r["reason"] == "Insufficient cpu" for r in data["failureReasons"])


def test_pod_names_never_become_markup(tmp_path: Path) -> None:
    evil = pod("x")
    evil["metadata"]["labels"] = {"a": "b"}
    evil["metadata"]["annotations"] = {"note": "</script><script>alert(1)</script>"}
    html = render({"stats": {"scheduled": 0, "seconds": 0.0}, "warnings": ["</script><b>x</b>"], "resources": [],
                   "nodes": [], "pods": [], "failureReasons": [], "preemptions": []})
    assert "</script><b>" not in html


def test_report_unwritable_path_is_a_clear_error(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1"), pod("a")])
    code, _, err = run("schedule", "--cluster", cluster, "--report", str(tmp_path / "no" / "such" / "dir.html"))
    assert code == 2 and "cannot write report" in err


@pytest.fixture(scope="module")
def browser() -> Any:
    if CHROMIUM is None:
        pytest.skip("no Chromium: install Debian's chromium (apt-get install -y chromium) to run the browser test")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


def test_report_in_a_real_browser(tmp_path: Path, browser: Any) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1", cpu="2"), node("n2", cpu="1"), pod("run", cpu="1", node="n1",
                                         priority=1), pod("a", cpu="500m"), pod("huge", cpu="9"),
                                         pod("high", cpu="1", priority=100), pod("b", cpu="700m")])
    page_file, doc = report(tmp_path, cluster)
    ctx = browser.new_context(offline=True)
    page = ctx.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    assert errors == []
    assert requests == [page_file.as_uri()]  # nothing fetched but the page itself
    # the header counts are the JSON's
    for key in ("scheduled", "unschedulable"):
        assert page.inner_text(f"#stat-{key} b") == str(doc["stats"][key])
    # one row per pod, with the JSON's outcome and node
    rows = page.query_selector_all("#pods tbody tr.pod")
    shown = {r.get_attribute("data-pod"): [c.inner_text() for c in r.query_selector_all("td")] for r in rows}
    assert set(shown) == {p["pod"] for p in doc["pods"]}
    for p in doc["pods"]:
        assert shown[p["pod"]][1] == p["outcome"] and shown[p["pod"]][2] == (p["node"] or "-")
    # utilization after the run: the pods placed on each node, less the victims evicted from it
    placed = {n: sum(1 for p in doc["pods"] if p["node"] == n) for n in ("n1", "n2")}
    evicted = {n: sum(len(p["victims"]) for p in doc["pods"] if p["nominatedNode"] == n or
                      (p["victims"] and p["node"] == n)) for n in ("n1", "n2")}
    for n in ("n1", "n2"):
        cell = page.query_selector(f"#nodes tr[data-node='{n}'] td[data-res='pods']")
        assert int(cell.get_attribute("data-after")) - int(cell.get_attribute("data-before")) == placed[n] - evicted[n]
    # filter, sort, drill-down
    page.fill("#filter", "huge")
    assert [r.get_attribute("data-pod") for r in page.query_selector_all("#pods tbody tr.pod")] == ["default/huge"]
    page.fill("#filter", "")
    page.select_option("#outcome", "Unschedulable")
    assert all(r.inner_text().find("Unschedulable") >= 0 for r in page.query_selector_all("#pods tbody tr.pod"))
    page.select_option("#outcome", "")
    page.click("#pods th[data-key='pod']")
    order = [r.get_attribute("data-pod") for r in page.query_selector_all("#pods tbody tr.pod")]
    assert order == sorted(order)
    page.click("#pods tbody tr[data-pod='default/huge']")
    page.wait_for_selector(".drill table.explain")
    verdicts = {r.get_attribute("data-node"): r.query_selector_all("td")[1].inner_text()
                for r in page.query_selector_all(".drill table.explain tbody tr")}
    huge = next(p for p in doc["pods"] if p["pod"] == "default/huge")
    assert set(verdicts) == set(huge["filter"])
    assert all(huge["filter"][n]["reasons"][0] in v for n, v in verdicts.items())
    # its requests beside the free room of the closest nodes: cpu 9 against at most 2 free, flagged short
    assert page.inner_text(".drill table.closest tr.requests td.num") == "9"
    closest = page.query_selector_all(".drill table.closest tbody tr[data-node]")
    assert {r.get_attribute("data-node") for r in closest} == {"n1", "n2"}
    assert all(r.query_selector("td.short") is not None for r in closest)
    # failure reasons and preemption
    reasons = [r.query_selector_all("td")[0].inner_text() for r in page.query_selector_all("#reasons tbody tr")]
    assert "Insufficient cpu" in reasons
    victims = page.inner_text("#preemptions tbody")
    high = next(p for p in doc["pods"] if p["pod"] == "default/high")
    for v in high["victims"]:
        assert v in victims
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    if os.environ.get("SF_REPORT_SCREENSHOT"):
        shutil.copy(tmp_path / "report.png", os.environ["SF_REPORT_SCREENSHOT"])
    assert errors == []
    ctx.close()
