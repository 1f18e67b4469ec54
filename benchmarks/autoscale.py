"""What ``autoscale`` costs on a realistic dump: a scale-up plan and a scale-down scan, CPU of whole processes.

    python -m benchmarks.autoscale --cluster /work/dumps/c2000.json [--pods 1000] [--repeat 3]

The dump (``gen_dump.py`` of ../shared/upstream-go: four node groups ``ng-0`` .. ``ng-3`` by the label
``eks.amazonaws.com/nodegroup``) gets ``--pods`` pending pods of 14 cpu and 48Gi added, more than the existing
nodes' free room takes, and five node groups: the four, each copying its first node, and a 64-cpu group. It runs
``autoscale --no-scale-down --expander least-waste`` and ``autoscale --no-scale-up`` as separate processes, in
alternation, and reports the medians of their user + system CPU seconds (issue 38's bound: one CPU-minute each
for 1,000 pods over 5 groups on 2,000 nodes), the scan's cost per node, and what the plan said.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import yaml

from benchmarks.cli_cpu import timed, with_items


def prepare(src: str, n: int, out_dir: str) -> tuple[str, str, int]:
    """The dump with ``n`` pending pods added, the node groups file, and the dump's node count."""
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    groups: list[dict[str, Any]] = []
    for i in range(4):
        g = f"ng-{i}"
        at = text.find(f'"eks.amazonaws.com/nodegroup": "{g}"')
        if at < 0:
            raise SystemExit(f"{src}: no node of group {g} (not a gen_dump.py dump?)")
        name = re.search(r'"kubernetes\.io/hostname": "([^"]+)"', text[at:at + 5000])
        if name is None:
            raise SystemExit(f"{src}: cannot find the name of group {g}'s first node")
        groups.append({"name": g, "minSize": 1, "maxSize": 5000, "pricePerHour": 0.4, "templateNode": name.group(1)})
    groups.append({"name": "big", "minSize": 0, "maxSize": 200, "pricePerHour": 3.2, "template": {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "big", "labels": {"eks.amazonaws.com/nodegroup": "big",
                                               "topology.kubernetes.io/zone": "us-east-1a"}},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "250"}}}})
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"batch-{i}", "namespace": "data", "labels": {"app": "batch", "i": str(i)},
                          "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "batch",
                                               "uid": "00000000-0000-4000-8000-000000000001", "controller": True}]},
             "spec": {"containers": [{"name": "c", "image": "registry.example/batch:1",
                                      "resources": {"requests": {"cpu": "14", "memory": "48Gi"}}}]}}
            for i in range(n)]
    dump = os.path.join(out_dir, f"{os.path.basename(src)}.autoscale{n}.json")
    with open(dump, "w", encoding="utf-8") as fh:
        fh.write(with_items(text, pods, src))
    gpath = os.path.join(out_dir, "groups.yaml")
    with open(gpath, "w", encoding="utf-8") as fh:
        yaml.safe_dump({"nodeGroups": groups}, fh, sort_keys=False)
    return dump, gpath, text.count('"kind": "Node"')



def measure(dump: str, groups: str, repeat: int) -> dict[str, Any]:
    base = ["autoscale", "--cluster", dump, "--node-groups", groups, "--seed", "1", "--output", "json",
            "--max-input-bytes", "64Gi"]
    runs: dict[str, list[float]] = {"scaleUp": [], "scaleDown": []}
    up: dict[str, Any] = {}
    down: dict[str, Any] = {}
    for _ in range(repeat):
        cpu, doc = timed([*base, "--no-scale-down", "--expander", "least-waste"])
        runs["scaleUp"].append(cpu)
        up = doc["scaleUp"]
        cpu, doc = timed([*base, "--no-scale-up"])
        runs["scaleDown"].append(cpu)
        down = doc["scaleDown"]
    return {"runs": runs, "median": {k: statistics.median(v) for k, v in runs.items()},
            "options": [(o["nodeGroup"], o["nodes"], len(o["pods"])) for o in up.get("options", [])],
            "chosen": up.get("chosen") and up["chosen"]["nodeGroup"],
            "schedulableOnExisting": len(up.get("schedulableOnExistingNodes", {})),
            "unhelpable": len(up.get("unhelpable", [])),
            "candidates": len(down.get("candidates", [])), "blocked": len(down.get("blocked", []))}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.autoscale", description=__doc__.split("\n\n")[0])
    p.add_argument("--cluster", required=True, help="a gen_dump.py dump (JSON)")
    p.add_argument("--pods", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--output", choices=("table", "json"), default="table")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        dump, groups, nodes = prepare(args.cluster, args.pods, tmp)
        res = measure(dump, groups, args.repeat)
    res["nodes"] = nodes
    if args.output == "json":
        print(json.dumps(res, indent=2))
        return 0
    m = res["median"]
    print(f"{os.path.basename(args.cluster)} ({nodes} nodes) + {args.pods} pending pods, 5 node groups, "
          f"median of {args.repeat} (CPU seconds, loading included)")
    print(f"  scale-up plan     {m['scaleUp']:8.1f}   options {res['options']}, chosen {res['chosen']}")
    print(f"  scale-down scan   {m['scaleDown']:8.1f}   {res['candidates']} candidates, {res['blocked']} blocked "
          f"({1000 * m['scaleDown'] / max(nodes, 1):.1f} ms per node)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
