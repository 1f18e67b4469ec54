"""What-if loop of an autoscaler on a forkable ClusterSnapshot: how fast, and does fork/revert scale?

    python -m benchmarks.whatif [--nodes N] [--iterations K] [--pending P] [--sizes 100,1000,5000]
                                [--full-iterations F] [--output table|json]

The cluster: N nodes (4 cpu, 16Gi, 110 pods) in three zones, each running two pods of 1500m that leave
1 cpu free, so none of the P pending pods (1500m, 1Gi, one Deployment's replicas) fits anywhere: the
situation a scale-up simulation starts from. The template is one more node of the same shape. The
profile is the default one.

Measured:

* **what-if loop (estimator)**: K x (fork -> add the template node -> ``schedule_pods(pending,
  nodes=[new node])`` -> revert), cluster-autoscaler's binpacking-estimator question "which pending pods
  would land on the new node?". PreFilter sees the whole cluster; Filter and Score the new node.
* **what-if loop (estimator, cold)**: the same, but each iteration first binds a 10m pod to another
  existing node inside the fork, so that no iteration asks of the whole cluster a question an earlier one
  asked: answers the simulator remembers under the whole snapshot's content never apply. Those remembered
  under the new node's own content do (the decision provably reads nothing of the changed node, see
  docs/autoscaler-simulation.md), so this is what a question costs that changed something other than its
  candidates.
* **what-if loop (estimator, fresh)**: the same, but the 10m pod (another one each iteration) is bound to
  the new node itself: the candidates' content is new every time, nothing remembered applies, every pod
  class runs its cycle. This is what a new question costs.
* **what-if loop (full cycle)**: F x the same with ``schedule_pods(pending)``: every pod goes through a
  whole scheduling cycle over all nodes (what ``scheduling-framework schedule`` would decide).
* **scaling**: for each size in ``--sizes``, the mean time of ``fork()``, of a batch of changes inside the
  fork (add the template node, bind 5 pods to existing nodes, remove one), of ``revert()``, and of one
  estimator iteration, warm and cold. Fork and revert must not grow with the cluster: fork is O(1) and revert is
  proportional to what the fork changed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.simulation import ClusterSnapshot, Simulator

ZONES = ("zone-a", "zone-b", "zone-c")


def make_node(name: str, zone: str) -> Node:
    return Node.from_dict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                                              "node.kubernetes.io/instance-type": "m5.xlarge"}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                   "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 300_000}]},
    })


def make_pod(name: str, cpu: str, memory: str, node: str = "", app: str = "web") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27",
                                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-rs",
                                          "uid": f"{app}-rs", "controller": True}]},
        "spec": spec,
    })


def build_cluster(n: int) -> ClusterSnapshot:
    nodes = [make_node(f"node-{i:05d}", ZONES[i % len(ZONES)]) for i in range(n)]
    pods = [make_pod(f"running-{i:05d}-{j}", "1500m", "2Gi", node=nodes[i].name, app=f"svc-{i % 20}")
            for i in range(n) for j in range(2)]
    return ClusterSnapshot(nodes, pods)


def pending_pods(count: int) -> list[Pod]:
    return [make_pod(f"pending-{k:03d}", "1500m", "1Gi", app="batch") for k in range(count)]


def template_node() -> Node:
    return make_node("m5-xlarge", ZONES[0])


def whatif_loop(sim: Simulator, pending: list[Pod], iterations: int, full: bool,
                cold: bool = False, fresh: bool = False) -> tuple[float, float, int]:
    """Total seconds and median milliseconds of ``iterations`` what-if iterations, and how many pending
    pods the last one placed. ``cold``: each iteration first binds a small pod to another existing node;
    ``fresh``: each iteration binds another small pod to the new node."""
    template = template_node()
    placed = 0
    each: list[int] = []
    clock = time.perf_counter_ns
    names = sim.cluster.node_names()
    probes = [make_pod(f"probe-{k}", "10m", "16Mi", app="probe") for k in range(max(1, iterations // len(names) + 1))]
    fresh_probes = [make_pod(f"fresh-{k}", "10m", "16Mi", app="probe") for k in range(iterations if fresh else 0)]
    for i in range(iterations):
        t = clock()
        with sim.fork():
            if cold:
                sim.add_pod(probes[i // len(names)], names[i % len(names)])
            new = sim.add_node_from_template(template, name_prefix="scale-up")
            if fresh:
                sim.add_pod(fresh_probes[i], new[0])
            outcome = sim.schedule_pods(pending, nodes=None if full else new)
            placed = len(outcome.placements)
        each.append(clock() - t)
    return sum(each) / 1e9, (statistics.median(each) / 1e6 if each else 0.0), placed


def fork_revert_costs(cs: ClusterSnapshot, rounds: int) -> dict[str, float]:
    """Median microseconds of fork(), of a batch of changes inside the fork, and of revert()."""
    template = template_node()
    names = cs.node_names()
    extra = [make_pod(f"extra-{k}", "100m", "128Mi") for k in range(5)]
    victim = cs.get(names[0]).pods[0].pod
    fork_ns: list[int] = []
    change_ns: list[int] = []
    revert_ns: list[int] = []
    clock = time.perf_counter_ns
    for r in range(rounds):
        t0 = clock()
        cs.fork()
        t1 = clock()
        cs.add_node_from_template(template, name_prefix="scale-up")
        for k, p in enumerate(extra):
            cs.add_pod(p, names[(r * 7 + k * 13) % len(names)])
        cs.remove_pod(victim)
        t2 = clock()
        cs.revert()
        t3 = clock()
        fork_ns.append(t1 - t0)
        change_ns.append(t2 - t1)
        revert_ns.append(t3 - t2)
    return {"fork_us": statistics.median(fork_ns) / 1e3, "changes_us": statistics.median(change_ns) / 1e3,
            "revert_us": statistics.median(revert_ns) / 1e3}


def run(nodes: int, iterations: int, pending: int, sizes: Sequence[int], full_iterations: int,
        fork_rounds: int) -> dict[str, Any]:
    report: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                              "nodes": nodes, "pending": pending}
    t = time.perf_counter()
    sim = Simulator(seed=1, cluster=build_cluster(nodes))
    report["build_seconds"] = time.perf_counter() - t
    pods = pending_pods(pending)
    secs, median_ms, placed = whatif_loop(sim, pods, iterations, full=False)
    report["estimator"] = {"iterations": iterations, "seconds": secs, "median_ms_per_iteration": median_ms,
                           "placed_per_iteration": placed}
    secs, median_ms, placed = whatif_loop(sim, pods, iterations, full=False, cold=True)
    report["estimator_cold"] = {"iterations": iterations, "seconds": secs, "median_ms_per_iteration": median_ms,
                                "placed_per_iteration": placed}
    secs, median_ms, placed = whatif_loop(sim, pods, iterations, full=False, fresh=True)
    report["estimator_fresh"] = {"iterations": iterations, "seconds": secs, "median_ms_per_iteration": median_ms,
                                 "placed_per_iteration": placed}
    if full_iterations:
        secs, median_ms, placed = whatif_loop(sim, pods, full_iterations, full=True)
        report["full_cycle"] = {"iterations": full_iterations, "seconds": secs, "median_ms_per_iteration": median_ms,
                                "placed_per_iteration": placed}
    scaling = []
    for size in sizes:
        ssim = Simulator(seed=1, cluster=build_cluster(size))
        costs = fork_revert_costs(ssim.cluster, fork_rounds)
        _, median_ms, _ = whatif_loop(ssim, pods, max(1, min(iterations, 200)), full=False)
        _, cold_ms, _ = whatif_loop(ssim, pods, max(1, min(iterations, 200)), full=False, cold=True)
        scaling.append({"nodes": size, **costs, "estimator_median_ms_per_iteration": median_ms,
                        "estimator_cold_median_ms_per_iteration": cold_ms})
    report["scaling"] = scaling
    return report


def print_table(report: dict[str, Any]) -> None:
    est = report["estimator"]
    print(f"cluster: {report['nodes']} nodes, {report['pending']} pending pods "
          f"(built in {report['build_seconds']:.2f}s; Python {report['python']}, {report['machine']})")
    print(f"what-if loop, estimator:  {est['iterations']} x (fork, add template node, schedule "
          f"{report['pending']} pending pods on it, revert) = {est['seconds']:.2f}s "
          f"(median {est['median_ms_per_iteration']:.2f} ms/iteration, {est['placed_per_iteration']} pods placed each)")
    cold = report["estimator_cold"]
    print(f"what-if loop, estimator, cold: {cold['iterations']} x (fork, bind a 10m pod to another existing node, "
          f"add template node, schedule {report['pending']} pending pods on it, revert) = {cold['seconds']:.2f}s "
          f"(median {cold['median_ms_per_iteration']:.2f} ms/iteration, {cold['placed_per_iteration']} pods "
          "placed each)")
    fresh = report["estimator_fresh"]
    print(f"what-if loop, estimator, fresh: {fresh['iterations']} x (fork, add template node, bind another 10m pod "
          f"to it, schedule {report['pending']} pending pods on it, revert) = {fresh['seconds']:.2f}s "
          f"(median {fresh['median_ms_per_iteration']:.2f} ms/iteration, {fresh['placed_per_iteration']} pods "
          "placed each)")
    full = report.get("full_cycle")
    if full:
        print(f"what-if loop, full cycle: {full['iterations']} x (fork, add template node, schedule "
              f"{report['pending']} pending pods on the whole cluster, revert) = {full['seconds']:.2f}s "
              f"(median {full['median_ms_per_iteration']:.2f} ms/iteration, {full['placed_per_iteration']} pods "
              "placed each)")
    print()
    print("median per operation, by cluster size:")
    print(f"{'nodes':>7} {'fork us':>9} {'changes us':>11} {'revert us':>10} {'estimator ms/iter':>18} "
          f"{'cold ms/iter':>13}")
    for row in report["scaling"]:
        print(f"{row['nodes']:>7} {row['fork_us']:>9.2f} {row['changes_us']:>11.1f} {row['revert_us']:>10.2f} "
              f"{row['estimator_median_ms_per_iteration']:>18.3f} "
              f"{row['estimator_cold_median_ms_per_iteration']:>13.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.whatif", description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000, help="cluster size of the what-if loop (default 1000)")
    ap.add_argument("--iterations", type=int, default=1000, help="estimator what-if iterations (default 1000)")
    ap.add_argument("--pending", type=int, default=50, help="pending pods per iteration (default 50)")
    ap.add_argument("--full-iterations", type=int, default=20,
                    help="full-cycle what-if iterations (default 20; 0 skips)")
    ap.add_argument("--sizes", default="100,1000,5000", help="cluster sizes for the scaling table")
    ap.add_argument("--fork-rounds", type=int, default=2000, help="fork/revert rounds per size (default 2000)")
    ap.add_argument("--output", choices=("table", "json"), default="table")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    report = run(args.nodes, args.iterations, args.pending, sizes, args.full_iterations, args.fork_rounds)
    if args.output == "json":
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_table(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
