"""Write a big cluster file for timing ``scheduling-framework schedule`` end to end.

    python -m benchmarks.make_cluster --nodes 5000 --bound 1000 --pending 10000 > big.yaml
    scheduling-framework schedule --cluster big.yaml --output json

The objects are SchedulingBasic's (upstream's node-default and pod-default templates): bound pods are spread
round-robin over the nodes, pending pods have no nodeName.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import yaml

from benchmarks.workloads import NODE_DEFAULT, POD_DEFAULT

try:
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Dumper = yaml.SafeDumper


def documents(nodes: int, bound: int, pending: int) -> Iterator[dict[str, Any]]:
    names = [f"scheduler-perf-{i:05d}" for i in range(nodes)]
    for name in names:
        n = copy.deepcopy(NODE_DEFAULT)
        n["metadata"] = {"name": name, "labels": {"kubernetes.io/hostname": name}}
        yield n
    for i in range(bound + pending):
        p = copy.deepcopy(POD_DEFAULT)
        p["metadata"] = {"name": f"pod-{i}", "namespace": "namespace-1" if i < bound else "namespace-2"}
        if i < bound:
            p["spec"]["nodeName"] = names[i % nodes]
        yield p


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.make_cluster", description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--bound", type=int, default=1000, help="pods already running (spec.nodeName set)")
    ap.add_argument("--pending", type=int, default=10000, help="pods to schedule")
    args = ap.parse_args(argv)
    yaml.dump_all(documents(args.nodes, args.bound, args.pending), sys.stdout, Dumper=_Dumper, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
