"""The ``replay`` and ``sweep`` commands (wired into scheduling_framework.cli)."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

# A sweep that ran to the end but in which some scenarios failed (each reported in its row).
EXIT_SCENARIOS_FAILED = 4
# A result file could not be written (a full disk, ulimit -f): the sweep stopped, every whole row is kept.
EXIT_OUTPUT_FAILED = 1
# Distinct warnings a sweep prints on stderr (the rows keep every one of theirs).
MAX_SWEEP_WARNINGS = 20

REPLAY_EPILOG = """examples:
  scheduling-framework replay examples/scenarios/scale-down.yaml
  scheduling-framework replay examples/scenarios/scale-down.yaml --output json
  scheduling-framework replay examples/scenarios/scale-down.yaml --strict   # unknown manifest fields are errors
"""

SWEEP_EPILOG = """examples:
  scheduling-framework sweep examples/scenarios/node-sizes.yaml
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --workers 4 --jsonl rows.jsonl --csv rows.csv
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --jsonl rows.jsonl --resume  # after an interrupt
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --dry-run
  scheduling-framework sweep examples/scenarios/node-sizes.yaml --strict   # unknown fields: the scenario's error
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
    r.add_argument("--strict", action="store_true",
                   help="fields the Kubernetes API does not define (e.g. spec.node_selector) in the scenario's "
                        "cluster or templates are errors, as with kubectl --validate=strict, and so is a step "
                        "naming a node or pod that does not exist (default: a warning naming each, which the "
                        "replay ignores)")
    s = sub.add_parser("sweep", help="run a matrix of scenarios in parallel and aggregate one row per scenario",
                       epilog=SWEEP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("sweep", help="sweep YAML (kind: Sweep; see docs/scenarios.md)")
    s.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local process pool (default) or Ray (pip install 'scheduling-framework[ray]')")
    s.add_argument("--address", help="Ray cluster address (default: start a local Ray runtime)")
    s.add_argument("--workers", type=int, default=None, help="parallel scenarios (default: all cores)")
    s.add_argument("--jsonl", help="write one JSON object per scenario to this file")
    s.add_argument("--csv", help="write one CSV row per scenario to this file")
    s.add_argument("--resume", action="store_true",
                   help="keep the rows already in --jsonl/--csv and run only the scenarios they lack")
    s.add_argument("--dry-run", action="store_true",
                   help="print how many scenarios would run and an estimate of their CPU time (from a sample)")
    s.add_argument("--sample", type=int, default=5, metavar="N",
                   help="with --dry-run: scenarios to time for the estimate (default 5)")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar with rows/s and ETA on stderr (default: only when stderr is a terminal)")
    s.add_argument("--strict", action="store_true",
                   help="fields the Kubernetes API does not define (e.g. spec.node_selector) in a scenario's cluster "
                        "or templates, from the base or the matrix, make that scenario's row an error naming the "
                        "field, as kubectl --validate=strict would refuse it, and so does a step naming a node or "
                        "pod that does not exist; the other scenarios run (default: each is a warning, in the row's "
                        "\"warnings\" and printed once with the first scenario to finish with it, and such a step does "
                        "nothing for the names that do not exist)")
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

    sc = load_scenario(args.scenario, strict=args.strict)
    if args.kubernetes_version is not None or args.feature_gates is not None:
        sc = with_release(sc, args.kubernetes_version, args.feature_gates)
    result = run_scenario(sc, strict=args.strict)
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


class _Stopped(BaseException):
    """SIGTERM (or SIGINT) during a sweep: unwinds the run like KeyboardInterrupt, naming the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, _frame: Any) -> None:
    import signal

    # Once stopping, a second signal must not cut the clean-up (stopping the workers) short.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stopped(signum)


def _sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import contextlib
    import signal
    import threading

    from scheduling_framework.errors import SchedulingFrameworkError
    from scheduling_framework.report.progress import Progress, should_show
    from scheduling_framework.scenario.rowfiles import RowFileError, read_rows
    from scheduling_framework.scenario.sweep import first_warnings, load_sweep, run_sweep, summary

    if args.workers is not None and args.workers < 1:
        raise SchedulingFrameworkError("--workers: must be at least 1")
    if args.sample < 1:
        raise SchedulingFrameworkError("--sample: must be at least 1")
    if args.resume and not (args.jsonl or args.csv):
        raise SchedulingFrameworkError("--resume: needs --jsonl or --csv (the rows already written are read there)")
    sweep = load_sweep(args.sweep, strict=args.strict)
    if args.dry_run:
        return _dry_run(args, sweep, out)
    # Each distinct warning is printed once, naming the first scenario to finish with it (a typo in the base
    # scenario would otherwise be printed once per scenario); the rows keep their own in "warnings".
    shown: set[str] = set()
    if not args.strict:  # under --strict they are the rows' errors
        for w in first_warnings(sweep):
            print(f"warning: scenario 0: {w}", file=err)
            shown.add(w)
    total = len(sweep)
    done = [0]
    collected: list[dict[str, Any]] = []
    cr = [""]  # "\r" while a progress bar is drawn: a message starts at the line's beginning
    printed = [0]

    def on_row(row: dict[str, Any]) -> None:
        done[0] += 1
        if not (args.jsonl or args.csv):
            collected.append(row)
        if row.get("error"):
            print(f"{cr[0]}scenario {row['index']} {json.dumps(row['params'], default=str)} seed {row['seed']} failed: "
                  f"{row['error']}", file=err)
        for w in row.get("warnings") or ():
            if w in shown or printed[0] > MAX_SWEEP_WARNINGS:
                continue
            printed[0] += 1
            if printed[0] > MAX_SWEEP_WARNINGS:
                print(f"{cr[0]}warning: more warnings not shown: each row's \"warnings\" holds those of its scenario "
                      "(--jsonl, --output json)", file=err)
                continue
            shown.add(w)
            print(f"{cr[0]}warning: scenario {row['index']}: {w}", file=err)

    def notify(msg: str) -> None:
        print(f"{cr[0]}warning: {msg}", file=err)

    main_thread = threading.current_thread() is threading.main_thread()
    previous = ({s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)} if main_thread else {})
    stopped: int | None = None
    write_error: RowFileError | None = None
    try:
        show = should_show(err, args.progress)
        cr[0] = "\r" if show else ""
        # On resuming, the bar counts the scenarios left (so that rows/s and the ETA are this run's).
        left = total - len(_written_ids(args, sweep)) if show and args.resume else total
        # Ray's driver prints the errors its raylet reports (a worker that died) on sys.stdout, whatever
        # log_to_driver says: during the run they go to stderr, so that stdout holds only the table or the JSON.
        quiet = contextlib.redirect_stdout(err) if args.backend == "ray" else _nothing()
        with Progress(err, max(left, 0), lambda: done[0], unit="rows") if show else _nothing(), quiet:
            run_sweep(sweep, backend=args.backend, workers=args.workers, address=args.address, on_row=on_row,
                      jsonl=args.jsonl, csv=args.csv, resume=args.resume, notify=notify)
    except _Stopped as e:
        stopped = e.signum
    except KeyboardInterrupt:
        stopped = signal.SIGINT
    except RowFileError as e:
        write_error = e
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    # The table is made from what was written: every row of the files, those of earlier runs included.
    if args.jsonl:
        rows = read_rows(args.jsonl, "jsonl")
    elif args.csv:
        rows = read_rows(args.csv, "csv")
    else:
        rows = sorted(collected, key=lambda r: r["index"])
    summ = summary(rows)
    if args.output == "json":
        json.dump({"sweep": sweep.name, "backend": args.backend, "rows": rows, "summary": summ}, out, indent=2,
                  default=str)
        out.write("\n")
    else:
        # Cycle times (p50/p99) vary from run to run: they are in --jsonl/--csv/--output json, not the table.
        head = ["#", "params", "seed", "scheduled", "unsched", "evicted", "used", "cpu", "error"]
        order = [a.key for a in sweep.axes]
        table = [[str(r["index"]), _params(r["params"], order), str(r["seed"]),
                  _opt(r.get("scheduled")), _opt(r.get("unschedulable")), _opt(r.get("evicted")),
                  _opt(r.get("nodesUsed")),
                  f"{r['cpuUtilization']:.0%}" if isinstance(r.get("cpuUtilization"), float | int) else "-",
                  (r.get("error") or "")[:60]] for r in rows]
        warned = f", {summ['withWarnings']} with warnings" if summ["withWarnings"] else ""
        out.write(f"sweep {sweep.name}: {summ['scenarios']} scenarios, {summ['failed']} failed, "
                  f"{summ['allScheduled']} with every pod scheduled{warned} ({args.backend} backend)\n")
        out.write(_table(head, table))
    kept = f"{len(rows)} of {total} scenarios done" + (f", kept in {args.jsonl or args.csv}"
                                                      if args.jsonl or args.csv else "")
    again = "; run again with --resume to finish" if args.jsonl or args.csv else ""
    if write_error is not None:
        print(f"error: {write_error}; {kept}{again}", file=err)
        return EXIT_OUTPUT_FAILED
    if stopped is not None:
        print(f"interrupted by {signal.Signals(stopped).name}: {kept}{again}", file=err)
        return 128 + int(stopped)
    return 0 if summ["failed"] == 0 else EXIT_SCENARIOS_FAILED


def _params(params: dict[str, Any], order: list[str]) -> str:
    """``k=v, ...`` in the matrix's order (rows read back from JSON Lines have their keys sorted)."""
    keys = [k for k in order if k in params] + [k for k in params if k not in order]
    return ", ".join(f"{k}={params[k]}" for k in keys)


def _opt(v: Any) -> str:
    return "-" if v is None else str(v)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def _dry_run(args: argparse.Namespace, sweep: Any, out: TextIO) -> int:
    import os

    from scheduling_framework.scenario.sweep import estimate

    skip = frozenset(_written_ids(args, sweep)) if args.resume else frozenset()
    est = estimate(sweep, sample=args.sample, skip=skip)
    workers = args.workers or os.cpu_count() or 1
    already = f" ({len(sweep) - est.scenarios} already done)" if args.resume else ""
    out.write(f"sweep {sweep.name}: {len(sweep)} scenarios, {est.scenarios} to run{already}\n")
    out.write(f"estimate from a sample of {est.sample}: {est.cpu_seconds_per_scenario:.3g} CPU-s per scenario, "
              f"{_duration(est.cpu_seconds)} of CPU in all, about {_duration(est.cpu_seconds / workers)} on "
              f"{workers} worker(s)\n")
    return 0


def _written_ids(args: argparse.Namespace, sweep: Any) -> set[str]:
    """The ids every result file already holds (what --resume will skip)."""
    from scheduling_framework.scenario.rowfiles import RowFile

    keys = [a.key for a in sweep.axes]
    ids = [RowFile.read_ids(p, k, keys) for p, k in ((args.jsonl, "jsonl"), (args.csv, "csv")) if p]
    return set.intersection(*ids) if ids else set()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
