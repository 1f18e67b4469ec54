"""``compare --report cmp.html``: the page embeds the JSON document, fetches nothing, and shows both sides in a
real headless Chromium (skipped without one, as tests/cli/test_report_html.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from scheduling_framework.cli import main
from scheduling_framework.comparison import Side, compare
from scheduling_framework.comparison.page import render
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.testing import make_node, make_pod
from tests.cli.test_report_html import browser  # noqa: F401 (the fixture)
from tests.fixture_runner import ROOT

EXAMPLES = ROOT / "examples" / "compare"
CLUSTER = str(EXAMPLES / "cluster.yaml")


def report(tmp_path: Path, *argv: str) -> tuple[Path, dict[str, Any]]:
    page = tmp_path / "cmp.html"
    out, err = io.StringIO(), io.StringIO()
    code = main(["compare", "--cluster", CLUSTER, "--seed", "1", "--output", "json", "--report", str(page), *argv],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return page, json.loads(out.getvalue())


def embedded(page: Path) -> dict[str, Any]:
    text = page.read_text()
    tag = '<script type="application/json" id="compare-data">'
    start = text.index(tag) + len(tag)
    data: dict[str, Any] = json.loads(text[start:text.index("</script>", start)].replace("<\\/", "</"))
    return data


def test_report_embeds_the_json_document_and_fetches_nothing(tmp_path: Path) -> None:
    page, doc = report(tmp_path, "--a-kubernetes-version", "1.35", "--b-kubernetes-version", "1.37")
    text = page.read_text()
    assert "http://" not in text and "https://" not in text and "<link" not in text and " src=" not in text
    data = embedded(page)
    data.pop("seconds")
    doc.pop("seconds")
    assert data == doc
    assert "Kubernetes 1.35 (A) vs Kubernetes 1.37 (B)" in text


def test_names_never_become_markup() -> None:
    nodes = [make_node().name("n1").capacity(cpu="2", memory="4Gi").obj()]
    pod = make_pod().name("x").namespace("default").obj()
    pod = type(pod).from_dict({**pod.to_dict(), "metadata": {"name": "x", "namespace": "default",
                                                              "annotations": {"a": "</script><b>x</b>"}}})
    html = render(compare(Cluster(nodes, [pod]), Side(name="</script><b>A</b>"), Side(), seed=1))
    assert "</script><b>" not in html


def test_report_in_a_real_browser(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    page_file, doc = report(tmp_path, "--a-kubernetes-version", "1.35", "--b-kubernetes-version", "1.37")
    ctx = browser.new_context(offline=True)
    page = ctx.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    assert errors == [] and requests == [page_file.as_uri()]
    # both sides, and the JSON's counts
    assert page.inner_text("#side-a") == "A: Kubernetes 1.35" and page.inner_text("#side-b") == "B: Kubernetes 1.37"
    for key in ("changed", "placedDifferently", "ties", "pods"):
        assert page.inner_text(f"#stat-{key} b") == str(doc["summary"][key])
    # the pods that changed (the default view), each with both sides' outcome and node
    rows = page.query_selector_all("#pods tbody tr.pod")
    shown = {r.get_attribute("data-pod"): [c.inner_text() for c in r.query_selector_all("td")] for r in rows}
    assert set(shown) == {p["pod"] for p in doc["pods"] if p["changed"] or p["tie"]}
    for p in doc["pods"]:
        if p["pod"] in shown:
            assert shown[p["pod"]][1] == f"{p['a']['outcome']} {p['a']['node']}"
            assert shown[p["pod"]][2] == f"{p['b']['outcome']} {p['b']['node']}"
    page.select_option("#show", "all")
    assert len(page.query_selector_all("#pods tbody tr.pod")) == len(doc["pods"])
    page.select_option("#show", "differ")
    # drill-down: the worker's verdicts (NodeDeclaredFeatures on B), web-2's score columns
    page.click("#pods tbody tr[data-pod='shop/worker-0']")
    page.wait_for_selector(".drill table.verdicts")
    assert "NodeDeclaredFeatures" in page.inner_text(".drill table.verdicts tbody")
    first = next(p for p in doc["pods"] if p["changed"] and p["cause"] == "own")
    page.click(f"#pods tbody tr[data-pod='{first['pod']}']")
    page.wait_for_selector(".drill table.scores")
    plugins = [r.get_attribute("data-plugin") for r in page.query_selector_all(".drill table.scores tbody tr")]
    assert plugins == [r["plugin"] for r in first["why"]["scores"]]
    # the nodes that changed, pods on each side; the plugins counted
    for n in doc["nodes"]:
        cells = page.query_selector_all(f"#nodes tr[data-node='{n['node']}'] td")
        assert [cells[1].inner_text(), cells[2].inner_text()] == [str(n["a"]["pods"]), str(n["b"]["pods"])]
    assert "NodeResourcesBalancedAllocation" in page.inner_text("#plugins")
    assert page.inner_text("#side-row-B").split("\t")[1] == str(doc["summary"]["b"]["scheduled"])
    assert errors == []
    ctx.close()
