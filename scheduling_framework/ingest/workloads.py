"""Workloads into pods: what the controllers would create from Deployments, ReplicaSets, StatefulSets, Jobs
and DaemonSets — "what if I apply these manifests" — minus the pods the input already has for each owner.

```python
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.ingest.workloads import expand_workloads

cluster = expand_workloads(load_cluster("manifests.yaml"), seed=1)   # a new Cluster; the input is unchanged
```

What each controller would do, as upstream's controllers do it:

- ReplicaSet / ReplicationController: ``spec.replicas`` (default 1) pods named ``<rs>-<5 random>``, minus its
  active pods (not finished, not being deleted);
- Deployment: its current ReplicaSet (the one it owns whose template is the Deployment's) scaled to the
  Deployment's replicas; when there is none, a new ReplicaSet ``<deployment>-<pod-template-hash>`` whose pods
  carry the ``pod-template-hash`` label. Rollouts are not simulated: older ReplicaSets keep their pods;
- StatefulSet: pods ``<sts>-<ordinal>`` (from ``spec.ordinals.start``) that do not exist yet, each with the
  PersistentVolumeClaims of its ``volumeClaimTemplates``, named ``<template>-<sts>-<ordinal>`` (missing
  claims are created, unbound, with the default StorageClass when they name none);
- Job: ``min(parallelism, completions - succeeded)`` active pods (``parallelism`` alone for a work queue
  that has no success yet), none when suspended or finished; Indexed jobs name pods ``<job>-<index>-<5 random>``;
- DaemonSet: one pod per node that should run it (node name, nodeSelector and required node affinity match,
  NoSchedule/NoExecute taints tolerated, counting the tolerations the controller adds) and has no active pod
  of it. The pod gets the controller's node affinity (``matchFields`` ``metadata.name`` In [node]) and its
  default tolerations, and goes through the scheduler like any pod.

Random name suffixes come from ``seed`` (the API server's alphabet, not its random sequence).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod, PodSpec
from scheduling_framework.api.selectors import NodeSelector
from scheduling_framework.api.taints import Taint, Toleration, find_matching_untolerated_taint
from scheduling_framework.errors import ValidationError
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.warning_list import Warnings

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "DaemonSet")
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
STATEFULSET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
# the API server's alphabet for generated names (no vowels, no confusable characters)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

WARN_NOT_EXPANDED = ("workload object(s) want pods the input does not have; pass --expand-workloads (CLI) or "
                     "call scheduling_framework.ingest.workloads.expand_workloads(cluster) to schedule them")
WARN_UNUSABLE = "ignored workload object(s) that could not be expanded"

# The tolerations the DaemonSet controller adds to every DaemonSet pod (key, effect); network-unavailable
# only with host networking.
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
_NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


@attrs.frozen
class WorkloadPods:
    """What one workload adds: its ref (``Kind namespace/name``), the new pods and the new objects."""

    workload: str
    pods: tuple[Pod, ...] = ()
    objects: tuple[KubeObject, ...] = ()


class _Names:
    """Generated names, unique among the pods of the input and those generated so far."""

    def __init__(self, taken: Iterable[str], seed: int | None) -> None:
        self.taken = set(taken)
        self.rng = random.Random(seed)

    def generate(self, namespace: str, prefix: str) -> str:
        while True:
            name = prefix + "".join(self.rng.choice(_ALPHANUMS) for _ in range(5))
            if f"{namespace}/{name}" not in self.taken:
                self.taken.add(f"{namespace}/{name}")
                return name


def template_hash(template: Any) -> str:
    """A stable hash of a pod template, in the shape of upstream's pod-template-hash (its value differs:
    upstream hashes the Go structure's printed form)."""
    h = 0x811C9DC5  # FNV-1a, 32 bits
    for b in json.dumps(template, sort_keys=True, default=str).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def is_active(pod: Pod) -> bool:
    """A pod a controller counts: not finished and not being deleted."""
    return pod.status.phase not in ("Succeeded", "Failed") and not pod.is_terminating


def _ref(o: KubeObject) -> str:
    return f"{o.kind} {o.namespace}/{o.name}" if o.namespace else f"{o.kind} {o.name}"


def _int(v: Any, default: int, path: str) -> int:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValidationError(f"expected a non-negative integer, got {v!r}", path)
    return v


