"""Fields the Kubernetes API does not define are reported (as the API server's ``unknown field`` warnings),
never dropped silently; ``strict`` makes them errors (``kubectl --validate=strict``)."""

from __future__ import annotations

import glob
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework import Scheduler
from scheduling_framework.api import KubeObject, Node, Pod, ResourceSlice
from scheduling_framework.api.fields import SNAKE_CASE_HINT, UnknownFieldWarning, unknown_fields
from scheduling_framework.errors import ManifestValidationError
from scheduling_framework.ingest.cluster import cluster_from_documents, load_cluster
from scheduling_framework.simulation import Simulator
from tests.fixture_runner import ROOT

k8s = pytest.importorskip("kubernetes.client")

NODE_A = {"kind": "Node", "metadata": {"name": "a-1", "labels": {"zone": "a"}},
          "status": {"capacity": {"cpu": "4", "pods": "10"}}}


def pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def snake_case_pod() -> dict[str, Any]:
    """The issue's case: the official client's ``to_dict()``, whose keys are snake_case."""
    v1 = k8s.V1Pod(metadata=k8s.V1ObjectMeta(name="web", namespace="default"),
                   spec=k8s.V1PodSpec(node_selector={"zone": "b"}, containers=[k8s.V1Container(name="c")]))
    d: dict[str, Any] = v1.to_dict()
    d["kind"] = "Pod"
    return d


@pytest.mark.parametrize(("kind", "manifest", "expected"), [
    pytest.param("Pod", pod(node_selector={"zone": "b"}),
                 ['unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)'], id="snake-case"),
    pytest.param("Pod", pod(nodeSelectr={"zone": "b"}),
                 ['unknown field "spec.nodeSelectr" (did you mean "spec.nodeSelector"?)'], id="near-miss"),
    pytest.param("Pod", pod(nodeselector={"zone": "b"}),
                 ['unknown field "spec.nodeselector" (did you mean "spec.nodeSelector"?)'], id="case"),
    pytest.param("Pod", pod(colour="blue"), ['unknown field "spec.colour"'], id="no-suggestion"),
    pytest.param("Pod", {"kind": "Pod", "metadata": {"name": "x"},
                         "spec": {"containers": [{"name": "a"}, {"name": "b", "resource": {}}]}},
                 ['unknown field "spec.containers[1].resource" (did you mean "spec.containers[1].resources"?)'],
                 id="list-index"),
    pytest.param("Pod", pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpression": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}),
                 ['unknown field "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.'
                  'nodeSelectorTerms[0].matchExpression" (did you mean "spec.affinity.nodeAffinity.'
                  'requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions"?)'],
                 id="deep"),
    pytest.param("Pod", {"kind": "Pod", "metadata": {"name": "x"}, "nodeSelector": {}},
                 ['unknown field "nodeSelector"'], id="top-level"),
    pytest.param("Node", {"kind": "Node", "metadata": {"name": "n"}, "spec": {"taint": []}},
                 ['unknown field "spec.taint" (did you mean "spec.taints"?)'], id="node"),
    pytest.param("PersistentVolumeClaim", {"kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
                                           "spec": {"storage_class_name": "fast"}},
                 ['unknown field "spec.storage_class_name" (did you mean "spec.storageClassName"?)'], id="pvc"),
    pytest.param("ResourceSlice", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                   "metadata": {"name": "s"}, "spec": {"devices": [{"name": "d", "basic": {}}]}},
                 ['unknown field "spec.devices[0].basic"'], id="dra-v1-has-no-basic"),
    pytest.param("ResourceSlice", {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
                                   "metadata": {"name": "s"}, "spec": {"devices": [{"name": "d", "basic": {}}]}},
                 [], id="dra-v1beta1-has-basic"),
    pytest.param("Pod", {"kind": "Pod", "metadata": {"name": "x", "labels": {"any_key": "v"},
                                                     "annotations": {"node_selector": "v"}},
                         "spec": {"nodeSelector": {"node_selector": "v"}, "overhead": {"weird_name": "1"}}},
                 [], id="free-form-maps-are-not-checked"),
    pytest.param("ConfigMap", {"kind": "ConfigMap", "metadata": {"name": "x"}, "dataa": {}}, [],
                 id="kind-outside-the-schema"),
])
def test_unknown_fields(kind: str, manifest: dict[str, Any], expected: list[str]) -> None:
    assert unknown_fields(manifest, kind) == expected


def test_snake_case_pod_from_dict_warns_and_errors_under_strict() -> None:
    d = snake_case_pod()
    with pytest.warns(UnknownFieldWarning) as rec:
        Pod.from_dict(d)
    text = str(rec[0].message)
    assert text.startswith("Pod default/web: ")
    assert 'unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)' in text
    assert SNAKE_CASE_HINT in text
    with pytest.raises(ManifestValidationError) as ei:
        Pod.from_dict(d, strict=True)
    assert 'Pod default/web: unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)' \
        in ei.value.errors


