"""NodeDeclaredFeatures: upstream's nodedeclaredfeatures_test.go tables (PreFilter, Filter, queueing hints,
events) and the InferForScheduling tables of component-helpers' features, ported with their case names;
plus the per-release registry, messages and the default-profile insertion."""

from __future__ import annotations

from typing import Any

import pytest

from plugins_intree.nodedeclaredfeatures import Feature, NodeDeclaredFeatures, infer_for_pod_scheduling, registry_for
from plugins_intree.nodedeclaredfeatures.plugin import (
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    PRE_FILTER_STATE_KEY,
    QUEUE,
    QUEUE_SKIP,
)
from scheduling_framework.api import Pod
from scheduling_framework.api.declared_features import PodFeatureUse, pod_feature_use
from scheduling_framework.config.defaults import default_multi_point
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ValidationError
from scheduling_framework.features import FeatureGates
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code
from scheduling_framework.testing import make_node, make_pod

F1, F2 = "TestFeature1", "TestFeature2"


def _mock(name: str, infer: bool, max_version: str | None = None) -> Feature:
    return Feature(name, lambda _use: infer, max_version)


def _pod(**spec: Any) -> Pod:
    spec.setdefault("containers", [{"name": "c"}])
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "uid": "123"},
                          "spec": spec})


# --- TestPreFilter -------------------------------------------------------------------------------------------

PRE_FILTER_CASES = [
    pytest.param(False, [_mock(F1, True), _mock(F2, False)], "1.35.0", Code.SKIP, None, id="plugin disabled"),
    pytest.param(True, [_mock(F1, True), _mock(F2, False)], "1.35.0", None, {F1},
                 id="Pod with feature requirements"),
    pytest.param(True, [_mock(F1, True, "1.38.0"), _mock(F2, True, "1.38.0")], "1.35.0", None, {F1, F2},
                 id="Pod with multiple feature requirements"),
    pytest.param(True, [_mock(F1, False), _mock(F2, False)], "1.35.0", Code.SKIP, None,
                 id="Pod with no requirements"),
    pytest.param(True, [_mock(F1, True, "1.33.0"), _mock(F2, False)], "1.34.0", Code.SKIP, None,
                 id="Feature not required, version > MaxVersion"),
]


@pytest.mark.parametrize(("enabled", "features", "version", "code", "state"), PRE_FILTER_CASES)
def test_pre_filter(enabled: bool, features: list[Feature], version: str, code: Code | None,
                    state: set[str] | None) -> None:
    pl = NodeDeclaredFeatures.with_registry(features, version, enabled=enabled)
    cs = CycleState()
    result, status = pl.pre_filter(cs, make_pod().name("test-pod").obj(), [])
    assert result is None
    assert (None if status is None else status.code) == code
    assert cs.get(PRE_FILTER_STATE_KEY) == (None if state is None else frozenset(state))


# --- TestFilter ----------------------------------------------------------------------------------------------

