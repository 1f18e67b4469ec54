"""Upstream kube-scheduler (Go) against ours on realistic ``kubectl get nodes,pods -A -o json`` dumps.

    python -m benchmarks.dumpbench --dump c500.json [--dump ...] [--reps 3] [--output table|json]
    python -m benchmarks.dumpbench --dump c500.json --gotest PATH/dump.test --out runs.jsonl   # paired with Go
    python -m benchmarks.dumpbench --dump c500.json --baseline ../before --out runs.jsonl        # before/after
    python -m benchmarks.dumpbench --dump c500.json --gotest PATH/dump.test --bindings /tmp/b   # + placements
    python -m benchmarks.dumpbench --summary runs.jsonl [--summary more.jsonl] [--max-load 3]  # medians table

Dumps come from ``gen_dump.py`` (beside the Go runner), optionally made heavier by :mod:`benchmarks.dump_mix`.
Every run is a fresh child process, so its CPU time and peak RSS are its own:

* **ours**: a child interpreter with ``PYTHONPATH`` set to the tree measured (this checkout, or ``--baseline
  DIR``): ``load_cluster`` (load time), ``Scheduler(None, seed=1).load(...)`` and ``gc.freeze()`` (setup time),
  then the process CPU time of ``list(sched.run())`` alone: **pods/CPU-s** = pending pods / that CPU time.
* **Go**: ``DUMP=<file> GOMAXPROCS=<--go-procs> dump.test -test.run TestDump -test.v`` (upstream v1.35.4 in
  process, fake client and informers; see the header of its ``dump_test.go``): its ``RESULT`` line, the
  getrusage CPU time of the ``ScheduleOne`` loop until every pending pod is bound or has failed once. Load time
  is its ``decode_s``, setup time its informers' ``sync_s``.

With ``--gotest`` each repetition is a **pair**: the Go run and ours started together, one per core (the
machine has 2), so both meet the same background load; the 1-minute load average is read at the start of
each pair. With ``--baseline DIR`` each repetition also has a pair of the baseline tree and this tree, started
together the same way (with both options: a Go pair, then a baseline pair). Repetition-major order (every dump
once, then again), so a run cut short still covers every dump. ``--out FILE`` appends one JSON line per run as
it ends (side, dump, rep, pair, figures, load averages, the machine); ``--summary FILE`` prints the medians of
such a file as a markdown table: each side's median pods/CPU-s, and the **median of the pairs' ratios** (ours
÷ Go, ours ÷ baseline), which cancels what moves both sides of a pair.

``--bindings DIR`` writes each run's placements there (``ns/name node`` per bound pod, the format of the Go
runner's ``DUMP_BINDINGS``) and records, for each pair, how many pods bound by both sides got the same node.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import cpu_model

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TIMEOUT_S = 1800.0

# Ours, in a fresh interpreter: argv = dump path, bindings file ("" for none). Prints one JSON object.
# Only the API every checkout has (a baseline may be older): load_cluster, Scheduler.load/run, PodResult.
OURS_CHILD = r"""
import collections, gc, json, resource, sys, time
from scheduling_framework.cluster import load_cluster
from scheduling_framework.scheduler import Scheduler
path, bindings = sys.argv[1], sys.argv[2]
w = time.perf_counter()
c = load_cluster(path, max_input_bytes=1 << 40)
load_s = time.perf_counter() - w
pending = len(c.pending_pods)
w = time.perf_counter()
s = Scheduler(None, seed=1)
s.load(c.nodes, c.pods, c.objects)
gc.freeze()
setup_s = time.perf_counter() - w
t0 = time.process_time(); w0 = time.perf_counter()
res = list(s.run())
cpu = time.process_time() - t0
wall = time.perf_counter() - w0
outcomes = collections.Counter(r.outcome for r in res)
scheduled = [r for r in res if r.outcome == "Scheduled" and r.node]
if bindings:
    with open(bindings, "w", encoding="utf-8") as f:
        f.writelines(f"{r.pod} {r.node}\n" for r in scheduled)
