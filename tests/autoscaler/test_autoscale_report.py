"""``autoscale --report plan.html``: the plan's section of the HTML report, its data, and the page in Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.autoscaler.test_autoscale import CLUSTER, GROUPS, run
from tests.cli.test_report_html import browser, embedded, open_page

__all__ = ["browser"]  # the Chromium fixture, shared with the schedule report's tests


def report(tmp_path: Path, *extra: str, groups: str = GROUPS) -> tuple[Path, dict[str, Any]]:
    page = tmp_path / "plan.html"
    code, out, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", groups, "--seed", "1", "--output",
                         "json", "--report", str(page), *extra)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return page, doc


def test_the_report_embeds_the_plan_as_the_json_output_has_it(tmp_path: Path) -> None:
    page, doc = report(tmp_path, "--why")
    data = embedded(page)
    def plan(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in d.items() if k != "warnings"}  # the report's warnings are listed on their own

    assert plan(data["autoscale"]) == plan(doc)
    # every pending pod once, with what the plan does for it
    outcomes = {p["pod"]: p["outcome"] for p in data["pods"]}
    chosen = doc["scaleUp"]["chosen"]
    assert {k for k, o in outcomes.items() if o == "ScaleUp"} == set(chosen["pods"])
    assert {k for k, o in outcomes.items() if o == "Unschedulable"} == {u["pod"] for u in doc["scaleUp"]["unhelpable"]}
    others = {k for o in doc["scaleUp"]["options"] for k in o["pods"]} - set(chosen["pods"])
    assert {k for k, o in outcomes.items() if o == "Pending"} == others
    eu = next(p for p in data["pods"] if p["pod"] == "shop/eu-report")
    assert set(eu["nodeGroups"]) == {"general", "large", "highcpu", "gpu"} and eu["autoscaleRemedies"]
    # nodes: the scale-down verdicts marked
    marks = {n["name"]: n.get("scaleDown") for n in data["nodes"]}
    assert marks == {"general-1": None, "general-2": None, "general-3": "blocked: NotEnoughPdb",
                     "general-4": "blocked: LocalStorageRequested", "general-5": "candidate"}
    assert "<script src" not in page.read_text() and "http" not in page.read_text().split("<body>")[0].replace(
        "http-equiv", "")


def test_pods_the_current_nodes_take_show_on_those_nodes(tmp_path: Path) -> None:
    from tests.cli.test_cli_chaining import node, pod, write

    cluster = write(tmp_path, "c.yaml", [node("n1", cpu="2"), pod("small", cpu="500m"), pod("big", cpu="3")])
    groups = tmp_path / "g.yaml"
    groups.write_text("nodeGroups: [{name: g, minSize: 0, maxSize: 3, templateNode: n1}]\n", encoding="utf-8")
    page = tmp_path / "plan.html"
    code, _, err = run("autoscale", "--cluster", cluster, "--node-groups", str(groups), "--report", str(page))
    assert code == 0, err
    data = embedded(page)
    small = next(p for p in data["pods"] if p["pod"] == "default/small")
    assert (small["outcome"], small["node"]) == ("Scheduled", "n1")
    n1 = data["nodes"][0]
    assert (n1["before"]["cpu"], n1["after"]["cpu"]) == (0, 500)
    big = next(p for p in data["pods"] if p["pod"] == "default/big")
    assert big["outcome"] == "Unschedulable" and "Insufficient cpu" in big["nodeGroups"]["g"]


def test_an_unwritable_report_path_is_named(tmp_path: Path) -> None:
    code, _, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", GROUPS, "--report",
                       str(tmp_path / "no" / "such" / "plan.html"))
    assert code == 2 and "cannot write report" in err and "plan.html" in err, err


def test_the_plan_in_a_real_browser(tmp_path: Path, browser: Any) -> None:
    groups = tmp_path / "g.yaml"
    # a node group name that would be markup if the page ever built HTML from the data
    groups.write_text(Path(GROUPS).read_text().replace("name: gpu", "name: gpu<img src=x onerror=alert(1)>"),
                      encoding="utf-8")
    page_file, doc = report(tmp_path, "--why", groups=str(groups))
    ctx, page, errors = open_page(browser, page_file.as_uri())
    up, down = doc["scaleUp"], doc["scaleDown"]
    assert page.is_visible("#autoscale")
    assert not page.is_visible("#reasons") and not page.is_visible("#preemptions")
    rows = page.query_selector_all("#scale-up-options tbody tr")
    assert [r.get_attribute("data-group") for r in rows] == [o["nodeGroup"] for o in up["options"]]
    chosen = page.query_selector("#scale-up-options tr.chosen")
    assert chosen.get_attribute("data-group") == up["chosen"]["nodeGroup"]
    assert chosen.query_selector(".badge").inner_text() == "chosen"
    assert [c.inner_text() for c in chosen.query_selector_all("td")[1:3]] == [str(up["chosen"]["nodes"]),
                                                                                str(len(up["chosen"]["pods"]))]
    assert page.query_selector("img") is None  # the group's name stayed text
    assert any("gpu<img" in r.inner_text() for r in rows)
    unhelpable = page.query_selector_all("#unhelpable tbody tr")
    assert [r.get_attribute("data-pod") for r in unhelpable] == [u["pod"] for u in up["unhelpable"]]
    assert unhelpable[0].query_selector("td:nth-child(2) div").inner_text() == \
        "every node group: node(s) didn't match Pod's node affinity/selector"
    assert [li.inner_text() for li in unhelpable[0].query_selector_all("li")] == up["unhelpable"][0]["remedies"]
    cands = page.query_selector_all("#scale-down-candidates tbody tr")
    assert [r.get_attribute("data-node") for r in cands] == [c["node"] for c in down["candidates"]]
    assert cands[0].query_selector_all("td")[3].inner_text() == "shop/search-0 \u2192 general-1"
    blocked = {r.get_attribute("data-node"): r.query_selector_all("td")[2].inner_text()
               for r in page.query_selector_all("#scale-down-blocked tbody tr")}
    assert blocked == {b["node"]: b["rule"] for b in down["blocked"]}
    assert page.inner_text("#stat-chosen") == f"{up['chosen']['nodeGroup']} +{up['chosen']['nodes']} scale-up"
    # the node table (open: a small cluster) marks the scale-down verdicts
    badge = page.query_selector("#nodes tr[data-node='general-5'] .badge")
    assert badge.inner_text() == "scale-down candidate"
    # a pod no group helps: each group's verdict in its drill-down, then what would make it fit
    page.click("tr.pod[data-pod='shop/eu-report']")
    page.wait_for_selector(".drill table.node-groups")
    verdicts = {r.get_attribute("data-group"): r.query_selector_all("td")[1].inner_text()
                for r in page.query_selector_all(".drill table.node-groups tbody tr")}
    assert verdicts == {g: r for g, r in up["unhelpable"][0]["nodeGroups"].items()}
    assert [li.inner_text() for li in page.query_selector_all(".drill ul.remedies li")] == \
        up["unhelpable"][0]["remedies"]
    assert errors == []
    ctx.close()


def test_a_capped_scale_up_says_so_in_a_real_browser(tmp_path: Path, browser: Any) -> None:
    page_file, doc = report(tmp_path, "--expander", "least-waste", "--no-scale-down", "--cores-total", "0:40")
    chosen = doc["scaleUp"]["chosen"]
    assert chosen["cappedBy"] and chosen["cappedFrom"] > chosen["nodes"]
    ctx, page, errors = open_page(browser, page_file.as_uri())
    detail = page.inner_text("#chosen-detail")
    assert f"capped from {chosen['cappedFrom']} node(s) by the cluster-wide limits: {chosen['cappedBy']}" in detail
    assert errors == []
    ctx.close()
