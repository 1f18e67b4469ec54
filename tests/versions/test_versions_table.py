"""docs/versions.md: every row of its behaviour table has a check here, run for every supported release, and
its feature-gate table is exactly the library's gate table; its Python example runs as written."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from typing import Any

import pytest

from plugins_intree.noderesources.balanced_allocation import BalancedAllocation
from scheduling_framework.api import Node, Pod
from scheduling_framework.config import load_config
from scheduling_framework.config.defaults import default_multi_point
from scheduling_framework.config.intree import INTREE_POINTS
from scheduling_framework.features import GATES, FeatureGateError, FeatureGates, dra_allocator_flags
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.testing import make_node
from scheduling_framework.versions import SUPPORTED_RELEASES, at_least
from tests.fixture_runner import ROOT

DOC = ROOT / "docs" / "versions.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _table(title: str) -> list[list[str]]:
    rows = [line for line in _section(title).splitlines() if line.startswith("|")]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[2:]]


def _framework(release: str, gates: str | None = None) -> Any:
    return next(iter(Scheduler(None, kubernetes_version=release, feature_gates=gates).profiles.values()))


# --------------------------------------------------------------------------- one check per behaviour row


def check_balanced_allocation(release: str) -> None:
    plugin = _framework(release).plugins["NodeResourcesBalancedAllocation"]
    assert isinstance(plugin, BalancedAllocation)
    assert plugin.scores_change is at_least(release, "1.36")


def check_default_profile_dra(release: str) -> None:
    entries = default_multi_point(FeatureGates.for_release(release))
    names = [n for n, _ in entries]
    shipped = "DynamicResources" in INTREE_POINTS
    assert ("DynamicResources" in names) is shipped
    if shipped:
        assert names.index("DynamicResources") == names.index("DefaultPreemption") - 1
        assert dict(entries)["DynamicResources"] == (2 if at_least(release, "1.35") else 0)
        assert ("DynamicResources" in _framework(release).score_weights) is at_least(release, "1.35")
    off = "DynamicResourceAllocation=false"
    if release == "1.34":
        assert "DynamicResources" not in [n for n, _ in default_multi_point(FeatureGates.for_release(release, off))]
    else:
        with pytest.raises(FeatureGateError):
            FeatureGates.for_release(release, off)


def check_volume_binding_capacity_scoring(release: str) -> None:
    on = at_least(release, "1.37")
    assert _framework(release).plugins["VolumeBinding"].enable_storage_capacity_scoring is on
    args = next(pc.args for pc in load_config(None, kubernetes_version=release).profiles[0].plugin_config
                if pc.name == "VolumeBinding")
    assert bool(args.shape) is on


def check_volume_limit_scaling(release: str) -> None:
    assert _framework(release).plugins["NodeVolumeLimits"].enable_volume_limit_scaling is at_least(release, "1.37")


def check_taint_comparison_operators(release: str) -> None:
    assert _framework(release).plugins["TaintToleration"].enable_comparison_operators is False
    gate = "TaintTolerationComparisonOperators=true"
    if release == "1.34":
        with pytest.raises(FeatureGateError):
            FeatureGates.for_release(release, gate)
    else:
        assert _framework(release, gate).plugins["TaintToleration"].enable_comparison_operators is True


def check_portworx_migration(release: str) -> None:
    gates = FeatureGates.for_release(release)
    assert gates.enabled("CSIMigrationPortworx")
    assert ("CSIMigrationPortworx" in gates.known()) is (not at_least(release, "1.36"))


def check_volume_attributes_class(release: str) -> None:
    assert _framework(release).plugins["VolumeBinding"].binder.check_attributes_class is True
    if at_least(release, "1.36"):
        with pytest.raises(FeatureGateError):
            FeatureGates.for_release(release, "VolumeAttributesClass=false")
    else:
        assert not FeatureGates.for_release(release, "VolumeAttributesClass=false").enabled("VolumeAttributesClass")


def check_dra_feature_defaults(release: str) -> None:
    gates = FeatureGates.for_release(release)
    newer = at_least(release, "1.36")
    for name in ("DRAExtendedResource", "DRAPartitionableDevices", "DRADeviceTaints", "DRAConsumableCapacity",
                 "DRADeviceBindingConditions"):
        assert gates.enabled(name) is newer, name
    assert gates.enabled("DRAPrioritizedList") and gates.enabled("DRAAdminAccess")
    # the DynamicResources plugin hands these to its allocator
    flags = dra_allocator_flags(_framework(release).feature_gates)
    assert flags["partitionable_devices"] is newer and flags["device_taints"] is newer
    assert flags["consumable_capacity"] is newer and flags["device_binding_and_status"] is newer
    assert flags["prioritized_list"] and flags["admin_access"]


def check_dra_extended_resource(release: str) -> None:
    """The issue's GPU example: scheduled through DRA from 1.36, "Insufficient example.com/gpu" before."""
    import json

    from scheduling_framework.cli import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(ROOT / "examples" / "dra-extended-resources.yaml"),
                 "--kubernetes-version", release, "--output", "json"], stdout=out, stderr=err) == 0, err.getvalue()
    [pod] = json.loads(out.getvalue())["pods"]
    if at_least(release, "1.36"):
        assert (pod["outcome"], pod["node"]) == ("Scheduled", "gpu-1")
        assert pod["claims"][0]["name"].startswith("cuda-extended-resources-")
    else:
        assert pod["outcome"] == "Unschedulable"
        assert pod["message"].startswith("0/2 nodes are available: 2 Insufficient example.com/gpu.")