print(json.dumps({
    "nodes": len(c.nodes), "pods": len(c.pods), "pending": pending, "scheduled": len(scheduled),
    "unschedulable": pending - len(scheduled), "outcomes": dict(sorted(outcomes.items())),
    "calls": sum(getattr(r, "attempts", 0) for r in res), "cpu_s": round(cpu, 4), "wall_s": round(wall, 4),
    "pods_per_cpu_s": round(pending / cpu, 1) if cpu > 0 else 0.0,
    "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "load_s": round(load_s, 3), "setup_s": round(setup_s, 3)}))
"""

_GO_INT = ("nodes", "pods", "pending", "bound", "unschedulable", "calls", "failed_attempts", "gomaxprocs")
_GO_FLOAT = ("cpu_s_loop", "pods_per_cpu_s", "wall_s", "maxrss_mib")


# --- one run -------------------------------------------------------------------------------------------------------


def load1() -> float:
    """The 1-minute load average (0.0 where /proc/loadavg is missing)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def machine() -> dict[str, Any]:
    """What the figures were taken on: core count, CPU model, memory, Python."""
    cpu = cpu_model()
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30), 1)
    except (ValueError, OSError, AttributeError):
        mem_gib = 0.0
    return {"nproc": os.cpu_count(), "cpu": cpu, "mem_gib": mem_gib, "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": platform.platform()}


def _run(cmd: Sequence[str], env: dict[str, str], cwd: Path, timeout: float) -> tuple[int | None, str, str, float]:
    """Exit code (None: killed at ``timeout``), stdout, stderr and wall seconds of one child process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(list(cmd), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
        code: int | None = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()  # our own child, by its handle
        out, err = p.communicate()
        code = None
    return code, out, err, time.perf_counter() - t0


def _failure(code: int | None, timeout: float, text: str) -> str:
    head = f"timed out after {timeout:g} s" if code is None else f"exit {code}"
    return f"{head}: {text.strip()[-2000:]}"


def ours_once(tree: Path, dump: Path, bindings: Path | None, timeout: float) -> dict[str, Any]:
    """Our scheduler from ``tree`` on ``dump``, in a fresh interpreter: the child's figures."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    code, out, err, wall = _run([sys.executable, "-c", OURS_CHILD, str(dump), str(bindings or "")], env, tree,
                                timeout)
    rec: dict[str, Any] = {"tree": str(tree), "process_wall_s": round(wall, 2)}
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("{")), None)
    if code != 0 or line is None:
        rec["error"] = _failure(code, timeout, err or out)
        return rec
    rec.update(json.loads(line))
    return rec


def parse_go_output(out: str) -> dict[str, Any]:
    """The figures of a ``dump.test`` output (its RESULT, LOADED and SYNCED lines); {} without a RESULT line."""
    m = re.search(r"^RESULT (.*)$", out, re.MULTILINE)
    if not m:
        return {}
    kv = dict(x.split("=", 1) for x in m.group(1).split() if "=" in x)
    rec: dict[str, Any] = {}
    for k in _GO_INT:
        if k in kv:
            rec[k] = int(kv[k])
    for k in _GO_FLOAT:
        if k in kv:
            rec[k] = float(kv[k])
    rec["cpu_s"] = rec.pop("cpu_s_loop", 0.0)
    rec["peak_rss_mib"] = rec.pop("maxrss_mib", 0.0)
    rec["scheduled"] = rec.pop("bound", 0)
    rec["outcomes"] = {k: v for k, v in (("Scheduled", rec["scheduled"]),
                                         ("Unschedulable", rec.get("unschedulable", 0))) if v}
    loaded = re.search(r"^LOADED .*\bdecode_s=([\d.]+)", out, re.MULTILINE)
    synced = re.search(r"^SYNCED .*\bsync_s=([\d.]+)", out, re.MULTILINE)
    if loaded:
        rec["load_s"] = float(loaded.group(1))
    if synced:
        rec["setup_s"] = float(synced.group(1))
    return rec


