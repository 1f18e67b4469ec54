"""Choosing the Kubernetes release a run follows: versions, feature gates, the API parameters and the CLI flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from plugins_intree.noderesources.balanced_allocation import BalancedAllocation
from scheduling_framework import __version__
from scheduling_framework.config import load_config, resolve_config
from scheduling_framework.errors import ConfigError, SchedulingFrameworkError
from scheduling_framework.features import GATES, FeatureGateError, FeatureGates, parse_gate_string
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_node, make_pod
from scheduling_framework.versions import NEWEST_RELEASE, SUPPORTED_RELEASES, parse_release
from tests.fixture_runner import ROOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scheduling_framework", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


# --------------------------------------------------------------------------- versions


def test_at_least_the_last_four_releases_are_supported() -> None:
    assert SUPPORTED_RELEASES[-4:] == ("1.34", "1.35", "1.36", "1.37")
    assert NEWEST_RELEASE == "1.37"


@pytest.mark.parametrize(("given", "release"), [
    ("1.35", "1.35"), ("v1.35", "1.35"), ("1.35.4", "1.35"), ("v1.36.0", "1.36"), (" 1.34 ", "1.34"),
], ids=["minor", "v-prefix", "patch", "v-patch", "spaces"])
def test_parse_release(given: str, release: str) -> None:
    assert parse_release(given) == release


@pytest.mark.parametrize(("given", "needle"), [
    ("1.30", "Kubernetes 1.30 is not supported; supported releases: 1.34, 1.35, 1.36, 1.37"),
    ("2.0", "Kubernetes 2.0 is not supported"),
    ("latest", "invalid version 'latest'"),
    ("1", "invalid version '1'"),
    (135, "expected a version such as"),
    (True, "expected a version such as"),
], ids=["too-old", "major-2", "word", "no-minor", "int", "bool"])
def test_bad_release_is_a_clear_config_error(given: Any, needle: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(None, kubernetes_version=given)
    assert needle in str(e.value)
    assert isinstance(e.value, SchedulingFrameworkError)


# --------------------------------------------------------------------------- feature gates


@pytest.mark.parametrize(("release", "gate", "value"), [
    ("1.34", "StorageCapacityScoring", False), ("1.36", "StorageCapacityScoring", False),
    ("1.37", "StorageCapacityScoring", True),
    ("1.35", "VolumeLimitScaling", False), ("1.37", "VolumeLimitScaling", True),
    ("1.34", "DynamicResourceAllocation", True), ("1.37", "DynamicResourceAllocation", True),
    ("1.35", "DRAExtendedResource", False), ("1.36", "DRAExtendedResource", True),
    ("1.34", "TaintTolerationComparisonOperators", False), ("1.37", "TaintTolerationComparisonOperators", False),
    ("1.35", "NodeDeclaredFeatures", False), ("1.36", "NodeDeclaredFeatures", True),
    # removed after graduating: the behaviour stays on
    ("1.35", "CSIMigrationPortworx", True), ("1.37", "CSIMigrationPortworx", True),
    ("1.37", "NoSuchGate", False),
], ids=lambda v: str(v))
def test_gate_defaults_by_release(release: str, gate: str, value: bool) -> None:
    assert FeatureGates.for_release(release).enabled(gate) is value


def test_gate_overrides_apply() -> None:
    g = FeatureGates.for_release("1.35", "StorageCapacityScoring=true,VolumeLimitScaling=True")
    assert g.enabled("StorageCapacityScoring") and g.enabled("VolumeLimitScaling")
    assert g.explicit() == {"StorageCapacityScoring": True, "VolumeLimitScaling": True}
    assert FeatureGates.for_release("1.35", {"StorageCapacityScoring": "true"}) == g.__class__.for_release(
        "1.35", {"StorageCapacityScoring": True})


def test_all_alpha_turns_on_the_release_alpha_gates() -> None:
    g = FeatureGates.for_release("1.35", "AllAlpha=true")
    assert g.enabled("TaintTolerationComparisonOperators") and g.enabled("StorageCapacityScoring")
    assert g.enabled("DynamicResourceAllocation")  # GA, untouched


@pytest.mark.parametrize(("release", "gates", "message"), [
    ("1.37", "Foo=true", "unrecognized feature gate: Foo (Kubernetes 1.37)"),
    ("1.34", "TaintTolerationComparisonOperators=true",
     "unrecognized feature gate: TaintTolerationComparisonOperators (Kubernetes 1.34); it exists from Kubernetes 1.35"),
    ("1.36", "CSIMigrationPortworx=true",
     "unrecognized feature gate: CSIMigrationPortworx (Kubernetes 1.36); it was removed in 1.36"),
    ("1.35", "DynamicResourceAllocation=false",
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true (Kubernetes 1.35)"),
    ("1.37", "DRAExtendedResource=false",
     "cannot set feature gate DRAExtendedResource to false, feature is locked to true (Kubernetes 1.37)"),
    ("1.37", "StorageCapacityScoring=maybe",
     'invalid value of StorageCapacityScoring=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
    ("1.37", "StorageCapacityScoring", "missing bool value for StorageCapacityScoring"),
    ("1.37", {"StorageCapacityScoring": 3}, "invalid value of StorageCapacityScoring=3: expected true or false"),
    ("1.37", 42, "expected a mapping of gate name to bool"),
], ids=["unknown", "not-yet", "removed", "locked-1.35", "locked-1.37", "bad-value", "no-value", "bad-type-value",
        "bad-type"])
def test_bad_gates_are_clear_errors(release: str, gates: Any, message: str) -> None:
    with pytest.raises(FeatureGateError) as e:
        FeatureGates.for_release(release, gates)
    assert message in str(e.value)


def test_every_gate_problem_is_reported_at_once() -> None:
    with pytest.raises(FeatureGateError) as e:
        parse_gate_string("A=1,B=nope,C")
    assert "B=nope" in str(e.value) and "missing bool value for C" in str(e.value)
    with pytest.raises(FeatureGateError) as e2:
        FeatureGates.for_release("1.34", "Foo=true,Bar=maybe")
    assert "Foo" in str(e2.value) and "Bar=maybe" in str(e2.value)


def test_a_locked_gate_may_be_set_to_its_value_and_1_34_allows_turning_dra_off() -> None:
    assert FeatureGates.for_release("1.35", "DynamicResourceAllocation=true").enabled("DynamicResourceAllocation")
    assert not FeatureGates.for_release("1.34", "DynamicResourceAllocation=false").enabled("DynamicResourceAllocation")


def test_gates_without_effect_here_are_warned_about() -> None:
    g = FeatureGates.for_release("1.37", "SchedulerAsyncPreemption=false,StorageCapacityScoring=false")
    assert g.warnings() == ["feature gate SchedulerAsyncPreemption=false is accepted but has no effect in this "
                            "library: preemption runs synchronously; the victims are the same"]
    assert FeatureGates.for_release("1.37", "SchedulerAsyncPreemption=true").warnings() == []  # its default


def test_gate_table_is_consistent() -> None:
    for name, spec in GATES.items():
        assert spec.name == name
        sinces = [s.since for s in spec.stages]
        assert sinces == sorted(sinces, key=lambda r: tuple(int(x) for x in r.split("."))), name
        assert any(spec.stage_at(r) is not None for r in SUPPORTED_RELEASES), name


# --------------------------------------------------------------------------- load_config, Scheduler, Simulator


def _volume_binding_args(cfg: Any) -> Any:
    return next(pc.args for pc in cfg.profiles[0].plugin_config if pc.name == "VolumeBinding")


def test_load_config_follows_the_release() -> None:
    newest = load_config(None)
    old = load_config(None, kubernetes_version="1.35")
    assert newest.kubernetes_version == NEWEST_RELEASE and old.kubernetes_version == "1.35"
    assert _volume_binding_args(newest).shape and not _volume_binding_args(old).shape
    on = load_config(None, kubernetes_version="1.35", feature_gates="StorageCapacityScoring=true")
    assert _volume_binding_args(on).shape == _volume_binding_args(newest).shape


def test_volume_binding_shape_needs_the_gate_in_older_releases() -> None:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {
               "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}]}
    load_config(doc)
    with pytest.raises(ConfigError) as e:
        load_config(doc, kubernetes_version="1.36")
    assert "profiles[0].pluginConfig[0].args.shape" in str(e.value)
    assert "turn on the feature gate StorageCapacityScoring" in str(e.value)
    load_config(doc, kubernetes_version="1.36", feature_gates={"StorageCapacityScoring": True})


def test_resolve_config_reloads_a_loaded_configuration_for_another_release() -> None:
    cfg = load_config(None)
    assert resolve_config(cfg) is cfg
    assert resolve_config(cfg, kubernetes_version=NEWEST_RELEASE) is cfg
    old = resolve_config(cfg, kubernetes_version="1.34", feature_gates="DynamicResourceAllocation=false")
    assert old.kubernetes_version == "1.34" and not old.feature_gates.enabled("DynamicResourceAllocation")


def _balanced_scores(**kwargs: Any) -> dict[str, int]:
    """NodeResourcesBalancedAllocation alone, on the v1.35 table's "differently sized nodes" case."""
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"plugins": {"multiPoint": {"enabled": [
               {"name": "PrioritySort"}, {"name": "NodeResourcesBalancedAllocation"}, {"name": "DefaultBinder"}],
               "disabled": [{"name": "*"}]}}}]}
    sched = Scheduler(doc, explain=True, seed=1, **kwargs)
    nodes = [make_node().name("node1").capacity(cpu="4000m", memory="10000").obj(),
             make_node().name("node2").capacity(cpu="6000m", memory="10000").obj()]
    pod = make_pod().name("p").req(cpu="3000m", memory="5000").obj()
    sched.load(nodes, [pod])
    sched.run()
    scores = sched.results[pod.key].scores or {}
    return {n: s["NodeResourcesBalancedAllocation"]["raw"] for n, s in scores.items()}


