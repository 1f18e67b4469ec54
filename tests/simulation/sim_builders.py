"""Builders for the simulation tests (not a test module): nodes, pods and configurations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduling_framework.api import Node, Pod

API_VERSION = "kubescheduler.config.k8s.io/v1"
ZONE = "topology.kubernetes.io/zone"


def default_config(extra_profile: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The default profile (upstream's default plugins), with ``extra_profile`` keys merged into it."""
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if extra_profile:
        profile.update(extra_profile)
    return {"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def make_node(name: str, cpu: str = "4", memory: str = "16Gi", pods: str = "110", zone: str | None = None,
              labels: Mapping[str, str] | None = None, taints: Sequence[Mapping[str, Any]] = (),
              images: Sequence[tuple[Sequence[str], int]] = (), unschedulable: bool = False) -> Node:
    lab = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone is not None:
        lab[ZONE] = zone
    d: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
        "spec": {"taints": [dict(t) for t in taints], "unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                   "images": [{"names": list(n), "sizeBytes": s} for n, s in images]},
    }
    return Node.from_dict(d)


def make_pod(name: str, cpu: str = "100m", memory: str = "128Mi", node: str | None = None, namespace: str = "default",
             labels: Mapping[str, str] | None = None, priority: int | None = None,
             host_ports: Sequence[int] = (), pvcs: Sequence[str] = (),
             anti_affinity_to: Mapping[str, str] | None = None, affinity_to: Mapping[str, str] | None = None,
             tolerations: Sequence[Mapping[str, Any]] = (), nominated: str | None = None,
             owner_kind: str | None = None, uid: str | None = None, gates: Sequence[str] = (),
             spread_on: str | None = None) -> Pod:
    container: dict[str, Any] = {"name": "c", "image": "nginx",
                                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if host_ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in host_ports]
    spec: dict[str, Any] = {"containers": [container]}
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if uid is not None:
        meta["uid"] = uid
    if owner_kind is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner_kind, "name": "owner", "uid": "o-1",
                                    "controller": True}]
    if node is not None:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    if pvcs:
        spec["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)]
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    affinity: dict[str, Any] = {}
    if anti_affinity_to is not None:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": dict(anti_affinity_to)}, "topologyKey": "kubernetes.io/hostname"}]}
    if affinity_to is not None:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": dict(affinity_to)}, "topologyKey": "kubernetes.io/hostname"}]}
    if affinity:
        spec["affinity"] = affinity
    if spread_on is not None:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": spread_on,
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": dict(labels or {})}}]
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if nominated is not None:
        d["status"] = {"nominatedNodeName": nominated}
    return Pod.from_dict(d)