def go_once(gotest: Path, dump: Path, procs: int, bindings: Path | None, timeout: float) -> dict[str, Any]:
    """Upstream's scheduler (the Go ``dump.test``) on ``dump`` with GOMAXPROCS=``procs``."""
    env = dict(os.environ, DUMP=str(dump), GOMAXPROCS=str(procs))
    env.setdefault("DUMP_TIMEOUT_S", str(int(timeout)))  # its own loop limit: no shorter than ours
    if bindings is not None:
        env["DUMP_BINDINGS"] = str(bindings)
    else:
        env.pop("DUMP_BINDINGS", None)
    code, out, err, wall = _run([str(gotest), "-test.run", "TestDump", "-test.v"], env, gotest.parent, timeout)
    rec: dict[str, Any] = {"gotest": str(gotest), "process_wall_s": round(wall, 2)}
    rec.update(parse_go_output(out))
    if code != 0 or "pods_per_cpu_s" not in rec:
        rec["error"] = _failure(code, timeout, out + err)
    return rec


def read_bindings(path: Path) -> dict[str, str]:
    """``ns/name node`` lines: pod -> node (an absent file: none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        pod, _, node = line.strip().partition(" ")
        if pod and node:
            out[pod] = node
    return out


def compare_bindings(a: Path, b: Path) -> dict[str, int]:
    """How the placements of two runs on one dump agree: pods bound by both, of which on the same node, and the
    pods only one side bound."""
    x, y = read_bindings(a), read_bindings(b)
    both = x.keys() & y.keys()
    return {"bound_by_both": len(both), "same_node": sum(1 for p in both if x[p] == y[p]),
            "only_first": len(x.keys() - y.keys()), "only_second": len(y.keys() - x.keys())}


# --- the campaign --------------------------------------------------------------------------------------------------

Runner = Callable[[Path | None], dict[str, Any]]


def _pair(sides: Sequence[tuple[str, Runner]], bindings_dir: Path | None, stem: str) -> list[dict[str, Any]]:
    """Start the runs of ``sides`` together (one thread each, waiting on its child) and return their records,
    with the load average read just before they started and again as each ended."""
    la0 = load1()

    def one(side: str, fn: Runner) -> dict[str, Any]:
        bindings = bindings_dir / f"{stem}.{side}.txt" if bindings_dir is not None else None
        rec = {"side": side, "load1_before": la0}
        rec.update(fn(bindings))
        rec["load1_after"] = load1()
        if bindings is not None and "error" not in rec:
            rec["bindings"] = str(bindings)
        return rec

    if len(sides) == 1:
        return [one(*sides[0])]
    with concurrent.futures.ThreadPoolExecutor(len(sides)) as ex:
        futures = [ex.submit(one, side, fn) for side, fn in sides]
        return [f.result() for f in futures]


def run_campaign(dumps: Sequence[Path], reps: int, gotest: Path | None = None, baseline: Path | None = None,
                 go_procs: int = 1, bindings_dir: Path | None = None, timeout: float = DEFAULT_TIMEOUT_S,
                 out: Path | None = None, progress: Callable[[dict[str, Any]], None] | None = None,
                 tree: Path = ROOT) -> list[dict[str, Any]]:
    """Every dump ``reps`` times (repetition-major); each repetition: (Go, ours) started together when ``gotest``
    is given, (baseline, ours) started together when ``baseline`` is, ours alone when neither. Each record is
    appended to ``out`` (JSON lines) and passed to ``progress`` as its pair ends."""
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    mach = machine()
    records: list[dict[str, Any]] = []
    if bindings_dir is not None:
        bindings_dir.mkdir(parents=True, exist_ok=True)
    for rep in range(1, reps + 1):
        for dump in dumps:
            groups: list[tuple[str, list[tuple[str, Runner]]]] = []

            def ours(b: Path | None, d: Path = dump, t: Path = tree) -> dict[str, Any]:
                return ours_once(t, d, b, timeout)

            if gotest is not None:
                def go(b: Path | None, d: Path = dump, g: Path = gotest) -> dict[str, Any]:
                    return go_once(g, d, go_procs, b, timeout)
                groups.append(("go", [("go", go), ("ours", ours)]))
            if baseline is not None:
                def base(b: Path | None, d: Path = dump, t: Path = baseline) -> dict[str, Any]:
                    return ours_once(t, d, b, timeout)
                groups.append(("baseline", [("baseline", base), ("ours", ours)]))
            if not groups:
                groups.append(("solo", [("ours", ours)]))
            for kind, sides in groups:
                pair_id = f"{started}/{dump.name}/rep{rep}/{kind}"
                stem = f"{dump.stem}.rep{rep}.{kind}-pair"
                recs = _pair(sides, bindings_dir, stem)
                if len(recs) == 2 and all("bindings" in r for r in recs):
                    cmp = compare_bindings(Path(recs[1]["bindings"]), Path(recs[0]["bindings"]))
                    recs[1][f"vs_{kind}"] = {"bound_by_both": cmp["bound_by_both"], "same_node": cmp["same_node"],
                                             "only_ours": cmp["only_first"], f"only_{kind}": cmp["only_second"]}
                for rec in recs:
                    rec.update(dump=dump.name, dump_path=str(dump), dump_mib=round(dump.stat().st_size / (1 << 20), 1),
                               rep=rep, pair=pair_id, paired=len(recs) == 2,
                               time=time.strftime("%Y-%m-%dT%H:%M:%S"), machine=mach)
                    if rec["side"] == "go":
                        rec.setdefault("gomaxprocs", go_procs)
                    records.append(rec)
                    if out is not None:
                        with open(out, "a", encoding="utf-8") as f:
                            f.write(json.dumps(rec, sort_keys=True) + "\n")
                    if progress is not None:
                        progress(rec)
    return records


# --- reporting -----------------------------------------------------------------------------------------------------

_RUN_HEAD = ("rep", "dump", "side", "nodes", "pending", "scheduled", "outcomes", "pods/CPU-s", "loop CPU s",
             "loop wall s", "load s", "setup s", "peak RSS MiB", "load1", "same node")


def run_row(r: dict[str, Any]) -> tuple[str, ...]:
    """One run as a table row (an error: its message in the outcomes column)."""
    side = r["side"] + (f" ({r['gomaxprocs']} procs)" if r["side"] == "go" and r.get("gomaxprocs", 1) != 1 else "")
    if "error" in r:
        msg = r["error"].splitlines()[0][:100] if r["error"] else "error"
        return (str(r.get("rep", "")), r.get("dump", ""), side, "-", "-", "-", f"ERROR {msg}",
                *("-" for _ in range(7)), f"{r.get('load1_before', 0):.1f}", "-")
    vs = next((v for k, v in r.items() if k.startswith("vs_") and isinstance(v, dict)), None)
    same = f"{vs['same_node']}/{vs['bound_by_both']}" if vs else "-"
    outcomes = ", ".join(f"{k} {v}" for k, v in r.get("outcomes", {}).items()) or "-"
    return (str(r.get("rep", "")), r.get("dump", ""), side, str(r.get("nodes", "-")), str(r.get("pending", "-")),
            str(r.get("scheduled", "-")), outcomes, f"{r['pods_per_cpu_s']:.0f}", f"{r.get('cpu_s', 0):.3f}",
            f"{r.get('wall_s', 0):.3f}", _num(r.get("load_s"), 2), _num(r.get("setup_s"), 2),
            _num(r.get("peak_rss_mib"), 0), f"{r.get('load1_before', 0):.1f}", same)


def runs_table(records: Iterable[dict[str, Any]]) -> str:
    """Every run, one row each."""
    return _table(_RUN_HEAD, [run_row(r) for r in records])


def summary_table(records: Iterable[dict[str, Any]], max_load: float | None = None) -> str:
    """Medians per dump (one row per dump and Go GOMAXPROCS): each side's median pods/CPU-s, the median of the
    pairs' ratios (ours ÷ Go over the Go pairs, ours ÷ baseline over the baseline pairs), the load average at
    the start of the runs (median, range), each side's range over all runs, peak RSS and, where bindings were
    compared, the pods that got the same node. Failed runs are left out (with the rest of their pair);
    ``max_load``: only the pairs that started at or below that 1-minute load average."""
    pairs: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        pairs.setdefault(str(r.get("pair") or id(r)), []).append(r)
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for recs in pairs.values():
        if any("error" in r for r in recs):
            continue
        if max_load is not None and min(r.get("load1_before", 0.0) for r in recs) > max_load:
            continue
        sides = {r["side"]: r for r in recs}
        procs = int(sides["go"].get("gomaxprocs", 1)) if "go" in sides else 1
        row = rows.setdefault((recs[0]["dump"], procs), {"go": [], "ours": [], "baseline": [], "ratio_go": [],
                                                          "ratio_baseline": [], "load1": [], "same": []})
        for r in recs:
            if r["side"] in ("go", "ours", "baseline"):
                row[r["side"]].append(r)
        row["load1"].append(recs[0].get("load1_before", 0.0))
        ours = sides.get("ours")
        for other in ("go", "baseline"):
            if ours is not None and other in sides and sides[other]["pods_per_cpu_s"] > 0:
                row[f"ratio_{other}"].append(ours["pods_per_cpu_s"] / sides[other]["pods_per_cpu_s"])
            vs = ours.get(f"vs_{other}") if ours is not None else None
            if isinstance(vs, dict) and vs.get("bound_by_both"):
                row["same"].append((other, vs["same_node"], vs["bound_by_both"]))
    has_go = any(row["go"] for row in rows.values())
    has_base = any(row["baseline"] for row in rows.values())
    has_same = any(row["same"] for row in rows.values())
    head = ["dump", "nodes", "pending"]
    if has_go:
        head += ["Go pods/CPU-s"]
    head += ["ours pods/CPU-s"]
    if has_go:
        head += ["ours ÷ Go"]
    if has_base:
        head += ["baseline pods/CPU-s", "ours ÷ baseline"]
    head += ["load1 (range)"]
    if has_go:
        head += ["all runs: Go"]
    head += ["all runs: ours"]
    if has_base:
        head += ["all runs: baseline"]
    if has_go:
        head += ["all runs: ours ÷ Go"]
    head += ["peak RSS MiB: " + " / ".join((["Go"] if has_go else []) + ["ours"])]
    if has_same:
        head += ["same node"]
    head += ["runs"]
    out_rows = []
    for (dump, procs), row in rows.items():
        any_rec = (row["ours"] or row["go"] or row["baseline"])[0]
        cells = [dump + (f" (GOMAXPROCS={procs})" if procs != 1 else ""), str(any_rec.get("nodes", "-")),
                 str(any_rec.get("pending", "-"))]
        if has_go:
            cells.append(_med(row["go"], "pods_per_cpu_s"))
        cells.append(_med(row["ours"], "pods_per_cpu_s"))
        if has_go:
            cells.append(f"{statistics.median(row['ratio_go']):.2f}x" if row["ratio_go"] else "-")
        if has_base:
            cells.append(_med(row["baseline"], "pods_per_cpu_s"))
            cells.append(f"{statistics.median(row['ratio_baseline']):.2f}x" if row["ratio_baseline"] else "-")
        la = row["load1"]
        cells.append(f"{statistics.median(la):.1f} ({min(la):.1f}-{max(la):.1f})")
        if has_go:
            cells.append(_rng(row["go"], "pods_per_cpu_s"))
        cells.append(_rng(row["ours"], "pods_per_cpu_s"))
        if has_base:
            cells.append(_rng(row["baseline"], "pods_per_cpu_s"))
        if has_go:
            rg = row["ratio_go"]
            cells.append(f"{min(rg):.2f}-{max(rg):.2f}x" if rg else "-")
        cells.append(" / ".join(([_med(row["go"], "peak_rss_mib")] if has_go else [])
                                + [_med(row["ours"], "peak_rss_mib")]))
        if has_same:
            cells.append(_same_node(row["same"]))
        cells.append(", ".join(f"{len(row[s])} {s}" for s in ("go", "ours", "baseline") if row[s]))
        out_rows.append(tuple(cells))
    return _table(head, out_rows)


def read_records(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The records of JSON-lines result files (blank lines skipped)."""
    recs: list[dict[str, Any]] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            recs.extend(json.loads(line) for line in f if line.strip())
    return recs


