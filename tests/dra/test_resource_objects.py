"""resource.k8s.io objects and the Pod's DRA fields: parsing, v1beta1/v1beta2 mapping, round trips, errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_framework.api import Pod
from scheduling_framework.api.pod import PodResourceClaimStatus
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resource import (
    AllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourceSlice,
)
from scheduling_framework.errors import ManifestError, SchedulingFrameworkError

V1 = "resource.k8s.io/v1"


def claim(requests: list[dict[str, Any]], api_version: str = V1, **devices: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"devices": {"requests": requests, **devices}}}


def slice_(devices: list[dict[str, Any]], api_version: str = V1, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "nodeName": "n1", "devices": devices, **spec}}


def test_claim_v1_fields() -> None:
    c = ResourceClaim.from_dict(claim(
        [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2, "adminAccess": True,
                                     "selectors": [{"cel": {"expression": "device.driver == 'x'"}}],
                                     "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}},
         {"name": "alt", "firstAvailable": [{"name": "big", "deviceClassName": "big", "allocationMode": "All"},
                                            {"name": "small", "deviceClassName": "small"}]}],
        constraints=[{"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}]))
    gpu, alt = c.spec.devices.requests
    assert gpu.exactly is not None and gpu.exactly.count == 2 and gpu.exactly.admin_access is True
    assert gpu.exactly.selectors[0].expression == "device.driver == 'x'"
    assert gpu.exactly.tolerations[0].operator == "Exists"
    assert [s.name for s in alt.first_available] == ["big", "small"]
    assert alt.first_available[0].request.allocation_mode == "All"
    assert alt.first_available[1].request.count == 1  # defaulted
    assert c.spec.devices.constraints[0].match_attribute == "gpu.example.com/model"
    assert c.namespace == "ns" and c.status.allocation is None


def test_claim_v1beta1_request_fields_sit_on_the_request() -> None:
    beta = ResourceClaim.from_dict(claim([{"name": "gpu", "deviceClassName": "gpu", "count": 3}],
                                         "resource.k8s.io/v1beta1"))
    v1 = ResourceClaim.from_dict(claim([{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 3}}]))
    assert beta.spec == v1.spec
    assert beta.to_dict()["spec"]["devices"]["requests"][0]["count"] == 3


def test_claim_v1beta2_is_v1_shaped() -> None:
    beta2 = ResourceClaim.from_dict(claim([{"name": "r", "exactly": {"deviceClassName": "x"}}],
                                          "resource.k8s.io/v1beta2"))
    assert beta2.spec.devices.requests[0].exactly is not None


def test_slice_v1beta1_basic_maps_to_v1() -> None:
    dev = {"name": "d0", "attributes": {"model": {"string": "a100"}}, "capacity": {"mem": {"value": "40Gi"}}}
    v1 = ResourceSlice.from_dict(slice_([dev]))
    beta = ResourceSlice.from_dict(slice_([{"name": "d0", "basic": {k: v for k, v in dev.items() if k != "name"}}],
                                          "resource.k8s.io/v1beta1"))
    assert v1.spec.devices[0].attributes == beta.spec.devices[0].attributes
    assert beta.spec.devices[0].capacity["mem"].value == Quantity.parse("40Gi")


def test_slice_fields() -> None:
    s = ResourceSlice.from_dict(slice_(
        [{"name": "d0", "attributes": {"v": {"version": "1.2.3"}, "n": {"int": 4}, "b": {"bool": True}},
          "consumesCounters": [{"counterSet": "cs", "counters": {"mem": {"value": "8Gi"}}}],
          "taints": [{"key": "k", "value": "v", "effect": "NoExecute"}], "bindsToNode": True}],
        sharedCounters=[{"name": "cs", "counters": {"mem": {"value": "40Gi"}}}], perDeviceNodeSelection=None))
    d = s.spec.devices[0]
    assert (d.attributes["v"].kind, d.attributes["v"].value) == ("version", "1.2.3")
    assert d.attributes["n"].value == 4 and d.attributes["b"].value is True
    assert d.consumes_counters[0].counters["mem"] == Quantity.parse("8Gi")
    assert s.spec.shared_counters[0].counters["mem"] == Quantity.parse("40Gi")
    assert d.taints[0].effect == "NoExecute" and d.binds_to_node is True
    assert s.spec.pool.generation == 1 and s.spec.node_name == "n1"


def test_slice_with_node_name_renames() -> None:
    s = ResourceSlice.from_dict(slice_([{"name": "d0"}])).with_node_name("s-copy", "n2")
    assert (s.name, s.spec.node_name, s.spec.pool.name) == ("s-copy", "n2", "n2")


def test_device_class_and_template() -> None:
    dc = DeviceClass.from_dict({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                "spec": {"selectors": [{"cel": {"expression": "true"}}],
                                         "config": [{"opaque": {"driver": "d", "parameters": {"a": 1}}}],
                                         "extendedResourceName": "example.com/gpu"}})
    assert dc.spec.selectors[0].expression == "true" and dc.spec.extended_resource_name == "example.com/gpu"
    assert dc.spec.config[0].opaque is not None and dc.spec.config[0].opaque.driver == "d"
    t = ResourceClaimTemplate.from_dict({
        "apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "t", "namespace": "ns"},
        "spec": {"metadata": {"labels": {"a": "b"}},
                 "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}})
    assert t.claim_metadata == {"labels": {"a": "b"}}
    assert t.spec.devices.requests[0].name == "r"
    assert t.claim_spec_dict()["devices"]["requests"][0]["name"] == "r"


def test_claim_status_round_trip_and_with_allocation() -> None:
    m = claim([{"name": "r", "exactly": {"deviceClassName": "gpu"}}])
    m["status"] = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "d", "pool": "p", "device": "x", "adminAccess": False}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    c = ResourceClaim.from_dict(copy.deepcopy(m))
    assert c.to_dict() == m
    assert c.allocation is not None and c.allocation.results[0].device == "x"
    assert c.allocation.node_selector is not None and c.allocation.node_selector.matches("n1", {})
    assert c.reserved_for[0].uid == "u"
    alloc = AllocationResult((DeviceRequestAllocationResult("r", "d", "p", "y"),))
    c2 = c.with_allocation(alloc).with_reserved_for((ResourceClaimConsumerReference("pods", "q", "u2"),))
    d2 = c2.to_dict()
    assert d2["status"] == {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "d", "pool": "p", "device": "y"}]}},
        "reservedFor": [{"resource": "pods", "name": "q", "uid": "u2"}]}
    assert ResourceClaim.from_dict(d2) == c2
    assert "status" not in c.with_allocation(None).with_reserved_for(()).to_dict()


def test_pod_dra_fields_round_trip() -> None:
    m: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "claim-a"},
                                    {"name": "b", "resourceClaimTemplateName": "tmpl"}],
                 "resources": {"claims": [{"name": "a"}]},
                 "containers": [{"name": "c", "resources": {"claims": [{"name": "b", "request": "gpu"}]}}]},
        "status": {"resourceClaimStatuses": [{"name": "b", "resourceClaimName": "p-b-x"}]}}
    p = Pod.from_dict(copy.deepcopy(m))
    assert p.to_dict() == m
    a, b = p.spec.resource_claims
    assert (a.resource_claim_name, a.resource_claim_template_name) == ("claim-a", None)
    assert (b.resource_claim_name, b.resource_claim_template_name) == (None, "tmpl")
    assert p.spec.containers[0].resources.claims[0].request == "gpu"
    assert p.spec.resources is not None and p.spec.resources.claims[0].name == "a"
    assert p.status.resource_claim_statuses[0].resource_claim_name == "p-b-x"
    p2 = p.with_resource_claim_statuses((PodResourceClaimStatus("b", "other"),))
    assert p2.to_dict()["status"]["resourceClaimStatuses"] == [{"name": "b", "resourceClaimName": "other"}]
    assert Pod.from_dict(p2.to_dict()).status == p2.status


BAD = [
    ("claim-alpha-version", ResourceClaim,
     claim([{"name": "r", "exactly": {"deviceClassName": "x"}}], "resource.k8s.io/v1alpha3"),
     'ResourceClaim ns/c: apiVersion: unsupported apiVersion "resource.k8s.io/v1alpha3"'),
    ("claim-both-exactly-and-first", ResourceClaim,
     claim([{"name": "r", "exactly": {"deviceClassName": "x"}, "firstAvailable": [{"name": "s"}]}]),
     "ResourceClaim ns/c: spec.devices.requests[0]: Invalid value: exactly one of"),
    ("claim-neither", ResourceClaim, claim([{"name": "r"}]),
     "ResourceClaim ns/c: spec.devices.requests[0]: Invalid value: exactly one of"),
    ("claim-bad-mode", ResourceClaim, claim([{"name": "r", "exactly": {"deviceClassName": "x",
                                                                        "allocationMode": "Some"}}]),
     'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some"'),
    ("claim-zero-count", ResourceClaim, claim([{"name": "r", "exactly": {"deviceClassName": "x", "count": 0}}]),
     "spec.devices.requests[0].exactly.count: Invalid value: 0"),
    ("claim-duplicate-request", ResourceClaim,
     claim([{"name": "r", "exactly": {"deviceClassName": "x"}}, {"name": "r", "exactly": {"deviceClassName": "x"}}]),
     'spec.devices.requests[1].name: Duplicate value: "r"'),
    ("claim-selector-no-cel", ResourceClaim,
     claim([{"name": "r", "exactly": {"deviceClassName": "x", "selectors": [{}]}}]),
     "spec.devices.requests[0].exactly.selectors[0].cel: Required value"),
    ("claim-beta1-path", ResourceClaim,
     claim([{"name": "r", "deviceClassName": "x", "count": "many"}], "resource.k8s.io/v1beta1"),
     "spec.devices.requests[0].count: expected an integer"),
    ("claim-bad-toleration-op", ResourceClaim,
     claim([{"name": "r", "exactly": {"deviceClassName": "x", "tolerations": [{"operator": "Lt"}]}}]),
     "spec.devices.requests[0].exactly.tolerations[0].operator"),
    ("slice-no-driver", ResourceSlice, {**slice_([]), "spec": {"pool": {"name": "p"}}},
     "ResourceSlice s: spec.driver: Required value"),
    ("slice-two-attribute-values", ResourceSlice,
     slice_([{"name": "d", "attributes": {"a": {"int": 1, "string": "x"}}}]),
     "spec.devices[0].attributes.a: Invalid value: exactly one value"),
    ("slice-beta1-basic-path", ResourceSlice,
     slice_([{"name": "d", "basic": {"capacity": {"mem": {"value": "lots"}}}}], "resource.k8s.io/v1beta1"),
     'spec.devices[0].basic.capacity.mem.value: invalid quantity "lots"'),
    ("slice-bad-taint-effect", ResourceSlice, slice_([{"name": "d", "taints": [{"key": "k", "effect": "Maybe"}]}]),
     'spec.devices[0].taints[0].effect: Unsupported value: "Maybe"'),
    ("slice-bad-counter", ResourceSlice, slice_([], sharedCounters=[{"name": "c", "counters": {"m": {}}}]),
     "spec.sharedCounters[0].counters.m.value: Required value"),
    ("class-wrong-kind", DeviceClass, {"apiVersion": V1, "kind": "Pod", "metadata": {"name": "x"}},
     'expected kind "DeviceClass", got "Pod"'),
    ("class-no-name", DeviceClass, {"apiVersion": V1, "kind": "DeviceClass", "metadata": {}},
     "metadata.name: Required value"),
    ("class-extended-resource-name-unqualified", DeviceClass,
     {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "x"}, "spec": {"extendedResourceName": "gpu"}},
     'DeviceClass x: spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name'),
    ("class-extended-resource-name-implicit-prefix", DeviceClass,
     {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "x"},
      "spec": {"extendedResourceName": "deviceclass.resource.kubernetes.io/x"}},
     "spec.extendedResourceName: Invalid value"),
    ("class-extended-resource-name-not-a-string", DeviceClass,
     {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": "x"}, "spec": {"extendedResourceName": 3}},
     "spec.extendedResourceName"),
    ("template-bad-spec", ResourceClaimTemplate,
     {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
      "spec": {"spec": {"devices": {"requests": "x"}}}},
     "ResourceClaimTemplate default/t: spec.spec.devices.requests: expected a list"),
    ("pod-claim-two-sources", Pod,
     {"kind": "Pod", "metadata": {"name": "p"},
      "spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}]}},
     "Pod default/p: spec.resourceClaims[0]: Invalid value: must specify one of"),
    ("pod-claim-no-name", Pod,
     {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
                                                                          "resources": {"claims": [{}]}}]}},
     "spec.containers[0].resources.claims[0].name: Required value"),
]


@pytest.mark.parametrize(("cls", "manifest", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(cls: Any, manifest: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as ei:
        cls.from_dict(manifest)
    assert isinstance(ei.value, SchedulingFrameworkError)
    assert message in str(ei.value)


# --- property: parse(to_dict(parse(m))) == parse(m) for generated claims and slices -------------------

_names = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
_attr = st.one_of(st.builds(lambda v: {"int": v}, st.integers(-5, 5)),
                  st.builds(lambda v: {"bool": v}, st.booleans()),
                  st.builds(lambda v: {"string": v}, _names),
                  st.builds(lambda a, b: {"version": f"{a}.{b}.0"}, st.integers(0, 9), st.integers(0, 9)))
_device = st.builds(lambda n, attrs, mem: {"name": n, "attributes": attrs,
                                           "capacity": {"memory": {"value": f"{mem}Gi"}}},
                    _names, st.dictionaries(_names, _attr, max_size=3), st.integers(0, 64))
_request = st.one_of(
    st.builds(lambda n, c, k: {"name": n, "exactly": {"deviceClassName": c, "count": k}},
              _names, _names, st.integers(1, 4)),
    st.builds(lambda n, subs: {"name": n, "firstAvailable": [{"name": f"s{i}", "deviceClassName": c}
                                                            for i, c in enumerate(subs)]},
              _names, st.lists(_names, min_size=1, max_size=3)))


@settings(max_examples=40, deadline=None)
@given(st.lists(_request, min_size=1, max_size=3, unique_by=lambda r: r["name"]))
def test_claim_round_trip(requests: list[dict[str, Any]]) -> None:
    c = ResourceClaim.from_dict(claim(requests))
    assert ResourceClaim.from_dict(c.to_dict()) == c


@settings(max_examples=40, deadline=None)
@given(st.lists(_device, max_size=4))
def test_slice_round_trip(devices: list[dict[str, Any]]) -> None:
    s = ResourceSlice.from_dict(slice_(devices))
    again = ResourceSlice.from_dict(s.to_dict())
    assert [(d.name, d.attributes, {k: c.value for k, c in d.capacity.items()}) for d in again.spec.devices] == \
        [(d.name, d.attributes, {k: c.value for k, c in d.capacity.items()}) for d in s.spec.devices]


LONG = "x" * 5000


@pytest.mark.parametrize("field_path", [
    ("DeviceToleration", {"operator": LONG}),
    ("DeviceTaint", {"key": "k", "effect": LONG}),
], ids=["toleration-operator", "taint-effect"])
def test_unsupported_values_are_cut_short_in_messages(field_path: tuple[str, dict[str, Any]]) -> None:
    import scheduling_framework.api.resource as res

    cls_name, manifest = field_path
    with pytest.raises(SchedulingFrameworkError) as e:
        getattr(res, cls_name).from_dict(manifest, "spec")
    assert len(str(e.value)) < 400 and "..." in str(e.value)


def test_device_toleration_manifest_round_trips() -> None:
    from scheduling_framework.api.resource import DeviceToleration

    m = {"operator": "Exists", "key": "k", "effect": "NoSchedule", "tolerationSeconds": 3}
    assert DeviceToleration.from_dict(m, "t").to_dict() == m
