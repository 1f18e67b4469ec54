"""Capacity (cluster-capacity's question) at scale: copies placed per second, shortcut vs a full cycle per copy.

    python -m benchmarks.capacity [--nodes 5000] [--max N] [--plain-max M] [--output table|json]

The cluster: N nodes (4 cpu, 16Gi, 110 pods) in three zones, each running one pod of 1 cpu, 2Gi; one node
in ten carries a PreferNoSchedule taint (so TaintToleration's normalization has work to do). The pod asked
about: 500m / 1Gi, a Deployment replica with a preferred node affinity for zone-a. Default profile.

Measured: ``Simulator.capacity(pod, max)`` with the shortcut (per-node verdicts and raw scores kept between
copies) and with ``fast=False`` (a full scheduling cycle per copy: what a plain loop costs), copies/s each;
the plain loop is run for ``--plain-max`` copies only (it is slow) and both runs are checked to place those
copies on the same nodes.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.simulation import Simulator
from scheduling_framework.simulation.capacity import capacity

ZONES = ("zone-a", "zone-b", "zone-c")


def make_node(i: int) -> Node:
    name = f"node-{i}"
    spec: dict[str, Any] = {}
    if i % 10 == 0:
        spec["taints"] = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    return Node.from_dict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "topology.kubernetes.io/zone": ZONES[i % 3]}},
        "spec": spec,
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    })


def make_pod(name: str, cpu: str, memory: str, node: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27",
                                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node:
        spec["nodeName"] = node
    else:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}}]}}
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
                          "spec": spec})


def build(nodes: int) -> Simulator:
    sim = Simulator(seed=1)
    for i in range(nodes):
        sim.add_node(make_node(i))
        sim.add_pod(make_pod(f"running-{i}", "1", "2Gi", node=f"node-{i}"))
    return sim


def measure(nodes: int, max_copies: int | None, plain_max: int) -> dict[str, Any]:
    pod = make_pod("web", "500m", "1Gi")
    sim = build(nodes)
    t0 = time.perf_counter()
    fast = capacity(sim, pod, max_copies)
    fast_s = time.perf_counter() - t0
    out: dict[str, Any] = {"nodes": nodes, "copies": fast.count, "stopReason": fast.stop_reason,
                           "seconds": round(fast_s, 3), "copies_per_s": round(fast.count / fast_s, 1)}
    if plain_max:
        first = capacity(build(nodes), pod, plain_max)
        sim = build(nodes)
        t0 = time.perf_counter()
        plain = capacity(sim, pod, plain_max, fast=False)
        plain_s = time.perf_counter() - t0
        out["plain"] = {"copies": plain.count, "seconds": round(plain_s, 3),
                        "copies_per_s": round(plain.count / plain_s, 1),
                        "same_placements": plain.placements == first.placements}
        out["speedup"] = round(out["copies_per_s"] / out["plain"]["copies_per_s"], 1)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--max", type=int, default=None, help="stop after this many copies (default: until full)")
    ap.add_argument("--plain-max", type=int, default=200, help="copies for the full-cycle comparison (0: skip)")
    ap.add_argument("--output", choices=("table", "json"), default="table")
    args = ap.parse_args(argv)
    report = measure(args.nodes, args.max, args.plain_max)
    report["python"] = platform.python_version()
    if args.output == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"capacity at {report['nodes']} nodes: {report['copies']} copies ({report['stopReason']}) in "
          f"{report['seconds']} s = {report['copies_per_s']} copies/s")
    if "plain" in report:
        p = report["plain"]
        print(f"full cycle per copy: {p['copies']} copies in {p['seconds']} s = {p['copies_per_s']} copies/s "
              f"(shortcut {report['speedup']}x, same placements: {p['same_placements']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