def check_dra_device_taint_rules(release: str) -> None:
    """examples/dra-device-taint-rules.yaml: the rule keeps gpu-a's GPU from the pods that do not tolerate it."""
    import json

    from scheduling_framework.cli import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(ROOT / "examples" / "dra-device-taint-rules.yaml"),
                 "--kubernetes-version", release, "--output", "json"], stdout=out, stderr=err) == 0, err.getvalue()
    nodes = {p["pod"]: p["node"] for p in json.loads(out.getvalue())["pods"]}
    assert (nodes["default/burn-in"] == "gpu-a") is at_least(release, "1.37")


def _run_taints_example(*argv: str) -> dict[str, Any]:
    import json

    from scheduling_framework.cli import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["schedule", "--cluster", str(ROOT / "examples" / "dra-device-taints.yaml"), "--output", "json",
                 *argv], stdout=out, stderr=err) == 0, err.getvalue()
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def check_dra_taint_rule_class_selectors(release: str) -> None:
    """examples/dra-device-taints.yaml with the rules and device taints on: the rule naming a missing class taints
    nothing in 1.34 and all of pool gpu-b from 1.35, where its deviceClassName is not part of the API."""
    gates = {"1.34": "DRADeviceTaints=true", "1.35": "DRADeviceTaints=true,DRADeviceTaintRules=true",
             "1.36": "DRADeviceTaintRules=true", "1.37": "DRADeviceTaintRules=true"}[release]
    doc = _run_taints_example("--kubernetes-version", release, "--feature-gates", gates)
    train = next(p for p in doc["pods"] if p["pod"] == "default/train")
    ignored = any("spec.deviceSelector.deviceClassName" in w for w in doc["warnings"])
    assert (train["node"] is None) is ignored is at_least(release, "1.35")


def check_dra_device_taints(release: str) -> None:
    """examples/dra-device-taints.yaml, default gates: gpu-a's taint is honoured from 1.36, warned about before."""
    doc = _run_taints_example("--kubernetes-version", release)
    warned = any(w.startswith("ignored device taints") for w in doc["warnings"])
    assert warned is not at_least(release, "1.36")


def check_node_declared_features(release: str) -> None:
    gates = FeatureGates.for_release(release)
    assert gates.enabled("NodeDeclaredFeatures") is at_least(release, "1.36")
    assert ("NodeDeclaredFeatures" in gates.known()) is at_least(release, "1.35")
    names = [n for n, _ in default_multi_point(gates)]
    assert (names[-1] == "NodeDeclaredFeatures") is at_least(release, "1.36")
    plugin = _framework(release).plugins.get("NodeDeclaredFeatures")
    assert (plugin is not None) is at_least(release, "1.36")
    if plugin is not None:
        assert plugin.list_missing is False  # 1.36 on: one fixed reason, the missing features not listed


def check_in_place_resize(release: str) -> None:
    from scheduling_framework.api.resize import RequestRules

    rules = RequestRules.for_gates(FeatureGates.for_release(release))
    assert rules.use_status
    assert rules.pod_level is at_least(release, "1.36")
    assert rules.max_of_sums is at_least(release, "1.37")


def check_dra_all_subrequest(release: str) -> None:
    flags = dra_allocator_flags(FeatureGates.for_release(release))
    assert flags["all_subrequest_index_reset"] is (not at_least(release, "1.36"))
    plugin = _framework(release).plugins["DynamicResources"]
    assert plugin._features["all_subrequest_index_reset"] is flags["all_subrequest_index_reset"]


