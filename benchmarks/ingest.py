"""Production-size input: how fast, and in how much memory, a ``kubectl`` dump becomes a scheduling run.

Dumps come from :mod:`benchmarks.dump` (the shape of ``kubectl get nodes,pods -A -o json|yaml``, 30 pods per
node, ~2 % pending), written once into a cache folder. Each measurement runs in a fresh child interpreter,
so its CPU time and peak RSS are its own::

    python -m benchmarks.ingest                               # 500 and 5000 nodes, JSON and YAML
    python -m benchmarks.ingest --nodes 15000 --format json   # one size and format
    python -m benchmarks.ingest --managed-fields              # the dumps with managedFields
    python -m benchmarks.ingest --stages                      # per stage: read, parse, objects, schedule, output
    python -m benchmarks.ingest --baseline ../before          # end to end, another checkout beside this one
    python -m benchmarks.ingest --output json                 # one record per run

End to end is ``scheduling-framework schedule --cluster DUMP --output json --seed 1`` (to /dev/null).
``--stages`` runs the same work in steps in one child: ``read`` (the bytes, through the capped reader),
``parse`` (items, nothing built), ``objects`` (``load_cluster``), ``schedule`` (``Scheduler.load`` and ``run``)
and ``output`` (the JSON document); each stage's CPU time is its own, its peak RSS the process's so far.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("SF_DUMP_CACHE", "/tmp/scheduling-framework-dumps"))


def dump_path(nodes: int, fmt: str, managed_fields: bool) -> Path:
    """The cached dump, generated on first use."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"n{nodes}{'-mf' if managed_fields else ''}.{fmt}"
    if not path.exists():
        tmp = path.with_suffix(path.suffix + ".part")
        with open(tmp, "w", encoding="utf-8") as out:
            from benchmarks.dump import write

            write(out, nodes, fmt, managed_fields)
        tmp.rename(path)
    return path


def end_to_end(tree: Path, dump: Path) -> dict[str, Any]:
    """The CLI in ``tree`` (its own package) on ``dump``: CPU seconds and peak RSS of that process alone."""
    # A cap just above the file: older checkouts allocate the whole cap up front when reading.
    cmd = [sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", str(dump), "--output", "json",
           "--seed", "1", "--max-input-bytes", str(dump.stat().st_size + (1 << 20))]
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen(cmd, cwd=tree, stdout=null, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(tree)})
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read() if proc.stderr else ""
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    return {"cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "wall_s": round(wall, 2),
            "peak_rss_mib": round(usage.ru_maxrss / 1024), "exit": code, "error": err.strip()[-300:] if code else ""}


STAGES_CHILD = r"""
import gc, io, json, resource, sys, time
from scheduling_framework.cluster import load_cluster
from scheduling_framework.ingest import Counter, open_source, stream_items
from scheduling_framework.scheduler import Scheduler
path = sys.argv[1]
size = int(sys.argv[2])
out = {}
def mark(name, t0):
    out[name] = {"cpu_s": round(time.process_time() - t0, 2),
                 "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
t0 = time.process_time()
with open_source(path, what="cluster file", max_bytes=1 << 40) as src, src.open() as r:
    while r.read(1 << 22):
        pass
mark("read", t0)
t0 = time.process_time()
with open_source(path, what="cluster file", max_bytes=1 << 40) as src:
    n = sum(1 for _ in stream_items(src, Counter()))
mark("parse", t0)
t0 = time.process_time()
cluster = load_cluster(path, max_input_bytes=1 << 40)
mark("objects", t0)
t0 = time.process_time()
sched = Scheduler(None, seed=1)
sched.load(cluster.nodes, cluster.pods, cluster.objects)
gc.freeze()
sched.run()
mark("schedule", t0)
t0 = time.process_time()
results = [sched.results[p.key] for p in cluster.pending_pods if p.key in sched.results]
buf = io.StringIO()
json.dump({"pods": [r.to_dict(False) for r in results]}, buf, separators=(",", ":"))
mark("output", t0)
out["items"] = n
print(json.dumps(out))
"""


def stages(tree: Path, dump: Path) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-c", STAGES_CHILD, str(dump), str(dump.stat().st_size)], cwd=tree,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tree)})
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    result: dict[str, Any] = json.loads(p.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, action="append", help="cluster size (repeatable; default 500 and 5000)")
    ap.add_argument("--format", choices=("json", "yaml"), action="append", help="dump format (default both)")
    ap.add_argument("--managed-fields", action="store_true", help="dumps with metadata.managedFields")
    ap.add_argument("--stages", action="store_true", help="per-stage figures instead of end to end")
    ap.add_argument("--baseline", type=Path, help="another checkout to run end to end first, side by side")
    ap.add_argument("--output", choices=("table", "json"), default="table")
    args = ap.parse_args(argv)
    sizes = args.nodes or [500, 5000]
    formats = args.format or ["json", "yaml"]
    machine = _machine()
    records = []
    if args.output == "table":
        print(f"# {machine}")
    for nodes in sizes:
        for fmt in formats:
            dump = dump_path(nodes, fmt, args.managed_fields)
            mb = dump.stat().st_size / 1e6
            rec: dict[str, Any] = {"nodes": nodes, "pods": nodes * 30, "format": fmt,
                                   "managedFields": args.managed_fields, "mb": round(mb, 1)}
            if args.stages:
                rec["stages"] = stages(ROOT, dump)
            else:
                if args.baseline:
                    rec["before"] = end_to_end(args.baseline.resolve(), dump)
                rec["after"] = end_to_end(ROOT, dump)
            records.append(rec)
            if args.output == "table":
                _print(rec)
    if args.output == "json":
        print(json.dumps({"machine": machine, "records": records}, indent=2))
    return 0


def _print(rec: dict[str, Any]) -> None:
    head = f"{rec['nodes']} nodes / {rec['pods']} pods, {rec['format']}" + (
        " +managedFields" if rec["managedFields"] else "") + f", {rec['mb']} MB"
    if "stages" in rec:
        st = rec["stages"]
        if "error" in st:
            print(f"{head}: error {st['error']}")
            return
        parts = []
        for name in ("read", "parse", "objects", "schedule", "output"):
            s = st[name]
            rate = f" {rec['mb'] / s['cpu_s']:.0f} MB/s" if name in ("read", "parse", "objects") and s["cpu_s"] else ""
            parts.append(f"{name} {s['cpu_s']} CPU-s{rate} (peak {s['peak_rss_mib']} MiB)")
        print(f"{head}: " + "; ".join(parts))
        return
    for side in ("before", "after"):
        if side in rec:
            r = rec[side]
            if r["exit"]:
                print(f"{head} [{side}]: exit {r['exit']} {r['error']}")
            else:
                print(f"{head} [{side}]: {r['cpu_s']} CPU-s ({rec['mb'] / r['cpu_s']:.1f} MB/CPU-s), "
                      f"peak RSS {r['peak_rss_mib']} MiB, {r['wall_s']} s wall")


def _machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
    return f"{model}, {os.cpu_count()} cores, {mem:.0f} GiB, Python {sys.version.split()[0]}"


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