def _map(v: Any, path: str) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ValidationError(f"expected an object, got {type(v).__name__}", path)
    return v


class _Expander:
    def __init__(self, cluster: Cluster, seed: int | None, count_only: bool) -> None:
        self.cluster = cluster
        self.count_only = count_only
        self.names = _Names((p.key for p in cluster.pods), seed)
        self.owned: dict[tuple[str, str, str], list[Pod]] = {}
        for p in cluster.pods:
            ref = p.metadata.controller_ref()
            if ref is not None:
                self.owned.setdefault((p.namespace, ref.kind, ref.name), []).append(p)
        self.objects = {(o.kind, o.namespace, o.name): o for o in cluster.objects}
        self.pod_keys = {p.key for p in cluster.pods}
        self.warnings = Warnings()
        # ReplicaSets whose replicas a Deployment decides: key -> replicas
        self.rs_replicas: dict[tuple[str, str], int] = {}
        self.counts: list[tuple[str, int]] = []

    def run(self) -> list[WorkloadPods]:
        out: list[WorkloadPods] = []
        kinds = {k: [o for o in self.cluster.objects if o.kind == k] for k in WORKLOAD_KINDS}
        # Deployments first: they decide their ReplicaSet's size
        for kind in WORKLOAD_KINDS:
            for o in kinds[kind]:
                try:
                    # a template no pod could be made of is reported, whether or not pods are built
                    PodSpec.from_dict(self._template(o)[1], "spec.template.spec")
                    w = getattr(self, f"_{kind.lower()}")(o)
                except (ValidationError, ValueError, TypeError, KeyError) as e:
                    self.warnings.add_item(WARN_UNUSABLE, f"{_ref(o)} ({e})")
                    continue
                if w is not None:
                    out.append(w)
        return out

    # helpers -----------------------------------------------------------------------------------
    def _template(self, o: KubeObject) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        tpl = _map(o.spec.get("template"), "spec.template")
        if not tpl:
            raise ValidationError("Required value: a pod template is required", "spec.template")
        return _map(tpl.get("metadata"), "spec.template.metadata"), _map(tpl.get("spec"), "spec.template.spec")

    def _pod(self, o: KubeObject, name: str, owner: Mapping[str, Any], labels: Mapping[str, str],
             spec: Mapping[str, Any], annotations: Mapping[str, str] | None = None,
             generate_name: str = "") -> Pod:
        meta_t, _ = self._template(o)
        meta: dict[str, Any] = {
            "name": name, "namespace": o.namespace,
            "labels": {**dict(_map(meta_t.get("labels"), "spec.template.metadata.labels")), **labels},
            "ownerReferences": [dict(owner)],
        }
        ann = {**dict(_map(meta_t.get("annotations"), "spec.template.metadata.annotations")), **(annotations or {})}
        if ann:
            meta["annotations"] = ann
        if generate_name:
            meta["generateName"] = generate_name
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(dict(spec)),
                    "status": {"phase": "Pending"}}
        self.pod_keys.add(f"{o.namespace}/{name}")
        return Pod.from_dict(manifest, strict=None)

    @staticmethod
    def _owner(api_version: str, kind: str, name: str, uid: str) -> dict[str, Any]:
        return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True,
                "blockOwnerDeletion": True}

    def _active(self, o: KubeObject, kind: str | None = None) -> list[Pod]:
        return [p for p in self.owned.get((o.namespace, kind or o.kind, o.name), ()) if is_active(p)]

    def _result(self, o: KubeObject, n: int, pods: Sequence[Pod] = (),
                objects: Sequence[KubeObject] = ()) -> WorkloadPods | None:
        if n <= 0:
            return None
        self.counts.append((_ref(o), n))
        return WorkloadPods(_ref(o), tuple(pods), tuple(objects))

    # controllers -------------------------------------------------------------------------------
    def _deployment(self, o: KubeObject) -> WorkloadPods | None:
        replicas = _int(o.spec.get("replicas"), 1, "spec.replicas")
        meta_t, spec_t = self._template(o)
        tpl = {"metadata": meta_t, "spec": spec_t}
        for rs in self.cluster.objects:
            if rs.kind != "ReplicaSet" or rs.namespace != o.namespace:
                continue
            ref = rs.metadata.controller_ref()
            if ref is None or ref.kind != "Deployment" or ref.name != o.name:
                continue
            rs_tpl = copy.deepcopy(dict(_map(rs.spec.get("template"), "spec.template")))
            labels = dict((rs_tpl.get("metadata") or {}).get("labels") or {})
            labels.pop(POD_TEMPLATE_HASH_LABEL, None)
            rs_tpl.setdefault("metadata", {})
            rs_tpl["metadata"] = {**rs_tpl["metadata"], "labels": labels}
            if _canonical(rs_tpl) == _canonical(tpl):
                self.rs_replicas[(rs.namespace, rs.name)] = replicas
                return None  # the ReplicaSet pass creates its pods
        h = template_hash(tpl)
        rs_name = f"{o.name}-{h}"
        rs_uid = f"{o.namespace}/{rs_name}"
        selector = dict(_map(o.spec.get("selector"), "spec.selector"))
        match = {**dict(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH_LABEL: h}
        rs_manifest = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name, "namespace": o.namespace, "uid": rs_uid,
                         "labels": {**dict(_map(meta_t.get("labels"), "labels")), POD_TEMPLATE_HASH_LABEL: h},
                         "ownerReferences": [self._owner("apps/v1", "Deployment", o.name, o.uid)]},
            "spec": {"replicas": replicas, "selector": {**selector, "matchLabels": match},
                     "template": {"metadata": {**dict(meta_t), "labels": {
                         **dict(_map(meta_t.get("labels"), "labels")), POD_TEMPLATE_HASH_LABEL: h}},
                         "spec": copy.deepcopy(dict(spec_t))}},
        }
        rs = KubeObject.from_dict(rs_manifest, strict=None)
        pods: list[Pod] = []
        if not self.count_only:
            owner = self._owner("apps/v1", "ReplicaSet", rs_name, rs_uid)
            for _ in range(replicas):
                name = self.names.generate(o.namespace, f"{rs_name}-")
                pods.append(self._pod(o, name, owner, {POD_TEMPLATE_HASH_LABEL: h}, spec_t,
                                      generate_name=f"{rs_name}-"))
        return self._result(o, replicas, pods, [rs])

    def _replicaset(self, o: KubeObject) -> WorkloadPods | None:
        replicas = self.rs_replicas.get((o.namespace, o.name))
        if replicas is None:
            replicas = _int(o.spec.get("replicas"), 1, "spec.replicas")
        _, spec_t = self._template(o)
        missing = replicas - len(self._active(o))
        pods: list[Pod] = []
        if missing > 0 and not self.count_only:
            owner = self._owner(str(o.raw.get("apiVersion") or "apps/v1"), o.kind, o.name, o.uid)
            for _ in range(missing):
                name = self.names.generate(o.namespace, f"{o.name}-")
                pods.append(self._pod(o, name, owner, {}, spec_t, generate_name=f"{o.name}-"))
        return self._result(o, missing, pods)

    _replicationcontroller = _replicaset

    def _statefulset(self, o: KubeObject) -> WorkloadPods | None:
        replicas = _int(o.spec.get("replicas"), 1, "spec.replicas")
        start = _int(_map(o.spec.get("ordinals"), "spec.ordinals").get("start"), 0, "spec.ordinals.start")
        meta_t, spec_t = self._template(o)
        claims = o.spec.get("volumeClaimTemplates") or []
        if not isinstance(claims, list):
            raise ValidationError("expected a list", "spec.volumeClaimTemplates")
        revision = f"{o.name}-{template_hash({'metadata': meta_t, 'spec': spec_t})}"
        selector_labels = dict(_map(_map(o.spec.get("selector"), "spec.selector").get("matchLabels"),
                                    "spec.selector.matchLabels"))
        pods: list[Pod] = []
        objects: list[KubeObject] = []
        n = 0
        for ordinal in range(start, start + replicas):
            name = f"{o.name}-{ordinal}"
            if f"{o.namespace}/{name}" in self.pod_keys:
                continue  # exists (even being deleted: the controller waits for it to go)
            n += 1
            if self.count_only:
                continue
            spec = copy.deepcopy(dict(spec_t))
            spec.setdefault("hostname", name)
            if o.spec.get("serviceName"):
                spec.setdefault("subdomain", o.spec["serviceName"])
            volumes = [v for v in spec.get("volumes") or []
                       if not any(isinstance(c, Mapping) and v.get("name") == _map(c.get("metadata"), "m").get("name")
                                  for c in claims)]
            for i, c in enumerate(claims):
                cmeta = _map(_map(c, f"spec.volumeClaimTemplates[{i}]").get("metadata"),
                             f"spec.volumeClaimTemplates[{i}].metadata")
                tname = str(cmeta.get("name") or "")
                if not tname:
                    raise ValidationError("Required value: name is required",
                                          f"spec.volumeClaimTemplates[{i}].metadata.name")
                claim = f"{tname}-{o.name}-{ordinal}"
                volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": claim}})
                if ("PersistentVolumeClaim", o.namespace, claim) not in self.objects:
                    objects.append(self._claim(o, c, claim, selector_labels))
            if volumes:
                spec["volumes"] = volumes
            owner = self._owner("apps/v1", "StatefulSet", o.name, o.uid)
            pods.append(self._pod(o, name, owner, {STATEFULSET_POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
                                                   "controller-revision-hash": revision}, spec))
        return self._result(o, n, pods, objects)

    def _claim(self, o: KubeObject, template: Mapping[str, Any], name: str,
               selector_labels: Mapping[str, str]) -> KubeObject:
        meta = dict(_map(template.get("metadata"), "metadata"))
        spec = copy.deepcopy(dict(_map(template.get("spec"), "spec")))
        if "storageClassName" not in spec:
            # the DefaultStorageClass admission plugin's doing
            defaults = [sc for sc in self.cluster.objects if sc.kind == "StorageClass"
                        and sc.annotations.get(DEFAULT_STORAGE_CLASS_ANNOTATION) == "true"]
            if defaults:
                spec["storageClassName"] = defaults[-1].name
        manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": name, "namespace": o.namespace,
                                 "labels": {**dict(meta.get("labels") or {}), **selector_labels}},
                    "spec": spec, "status": {"phase": "Pending"}}
        return KubeObject.from_dict(manifest, strict=None)

    def _job(self, o: KubeObject) -> WorkloadPods | None:
        if o.spec.get("suspend") is True:
            return None
        for c in o.status.get("conditions") or []:
            if isinstance(c, Mapping) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                return None
        parallelism = _int(o.spec.get("parallelism"), 1, "spec.parallelism")
        completions = o.spec.get("completions")
        owned = self.owned.get((o.namespace, "Job", o.name), [])
        succeeded = max(_int(o.status.get("succeeded"), 0, "status.succeeded"),
                        sum(p.status.phase == "Succeeded" for p in owned))
        active = [p for p in owned if is_active(p)]
        if completions is None:
            wanted = parallelism if succeeded == 0 else 0
        else:
            wanted = min(parallelism, _int(completions, 1, "spec.completions") - succeeded)
        missing = wanted - len(active)
        if missing <= 0:
            return None
        meta_t, spec_t = self._template(o)
        labels = {"batch.kubernetes.io/job-name": o.name, "job-name": o.name}
        if o.uid and o.uid != f"{o.namespace}/{o.name}":
            labels |= {"batch.kubernetes.io/controller-uid": o.uid, "controller-uid": o.uid}
        labels = {k: v for k, v in labels.items()
                  if k not in _map(meta_t.get("labels"), "spec.template.metadata.labels")}
        indexes: list[int | None] = [None] * missing
        if o.spec.get("completionMode") == "Indexed":
            done = {p.annotations.get(JOB_COMPLETION_INDEX) for p in owned if p.status.phase == "Succeeded"}
            busy = {p.annotations.get(JOB_COMPLETION_INDEX) for p in active}
            total = _int(completions, 1, "spec.completions")
            free = [i for i in range(total) if str(i) not in done and str(i) not in busy]
            indexes = list(free[:missing])
            missing = len(indexes)
        pods: list[Pod] = []
        if not self.count_only:
            owner = self._owner("batch/v1", "Job", o.name, o.uid)
            for idx in indexes:
                prefix = f"{o.name}-" if idx is None else f"{o.name}-{idx}-"
                name = self.names.generate(o.namespace, prefix)
                ann: dict[str, str] = {}
                lab = dict(labels)
                spec = spec_t
                if idx is not None:
                    ann[JOB_COMPLETION_INDEX] = str(idx)
                    lab[JOB_COMPLETION_INDEX] = str(idx)
                    spec = {**spec_t, "hostname": f"{o.name}-{idx}"}
                pods.append(self._pod(o, name, owner, lab, spec, ann, generate_name=prefix))
        return self._result(o, missing, pods)

    def _daemonset(self, o: KubeObject) -> WorkloadPods | None:
        meta_t, spec_t = self._template(o)
        on_nodes = set()
        for p in self._active(o):
            target = daemon_pod_target_node(p)
            if target:
                on_nodes.add(target)
        nodes = [n for n in self.cluster.nodes if n.name not in on_nodes and should_run_daemon_pod(o, n)]
        pods: list[Pod] = []
        if not self.count_only:
            owner = self._owner("apps/v1", "DaemonSet", o.name, o.uid)
            generation = str(o.raw.get("metadata", {}).get("generation") or 1)
            labels = {"controller-revision-hash": template_hash({"metadata": meta_t, "spec": spec_t}),
                      "pod-template-generation": generation}
            for n in nodes:
                name = self.names.generate(o.namespace, f"{o.name}-")
                pods.append(self._pod(o, name, owner, labels, daemon_pod_spec(spec_t, n.name),
                                      generate_name=f"{o.name}-"))
        return self._result(o, len(nodes), pods)


