"""benchmarks/autoscale.py runs (on a small dump of gen_dump.py's shape: each node's group label before its name)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.autoscale import measure, prepare


def test_the_benchmark_measures_scale_up_and_scale_down(tmp_path: Path) -> None:
    nodes = []
    for i in range(4):
        name = f"ip-10-0-{i}-0.ec2.internal"
        nodes.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {"eks.amazonaws.com/nodegroup": f"ng-{i}",
                                                            "kubernetes.io/hostname": name}},
                      "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    src = tmp_path / "c.json"
    src.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}, indent=1), encoding="utf-8")
    dump, groups, n = prepare(str(src), 6, str(tmp_path))
    res = measure(dump, groups, 1)
    assert n == 4 and res["schedulableOnExisting"] == 4 and res["chosen"] is not None
    assert all(len(v) == 1 and v[0] > 0 for v in res["runs"].values())
