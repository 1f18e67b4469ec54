"""What ``compare`` costs beside the two ``schedule`` runs it stands for: CPU seconds of whole processes.

    python -m benchmarks.compare --cluster /work/dumps/c2000.json [--a 1.35] [--b 1.37] [--repeat 3]
                                 [--mode sequential] [--output table|json]

Each repetition runs, as separate processes, ``schedule --kubernetes-version A``, ``schedule
--kubernetes-version B`` (both ``--seed 1 --output json``) and ``compare --a-kubernetes-version A
--b-kubernetes-version B --seed 1 --output json``, and takes each child's user + system CPU time
(``getrusage(RUSAGE_CHILDREN)``), which the other work of a shared machine moves far less than wall time. It
reports the medians and the ratio compare / (schedule A + schedule B); the issue's bound is 1.10.

The scheduling loops alone are measured too, in one process that loads the cluster once (``--loops``, on by
default): per repetition, ``Scheduler.run()`` of side A and of side B (process CPU time), then ``compare()``
on the same loaded cluster (its ``seconds``: the process CPU time of its two runs). Their ratio is what the
recording and the comparison cost beside the decisions themselves.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.cli_cpu import timed


def measure(cluster: str, a: str, b: str, repeat: int, mode: str) -> dict[str, Any]:
    runs: dict[str, list[float]] = {"scheduleA": [], "scheduleB": [], "compare": [], "loopA": [], "loopB": [],
                                    "compareLoops": []}
    summary: dict[str, Any] = {}
    for _ in range(repeat):
        for side, release in (("A", a), ("B", b)):
            cpu, doc = timed(["schedule", "--cluster", cluster, "--kubernetes-version", release, "--seed", "1",
                              "--output", "json"], ok=(0, 3))
            runs[f"schedule{side}"].append(cpu)
            runs[f"loop{side}"].append(float(doc["stats"]["seconds"]))
        cpu, doc = timed(["compare", "--cluster", cluster, "--a-kubernetes-version", a, "--b-kubernetes-version", b,
                          "--seed", "1", "--output", "json", "--mode", mode], ok=(0, 3))
        runs["compare"].append(cpu)
        runs["compareLoops"].append(float(doc["seconds"]))
        summary = doc["summary"]
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {"cluster": os.path.basename(cluster), "a": a, "b": b, "mode": mode, "repeat": repeat, "runs": runs,
            "median": med, "ratio": med["compare"] / (med["scheduleA"] + med["scheduleB"]),
            "changed": summary.get("changed"), "pods": summary.get("pods")}


def measure_loops(cluster_path: str, a: str, b: str, repeat: int, mode: str) -> dict[str, Any]:
    """Process CPU seconds of the two plain runs and of ``compare``'s two runs, on one loaded cluster."""
    import gc
    import time

    from scheduling_framework.cluster import load_cluster
    from scheduling_framework.comparison import Side, compare
    from scheduling_framework.ingest import gc_paused
    from scheduling_framework.scheduler import Scheduler

    with gc_paused():
        cluster = load_cluster(cluster_path, max_input_bytes=1 << 40)
    gc.freeze()
    runs: dict[str, list[float]] = {"plainA": [], "plainB": [], "compare": []}
    for _ in range(repeat):
        for side, release in (("A", a), ("B", b)):
            sched = Scheduler(None, seed=1, kubernetes_version=release)
            sched.load(cluster.nodes, cluster.pods, cluster.objects)
            gc.freeze()
            t0 = time.process_time()
            sched.run()
            runs[f"plain{side}"].append(time.process_time() - t0)
            del sched
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        result = compare(cluster, Side(kubernetes_version=a), Side(kubernetes_version=b), seed=1, mode=mode,
                         gc_freeze=True)
        runs["compare"].append(result.seconds)
        del result
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {"runs": runs, "median": med, "ratio": med["compare"] / (med["plainA"] + med["plainB"])}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("--cluster", required=True)
    p.add_argument("--a", default="1.35", help="side A's release (default 1.35)")
    p.add_argument("--b", default="1.37", help="side B's release (default 1.37)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--mode", choices=("sequential", "independent"), default="sequential")
    p.add_argument("--output", choices=("table", "json"), default="table")
    p.add_argument("--loops", action=argparse.BooleanOptionalAction, default=True,
                   help="also measure the scheduling loops alone, in one process (default: yes)")
    args = p.parse_args(argv)
    res = measure(args.cluster, args.a, args.b, args.repeat, args.mode)
    if args.loops:
        res["loops"] = measure_loops(args.cluster, args.a, args.b, args.repeat, args.mode)
    if args.output == "json":
        print(json.dumps(res, indent=2))
        return 0
    m = res["median"]
    print(f"{res['cluster']}: {args.a} vs {args.b}, {args.mode}, median of {args.repeat} (CPU seconds)")
    print(f"  schedule A        {m['scheduleA']:8.1f}   (loop {m['loopA']:.1f} s)")
    print(f"  schedule B        {m['scheduleB']:8.1f}   (loop {m['loopB']:.1f} s)")
    print(f"  compare           {m['compare']:8.1f}   (both loops {m['compareLoops']:.1f} s)")
    print(f"  compare / (A + B) {res['ratio']:8.2f}   (bound 1.10)")
    if "loops" in res:
        lm = res["loops"]["median"]
        print(f"  loops in one process: A {lm['plainA']:.1f} + B {lm['plainB']:.1f}, compare {lm['compare']:.1f}: "
              f"{res['loops']['ratio']:.2f}")
    print(f"  {res['changed']} of {res['pods']} pending pods changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