def machine_line(m: dict[str, Any]) -> str:
    return f"machine: {m.get('nproc')} x {m.get('cpu') or 'unknown CPU'}, {m.get('mem_gib', '?')} GiB, " \
           f"{m.get('implementation', 'Python')} {m.get('python')}"


def _same_node(found: Sequence[tuple[str, int, int]]) -> str:
    """Per other side: pods on the same node / pods bound by both (medians over the pairs, range when it moves)."""
    parts = []
    for other in ("go", "baseline"):
        same = [s for o, s, _ in found if o == other]
        both = [b for o, _, b in found if o == other]
        if same:
            rng = f" ({min(same)}-{max(same)})" if min(same) != max(same) else ""
            parts.append(f"{other} {statistics.median(same):.0f}/{statistics.median(both):.0f}{rng}")
    return ", ".join(parts) or "-"


def _med(recs: Sequence[dict[str, Any]], key: str) -> str:
    vals = [r[key] for r in recs if r.get(key) is not None]
    return f"{statistics.median(vals):.0f}" if vals else "-"


def _rng(recs: Sequence[dict[str, Any]], key: str) -> str:
    vals = [r[key] for r in recs if r.get(key) is not None]
    return f"{min(vals):.0f}-{max(vals):.0f}" if vals else "-"


