"""The ``compare`` command (wired into scheduling_framework.cli): two sides, one cluster, pod by pod."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from scheduling_framework.comparison.model import ALIGN, MODES, SEQUENTIAL, TIE_BREAKS, Comparison, NodeChange
from scheduling_framework.errors import InputError

# exit code of --fail-on-change when a pod is counted as changed (as --fail-on-unschedulable's)
EXIT_CHANGED = 3
#: Rows of the node table of the terminal output (JSON lists every node that changed).
NODE_ROWS = 20
#: Configuration differences listed one a line (feature gates are counted; JSON lists them all).
CONFIG_LINES = 12

_KINDS = ("kubernetes_version", "config", "feature_gates")
_FLAG = {"kubernetes_version": "kubernetes-version", "config": "config", "feature_gates": "feature-gates"}


def add_parser(sub: Any) -> None:
    from scheduling_framework.cli_help import add_max_input_bytes
    from scheduling_framework.versions import NEWEST_RELEASE, SUPPORTED_RELEASES

    c = sub.add_parser("compare", help="the same cluster under two releases or configurations: which pods land "
                                       "differently, and why")
    c.add_argument("--cluster", required=True, help="YAML or JSON: Nodes, Pods (nodeName set = running), ...; "
                                                    "'-' reads standard input")
    releases = ", ".join(SUPPORTED_RELEASES)
    for side in ("a", "b"):
        up = side.upper()
        c.add_argument(f"--{side}-kubernetes-version", metavar="1.N", default=None,
                       help=f"side {up} follows the scheduler of this release ({releases}; default {NEWEST_RELEASE})")
        c.add_argument(f"--{side}-config", metavar="KSC.yaml", default=None,
                       help=f"side {up}'s KubeSchedulerConfiguration (default: the release's default profile)")
        c.add_argument(f"--{side}-feature-gates", metavar="NAME=BOOL,...", default=None,
                       help=f"feature gates of side {up}, checked against its release")
    c.add_argument("--kubernetes-version", metavar="1.N", default=None,
                   help="both sides' release (instead of --a-/--b-kubernetes-version)")
    c.add_argument("--config", default=None, help="both sides' configuration (instead of --a-/--b-config)")
    c.add_argument("--feature-gates", metavar="NAME=BOOL,...", default=None,
                   help="both sides' feature gates (instead of --a-/--b-feature-gates)")
    c.add_argument("--seed", type=int, default=None, help="seed of both sides' tie-breaking among equal top scores")
    c.add_argument("--output", choices=("table", "json"), default="table")
    c.add_argument("--mode", choices=MODES, default=SEQUENTIAL,
                   help="sequential: each side schedules the pods one after another, each placement visible to the "
                        "next, as schedule does (default); independent: each pod alone against the starting "
                        "cluster, no binding, preemption or retry")
    c.add_argument("--ties", choices=TIE_BREAKS, default=ALIGN,
                   help="align: when A's node is among B's equally top-scored nodes B takes it, so tie-breaking "
                        "never makes the runs diverge (default); seed: B draws as schedule --seed does")
    c.add_argument("--report", metavar="FILE.html", default=None,
                   help="also write a self-contained HTML page with both sides")
    c.add_argument("--expand-workloads", action="store_true",
                   help="add the pods that Deployments, ReplicaSets, StatefulSets, Jobs and DaemonSets would create")
    c.add_argument("--fail-on-change", action="store_true",
                   help=f"exit {EXIT_CHANGED} when a pod lands differently (ties not counted): a CI gate")
    c.add_argument("--strict", action="store_true",
                   help="fields the Kubernetes API does not define are errors (default: a warning naming each)")
    add_max_input_bytes(c)


def sides_from_args(args: argparse.Namespace) -> tuple[Any, Any, dict[str, str]]:
    """The two Sides the flags describe and the flag names errors should use; InputError for flags that
    conflict (a setting for both sides given with a per-side one, standard input read twice)."""
    from scheduling_framework.comparison.model import Side

    values: dict[str, dict[str, Any]] = {"a": {}, "b": {}}
    names: dict[str, str] = {}
    for kind in _KINDS:
        both = getattr(args, kind)
        for side in ("a", "b"):
            own = getattr(args, f"{side}_{kind}")
            flag = f"--{side}-{_FLAG[kind]}"
            if both is not None and own is not None:
                raise InputError(flag, f"--{_FLAG[kind]} sets both sides: give it or {flag}, not both")
            values[side][kind] = own if own is not None else both
            names[f"{side}.{kind}"] = flag if own is not None or both is None else f"--{_FLAG[kind]}"
    stdin = [f for f, v in (("--cluster", args.cluster), ("--config", args.config), ("--a-config", args.a_config),
                            ("--b-config", args.b_config)) if v == "-"]
    if len(stdin) > 1:
        raise InputError(stdin[-1], f"only one of {', '.join(stdin)} can read standard input ('-')")
    if "-" in (values["a"]["config"], values["b"]["config"]):
        from scheduling_framework.config.loader import read_config_file

        doc = read_config_file("-", args.max_input_bytes)  # read once, even when both sides use it
        for side in ("a", "b"):
            if values[side]["config"] == "-":
                values[side]["config"] = doc
    return Side(**values["a"]), Side(**values["b"]), names


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.comparison.engine import compare

    a, b, names = sides_from_args(args)
    result = compare(args.cluster, a, b, seed=args.seed, mode=args.mode, ties=args.ties, strict=args.strict,
                     max_input_bytes=args.max_input_bytes, expand_workloads=args.expand_workloads, names=names,
                     gc_freeze=True)
    status = EXIT_CHANGED if args.fail_on_change and result.summary["changed"] else 0
    if args.report:
        from scheduling_framework.comparison.page import write_report

        write_report(args.report, result)
    if args.output == "json":
        json.dump(result.to_dict(), out, separators=(",", ":"))
        out.write("\n")
        return status
    for w in result.warnings:
        print(f"warning: {w}", file=err)
    print_comparison(result, out)
    return status


# --- the terminal output --------------------------------------------------------------------------------------


def config_lines(changes: Sequence[Mapping[str, Any]], limit: int = CONFIG_LINES) -> list[str]:
    """One line per configuration difference (feature gates counted on one line)."""
    lines: list[str] = []
    gates = [c for c in changes if c["kind"] == "featureGate"]
    for c in changes:
        kind = c["kind"]
        if kind == "kubernetesVersion":
            lines.append(f"Kubernetes {c['a']} -> {c['b']}")
        elif kind == "plugin":
            where = "A" if c["a"] else "B"
            points = ", ".join(c["a"] or c["b"])
            if c["a"] and c["b"]:
                lines.append(f"{c['plugin']}: at {', '.join(c['a'])} only in A, at {', '.join(c['b'])} only in B")
            else:
                lines.append(f"{c['plugin']}: only in {where} ({points})")
        elif kind == "weight":
            lines.append(f"{c['plugin']} score weight {c['a']} -> {c['b']}")
        elif kind == "args":
            lines.append(f"{c['plugin']} args {c['field']}: {_brief(c['a'])} -> {_brief(c['b'])}")
        elif kind == "profile":
            lines.append(f"profile {c['profile']}: only in {'A' if c['a'] else 'B'}")
        elif kind == "setting":
            lines.append(f"{c['field']}: {_brief(c['a'])} -> {_brief(c['b'])}")
    if len(lines) > limit:
        lines = [*lines[:limit], f"... and {len(lines) - limit} more (--output json lists them all)"]
    if gates:
        shown = ", ".join(f"{g['gate']}={_brief(g['b'])}" for g in gates[:4])
        more = f" and {len(gates) - 4} more" if len(gates) > 4 else ""
        lines.append(f"{len(gates)} feature gate(s) differ; in B: {shown}{more}")
    return lines


def _brief(v: Any) -> str:
    text = json.dumps(v, separators=(",", ":")) if not isinstance(v, str) else v
    return text if len(text) <= 60 else text[:57] + "..."


def _pct(used: int | None, total: int | None) -> str:
    if used is None or not total:
        return "-"
    return f"{100 * used / total:.0f}%"


def node_rows(nodes: Sequence[NodeChange], limit: int = NODE_ROWS) -> list[tuple[str, ...]]:
    """The nodes that changed most first: pods (and, after a sequential run, cpu and memory requested over
    allocatable) on each side. Independent mode has no end state: the pending pods each side would put there."""
    ordered = sorted(nodes, key=lambda n: (-abs(n.b_pods - n.a_pods), n.node))
    rows: list[tuple[str, ...]]
    if all(n.a_cpu is None for n in nodes):
        rows = [("NODE", "PENDING PODS IT WOULD GET A -> B")]
        return rows + [(n.node, f"{n.a_pods} -> {n.b_pods}") for n in ordered[:limit]]
    rows = [("NODE", "PODS A -> B", "CPU A -> B", "MEMORY A -> B")]
    for n in ordered[:limit]:
        al = n.allocatable
        rows.append((n.node, f"{n.a_pods} -> {n.b_pods}",
                     f"{_pct(n.a_cpu, al.get('cpu'))} -> {_pct(n.b_cpu, al.get('cpu'))}",
                     f"{_pct(n.a_memory, al.get('memory'))} -> {_pct(n.b_memory, al.get('memory'))}"))
    return rows


def print_comparison(result: Comparison, out: TextIO) -> None:
    from scheduling_framework.report.table import WIDTH, table, wrap

    out.write(f"A: {result.a['description']}\nB: {result.b['description']}\n")
    lines = config_lines(result.config_changes)
    if lines:
        out.write("configuration differences:\n")
        for line in lines:
            out.write(wrap(line, "  ") + "\n")
    else:
        out.write("configuration differences: none\n")
    s = result.summary
    seed = "no seed" if result.seed is None else f"seed {result.seed}"
    out.write(f"{result.mode}, {seed}, ties {result.ties}: {s['pods']} pending pod(s)\n\n")
    shown = [p for p in result.pods if p.changed or p.tie]
    if shown:
        rows: list[tuple[str, ...]] = [("POD", "A", "B", "CHANGE", "WHY")]
        for p in shown:
            change = "tie" if p.tie else p.kind + (" (earlier)" if p.cause == "earlier" else "")
            rows.append((p.pod, p.a.brief(), p.b.brief(), change, str((p.why or {}).get("text", ""))))
        table(rows, out, width=WIDTH)
        out.write("\n")
    else:
        out.write("no pod lands differently\n\n")
    if result.nodes:
        table(node_rows(result.nodes), out, width=WIDTH)
        if len(result.nodes) > NODE_ROWS:
            out.write(f"... and {len(result.nodes) - NODE_ROWS} more node(s) (--output json lists them all)\n")
        out.write("\n")
    ties = f"; {s['ties']} tie(s) not counted" if s["ties"] else ""
    earlier = (f" ({s['ownDecision']} in their own decision, {s['afterEarlierPlacements']} after earlier "
               f"placements differed from {s['divergedAfter']})" if s["afterEarlierPlacements"] else "")
    other = "".join(f", {s[k]} {label}" for k, label in (("otherOutcome", "other outcome"),
                                                          ("otherDevices", "other devices")) if s[k])
    out.write(wrap(f"{s['changed']} of {s['pods']} pod(s) changed{earlier}: {s['placedDifferently']} placed "
                   f"differently, {s['newlyUnschedulable']} newly unschedulable, {s['newlySchedulable']} newly "
                   f"schedulable{other}{ties}") + "\n")
    if s["plugins"]:
        out.write(wrap("plugins responsible: " + ", ".join(f"{k} {v}" for k, v in s["plugins"].items())) + "\n")
    for label, st in (("A", s["a"]), ("B", s["b"])):
        use = (f"; cpu {st['cpuRequested']}%, memory {st['memoryRequested']}% requested"
               if "cpuRequested" in st else "")
        out.write(f"{label}: {st['scheduled']} scheduled, {st['unschedulable']} unschedulable, {st['errors']} errors; "
                  f"{st['nodesUsed']} node(s) with pods{use}\n")
    notes = list(dict.fromkeys(n for p in result.pods if p.changed for n in (p.why or {}).get("releaseNotes", [])))
    for n in notes:
        out.write(wrap("release note: " + n) + "\n")


__all__ = ["EXIT_CHANGED", "add_parser", "config_lines", "node_rows", "print_comparison", "run", "sides_from_args"]
