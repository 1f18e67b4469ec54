"""Scenario files: validation with field paths, and the replayed timeline."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.scenario import ScenarioError, load_scenario, run_scenario, scenario_from_dict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"

NODE = {"metadata": {"labels": {"kubernetes.io/hostname": "n"}},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
POD = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def _doc(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": "Scenario", "name": "t", "seed": 1,
                         "templates": {"nodes": {"n": NODE}, "pods": {"p": POD}},
                         "steps": [{"op": "createNodes", "template": "n", "count": 2},
                                   {"op": "createPods", "template": "p", "count": 5}]}
    d.update(over)
    return d


def _fields(r: Any) -> list[tuple[Any, ...]]:
    return [(s.op, s.pods, s.scheduled, s.pending, s.unschedulable, s.evicted, s.nodes, s.nodes_used,
             s.cpu_utilization, s.cycles) for s in r.steps]


def test_replay_example_timeline() -> None:
    r = run_scenario(load_scenario(EXAMPLES / "scale-down.yaml"))
    assert _fields(r) == [
        ("start", 0, 0, 0, 0, 0, 0, 0, 0.0, 0),
        ("createNodes", 0, 0, 0, 0, 0, 3, 0, 0.0, 0),
        ("createPods", 18, 18, 0, 0, 0, 3, 3, 0.75, 18),
        ("cordonNodes", 18, 18, 0, 0, 0, 3, 3, 0.75, 0),
        ("deleteNodes", 18, 16, 2, 2, 8, 2, 2, 1.0, 8),
        ("wait", 18, 16, 2, 2, 0, 2, 2, 1.0, 0),
        ("createNodes", 18, 18, 0, 0, 0, 3, 3, 0.75, 2),
    ]
    assert r.steps[5].time == 60.0


def test_replay_is_deterministic_under_the_seed() -> None:
    sc = load_scenario(EXAMPLES / "scale-down.yaml")
    assert _fields(run_scenario(sc)) == _fields(run_scenario(sc))


def test_two_pods_per_node_then_delete_and_uncordon() -> None:
    doc = _doc(steps=[{"op": "createNodes", "template": "n", "count": 2},
                      {"op": "cordonNodes", "names": ["n-1"]},
                      {"op": "createPods", "template": "p", "count": 3},
                      {"op": "uncordonNodes", "namePrefix": "n-1"},
                      {"op": "deletePods", "namePrefix": "p", "count": 1},
                      {"op": "deleteNodes", "names": ["n-1"], "evictedPods": "delete"}])
    r = run_scenario(scenario_from_dict(doc))
    by_op = {s.index: (s.scheduled, s.pending, s.evicted, s.pods) for s in r.steps}
    assert by_op[3] == (2, 1, 0, 3)       # one node cordoned: 2 cpu for three 1-cpu pods
    assert by_op[4] == (3, 0, 0, 3)       # uncordoned: the third pod lands
    assert by_op[5] == (2, 0, 0, 2)       # one deleted
    assert r.steps[6].evicted >= 0 and r.steps[6].nodes == 1


def test_starting_cluster_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: default}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 600m}}}]}\n")
    (tmp_path / "s.yaml").write_text("kind: Scenario\ncluster: c.yaml\nsteps: []\n")
    r = run_scenario(load_scenario(tmp_path / "s.yaml"))
    assert (r.name, r.final.scheduled, r.final.nodes) == ("s", 1, 1)


BAD = [
    ("unknown-op", _doc(steps=[{"op": "explode"}]), "steps[0].op: Unsupported value"),
    ("missing-template", _doc(steps=[{"op": "createPods", "template": "nope", "count": 1}]),
     "steps[0].template: Not found"),
    ("zero-count", _doc(steps=[{"op": "createNodes", "template": "n", "count": 0}]), "steps[0].count"),
    ("bool-count", _doc(steps=[{"op": "createNodes", "template": "n", "count": True}]), "steps[0].count"),
    ("unknown-step-field", _doc(steps=[{"op": "wait", "seconds": 1, "minutes": 2}]), "steps[0].minutes"),
    ("negative-wait", _doc(steps=[{"op": "wait", "seconds": -1}]), "steps[0].seconds"),
    ("names-and-prefix", _doc(steps=[{"op": "deletePods", "names": ["a/b"], "namePrefix": "x"}]),
     "exactly one of names or namePrefix"),
    ("bad-evicted", _doc(steps=[{"op": "deleteNodes", "names": ["a"], "evictedPods": "keep"}]),
     "steps[0].evictedPods"),
    ("bad-node-template", _doc(templates={"nodes": {"n": {"status": {"allocatable": {"cpu": "lots"}}}}}),
     "templates.nodes.n"),
    ("bad-config", _doc(config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                "profiles": [{"schedulerName": ""}]}), "config:"),
    ("bad-kind", _doc(kind="Pod"), "kind: Unsupported value"),
    ("unknown-top-field", _doc(timeline=[]), "timeline: Unsupported field"),
    ("cluster-not-a-list", _doc(cluster=42), "cluster: Invalid value"),
    ("negative-seed", _doc(seed=-1), "seed"),
]


@pytest.mark.parametrize(("doc", "expected"), [(d, e) for _, d, e in BAD], ids=[n for n, _, _ in BAD])
def test_invalid_scenarios_name_the_field(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(doc)
    assert expected in str(e.value)


def test_every_problem_is_listed() -> None:
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(_doc(seed="x", steps=[{"op": "wait"}, {"op": "boom"}]))
    assert len(e.value.problems) == 3


def test_cli_replay_json_and_bad_input(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(EXAMPLES / "scale-down.yaml"), "--output", "json"], out, err) == 0
    doc = json.loads(out.getvalue())
    assert doc["scenario"] == "scale-down" and doc["final"]["scheduled"] == 18 and len(doc["steps"]) == 7
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Scenario\nsteps: [{op: explode}]\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(bad)], out, err) == 2
    assert "steps[0].op" in err.getvalue() and len(err.getvalue().splitlines()) == 1
    (tmp_path / "notyaml.yaml").write_text("kind: [\n")
    assert main(["replay", str(tmp_path / "notyaml.yaml")], io.StringIO(), err) == 2