def _num(v: float | None, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --- command line --------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.dumpbench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", type=Path, action="append", default=[], metavar="FILE",
                    help="a kubectl get nodes,pods -A -o json dump (repeatable)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of every dump (default 3)")
    ap.add_argument("--gotest", type=Path, metavar="PATH",
                    help="upstream's dump.test: each repetition runs it and ours together, one per core")
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="another checkout of the project, run together with this tree in each repetition")
    ap.add_argument("--go-procs", type=int, default=1, help="GOMAXPROCS of the Go runs (default 1)")
    ap.add_argument("--output", choices=("table", "json"), default="table")
    ap.add_argument("--out", type=Path, metavar="FILE.jsonl", help="append one JSON line per run")
    ap.add_argument("--bindings", type=Path, metavar="DIR",
                    help="write each run's placements there and compare the two sides of each pair")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help=f"seconds before a child process is killed (default {DEFAULT_TIMEOUT_S:g})")
    ap.add_argument("--summary", type=Path, action="append", metavar="FILE.jsonl",
                    help="print the medians of results files as a markdown table (repeatable) and exit")
    ap.add_argument("--max-load", type=float, metavar="LOAD",
                    help="--summary: only the pairs started at or below this 1-minute load average")
    args = ap.parse_args(argv)
    if args.summary:
        missing = [str(p) for p in args.summary if not p.is_file()]
        if missing:
            ap.error(f"--summary: no such file: {', '.join(missing)}")
        recs = read_records(args.summary)
        for m in {json.dumps(r["machine"], sort_keys=True) for r in recs if r.get("machine")}:
            print(machine_line(json.loads(m)))
        print(summary_table(recs, args.max_load))
        return 0
    if not args.dump:
        ap.error("--dump FILE is required (or --summary FILE)")
    for d in args.dump:
        if not d.is_file():
            ap.error(f"--dump {d}: no such file")
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.gotest is not None and not (args.gotest.is_file() and os.access(args.gotest, os.X_OK)):
        ap.error(f"--gotest {args.gotest}: not an executable file")
    if args.baseline is not None and not (args.baseline / "scheduling_framework" / "scheduler.py").is_file():
        ap.error(f"--baseline {args.baseline}: not a checkout of this project (no scheduling_framework/scheduler.py)")

    def progress(rec: dict[str, Any]) -> None:
        print("# " + " | ".join(run_row(rec)), file=sys.stderr, flush=True)

    records = run_campaign(
        [d.resolve() for d in args.dump], args.reps, gotest=args.gotest.resolve() if args.gotest else None,
        baseline=args.baseline.resolve() if args.baseline else None, go_procs=args.go_procs,
        bindings_dir=args.bindings.resolve() if args.bindings else None, timeout=args.timeout, out=args.out,
        progress=progress)
    if args.output == "json":
        json.dump({"machine": machine(), "records": [{k: v for k, v in r.items() if k != "machine"} for r in records]},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(machine_line(machine()))
        print()
        print(runs_table(records))
        print()
        print(summary_table(records))
    return 1 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
