"""Extended resources backed by DRA: the DeviceClass resolver and the requests of the pod's claim."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.dra.extended import (
    DeviceClassResolver,
    is_dra_extended_resource_name,
    requests_and_mappings,
    requests_dra_candidate,
)
from tests.fixture_runner import ROOT


def device_class(name: str, ext: str | None = None, created: str | None = None) -> KubeObject:
    meta: dict[str, Any] = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return KubeObject.from_dict({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta,
                                 "spec": {"extendedResourceName": ext} if ext else {}})


@pytest.mark.parametrize(("classes", "resource", "want"), [
    ([("gpu", "example.com/gpu", None)], "example.com/gpu", "gpu"),
    ([("gpu", "example.com/gpu", None)], "deviceclass.resource.kubernetes.io/gpu", "gpu"),
    ([("gpu", None, None)], "deviceclass.resource.kubernetes.io/gpu", "gpu"),
    ([("gpu", None, None)], "gpu", None),
    ([("gpu", None, None)], "example.com/gpu", None),
    ([("old", "example.com/gpu", "2024-01-01T00:00:00Z"), ("new", "example.com/gpu", "2025-01-01T00:00:00Z")],
     "example.com/gpu", "new"),
    ([("new", "example.com/gpu", "2025-01-01T00:00:00Z"), ("old", "example.com/gpu", "2024-01-01T00:00:00Z")],
     "example.com/gpu", "new"),
    ([("b", "example.com/gpu", "2025-01-01T00:00:00Z"), ("a", "example.com/gpu", "2025-01-01T00:00:00Z")],
     "example.com/gpu", "a"),
], ids=["explicit", "implicit-of-explicit-class", "implicit", "bare-class-name", "no-explicit-name",
        "newest-wins", "newest-wins-listed-first", "same-time-lower-name"])
def test_resolver(classes: list[tuple[str, str | None, str | None]], resource: str, want: str | None) -> None:
    resolver = DeviceClassResolver(device_class(*c) for c in classes)
    got = resolver.get(resource)
    assert (got.name if got is not None else None) == want


def pod(init: list[tuple[str, int, bool]], regular: list[tuple[str, int]]) -> Pod:
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {
        "initContainers": [{"name": n, "image": "i", "resources": {"requests": {"example.com/gpu": str(q)}},
                            **({"restartPolicy": "Always"} if sidecar else {})} for n, q, sidecar in init],
        "containers": [{"name": n, "image": "i", "resources": {"requests": {"example.com/gpu": str(q)}}}
                       for n, q in regular]}})


@pytest.mark.parametrize(("p", "requests", "mappings"), [
    (pod([], [("a", 1), ("b", 2)]),
     [("container-0-request-0", 1), ("container-1-request-0", 2)],
     [("a", "container-0-request-0"), ("b", "container-1-request-0")]),
    # a plain init container reuses the request of the container after it, and asks for the rest
    (pod([("init", 2, False)], [("main", 1)]),
     [("container-0-request-0", 1), ("container-1-request-0", 1)],
     [("main", "container-1-request-0"), ("init", "container-1-request-0"), ("init", "container-0-request-0")]),
    # init containers run one after another: they share the largest of their requests
    (pod([("i0", 1, False), ("i1", 3, False)], []),
     [("container-1-request-0", 3)],
     [("i0", "container-1-request-0"), ("i1", "container-1-request-0")]),
    # a sidecar lives as long as the pod: its own request
    (pod([("side", 1, True)], [("main", 1)]),
     [("container-0-request-0", 1), ("container-1-request-0", 1)],
     [("side", "container-0-request-0"), ("main", "container-1-request-0")]),
], ids=["two-containers", "init-reuses-later-request", "init-containers-share-the-largest", "sidecar"])
def test_requests_and_mappings(p: Pod, requests: list[tuple[str, int]], mappings: list[tuple[str, str]]) -> None:
    reqs, maps = requests_and_mappings(p, ["example.com/gpu"], DeviceClassResolver([device_class("gpu",
                                                                                                "example.com/gpu")]))
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == requests
    assert all(r["exactly"]["deviceClassName"] == "gpu" for r in reqs)
    assert [(m["containerName"], m["requestName"]) for m in maps] == mappings


@pytest.mark.parametrize(("name", "want"), [
    ("example.com/gpu", True), ("deviceclass.resource.kubernetes.io/gpu", True), ("cpu", False),
    ("hugepages-2Mi", False), ("kubernetes.io/gpu", False),
])
def test_dra_extended_resource_name(name: str, want: bool) -> None:
    assert is_dra_extended_resource_name(name) is want


def test_candidate_ignores_zero_requests() -> None:
    assert not requests_dra_candidate(pod([], [("a", 0)]))
    assert requests_dra_candidate(pod([("i", 1, False)], []))


EXT = yaml.safe_load((ROOT / "tests/fixtures/upstream/dra-extended-requests.yaml").read_text())
NAMES = {"gpu": "example.com/gpu", "gpu1": "example.com/gpu1", "gpuinit": "example.com/gpuinit",
         "implicit": "deviceclass.resource.kubernetes.io/classInit"}


class _MockResolver:
    """upstream's mockDeviceClassResolver: resource name -> class name."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = {NAMES[k]: v for k, v in mapping.items()}

    def get(self, name: str) -> Any:
        cls = self.mapping.get(name)
        return None if cls is None else device_class(cls)


def _upstream_pod(name: str) -> Pod:
    init: list[dict[str, Any]] = []
    regular: list[dict[str, Any]] = []
    for kind, reqs in EXT["pods"][name]:
        requests = {NAMES[k]: str(v) for k, v in reqs.items()}
        if kind == "res":
            regular.append({"name": f"con{len(regular)}", "image": "i", "resources": {"requests": requests}})
        else:
            c: dict[str, Any] = {"name": f"{'init' if kind == 'initReq' else 'sidecar'}-con{len(init)}", "image": "i",
                                 "resources": {"requests": requests}}
            if kind == "sidecarReq":
                c["restartPolicy"] = "Always"
            init.append(c)
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": "my-pod", "namespace": "default", "uid": "1234"},
                          "spec": {"initContainers": init, "containers": regular}})


def _call(case: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    classes = case["classes"] if isinstance(case["classes"], dict) else EXT["classes"][case["classes"]]
    return requests_and_mappings(_upstream_pod(case["pod"]), [NAMES[r] for r in case["resources"]],
                                 _MockResolver(classes))  # type: ignore[arg-type]


@pytest.mark.parametrize("case", EXT["requests"], ids=[c["name"] for c in EXT["requests"]])
def test_upstream_create_requests(case: dict[str, Any]) -> None:
    reqs, _ = _call(case)
    assert [[r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]] for r in reqs] == case["want"]
    assert all(r["exactly"]["allocationMode"] == "ExactCount" for r in reqs)


@pytest.mark.parametrize("case", EXT["mappings"], ids=[c["name"] for c in EXT["mappings"]])
def test_upstream_create_mappings(case: dict[str, Any]) -> None:
    _, maps = _call(case)
    got = sorted(([m["containerName"], m["resourceName"], m["requestName"]] for m in maps),
                 key=lambda m: (m[2], m[0]))
    short = {v: k for k, v in NAMES.items()}
    assert [[c, short[r], q] for c, r, q in got] == case["want"]
