"""Instructions of the scheduling loop on a dump, counted by valgrind's callgrind: a before/after figure that this
noisy VM cannot blur.

    python -m benchmarks.loop_instructions --dump c500.json [--baseline ../before] [--dump ...]

Pods per CPU-second move by 10-20 % between two runs of the same tree here (an A/A pair of benchmarks.dumpbench
measured 0.91x), which hides the 2-5 % a hot-path change is worth. The instructions the interpreter executes do
not move: two runs of one tree agree within 0.05 %. Each run is a child ``valgrind --tool=callgrind
--instr-atstart=no`` of the tree measured (``PYTHONPATH``; ``PYTHONHASHSEED=0``): it loads the dump and sets the
scheduler up uninstrumented, then turns counting on (``callgrind_control -i on``) for ``list(sched.run())`` alone,
as benchmarks.dumpbench times it. Under valgrind a run takes about 60 times as long (a 500-node dump: about a
minute); with ``--baseline`` the two trees run side by side, one per core. Instructions are not time (cache
misses and memory traffic are not counted): take them for what a change does to the interpreter's work, and
confirm a large one in pods per CPU-second with benchmarks.dumpbench.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The child: only the API every checkout has (a baseline may be older).
CHILD = r"""
import gc, os, subprocess, sys
from scheduling_framework.cluster import load_cluster
from scheduling_framework.scheduler import Scheduler
c = load_cluster(sys.argv[1], max_input_bytes=1 << 40)
s = Scheduler(None, seed=1)
s.load(c.nodes, c.pods, c.objects)
gc.collect()
gc.freeze()
subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
n = len(list(s.run()))
subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
print("PODS", n)
"""


def available() -> str | None:
    """Why the count cannot be taken here (no valgrind), or None."""
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian: apt-get install valgrind)"
    return None


def count(tree: Path, dump: Path, timeout: float = 3600.0) -> tuple[int, int]:
    """(instructions of the loop, pods it scheduled) for ``tree`` on ``dump``."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
        out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                              f"--callgrind-out-file={tmp}/cg.out", sys.executable, "-c", CHILD, str(dump)],
                             env=env, cwd=tmp, capture_output=True, text=True, timeout=timeout)
    collected = re.search(r"Collected : (\d+)", out.stderr)
    pods = re.search(r"^PODS (\d+)", out.stdout, re.M)
    if out.returncode != 0 or collected is None or pods is None:
        raise SystemExit(f"callgrind run of {tree} on {dump} failed ({out.returncode}): {out.stderr[-2000:]}")
    return int(collected.group(1)), int(pods.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", action="append", required=True, type=Path, help="a cluster dump (repeatable)")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout, counted side by side")
    args = ap.parse_args(argv)
    why = available()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    print("| dump | pods | instructions | per pod | baseline | ours ÷ baseline |")
    print("|---|---:|---:|---:|---:|---:|")
    for dump in args.dump:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            ours_f = pool.submit(count, ROOT, dump)
            base_f = pool.submit(count, args.baseline, dump) if args.baseline else None
            ours, pods = ours_f.result()
            base = base_f.result()[0] if base_f is not None else None
        tail = f"{base:,} | {ours / base:.4f}" if base else "- | -"
        print(f"| {dump.name} | {pods} | {ours:,} | {ours // max(pods, 1):,} | {tail} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
