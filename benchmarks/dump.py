"""A realistic ``kubectl get nodes,pods -A -o yaml|json`` dump of a production-size cluster, for benchmarks/ingest.py.

The shape is what kubectl prints for a cloud cluster: one ``kind: List`` whose items are Nodes (cloud and
topology labels, annotations, taints on some, ``status`` with capacity, allocatable, conditions, addresses,
daemonEndpoints, nodeInfo and a list of ~40 images with sizes) and Pods (ownerReferences to ReplicaSets,
StatefulSets and DaemonSets, containers with resources, env, ports, probes and mounts, a projected service
account volume, tolerations, and ``status`` with conditions, IPs and container statuses), 30 pods per node
of which ~2 % are pending. ``managed_fields=True`` adds the server-side apply bookkeeping that
``kubectl get`` prints by default before 1.21 and with ``--show-managed-fields``: a few kB per object.

The dump is written item by item (never held in memory), deterministic for a given size::

    python -m benchmarks.dump --nodes 5000 --format json > dump.json
    python -m benchmarks.dump --nodes 500 --format yaml --managed-fields > dump.yaml
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from typing import Any, TextIO

PODS_PER_NODE = 30
PENDING_FRACTION = 0.02
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
INSTANCE_TYPES = (("m5.2xlarge", "8", "32Gi"), ("m5.4xlarge", "16", "64Gi"), ("c5.4xlarge", "16", "32Gi"),
                  ("r5.2xlarge", "8", "64Gi"))
APPS = ("web", "api", "checkout", "search", "cart", "auth", "payments", "catalog", "ledger", "notify", "ingest",
        "report", "billing", "profile", "feed", "media")
TS = "2026-11-20T10:15:30Z"


def _managed(manager: str, operation: str, n: int) -> list[dict[str, Any]]:
    fields: dict[str, Any] = {"f:metadata": {"f:labels": {f"f:label-{i}": {} for i in range(n)},
                                             "f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}},
                              "f:spec": {"f:containers": {'k:{"name":"app"}': {
                                  ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                                  "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}},
                                                  "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
                                  "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                                  "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                                  "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}
    status = {"f:status": {"f:conditions": {f'k:{{"type":"{t}"}}': {".": {}, "f:lastProbeTime": {},
                                                                     "f:lastTransitionTime": {}, "f:status": {},
                                                                     "f:type": {}}
                                            for t in ("ContainersReady", "Initialized", "Ready")},
                           "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {},
                           "f:podIPs": {".": {}, 'k:{"ip":"10.0.0.1"}': {".": {}, "f:ip": {}}}, "f:startTime": {}}}
    return [{"manager": manager, "operation": operation, "apiVersion": "v1", "time": TS, "fieldsType": "FieldsV1",
             "fieldsV1": fields},
            {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": TS, "fieldsType": "FieldsV1",
             "fieldsV1": status, "subresource": "status"}]


def node(i: int, rng: random.Random, managed_fields: bool) -> dict[str, Any]:
    name = f"ip-10-{i // 250}-{i % 250}-{rng.randint(1, 254)}.ec2.internal"
    itype, cpu, mem = INSTANCE_TYPES[i % len(INSTANCE_TYPES)]
    zone = ZONES[i % len(ZONES)]
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": itype,
              "beta.kubernetes.io/os": "linux", "eks.amazonaws.com/capacityType": "ON_DEMAND",
              "eks.amazonaws.com/nodegroup": f"ng-{i % 7}", "eks.amazonaws.com/nodegroup-image": "ami-0abc1234def",
              "failure-domain.beta.kubernetes.io/region": "us-east-1", "failure-domain.beta.kubernetes.io/zone": zone,
              "k8s.io/cloud-provider-aws": "a1b2c3d4e5f6", "kubernetes.io/arch": "amd64",
              "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": itype,
              "topology.ebs.csi.aws.com/zone": zone, "topology.kubernetes.io/region": "us-east-1",
              "topology.kubernetes.io/zone": zone, "team": f"team-{i % 5}"}
    meta: dict[str, Any] = {
        "name": name, "uid": f"00000000-0000-4000-8000-{i:012d}", "resourceVersion": str(1000000 + i),
        "creationTimestamp": TS, "labels": labels,
        "annotations": {"alpha.kubernetes.io/provided-node-ip": f"10.{i // 250}.{i % 250}.1",
                        "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": f"i-{i:017x}"}),
                        "node.alpha.kubernetes.io/ttl": "0",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true"}}
    if managed_fields:
        meta["managedFields"] = _managed("kubelet", "Update", 17)
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{i:017x}"}
    if i % 50 == 0:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    images = [{"names": [f"123456789012.dkr.ecr.us-east-1.amazonaws.com/app-{(i + k) % 120}@sha256:{k:064x}",
                         f"123456789012.dkr.ecr.us-east-1.amazonaws.com/app-{(i + k) % 120}:v{k}"],
               "sizeBytes": 50_000_000 + 1_000_003 * k} for k in range(40)]
    status = {
        "capacity": {"cpu": cpu, "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                     "memory": mem, "pods": "110"},
        "allocatable": {"cpu": str(int(cpu) * 1000 - 90) + "m", "ephemeral-storage": "95551679124",
                        "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": mem, "pods": "110"},
        "conditions": [{"type": t, "status": s, "lastHeartbeatTime": TS, "lastTransitionTime": TS, "reason": r,
                        "message": m} for t, s, r, m in (
            ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))],
        "addresses": [{"type": "InternalIP", "address": f"10.{i // 250}.{i % 250}.1"},
                      {"type": "Hostname", "address": name}, {"type": "InternalDNS", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"machineID": f"{i:032x}", "systemUUID": f"ec2{i:029x}", "bootID": f"{i:08x}-0000-4000-8000",
                     "kernelVersion": "6.1.112-124.190.amzn2023.x86_64", "osImage": "Amazon Linux 2023",
                     "containerRuntimeVersion": "containerd://1.7.22", "kubeletVersion": "v1.31.2-eks-7f9249a",
                     "kubeProxyVersion": "v1.31.2-eks-7f9249a", "operatingSystem": "linux", "architecture": "amd64"},
        "images": images}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def pod(node_name: str | None, n: int, rng: random.Random, managed_fields: bool) -> dict[str, Any]:
    app = APPS[n % len(APPS)]
    ns = f"team-{n % 5}"
    owner_kind = ("ReplicaSet", "ReplicaSet", "ReplicaSet", "StatefulSet", "DaemonSet")[n % 5]
    suffix = f"{n:x}"[-5:].rjust(5, "b")
    name = f"{app}-{n % 97}-{suffix}" if owner_kind != "StatefulSet" else f"{app}-db-{n}"
    cpu_m = (100, 250, 500, 1000)[n % 4]
    mem_mi = (128, 256, 512, 1024)[(n // 4) % 4]
    meta: dict[str, Any] = {
        "name": name, "namespace": ns, "uid": f"10000000-0000-4000-8000-{n:012d}",
        "resourceVersion": str(2000000 + n), "creationTimestamp": TS, "generateName": f"{app}-{n % 97}-",
        "labels": {"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/instance": f"{app}-prod",
                   "app.kubernetes.io/part-of": "shop", "pod-template-hash": f"{n % 97:x}c9d8f7b6",
                   "version": f"v{n % 3}"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": TS, "prometheus.io/scrape": "true",
                        "prometheus.io/port": "9090"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind, "name": f"{app}-{n % 97}",
                             "uid": f"20000000-0000-4000-8000-{n % 97:012d}", "controller": True,
                             "blockOwnerDeletion": True}]}
    if managed_fields:
        meta["managedFields"] = _managed("kube-controller-manager", "Update", 6)
    container = {
        "name": "app", "image": f"123456789012.dkr.ecr.us-east-1.amazonaws.com/app-{n % 120}:v{n % 40}",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", f"--service={app}", "--log-level=info"],
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE",
                 "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                {"name": "SERVICE", "value": app}, {"name": "GOMAXPROCS", "value": "2"}],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"},
                      "limits": {"cpu": f"{cpu_m * 2}m", "memory": f"{mem_mi * 2}Mi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "kube-api-access-x1y2z", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
    spec: dict[str, Any] = {
        "containers": [container], "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300},
                        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}],
        "volumes": [{"name": "kube-api-access-x1y2z", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                          "fieldPath": "metadata.namespace"}}]}}]}}]}
    if n % 7 == 0:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}},
                                                "topologyKey": "kubernetes.io/hostname"}}]}}
    if n % 11 == 0:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    status: dict[str, Any]
    if node_name:
        spec["nodeName"] = node_name
        status = {"phase": "Running", "hostIP": "10.0.0.1", "podIP": f"10.1.{n // 250 % 250}.{n % 250}",
                  "podIPs": [{"ip": f"10.1.{n // 250 % 250}.{n % 250}"}], "startTime": TS, "qosClass": "Burstable",
                  "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": TS}
                                 for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                           "PodScheduled")],
                  "containerStatuses": [{"name": "app", "ready": True, "started": True, "restartCount": 0,
                                         "image": container["image"], "imageID": f"sha256:{n:064x}",
                                         "containerID": f"containerd://{n:064x}",
                                         "state": {"running": {"startedAt": TS}}, "lastState": {}}]}
    else:
        status = {"phase": "Pending", "qosClass": "Burstable",
                  "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                  "lastTransitionTime": TS, "reason": "Unschedulable",
                                  "message": "0/10 nodes are available: 10 Insufficient cpu."}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def items(nodes: int, managed_fields: bool = False, seed: int = 1) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    names = []
    for i in range(nodes):
        n = node(i, rng, managed_fields)
        names.append(n["metadata"]["name"])
        yield n
    pending_every = round(1 / PENDING_FRACTION)
    for k in range(nodes * PODS_PER_NODE):
        bound = names[k % nodes] if k % pending_every else None
        yield pod(bound, k, rng, managed_fields)


def write(out: TextIO, nodes: int, fmt: str = "json", managed_fields: bool = False, seed: int = 1) -> None:
    """Write the dump as kubectl does: JSON with 4-space indents, or YAML as kubectl's encoder prints it."""
    if fmt == "json":
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True
        for item in items(nodes, managed_fields, seed):
            if not first:
                out.write(",\n")
            first = False
            text = json.dumps(item, indent=4)
            out.write("        " + text.replace("\n", "\n        "))
        out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
        return
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out.write("apiVersion: v1\nitems:\n")
    for item in items(nodes, managed_fields, seed):
        text = yaml.dump(item, Dumper=dumper, sort_keys=True, default_flow_style=False, width=10_000)
        lines = text.splitlines()
        out.write("- " + lines[0] + "\n")
        for line in lines[1:]:
            out.write("  " + line + "\n")
    out.write("kind: List\nmetadata:\n  resourceVersion: \"\"\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--format", choices=("json", "yaml"), default="json")
    p.add_argument("--managed-fields", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    write(sys.stdout, args.nodes, args.format, args.managed_fields, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
