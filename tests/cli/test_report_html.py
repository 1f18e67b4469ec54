"""``schedule --report run.html``: the page's data, and the page itself in a real headless Chromium
(Debian's package, driven by Playwright): it loads offline, logs no console error, and shows the numbers
of the JSON output of the same run, what would make a pending pod fit (``--why``) and each pod's Filter
verdicts grouped by reason."""

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
from scheduling_framework.report.table import verdict_text
from tests.cli.test_cli_chaining import node, pod, write
from tests.fixture_runner import ROOT

EXAMPLE = str(ROOT / "examples" / "cluster.yaml")
REMEDIES = str(ROOT / "examples" / "remedies" / "cluster.yaml")
TEMPLATES = str(ROOT / "examples" / "remedies" / "node-templates.yaml")
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
    page.wait_for_selector(".drill table.verdicts")
    huge = next(p for p in doc["pods"] if p["pod"] == "default/huge")
    assert groups(page) == rejected_groups(huge) == {verdict_text(huge["filter"]["n1"]): 2}
    assert page.query_selector(".drill table.explain") is None  # no node passed Filter
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


def groups(page: Any) -> dict[str, int]:
    """The open pod's rejected nodes as the page groups them: verdict -> node count."""
    return {r.query_selector(".verdict").inner_text(): int(r.get_attribute("data-count"))
            for r in page.query_selector_all(".drill table.verdicts tbody tr.group:not(.passed)")}


def rejected_groups(p: dict[str, Any]) -> dict[str, int]:
    """The same from the JSON output: as ``schedule --explain --explain-nodes N`` groups them."""
    out: dict[str, int] = {}
    for st in p["filter"].values():
        if st["code"] != "Success":
            out[verdict_text(st)] = out.get(verdict_text(st), 0) + 1
    return out


