"""Scenarios and sweeps follow a chosen Kubernetes release (kubernetesVersion / featureGates, replay flags)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.scenario import run_scenario, scenario_from_dict
from scheduling_framework.scenario.model import ScenarioError, with_release
from scheduling_framework.scenario.sweep import run_cases, sweep_from_dict
from tests.fixture_runner import ROOT

SCENARIO: dict[str, Any] = {
    "kind": "Scenario", "name": "two-nodes", "seed": 1,
    "templates": {
        "nodes": {"n": {"status": {"allocatable": {"cpu": "4", "memory": "10Gi", "pods": "110"}}}},
        "pods": {"p": {"spec": {"containers": [{"name": "c", "image": "x",
                                                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}},
    },
    "steps": [{"op": "createNodes", "template": "n", "count": 2}, {"op": "createPods", "template": "p", "count": 3}],
}


def test_scenario_release_fields_reach_the_scheduler() -> None:
    sc = scenario_from_dict({**SCENARIO, "kubernetesVersion": "v1.35.2",
                             "featureGates": {"StorageCapacityScoring": True}})
    assert sc.kubernetes_version == "1.35" and sc.feature_gates == {"StorageCapacityScoring": True}
    assert run_scenario(sc).steps[-1].scheduled == 3
    assert scenario_from_dict(SCENARIO).kubernetes_version is None


@pytest.mark.parametrize(("fields", "needle"), [
    ({"kubernetesVersion": "1.20"}, "kubernetesVersion: kubernetes version: Kubernetes 1.20 is not supported"),
    ({"kubernetesVersion": 1.35}, "kubernetesVersion: Invalid value"),
    ({"featureGates": {"Nope": True}}, "featureGates: feature gates: unrecognized feature gate: Nope"),
    ({"featureGates": "A=true"}, "featureGates: Invalid value"),
], ids=["old", "number", "unknown-gate", "not-a-mapping"])
def test_bad_release_fields_name_the_field(fields: dict[str, Any], needle: str) -> None:
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict({**SCENARIO, **fields})
    assert needle in str(e.value)


def test_with_release_overrides_and_validates() -> None:
    sc = with_release(scenario_from_dict(SCENARIO), "1.34", "DynamicResourceAllocation=false")
    assert sc.kubernetes_version == "1.34" and sc.feature_gates == {"DynamicResourceAllocation": False}
    with pytest.raises(Exception, match="locked to true"):
        with_release(scenario_from_dict(SCENARIO), "1.35", "DynamicResourceAllocation=false")


def test_sweep_matrix_over_releases() -> None:
    sweep = sweep_from_dict({"kind": "Sweep", "name": "releases", "scenario": SCENARIO,
                             "matrix": {"kubernetesVersion": ["1.35", "1.37"]}})
    rows = run_cases(sweep.cases)
    assert [r["params"] for r in rows] == [{"kubernetesVersion": "1.35"}, {"kubernetesVersion": "1.37"}]
    assert all(not r.get("error") for r in rows)


def test_replay_cli_takes_the_release_flags(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "replay", str(path), "--output", "json",
                        "--kubernetes-version", "1.35"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["steps"][-1]["scheduled"] == 3
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "replay", str(path),
                        "--feature-gates", "Nope=true"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "unrecognized feature gate: Nope" in p.stderr
