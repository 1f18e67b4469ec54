"""Driver-published device taints (ResourceSlice spec.devices[].taints, DRADeviceTaints): the only taints a
ResourceSlice carries in the 1.34-1.37 API; examples/dra-device-taints.yaml."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from scheduling_framework.api.resource import has_device_taints
from scheduling_framework.cli import main
from tests.fixture_runner import ROOT

EXAMPLE = ROOT / "examples" / "dra-device-taints.yaml"
TAINT = {"key": "k", "effect": "NoSchedule"}


def run(*argv: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(EXAMPLE), "--output", "json", *argv], stdout=out, stderr=err) == 0
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


@pytest.mark.parametrize(("argv", "warned"), [
    (("--kubernetes-version", "1.34"), True),
    (("--kubernetes-version", "1.35"), True),
    (("--kubernetes-version", "1.35", "--feature-gates", "DRADeviceTaints=true"), False),
    (("--kubernetes-version", "1.36"), False),
    (("--kubernetes-version", "1.37"), False),
], ids=["1.34", "1.35", "1.35-gate-on", "1.36", "1.37"])
def test_ignored_device_taints_are_warned_about(argv: tuple[str, ...], warned: bool) -> None:
    doc = run(*argv)
    got = [w for w in doc["warnings"] if w.startswith("ignored device taints (ResourceSlice spec.devices[].taints)")]
    assert got == ([f"ignored device taints (ResourceSlice spec.devices[].taints): the DRADeviceTaints feature gate "
                    f"is off in Kubernetes {argv[1]} (--feature-gates DRADeviceTaints=true applies them): gpu-a-gpus"]
                   if warned else [])


def test_untolerated_device_taint_keeps_the_device_from_the_claim() -> None:
    doc = run("--kubernetes-version", "1.36")
    assert {p["pod"]: p["node"] for p in doc["pods"]} == {"default/train": "gpu-b", "default/diagnose": "gpu-a"}


@pytest.mark.parametrize(("manifest", "expected"), [
    ({"apiVersion": "resource.k8s.io/v1", "spec": {"devices": [{"name": "a"}, {"name": "b", "taints": [TAINT]}]}},
     True),
    ({"apiVersion": "resource.k8s.io/v1", "spec": {"devices": [{"name": "a", "taints": []}]}}, False),
    ({"apiVersion": "resource.k8s.io/v1beta1", "spec": {"devices": [{"name": "a", "basic": {"taints": [TAINT]}}]}},
     True),
    ({"apiVersion": "resource.k8s.io/v1beta1", "spec": {"devices": [{"name": "a", "taints": [TAINT]}]}}, False),
], ids=["v1", "v1-empty", "v1beta1-basic", "v1beta1-misplaced"])
def test_has_device_taints(manifest: dict[str, Any], expected: bool) -> None:
    assert has_device_taints(manifest) is expected
