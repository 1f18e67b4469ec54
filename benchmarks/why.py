"""What ``schedule --why`` costs beside the plain ``schedule`` run: CPU seconds of whole processes.

    python -m benchmarks.why --cluster /work/dumps/c5000.json [--pods 300] [--repeat 3] [--output table|json]

The cluster is a realistic dump (``gen_dump.py`` of ../shared/upstream-go, a ``kind: List`` in JSON) with
``--pods`` pending pods added that fit nowhere, six kinds in turn, as a user meets them:

- a GPU nowhere (``nvidia.com/gpu: 1``: no node offers it);
- a zone the cluster does not have (``nodeSelector``);
- too big for any node (4Ti of memory);
- pinned to a tainted node (``kubernetes.io/hostname`` of the first ``dedicated=gpu:NoSchedule`` node) without
  the toleration;
- a zone spread that cannot be met (``maxSkew: 1``, ``minDomains: 5`` over 3 zones, every zone already
  holding matching pods);
- a required anti-affinity against a DaemonSet's pods (one on every node).

Every added pod is distinct (a label of its own), so each gets its own computation; ``--replicas`` makes the
pods of one kind alike, as a Deployment's replicas are, which share one.

Each repetition runs, as separate processes and in alternation, ``schedule --seed 1 --output json`` and the
same with ``--why``, and takes each child's user + system CPU time (``getrusage(RUSAGE_CHILDREN)``). It
reports the medians and their ratio (issue 37's bound: 2.0 at 5,000 nodes with 300 such pods) and how many
of the added pods got a remedy.
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

from benchmarks.cli_cpu import timed, with_items

KINDS = ("gpu", "zone", "too-big", "taint", "spread", "anti-affinity")



def _tainted_node(text: str) -> str:
    """The name of the first node tainted ``dedicated=gpu`` (gen_dump taints one node in 50)."""
    at = text.find('"value": "gpu"')
    if at < 0:
        raise SystemExit("the dump has no node tainted dedicated=gpu (not a gen_dump.py dump?)")
    names = list(re.finditer(r'"kubernetes\.io/hostname": "([^"]+)"', text[:at]))
    return names[-1].group(1)


def unschedulable_pod(i: int, tainted: str, distinct: bool = True) -> dict[str, Any]:
    kind = KINDS[i % len(KINDS)]
    requests = {"cpu": "250m", "memory": "256Mi"}
    limits: dict[str, str] = {}
    spec: dict[str, Any] = {}
    labels = {"app.kubernetes.io/name": f"why-{kind}", "app.kubernetes.io/part-of": "payments", "team": "payments"}
    if distinct:  # no two pods alike: each gets its own computation (replicas share one)
        labels["why-index"] = str(i)
    if kind == "gpu":
        requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = "1"
    elif kind == "zone":
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": "eu-west-9z"}
    elif kind == "too-big":
        requests["memory"] = "4Ti"
    elif kind == "taint":
        spec["nodeSelector"] = {"kubernetes.io/hostname": tainted}
    elif kind == "spread":
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "minDomains": 5, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "app.kubernetes.io/part-of", "operator": "Exists"}]}}]
    else:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname", "namespaceSelector": {},
            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "node-exporter"}}}]}}
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"why-{kind}-{i}", "namespace": "payments", "labels": labels,
                         "uid": f"00000000-0000-4000-8000-{i:012d}"},
            "spec": {"containers": [{"name": "app", "image": "registry.example/why:1", "resources": resources}],
                     **spec}}


def with_pods(src: str, n: int, out_dir: str, distinct: bool = True) -> str:
    """``src`` (a JSON List) with ``n`` unschedulable pods appended to its items, written under ``out_dir``."""
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    tainted = _tainted_node(text)
    path = os.path.join(out_dir, f"{os.path.basename(src)}.why{n}{'' if distinct else 'r'}.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(with_items(text, (unschedulable_pod(i, tainted, distinct) for i in range(n)), src))
    return path



def measure(cluster: str, repeat: int) -> dict[str, Any]:
    runs: dict[str, list[float]] = {"plain": [], "why": []}
    doc: dict[str, Any] = {}
    base = ["schedule", "--cluster", cluster, "--seed", "1", "--output", "json", "--max-input-bytes", "64Gi"]
    for _ in range(repeat):
        cpu, _doc = timed(base)
        runs["plain"].append(cpu)
        cpu, doc = timed([*base, "--why"])
        runs["why"].append(cpu)
    added = [p for p in doc.get("pods", []) if p["pod"].startswith("payments/why-")]
    pending = [p for p in doc.get("pods", []) if p["outcome"] == "Unschedulable"]
    helped = [p for p in added if p.get("remedies")]
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {"cluster": os.path.basename(cluster), "repeat": repeat, "runs": runs, "median": med,
            "ratio": med["why"] / med["plain"], "unschedulable": len(pending), "added": len(added),
            "withRemedy": len(helped),
            "sampled": sum(1 for p in pending if p.get("why", {}).get("sampled"))}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.why", description=__doc__.split("\n\n")[0])
    p.add_argument("--cluster", required=True, help="a gen_dump.py dump (JSON)")
    p.add_argument("--pods", type=int, default=300, help="unschedulable pods added (default 300)")
    p.add_argument("--replicas", action="store_true",
                   help="the added pods of one kind are replicas (alike but for their name), as a Deployment's are; "
                        "default: every pod distinct")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--output", choices=("table", "json"), default="table")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        res = measure(with_pods(args.cluster, args.pods, tmp, not args.replicas), args.repeat)
    if args.output == "json":
        print(json.dumps(res, indent=2))
        return 0
    m = res["median"]
    print(f"{res['cluster']} + {args.pods} unschedulable pods, median of {args.repeat} (CPU seconds)")
    print(f"  schedule          {m['plain']:8.1f}")
    print(f"  schedule --why    {m['why']:8.1f}")
    print(f"  --why / plain     {res['ratio']:8.2f}   (bound 2.0)")
    print(f"  {res['unschedulable']} unschedulable, {res['withRemedy']} of the {res['added']} added with a remedy, "
          f"{res['sampled']} examined on a sample of the nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
