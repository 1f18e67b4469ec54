"""Loader for the ported upstream allocator table (tests/fixtures/upstream/dra-allocator.yaml).

The YAML mirrors the helpers of upstream's allocatortesting package, so cases read like the Go table:

* ``node: [name, region]`` — labels region=<region>, planet=earth.
* ``classes``: ``[name, driver]`` (selector ``device.driver == "<driver>"``), ``{name, driver, config: attr}``
  (class with opaque config ``{"<attr>": "<attr>Value"}``), ``{name, driver, multi: bool}`` or a full manifest.
* ``slices``: ``[name, nodeSelection, pool, driver, devices]`` or ``{name, node, pool, driver, devices,
  counterSets}``. nodeSelection: a node name, ``all``, ``perDevice`` or ``{labels: [key, value...]}``.
  pool: a name (count 1, generation 1), ``[name, count]`` or ``[name, count, generation]``.
  devices: names, ``{count: n}`` (device-0..n-1) or v1 device manifests with shorthands
  (``capacity: {name: qty}``, ``consumes: {counterSet: {counter: qty}}``, ``node``).
* ``claims``: ``{name, requests, constraints, config, tolerations}``; a request is ``[name, class, count]``,
  ``[name, class, All]``, ``{name, firstAvailable: [[sub, class, count], ...]}`` or a v1 manifest.
* ``allocated``: ``[[driver, pool, device], ...]``.
* ``expectResults``: per claim ``{nodeSelector, results: [[request, driver, pool, device(, adminAccess)]],
  config}``; nodeSelector is a node name (localNodeSelector), ``{labels: [key, values...]}`` or null.
* ``expectError``: a substring of the error; ``features``: the Go feature names enabled for the case
  (upstream's zero value is "all off").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scheduling_framework.api import Node
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from scheduling_framework.dra.allocator import AllocatedState, DeviceID, Features
from tests import yamlio

TABLE_PATH = Path(__file__).parents[1] / "fixtures/upstream/dra-allocator.yaml"
V1 = "resource.k8s.io/v1"

FEATURE_NAMES = {
    "AdminAccess": "admin_access", "PrioritizedList": "prioritized_list",
    "PartitionableDevices": "partitionable_devices", "DeviceTaints": "device_taints",
    "DeviceBinding": "device_binding_and_status", "DeviceBindingAndStatus": "device_binding_and_status",
    "ConsumableCapacity": "consumable_capacity", "FractionalCapacityRange": "fractional_capacity_range",
}


# upstream's named tolerations and taints
TOLERATIONS: dict[str, Any] = {
    "tolerationNoSchedule": {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"},
    "tolerationNoExecute": {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"},
    "tolerationNoScheduleKey1": {"operator": "Exists", "key": "key1", "effect": "NoSchedule"},
}
TAINTS: dict[str, Any] = {
    "taintNone": {"key": "taint-key", "value": "taint-value", "effect": "None"},
    "taintNoSchedule": {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"},
    "taintNoExecute": {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"},
}


def load_table() -> dict[str, Any]:
    data: dict[str, Any] = yamlio.load(TABLE_PATH.read_text())
    return data


def features(names: list[str] | None) -> Features:
    flags = {f: False for f in set(FEATURE_NAMES.values())}
    for n in names or []:
        flags[FEATURE_NAMES[n]] = True
    return Features(**flags)


def node(spec: list[str] | None) -> Node:
    name, region = spec or ["node-1", "region-1"]
    return Node.from_dict({"kind": "Node", "metadata": {"name": name,
                                                          "labels": {"region": region, "planet": "earth"}}})


def device_class(spec: Any) -> DeviceClass:
    if isinstance(spec, list):
        spec = {"name": spec[0], "driver": spec[1]}
    if "manifest" in spec:
        return DeviceClass.from_dict({"apiVersion": V1, "kind": "DeviceClass", **spec["manifest"]})
    expr = f'device.driver == "{spec["driver"]}"'
    if "multi" in spec:
        expr += f" && device.allowMultipleAllocations == {str(spec['multi']).lower()}"
    cls: dict[str, Any] = {"selectors": [{"cel": {"expression": expr}}]}
    if "config" in spec:
        cls["config"] = [{"opaque": opaque(spec["driver"], spec["config"])}]
    return DeviceClass.from_dict({"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": spec["name"]},
                                  "spec": cls})


def opaque(driver: str, attribute: str) -> dict[str, Any]:
    return {"driver": driver, "parameters": json.loads(json.dumps({attribute: attribute + "Value"}))}


def node_selector(spec: Any) -> dict[str, Any]:
    if isinstance(spec, str):
        return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                         "values": [spec]}]}]}
    if "terms" in spec:
        return {"nodeSelectorTerms": [
            {k: [{"key": r[0], "operator": r[1], "values": r[2]} for r in reqs] for k, reqs in term.items()}
            for term in spec["terms"]]}
    if "fields" in spec:
        key, *values = spec["fields"]
        return {"nodeSelectorTerms": [{"matchFields": [{"key": key, "operator": "In", "values": values}]}]}
    key, *values = spec["labels"]
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]}


def device(spec: Any) -> list[dict[str, Any]]:
    if isinstance(spec, str):
        return [{"name": spec}]
    if "count" in spec and "name" not in spec:
        return [{"name": f"device-{i}"} for i in range(spec["count"])]
    d = dict(spec)
    if "capacity" in d:
        d["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in d["capacity"].items()}
    if d.pop("fromCounters", False):
        d["capacity"] = {k: {"value": v} for counters in d["consumes"].values() for k, v in counters.items()}
    if "policyRange" in d:
        # upstream's withCapacityRequestPolicyRange: default 2, range 2..4 in steps of 2
        for name, value in d.pop("policyRange").items():
            d.setdefault("capacity", {})[name] = {"value": value, "requestPolicy": {
                "default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}
    if "policyValues" in d:
        # upstream's withCapacityRequestPolicyValidValues(default, capacity, additional)
        pv = d.pop("policyValues")
        for name, value in pv["capacity"].items():
            d.setdefault("capacity", {})[name] = {"value": value, "requestPolicy": {
                "default": pv["default"], "validValues": [pv["default"], *pv.get("extra", [])]}}
    if "taints" in d:
        d["taints"] = [TAINTS[x] if isinstance(x, str) else x for x in d["taints"]]
    if "consumes" in d:
        d["consumesCounters"] = [{"counterSet": cs, "counters": {k: {"value": v} for k, v in counters.items()}}
                                 for cs, counters in d.pop("consumes").items()]
    if "node" in d:
        sel = d.pop("node")
        if sel == "all":
            d["allNodes"] = True
        elif isinstance(sel, dict):
            d["nodeSelector"] = node_selector(sel)
        else:
            d["nodeName"] = sel
    return [d]


def resource_slice(spec: Any) -> ResourceSlice:
    if isinstance(spec, list):
        spec = dict(zip(["name", "node", "pool", "driver", "devices"], spec, strict=False))
    pool = spec["pool"]
    if isinstance(pool, str):
        pool = [pool, 1, 1]
    name, count, *gen = pool
    s: dict[str, Any] = {"driver": spec["driver"],
                         "pool": {"name": name, "resourceSliceCount": count, "generation": gen[0] if gen else 1}}
    sel = spec.get("node")
    if sel == "all":
        s["allNodes"] = True
    elif sel == "perDevice":
        s["perDeviceNodeSelection"] = True
    elif isinstance(sel, dict):
        s["nodeSelector"] = node_selector(sel)
    elif sel is not None:
        s["nodeName"] = sel
    devices = [d for spec_d in spec.get("devices") or [] for d in device(spec_d)]
    if devices:
        s["devices"] = devices
    if "counterSets" in spec:
        s["sharedCounters"] = [{"name": cs, "counters": {k: {"value": v} for k, v in counters.items()}}
                               for cs, counters in spec["counterSets"].items()]
    return ResourceSlice.from_dict({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": spec["name"]},
                                    "spec": s})


def _exact(spec: dict[str, Any]) -> dict[str, Any]:
    """``{class, count (a number or All), adminAccess, selectors, tolerations, capacity}`` as v1 fields."""
    out: dict[str, Any] = {"deviceClassName": spec["class"]}
    count = spec.get("count", 1)
    if count == "All":
        out["allocationMode"] = "All"
    else:
        out["allocationMode"], out["count"] = "ExactCount", count
    if "adminAccess" in spec:
        out["adminAccess"] = spec["adminAccess"]
    if spec.get("selectors"):
        out["selectors"] = [{"cel": {"expression": e}} for e in spec["selectors"]]
    if spec.get("tolerations"):
        out["tolerations"] = [TOLERATIONS[x] if isinstance(x, str) else x for x in spec["tolerations"]]
    if "capacity" in spec:
        out["capacity"] = {"requests": spec["capacity"]}
    return out


def request(spec: Any, tolerations: list[Any] | None = None) -> dict[str, Any]:
    tolerations = [TOLERATIONS[x] if isinstance(x, str) else x for x in tolerations or []]
    if isinstance(spec, dict) and "class" in spec:
        ex = _exact(spec)
        if tolerations:
            ex["tolerations"] = list(ex.get("tolerations", [])) + tolerations
        return {"name": spec["name"], "exactly": ex}
    if isinstance(spec, list):
        name, cls, count, *selectors = spec
        exact: dict[str, Any] = {"deviceClassName": cls}
        if count == "All":
            exact["allocationMode"] = "All"
        else:
            exact["allocationMode"], exact["count"] = "ExactCount", count
        if selectors:
            exact["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        if tolerations:
            exact["tolerations"] = tolerations
        return {"name": name, "exactly": exact}
    if "firstAvailable" in spec:
        subs = []
        for sub in spec["firstAvailable"]:
            if isinstance(sub, list):
                sname, cls, count, *selectors = sub
                s: dict[str, Any] = {"name": sname, "deviceClassName": cls}
                if count == "All":
                    s["allocationMode"] = "All"
                else:
                    s["allocationMode"], s["count"] = "ExactCount", count
                if selectors:
                    s["selectors"] = [{"cel": {"expression": e}} for e in selectors]
                subs.append(s)
            elif "class" in sub:
                subs.append({"name": sub["name"], **_exact(sub)})
            else:
                subs.append(sub)
        return {"name": spec["name"], "firstAvailable": subs}
    return dict(spec)


def claim(spec: Any) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": [request(r, spec.get("tolerations")) for r in spec.get("requests", [])]}
    if spec.get("constraints"):
        devices["constraints"] = spec["constraints"]
    if spec.get("config"):
        devices["config"] = [{"requests": c.get("requests"), "opaque": opaque(c["driver"], c["attribute"])}
                             if "attribute" in c else c for c in spec["config"]]
    return ResourceClaim.from_dict({"apiVersion": V1, "kind": "ResourceClaim",
                                    "metadata": {"name": spec["name"], "namespace": ""},
                                    "spec": {"devices": devices}})


def allocated_state(case: dict[str, Any]) -> AllocatedState:
    """``allocated``: whole devices; ``allocatedCapacity``: ``[[driver, pool, device, {capacity: qty}], ...]``."""
    state = AllocatedState(allocated_devices={DeviceID(*d) for d in case.get("allocated") or []})
    for driver, pool, dev, caps in case.get("allocatedCapacity") or []:
        state.aggregated_capacity[DeviceID(driver, pool, dev)] = {
            (k if "/" in k else f"{driver}/{k}"): Quantity.parse(v) for k, v in caps.items()}
    return state


def expected_result(spec: dict[str, Any]) -> dict[str, Any]:
    """An expected AllocationResult in to_dict() shape (results compared as a multiset)."""
    out: dict[str, Any] = {"results": []}
    rows: list[Any] = []
    for r in spec.get("results") or []:
        if isinstance(r, dict) and "multi" in r:
            req, drv, pool, count, start = r["multi"]
            rows.extend([req, drv, pool, f"device-{i}"] for i in range(start, start + count))
        else:
            rows.append(r)
    for r in rows:
        if isinstance(r, dict):
            d0 = dict(r)
            if "tolerations" in d0:
                d0["tolerations"] = [TOLERATIONS[x] if isinstance(x, str) else x for x in d0["tolerations"]]
            out["results"].append(d0)
            continue
        d: dict[str, Any] = {"request": r[0], "driver": r[1], "pool": r[2], "device": r[3]}
        if len(r) > 4 and r[4]:
            d["adminAccess"] = True
        if len(r) > 5 and r[5]:
            d["tolerations"] = [TOLERATIONS[x] if isinstance(x, str) else x for x in r[5]]
        out["results"].append(d)
    if spec.get("nodeSelector") is not None:
        out["nodeSelector"] = node_selector(spec["nodeSelector"])
    if spec.get("config"):
        out["config"] = [{"source": c["source"], **({"requests": c["requests"]} if c.get("requests") else {}),
                          "opaque": opaque(c["driver"], c["attribute"])} for c in spec["config"]]
    return out
