"""Fields the Kubernetes API does not define in a scenario's manifests: warnings, or with strict errors (replay),
and under a sweep one scenario's error row (never the sweep's crash)."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.cli import main
from scheduling_framework.scenario import ScenarioError, load_scenario, run_scenario, scenario_from_dict
from scheduling_framework.scenario import sweep as sw

NODE = {"metadata": {"labels": {"zone": "a"}}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
POD = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}}
SNAKE_POD = {"spec": {"node_selector": {"zone": "b"}, **POD["spec"]}}
BAD_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c0"}, "spec": {"unschedulabel": True},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
GOOD_NODE = {**BAD_NODE, "spec": {}}
NODE_SELECTOR = 'unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)'
UNSCHEDULABEL = 'unknown field "spec.unschedulabel" (did you mean "spec.unschedulable"?)'


def _doc(pod: dict[str, Any] = POD, cluster: list[Any] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": "Scenario", "name": "t",
                         "templates": {"nodes": {"n": NODE}, "pods": {"p": pod}},
                         "steps": [{"op": "createNodes", "template": "n", "count": 2},
                                   {"op": "createPods", "template": "p", "count": 3}]}
    if cluster is not None:
        d["cluster"] = cluster
    return d


@pytest.mark.parametrize(("doc", "expected"), [
    (_doc(SNAKE_POD), f"templates.pods.p: Pod default/p: {NODE_SELECTOR}"),
    (_doc(cluster=[BAD_NODE]), f"cluster: document 1: Node c0: {UNSCHEDULABEL}"),
], ids=["template", "cluster"])
def test_strict_scenario_names_the_field(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(doc, strict=True)
    assert e.value.problems == [expected]


@pytest.mark.parametrize("doc", [_doc(SNAKE_POD), _doc(cluster=[BAD_NODE])], ids=["template", "cluster"])
def test_run_scenario_strict_refuses_a_scenario_read_leniently(doc: dict[str, Any]) -> None:
    sc = scenario_from_dict(doc)
    with pytest.raises(ScenarioError, match="unknown field"):
        run_scenario(sc, strict=True)


def test_unknown_template_field_warns_once_per_template_not_per_pod() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Python warning per created pod either
        r = run_scenario(scenario_from_dict(_doc(SNAKE_POD, cluster=[BAD_NODE])))
    assert f"{NODE_SELECTOR} (ignored): templates.pods.p" in r.warnings
    assert f"{UNSCHEDULABEL} (ignored): Node c0" in r.warnings
    assert r.final.scheduled == 3  # the selector was ignored, as the warning says


def test_clean_scenario_is_the_same_with_strict() -> None:
    r1 = run_scenario(scenario_from_dict(_doc(), strict=True), strict=True)
    r2 = run_scenario(scenario_from_dict(_doc()))
    assert r1.warnings == r2.warnings == ()
    assert r1.final.scheduled == r2.final.scheduled == 3 and r1.final.nodes_used == r2.final.nodes_used


def _write(tmp: Path, name: str, doc: Any) -> Path:
    p = tmp / name
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return p


def test_cli_replay_strict(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.yaml", _doc(SNAKE_POD))
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(path)], out, err) == 0
    assert f"warning: {NODE_SELECTOR} (ignored): templates.pods.p" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(path), "--strict"], out, err) == 2
    assert out.getvalue() == ""
    assert f"templates.pods.p: Pod default/p: {NODE_SELECTOR}" in err.getvalue()


def _matrix_sweep(tmp: Path) -> Path:
    """Four scenarios: a good or a misspelt cluster node (from the matrix) times a good or a snake_case pod
    template (from the matrix); index = cluster * 2 + template (the last axis varies fastest)."""
    return _write(tmp, "sw.yaml", {"kind": "Sweep", "name": "m", "scenario": _doc(), "matrix": {
        "cluster": [[GOOD_NODE], [BAD_NODE]], "templates.pods.p": [POD, SNAKE_POD]}})


def test_sweep_strict_failure_is_that_scenarios_row(tmp_path: Path) -> None:
    sweep = sw.load_sweep(_matrix_sweep(tmp_path), strict=True)
    errors = {r["index"]: r["error"] for r in sw.run_sweep(sweep, workers=1)}
    assert errors[0] is None
    assert errors[1].startswith("invalid scenario: ")
    assert NODE_SELECTOR in errors[1] and "unschedulabel" not in errors[1]
    assert UNSCHEDULABEL in errors[2] and "node_selector" not in errors[2]
    assert UNSCHEDULABEL in errors[3] and NODE_SELECTOR in errors[3]


def test_run_sweep_strict_argument_overrides_the_loaded_sweep(tmp_path: Path) -> None:
    sweep = sw.load_sweep(_matrix_sweep(tmp_path))
    lenient = sw.run_sweep(sweep, workers=1)
    strict = sw.run_sweep(sweep, workers=1, strict=True)
    assert [r["error"] is None for r in lenient] == [True] * 4
    assert [r["error"] is None for r in strict] == [True, False, False, False]
    assert [r["id"] for r in lenient] == [r["id"] for r in strict]  # the same scenarios


def test_cli_sweep_strict_on_the_pool(tmp_path: Path) -> None:
    path = _matrix_sweep(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", str(path), "--workers", "2", "--strict", "--output", "json"], out, err) == 4
    doc = json.loads(out.getvalue())
    assert doc["summary"] == {**doc["summary"], "scenarios": 4, "failed": 3}
    assert "scenario 1 " in err.getvalue() and NODE_SELECTOR in err.getvalue()


def test_cli_sweep_lenient_prints_the_first_scenarios_warnings(tmp_path: Path) -> None:
    doc = {"kind": "Sweep", "name": "b", "scenario": _doc(SNAKE_POD), "matrix": {"steps[1].count": [1, 2]}}
    path = _write(tmp_path, "b.yaml", doc)
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", str(path), "--workers", "1"], out, err) == 0
    assert f"warning: scenario 0: {NODE_SELECTOR} (ignored): templates.pods.p" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", str(path), "--workers", "1", "--strict"], out, err) == 4
    assert "warning: scenario 0" not in err.getvalue()
    assert err.getvalue().count(NODE_SELECTOR) == 2  # one failed row each


def test_load_scenario_strict(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.yaml", _doc(cluster=[BAD_NODE]))
    assert load_scenario(path).cluster[0]["spec"] == {"unschedulabel": True}
    with pytest.raises(ScenarioError, match="unschedulabel"):
        load_scenario(path, strict=True)