def check_image_locality_image_volumes(release: str) -> None:
    # a 500 MiB image volume on one of two nodes (scaled to 250 MiB), the pod's container image on neither
    mib = 1024 * 1024
    nodes = [make_node().name(n).capacity(cpu="4", memory="8Gi").obj() for n in ("n1", "n2")]
    nodes[0] = Node.from_dict({**nodes[0].to_dict(), "status": {
        **nodes[0].to_dict()["status"], "images": [{"names": ["gcr.io/model:v1"], "sizeBytes": 500 * mib}]}})
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "gcr.io/app:v1"}],
                                  "volumes": [{"name": "m", "image": {"reference": "gcr.io/model:v1"}}]}})
    sched = Scheduler(kubernetes_version=release, explain=True, seed=1)
    sched.load(nodes, [pod])
    sched.run()
    scores = sched.results[pod.key].scores or {}
    raw = scores["n1"]["ImageLocality"]["raw"]
    # (250 - 23) MiB over a scale of one (1.36) or two (1.37) images of 1000 MiB above 23 MiB
    assert raw == {"1.34": 0, "1.35": 0, "1.36": 100 * 227 // 977, "1.37": 100 * 227 // 1977}[release]


def check_dra_pool_order(release: str) -> None:
    flags = dra_allocator_flags(FeatureGates.for_release(release))
    assert flags["sorted_pools"] is at_least(release, "1.36")
    assert _framework(release).plugins["DynamicResources"]._features["sorted_pools"] is flags["sorted_pools"]


def check_dra_cel_error_wording(release: str) -> None:
    hints = dra_allocator_flags(FeatureGates.for_release(release))["cel_error_hints"]
    assert hints is at_least(release, "1.37")  # tests/dra/test_allocator.py checks both wordings


def check_gang_scheduling(release: str) -> None:
    both = {"GenericWorkload": True, "GangScheduling": True}
    if release in ("1.34", "1.37"):  # 1.34: neither gate; 1.37 removed GangScheduling (GenericWorkload alone)
        with pytest.raises(FeatureGateError):
            FeatureGates.for_release(release, both)
        if release == "1.34":
            return
        both = {"GenericWorkload": True}
    assert "GangScheduling" not in [n for n, _ in default_multi_point(FeatureGates.for_release(release))]
    names = [n for n, _ in default_multi_point(FeatureGates.for_release(release, both))]
    assert names[-1] == "GangScheduling"


CHECKS: dict[str, Callable[[str], None]] = {
    "balanced-allocation": check_balanced_allocation,
    "default-profile-dra": check_default_profile_dra,
    "volume-binding-capacity-scoring": check_volume_binding_capacity_scoring,
    "volume-limit-scaling": check_volume_limit_scaling,
    "taint-comparison-operators": check_taint_comparison_operators,
    "portworx-migration": check_portworx_migration,
    "volume-attributes-class": check_volume_attributes_class,
    "dra-feature-defaults": check_dra_feature_defaults,
    "dra-extended-resource": check_dra_extended_resource,
    "dra-device-taint-rules": check_dra_device_taint_rules,
    "dra-taint-rule-class-selectors": check_dra_taint_rule_class_selectors,
    "dra-device-taints": check_dra_device_taints,
    "node-declared-features": check_node_declared_features,
    "in-place-resize": check_in_place_resize,
    "dra-all-subrequest": check_dra_all_subrequest,
    "image-locality-image-volumes": check_image_locality_image_volumes,
    "dra-pool-order": check_dra_pool_order,
    "dra-cel-error-wording": check_dra_cel_error_wording,
    "gang-scheduling": check_gang_scheduling,
}

BEHAVIOUR_ROWS = _table("Behaviour by release")


def _check_id(row: list[str]) -> str:
    m = re.fullmatch(r"`([a-z0-9-]+)`", row[-1])
    assert m is not None, f"the last column of {row[0]!r} must name its check as `check-id`"
    return m.group(1)


def test_behaviour_table_header_lists_every_release() -> None:
    header = next(line for line in _section("Behaviour by release").splitlines() if line.startswith("|"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[1:-1] == list(SUPPORTED_RELEASES)


def test_every_check_has_a_row_and_every_row_a_check() -> None:
    assert sorted(_check_id(r) for r in BEHAVIOUR_ROWS) == sorted(CHECKS)


@pytest.mark.parametrize("release", SUPPORTED_RELEASES)
@pytest.mark.parametrize("row", BEHAVIOUR_ROWS, ids=[_check_id(r) for r in BEHAVIOUR_ROWS])
def test_behaviour_row(row: list[str], release: str) -> None:
    CHECKS[_check_id(row)](release)


# --------------------------------------------------------------------------- the gate table


def _cell(name: str, release: str) -> str:
    spec = GATES[name]
    st = spec.stage_at(release)
    if st is None:
        if spec.removed_in is not None and at_least(release, spec.removed_in):
            return "removed (on)" if spec.value_at(release) else "removed"
        return "—"
    state = "on" if st.default else "off"
    return f"{state} ({st.pre_release}{', locked' if st.locked else ''})"


def render_gate_rows() -> list[list[str]]:
    rows = []
    for name in sorted(GATES):
        spec = GATES[name]
        here = spec.effect + (f": {spec.note}" if spec.note else "")
        rows.append([name, *(_cell(name, r) for r in SUPPORTED_RELEASES), here])
    return rows


def test_gate_table_matches_the_library() -> None:
    assert _table("Feature gates by release") == render_gate_rows()


def test_python_example_runs_as_documented() -> None:
    section = _section("From Python")
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and out is not None
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code.group(1), str(DOC), "exec"), {"__name__": "versions_example"})
    assert buf.getvalue() == out.group(1)
