"""Focus (--pod, --explain-nodes), the 120-column explain table, progress on a terminal, and the
capacity command."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.cli import main
from scheduling_framework.report.focus import pod_matcher
from scheduling_framework.report.progress import Progress, render, should_show
from scheduling_framework.report.table import abbreviate, explain_lines, verdict_text
from tests.cli.test_cli_chaining import node, pod, write
from tests.fixture_runner import ROOT

EXAMPLE = str(ROOT / "examples" / "cluster.yaml")


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(*argv: str, err: io.StringIO | None = None) -> tuple[int, str, str]:
    out = io.StringIO()
    e = err if err is not None else io.StringIO()
    code = main(list(argv), stdout=out, stderr=e)
    return code, out.getvalue(), e.getvalue()


# --- --pod ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("patterns", "key", "want"), [
    ([], "shop/web-1", True),
    (["shop/web-*"], "shop/web-1", True),
    (["shop/web-*"], "default/web-1", False),
    (["web-?"], "default/web-1", True),
    (["*/api-1", "x/y"], "shop/api-1", True),
    (["shop/[ab]*"], "shop/api-1", True),
], ids=["none-matches-all", "glob", "other-namespace", "name-only", "several", "class"])
def test_pod_matcher(patterns: list[str], key: str, want: bool) -> None:
    assert pod_matcher(patterns)(key) is want


def test_pod_limits_table_and_json_but_everything_is_scheduled() -> None:
    _, full, _ = run("schedule", "--cluster", EXAMPLE, "--seed", "1", "--output", "json")
    code, focused, err = run("schedule", "--cluster", EXAMPLE, "--seed", "1", "--output", "json", "--explain",
                             "--pod", "shop/web-*", "--pod", "nomatch")
    assert code == 0
    full_doc, doc = json.loads(full), json.loads(focused)
    assert [r["pod"] for r in doc["pods"]] == ["shop/web-1", "shop/web-2"]
    assert doc["stats"] == {**full_doc["stats"], "seconds": doc["stats"]["seconds"]}  # the whole run
    placed = {r["pod"]: r["node"] for r in full_doc["pods"]}
    assert all(placed[r["pod"]] == r["node"] for r in doc["pods"])  # same decisions
    assert doc["pods"][0]["filter"]  # explained
    assert "--pod 'nomatch' matches no pending pod" in err
    code, table, _ = run("schedule", "--cluster", EXAMPLE, "--seed", "1", "--pod", "huge-1")
    assert "shop/huge-1" in table and "shop/web-1" not in table
    assert f"{full_doc['stats']['scheduled']} scheduled, 1 unschedulable" in table


def test_only_focused_pods_are_explained() -> None:
    from scheduling_framework.ingest.cluster import load_cluster
    from scheduling_framework.scheduler import Scheduler

    c = load_cluster(EXAMPLE)
    s = Scheduler(seed=1, explain=lambda p: p.key == "shop/web-1")
    s.load(c.nodes, c.pods, c.objects)
    s.run()
    assert s.results["shop/web-1"].filter and s.results["shop/web-2"].filter is None


# --- the explain table -----------------------------------------------------------------------------


def test_explain_table_fits_120_columns_on_the_demo() -> None:
    code, out, _ = run("schedule", "--cluster", EXAMPLE, "--seed", "1", "--explain")
    assert code == 0
    widest = max(len(line) for line in out.splitlines())
    assert widest <= 120, [line for line in out.splitlines() if len(line) > 120]
    assert "scores are normalized x weight: TT TaintToleration x3" in out


def test_explain_nodes_keeps_the_best_and_summarizes_the_rest() -> None:
    code, out, _ = run("schedule", "--cluster", EXAMPLE, "--seed", "1", "--explain", "--explain-nodes", "1",
                       "--pod", "shop/web-1")
    assert code == 0
    block = out.split("shop/web-1: Scheduled on ")[1]
    node_rows = [ln for ln in block.splitlines() if ln.startswith("  node-") or ln.startswith("  gpu-")]
    assert len(node_rows) == 1  # the best-scored node, in full
    assert "3 more node(s) passed Filter (total scores" in block
    assert "2 node(s): Unschedulable PodTopologySpread: node(s) didn't match pod topology spread constraints" in block
    assert "1 node(s): UnschedulableAndUnresolvable TaintToleration: node(s) had untolerated taint(s) (gpu-1)" in block


def test_reasons_no_plugin_owns_are_shown(tmp_path: Path) -> None:
    pinned = pod("pinned")
    pinned["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    cluster = write(tmp_path, "c.yaml", [node("n1"), node("n2"), node("n3"), pinned])
    for extra in ([], ["--explain-nodes", "0"]):
        code, out, _ = run("schedule", "--cluster", cluster, "--explain", *extra)
        assert code == 0
        assert "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [NodeAffinity]" in out, out
    code, out, _ = run("schedule", "--cluster", cluster, "--explain")
    assert "Success (the only node that passed: not scored, as upstream)" in out


@pytest.mark.parametrize(("st", "want"), [
    ({"code": "Unschedulable", "plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu", "Insufficient memory"]},
     "Unschedulable NodeResourcesFit: Insufficient cpu; Insufficient memory"),
    ({"code": "UnschedulableAndUnresolvable", "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]},
     "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [NodeAffinity]"),
    ({"code": "Error", "plugin": "X", "reasons": []}, "Error X"),
], ids=["plugin", "no-plugin", "no-reasons"])
def test_verdict_text(st: dict[str, Any], want: str) -> None:
    assert verdict_text(st) == want


def test_abbreviations_are_unique() -> None:
    got = abbreviate(["NodeResourcesFit", "NodeResourcesFitter", "sticky", "TaintToleration"])
    assert got == {"NodeResourcesFit": "NRF", "NodeResourcesFitter": "NRF2", "sticky": "stic",
                   "TaintToleration": "TT"}


def test_many_plugins_and_long_reasons_still_fit() -> None:
    plugins = [f"OutOfTreePlugin{i}Scorer" for i in range(9)]
    scores = {f"a-rather-long-node-name-{i:04d}": {p: {"raw": 100, "normalized": 100, "weighted": 300}
                                                     for p in plugins} for i in range(3)}

    class R:
        pod, outcome, node, message, scheduler_name = "ns/p", "Scheduled", "a-rather-long-node-name-0001", "", ""
        total_scores = {n: 2700 for n in scores}
        filter = {**{n: {"code": "Success"} for n in scores},
                  "rejected-node": {"code": "Unschedulable", "plugin": "P", "reasons": ["because " * 40]}}

    R.scores = scores  # type: ignore[attr-defined]
    lines = "\n".join(explain_lines(R())).splitlines()
    assert max(len(line) for line in lines) <= 120


# --- progress --------------------------------------------------------------------------------------


def test_progress_shown_only_on_a_terminal_unless_forced() -> None:
    assert should_show(FakeTTY(), None) and not should_show(io.StringIO(), None)
    assert should_show(io.StringIO(), True) and not should_show(FakeTTY(), False)


def test_render_line() -> None:
    line = render(1200, 3000, 2.5)
    assert line.startswith("[############..................] 1200/3000 pods  40%")
    assert "480 pods/s" in line and line.endswith("ETA 4s")
    assert render(3000, 3000, 2.0).endswith("1,500 pods/s")  # done: no ETA


def test_progress_draws_then_erases() -> None:
    tty = FakeTTY()
    n = [0]
    with Progress(tty, 10, lambda: n[0], delay=0.0, interval=0.01) as p:
        n[0] = 5
        p.draw()
    text = tty.getvalue()
    assert "5/10 pods" in text and text.endswith("\r")  # erased: the next output starts on a clean line


def test_cli_progress_on_fake_terminal_never_touches_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [node(f"n{i}", cpu="64") for i in range(40)] + [pod(f"p{i}", cpu="10m") for i in range(400)]
    cluster = write(tmp_path, "c.yaml", docs)
    err = FakeTTY()
    import scheduling_framework.report.progress as progress

    monkeypatch.setattr(progress, "DELAY", 0.0)  # draw from the start (the run is short)
    monkeypatch.setattr(progress, "INTERVAL", 0.005)
    code, out, _ = run("schedule", "--cluster", cluster, "--output", "json", err=err)  # a terminal: on
    assert code == 0
    assert json.loads(out)["stats"]["scheduled"] == 400  # stdout is pure JSON
    assert "/400 pods" in err.getvalue()
    err2 = FakeTTY()
    run("schedule", "--cluster", cluster, "--output", "json", "--no-progress", err=err2)
    assert "pods/s" not in err2.getvalue()


# --- capacity --------------------------------------------------------------------------------------


def test_capacity_json_and_table(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1", cpu="2"), node("n2", cpu="1"), pod("run", cpu="1", node="n1")])
    web = write(tmp_path, "web.yaml", [pod("web", cpu="500m")])
    code, out, _ = run("capacity", "--cluster", cluster, "--pod", web, "--output", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["pod"] == "default/web" and doc["count"] == 4
    assert doc["perNode"] == {"n1": 2, "n2": 2} or sorted(doc["perNode"].items()) == [("n1", 2), ("n2", 2)]
    assert doc["reasons"] == {"n1": "Insufficient cpu", "n2": "Insufficient cpu"}
    assert doc["stopReason"] == "Unschedulable" and doc["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    code, out, _ = run("capacity", "--cluster", cluster, "--pod", web)
    assert out.startswith("default/web: 4 more copies fit (the next copy does not fit)\n")
    assert "n1         2  Insufficient cpu" in out
    code, out, _ = run("capacity", "--cluster", cluster, "--pod", web, "--max", "1", "--output", "json")
    assert json.loads(out)["count"] == 1 and json.loads(out)["stopReason"] == "LimitReached"


@pytest.mark.parametrize(("pods", "argv", "needle"), [
    ([], [], "expected exactly one Pod"),
    ([pod("a"), pod("b")], [], "found 2 (default/a, default/b)"),
    ([pod("a")], ["--max", "-1"], "expected a non-negative integer"),
], ids=["no-pod", "two-pods", "negative-max"])
def test_capacity_bad_input(tmp_path: Path, pods: list[dict[str, Any]], argv: list[str], needle: str) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1")])
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump_all(pods) if pods else "kind: Namespace\nmetadata: {name: x}\napiVersion: v1\n")
    err = io.StringIO()
    code, _, _ = run("capacity", "--cluster", cluster, "--pod", str(p), *argv, err=err)
    assert code == 2
    if needle.startswith("expected a non"):
        return  # argparse wrote its usage message to the real stderr
    assert needle in err.getvalue() and "Traceback" not in err.getvalue()


# --- help and completion ---------------------------------------------------------------------------


def _commands() -> list[list[str]]:
    from scheduling_framework.cli import _parser
    from scheduling_framework.cli_help import _subparsers

    found: list[list[str]] = []

    def visit(p: Any, path: list[str]) -> None:
        found.append(path)
        for name, child in _subparsers(p).items():
            visit(child, [*path, name])

    visit(_parser(), [])
    return found


@pytest.mark.parametrize("argv", _commands(), ids=lambda a: " ".join(a) or "top")
def test_every_help_has_examples(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--help"]) == 0
    text = capsys.readouterr().out
    assert "examples:\n  scheduling-framework" in text or "examples:\n  source" in text


def test_bash_completion_script(tmp_path: Path) -> None:
    import shutil
    import subprocess

    code, script, _ = run("completion", "bash")
    assert code == 0 and "complete -o filenames -F _scheduling_framework scheduling-framework" in script
    for flag in ("--explain-nodes", "--fail-on-unschedulable", "--report", "--max"):
        assert flag in script
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    f = tmp_path / "c.sh"
    f.write_text(script)
    probe = ('source "$1"; COMP_WORDS=(scheduling-framework schedule --output ""); COMP_CWORD=3; '
             '_scheduling_framework; echo "${COMPREPLY[@]}"; COMP_WORDS=(scheduling-framework cap); COMP_CWORD=1; '
             '_scheduling_framework; echo "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "-c", probe, "probe", str(f)], capture_output=True, text=True, timeout=30)
    assert p.stdout.splitlines() == ["table json yaml", "capacity"], p.stderr


def test_reprs_are_readable() -> None:
    from scheduling_framework.runtime.algorithm import ScheduleResult
    from scheduling_framework.scheduler import PodResult
    from scheduling_framework.simulation import Placement
    from tests.simulation.sim_builders import make_pod

    r = PodResult(make_pod("web"))
    r.outcome, r.node = "Scheduled", "n1"
    assert repr(r) == "PodResult(default/web Scheduled on n1)"
    r.outcome, r.node, r.message = "Unschedulable", None, "0/1 nodes are available: 1 Insufficient cpu."
    assert repr(r) == "PodResult(default/web Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.)"
    assert repr(Placement("default/web", "n1")) == "Placement(default/web -> n1)"
    assert repr(Placement("default/web", None, "why")) == "Placement(default/web not placed: why)"
    assert repr(ScheduleResult("n1", 3, 2)) == "ScheduleResult(host='n1', evaluated=3, feasible=2)"
