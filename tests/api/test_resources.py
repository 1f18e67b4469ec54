"""Pod resource requests (scheduling_framework.api.resources) against upstream's tables.

Ported from component-helpers/resource/helpers_test.go: TestPodRequestsAndLimits,
TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests and TestPodLevelResourceRequests (requests
only; the in-place-resize cases read container statuses, which the model does not carry, and the
SkipPodLevelResources cases assume the PodLevelResources gate off, while this library follows its default on).
Resource-name classes from pkg/apis/core/v1/helper/helpers_test.go (TestIsExtendedResourceName ...).

Pods are built from manifests with ``Pod.from_dict``, which applies API defaulting (a container's requests
default to its limits, as ``SetDefaults_Pod`` does); upstream's helper tests use undefaulted objects, so the
one case that depends on it is adapted and says so.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_framework.api import Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    aggregate_container_requests,
    is_attachable_volume_resource_name,
    is_extended_resource_name,
    is_hugepage_resource_name,
    is_native_resource,
    is_prefixed_native_resource,
    is_scalar_resource_name,
    is_supported_pod_level_resource,
    non_zero_requests,
    pod_level_requests_set,
    pod_requests,
)

HP2 = "hugepages-2Mi"
HP1G = "hugepages-1Gi"


def ctr(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None, *, name: str = "c",
        restart: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name}
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if restart:
        c["restartPolicy"] = restart
    return c


def sidecar(requests: dict[str, str], name: str = "sidecar") -> dict[str, Any]:
    return ctr(requests, name=name, restart="Always")


def pod(containers: list[dict[str, Any]] | None = None, init: list[dict[str, Any]] | None = None,
        overhead: dict[str, str] | None = None, resources: dict[str, Any] | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": containers or []}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if resources is not None:
        spec["resources"] = resources
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "namespace": "default"},
                          "spec": spec})


def rl(**kw: str) -> dict[str, Quantity]:
    return {k.replace("_", "-"): Quantity.parse(v) for k, v in kw.items()}


def same(got: dict[str, Quantity], want: dict[str, Quantity]) -> bool:
    """Semantic equality, as apiequality.Semantic.DeepEqual compares quantities by value."""
    return got.keys() == want.keys() and all(got[k].cmp(want[k]) == 0 for k in got)


def get_pod(cpu_request: str = "", cpu_limit: str = "", memory_request: str = "", memory_limit: str = "",
            cpu_overhead: str = "", memory_overhead: str = "") -> Pod:
    """upstream getPod(name, podResources{...}): one container, optional overhead."""
    req = {k: v for k, v in (("cpu", cpu_request), ("memory", memory_request)) if v}
    lim = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit)) if v}
    over = {k: v for k, v in (("cpu", cpu_overhead), ("memory", memory_overhead)) if v}
    return pod([ctr(req, lim, name="foo")], overhead=over or None)


# --- TestPodRequestsAndLimits ---------------------------------------------------------------------------

@pytest.mark.parametrize(("p", "want"), [
    # Upstream expects no requests here because its pod is not defaulted; the API server (and Pod.from_dict)
    # default a container's requests to its limits, so the effective request is the 9-cpu limit.
    pytest.param(get_pod(cpu_limit="9"), rl(cpu="9"), id="just-limit-no-overhead"),
    pytest.param(get_pod(cpu_overhead="5", memory_overhead="5"), rl(cpu="5", memory="5"), id="just-overhead"),
    pytest.param(get_pod(cpu_request="1", memory_request="10", cpu_overhead="5", memory_overhead="5"),
                 rl(cpu="6", memory="15"), id="req-and-overhead"),
    pytest.param(get_pod(cpu_request="1", cpu_limit="2", memory_request="10", memory_limit="12", cpu_overhead="5",
                         memory_overhead="5"), rl(cpu="6", memory="15"), id="all-req-lim-and-overhead"),
    pytest.param(get_pod(cpu_request="1", cpu_limit="2", memory_request="10", cpu_overhead="5",
                         memory_overhead="5"), rl(cpu="6", memory="15"), id="req-some-lim-and-overhead"),
])
def test_pod_requests_and_limits(p: Pod, want: dict[str, Quantity]) -> None:
    assert same(pod_requests(p), want)


# --- TestPodRequestsAndLimitsWithoutOverhead --------------------------------------------------------------

TWO = [ctr({"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}, name="foobar"),
       ctr({"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"}, name="foobar2")]
OVERHEAD = {"cpu": "3", "memory": "8"}


@pytest.mark.parametrize(("p", "want"), [
    pytest.param(pod(TWO), rl(cpu="5", memory="17"), id="two container no overhead - should just be sum of containers"),
    pytest.param(pod(TWO, overhead=OVERHEAD), rl(cpu="5", memory="17"),
                 id="two container with overhead - shouldn't consider overhead"),
    pytest.param(pod(TWO, init=[ctr({"cpu": "1", "memory": "5"}, {"cpu": "1", "memory": "5"}, name="small-init"),
                                ctr({"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"},
                                    name="big-init")], overhead=OVERHEAD),
                 rl(cpu="40", memory="120"), id="two container with overhead, massive init - should just be the "
                                                "largest init"),
])
def test_pod_requests_without_overhead(p: Pod, want: dict[str, Quantity]) -> None:
    assert same(pod_requests(p, exclude_overhead=True), want)


# --- TestPodResourceRequests (cases without container statuses) -------------------------------------------

def cpu(v: str) -> dict[str, str]:
    return {"cpu": v}


RESOURCE_REQUESTS = [
    pytest.param(pod([ctr(cpu("1"))], init=[ctr(cpu("4"), name="i")]), False, rl(cpu="4"),
                 id="nil options, larger init container"),
    pytest.param(pod([ctr(cpu("2")), ctr(cpu("3"), name="c2")], init=[ctr(cpu("2"), name="i")]), False,
                 rl(cpu="5"), id="nil options, larger containers"),
    pytest.param(pod([ctr(cpu("2")), ctr(cpu("3"), name="c2")], init=[ctr(cpu("2"), name="i")], overhead=cpu("1")),
                 True, rl(cpu="5"), id="pod overhead excluded"),
    pytest.param(pod([ctr(cpu("2")), ctr(cpu("3"), name="c2")], init=[ctr(cpu("2"), cpu("2"), name="i")],
                     overhead={"cpu": "1", "memory": "1Gi"}), False, rl(cpu="6", memory="1Gi"),
                 id="pod overhead included"),
    pytest.param(pod([ctr(cpu("1"), name="container-1")], init=[sidecar(cpu("1"), "restartable-init-1")]), False,
                 rl(cpu="2"), id="restartable init container"),
    pytest.param(pod([ctr(cpu("1"), name="container-1")],
                     init=[ctr(cpu("5"), name="init-1"), sidecar(cpu("1"), "restartable-init-1"),
                           sidecar(cpu("2"), "restartable-init-2"), sidecar(cpu("3"), "restartable-init-3")]),
                 False, rl(cpu="7"), id="multiple restartable init containers"),
    pytest.param(pod([ctr(cpu("1"), name="container-1")],
                     init=[ctr(cpu("5"), name="init-1"), sidecar(cpu("1"), "restartable-init-1"),
                           sidecar(cpu("2"), "restartable-init-2"), ctr(cpu("5"), name="init-2"),
                           sidecar(cpu("3"), "restartable-init-3")]),
                 False, rl(cpu="8"), id="multiple restartable and regular init containers"),
    pytest.param(pod([ctr(cpu("100"), name="container-1")],
                     init=[sidecar(cpu("10"), "restartable-init-1"), ctr(cpu("200"), name="init-1")]),
                 False, rl(cpu="210"), id="restartable-init, init and regular"),
]


@pytest.mark.parametrize(("p", "exclude_overhead", "want"), RESOURCE_REQUESTS)
def test_pod_resource_requests(p: Pod, exclude_overhead: bool, want: dict[str, Quantity]) -> None:
    assert same(pod_requests(p, exclude_overhead=exclude_overhead), want)


# --- TestPodLevelResourceRequests (PodLevelResources on) ---------------------------------------------------

MI3_2M = {"memory": "3Mi", "cpu": "2m"}
MI5_4M = {"memory": "5Mi", "cpu": "4m"}
MI6_8M = {"memory": "6Mi", "cpu": "8m"}

POD_LEVEL = [
    pytest.param(pod(), rl(), id="nil"),
    pytest.param(pod(resources={"requests": {"memory": "2Mi"}}), rl(memory="2Mi"),
                 id="pod level memory resource with SkipPodLevelResources false"),
    pytest.param(pod([ctr(cpu("2m"))], resources={"requests": {"memory": "2Mi"}}), rl(memory="2Mi", cpu="2m"),
                 id="pod level memory and container level cpu resources with SkipPodLevelResources false"),
    pytest.param(pod([ctr({"storage": "3Mi"})], resources={"requests": {"storage": "2Mi"}}), rl(storage="3Mi"),
                 id="pod level unsupported resources set at both pod-level and container-level with "
                    "SkipPodLevelResources false"),
    pytest.param(pod([ctr({"memory": "3Mi"})], resources={"requests": {"storage": "2Mi"}}), rl(memory="3Mi"),
                 id="pod level unsupported resources set at pod-level with SkipPodLevelResources false"),
    pytest.param(pod([ctr(MI3_2M)]), rl(memory="3Mi", cpu="2m"),
                 id="only container level resources set with SkipPodLevelResources false"),
    pytest.param(pod([ctr(MI3_2M)], resources={"requests": MI6_8M}), rl(memory="6Mi", cpu="8m"),
                 id="both container-level and pod-level resources set with SkipPodLevelResources false"),
    pytest.param(pod([ctr(MI3_2M)], init=[ctr(MI5_4M, name="i")]), rl(memory="5Mi", cpu="4m"),
                 id="container-level resources and init container set with SkipPodLevelResources false"),
    pytest.param(pod([ctr(MI3_2M)], init=[sidecar(MI5_4M)]), rl(memory="8Mi", cpu="6m"),
                 id="container-level resources and sidecar container set with SkipPodLevelResources false"),
    pytest.param(pod([ctr(MI3_2M)], init=[sidecar(MI5_4M), ctr(MI6_8M, name="i")]), rl(memory="11Mi", cpu="12m"),
                 id="container-level resources, init and sidecar container set with SkipPodLevelResources false"),
    pytest.param(pod([ctr(MI3_2M)], init=[sidecar(MI5_4M), ctr(MI6_8M, name="i")],
                     resources={"requests": {"memory": "15Mi", "cpu": "18m"}}), rl(memory="15Mi", cpu="18m"),
                 id="pod-level resources, container-level resources, init and sidecar container set with "
                    "SkipPodLevelResources false"),
    pytest.param(pod(resources={"limits": {HP2: "2Mi"}, "requests": {"memory": "10Mi", HP2: "2Mi"}}),
                 {"memory": Quantity.parse("10Mi"), HP2: Quantity.parse("2Mi")},
                 id="pod-level resources, hugepage request/limit single page size"),
    pytest.param(pod(resources={"limits": {HP2: "2Mi", HP1G: "1Gi"},
                                "requests": {"cpu": "1", HP2: "2Mi", HP1G: "1Gi"}}),
                 {"cpu": Quantity.parse("1"), HP2: Quantity.parse("2Mi"), HP1G: Quantity.parse("1Gi")},
                 id="pod-level resources, hugepage request/limit multiple page sizes"),
    pytest.param(pod([ctr({HP2: "6Mi"}, {HP2: "6Mi"})],
                     resources={"limits": {HP2: "10Mi"}, "requests": {"cpu": "1", HP2: "10Mi"}}),
                 {"cpu": Quantity.parse("1"), HP2: Quantity.parse("10Mi")},
                 id="pod-level resources, container-level resources, hugepage request/limit single page size"),
    pytest.param(pod([ctr({"cpu": "1", HP1G: "2Gi"}, {HP1G: "2Gi"})],
                     resources={"limits": {HP2: "10Mi", HP1G: "2Gi"}, "requests": {"cpu": "1", HP2: "10Mi",
                                                                                   HP1G: "2Gi"}}),
                 {"cpu": Quantity.parse("1"), HP2: Quantity.parse("10Mi"), HP1G: Quantity.parse("2Gi")},
                 id="pod-level resources, container-level resources, hugepage request/limit multiple page sizes"),
    pytest.param(pod([ctr({"memory": "4Mi", HP1G: "1Gi"}, {HP1G: "1Gi"})],
                     resources={"limits": {HP2: "10Mi"}, "requests": {"cpu": "1", HP2: "10Mi"}}),
                 {"cpu": Quantity.parse("1"), "memory": Quantity.parse("4Mi"), HP2: Quantity.parse("10Mi"),
                  HP1G: Quantity.parse("1Gi")},
                 id="pod-level resources, container-level resources, hugepage request/limit multiple page sizes "
                    "between pod-level and container-level"),
]


@pytest.mark.parametrize(("p", "want"), POD_LEVEL)
def test_pod_level_resource_requests(p: Pod, want: dict[str, Quantity]) -> None:
    assert same(pod_requests(p), want)


def test_pod_level_overhead_is_added() -> None:
    p = pod([ctr(cpu("1"))], overhead={"cpu": "100m", "memory": "10Mi"},
            resources={"requests": {"cpu": "1", "memory": "100Mi"}})
    assert same(pod_requests(p), rl(cpu="1100m", memory="110Mi"))
    assert same(pod_requests(p, exclude_overhead=True), rl(cpu="1", memory="100Mi"))


# pkg/apis/core/v1/defaults.go defaultPodRequests: with pod-level limits and no pod-level request, the request
# defaults to the aggregated container requests for cpu/memory when containers set them, else to the limit.
def test_pod_level_request_defaults_to_limit_when_containers_request_nothing() -> None:
    p = pod([ctr()], resources={"limits": {"cpu": "4", "memory": "1Gi"}})
    assert same(pod_requests(p), rl(cpu="4", memory="1Gi"))


# pkg/apis/core/v1/defaults.go defaultPodRequests: cpu/memory requests default to what the containers request.
def test_pod_level_request_defaults_to_aggregated_container_requests() -> None:
    p = pod([ctr(cpu("1")), ctr({"memory": "1Gi"}, name="c2")],
            resources={"limits": {"cpu": "4", "memory": "8Gi"}})
    assert same(pod_requests(p), rl(cpu="1", memory="1Gi"))


@pytest.mark.parametrize(("containers", "init", "resources", "want"), [
    pytest.param([ctr(limits={"cpu": "2"})], None, {"limits": {"cpu": "4"}}, {"cpu": "2"},
                 id="container-limit-defaults-its-request-first"),
    pytest.param([ctr(cpu("1"))], [ctr(cpu("3"), name="i")], {"limits": {"cpu": "4", "memory": "1Gi"}},
                 {"cpu": "3", "memory": "1Gi"}, id="init-container-peak-counts"),
    pytest.param([ctr(cpu("1"))], None, {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}, {"cpu": "2"},
                 id="explicit-pod-request-kept"),
    pytest.param([ctr({"ephemeral-storage": "1Gi"})], None, {"limits": {"ephemeral-storage": "2Gi", "cpu": "1"}},
                 {"cpu": "1"}, id="unsupported-pod-level-resource-not-defaulted"),
    pytest.param([ctr(cpu("1"))], None, {"requests": {"memory": "1Gi"}}, {"memory": "1Gi"},
                 id="no-pod-limits-no-defaulting"),
])
def test_default_pod_requests(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None,
                              resources: dict[str, Any], want: dict[str, str]) -> None:
    p = pod(containers, init=init, resources=resources)
    assert p.spec.resources is not None
    assert same(dict(p.spec.resources.requests), {k: Quantity.parse(v) for k, v in want.items()})


# TestIsPodLevelResourcesSet / IsSupportedPodLevelResource
@pytest.mark.parametrize(("resources", "want"), [
    pytest.param(None, False, id="nil resources struct"),
    pytest.param({}, False, id="empty resources struct"),
    pytest.param({"requests": {"ephemeral-storage": "1Mi"}}, False, id="only unsupported resource requests set"),
    pytest.param({"requests": {"ephemeral-storage": "1Mi", "cpu": "1m"}}, True,
                 id="unsupported and suported resources requests set"),
])
def test_pod_level_requests_set(resources: dict[str, Any] | None, want: bool) -> None:
    assert pod_level_requests_set(pod(resources=resources)) is want


@pytest.mark.parametrize(("name", "want"), [("cpu", True), ("memory", True), (HP2, True), ("ephemeral-storage", False),
                                            ("storage", False), ("example.com/gpu", False)])
def test_is_supported_pod_level_resource(name: str, want: bool) -> None:
    assert is_supported_pod_level_resource(name) is want


# --- non-zero requests (pkg/scheduler/framework types.go calculateResource / getNonMissingContainerRequests) --

MI200 = DEFAULT_MEMORY_REQUEST


@pytest.mark.parametrize(("p", "want"), [
    pytest.param(pod([ctr()]), (DEFAULT_MILLI_CPU_REQUEST, MI200), id="no-requests-get-both-defaults"),
    pytest.param(pod([ctr(), ctr(name="c2")]), (2 * DEFAULT_MILLI_CPU_REQUEST, 2 * MI200),
                 id="defaults-apply-per-container"),
    pytest.param(pod([ctr({"cpu": "100m", "memory": "500"})], overhead={"cpu": "500m"}), (600, 500),
                 id="TestNodeInfoAddPod/test-1"),
    pytest.param(pod([ctr(cpu("200m"))], overhead={"cpu": "500m", "memory": "500"}), (700, MI200 + 500),
                 id="TestNodeInfoAddPod/test-2"),
    pytest.param(pod([ctr(cpu("200m"))], init=[ctr({"cpu": "500m", "memory": "200Mi"}, name="i")],
                     overhead={"cpu": "500m", "memory": "500"}), (1000, MI200 + 500),
                 id="TestNodeInfoAddPod/test-3"),
    pytest.param(pod([ctr({"memory": "1Gi"})]), (DEFAULT_MILLI_CPU_REQUEST, 1 << 30), id="memory-only"),
    pytest.param(pod([ctr()], init=[sidecar({"cpu": "1"})]), (1000 + DEFAULT_MILLI_CPU_REQUEST, 2 * MI200),
                 id="sidecar-without-memory-gets-default-too"),
    pytest.param(pod([ctr()], resources={"requests": {"cpu": "2", "memory": "1Gi"}}), (2000, 1 << 30),
                 id="pod-level-requests-need-no-defaults"),
    pytest.param(pod([ctr()], resources={"requests": {"cpu": "2"}}), (2000, MI200),
                 id="pod-level-cpu-only-memory-defaults-per-container"),
])
def test_non_zero_requests(p: Pod, want: tuple[int, int]) -> None:
    assert non_zero_requests(p) == want


def test_pod_requests_with_non_missing_defaults_only_fill_absent_resources() -> None:
    p = pod([ctr(cpu("250m")), ctr({"memory": "1Gi"}, name="c2")])
    got = pod_requests(p, non_missing={"cpu": Quantity.parse("100m"), "memory": Quantity.parse("200Mi")})
    assert same(got, rl(cpu="350m", memory="1224Mi"))
    assert same(aggregate_container_requests(p), rl(cpu="250m", memory="1Gi"))


# --- properties -----------------------------------------------------------------------------------------------

millis = st.integers(min_value=0, max_value=8000)


@st.composite
def pods_st(draw: st.DrawFn) -> tuple[Pod, list[int], list[tuple[bool, int]]]:
    regular = draw(st.lists(millis, min_size=1, max_size=4))
    init = draw(st.lists(st.tuples(st.booleans(), millis), max_size=4))
    containers = [ctr({"cpu": f"{m}m"}, name=f"c{i}") for i, m in enumerate(regular)]
    inits = [ctr({"cpu": f"{m}m"}, name=f"i{i}", restart="Always" if side else None)
             for i, (side, m) in enumerate(init)]
    return pod(containers, init=inits), regular, init


@given(pods_st())
def test_pod_cpu_request_is_the_peak_of_its_lifecycle(case: tuple[Pod, list[int], list[tuple[bool, int]]]) -> None:
    # Each regular init container runs alongside the sidecars started before it; afterwards the regular
    # containers run alongside every sidecar. The pod needs the largest of those stages.
    p, regular, init = case
    running_sidecars = 0
    peak = 0
    for is_sidecar, m in init:
        if is_sidecar:
            running_sidecars += m
            peak = max(peak, running_sidecars)
        else:
            peak = max(peak, running_sidecars + m)
    peak = max(peak, running_sidecars + sum(regular))
    assert pod_requests(p)["cpu"].milli_value() == peak


# --- resource name classes (pkg/apis/core/v1/helper, pkg/scheduler/util) ----------------------------------

@pytest.mark.parametrize(("name", "want"), [
    pytest.param("pod.alpha.kubernetes.io/opaque-int-resource-foo", False,
                 id="explicit native resource name with kubernetes.io is explicitly mentioned"),
    pytest.param("kubernetes.io/resource-foo", False,
                 id="explicit native resource name with kubernetes.io is explicitly mentioned as prefix"),
    pytest.param("foo", False, id="implicit native resource name"),
    pytest.param("a/b", True, id="a/b"),
    pytest.param("", False, id="empty native resource name"),
    pytest.param("example.com/foo", True, id="resource name outside of kubernetes.io domain without requests. prefix"),
    pytest.param("requests.foobar", False, id="requests.foobar"),
    pytest.param("c/d/", False, id="c/d/"),
    pytest.param("example.com/gpu_", False, id="name-part-must-end-alphanumeric"),
    pytest.param("Example.com/gpu", False, id="prefix-must-be-lowercase-dns-subdomain"),
    pytest.param("example.com/" + "g" * 63, True, id="name-part-63-characters"),
    pytest.param("example.com/" + "g" * 64, False, id="name-part-64-characters"),
])
def test_is_extended_resource_name(name: str, want: bool) -> None:
    assert is_extended_resource_name(name) is want


@pytest.mark.parametrize(("name", "want"), [
    ("pod.alpha.kubernetes.io/opaque-int-resource-foo", True), ("kubernetes.io/resource-foo", True), ("foo", True),
    ("", True), ("a/b", False),
])
def test_is_native_resource(name: str, want: bool) -> None:
    assert is_native_resource(name) is want


@pytest.mark.parametrize(("name", "want"), [
    ("kubernetes.io/resource-foo", True), ("pod.alpha.kubernetes.io/x", True), ("example.com/x", False), ("cpu", False),
])
def test_is_prefixed_native_resource(name: str, want: bool) -> None:
    assert is_prefixed_native_resource(name) is want


@pytest.mark.parametrize(("name", "want"), [(HP2, True), (HP1G, True), ("huge-pages-2Mi", False), ("cpu", False),
                                            ("", False)])
def test_is_hugepage_resource_name(name: str, want: bool) -> None:
    assert is_hugepage_resource_name(name) is want


@pytest.mark.parametrize(("name", "want"), [("attachable-volumes-100m", True), ("attachable_volumes-foo", False),
                                            ("pod.alpha.kubernetes.io/opaque-int-resource-foo", False), ("", False)])
def test_is_attachable_volume_resource_name(name: str, want: bool) -> None:
    assert is_attachable_volume_resource_name(name) is want


@pytest.mark.parametrize(("name", "want"), [
    ("example.com/gpu", True), (HP2, True), ("attachable-volumes-aws-ebs", True), ("kubernetes.io/foo", True),
    ("cpu", False), ("memory", False), ("ephemeral-storage", False), ("pods", False), ("foo", False),
])
def test_is_scalar_resource_name(name: str, want: bool) -> None:
    assert is_scalar_resource_name(name) is want


@pytest.mark.parametrize("seed", range(30))
def test_non_zero_requests_equal_the_defaulted_sum(seed: int) -> None:
    """non_zero_requests (which skips the second sum when every container requests cpu and memory) equals the
    sum with the scheduler's defaults filled in, for containers, sidecars, init containers and overhead."""
    import random

    from scheduling_framework.api.pod import Pod
    from scheduling_framework.api.resources import _NON_MISSING, non_zero_requests, pod_requests

    rng = random.Random(seed)

    def container(name: str, sidecar: bool = False) -> dict[str, object]:
        req = {k: v for k, v in (("cpu", rng.choice(("100m", "1"))), ("memory", rng.choice(("64Mi", "1Gi"))))
               if rng.random() < 0.8}
        c: dict[str, object] = {"name": name, "image": "i", "resources": {"requests": req}}
        if sidecar:
            c["restartPolicy"] = "Always"
        return c

    spec: dict[str, object] = {"containers": [container(f"c{i}") for i in range(rng.randint(1, 3))],
                               "initContainers": [container(f"i{i}", rng.random() < 0.5)
                                                  for i in range(rng.randint(0, 2))]}
    if rng.random() < 0.3:
        spec["overhead"] = {"cpu": "10m", "memory": "8Mi"}
    pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    want = pod_requests(pod, non_missing=_NON_MISSING)
    cpu, mem = want.get("cpu"), want.get("memory")
    assert non_zero_requests(pod) == (0 if cpu is None else cpu.milli_value(), 0 if mem is None else mem.value())
