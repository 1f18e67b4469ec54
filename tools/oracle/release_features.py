#!/usr/bin/env python3
"""Differential check of what Kubernetes 1.36 added, against a real kube-scheduler v1.36.2 (issue 41).

``../shared/upstream-go/diff.py`` draws random clusters with what 1.35 already had. This runner reuses it whole
(its oracle protocol, its comparison of every Filter verdict and normalized score, its summary) and adds, per
cluster, the release features 1.36 turned on by default, each drawn with its own seeded stream so that a
cluster's file is reproducible from its seed:

- ``declared``: NodeDeclaredFeatures (a default plugin from 1.36): nodes with and without
  ``status.declaredFeatures``; pending pods whose containers restart all containers on exit (needs
  ``RestartAllContainersOnContainerExits``) or that use host network with user namespaces.
- ``images``: image volumes (``volumes[].image``), which ImageLocality scores from 1.36.
- ``resize``: in-place resize on running pods (allocated resources and status resources that differ from the
  spec, ``PodResizePending``/``PodResizeInProgress`` conditions with Deferred/Infeasible), pod-level resources
  on running and pending pods.
- ``balanced``: the shapes that stress BalancedAllocation's 1.36 formula: pod overhead, limits-only
  containers, extended resources on nodes and pods, best-effort pods.
- ``dra`` (turns diff.py's ``--dra`` on): extended resources backed by DRA (a DeviceClass's
  ``extendedResourceName``), consumable capacity (``allowMultipleAllocations``, request policies, capacity
  requests), partitionable devices (shared counters in their own slice of the pool, devices consuming them),
  device taints and claim tolerations, admin access (namespace label), binding conditions, and pools of the
  same name from two drivers.

Usage (everything after the runner's own options goes to diff.py):

    python tools/oracle/release_features.py --upstream-go ../shared/upstream-go \\
        [--areas declared,images,resize,balanced,dra] -- \\
        --oracle /path/oracle-1.36 --kubernetes-version 1.36 --cli .venv/bin/scheduling-framework \\
        --work scratch/f136 --n 500 --rich

It prints diff.py's summary, then ``feature coverage``: how many clusters drew each feature, and writes the
same counts into the summary file under ``featureCoverage``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable
from typing import Any

AREAS = ("declared", "images", "resize", "balanced", "dra")

Doc = dict[str, Any]

# names NodeDeclaredFeatures knows at 1.36, plus one it does not (ignored by the scheduler)
DECLARED = ["RestartAllContainersOnContainerExits", "InPlacePodLevelResourcesVerticalScaling",
            "ExtendWebSocketsToKubelet", "InPlacePodVerticalScalingInitContainers",
            "UserNamespacesHostNetworkSupport", "SomeFutureFeature"]

_coverage: collections.Counter[str] = collections.Counter()
_lock = threading.Lock()


def _note(features: set[str]) -> None:
    with _lock:
        for f in features:
            _coverage[f] += 1


def _kind(docs: list[Doc], kind: str) -> list[Doc]:
    return [d for d in docs if d.get("kind") == kind]


def _pending(docs: list[Doc]) -> Doc:
    return [d for d in docs if d.get("kind") == "Pod" and not d["spec"].get("nodeName")][-1]


def _running(docs: list[Doc]) -> list[Doc]:
    return [d for d in docs if d.get("kind") == "Pod" and d["spec"].get("nodeName")]


# --- declared features ------------------------------------------------------------------------------------

def declared(docs: list[Doc], r: random.Random, seen: set[str]) -> None:
    for node in _kind(docs, "Node"):
        if r.random() < 0.6:
            feats = sorted(r.sample(DECLARED, r.randint(0, 4)))
            node["status"]["declaredFeatures"] = feats
            seen.add("declared: node lists features" if feats else "declared: node lists none")
    pod = _pending(docs)
    c = pod["spec"]["containers"][0]
    if r.random() < 0.5:
        c["restartPolicy"] = "Never"
        c["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                    "exitCodes": {"operator": "In", "values": [42]}}]
        seen.add("declared: pod restarts all containers")
    if r.random() < 0.25:
        pod["spec"]["hostNetwork"] = True
        pod["spec"]["hostUsers"] = False
        seen.add("declared: pod hostNetwork + user namespaces")
    if r.random() < 0.1:
        # an init container (not a sidecar) with its own rules: inferred too
        pod["spec"].setdefault("initContainers", []).append(
            {"name": "init-rules", "image": "busybox:1.36", "restartPolicy": "Never",
             "restartPolicyRules": [{"action": "RestartAllContainers",
                                     "exitCodes": {"operator": "NotIn", "values": [0]}}]})
        seen.add("declared: init container restarts all")


# --- image volumes ----------------------------------------------------------------------------------------

IMAGE_SPELLINGS = ["nginx:1.25", "docker.io/library/nginx:1.25", "redis:7", "docker.io/library/redis:7",
                   "busybox:1.36", "registry.k8s.io/pause:3.9", "postgres:16", "quay.io/prom/prometheus:v2",
                   "python:3.12", "ghcr.io/example/model-weights:v3", "nginx"]


def images(docs: list[Doc], r: random.Random, seen: set[str]) -> None:
    pods = [_pending(docs)] + [p for p in _running(docs) if r.random() < 0.2]
    for pod in pods:
        n = r.randint(1, 3)
        vols = pod["spec"].setdefault("volumes", [])
        for i in range(n):
            vol: Doc = {"name": f"iv{i}", "image": {"reference": r.choice(IMAGE_SPELLINGS)}}
            if r.random() < 0.3:
                vol["image"]["pullPolicy"] = r.choice(["IfNotPresent", "Always", "Never"])
            vols.append(vol)
        if pod["spec"].get("nodeName") is None:
            seen.add(f"images: pending pod has {n} image volume(s)")
    # a node image that only an image volume names
    for node in _kind(docs, "Node"):
        if r.random() < 0.3:
            node["status"].setdefault("images", []).append(
                {"names": ["ghcr.io/example/model-weights:v3"], "sizeBytes": r.choice([300, 900, 4000]) * 2**20})
            seen.add("images: node holds a volume image")


# --- in-place resize and pod-level resources --------------------------------------------------------------

def _bump(quantities: dict[str, str], r: random.Random) -> dict[str, str]:
    out = {}
    for k, v in quantities.items():
        if k == "cpu":
            out[k] = f"{r.choice([50, 100, 300, 750, 1500, 3000])}m"
        elif k == "memory":
            out[k] = f"{r.choice([64, 256, 700, 2048, 6000])}Mi"
        else:
            out[k] = v
    return out


def resize(docs: list[Doc], r: random.Random, seen: set[str]) -> None:
    for pod in _running(docs):
        if r.random() >= 0.3:
            continue
        spec_c = pod["spec"]["containers"]
        statuses = []
        for c in spec_c:
            req = (c.get("resources") or {}).get("requests") or {"cpu": "100m", "memory": "128Mi"}
            st: Doc = {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True,
                       "restartCount": 0}
            shape = r.random()
            if shape < 0.5:
                st["allocatedResources"] = _bump(req, r)
                seen.add("resize: allocatedResources differ from spec")
            if r.random() < 0.6:
                st["resources"] = {"requests": _bump(req, r)}
                seen.add("resize: status resources differ from spec")
            statuses.append(st)
        pod.setdefault("status", {})["containerStatuses"] = statuses
        cond = r.random()
        if cond < 0.3:
            reason = r.choice(["Deferred", "Infeasible"])
            pod["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": reason}]
            seen.add(f"resize: PodResizePending/{reason}")
        elif cond < 0.5:
            pod["status"]["conditions"] = [{"type": "PodResizeInProgress", "status": "True"}]
            seen.add("resize: PodResizeInProgress")
    for pod in [*_running(docs), _pending(docs)]:
        if r.random() >= 0.2:
            continue
        total_cpu = total_mem = 0
        for c in pod["spec"]["containers"]:
            req = (c.get("resources") or {}).get("requests") or {}
            total_cpu += _milli(req.get("cpu", "0"))
            total_mem += _mebi(req.get("memory", "0"))
        res: Doc = {"requests": {"cpu": f"{max(total_cpu, 100) + r.choice([0, 200, 1000])}m",
                                 "memory": f"{max(total_mem, 64) + r.choice([0, 256, 1024])}Mi"}}
        if r.random() < 0.4:
            res["limits"] = {"cpu": f"{max(total_cpu, 100) + 2000}m"}
        pod["spec"]["resources"] = res
        seen.add("resize: pod-level resources" + (" (pending)" if not pod["spec"].get("nodeName") else ""))
        if pod["spec"].get("nodeName") and r.random() < 0.4:
            pod.setdefault("status", {})["allocatedResources"] = _bump(res["requests"], r)
            pod["status"]["resources"] = {"requests": _bump(res["requests"], r)}
            seen.add("resize: pod-level status resources")


def _milli(q: str) -> int:
    q = str(q)
    if q.endswith("m"):
        return int(float(q[:-1]))
    return int(float(q) * 1000)


def _mebi(q: str) -> int:
    q = str(q)
    if q.endswith("Mi"):
        return int(float(q[:-2]))
    if q.endswith("Gi"):
        return int(float(q[:-2]) * 1024)
    if q.endswith("Ki"):
        return int(float(q[:-2]) / 1024)
    return int(float(q) / 2**20)


# --- BalancedAllocation shapes ----------------------------------------------------------------------------

def balanced(docs: list[Doc], r: random.Random, seen: set[str]) -> None:
    pending = _pending(docs)
    pods = [pending] + [p for p in _running(docs) if r.random() < 0.15]
    for pod in pods:
        shape = r.random()
        c = pod["spec"]["containers"][0]
        if shape < 0.25:
            pod["spec"]["overhead"] = {"cpu": f"{r.choice([10, 100, 250])}m", "memory": f"{r.choice([16, 120])}Mi"}
            seen.add("balanced: pod overhead")
        elif shape < 0.45:
            lim = {"cpu": f"{r.choice([200, 900, 2500])}m", "memory": f"{r.choice([100, 900, 3000])}Mi"}
            c["resources"] = {"limits": lim}
            seen.add("balanced: limits-only container")
        elif shape < 0.6:
            c.pop("resources", None)
            seen.add("balanced: best-effort container")
        elif shape < 0.8:
            c.setdefault("resources", {}).setdefault("requests", {})["example.com/fpga"] = str(r.randint(1, 2))
            seen.add("balanced: extended resource request")
    for node in _kind(docs, "Node"):
        if r.random() < 0.4:
            for k in ("capacity", "allocatable"):
                node["status"][k]["example.com/fpga"] = str(r.randint(0, 4))
            seen.add("balanced: node offers an extended resource")


# --- DRA at 1.36 ------------------------------------------------------------------------------------------

def dra(docs: list[Doc], r: random.Random, seen: set[str], taint_rules: bool = False) -> list[Doc]:
    slices = _kind(docs, "ResourceSlice")
    classes = _kind(docs, "DeviceClass")
    claims = _kind(docs, "ResourceClaim")
    pending = _pending(docs)
    extra: list[Doc] = []
    # device taints on some devices, tolerations on some pending claim requests
    for s in slices:
        for dev in s["spec"].get("devices", []):
            if r.random() < 0.12:
                taint = {"key": r.choice(["example.com/unhealthy", "example.com/maint"]),
                         "effect": r.choice(["NoSchedule", "NoSchedule", "NoExecute"])}
                if r.random() < 0.6:
                    taint["value"] = r.choice(["true", "soon"])
                dev["taints"] = [taint]
                seen.add(f"dra: device taint {taint['effect']}")
            if r.random() < 0.08:
                dev["bindingConditions"] = ["example.com/attached"]
                dev["bindingFailureConditions"] = ["example.com/failed"]
                if r.random() < 0.5:
                    dev["bindsToNode"] = True
                seen.add("dra: device with binding conditions")
    pending_claims = [c for c in claims if c["metadata"]["name"].startswith("pending-")]
    for c in pending_claims:
        for req in c["spec"]["devices"]["requests"]:
            subs = [req["exactly"]] if "exactly" in req else req.get("firstAvailable", [])
            for sub in subs:
                if r.random() < 0.25:
                    tol: Doc = {"key": "example.com/unhealthy", "operator": r.choice(["Exists", "Equal"])}
                    if tol["operator"] == "Equal":
                        tol["value"] = "true"
                    if r.random() < 0.5:
                        tol["effect"] = r.choice(["NoSchedule", "NoExecute"])
                    sub["tolerations"] = [tol]
                    seen.add("dra: claim tolerates a device taint")
        if r.random() < 0.12 and "exactly" in c["spec"]["devices"]["requests"][0]:
            c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
            seen.add("dra: adminAccess request")
            if r.random() < 0.7:
                for ns in _kind(docs, "Namespace"):
                    if ns["metadata"]["name"] == "default":
                        ns["metadata"].setdefault("labels", {})["resource.kubernetes.io/admin-access"] = "true"
                        seen.add("dra: adminAccess namespace labelled")
    # consumable capacity: a shared NIC on some nodes, claimed with capacity requests
    nodes = [n["metadata"]["name"] for n in _kind(docs, "Node")]
    if r.random() < 0.35:
        seen.add("dra: consumable capacity")
        policy_kind = r.random()
        for nn in r.sample(nodes, min(len(nodes), r.randint(1, 4))):
            bw: Doc = {"value": r.choice(["10G", "40G", "100G"])}
            if policy_kind < 0.4:
                bw["requestPolicy"] = {"default": "1G", "validRange": {"min": "1G", "step": "1G"}}
            elif policy_kind < 0.7:
                bw["requestPolicy"] = {"default": "5G", "validValues": ["5G", "10G", "25G"]}
            extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{nn}-shared"},
                          "spec": {"driver": "shared.example.com", "nodeName": nn,
                                   "pool": {"name": nn, "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": "vf", "allowMultipleAllocations": True,
                                                "capacity": {"bandwidth": bw}}]}})
        extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "shared"},
                      "spec": {"selectors": [{"cel": {"expression": 'device.driver == "shared.example.com"'}}]}})
        req: Doc = {"deviceClassName": "shared", "allocationMode": "ExactCount", "count": 1}
        if r.random() < 0.8:
            req["capacity"] = {"requests": {"bandwidth": r.choice(["1G", "5G", "7G", "30G", "60G"])}}
        _add_pending_claim(docs, pending, "pending-shared", [{"name": "bw", "exactly": req}], extra)
        # running pods already holding a share
        for p in _running(docs):
            if r.random() < 0.1:
                nn = p["spec"]["nodeName"]
                cname = f"{p['metadata']['name']}-share"
                ns = p["metadata"]["namespace"]
                extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": cname, "namespace": ns, "uid": f"uid-{ns}-{cname}"},
                              "spec": {"devices": {"requests": [{"name": "bw", "exactly": {
                                  "deviceClassName": "shared", "allocationMode": "ExactCount", "count": 1,
                                  "capacity": {"requests": {"bandwidth": "8G"}}}}]}},
                              "status": {"allocation": {"devices": {"results": [
                                  {"request": "bw", "driver": "shared.example.com", "pool": nn, "device": "vf",
                                   "shareID": f"{zlib.crc32(cname.encode()) % 10**8:08d}-0000-4000-8000-000000000000",
                                   "consumedCapacity": {"bandwidth": "8G"}}]}},
                                  "reservedFor": [{"resource": "pods", "name": p["metadata"]["name"],
                                                   "uid": f"{ns}/{p['metadata']['name']}"}]}})
                p["metadata"]["uid"] = f"{ns}/{p['metadata']['name']}"
                p["spec"].setdefault("resourceClaims", []).append({"name": "share", "resourceClaimName": cname})
                seen.add("dra: running pod holds a capacity share")
    # partitionable devices: a counter set in its own slice, partitions consuming it
    if r.random() < 0.35:
        seen.add("dra: partitionable devices")
        for nn in r.sample(nodes, min(len(nodes), r.randint(1, 4))):
            total = r.choice([40, 80])
            extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{nn}-mig-counters"},
                          "spec": {"driver": "mig.example.com", "nodeName": nn,
                                   "pool": {"name": f"{nn}-mig", "generation": 1, "resourceSliceCount": 2},
                                   "sharedCounters": [{"name": "gpu-0", "counters": {
                                       "memory": {"value": f"{total}Gi"}}}]}})
            devs = []
            for i, size in enumerate(r.sample([10, 20, 40, 40, 80], r.randint(2, 4))):
                devs.append({"name": f"mig-{i}-{size}g",
                             "attributes": {"size": {"int": size}},
                             "capacity": {"memory": {"value": f"{size}Gi"}},
                             "consumesCounters": [{"counterSet": "gpu-0", "counters": {
                                 "memory": {"value": f"{size}Gi"}}}]})
            extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{nn}-mig-devices"},
                          "spec": {"driver": "mig.example.com", "nodeName": nn,
                                   "pool": {"name": f"{nn}-mig", "generation": 1, "resourceSliceCount": 2},
                                   "devices": devs}})
        extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "mig"},
                      "spec": {"selectors": [{"cel": {"expression": 'device.driver == "mig.example.com"'}}]}})
        reqs = []
        for j in range(r.randint(1, 2)):
            q: Doc = {"deviceClassName": "mig", "allocationMode": "ExactCount", "count": r.choice([1, 1, 2])}
            if r.random() < 0.5:
                q["selectors"] = [{"cel": {"expression":
                                           f'device.attributes["mig.example.com"].size >= {r.choice([20, 40])}'}}]
            reqs.append({"name": f"p{j}", "exactly": q})
        _add_pending_claim(docs, pending, "pending-mig", reqs, extra)
    # extended resources backed by DRA
    if r.random() < 0.3 and classes:
        cls = r.choice(classes)
        cls["spec"]["extendedResourceName"] = "example.com/dra-gpu"
        seen.add("dra: DeviceClass backs an extended resource")
        c = pending["spec"]["containers"][0]
        c.setdefault("resources", {}).setdefault("requests", {})["example.com/dra-gpu"] = str(r.choice([1, 1, 2]))
        c["resources"].setdefault("limits", {})["example.com/dra-gpu"] = c["resources"]["requests"][
            "example.com/dra-gpu"]
        seen.add("dra: pod requests a DRA-backed extended resource")
        for node in _kind(docs, "Node"):
            if r.random() < 0.2:
                for k in ("capacity", "allocatable"):
                    node["status"][k]["example.com/dra-gpu"] = str(r.randint(1, 2))
                seen.add("dra: node also offers it as a device-plugin resource")
    # DeviceTaintRules (their gate is off by default at 1.35 and 1.36: run with
    # --feature-gates DRADeviceTaints=true,DRADeviceTaintRules=true to draw them)
    if taint_rules and slices and r.random() < 0.5:
        for i in range(r.randint(1, 3)):
            s = r.choice(slices)
            sel: Doc = {"driver": s["spec"]["driver"]}
            if r.random() < 0.7:
                sel["pool"] = s["spec"]["pool"]["name"]
            if r.random() < 0.5 and s["spec"].get("devices"):
                sel["device"] = r.choice(s["spec"]["devices"])["name"]
            taint = {"key": r.choice(["example.com/unhealthy", "example.com/maint"]),
                     "effect": r.choice(["NoSchedule", "NoExecute"])}
            if r.random() < 0.5:
                taint["value"] = "true"
            extra.append({"apiVersion": f"resource.k8s.io/{TAINT_RULE_VERSION[0]}", "kind": "DeviceTaintRule",
                          "metadata": {"name": f"rule-{i}"},
                          "spec": {"deviceSelector": sel, "taint": taint}})
            seen.add("dra: DeviceTaintRule" + (" (one device)" if "device" in sel else ""))
    # two drivers, one pool name
    if r.random() < 0.25:
        for s in slices:
            if r.random() < 0.5:
                s["spec"]["pool"]["name"] = "shared-pool-" + s["spec"]["nodeName"]
        seen.add("dra: pools renamed (two drivers, one pool name)")
    for s in slices:
        if "pool" in s["spec"]:
            s["spec"]["pool"].setdefault("generation", 1)
    # insert the new objects before the pending pod
    out = [d for d in docs if d is not pending] + extra + [pending]
    return out


def _add_pending_claim(docs: list[Doc], pending: Doc, name: str, requests: list[Doc], extra: list[Doc]) -> None:
    extra.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                  "metadata": {"name": name, "namespace": "default", "uid": f"uid-default-{name}"},
                  "spec": {"devices": {"requests": requests}}})
    spec = pending["spec"]
    refs = spec.setdefault("resourceClaims", [])
    ref = f"x{len(refs)}"
    refs.append({"name": ref, "resourceClaimName": name})
    spec["containers"][0].setdefault("resources", {}).setdefault("claims", []).append({"name": ref})


MUTATORS: dict[str, Callable[[list[Doc], random.Random, set[str]], None]] = {
    "declared": declared, "images": images, "resize": resize, "balanced": balanced,
}


def install(diff: Any, areas: list[str], prob: float, gates: str = "") -> None:
    """Wraps diff.py's generators: its clusters, then the 1.36 features of ``areas``."""
    orig_gen = diff.gen_cluster
    orig_dra = diff.dra

    def gen_cluster(seed: int, rich: bool = False) -> list[Doc]:
        docs = orig_gen(seed, rich=rich)
        seen: set[str] = set()
        for i, area in enumerate(a for a in AREAS if a in areas and a != "dra"):
            r = random.Random(seed * 1_000_003 + 7919 * (i + 1))
            if r.random() < prob:
                MUTATORS[area](docs, r, seen)
        if "dra" not in areas:
            _note(seen or {"(no feature drawn)"})
        else:
            with _lock:
                _pending_seen[seed] = seen
        return docs

    def dra_gen(docs: list[Doc], seed: int) -> list[Doc]:
        docs = orig_dra(docs, seed)
        with _lock:
            seen = _pending_seen.pop(seed, set())
        r = random.Random(seed * 1_000_033 + 31)
        docs = dra(docs, r, seen, taint_rules="DRADeviceTaintRules=true" in gates)
        _note(seen or {"(no feature drawn)"})
        return docs

    diff.gen_cluster = gen_cluster
    diff.dra = dra_gen
    # diff.py's later generators (wild, edge, preemptify, volumes) may add requests to a container whose
    # limits the balanced area set: raise such limits so that every pod stays valid (the API would refuse it)
    for name in ("wild", "edge", "preemptify", "volumes", "dra"):
        setattr(diff, name, _then_valid(getattr(diff, name)))
    orig_compare = diff.compare

    def compare(go: Doc, py: Doc, preempt: bool = False, docs: list[Doc] | None = None) -> Any:
        # The oracle runs the preemption dry run whenever no node fits; the real scheduler never reaches
        # PostFilter after a Filter Error (the cycle aborts), which is what both sides then compare.
        if preempt and any(v.get("code") == "Error" for v in (go.get("filter") or {}).values()):
            go = {k: v for k, v in go.items() if k != "preemption"}
            preempt = False
        gp = go.get("preemption") or {}
        message = str(py.get("message") or "").rstrip(".")
        if preempt and gp.get("error") and message.endswith("preemption: " + gp["error"]):
            # both dry runs failed with the same error (the pod's message carries PostFilter's error)
            return orig_compare({k: v for k, v in go.items() if k != "preemption"}, py, preempt=False, docs=docs)
        return orig_compare(go, py, preempt=preempt, docs=docs)

    diff.compare = compare
    if gates:
        diff.subprocess = _GatedSubprocess(gates)


