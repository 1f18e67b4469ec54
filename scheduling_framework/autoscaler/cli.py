"""The ``autoscale`` command (wired into scheduling_framework.cli): cluster-autoscaler's plan for a dump."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, TextIO

from scheduling_framework.autoscaler.limits import DEFAULT_MAX_CORES, DEFAULT_MAX_MEMORY_GIB
from scheduling_framework.autoscaler.model import Plan
from scheduling_framework.errors import ConfigError, InputError

#: cluster-autoscaler's expanders (its --expander names).
EXPANDERS = ("random", "most-pods", "least-waste", "price", "priority")


def add_parser(sub: Any) -> None:
    from scheduling_framework.cli_help import add_max_input_bytes, add_release_flags

    a = sub.add_parser("autoscale", help="cluster-autoscaler's decisions for a cluster file: which node group to "
                                         "grow for the pending pods, and which nodes could be removed")
    a.add_argument("--cluster", required=True, help="YAML or JSON: Nodes, Pods, PodDisruptionBudgets, controllers, "
                                                    "...; '-' reads standard input")
    a.add_argument("--node-groups", required=True, metavar="GROUPS.yaml",
                   help="the node groups: nodeGroups: [{name, minSize, maxSize, template | templateNode, "
                        "nodeSelector?, pricePerHour?, priority?}] (docs/autoscaler-simulation.md)")
    a.add_argument("--expander", default="random", metavar="NAME[,NAME...]",
                   help=f"cluster-autoscaler's expander chain ({', '.join(EXPANDERS)}; default random)")
    a.add_argument("--max-nodes-total", type=int, default=None, metavar="N",
                   help="the cluster's node count cluster-autoscaler does not scale beyond (default: no limit)")
    a.add_argument("--cores-total", default=f"0:{DEFAULT_MAX_CORES}", metavar="MIN:MAX",
                   help="the cluster's cores cluster-autoscaler keeps within: no scale-up past MAX, no scale-down "
                        f"under MIN (default 0:{DEFAULT_MAX_CORES})")
    a.add_argument("--memory-total", default=f"0:{DEFAULT_MAX_MEMORY_GIB}", metavar="MIN:MAX",
                   help=f"the same for memory, in GiB (default 0:{DEFAULT_MAX_MEMORY_GIB})")
    a.add_argument("--gpu-total", action="append", default=[], metavar="TYPE:MIN:MAX",
                   help="the same for the GPUs of one type (the nodes' cloud.google.com/gke-accelerator or "
                        "k8s.amazonaws.com/accelerator label); repeatable")
    a.add_argument("--balance-similar-node-groups", nargs="?", const=True, default=False, type=_bool,
                   metavar="true|false", help="split a scale-up among the groups similar to the chosen one "
                                             "(default false)")
    a.add_argument("--balancing-ignore-label", action="append", default=[], metavar="LABEL",
                   help="a label that does not make two node groups dissimilar; repeatable")
    a.add_argument("--balancing-label", action="append", default=[], metavar="LABEL",
                   help="compare node groups by this label alone (no resource comparison); repeatable, not with "
                        "--balancing-ignore-label")
    a.add_argument("--enforce-node-group-min-size", nargs="?", const=True, default=False, type=_bool,
                   metavar="true|false", help="also grow the node groups under their minSize (default false)")
    a.add_argument("--scale-down-utilization-threshold", type=float, default=0.5, metavar="F",
                   help="a node whose cpu and memory requests are both under this fraction of its allocatable is "
                        "a scale-down candidate (default 0.5)")
    a.add_argument("--skip-nodes-with-local-storage", type=_bool, default=True, metavar="true|false",
                   help="pods with local storage (emptyDir, hostPath) block their node's removal (default true)")
    a.add_argument("--skip-nodes-with-system-pods", type=_bool, default=True, metavar="true|false",
                   help="kube-system pods without a PodDisruptionBudget block their node's removal (default true)")
    a.add_argument("--ignore-daemonsets-utilization", type=_bool, default=False, metavar="true|false",
                   help="leave DaemonSet pods out of node utilization (default false)")
    a.add_argument("--scale-down-unneeded-time", default=None, metavar="DURATION",
                   help="accepted for cluster-autoscaler's command lines and ignored (noted in the output): a "
                        "dump has no history")
    a.add_argument("--no-scale-up", dest="scale_up", action="store_false", help="skip the scale-up")
    a.add_argument("--no-scale-down", dest="scale_down", action="store_false", help="skip the scale-down")
    a.add_argument("--why", action="store_true",
                   help="for the pods no node group helps: what would make them fit (as schedule --why)")
    a.add_argument("--config", help="KubeSchedulerConfiguration YAML (default: the upstream default profile)")
    a.add_argument("--seed", type=int, default=None, help="seed of the random expander and of tie-breaking")
    a.add_argument("--output", choices=("table", "json"), default="table")
    a.add_argument("--report", metavar="FILE.html", default=None,
                   help="also write a self-contained HTML report: the plan, the pending pods' outcomes, node "
                        "utilization with scale-down candidates and blocked nodes marked")
    add_max_input_bytes(a)
    a.add_argument("--strict", action="store_true",
                   help="fields the Kubernetes API does not define are errors (default: a warning naming each)")
    add_release_flags(a)


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def min_max(flag: str, text: str, shown: str | None = None) -> tuple[int, int]:
    """A MIN:MAX flag value (cluster-autoscaler's: integers, 0 <= MIN <= MAX); InputError names the flag."""
    lo, sep, hi = text.partition(":")
    try:
        if not sep:
            raise ValueError
        bounds = int(lo), int(hi)
    except ValueError:
        bounds = (-1, -1)
    if bounds[0] < 0 or bounds[1] < bounds[0]:
        want = "TYPE:MIN:MAX" if flag == "--gpu-total" else "MIN:MAX"
        raise InputError(flag, f"{flag}: expected {want}, integers with 0 <= MIN <= MAX, got {shown or text!r}")
    return bounds


def gpu_limit(text: str) -> tuple[str, tuple[int, int]]:
    """A --gpu-total value, TYPE:MIN:MAX; InputError names the flag."""
    kind, _, bounds = text.partition(":")
    if not kind:
        raise InputError("--gpu-total", f"--gpu-total: expected TYPE:MIN:MAX, got {text!r}")
    return kind, min_max("--gpu-total", bounds, text)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.autoscaler.drain import DrainOptions
    from scheduling_framework.autoscaler.groups import load_node_groups
    from scheduling_framework.autoscaler.plan import autoscale
    from scheduling_framework.config import load_config
    from scheduling_framework.ingest import gc_paused
    from scheduling_framework.ingest.cluster import load_cluster
    from scheduling_framework.ingest.untrusted import load_yaml_documents, read_input

    expanders = [e.strip() for e in args.expander.split(",") if e.strip()]
    unknown = [e for e in expanders if e not in EXPANDERS]
    if not expanders or unknown:
        raise InputError("--expander", f"--expander: unknown expander(s) {', '.join(unknown) or '(none)'}; known: "
                                       f"{', '.join(EXPANDERS)}")
    if not 0 <= args.scale_down_utilization_threshold <= 1:
        raise InputError("--scale-down-utilization-threshold", "--scale-down-utilization-threshold: expected a "
                                                               "fraction between 0 and 1")
    if args.max_nodes_total is not None and args.max_nodes_total < 0:
        raise InputError("--max-nodes-total", "--max-nodes-total: expected a non-negative integer")
    cores_total = min_max("--cores-total", args.cores_total)
    memory_total = min_max("--memory-total", args.memory_total)
    gpu_total: dict[str, tuple[int, int]] = {}
    for text in args.gpu_total:
        kind, bounds = gpu_limit(text)
        if kind in gpu_total:
            raise InputError("--gpu-total", f"--gpu-total: GPU type {kind!r} is given twice")
        gpu_total[kind] = bounds
    if args.balancing_label and args.balancing_ignore_label:
        raise InputError("--balancing-label", "--balancing-label: cannot be combined with --balancing-ignore-label")
    max_bytes = args.max_input_bytes
    if args.cluster == "-" and args.node_groups == "-":
        raise InputError("--node-groups", "only one of --cluster and --node-groups can read standard input ('-')")
    cfg = load_config(args.config, max_input_bytes=max_bytes, kubernetes_version=args.kubernetes_version,
                      feature_gates=args.feature_gates)
    with gc_paused():
        cluster = load_cluster(args.cluster, max_input_bytes=max_bytes, strict=args.strict)
    try:
        docs = load_yaml_documents(read_input(args.node_groups, what="node groups file", max_bytes=max_bytes),
                                   args.node_groups)
        if len(docs) != 1:
            raise ConfigError(f"expected one YAML document, found {len(docs)}")
        groups = load_node_groups(docs[0], cluster.nodes, source=args.node_groups)
    except (ConfigError, InputError) as e:
        raise InputError("--node-groups", f"--node-groups {args.node_groups}: {e}") from None
    options = DrainOptions(skip_nodes_with_system_pods=args.skip_nodes_with_system_pods,
                           skip_nodes_with_local_storage=args.skip_nodes_with_local_storage,
                           scale_down_utilization_threshold=args.scale_down_utilization_threshold,
                           ignore_daemonsets_utilization=args.ignore_daemonsets_utilization)
    started = time.perf_counter()
    plan = autoscale(cluster, groups, config=cfg, seed=args.seed, expanders=expanders,
                     max_nodes_total=args.max_nodes_total, options=options, why=args.why,
                     scale_up_enabled=args.scale_up, scale_down_enabled=args.scale_down, cores_total=cores_total,
                     memory_total=memory_total, gpu_total=gpu_total,
                     balance_similar_node_groups=args.balance_similar_node_groups,
                     balancing_ignore_labels=args.balancing_ignore_label, balancing_labels=args.balancing_label,
                     enforce_node_group_min_size=args.enforce_node_group_min_size)
    notes = list(plan.notes)
    if args.scale_down_unneeded_time is not None:
        notes.insert(0, f"--scale-down-unneeded-time {args.scale_down_unneeded_time} ignored: a dump has no history")
    seconds = time.perf_counter() - started
    doc = {**plan.to_dict(), "notes": notes, "warnings": list(cluster.warnings) + list(plan.warnings)}
    if args.report:
        from scheduling_framework.autoscaler.report import report_data, write_report

        write_report(args.report, report_data(cluster, plan, notes=notes, warnings=doc["warnings"],
                                              seconds=seconds))
    if args.output == "json":
        json.dump(doc, out, indent=2)
        out.write("\n")
        return 0
    for w in doc["warnings"]:
        print(f"warning: {w}", file=err)
    print_plan(plan, out, notes, args.scale_up, args.scale_down)
    return 0


def print_plan(plan: Plan, out: TextIO, notes: list[str], up: bool = True, down: bool = True) -> None:
    from scheduling_framework.report.table import table

    if up:
        pending = len(plan.schedulable) + len({k for o in plan.options for k in o.pods} |
                                              {u.pod for u in plan.unhelpable})
        out.write(f"scale-up: {pending} pending pod(s); {len(plan.schedulable)} fit on existing nodes\n")
        if plan.options:
            out.write("\n")
            table([("NODE GROUP", "NEW NODES", "PODS", "NOTE")] +
                  [(o.node_group, str(o.nodes), str(len(o.pods)), o.note) for o in plan.options], out)
        if plan.chosen is not None:
            c = plan.chosen
            out.write(f"\nchosen ({','.join(plan.expander)}): {c.node_group}, {c.nodes} new node(s) for "
                      f"{len(c.pods)} pod(s)\n")
            if c.capped_by:
                _wrapped(out, f"capped from {c.capped_from} node(s) by the cluster-wide limits: {c.capped_by}", "  ",
                         "    ")
            if c.balanced:
                _wrapped(out, "balanced: " + ", ".join(f"{g} +{n}" for g, n in c.balanced), "  ", "    ")
        elif not plan.unhelpable:
            out.write("no scale-up needed\n")
        if plan.unhelpable:
            out.write(f"\n{len(plan.unhelpable)} pod(s) no node group helps:\n")
            for u in plan.unhelpable:
                reasons = {r for _g, r in u.groups}
                text = f"every node group: {reasons.pop()}" if len(u.groups) > 1 and len(reasons) == 1 else u.reason
                _wrapped(out, f"{u.pod}: {text}", "  ", "    ")
                for r in u.remedies:
                    _wrapped(out, r, "    - ", "      ")
        if plan.min_size:
            out.write("\ngroups under their minSize: " +
                      ", ".join(f"{o.node_group} +{o.nodes}" for o in plan.min_size) + "\n")
    if down:
        out.write(("\n" if up else "") + f"scale-down: {len(plan.candidates)} candidate(s), {len(plan.blocked)} "
                                           "blocked\n")
        if plan.candidates:
            out.write("\n")
            table([("NODE", "NODE GROUP", "UTILIZATION", "PODS MOVE TO")] +
                  [(c.node, c.node_group or "-", f"{c.utilization:.0%}",
                    ", ".join(f"{p} -> {n}" for p, n in c.moves) or "-") for c in plan.candidates], out)
        if plan.blocked:
            out.write("\n")
            table([("BLOCKED NODE", "NODE GROUP", "RULE", "DETAIL")] +
                  [(b.node, b.node_group or "-", b.rule, b.detail) for b in plan.blocked], out)
    out.write("\n")
    for n in notes:
        _wrapped(out, n, "note: ", "  ")


def _wrapped(out: TextIO, text: str, first: str, rest: str, width: int = 120) -> None:
    import textwrap

    for line in textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                              break_long_words=False, break_on_hyphens=False):
        out.write(line + "\n")


__all__ = ["EXPANDERS", "add_parser", "gpu_limit", "min_max", "print_plan", "run"]