A, B, C = "FeatureA", "FeatureB", "FeatureC"
UNRESOLVABLE = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
FILTER_CASES = [
    pytest.param(False, (A, B), None, None, id="plugin disabled"),
    pytest.param(True, (A, B), {A}, None, id="Node matches requirements"),
    pytest.param(True, (B,), {A}, UNRESOLVABLE, id="Node does not match requirements"),
    pytest.param(True, (A, B, C), {A, C}, None, id="Node with multiple features, pod requires subset"),
    pytest.param(True, (), {A}, UNRESOLVABLE, id="Node has no declared features"),
    pytest.param(True, (A,), {A, B}, UNRESOLVABLE, id="Node with some but not all required features"),
    pytest.param(True, (), None, (Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found'),
                 id="Error getting pre-filter state"),
]


@pytest.mark.parametrize(("enabled", "declared", "reqs", "want"), FILTER_CASES)
def test_filter(enabled: bool, declared: tuple[str, ...], reqs: set[str] | None,
                want: tuple[Code, str] | None) -> None:
    pl = NodeDeclaredFeatures.with_registry([Feature(A), Feature(B), Feature(C)], "1.35.0", enabled=enabled)
    cs = CycleState()
    if reqs is not None:
        cs.write(PRE_FILTER_STATE_KEY, frozenset(reqs))
    ni = NodeInfo(make_node().name("node-1").declared_features(*declared).obj())
    status = pl.filter(cs, make_pod().name("test-pod").obj(), ni)
    assert (None if status is None else (status.code, status.message())) == want


def test_filter_1_35_lists_the_missing_features() -> None:
    pl = NodeDeclaredFeatures.with_registry([Feature(A), Feature(B)], "1.35.0", list_missing=True)
    cs = CycleState()
    cs.write(PRE_FILTER_STATE_KEY, frozenset({B, A}))
    status = pl.filter(cs, make_pod().name("p").obj(), NodeInfo(make_node().name("n").obj()))
    assert status is not None
    assert status.message() == "node declared features check failed - unsatisfied requirements: FeatureA, FeatureB"


# --- queueing hints and events ---------------------------------------------------------------------------------

NODE_UPDATE_CASES = [
    pytest.param(None, ("FeatureA",), QUEUE, id="Node Add with feature"),
    pytest.param((), ("FeatureA",), QUEUE, id="Node Update (Features Added)"),
    pytest.param(("FeatureA",), ("FeatureA",), QUEUE_SKIP, id="Node Update (Features Unchanged)"),
]


@pytest.mark.parametrize(("old", "new", "hint"), NODE_UPDATE_CASES)
def test_enqueue_extensions_node_update(old: tuple[str, ...] | None, new: tuple[str, ...], hint: str) -> None:
    pl = NodeDeclaredFeatures.with_registry([], "1.35.0")
    old_node = None if old is None else make_node().name("node-1").declared_features(*old).obj()
    new_node = make_node().name("node-1").declared_features(*new).obj()
    assert pl.is_schedulable_after_node_change(make_pod().name("test-pod").obj(), old_node, new_node) == hint


_RESTART_ALL = {"containers": [{"name": "c", "restartPolicyRules": [{"action": "RestartAllContainers"}]}]}
_RESTARTS = Feature("TestFeature", lambda use: use.restart_all_containers)
POD_UPDATE_CASES = [
    pytest.param({}, _RESTART_ALL, "1.35.0", QUEUE, id="Pod Update adds requirement"),
    pytest.param(_RESTART_ALL, {}, "1.35.0", QUEUE, id="Pod Update removes requirement"),
    pytest.param({}, {}, "1.35.0", QUEUE_SKIP, id="Pod Update with no change in requirements"),
    pytest.param({}, _RESTART_ALL, None, QUEUE, id="Infer returns error"),
]


@pytest.mark.parametrize(("old", "new", "version", "hint"), POD_UPDATE_CASES)
def test_is_schedulable_after_target_pod_update(old: dict[str, Any], new: dict[str, Any], version: str | None,
                                                hint: str) -> None:
    pl = NodeDeclaredFeatures.with_registry([_RESTARTS], version)
    assert pl.is_schedulable_after_pod_update(_pod(), _pod(**old), _pod(**new)) == hint


@pytest.mark.parametrize(("enabled", "length"), [pytest.param(False, 0, id="plugin disabled"),
                                                 pytest.param(True, 2, id="plugin enabled")])
def test_events_to_register(enabled: bool, length: int) -> None:
    assert len(NodeDeclaredFeatures.with_registry([], "1.35.0", enabled=enabled).events_to_register()) == length


# --- component-helpers InferForScheduling tables ------------------------------------------------------------

_RULES = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]
RESTART_ALL_CASES = [
    pytest.param({"initContainers": [{"name": "i", "restartPolicyRules": _RULES}], "containers": [{"name": "c"}]},
                 True, id="init container with rules"),
    pytest.param({"initContainers": [{"name": "i"}], "containers": [{"name": "c", "restartPolicyRules": _RULES}]},
                 True, id="regular container with rules"),
    pytest.param({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}, False, id="no rules"),
]


@pytest.mark.parametrize(("spec", "want"), RESTART_ALL_CASES)
def test_restart_all_containers_infer_for_scheduling(spec: dict[str, Any], want: bool) -> None:
    reqs = infer_for_pod_scheduling(registry_for("1.35"), pod_feature_use(_pod(**spec)), "1.35.0")
    assert ("RestartAllContainersOnContainerExits" in reqs) is want


USERNS_CASES = [
    pytest.param(True, False, True, id="HostNetwork true, HostUsers false"),
    pytest.param(True, None, False, id="HostNetwork true, HostUsers nil"),
    pytest.param(True, True, False, id="HostNetwork true, HostUsers true"),
    pytest.param(False, False, False, id="HostNetwork false, HostUsers false"),
]


@pytest.mark.parametrize(("host_network", "host_users", "want"), USERNS_CASES)
def test_user_namespaces_host_network_infer_for_scheduling(host_network: bool, host_users: bool | None,
                                                           want: bool) -> None:
    spec: dict[str, Any] = {"hostNetwork": host_network}
    if host_users is not None:
        spec["hostUsers"] = host_users
    reqs = infer_for_pod_scheduling(registry_for("1.36"), pod_feature_use(_pod(**spec)), "1.36.0")
    assert ("UserNamespacesHostNetworkSupport" in reqs) is want


def _mount(opts: list[str]) -> dict[str, Any]:
    return {"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": opts}]}


@pytest.mark.parametrize(("spec", "want"), [
    pytest.param({"containers": [_mount(["noexec"])]}, True, id="container mount with options"),
    pytest.param({"containers": [{"name": "c"}], "initContainers": [_mount(["nosuid"])]}, True,
                 id="init container mount with options"),
    pytest.param({"containers": [{"name": "c"}], "ephemeralContainers": [_mount(["ro"])]}, True,
                 id="ephemeral container mount with options"),
    pytest.param({"containers": [_mount([])]}, False, id="empty options"),
])
def test_volume_bind_mount_options_infer_for_scheduling(spec: dict[str, Any], want: bool) -> None:
    reqs = infer_for_pod_scheduling(registry_for("1.37"), pod_feature_use(_pod(**spec)), "1.37.0")
    assert ("VolumeBindMountOptions" in reqs) is want