@pytest.mark.parametrize(("parse", "manifest"), [
    pytest.param(Pod.from_dict, pod(), id="pod"),
    pytest.param(Node.from_dict, NODE_A, id="node"),
    pytest.param(KubeObject.from_dict, {"kind": "Namespace", "metadata": {"name": "x"}}, id="object"),
])
def test_clean_manifests_do_not_warn(parse: Any, manifest: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse(manifest, strict=True)


@pytest.mark.parametrize(("parse", "manifest"), [
    pytest.param(Node.from_dict, {**NODE_A, "spec": {"unschedulabl": True}}, id="node"),
    pytest.param(KubeObject.from_dict, {"kind": "Namespace", "metadata": {"name": "x", "lables": {}}}, id="object"),
    pytest.param(ResourceSlice.from_dict, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                           "metadata": {"name": "s"},
                                           "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p"},
                                                    "devices": [{"name": "d", "basic": {}}]}}, id="dra"),
])
def test_every_model_warns_and_errors_under_strict(parse: Any, manifest: dict[str, Any]) -> None:
    with pytest.warns(UnknownFieldWarning, match="unknown field"):
        parse(manifest)
    with pytest.raises(ManifestValidationError, match="unknown field"):
        parse(manifest, strict=True)


def test_the_snake_case_pod_is_no_longer_a_silent_wrong_answer() -> None:
    """The issue's run: without a word, the dropped node_selector let the pod land in zone a."""
    c = cluster_from_documents([NODE_A, snake_case_pod()])
    assert any(w.startswith('unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?) (ignored): '
                            "Pod default/web") for w in c.warnings)
    assert f"unknown fields: {SNAKE_CASE_HINT}" in list(c.warnings)
    with pytest.raises(ManifestValidationError, match=r'unknown field "spec\.node_selector"'):
        cluster_from_documents([NODE_A, snake_case_pod()], strict=True)


def test_cluster_warnings_are_aggregated_per_field() -> None:
    docs = [NODE_A] + [{**pod(nodeSelectr={}), "metadata": {"name": f"p{i}"}} for i in range(3)]
    c = cluster_from_documents(docs)
    assert [w for w in c.warnings if "unknown field" in w] == [
        'unknown field "spec.nodeSelectr" (did you mean "spec.nodeSelector"?) (ignored): '
        "Pod default/p0, Pod default/p1, Pod default/p2"]


@pytest.mark.parametrize("strict", [False, True], ids=["warn", "strict"])
def test_scheduler_and_simulator_report_unknown_fields(strict: bool) -> None:
    bad = pod(node_selector={"zone": "b"})
    s = Scheduler(strict=strict)
    sim = Simulator(strict=strict)
    if strict:
        with pytest.raises(ManifestValidationError, match=r"spec\.node_selector"):
            s.load([NODE_A], [bad])
        assert s.cache.nodes() == []  # nothing half-applied
        with pytest.raises(ManifestValidationError, match=r"spec\.node_selector"):
            sim.add_pod(bad, "a-1")
        return
    s.load([NODE_A], [bad])
    assert any("spec.node_selector" in w for w in s.warnings)
    sim.add_node(NODE_A)
    sim.add_pod(bad, "a-1")
    assert any("spec.node_selector" in w for w in sim.warnings)


def test_shipped_examples_and_real_fixtures_have_no_unknown_fields() -> None:
    files = sorted([*glob.glob(str(ROOT / "examples" / "*cluster*.yaml")), str(ROOT / "examples" / "web-pod.yaml"),
                    *glob.glob(str(ROOT / "tests" / "fixtures" / "real" / "*.yaml"))])
    assert len(files) >= 5
    for f in files:
        assert [w for w in load_cluster(f).warnings if "unknown field" in w] == [], f


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scheduling_framework", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("command", [
    pytest.param(["schedule"], id="schedule"),
    pytest.param(["capacity", "--pod", "POD"], id="capacity"),
])
def test_cli_warns_and_strict_fails(tmp_path: Path, command: list[str]) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all([NODE_A, {**pod(node_selector={"zone": "b"}), "metadata": {"name": "x"}}]))
    pod_file = tmp_path / "p.yaml"
    pod_file.write_text(yaml.safe_dump(pod(nodeSelectr={"zone": "a"})))
    args = [a if a != "POD" else str(pod_file) for a in command] + ["--cluster", str(cluster), "--output", "json"]
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    import json

    out = json.loads(p.stdout)
    assert any('unknown field "spec.node_selector"' in w for w in out["warnings"])
    if command[0] == "capacity":
        assert any('unknown field "spec.nodeSelectr"' in w for w in out["warnings"])
    p = cli(*args, "--strict")
    assert p.returncode == 2
    assert 'unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)' in p.stderr


def test_the_committed_schema_is_the_generators_output() -> None:
    import kubernetes

    text = (ROOT / "scheduling_framework" / "api" / "_known_fields.py").read_text(encoding="utf-8")
    if f"kubernetes client {kubernetes.__version__} " not in text:
        pytest.skip(f"generated from another client release than the installed {kubernetes.__version__}")
    out = subprocess.run([sys.executable, "tools/gen_known_fields.py"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out == text
