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
from scheduling_framework.config import load_config
from scheduling_framework.config.defaults import default_multi_point
from scheduling_framework.config.intree import INTREE_POINTS
from scheduling_framework.features import GATES, FeatureGateError, FeatureGates, dra_allocator_flags
from scheduling_framework.scheduler import Scheduler
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
    names = [n for n, _ in default_multi_point(FeatureGates.for_release(release))]
    shipped = "DynamicResources" in INTREE_POINTS
    assert ("DynamicResources" in names) is shipped
    if shipped:
        assert names.index("DynamicResources") == names.index("DefaultPreemption") - 1
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


def check_node_declared_features(release: str) -> None:
    gates = FeatureGates.for_release(release)
    assert gates.enabled("NodeDeclaredFeatures") is at_least(release, "1.36")
    assert ("NodeDeclaredFeatures" in gates.known()) is at_least(release, "1.35")
    assert "NodeDeclaredFeatures" not in [n for n, _ in default_multi_point(gates)]  # not implemented here


def check_gang_scheduling(release: str) -> None:
    both = {"GenericWorkload": True, "GangScheduling": True}
    if release == "1.34":
        with pytest.raises(FeatureGateError):
            FeatureGates.for_release(release, both)
        return
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
    "node-declared-features": check_node_declared_features,
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
