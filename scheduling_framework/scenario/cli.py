"""The ``replay`` and ``sweep`` commands (wired into scheduling_framework.cli)."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

# A sweep that ran to the end but in which some scenarios failed (each reported in its row).
EXIT_SCENARIOS_FAILED = 4

REPLAY_EPILOG = """examples:
  scheduling-framework replay examples/scenarios/scale-down.yaml
  scheduling-framework replay examples/scenarios/scale-down.yaml --output json
"""

SWEEP_EPILOG = """examples:
  scheduling-framework sweep examples/scenarios/node-sizes.yaml
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --workers 4 --jsonl rows.jsonl --csv rows.csv
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --backend ray            # local Ray runtime
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --backend ray --address ray://head:10001
"""


def add_parsers(sub: Any) -> None:
    r = sub.add_parser("replay", help="run a scenario (cluster + timeline of operations) and report a timeline",
                       epilog=REPLAY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("scenario", help="scenario YAML (kind: Scenario; see docs/scenarios.md)")
    r.add_argument("--output", choices=("table", "json"), default="table")
    from scheduling_framework.cli_help import add_release_flags

    add_release_flags(r)  # override the scenario's kubernetesVersion / featureGates
    s = sub.add_parser("sweep", help="run a matrix of scenarios in parallel and aggregate one row per scenario",
                       epilog=SWEEP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("sweep", help="sweep YAML (kind: Sweep; see docs/scenarios.md)")
    s.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local process pool (default) or Ray (pip install 'scheduling-framework[ray]')")
    s.add_argument("--address", help="Ray cluster address (default: start a local Ray runtime)")
    s.add_argument("--workers", type=int, default=None, help="parallel scenarios (default: all cores)")
    s.add_argument("--jsonl", help="write one JSON object per scenario to this file")
    s.add_argument("--csv", help="write one CSV row per scenario to this file")
    s.add_argument("--output", choices=("table", "json"), default="table")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.command == "replay":
        return _replay(args, out, err)
    return _sweep(args, out, err)


def _table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.scenario import load_scenario, run_scenario
    from scheduling_framework.scenario.model import with_release

    sc = load_scenario(args.scenario)
    if args.kubernetes_version is not None or args.feature_gates is not None:
        sc = with_release(sc, args.kubernetes_version, args.feature_gates)
    result = run_scenario(sc)
    if args.output == "json":
        json.dump(result.to_dict(), out, indent=2)
        out.write("\n")
        return 0
    # Cycle times vary from run to run: they are in --output json (p50Ms/p99Ms per step), not the table.
    head = ["step", "operation", "time", "pods", "scheduled", "pending", "unsched", "evicted", "nodes", "used",
            "cpu", "mem", "cycles"]
    rows = [[str(s.index), s.description, f"{s.time:g}", str(s.pods), str(s.scheduled), str(s.pending),
             str(s.unschedulable), str(s.evicted), str(s.nodes), str(s.nodes_used), f"{s.cpu_utilization:.0%}",
             f"{s.memory_utilization:.0%}", str(s.cycles)] for s in result.steps]
    out.write(f"scenario {result.name} (seed {result.seed})\n")
    out.write(_table(head, rows))
    for w in result.warnings:
        print(f"warning: {w}", file=err)
    return 0


def _sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.errors import SchedulingFrameworkError
    from scheduling_framework.scenario.sweep import load_sweep, run_sweep, summary, to_csv, to_jsonl

    if args.workers is not None and args.workers < 1:
        raise SchedulingFrameworkError("--workers: must be at least 1")
    sweep = load_sweep(args.sweep)
    total = len(sweep.cases)
    done = [0]
    tty = hasattr(err, "isatty") and err.isatty()

    def on_row(row: dict[str, Any]) -> None:
        done[0] += 1
        if row.get("error"):
            print(f"scenario {row['index']} {json.dumps(row['params'], default=str)} seed {row['seed']} failed: "
                  f"{row['error']}", file=err)
        elif tty:
            print(f"\r{done[0]}/{total} scenarios", end="", file=err, flush=True)

    rows = run_sweep(sweep, backend=args.backend, workers=args.workers, address=args.address, on_row=on_row)
    if tty:
        print(file=err)
    if args.jsonl:
        _write(args.jsonl, to_jsonl(rows))
    if args.csv:
        _write(args.csv, to_csv(rows))
    summ = summary(rows)
    if args.output == "json":
        json.dump({"sweep": sweep.name, "backend": args.backend, "rows": rows, "summary": summ}, out, indent=2,
                  default=str)
        out.write("\n")
    else:
        # Cycle times (p50/p99) vary from run to run: they are in --jsonl/--csv/--output json, not the table.
        head = ["#", "params", "seed", "scheduled", "unsched", "evicted", "used", "cpu", "error"]
        table = [[str(r["index"]), ", ".join(f"{k}={v}" for k, v in r["params"].items()), str(r["seed"]),
                  str(r.get("scheduled", "-")), str(r.get("unschedulable", "-")), str(r.get("evicted", "-")),
                  str(r.get("nodesUsed", "-")),
                  f"{r['cpuUtilization']:.0%}" if "cpuUtilization" in r else "-",
                  (r.get("error") or "")[:60]] for r in rows]
        out.write(f"sweep {sweep.name}: {summ['scenarios']} scenarios, {summ['failed']} failed, "
                  f"{summ['allScheduled']} with every pod scheduled ({args.backend} backend)\n")
        out.write(_table(head, table))
    return 0 if summ["failed"] == 0 else EXIT_SCENARIOS_FAILED


def _write(path: str, text: str) -> None:
    from scheduling_framework.errors import SchedulingFrameworkError

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise SchedulingFrameworkError(f"cannot write {path}: {e.strerror or e}") from None


