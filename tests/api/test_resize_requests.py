"""In-place resize: upstream component-helpers PodRequests tables with status resources (ported as data in
tests/fixtures/upstream/resource-helpers-resize.yaml, upstream case names kept), run with the formula of the
release each table comes from; the status parsing and its errors; and the per-release rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.api import Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resize import RequestRules
from scheduling_framework.api.resources import pod_requests
from scheduling_framework.errors import ValidationError
from scheduling_framework.features import FeatureGates
from tests import yamlio

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "upstream" / "resource-helpers-resize.yaml"
CASES = yamlio.load(FIXTURE.read_text())["cases"]


def _same(got: dict[str, Quantity], want: dict[str, str]) -> bool:
    return got.keys() == want.keys() and all(got[k].cmp(Quantity.parse(v)) == 0 for k, v in want.items())


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c['formula']}/{c['test']}/{c['name']}") for c in CASES])
def test_upstream_pod_requests(case: dict[str, Any]) -> None:
    opts = case["options"]
    rules = RequestRules(use_status=opts.get("useStatusResources", False),
                         pod_level=opts.get("inPlacePodLevelResourcesVerticalScaling", False),
                         max_of_sums=case["formula"] == "1.37")
    non_missing = {k: Quantity.parse(v) for k, v in opts.get("nonMissingContainerRequests", {}).items()} or None
    got = pod_requests(Pod.from_dict(case["pod"]), rules=rules, non_missing=non_missing,
                       exclude_overhead=opts.get("excludeOverhead", False))
    assert _same(got, case["expected"]), (got, case["expected"])


def _pod(containers: list[dict[str, Any]], statuses: list[dict[str, Any]] | None = None,
         conditions: list[dict[str, Any]] | None = None, **status: Any) -> Pod:
    st: dict[str, Any] = dict(status)
    if statuses is not None:
        st["containerStatuses"] = statuses
    if conditions is not None:
        st["conditions"] = conditions
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": containers}, "status": st})


def _c(name: str, cpu: str) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": {"cpu": cpu}}}


def _s(name: str, cpu: str | None = None, allocated: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if cpu is not None:
        out["resources"] = {"requests": {"cpu": cpu}}
    if allocated is not None:
        out["allocatedResources"] = {"cpu": allocated}
    return out


# two containers resizing in opposite directions: each container's peak summed (up to 1.36) counts 4 cpus,
# the peak of the totals (1.37) 3
OPPOSITE = _pod([_c("c1", "1"), _c("c2", "2")], [_s("c1", "2"), _s("c2", "1")])


@pytest.mark.parametrize(("release", "cpu"), [("1.34", "4"), ("1.35", "4"), ("1.36", "4"), ("1.37", "3")])
def test_opposite_resizes_per_release(release: str, cpu: str) -> None:
    rules = RequestRules.for_gates(FeatureGates.for_release(release))
    assert pod_requests(OPPOSITE, rules=rules)["cpu"].cmp(Quantity.parse(cpu)) == 0


def test_in_place_pod_vertical_scaling_off_reads_the_spec() -> None:
    rules = RequestRules.for_gates(FeatureGates.for_release("1.34", "InPlacePodVerticalScaling=false"))
    assert pod_requests(OPPOSITE, rules=rules)["cpu"].cmp(Quantity.parse("3")) == 0


def test_without_rules_the_spec_counts() -> None:
    # NodeResourcesFit's PreFilter: the incoming pod has not run, its spec is what it needs
    assert pod_requests(OPPOSITE)["cpu"].cmp(Quantity.parse("3")) == 0


@pytest.mark.parametrize(("release", "pod_level"), [("1.34", False), ("1.35", False), ("1.36", True), ("1.37", True)])
def test_pod_level_resize_gate_per_release(release: str, pod_level: bool) -> None:
    rules = RequestRules.for_gates(FeatureGates.for_release(release))
    assert rules.pod_level is pod_level
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"resources": {"requests": {"cpu": "2"}}, "containers": [_c("c1", "1")]},
                         "status": {"resources": {"requests": {"cpu": "3"}}, "allocatedResources": {"cpu": "3"}}})
    assert pod_requests(pod, rules=rules)["cpu"].cmp(Quantity.parse("3" if pod_level else "2")) == 0


def test_status_equal_to_spec_keeps_no_resize_status() -> None:
    pod = _pod([_c("c1", "1")], [_s("c1", "1000m", "1")])
    assert pod.status.resize is None


def test_infeasible_condition_keeps_the_resize_status() -> None:
    pod = _pod([_c("c1", "4")], [_s("c1", "4")], [{"type": "PodResizePending", "status": "True",
                                                   "reason": "Infeasible"}])
    assert pod.status.resize is not None and pod.status.resize.infeasible


@pytest.mark.parametrize(("status", "path"), [
    pytest.param({"containerStatuses": [{"name": "c1", "allocatedResources": {"cpu": "lots"}}]},
                 "status.containerStatuses[0].allocatedResources.cpu", id="bad allocated quantity"),
    pytest.param({"containerStatuses": [{"name": "c1", "resources": {"requests": {"memory": "1Zi"}}}]},
                 "status.containerStatuses[0].resources.requests.memory", id="bad actual quantity"),
    pytest.param({"initContainerStatuses": [{"name": "i", "resources": []}]},
                 "status.initContainerStatuses[0].resources", id="resources not an object"),
    pytest.param({"resources": {"requests": {"cpu": "x"}}}, "status.resources.requests.cpu",
                 id="bad pod-level actual quantity"),
    pytest.param({"allocatedResources": {"cpu": "x"}}, "status.allocatedResources.cpu",
                 id="bad pod-level allocated quantity"),
])
def test_bad_status_names_the_field(status: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as exc:
        Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                       "spec": {"containers": [_c("c1", "1")]}, "status": status})
    assert path in str(exc.value)


# --- upstream pkg/scheduler/framework types_test.go TestCalculatePodResourcesWithResize --------------------------
# (the gates InPlacePodVerticalScaling and InPlacePodLevelResourcesVerticalScaling on: 1.36 and 1.37 defaults)

_LOW = {"cpu": "500m", "memory": "500M"}
_HIGH = {"cpu": "700m", "memory": "800M"}
_MIXED = {"cpu": "700m", "memory": "500M"}
_IN_PROGRESS = [{"type": "PodResizeInProgress", "status": "True"}]
_DEFERRED = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
_INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]

CALCULATE_CASES = [
    # name, pod-level requests, pod-level status, requests, status, init, init status, sidecar, sidecar status,
    # conditions, expected (cpu milli, memory bytes)
    ("Pod with no pending resize", None, None, _LOW, _LOW, None, None, None, None, None, (500, 500_000_000)),
    ("Pod with pod-level resources no pending resize", _MIXED, _LOW, _LOW, _MIXED, None, None, None, None, None,
     (700, 500_000_000)),
    ("Pod with resize in progress", None, None, _LOW, _LOW, None, None, None, None, _IN_PROGRESS, (500, 500_000_000)),
    ("Pod with pod-level resources and resize in progress", _MIXED, _LOW, _LOW, _MIXED, None, None, None, None,
     _IN_PROGRESS, (700, 500_000_000)),
    ("Pod with deferred resize", None, None, _HIGH, _LOW, None, None, None, None, _DEFERRED, (700, 800_000_000)),
    ("Pod with pod-level resources and with deferred resize", _HIGH, _LOW, _LOW, _LOW, None, None, None, None,
     _DEFERRED, (700, 800_000_000)),
    ("Pod with infeasible resize", None, None, _HIGH, _LOW, None, None, None, None, _INFEASIBLE, (500, 500_000_000)),
    ("Pod with init container and no pending resize", None, None, _LOW, _LOW, _HIGH, _HIGH, None, None, None,
     (700, 800_000_000)),
    ("Pod with sider container and no pending resize", None, None, _LOW, _LOW, _HIGH, _HIGH, _HIGH, _HIGH, None,
     (1200, 1_300_000_000)),
]


def _calculate_pod(pod_level: dict[str, str] | None, pod_level_status: dict[str, str] | None,
                   requests: dict[str, str], status: dict[str, str], init: dict[str, str] | None,
                   init_status: dict[str, str] | None, sidecar: dict[str, str] | None,
                   sidecar_status: dict[str, str] | None, conditions: list[dict[str, str]] | None) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c1", "resources": {"requests": requests}}]}
    st: dict[str, Any] = {"phase": "Running",
                          "containerStatuses": [{"name": "c1", "resources": {"requests": status}}]}
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    if pod_level_status is not None:
        st["resources"] = {"requests": pod_level_status}
    inits, init_statuses = [], []
    if init is not None:
        inits.append({"name": "i1", "resources": {"requests": init}})
    if init_status is not None:
        init_statuses.append({"name": "i1", "resources": {"requests": init_status}})
    if sidecar is not None:
        inits.append({"name": "s1", "restartPolicy": "Always", "resources": {"requests": sidecar}})
    if sidecar_status is not None:
        init_statuses.append({"name": "s1", "resources": {"requests": sidecar_status}})
    if inits:
        spec["initContainers"] = inits
    if init_statuses:
        st["initContainerStatuses"] = init_statuses
    if conditions is not None:
        st["conditions"] = conditions
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "testpod", "namespace": "pod_resize_test", "uid": "testpod"},
                          "spec": spec, "status": st})


@pytest.mark.parametrize("release", ["1.36", "1.37"])
@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CALCULATE_CASES])
def test_calculate_pod_resources_with_resize(case: tuple[Any, ...], release: str) -> None:
    from scheduling_framework.state.node_info import PodInfo

    *fields, (cpu, mem) = case[1:]
    pi = PodInfo(_calculate_pod(*fields), RequestRules.for_gates(FeatureGates.for_release(release)))
    assert (pi.requests.milli_cpu, pi.requests.memory) == (cpu, mem)
    assert (pi.non0_cpu, pi.non0_mem) == (cpu, mem)