@pytest.mark.parametrize(("release", "want"), [
    ("1.34", {"node1": 87, "node2": 100}), ("1.35", {"node1": 87, "node2": 100}),
    ("1.36", {"node1": 68, "node2": 75}), ("1.37", {"node1": 68, "node2": 75}),
], ids=lambda v: str(v))
def test_scheduler_balanced_allocation_formula_by_release(release: str, want: dict[str, int]) -> None:
    assert _balanced_scores(kubernetes_version=release) == want


def test_scheduler_default_is_the_newest_release() -> None:
    assert _balanced_scores() == {"node1": 68, "node2": 75}
    assert Scheduler().config.kubernetes_version == NEWEST_RELEASE


def test_simulator_takes_the_release_and_gates() -> None:
    sim = Simulator(None, kubernetes_version="1.35", feature_gates={"StorageCapacityScoring": True})
    assert sim.framework.kubernetes_version == "1.35"
    assert sim.framework.feature_gates.enabled("StorageCapacityScoring")
    plugin = sim.framework.plugins["NodeResourcesBalancedAllocation"]
    assert isinstance(plugin, BalancedAllocation) and not plugin.scores_change
    with pytest.raises(FeatureGateError):
        Simulator(None, kubernetes_version="1.35", feature_gates="Nope=true")


