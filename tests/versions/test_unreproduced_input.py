"""A gate that is on in a run but whose effect is not reproduced warns as soon as the input holds what it
governs (``features.GOVERNED_INPUT``), through the Scheduler, the Simulator and the CLI; a gate that is off,
or whose effect is reproduced, stays silent."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cli import main
from scheduling_framework.features import GATES, GOVERNED_INPUT, HONOURED, NOT_REPRODUCED, unreproduced_gate_message
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator


def _node(status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, **(status or {})}}


def _pod(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, node: str = "") -> dict[str, Any]:
    m: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "i"}], **(spec or {})}}
    if node:
        m["spec"]["nodeName"] = node
    if status:
        m["status"] = status
    return m


NS_META = {"name": "g", "namespace": "default"}
RESIZING = {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]}

#: gate -> (release, gate overrides, manifests that hold what the gate governs)
CASES: dict[str, tuple[str, str | None, list[dict[str, Any]]]] = {
    "DRADeviceTaintRules": ("1.37", None, [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "t"},
         "spec": {"taint": {"key": "k", "effect": "NoSchedule"}}}]),
    "DRAExtendedResource": ("1.36", None, [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"extendedResourceName": "example.com/gpu"}}]),
    "NodeDeclaredFeatures": ("1.36", None, [_node({"declaredFeatures": ["GuaranteedQoSPodCPUResize"]})]),
    "InPlacePodVerticalScaling": ("1.35", None, [_node(), _pod(status=RESIZING, node="n1")]),
    "InPlacePodLevelResourcesVerticalScaling": ("1.36", None, [
        _node(), _pod({"resources": {"requests": {"cpu": "1"}}}, RESIZING, node="n1")]),
    "GenericWorkload": ("1.35", "GenericWorkload=true", [
        {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": NS_META, "spec": {}}]),
    "GangScheduling": ("1.35", "GangScheduling=true", [_pod({"workloadRef": {"name": "w", "podGroup": "g"}})]),
    "TopologyAwareWorkloadScheduling": ("1.36", "TopologyAwareWorkloadScheduling=true", [
        {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": NS_META,
         "spec": {"schedulingConstraints": {"topology": [{"key": "zone"}]}}}]),
    "DRAWorkloadResourceClaims": ("1.36", "DRAWorkloadResourceClaims=true", [
        {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": NS_META,
         "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}}]),
}


def test_every_governed_gate_has_a_case() -> None:
    assert sorted(CASES) == sorted(GOVERNED_INPUT)


def _split(manifests: list[dict[str, Any]]) -> tuple[list[Node], list[Pod], list[KubeObject]]:
    nodes = [Node.from_dict(m) for m in manifests if m["kind"] == "Node"]
    pods = [Pod.from_dict(m) for m in manifests if m["kind"] == "Pod"]
    objects = [KubeObject.from_dict(m) for m in manifests if m["kind"] not in ("Node", "Pod")]
    return nodes, pods, objects


def _scheduler_warnings(release: str, gates: str | None, manifests: list[dict[str, Any]]) -> list[str]:
    sched = Scheduler(kubernetes_version=release, feature_gates=gates)
    sched.load(*_split(manifests))
    return list(sched.warnings)


@pytest.fixture
def effect(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Sets the effect of the case's gate (the mechanism is tested whatever the table says today)."""
    name, value = request.param
    monkeypatch.setitem(GATES, name, attrs.evolve(GATES[name], effect=value))  # type: ignore[arg-type]
    yield value


@pytest.mark.parametrize("effect", [(n, NOT_REPRODUCED) for n in CASES], ids=list(CASES), indirect=True)
def test_enabled_unreproduced_gate_warns_on_its_input(effect: str, request: pytest.FixtureRequest) -> None:
    name = request.node.callspec.id
    release, gates, manifests = CASES[name]
    got = _scheduler_warnings(release, gates, manifests)
    want = unreproduced_gate_message(name, release, GOVERNED_INPUT[name].what)
    assert got.count(want) == 1


@pytest.mark.parametrize("effect", [(n, HONOURED) for n in CASES], ids=list(CASES), indirect=True)
def test_reproduced_gate_is_silent(effect: str, request: pytest.FixtureRequest) -> None:
    name = request.node.callspec.id
    release, gates, manifests = CASES[name]
    assert not [w for w in _scheduler_warnings(release, gates, manifests) if f"feature gate {name} is on" in w]


@pytest.mark.parametrize("name", list(CASES))
def test_the_table_decides_today(name: str) -> None:
    release, gates, manifests = CASES[name]
    warned = any(f"feature gate {name} is on" in w for w in _scheduler_warnings(release, gates, manifests))
    assert warned is (GATES[name].effect == NOT_REPRODUCED)


@pytest.mark.parametrize(("name", "release"), [("DRADeviceTaintRules", "1.36"), ("GenericWorkload", "1.37"),
                                               ("NodeDeclaredFeatures", "1.35")])
def test_gate_off_in_the_release_is_silent(name: str, release: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GATES, name, attrs.evolve(GATES[name], effect=NOT_REPRODUCED))  # type: ignore[arg-type]
    assert not [w for w in _scheduler_warnings(release, None, CASES[name][2]) if f"feature gate {name}" in w]


def test_input_without_governed_objects_is_silent() -> None:
    assert not [w for w in _scheduler_warnings("1.37", None, [_node(), _pod()]) if "is on in this run" in w]


def test_added_later_through_the_scheduler_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GATES, "DRADeviceTaintRules",
                        attrs.evolve(GATES["DRADeviceTaintRules"], effect=NOT_REPRODUCED))  # type: ignore[arg-type]
    sched = Scheduler(kubernetes_version="1.37")
    sched.load([Node.from_dict(_node())])
    assert not any("DRADeviceTaintRules" in w for w in sched.warnings)
    sched.add_object(KubeObject.from_dict(CASES["DRADeviceTaintRules"][2][0]))
    assert any("feature gate DRADeviceTaintRules is on" in w for w in sched.warnings)


def test_simulator_warns_for_its_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GATES, "InPlacePodVerticalScaling",
                        attrs.evolve(GATES["InPlacePodVerticalScaling"], effect=NOT_REPRODUCED))  # type: ignore[arg-type]
    cluster = cluster_from_documents([_node(), _pod(status=RESIZING, node="n1")])
    sim = Simulator.from_cluster(cluster, kubernetes_version="1.35")
    assert any("feature gate InPlacePodVerticalScaling is on" in w for w in sim.warnings)


def test_cli_schedule_json_lists_the_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GATES, "NodeDeclaredFeatures",
                        attrs.evolve(GATES["NodeDeclaredFeatures"], effect=NOT_REPRODUCED))  # type: ignore[arg-type]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([_node({"declaredFeatures": ["X"]}), _pod()]))
    out = io.StringIO()
    code = main(["schedule", "--cluster", str(path), "--output", "json", "--kubernetes-version", "1.37"],
                stdout=out, stderr=io.StringIO())
    assert code == 0
    assert any("feature gate NodeDeclaredFeatures is on" in w for w in json.loads(out.getvalue())["warnings"])


def test_versions_md_lists_every_governed_gate() -> None:
    from tests.fixture_runner import ROOT

    text = (ROOT / "docs" / "versions.md").read_text(encoding="utf-8")
    section = text.split("## Input governed by gates not reproduced", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("|")]
    assert rows[2:] == [[name, gi.what] for name, gi in GOVERNED_INPUT.items()]