# --- per release ----------------------------------------------------------------------------------------------

_ALL_THREE = {"hostNetwork": True, "hostUsers": False,
              "containers": [{**_mount(["noexec"]), "restartPolicyRules": _RULES}]}


@pytest.mark.parametrize(("release", "want"), [
    pytest.param("1.34", set(), id="1.34: no registry"),
    pytest.param("1.35", {"RestartAllContainersOnContainerExits"}, id="1.35"),
    pytest.param("1.36", {"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}, id="1.36"),
    pytest.param("1.37", {"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport",
                          "VolumeBindMountOptions"}, id="1.37"),
])
def test_requirements_per_release(release: str, want: set[str]) -> None:
    use = pod_feature_use(_pod(**_ALL_THREE))
    assert infer_for_pod_scheduling(registry_for(release), use, f"{release}.0") == want


def test_plain_pod_uses_nothing() -> None:
    assert pod_feature_use(make_pod().name("p").req(cpu="1").obj()) == PodFeatureUse()


@pytest.mark.parametrize(("spec", "path"), [
    pytest.param({"containers": [{"name": "c", "restartPolicyRules": {"action": "x"}}]},
                 "spec.containers[0].restartPolicyRules", id="rules not a list"),
    pytest.param({"containers": [{"name": "c", "volumeMounts": [{"name": "v", "bindMountOptions": "ro"}]}]},
                 "spec.containers[0].volumeMounts[0].bindMountOptions", id="options not a list"),
    pytest.param({"containers": [{"name": "c"}], "hostUsers": "no"}, "spec.hostUsers", id="hostUsers not a bool"),
])
def test_bad_pod_fields_name_their_path(spec: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError, match=path.replace("[", r"\[").replace("]", r"\]")):
        pod_feature_use(_pod(**spec))


def test_bad_pod_field_is_a_pre_filter_error_not_a_crash() -> None:
    pl = NodeDeclaredFeatures.with_registry(registry_for("1.37"), "1.37.0")
    _, status = pl.pre_filter(CycleState(), _pod(hostUsers="no"), [])
    assert status is not None and status.code == Code.ERROR
    assert "spec.hostUsers" in status.message()


@pytest.mark.parametrize(("release", "gates", "listed"), [
    pytest.param("1.34", None, False, id="1.34: no gate"),
    pytest.param("1.35", None, False, id="1.35: alpha, off"),
    pytest.param("1.35", {"NodeDeclaredFeatures": True}, True, id="1.35: alpha turned on"),
    pytest.param("1.36", None, True, id="1.36: beta, on"),
    pytest.param("1.36", {"NodeDeclaredFeatures": False}, False, id="1.36: beta turned off"),
    pytest.param("1.37", None, True, id="1.37: GA"),
])
def test_default_profile_appends_the_plugin_when_the_gate_is_on(release: str, gates: dict[str, bool] | None,
                                                                 listed: bool) -> None:
    entries = default_multi_point(FeatureGates.for_release(release, gates))
    assert (entries[-1] == ("NodeDeclaredFeatures", 0)) is listed
    assert sum(1 for n, _ in entries if n == "NodeDeclaredFeatures") == int(listed)


def test_cli_config_view_1_36_lists_the_plugin_last_at_pre_filter_and_filter() -> None:
    import json
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "config", "view", "--output", "json",
                        "--kubernetes-version", "1.36"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    plugins = json.loads(p.stdout)["profiles"][0]["plugins"]
    assert plugins["preFilter"][-1] == {"name": "NodeDeclaredFeatures"}
    assert plugins["filter"][-1] == {"name": "NodeDeclaredFeatures"}
    for point in ("preScore", "score", "reserve", "preBind", "postFilter"):
        assert all(e["name"] != "NodeDeclaredFeatures" for e in plugins.get(point, []))


@pytest.mark.parametrize(("features", "error"), [
    pytest.param(["B", "A"], 'status.declaredFeatures[1]: Invalid value: "A": list must be sorted alphabetically',
                 id="unsorted"),
    pytest.param(["A", "A"], 'status.declaredFeatures[1]: Duplicate value: "A"', id="duplicate"),
    pytest.param(["lower"], 'status.declaredFeatures[0]: Invalid value: "lower": invalid feature name "lower": '
                 "must start with an UpperCamelCase segment", id="bad name"),
])
def test_node_declared_features_validation(features: list[str], error: str) -> None:
    from scheduling_framework.api.validation import validate_node

    errs = validate_node(make_node().name("n").declared_features(*features).obj())
    assert any(e.startswith(error) for e in errs), errs


def test_node_declared_features_not_a_list_names_the_field() -> None:
    from scheduling_framework.api import Node

    with pytest.raises(ValidationError, match=r"status\.declaredFeatures"):
        Node.from_dict({"kind": "Node", "metadata": {"name": "n"}, "status": {"declaredFeatures": "A"}})