def test_handle_exposes_release_and_gates_to_plugins() -> None:
    sched = Scheduler(None, kubernetes_version="v1.36.2")
    fwk = next(iter(sched.profiles.values()))
    assert fwk.kubernetes_version == "1.36"
    assert fwk.feature_gates.enabled("NodeDeclaredFeatures")
    vb = fwk.plugins["VolumeBinding"]
    assert vb.enable_storage_capacity_scoring is False  # beta on only from 1.37


# --------------------------------------------------------------------------- CLI


NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def test_cli_version_lists_package_and_releases() -> None:
    p = cli("--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout == (f"scheduling-framework {__version__}\n"
                        "Kubernetes releases: 1.34, 1.35, 1.36, 1.37 (default 1.37)\n")


def test_cli_schedule_reports_the_release(tmp_path: Path) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all([NODE, POD]))
    p = cli("schedule", "--cluster", str(cluster), "--output", "json", "--kubernetes-version", "1.35")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["kubernetesVersion"] == "1.35"
    p = cli("schedule", "--cluster", str(cluster), "--output", "json")
    assert json.loads(p.stdout)["kubernetesVersion"] == NEWEST_RELEASE


def test_cli_config_view_reports_release_and_gates() -> None:
    p = cli("config", "view", "--output", "json", "--kubernetes-version", "1.36",
            "--feature-gates", "StorageCapacityScoring=true")
    assert p.returncode == 0, p.stderr
    view = json.loads(p.stdout)
    assert view["kubernetesVersion"] == "1.36"
    assert view["featureGates"]["StorageCapacityScoring"] is True
    assert view["featureGates"]["VolumeLimitScaling"] is False
    assert "CSIMigrationPortworx" not in view["featureGates"]  # removed in 1.36


@pytest.mark.parametrize(("args", "needle"), [
    (("--kubernetes-version", "1.29"), "Kubernetes 1.29 is not supported"),
    (("--feature-gates", "Nope=true"), "unrecognized feature gate: Nope"),
    (("--feature-gates", "StorageCapacityScoring=yes"), "invalid value of StorageCapacityScoring=yes"),
    (("--kubernetes-version", "1.35", "--feature-gates", "DynamicResourceAllocation=false"),
     "feature is locked to true"),
], ids=["old-release", "unknown-gate", "bad-value", "locked"])
def test_cli_bad_release_or_gates_exit_2(args: tuple[str, ...], needle: str) -> None:
    p = cli("config", "view", *args)
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and needle in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_warns_about_gates_without_effect(tmp_path: Path) -> None:
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all([NODE, POD]))
    p = cli("schedule", "--cluster", str(cluster), "--output", "json", "--feature-gates", "OpportunisticBatching=false")
    assert p.returncode == 0, p.stderr
    assert any("OpportunisticBatching=false is accepted but has no effect" in w
               for w in json.loads(p.stdout)["warnings"])
    p = cli("schedule", "--cluster", str(cluster), "--feature-gates", "OpportunisticBatching=false")
    assert p.returncode == 0, p.stderr
    assert "warning: feature gate OpportunisticBatching=false is accepted but has no effect" in p.stderr
    p = cli("config", "view", "--feature-gates", "OpportunisticBatching=false")
    assert p.returncode == 0 and "warning: feature gate OpportunisticBatching=false" in p.stderr


def test_scheduler_and_simulator_warn_about_gates_without_effect() -> None:
    gates = "SchedulerPopFromBackoffQ=false"
    for warnings in (Scheduler(None, kubernetes_version="1.36", feature_gates=gates).warnings,
                     Simulator(None, kubernetes_version="1.36", feature_gates=gates).warnings):
        assert list(warnings) == ["feature gate SchedulerPopFromBackoffQ=false is accepted but has no effect in "
                                  "this library"]
