#!/usr/bin/env python3
"""Shrink a mismatching cluster from diff.py (or release_features.py) to a small repro, and record it.

Greedy delta debugging over the cluster's objects (the pending pod and the Namespaces stay): an object is
dropped when the oracle and our CLI still disagree in the same group (``score:NodeResourcesFit``,
``filter:code ...``) without it. The result is written as a recorded case for tests/oracle/: the cluster, the
disabled plugins, the release, and the real scheduler's answer for the pending pod, which the test compares
our answer with (so the test needs no Go toolchain).

    python tools/oracle/minimize.py --upstream-go ../shared/upstream-go --oracle oracle-1.36 \\
        --cli .venv/bin/scheduling-framework --kubernetes-version 1.36 --disable DefaultPreemption,... \\
        --name pod-level-resources-fit-score  MISMATCH.yaml  tests/oracle/recorded/NAME.yaml
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import yaml


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream-go", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--kubernetes-version", default="1.36")
    ap.add_argument("--disable", default="", help="plugins disabled on both sides (diff.py's -disable list)")
    ap.add_argument("--oracle-arg", action="append", default=[], help="extra oracle flag (e.g. -preempt)")
    ap.add_argument("--feature-gates", default="", help="set on both sides (oracle built from tools/oracle/main.go)")
    ap.add_argument("--group", default=None, help="the mismatch group to keep (default: the first one found)")
    ap.add_argument("--name", required=True)
    ap.add_argument("--why", default="", help="one line: what the case shows")
    ap.add_argument("cluster")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(a.upstream_go))
    import diff

    disabled = [x for x in a.disable.split(",") if x]
    work = tempfile.mkdtemp(prefix="minimize-")
    ksc = os.path.join(work, "ksc.yaml")
    with open(ksc, "w") as f:
        yaml.safe_dump(diff.ksc(disabled), f)
    oracle_args = [*a.oracle_arg, "-disable", ",".join(disabled)]
    if a.feature_gates:
        oracle_args = ["-feature-gates", a.feature_gates, *oracle_args]
    preempt = "-preempt" in a.oracle_arg

    def run(docs: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], dict[str, Any] | None]:
        path = os.path.join(work, "c.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all(docs, f, sort_keys=False)
        g = subprocess.run([a.oracle, *oracle_args, path], capture_output=True, text=True, timeout=120)
        if g.returncode != 0:
            return [("oracle-error", g.stderr[:200])], None
        go = json.loads(g.stdout)
        cmd = [a.cli, "schedule", "--cluster", path, "--config", ksc, "--explain", "--output", "json",
               "--seed", "1", "--kubernetes-version", a.kubernetes_version]
        if a.feature_gates:
            cmd += ["--feature-gates", a.feature_gates]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            return [("python-error", p.stderr[-200:])], go
        pods = [x for x in json.loads(p.stdout)["pods"] if x["pod"].endswith("/pending")]
        return diff.compare(go, pods[-1], preempt=preempt, docs=docs), go

    with open(a.cluster) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    mism, go = run(docs)
    groups = {g for g, _ in mism}
    if not mism:
        print("no mismatch: nothing to minimize", file=sys.stderr)
        return 1
    group = a.group or sorted(groups)[0]
    if group not in groups:
        print(f"group {group!r} not among {sorted(groups)}", file=sys.stderr)
        return 1

    # an Error is only the same mismatch with the same message (another error may appear once objects go)
    detail = next(d for g, d in mism if g == group) if group.startswith("error:") else None

    def keeps(candidate: list[dict[str, Any]]) -> bool:
        m, _ = run(candidate)
        return any(g == group and (detail is None or d == detail) for g, d in m)

    pending = docs[-1]
    fixed = [d for d in docs if d.get("kind") == "Namespace"]
    movable = [d for d in docs if d is not pending and d.get("kind") != "Namespace"]
    chunk = max(1, len(movable) // 2)
    while chunk >= 1:
        i = 0
        changed = False
        while i < len(movable):
            trial = movable[:i] + movable[i + chunk:]
            if keeps(fixed + trial + [pending]):
                movable = trial
                changed = True
            else:
                i += chunk
        if chunk == 1 and not changed:
            break
        chunk = max(1, chunk // 2) if chunk > 1 else (1 if changed else 0)
    final = fixed + movable + [pending]
    mism, go = run(final)
    case = {"name": a.name, "why": a.why, "oracle": os.path.basename(a.oracle),
            "kubernetesVersion": a.kubernetes_version, "featureGates": a.feature_gates, "disabled": disabled,
            "preempt": preempt,
            "group": group, "cluster": final, "go": go}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        yaml.safe_dump(case, f, sort_keys=False)
    print(f"{len(final)} objects kept; written to {a.out}; still mismatching: {sorted({g for g, _ in mism})}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
