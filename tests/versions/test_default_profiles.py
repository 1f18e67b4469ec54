"""The default profile of every supported release, pinned point by point (ordered plugins, score weights) as
upstream's kube-scheduler of that release builds it: ``getDefaultPlugins`` plus ``applyFeatureGates`` of
pkg/scheduler/apis/config/v1/default_plugins.go, expanded to the extension points each plugin implements there.

Sources read: v1.34.7 and v1.35.4 (vendored releases); for 1.36 and 1.37 no release tag is stored, so the
development snapshots of those cycles (the 1.36 one gates TopologyAwareWorkloadScheduling, the 1.37 one
InPlacePodVerticalScalingSchedulerPreemption) were read; both insert DynamicResources with weight 2 and
append NodeDeclaredFeatures (PreFilter, Filter) while its gate is on. The gates those files consult that
are off by default in a release (GangScheduling/GenericWorkload, TopologyAwareWorkloadScheduling,
InPlacePodVerticalScalingSchedulerPreemption) add nothing; with gang scheduling on, the profiles at the end
of this file are pinned (GangScheduling's points from each release's plugin: the 1.36 one read in the
kubernetes/kubernetes version importing scheduling/v1alpha2, the 1.37 one in the version importing v1alpha3
with PlacementFeasible; the 1.37 gate merge from kubernetes#139520).

Per release: DynamicResources has no Score in 1.34 (and no weight); from 1.35 it has Score, weight 2, and
never PreScore. DefaultPreemption has PreEnqueue in every release. The PodGroup points of 1.36+
(placementScore, where upstream also expands NodeResourcesFit) are not modelled (docs/differences.md).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from scheduling_framework.cli import main
from scheduling_framework.config import load_config
from scheduling_framework.errors import ConfigError
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.versions import SUPPORTED_RELEASES

_PRE_FILTER = ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
               "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]
_FILTER = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
           "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
           "InterPodAffinity", "DynamicResources"]
_PRE_SCORE = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
              "InterPodAffinity", "NodeResourcesBalancedAllocation"]
_SCORE_134 = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
              ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1),
              ("ImageLocality", 1)]
_SCORE_135 = [*_SCORE_134[:6], ("DynamicResources", 2), *_SCORE_134[6:]]


def _profile(score: list[tuple[str, int]], declared_features: bool) -> dict[str, list[Any]]:
    ndf = ["NodeDeclaredFeatures"] if declared_features else []
    return {
        "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
        "queueSort": ["PrioritySort"],
        "preFilter": [*_PRE_FILTER, *ndf],
        "filter": [*_FILTER, *ndf],
        "postFilter": ["DynamicResources", "DefaultPreemption"],
        "preScore": list(_PRE_SCORE),
        "score": list(score),
        "reserve": ["VolumeBinding", "DynamicResources"],
        "permit": [],
        "preBind": ["VolumeBinding", "DynamicResources"],
        "bind": ["DefaultBinder"],
        "postBind": [],
    }


#: release -> point -> upstream's ordered plugins ((name, weight) at score).
DEFAULT_PROFILES: dict[str, dict[str, list[Any]]] = {
    "1.34": _profile(_SCORE_134, declared_features=False),
    "1.35": _profile(_SCORE_135, declared_features=False),  # NodeDeclaredFeatures is alpha (off)
    "1.36": _profile(_SCORE_135, declared_features=True),
    "1.37": _profile(_SCORE_135, declared_features=True),
}

RELEASES = [pytest.param(r, id=r) for r in SUPPORTED_RELEASES]


def test_every_supported_release_is_pinned() -> None:
    assert sorted(DEFAULT_PROFILES) == sorted(SUPPORTED_RELEASES)


def _from_view(plugins: dict[str, list[dict[str, Any]]]) -> dict[str, list[Any]]:
    return {point: [(p["name"], p["weight"]) if point == "score" else p["name"] for p in entries]
            for point, entries in plugins.items()}


@pytest.mark.parametrize("release", RELEASES)
def test_config_view_json_is_upstreams_default_profile(release: str) -> None:
    out = io.StringIO()
    assert main(["config", "view", "--output", "json", "--kubernetes-version", release], stdout=out) == 0
    view = json.loads(out.getvalue())
    assert view["kubernetesVersion"] == release
    assert _from_view(view["profiles"][0]["plugins"]) == DEFAULT_PROFILES[release]


@pytest.mark.parametrize("release", RELEASES)
def test_scheduler_framework_runs_upstreams_default_profile(release: str) -> None:
    fwk = Scheduler(kubernetes_version=release).profiles["default-scheduler"]
    got = {point: [pl.name for pl in fwk.plugins_at(point)] for point in DEFAULT_PROFILES[release]}
    got["score"] = [(name, fwk.score_weights[name]) for name in got["score"]]
    assert got == DEFAULT_PROFILES[release]


def _config(point: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {point: {"enabled": [{"name": name}]}}}]}


@pytest.mark.parametrize("release", SUPPORTED_RELEASES)
def test_dynamic_resources_at_pre_score_is_refused(release: str) -> None:
    cfg = load_config(_config("preScore", "DynamicResources"), kubernetes_version=release)
    with pytest.raises(ConfigError, match='plugin "DynamicResources" does not extend PreScorePlugin plugin'):
        Scheduler(cfg)


@pytest.mark.parametrize(("release", "accepted"), [("1.34", False), ("1.35", True), ("1.36", True), ("1.37", True)],
                         ids=SUPPORTED_RELEASES)
def test_dynamic_resources_at_score_needs_1_35(release: str, accepted: bool) -> None:
    cfg = load_config(_config("score", "DynamicResources"), kubernetes_version=release)
    if accepted:
        assert "DynamicResources" in Scheduler(cfg).profiles["default-scheduler"].score_weights
    else:
        with pytest.raises(ConfigError, match='plugin "DynamicResources" does not extend ScorePlugin plugin'):
            Scheduler(cfg)


@pytest.mark.parametrize("release", SUPPORTED_RELEASES)
def test_default_preemption_at_pre_enqueue_is_accepted(release: str) -> None:
    cfg = load_config(_config("preEnqueue", "DefaultPreemption"), kubernetes_version=release)
    fwk = Scheduler(cfg).profiles["default-scheduler"]
    assert [pl.name for pl in fwk.plugins_at("preEnqueue")].count("DefaultPreemption") == 1


@pytest.mark.parametrize(("name", "point"), [("NodeDeclaredFeatures", "filter"), ("GangScheduling", "permit")])
@pytest.mark.parametrize("release", SUPPORTED_RELEASES)
def test_plugins_newer_than_the_release_do_not_exist(release: str, name: str, point: str) -> None:
    # upstream's 1.34 registry has neither plugin: naming one is refused as an unregistered plugin
    cfg = load_config(_config(point, name), kubernetes_version=release)
    if release == "1.34":
        with pytest.raises(ConfigError, match=f'"{name}" does not exist'):
            Scheduler(cfg)
    else:
        fwk = Scheduler(cfg).profiles["default-scheduler"]
        assert name in [pl.name for pl in fwk.plugins_at(point)]


def _gang_profile(release: str) -> dict[str, list[Any]]:
    """The default profile with gang scheduling on: GangScheduling appended last (applyFeatureGates), at
    PreEnqueue and Permit, and at Reserve in 1.35 only (the 1.36 plugin dropped Reserve: the cache counts
    assumed pods). The pod-group-cycle point PlacementFeasible (1.37) is not a configuration point."""
    prof = {point: list(plugins) for point, plugins in DEFAULT_PROFILES[release].items()}
    prof["preEnqueue"].append("GangScheduling")
    prof["permit"].append("GangScheduling")
    if release == "1.35":
        prof["reserve"].append("GangScheduling")
    return prof


#: the gates that turn gang scheduling on: both up to 1.36; 1.37 removed GangScheduling (kubernetes#139520)
GANG_GATES = {"1.35": "GenericWorkload=true,GangScheduling=true", "1.36": "GenericWorkload=true,GangScheduling=true",
              "1.37": "GenericWorkload=true"}


@pytest.mark.parametrize("release", list(GANG_GATES))
def test_config_view_with_gang_scheduling_is_upstreams_profile(release: str) -> None:
    out = io.StringIO()
    argv = ["config", "view", "--output", "json", "--kubernetes-version", release, "--feature-gates",
            GANG_GATES[release]]
    assert main(argv, stdout=out) == 0
    assert _from_view(json.loads(out.getvalue())["profiles"][0]["plugins"]) == _gang_profile(release)


@pytest.mark.parametrize("release", list(GANG_GATES))
def test_scheduler_framework_runs_the_gang_profile(release: str) -> None:
    fwk = Scheduler(kubernetes_version=release, feature_gates=GANG_GATES[release]).profiles["default-scheduler"]
    want = _gang_profile(release)
    got = {point: [pl.name for pl in fwk.plugins_at(point)] for point in want}
    got["score"] = [(name, fwk.score_weights[name]) for name in got["score"]]
    assert got == want


@pytest.mark.parametrize(("release", "accepted"), [("1.35", True), ("1.36", False), ("1.37", False)])
def test_gang_scheduling_at_reserve_is_1_35_only(release: str, accepted: bool) -> None:
    cfg = load_config(_config("reserve", "GangScheduling"), kubernetes_version=release,
                      feature_gates=GANG_GATES[release])
    if accepted:
        fwk = Scheduler(cfg).profiles["default-scheduler"]
        assert "GangScheduling" in [pl.name for pl in fwk.plugins_at("reserve")]
    else:
        with pytest.raises(ConfigError, match='plugin "GangScheduling" does not extend ReservePlugin plugin'):
            Scheduler(cfg)


def test_gang_scheduling_gate_is_gone_in_1_37() -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["config", "view", "--kubernetes-version", "1.37", "--feature-gates",
            "GenericWorkload=true,GangScheduling=true"]
    assert main(argv, stdout=out, stderr=err) != 0
    assert "unrecognized feature gate: GangScheduling (Kubernetes 1.37); it was removed in 1.37" in err.getvalue()
