"""Cases where we once disagreed with the real kube-scheduler, each with the real scheduler's recorded answer.

Each file in ``recorded/`` was shrunk by ``tools/oracle/minimize.py`` from a cluster on which the differential
oracle (``../shared/upstream-go``, here v1.36.2 unless the file says otherwise) and our CLI disagreed; ``go`` is
the oracle's output for the pending pod: every node's Filter verdict (code, plugin, reasons) and every
feasible node's normalized score per plugin. The test runs ``schedule --explain --output json`` on the same
cluster and release, and compares as diff.py does (no Go toolchain needed).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.cli import main

RECORDED = Path(__file__).parent / "recorded"
CASES = sorted(RECORDED.glob("*.yaml"))


def _config(disabled: list[str]) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"disabled": [{"name": n} for n in disabled]}}}]}


def _verdicts(filters: dict[str, Any] | None) -> dict[str, tuple[str, str, frozenset[str]]]:
    return {node: (v.get("code") or "", v.get("plugin") or "", frozenset(v.get("reasons") or []))
            for node, v in (filters or {}).items()}


def differences(go: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """What differs between the oracle's answer and ours for the pending pod (diff.py's comparison)."""
    out = []
    gf, pf = _verdicts(go.get("filter")), _verdicts(ours.get("filter"))
    for node in sorted(set(gf) | set(pf)):
        if gf.get(node) != pf.get(node):
            out.append(f"filter {node}: go={gf.get(node)} ours={pf.get(node)}")
    feasible_go = [n for n, v in gf.items() if v[0] == "Success"]
    feasible_ours = [n for n, v in pf.items() if v[0] == "Success"]
    if len(feasible_go) > 1 and len(feasible_ours) > 1:
        for node in sorted(set(feasible_go) & set(feasible_ours)):
            g = (go.get("scores") or {}).get(node) or {}
            p = {k: v.get("normalized") for k, v in ((ours.get("scores") or {}).get(node) or {}).items()}
            for plugin in sorted(set(g) | set(p)):
                if g.get(plugin) != p.get(plugin):
                    out.append(f"score {node} {plugin}: go={g.get(plugin)} ours={p.get(plugin)}")
    return out


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_recorded_case_matches_the_real_scheduler(path: Path, tmp_path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(case["cluster"], sort_keys=False))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_config(case["disabled"])))
    out, err = io.StringIO(), io.StringIO()
    argv = ["schedule", "--cluster", str(cluster), "--config", str(config), "--explain", "--output", "json",
            "--seed", "1", "--kubernetes-version", str(case["kubernetesVersion"])]
    if case.get("featureGates"):
        argv += ["--feature-gates", case["featureGates"]]
    code = main(argv, stdout=out, stderr=err)
    assert code in (0, 1, 2), err.getvalue()
    pods = [p for p in json.loads(out.getvalue())["pods"] if p["pod"].endswith("/pending")]
    assert pods, err.getvalue()
    assert differences(case["go"], pods[-1]) == [], case["why"]


def test_every_recorded_case_says_why() -> None:
    for path in CASES:
        case = yaml.safe_load(path.read_text())
        assert case["why"] and case["go"] and case["name"] == path.stem, path.name
