"""benchmarks/why.py runs (on a small dump of gen_dump.py's shape; its figures are in benchmarks/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.why import KINDS, measure, with_pods


def _dump(path: Path) -> Path:
    nodes = []
    for i in range(4):
        name = f"ip-10-0-{i}-0.ec2.internal"
        n = {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                   "topology.kubernetes.io/zone": f"us-east-1{'abc'[i % 3]}"}},
             "spec": {}, "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
        if i == 1:
            n["spec"]["taints"] = [{"effect": "NoSchedule", "key": "dedicated", "value": "gpu"}]
        nodes.append(n)
    ds = [{"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"node-exporter-{i}", "namespace": "monitoring",
                        "labels": {"app.kubernetes.io/name": "node-exporter"}},
           "spec": {"nodeName": n["metadata"]["name"], "containers": [{"name": "c", "image": "i"}],
                    "tolerations": [{"operator": "Exists"}]}} for i, n in enumerate(nodes)]
    app = [{"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"svc-{i}", "namespace": "payments", "labels": {"app.kubernetes.io/part-of": "x"}},
            "spec": {"nodeName": nodes[i % 4]["metadata"]["name"] if i % 4 != 1 else nodes[0]["metadata"]["name"],
                     "containers": [{"name": "c", "image": "i"}]}} for i in range(6)]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes + ds + app}, indent=1),
                    encoding="utf-8")
    return path


def test_the_benchmark_measures_plain_and_why(tmp_path: Path) -> None:
    src = _dump(tmp_path / "c.json")
    dump = with_pods(str(src), len(KINDS), str(tmp_path))
    res = measure(dump, 1)
    assert res["added"] == len(KINDS) and res["unschedulable"] == len(KINDS)
    assert res["withRemedy"] == len(KINDS) - 1  # the GPU pod: no node offers one, and no template is given
    assert res["ratio"] > 0 and all(len(v) == 1 for v in res["runs"].values())