def open_page(browser: Any, url: str, **context: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(offline=True, **context)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return ctx, page, errors


def test_report_carries_what_would_make_it_fit(tmp_path: Path) -> None:
    page, doc = report(tmp_path, REMEDIES, "--why", "--node-template", TEMPLATES)
    data = embedded(page)
    assert [unpacked(data, p) for p in data["pods"]] == doc["pods"]
    bigdb = next(p for p in data["pods"] if p["pod"] == "shop/bigdb")
    assert bigdb["facts"] and bigdb["remedies"] and bigdb["why"]["shortfalls"]
    plain, _ = report(tmp_path, REMEDIES)
    assert not any("remedies" in p for p in embedded(plain)["pods"])


def test_what_would_make_it_fit_in_a_real_browser(tmp_path: Path, browser: Any) -> None:
    page_file, doc = report(tmp_path, REMEDIES, "--why", "--node-template", TEMPLATES)
    ctx, page, errors = open_page(browser, page_file.as_uri() + "#pod=shop/bigdb")
    page.wait_for_selector(".drill .why")
    bigdb = next(p for p in doc["pods"] if p["pod"] == "shop/bigdb")
    why = page.query_selector(".drill .why")
    assert why.query_selector("h3").inner_text() == "What would make shop/bigdb fit"
    # led by the facts, then one row per remedy: change, nodes opened, lands on, verified
    assert [f.inner_text() for f in why.query_selector_all("li.fact")] == bigdb["facts"]
    rows = why.query_selector_all("table.remedies tbody tr.remedy")
    assert [r.get_attribute("data-kind") for r in rows] == [r["kind"] for r in bigdb["remedies"]]
    for row, r in zip(rows, bigdb["remedies"], strict=True):
        cells = row.query_selector_all(":scope > td")
        assert cells[0].inner_text().startswith(r["change"])
        assert [c.inner_text() for c in cells[1:]] == [str(r["nodesOpened"]), r["landsOn"], "verified"]
    # the JSON patch, collapsed until asked for
    patch = rows[0].query_selector("details.patch")
    assert not patch.query_selector("pre").is_visible()
    patch.query_selector("summary").click()
    op = bigdb["remedies"][0]["patches"][0]["patch"][0]
    assert json.loads(patch.query_selector("pre").inner_text().splitlines()[1]) == [op]
    # the closest nodes' shortfalls
    shortfalls = [li.inner_text() for li in why.query_selector_all("ul.shortfalls li")]
    assert len(shortfalls) == len(bigdb["why"]["shortfalls"])
    assert shortfalls[0] == "n-a1: memory " + bigdb["why"]["shortfalls"][0]["short"]["memory"] + " short"
    # the node verdicts grouped by reason, one row each with its node count, as the terminal groups them
    assert groups(page) == rejected_groups(bigdb)
    assert len(page.query_selector_all(".drill table.verdicts tbody tr")) < len(bigdb["filter"])
    assert errors == []
    ctx.close()


def test_names_from_the_cluster_file_stay_text_in_a_real_browser(tmp_path: Path, browser: Any) -> None:
    claim = pod("claim", cpu="100m")
    claim["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "missing"}}]
    cluster = write(tmp_path, "c.yaml", [node("<b>n1</b>"), node("n2", cpu="1"), pod("<b>p</b>", cpu="3"), claim])
    page_file, doc = report(tmp_path, cluster, "--why")
    ctx, page, errors = open_page(browser, page_file.as_uri())
    assert page.query_selector_all("main b") == []
    page.click("#pods tbody tr.pod[data-pod='default/<b>p</b>']")
    page.wait_for_selector(".drill .why")
    rec = next(p for p in doc["pods"] if p["pod"] == "default/<b>p</b>")
    assert [f.inner_text() for f in page.query_selector_all(".why li.fact")] == rec["facts"]
    assert "<b>n1</b>" in rec["facts"][0]
    [remedy] = page.query_selector_all(".why tr.remedy")
    assert remedy.query_selector_all("td")[2].inner_text() == "<b>n1</b>"
    page.click(".drill table.verdicts tr.group summary")
    # the names are listed on the details' toggle event, after the click returns
    name = page.wait_for_selector(".drill table.verdicts span[data-node='<b>n1</b>']")
    assert name is not None and name.inner_text() == "<b>n1</b>"
    assert page.query_selector_all("main b") == []
    # a rejection no remedy answers is named
    page.click("#pods tbody tr.pod[data-pod='default/claim']")
    page.wait_for_selector(".drill .why p.not-computed")
    rec = next(p for p in doc["pods"] if p["pod"] == "default/claim")
    assert page.inner_text(".why p.not-computed") == rec["why"]["notComputed"][0]
    assert "No single change or combination found" in page.inner_text(".drill .why")
    assert errors == []
    ctx.close()


def test_a_linked_pod_lands_below_the_sticky_header(tmp_path: Path, browser: Any) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1", cpu="64"), *(pod(f"p-{i:02d}", cpu="100m") for i in range(40))])
    page_file, _ = report(tmp_path, cluster)
    ctx, page, errors = open_page(browser, page_file.as_uri() + "#pod=default/p-30",
                                  viewport={"width": 1000, "height": 400})
    page.wait_for_selector("#pods tr.pod.open[data-pod='default/p-30']")

    def gap() -> float:
        """The linked row's top less the bottom of the pods table's sticky header (stuck to the viewport's top)."""
        top, bottom, header_top = page.evaluate("""() => {
            const head = document.querySelector("#pods thead th").getBoundingClientRect();
            const row = document.getElementById("pod=default/p-30").getBoundingClientRect();
            return [row.top, head.bottom, head.top]; }""")
        assert header_top == 0 and page.evaluate("scrollY") > 0
        return float(top - bottom)

    assert 0 <= gap() < 20
    page.evaluate("scrollTo(0, 0)")
    page.evaluate("location.hash = '#pod=default/p-05'")
    page.wait_for_selector("#pods tr.pod.open[data-pod='default/p-05']")
    page.evaluate("location.hash = '#pod=default/p-30'")
    page.wait_for_selector("#pods tr.pod.open[data-pod='default/p-30']")
    assert 0 <= gap() < 20
    assert errors == []
    ctx.close()