def _then_valid(gen: Callable[[list[Doc], int], list[Doc]]) -> Callable[[list[Doc], int], list[Doc]]:
    def wrapped(docs: list[Doc], seed: int) -> list[Doc]:
        out = gen(docs, seed)
        for d in out:
            if d.get("kind") != "Pod":
                continue
            for c in d["spec"].get("containers", []) + d["spec"].get("initContainers", []):
                res = c.get("resources") or {}
                lim, req = res.get("limits") or {}, res.get("requests") or {}
                for k in list(lim):
                    if k in req and _amount(k, req[k]) > _amount(k, lim[k]):
                        lim[k] = req[k]
        return out
    return wrapped


def _amount(name: str, q: Any) -> float:
    if name == "cpu":
        return float(_milli(q))
    if name == "memory":
        return float(_mebi(q))
    return float(str(q).rstrip("GiMK") or 0)


class _GatedSubprocess:
    """diff.py's ``subprocess`` with the feature gates added to both sides' command lines."""

    def __init__(self, gates: str) -> None:
        self.gates = gates

    def run(self, cmd: list[str], **kw: Any) -> Any:
        if len(cmd) > 1 and cmd[1] == "schedule":
            cmd = [*cmd, "--feature-gates", self.gates]
        else:
            cmd = [cmd[0], "-feature-gates", self.gates, *cmd[1:]]
        return subprocess.run(cmd, **kw)


