"""DeviceTaintRules (DRADeviceTaintRules): the objects, how they taint devices (upstream's ResourceSlice tracker
cases, tests/fixtures/upstream/dra-device-taint-rules.yaml), and the allocation that follows, per release."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml

from plugins_intree.dynamicresources.state import apply_taint_rules
from scheduling_framework.api.resource import DeviceClass, DeviceTaintRule, ResourceSlice
from scheduling_framework.cli import main
from scheduling_framework.dra.cel import CELCache
from scheduling_framework.errors import ManifestValidationError
from scheduling_framework.ingest.cluster import cluster_from_documents
from tests.fixture_runner import ROOT

TABLE = yaml.safe_load((ROOT / "tests/fixtures/upstream/dra-device-taint-rules.yaml").read_text())
EXAMPLE = ROOT / "examples" / "dra-device-taint-rules.yaml"
V1 = "resource.k8s.io/v1"


def _slice(name: str) -> ResourceSlice:
    first = name.startswith("s1")
    driver, pool = ("driver1.example.com", "pool-1") if first else ("driver2.example.com", "pool-2")
    devices: list[dict[str, Any]] = [{"name": "device-1" if first else "device-2"}]
    if name.endswith("-three"):
        devices = [{"name": f"device-{i}"} for i in range(3)]
    elif name.endswith("-one-device-1"):
        devices = [{"name": "device-1"}]
    elif name.endswith("-tainted"):
        devices = [{"name": "device-1", "taints": [{"key": "example.com/taint2", "value": "tainted2",
                                                    "effect": "NoExecute"}]}]
    return ResourceSlice.from_dict({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name[:2]},
                                    "spec": {"driver": driver, "pool": {"name": pool, "resourceSliceCount": 1},
                                             "nodeName": "node", "devices": devices}})


def _rule(i: int, rule: dict[str, Any]) -> DeviceTaintRule:
    spec: dict[str, Any] = {"taint": TABLE["taints"]["t1"]}
    if "selector" in rule:
        sel = dict(rule["selector"])
        if "selectors" in sel:
            sel["selectors"] = [{"cel": {"expression": e}} for e in sel["selectors"]]
        spec["deviceSelector"] = sel
    return DeviceTaintRule.from_dict({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule",
                                      "metadata": {"name": f"rule-{i}"}, "spec": spec})


RELEASES = ("1.34", "1.35", "1.36", "1.37")
CASES = [(c, rel) for c in TABLE["cases"] for rel in c.get("releases", RELEASES)]


def _classes(names: list[str]) -> dict[str, DeviceClass]:
    return {n: DeviceClass.from_dict({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": n},
                                      "spec": {"selectors": [{"cel": {"expression": TABLE["classes"][n]}}]}})
            for n in names}


def _taint_keys(slices: list[ResourceSlice], rules: list[DeviceTaintRule], classes: dict[str, DeviceClass],
                release: str) -> dict[str, dict[str, list[str]]]:
    return {s.name: {d.name: [t.key for t in d.taints] for d in s.spec.devices}
            for s in apply_taint_rules(slices, rules, classes, CELCache(), cel_selectors=release == "1.34")}


@pytest.mark.parametrize(("case", "release"), CASES, ids=[f"{c['name']}-{rel}" for c, rel in CASES])
def test_upstream_tracker_case(case: dict[str, Any], release: str) -> None:
    slices = [_slice(n) for n in case["slices"]]
    rules = [_rule(i, r) for i, r in enumerate(case.get("rules") or [])]
    assert _taint_keys(slices, rules, _classes(case.get("classes") or []), release) == case["expect"]


@pytest.mark.parametrize("selector", [{"deviceClassName": "device-class-1"}, {"selectors": ["false"]},
                                      {"selectors": ["invalid"]}], ids=["device-class", "cel-false", "cel-invalid"])
def test_from_1_35_class_and_cel_criteria_are_not_part_of_the_selector(selector: dict[str, Any]) -> None:
    # the 1.35 API has neither field: a rule holding only them selects every device, as an empty selector does
    got = _taint_keys([_slice("s1"), _slice("s2")], [_rule(0, {"selector": selector})],
                      _classes(["device-class-1"]), "1.35")
    assert got == {"s1": {"device-1": ["example.com/taint"]}, "s2": {"device-2": ["example.com/taint"]}}


RULE = {"apiVersion": V1, "kind": "DeviceTaintRule", "metadata": {"name": "r"},
        "spec": {"deviceSelector": {"driver": "d"}, "taint": {"key": "example.com/k", "effect": "NoSchedule"}}}


@pytest.mark.parametrize("api_version", ["resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"])
def test_served_api_versions_load(api_version: str) -> None:
    cluster = cluster_from_documents([{**RULE, "apiVersion": api_version}])
    [obj] = cluster.objects
    assert obj.kind == "DeviceTaintRule" and not cluster.warnings.to_list()


@pytest.mark.parametrize(("spec", "message"), [
    ({"deviceSelector": {}}, "DeviceTaintRule r: spec.taint: Required value"),
    ({"taint": {"effect": "NoSchedule"}}, "DeviceTaintRule r: spec.taint.key: Required value"),
    ({"taint": {"key": "k", "effect": "Sometimes"}}, 'spec.taint.effect: Unsupported value: "Sometimes"'),
    ({"taint": {"key": "not a key", "effect": "None"}}, 'spec.taint.key: Invalid value: "not a key"'),
    ({"deviceSelector": "all", "taint": {"key": "k", "effect": "None"}},
     "spec.deviceSelector: expected an object, got str"),
    ({"deviceSelector": {"selectors": [{}]}, "taint": {"key": "k", "effect": "None"}},
     "spec.deviceSelector.selectors[0].cel: Required value"),
], ids=["no-taint", "no-key", "bad-effect", "bad-key", "selector-not-a-mapping", "empty-cel-selector"])
def test_bad_rules_are_refused_naming_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_documents([{**RULE, "spec": spec}])
    assert message in str(ei.value)


def test_unsupported_api_version_is_refused() -> None:
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_documents([{**RULE, "apiVersion": "resource.k8s.io/v1beta1"}])
    assert 'unsupported apiVersion "resource.k8s.io/v1beta1" for DeviceTaintRule' in str(ei.value)


def run(*argv: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(EXAMPLE), "--output", "json", *argv], stdout=out, stderr=err) == 0
    return json.loads(out.getvalue())


APPLIED = {"default/train": "gpu-b", "default/train-2": None, "default/burn-in": "gpu-a"}


@pytest.mark.parametrize(("argv", "applied"), [
    (("--kubernetes-version", "1.37"), True),
    (("--kubernetes-version", "1.37", "--feature-gates", "DRADeviceTaintRules=false"), False),
    (("--kubernetes-version", "1.36"), False),
    (("--kubernetes-version", "1.36", "--feature-gates", "DRADeviceTaintRules=true"), True),
    (("--kubernetes-version", "1.35"), False),
    (("--kubernetes-version", "1.34"), False),
    (("--kubernetes-version", "1.34", "--feature-gates", "DRADeviceTaints=true"), True),
], ids=["1.37", "1.37-gate-off", "1.36", "1.36-gate-on", "1.35", "1.34", "1.34-device-taints-on"])
def test_the_rule_taints_gpu_a_when_the_gate_is_on(argv: tuple[str, ...], applied: bool) -> None:
    doc = run(*argv)
    nodes = {p["pod"]: p["node"] for p in doc["pods"]}
    if applied:
        # the claim without a toleration avoids gpu-a's tainted GPU; the tolerating one gets it
        assert nodes == APPLIED
        assert not any("DeviceTaintRule" in w for w in doc["warnings"])
    else:
        assert nodes["default/burn-in"] is None and {nodes["default/train"], nodes["default/train-2"]} == {
            "gpu-a", "gpu-b"}
        assert any(w.startswith("ignored DeviceTaintRule(s): the DRADeviceTaintRules feature gate is off")
                   for w in doc["warnings"])


def test_effect_none_does_not_keep_devices_away(tmp_path: Any) -> None:
    docs = list(yaml.safe_load_all(EXAMPLE.read_text()))
    for d in docs:
        if d["kind"] == "DeviceTaintRule":
            d["spec"]["taint"]["effect"] = "None"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = io.StringIO()
    assert main(["schedule", "--cluster", str(path), "--output", "json"], stdout=out, stderr=io.StringIO()) == 0
    assert all(p["outcome"] == "Scheduled" for p in json.loads(out.getvalue())["pods"][:2])


def _with_rule_selector(tmp_path: Any, selector: dict[str, Any]) -> str:
    docs = list(yaml.safe_load_all(EXAMPLE.read_text()))
    for d in docs:
        if d["kind"] == "DeviceTaintRule":
            d["spec"]["deviceSelector"] = selector
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


CEL_FALSE = {"pool": "gpu-a", "selectors": [{"cel": {"expression": "false"}}]}


@pytest.mark.parametrize(("argv", "applied"), [
    (("--kubernetes-version", "1.34", "--feature-gates", "DRADeviceTaints=true"), False),
    (("--kubernetes-version", "1.35", "--feature-gates", "DRADeviceTaints=true,DRADeviceTaintRules=true"), True),
    (("--kubernetes-version", "1.36", "--feature-gates", "DRADeviceTaintRules=true"), True),
    (("--kubernetes-version", "1.37"), True),
], ids=["1.34", "1.35", "1.36", "1.37"])
def test_rule_cel_selectors_count_in_1_34_only(tmp_path: Any, argv: tuple[str, ...], applied: bool) -> None:
    out = io.StringIO()
    assert main(["schedule", "--cluster", _with_rule_selector(tmp_path, CEL_FALSE), "--output", "json", *argv],
                stdout=out, stderr=io.StringIO()) == 0
    doc = json.loads(out.getvalue())
    nodes = {p["pod"]: p["node"] for p in doc["pods"]}
    warned = [w for w in doc["warnings"] if w.startswith("ignored DeviceTaintRule spec.deviceSelector.deviceClassName")]
    if applied:
        # the selector that is false in 1.34 is not part of the rule from 1.35: pool gpu-a is tainted
        assert nodes == APPLIED
        assert len(warned) == 1 and warned[0].endswith(": gpu-a-maintenance")
    else:
        assert nodes["default/burn-in"] is None and not warned


def test_rule_device_class_is_ignored_with_a_warning_from_1_35(tmp_path: Any) -> None:
    out = io.StringIO()
    path = _with_rule_selector(tmp_path, {"pool": "gpu-a", "deviceClassName": "no-such-class"})
    assert main(["schedule", "--cluster", path, "--output", "json"], stdout=out, stderr=io.StringIO()) == 0
    doc = json.loads(out.getvalue())
    assert {p["pod"]: p["node"] for p in doc["pods"]} == APPLIED
    assert any("deviceSelector.deviceClassName" in w for w in doc["warnings"])
