"""Fields of the 1.36 / 1.37 resource.k8s.io API that upstream's scheduler reads and we do not model: found in
the manifest and reported as a warning naming the field and its feature gate, never silently dropped."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml

from scheduling_framework.api.resource import ResourceSlice, unmodelled_fields
from scheduling_framework.cli import main
from scheduling_framework.errors import ManifestError
from tests.fixture_runner import ROOT

V1, V1B1 = "resource.k8s.io/v1", "resource.k8s.io/v1beta1"
NAR = {"cpu": {"mapping": {"deviceMultiplier": "8"}}}


def _slice(api_version: str, device: dict[str, Any], **spec: Any) -> dict[str, Any]:
    d = {"name": "d0", **device} if api_version != V1B1 else {"name": "d0", "basic": device}
    return {"apiVersion": api_version, "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "x.example.com", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
                     "devices": [d], **spec}}


def _claim(request: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", **request}]}}}


DERIVED = [{"name": "derived/numa", "expression": "device.attributes['x.example.com'].numa"}]


@pytest.mark.parametrize(("kind", "manifest", "expected"), [
    ("ResourceSlice", _slice(V1, {}), ()),
    ("ResourceSlice", _slice(V1, {"nodeAllocatableResources": NAR}),
     (("spec.devices[].nodeAllocatableResources", "DRANodeAllocatableResources"),)),
    ("ResourceSlice", _slice(V1B1, {"nodeAllocatableResourceMappings": NAR}),
     (("spec.devices[].nodeAllocatableResourceMappings", "DRANodeAllocatableResources"),)),
    ("ResourceSlice", _slice(V1, {"consumesCounters": [{"counterSet": "cs", "compatibilityGroups": ["a"]}]}),
     (("spec.devices[].consumesCounters[].compatibilityGroups", "DRADeviceCompatibilityGroups"),)),
    ("ResourceSlice", _slice(V1, {"consumesCounters": [{"counterSet": "cs", "compatibilityGroups": []}]}), ()),
    ("ResourceSlice", _slice(V1, {}, skipNodeOperations=["*"]),
     (("spec.skipNodeOperations", "DRAOptionalNodeOperations"),)),
    ("ResourceClaim", _claim({"exactly": {"deviceClassName": "c", "derivedAttributes": DERIVED}}),
     (("spec.devices.requests[].exactly.derivedAttributes", "DRADerivedAttributes"),)),
    ("ResourceClaim", _claim({"firstAvailable": [{"name": "a", "deviceClassName": "c",
                                                  "derivedAttributes": DERIVED}]}),
     (("spec.devices.requests[].firstAvailable[].derivedAttributes", "DRADerivedAttributes"),)),
    ("ResourceClaim", {**_claim({"deviceClassName": "c", "derivedAttributes": DERIVED}), "apiVersion": V1B1},
     (("spec.devices.requests[].exactly.derivedAttributes", "DRADerivedAttributes"),)),
    ("ResourceClaimTemplate",
     {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "t", "namespace": "default"},
      "spec": {"spec": _claim({"exactly": {"deviceClassName": "c", "derivedAttributes": DERIVED}})["spec"]}},
     (("spec.spec.devices.requests[].exactly.derivedAttributes", "DRADerivedAttributes"),)),
    ("DeviceClass", {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "c"},
                     "spec": {"extendedResourceName": "example.com/gpu"}}, ()),
], ids=["slice-plain", "node-allocatable-resources", "node-allocatable-mappings-v1beta1", "compatibility-groups",
        "compatibility-groups-empty", "skip-node-operations", "derived-exactly", "derived-first-available",
        "derived-v1beta1", "derived-template", "class-has-none"])
def test_unmodelled_fields_are_found(kind: str, manifest: dict[str, Any], expected: tuple[Any, ...]) -> None:
    assert unmodelled_fields(kind, manifest) == expected


def test_the_cli_warns_naming_the_object_and_the_gate(tmp_path: Any) -> None:
    docs = list(yaml.safe_load_all((ROOT / "examples" / "dra-device-taint-rules.yaml").read_text()))
    for d in docs:
        if d["kind"] == "ResourceSlice":
            d["spec"]["devices"][0]["nodeAllocatableResources"] = NAR
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = io.StringIO()
    assert main(["schedule", "--cluster", str(path), "--output", "json"], stdout=out, stderr=io.StringIO()) == 0
    warnings = json.loads(out.getvalue())["warnings"]
    assert ("ignored spec.devices[].nodeAllocatableResources: not implemented here (feature gate "
            "DRANodeAllocatableResources); upstream's scheduler reads it when the gate is on: "
            "ResourceSlice gpu-a-gpus, ResourceSlice gpu-b-gpus") in warnings


def test_list_type_attributes_are_refused_naming_the_field() -> None:
    with pytest.raises(ManifestError) as ei:
        ResourceSlice.from_dict(_slice(V1, {"attributes": {"numa": {"ints": [0, 1]}}}))
    assert ("spec.devices[0].attributes.numa.ints: Unsupported value: list-type attributes (DRAListTypeAttributes) "
            "are not supported here") in str(ei.value)