_pending_seen: dict[int, set[str]] = {}
# the DeviceTaintRule version the oracle's slice tracker reads: v1alpha3 in v1.35.4 and (despite serving its
# informer as v1beta2, which makes it panic on any rule) in v1.36.2
TAINT_RULE_VERSION = ["v1alpha3"]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream-go", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                                                          "upstream-go"),
                    help="the directory holding diff.py (default: ../shared/upstream-go beside the checkout)")
    ap.add_argument("--areas", default=",".join(AREAS), help=f"comma-separated subset of {','.join(AREAS)}")
    ap.add_argument("--prob", type=float, default=0.8, help="chance that a cluster draws each chosen area")
    ap.add_argument("--taint-rule-version", default="v1alpha3", help="apiVersion of the drawn DeviceTaintRules")
    ap.add_argument("--feature-gates", default="", help="set on both sides (the oracle built from "
                    "tools/oracle/main.go takes -feature-gates); DRADeviceTaintRules=true also draws DeviceTaintRules")
    ours, rest = ap.parse_known_args(argv)
    if rest and rest[0] == "--":
        rest = rest[1:]
    areas = [a.strip() for a in ours.areas.split(",") if a.strip()]
    unknown = [a for a in areas if a not in AREAS]
    if unknown:
        ap.error(f"unknown area(s) {unknown}; known: {', '.join(AREAS)}")
    sys.path.insert(0, os.path.abspath(ours.upstream_go))
    import diff

    if "dra" in areas and "--dra" not in rest:
        rest.append("--dra")
    TAINT_RULE_VERSION[0] = ours.taint_rule_version
    install(diff, areas, ours.prob, ours.feature_gates)
    sys.argv = ["diff.py", *rest]
    diff.main()
    args = _summary_path(rest)
    coverage = dict(_coverage.most_common())
    print("feature coverage (clusters that drew each):")
    print(json.dumps(coverage, indent=1))
    if args and os.path.exists(args):
        with open(args) as f:
            summary = json.load(f)
        summary["featureCoverage"] = coverage
        summary["areas"] = areas
        with open(args, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


def _summary_path(rest: list[str]) -> str | None:
    def opt(name: str) -> str | None:
        for i, a in enumerate(rest):
            if a == name and i + 1 < len(rest):
                return rest[i + 1]
            if a.startswith(name + "="):
                return a.split("=", 1)[1]
        return None
    return opt("--summary") or os.path.join(opt("--work") or "scratch/go-oracle", "summary.json")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

