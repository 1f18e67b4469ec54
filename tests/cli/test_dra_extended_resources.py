"""DRAExtendedResource from the command line: the issue's GPU example (docs/dra.md,
examples/dra-extended-resources.yaml) schedules under 1.37 and is Unschedulable under 1.35; the claim shows in the
JSON output and the resulting cluster."""

from __future__ import annotations

import io
import json
import pathlib
from typing import Any

import pytest
import yaml

from scheduling_framework.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dra-extended-resources.yaml"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["schedule", "--cluster", str(EXAMPLE), *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def pod_result(*argv: str) -> dict[str, Any]:
    code, out, err = run("--output", "json", *argv)
    assert code == 0, err
    [pod] = json.loads(out)["pods"]
    return pod


def test_docs_show_the_example_file() -> None:
    doc = (ROOT / "docs" / "dra.md").read_text().split("## Extended resources through DRA", 1)[1]
    shown = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert list(yaml.safe_load_all(shown)) == list(yaml.safe_load_all(EXAMPLE.read_text()))


@pytest.mark.parametrize(("argv", "node"), [
    (("--kubernetes-version", "1.37"), "gpu-1"),
    (("--kubernetes-version", "1.36"), "gpu-1"),
    (("--kubernetes-version", "1.35", "--feature-gates", "DRAExtendedResource=true"), "gpu-1"),
    (("--kubernetes-version", "1.34", "--feature-gates", "DRAExtendedResource=true"), "gpu-1"),
], ids=["1.37", "1.36", "1.35-gate-on", "1.34-gate-on"])
def test_gpu_pod_lands_on_the_gpu_node(argv: tuple[str, ...], node: str) -> None:
    pod = pod_result(*argv)
    assert (pod["outcome"], pod["node"]) == ("Scheduled", node)
    [claim] = pod["claims"]
    assert claim["podClaimName"] is None and claim["name"].startswith("cuda-extended-resources-")
    assert claim["allocation"] == {"devices": [{"request": "container-0-request-1", "driver": "gpu.example.com",
                                                "pool": "gpu-1", "device": "gpu-0"}]}


@pytest.mark.parametrize("argv", [
    ("--kubernetes-version", "1.35"),
    ("--kubernetes-version", "1.34"),
    ("--kubernetes-version", "1.36", "--feature-gates", "DRAExtendedResource=false"),
], ids=["1.35", "1.34", "1.36-gate-off"])
def test_without_the_gate_no_node_has_the_resource(argv: tuple[str, ...]) -> None:
    pod = pod_result(*argv)
    assert pod["outcome"] == "Unschedulable"
    assert pod["message"].startswith("0/2 nodes are available: 2 Insufficient example.com/gpu.")
    assert "claims" not in pod


def test_gate_is_locked_on_in_1_37() -> None:
    code, _, err = run("--kubernetes-version", "1.37", "--feature-gates", "DRAExtendedResource=false")
    assert code == 2
    assert "cannot set feature gate DRAExtendedResource to false" in err


def test_resulting_cluster_has_the_claim_and_the_pod_status() -> None:
    code, out, err = run("--output", "yaml")
    assert code == 0, err
    items = yaml.safe_load(out)["items"]
    [claim] = [i for i in items if i["kind"] == "ResourceClaim"]
    [pod] = [i for i in items if i["kind"] == "Pod"]
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == "cuda-uid"
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "cuda", "uid": "cuda-uid"}]
    assert pod["spec"]["nodeName"] == "gpu-1"
    assert pod["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "app", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-1"}],
        "resourceClaimName": claim["metadata"]["name"]}


def test_device_plugin_node_is_checked_by_node_resources_fit(tmp_path: pathlib.Path) -> None:
    """A node listing the resource in allocatable serves it with its device plugin: no claim is made."""
    docs = list(yaml.safe_load_all(EXAMPLE.read_text()))
    for d in docs:
        if d["kind"] == "Node" and d["metadata"]["name"] == "cpu-1":
            d["status"]["allocatable"]["example.com/gpu"] = "1"
        if d["kind"] == "ResourceSlice":
            d["spec"]["devices"] = []
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = io.StringIO()
    assert main(["schedule", "--cluster", str(path), "--output", "json"], stdout=out, stderr=io.StringIO()) == 0
    [pod] = json.loads(out.getvalue())["pods"]
    assert (pod["outcome"], pod["node"]) == ("Scheduled", "cpu-1")
    assert "claims" not in pod