def _canonical(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


# --- DaemonSets ------------------------------------------------------------------------------------


def with_daemon_tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pod's tolerations with the DaemonSet controller's added (one with the same key, operator, value
    and effect is replaced, as upstream's AddOrUpdateTolerationInPodSpec does)."""
    tols = [dict(t) for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    wanted = list(_DAEMON_TOLERATIONS)
    if spec.get("hostNetwork"):
        wanted.append(_NETWORK_UNAVAILABLE)
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tols):
            if (t.get("key", ""), t.get("operator") or "Equal", t.get("value", ""), t.get("effect", "")) == \
                    (key, "Exists", "", effect):
                tols[i] = new
                break
        else:
            tols.append(new)
    return tols


def daemon_pod_spec(template_spec: Mapping[str, Any], node_name: str) -> dict[str, Any]:
    """A DaemonSet pod's spec for ``node_name``: the controller's tolerations, and its required node affinity
    replaced by ``matchFields: metadata.name In [node_name]``."""
    spec = copy.deepcopy(dict(template_spec))
    spec["tolerations"] = with_daemon_tolerations(spec)
    affinity = dict(spec.get("affinity") or {})
    na = dict(affinity.get("nodeAffinity") or {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    affinity["nodeAffinity"] = na
    spec["affinity"] = affinity
    return spec


def should_run_daemon_pod(ds: KubeObject, node: Node) -> bool:
    """Upstream's NodeShouldRunDaemonPod (for creating a pod): the template's node name, nodeSelector and
    required node affinity match the node, and its NoSchedule/NoExecute taints are tolerated (with the
    controller's tolerations)."""
    tpl = _map(ds.spec.get("template"), "spec.template")
    spec = _map(tpl.get("spec"), "spec.template.spec")
    if spec.get("nodeName") and spec.get("nodeName") != node.name:
        return False
    selector = _map(spec.get("nodeSelector"), "spec.template.spec.nodeSelector")
    for k, v in selector.items():
        if node.labels.get(str(k)) != str(v):
            return False
    req = _map(_map(_map(spec.get("affinity"), "affinity").get("nodeAffinity"), "nodeAffinity")
               .get("requiredDuringSchedulingIgnoredDuringExecution"), "required")
    if req:
        ns = NodeSelector.from_dict(req, "spec.template.spec.affinity.nodeAffinity."
                                         "requiredDuringSchedulingIgnoredDuringExecution")
        if not ns.matches(node.name, node.labels):
            return False
    tols = [Toleration.from_dict(t, f"spec.template.spec.tolerations[{i}]")
            for i, t in enumerate(with_daemon_tolerations(spec))]
    return find_matching_untolerated_taint(node.spec.taints, tols, _schedules_or_executes) is None


def _schedules_or_executes(t: Taint) -> bool:
    return t.effect in ("NoSchedule", "NoExecute")


def daemon_pod_target_node(pod: Pod) -> str:
    """The node a DaemonSet pod is for: ``spec.nodeName``, else its ``matchFields metadata.name In [x]``."""
    if pod.spec.node_name:
        return pod.spec.node_name
    aff = pod.spec.affinity
    req = aff.node_affinity.required_during_scheduling_ignored_during_execution \
        if aff is not None and aff.node_affinity is not None else None
    if req is None:
        return ""
    for term in req.node_selector_terms:
        for r in term.match_fields:
            if r.key == "metadata.name" and r.operator == "In" and len(r.values) == 1:
                return r.values[0]
    return ""


def daemonset_pods_for_node(objects: Iterable[KubeObject], node: Node, warnings: Warnings | None = None) -> list[Pod]:
    """The pods of the DaemonSets among ``objects`` that would run on ``node``, bound to it and named
    ``<daemonset>-<node>`` (what cluster-autoscaler adds to a node-group template). DaemonSets that cannot be
    used are reported in ``warnings``."""
    pods: list[Pod] = []
    for ds in objects:
        if ds.kind != "DaemonSet":
            continue
        try:
            if not should_run_daemon_pod(ds, node):
                continue
            tpl = _map(ds.spec.get("template"), "spec.template")
            meta_t = _map(tpl.get("metadata"), "spec.template.metadata")
            spec = daemon_pod_spec(_map(tpl.get("spec"), "spec.template.spec"), node.name)
            spec["nodeName"] = node.name
            name = f"{ds.name}-{node.name}"
            manifest = {"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": ds.namespace, "uid": f"{ds.namespace}/{name}",
                                     "labels": dict(_map(meta_t.get("labels"), "labels")),
                                     "ownerReferences": [_Expander._owner("apps/v1", "DaemonSet", ds.name, ds.uid)]},
                        "spec": spec, "status": {"phase": "Running"}}
            pods.append(Pod.from_dict(manifest, strict=None))
        except (ValidationError, ValueError, TypeError) as e:
            if warnings is not None:
                warnings.add_item(WARN_UNUSABLE, f"{_ref(ds)} ({e})")
    return pods


# --- entry points ----------------------------------------------------------------------------------


def plan_workloads(cluster: Cluster, seed: int | None = None) -> tuple[list[WorkloadPods], Warnings]:
    """The pods (and objects) each workload of ``cluster`` would add, and what could not be used."""
    ex = _Expander(cluster, seed, count_only=False)
    return ex.run(), ex.warnings


def expand_workloads(cluster: Cluster, seed: int | None = None) -> Cluster:
    """A new Cluster: ``cluster`` plus the pods (pending, after the input's pods) and objects (ReplicaSets of
    Deployments, PersistentVolumeClaims of StatefulSets) its workloads' controllers would create. Its
    ``warnings`` are the input's, less the hint to expand, plus workloads that could not be used."""
    planned, warnings = plan_workloads(cluster, seed)
    out = Cluster(list(cluster.nodes), list(cluster.pods), list(cluster.objects))
    for text in cluster.warnings.to_list():
        if not text.startswith(WARN_NOT_EXPANDED):
            out.warnings.add(text)
    out.warnings.extend(warnings)
    for w in planned:
        out.pods.extend(w.pods)
        out.objects.extend(w.objects)
    return out


def not_expanded_warning(cluster: Cluster, warnings: Warnings) -> None:
    """Add to ``warnings`` the workloads that want pods the input does not have (the hint to expand)."""
    if not any(o.kind in WORKLOAD_KINDS for o in cluster.objects):
        return
    ex = _Expander(cluster, 0, count_only=True)
    ex.run()
    warnings.extend(ex.warnings)
    for ref, n in ex.counts:
        warnings.add_item(WARN_NOT_EXPANDED, f"{ref} ({n})")


__all__ = [
    "WORKLOAD_KINDS", "WorkloadPods", "daemon_pod_spec", "daemon_pod_target_node", "daemonset_pods_for_node",
    "expand_workloads", "not_expanded_warning", "plan_workloads", "should_run_daemon_pod", "template_hash",
    "with_daemon_tolerations",
]
