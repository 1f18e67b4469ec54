"""``scheduling-framework compare``: the JSON document's schema, the table, flags that conflict or name bad input
(exit 2, the flag named), ``--fail-on-change``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.cli import main
from tests.fixture_runner import ROOT

EXAMPLES = ROOT / "examples" / "compare"
CLUSTER = str(EXAMPLES / "cluster.yaml")
BINPACK = str(EXAMPLES / "binpack.yaml")


def run(*argv: str, stdin: str | None = None, monkeypatch: Any = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def compare_json(*argv: str) -> dict[str, Any]:
    code, out, err = run("compare", "--output", "json", *argv)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


STATUS_KEYS = {"code", "plugin", "reasons"}


def check_status(v: Any) -> None:
    assert isinstance(v, dict) and set(v) <= STATUS_KEYS and isinstance(v["code"], str)


def check_side(s: Any) -> None:
    assert set(s) >= {"outcome", "node"}
    assert set(s) <= {"outcome", "node", "nominatedNode", "victims", "message", "tiedNodes", "devices"}
    assert s["outcome"] in ("Scheduled", "Unschedulable", "Error", "Skipped", "Preempted")
    assert s["node"] is None or isinstance(s["node"], str)


def check_why(w: Any) -> None:
    assert set(w) >= {"text", "plugins", "verdicts", "scores", "totals"}
    assert set(w) <= {"text", "plugins", "verdicts", "scores", "totals", "devices", "releaseNotes"}
    assert isinstance(w["text"], str) and all(isinstance(p, str) for p in w["plugins"])
    for v in w["verdicts"]:
        assert set(v) == {"node", "a", "b"}
        check_status(v["a"])
        check_status(v["b"])
    for r in w["scores"]:
        assert set(r) == {"plugin", "a", "b", "shift"} and isinstance(r["shift"], int) and r["shift"] != 0
        for side in (r["a"], r["b"]):
            assert side is None or (set(side) == {"weight", "normalized"} and len(side["normalized"]) == 2)
    assert set(w["totals"]) <= {"a", "b"}


def test_json_schema() -> None:
    doc = compare_json("--cluster", CLUSTER, "--a-kubernetes-version", "1.35", "--b-kubernetes-version", "1.37",
                       "--seed", "1")
    assert set(doc) == {"a", "b", "seed", "mode", "ties", "configChanges", "pods", "nodes", "summary", "warnings",
                        "seconds"}
    for side in (doc["a"], doc["b"]):
        assert set(side) == {"name", "kubernetesVersion", "config", "featureGates", "description"}
    assert (doc["a"]["kubernetesVersion"], doc["b"]["kubernetesVersion"], doc["seed"]) == ("1.35", "1.37", 1)
    assert (doc["mode"], doc["ties"]) == ("sequential", "align")
    kinds = {"kubernetesVersion", "profile", "plugin", "weight", "args", "setting", "featureGate"}
    assert all(c["kind"] in kinds and {"a", "b"} <= set(c) for c in doc["configChanges"])
    assert len(doc["pods"]) == 7
    for p in doc["pods"]:
        assert set(p) == {"pod", "a", "b", "changed", "tie", "kind", "cause", "divergedAfter", "why"}
        check_side(p["a"])
        check_side(p["b"])
        assert p["kind"] in ("", "moved", "newlyUnschedulable", "newlySchedulable", "outcome", "devices")
        assert p["cause"] in (None, "own", "earlier")
        if p["changed"] or p["tie"]:
            check_why(p["why"])
        else:
            assert p["why"] is None and p["kind"] == ""
    for n in doc["nodes"]:
        assert set(n) == {"node", "a", "b", "allocatable"} and set(n["a"]) == {"pods", "cpu", "memory"}
    s = doc["summary"]
    assert set(s) == {"pods", "changed", "placedDifferently", "newlyUnschedulable", "newlySchedulable",
                      "otherOutcome", "otherDevices", "ownDecision", "afterEarlierPlacements", "ties",
                      "divergedAfter", "divergedOnTie", "plugins", "nodesChanged", "a", "b"}
    assert s["changed"] == sum(p["changed"] for p in doc["pods"]) == s["ownDecision"] + s["afterEarlierPlacements"]
    assert s["changed"] == sum(s[k] for k in ("placedDifferently", "newlyUnschedulable", "newlySchedulable",
                                               "otherOutcome", "otherDevices"))
    assert s["nodesChanged"] == len(doc["nodes"])
    assert s["plugins"]["NodeResourcesBalancedAllocation"] >= 1 and s["plugins"]["NodeDeclaredFeatures"] == 1
    worker = next(p for p in doc["pods"] if p["pod"] == "shop/worker-0")
    assert worker["why"]["verdicts"][0]["b"]["plugin"] == "NodeDeclaredFeatures"
    assert isinstance(doc["seconds"], float)


def test_the_same_run_twice_gives_the_same_document() -> None:
    argv = ("--cluster", CLUSTER, "--b-config", BINPACK, "--seed", "3")
    a, b = compare_json(*argv), compare_json(*argv)
    a.pop("seconds")
    b.pop("seconds")
    assert a == b


def test_table() -> None:
    code, out, err = run("compare", "--cluster", CLUSTER, "--b-config", BINPACK, "--seed", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "A: Kubernetes 1.37"
    assert lines[1] == f"B: Kubernetes 1.37, config {BINPACK}"
    assert "NodeResourcesFit args scoringStrategy.type: LeastAllocated -> MostAllocated" in out
    assert any(line.startswith("POD ") and "CHANGE" in line and "WHY" in line for line in lines)
    assert any(line.startswith("NODE ") and "PODS A -> B" in line for line in lines)
    assert "plugins responsible: NodeResourcesFit 3" in out
    assert all(len(line) <= 120 for line in lines)


def test_identical_sides_are_allowed_and_change_nothing() -> None:
    code, out, err = run("compare", "--cluster", CLUSTER, "--seed", "5")
    assert code == 0, err
    assert "configuration differences: none" in out and "no pod lands differently" in out
    assert "0 of 7 pod(s) changed" in out


def test_shared_flags_set_both_sides() -> None:
    doc = compare_json("--cluster", CLUSTER, "--kubernetes-version", "1.35", "--b-feature-gates",
                       "NodeDeclaredFeatures=true", "--seed", "1")
    assert doc["a"]["kubernetesVersion"] == doc["b"]["kubernetesVersion"] == "1.35"
    assert doc["b"]["featureGates"] == {"NodeDeclaredFeatures": True} and doc["a"]["featureGates"] == {}
    first = next(p for p in doc["pods"] if p["changed"])
    assert first["pod"] == "shop/worker-0" and first["cause"] == "own"
    assert first["why"]["plugins"] == ["NodeDeclaredFeatures"]


def test_fail_on_change(tmp_path: Path) -> None:
    code, _, _ = run("compare", "--cluster", CLUSTER, "--b-config", BINPACK, "--fail-on-change", "--output", "json",
                     "--seed", "1")
    assert code == 3
    code, _, _ = run("compare", "--cluster", CLUSTER, "--fail-on-change")
    assert code == 0


@pytest.mark.parametrize(("argv", "flag", "words"), [
    (["--a-kubernetes-version", "1.99"], "--a-kubernetes-version", "Kubernetes 1.99 is not supported"),
    (["--b-kubernetes-version", "banana"], "--b-kubernetes-version", "invalid version"),
    (["--kubernetes-version", "1.20"], "--kubernetes-version", "not supported"),
    (["--a-feature-gates", "NoSuchGate=true"], "--a-feature-gates", "unrecognized feature gate: NoSuchGate"),
    (["--b-config", "no/such/file.yaml"], "--b-config", "no/such/file.yaml"),
    (["--config", "/etc/hostname"], "--config", "not a KubeSchedulerConfiguration"),
    (["--config", "x.yaml", "--a-config", "y.yaml"], "--a-config", "--config sets both sides"),
    (["--kubernetes-version", "1.35", "--b-kubernetes-version", "1.36"], "--b-kubernetes-version",
     "--kubernetes-version sets both sides"),
    (["--a-config", "-", "--b-config", "-"], "--b-config", "only one of --a-config, --b-config can read"),
], ids=["unknown-version", "bad-version", "shared-version", "unknown-gate", "missing-config", "not-a-config",
        "config-twice", "version-twice", "stdin-twice"])
def test_bad_input_names_the_flag(argv: list[str], flag: str, words: str) -> None:
    code, out, err = run("compare", "--cluster", CLUSTER, *argv)
    assert code == 2 and out == ""
    assert flag in err and words in err
    assert "Traceback" not in err


def test_a_bad_profile_names_the_side_flag(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                   "- schedulerName: default-scheduler\n  plugins: {score: {enabled: [{name: NoSuchPlugin}]}}\n")
    code, _, err = run("compare", "--cluster", CLUSTER, "--b-config", str(cfg))
    assert code == 2 and err.startswith("error: --b-config: ") and "NoSuchPlugin" in err


def test_config_from_standard_input(monkeypatch: Any) -> None:
    code, out, err = run("compare", "--cluster", CLUSTER, "--b-config", "-", "--output", "json", "--seed", "1",
                         stdin=Path(BINPACK).read_text(), monkeypatch=monkeypatch)
    assert code == 0, err
    assert json.loads(out)["summary"]["plugins"] == {"NodeResourcesFit": 3}


def test_missing_cluster_is_bad_input() -> None:
    code, _, err = run("compare", "--cluster", "no/such/dump.yaml")
    assert code == 2 and "no/such/dump.yaml" in err


def test_help_and_completion_know_the_command(capsys: Any) -> None:
    assert run("compare", "--help")[0] == 0
    out = capsys.readouterr().out
    assert "--a-kubernetes-version" in out and "examples:" in out and "--mode {sequential,independent}" in out
    _, out, _ = run("completion", "bash")
    assert "--a-kubernetes-version" in out and "--b-config" in out
    assert run("compare", "--cluster", CLUSTER, "--mode", "parallel")[0] == 2
