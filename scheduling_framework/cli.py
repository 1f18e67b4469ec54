"""The ``scheduling-framework`` command: schedule a cluster file, view a configuration, list plugins.

Exit codes: 0 when the run completed (even with unschedulable pods), 2 for bad input (one-line error),
3 with ``--fail-on-unschedulable`` when a pod ended Unschedulable or Error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from scheduling_framework.cli_help import add_max_input_bytes, add_release_flags, byte_size
from scheduling_framework.errors import InputError, SchedulingFrameworkError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_UNSCHEDULABLE = 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scheduling-framework",
                                description="Kubernetes scheduling decisions, in-process, explained.")
    p.add_argument("--version", action="version", version=_version_banner(),
                   help="print the package version and the Kubernetes releases it can follow")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("schedule", help="schedule the pending pods of a cluster file")
    s.add_argument("--cluster", required=True,
                   help="YAML: Nodes, Pods (nodeName set = running), Namespaces, ...; '-' reads standard input")
    s.add_argument("--config", help="KubeSchedulerConfiguration YAML (default: the upstream default profile); "
                                    "'-' reads standard input")
    s.add_argument("--output", choices=("table", "json", "yaml"), default="table",
                   help="table (people), json (tools), yaml (the resulting cluster, a kind: List that --cluster "
                        "reads again)")
    s.add_argument("--explain", action="store_true", help="every node's filter verdict and every plugin's score")
    s.add_argument("--seed", type=int, default=None, help="seed for tie-breaking among equal top scores")
    s.add_argument("--expand-workloads", action="store_true",
                   help="add the pods that Deployments, ReplicaSets, StatefulSets, Jobs and DaemonSets would create")
    s.add_argument("--fail-on-unschedulable", action="store_true",
                   help=f"exit {EXIT_UNSCHEDULABLE} when any pod ends Unschedulable or Error (a CI gate)")
    s.add_argument("--why", action="store_true",
                   help="for each pod left pending (with --pod, the pods named): what would make it fit, as facts "
                        "about the cluster and remedies verified by re-running the plugins with each change")
    s.add_argument("--node-template", action="append", default=[], metavar="FILE",
                   help="with --why: Node manifests a new node could copy; says which would take the pod, "
                        "smallest first (repeatable)")
    add_release_flags(s)
    _add_focus_arguments(s)
    add_max_input_bytes(s)
    _add_strict(s)
    d = sub.add_parser("demo", help="schedule the README's demo cluster (shipped with the package): pending pods, "
                                    "a PriorityClass that preempts, a DaemonSet; same as schedule --cluster "
                                    "examples/cluster.yaml --expand-workloads --explain")
    d.add_argument("--output", choices=("table", "json", "yaml"), default="table", help="as for schedule")
    d.add_argument("--seed", type=int, default=None, help="seed for tie-breaking among equal top scores")
    d.add_argument("--print-cluster", action="store_true",
                   help="print the demo cluster's YAML instead (a starting point for your own file)")
    cap = sub.add_parser("capacity", help="how many more copies of a pod fit, where, and what then limits each node")
    cap.add_argument("--cluster", required=True, help="YAML: Nodes, running Pods, ...; '-' reads standard input")
    cap.add_argument("--pod", required=True, help="YAML file holding the Pod to copy")
    cap.add_argument("--max", type=_non_negative, default=None, metavar="N", help="stop after N copies")
    cap.add_argument("--workload", help="YAML holding the Workload the pod's spec.workloadRef names (when the "
                                        "cluster has none): copies are then whole gangs of its minCount pods")
    cap.add_argument("--config", help="KubeSchedulerConfiguration YAML (default: the upstream default profile)")
    cap.add_argument("--output", choices=("table", "json"), default="table")
    cap.add_argument("--seed", type=int, default=None, help="seed for tie-breaking among equal top scores")
    add_release_flags(cap)
    add_max_input_bytes(cap)
    _add_strict(cap)
    c = sub.add_parser("config", help="configuration commands")
    csub = c.add_subparsers(dest="config_command", required=True)
    v = csub.add_parser("view", help="print the effective configuration (defaults, merge, multiPoint expanded)")
    v.add_argument("--config", help="KubeSchedulerConfiguration YAML ('-' reads standard input)")
    v.add_argument("--output", choices=("json", "yaml", "config"), default="yaml",
                   help="json/yaml: the effective profiles; config: a KubeSchedulerConfiguration that --config "
                        "accepts and that yields the same effective profiles")
    add_release_flags(v)
    add_max_input_bytes(v)
    from scheduling_framework.scenario import cli as scenario_cli

    scenario_cli.add_parsers(sub)
    from scheduling_framework.comparison import cli as compare_cli

    compare_cli.add_parser(sub)
    from scheduling_framework.autoscaler import cli as autoscale_cli

    autoscale_cli.add_parser(sub)
    se = sub.add_parser("serve-extender", help="serve a profile's Filter and Score plugins as a kube-scheduler "
                                               "extender (HTTP, the extender protocol)")
    se.add_argument("--config", help="KubeSchedulerConfiguration YAML with the profile to serve "
                                     "(default: the upstream default profile)")
    se.add_argument("--profile", help="the schedulerName of the profile to serve (default: the first)")
    se.add_argument("--address", default="127.0.0.1:8888",
                    help="host:port to listen on (default 127.0.0.1:8888; 0.0.0.0:8888 in a pod)")
    se.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (with --tls-key)")
    se.add_argument("--tls-key", help="the certificate's PEM private key")
    se.add_argument("--cluster", help="cluster file: resolves node names (nodeCacheCapable) and gives the pods "
                                      "bound to each node")
    se.add_argument("--request-timeout", type=float, default=30.0, metavar="SECONDS",
                    help="answer each request within this time (default 30)")
    se.add_argument("--max-request-bytes", type=byte_size, default=32 * 1024 * 1024, metavar="N",
                    help="refuse request bodies larger than N bytes (default 32Mi)")
    se.add_argument("--read-timeout", type=float, default=10.0, metavar="SECONDS",
                    help="a request's line, headers and body must arrive within this time of its first byte "
                         "(default 10; 408 and the connection closed otherwise)")
    se.add_argument("--workers", type=int, default=4, metavar="N",
                    help="requests computed at once (default 4)")
    se.add_argument("--queue", type=int, default=64, metavar="N",
                    help="requests waiting for a worker before the server answers 503 (default 64)")
    se.add_argument("--max-connections", type=int, default=1024, metavar="N",
                    help="open connections before new ones are answered 503 (default 1024)")
    _add_strict(se)
    pl = sub.add_parser("plugins", help="list registered plugins, their origin and extension points")
    pl.add_argument("--output", choices=("table", "json"), default="table")
    comp = sub.add_parser("completion", help="print a shell completion script (bash)")
    comp.add_argument("shell", choices=("bash",))
    from scheduling_framework.cli_help import add_examples

    add_examples(p)
    return p


def _add_focus_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--pod", action="append", default=[], metavar="NS/NAME",
                   help="show (and explain) only the pods matching this glob, e.g. shop/web-* (repeatable; a "
                        "pattern without '/' matches names in any namespace); every pod is still scheduled")
    s.add_argument("--explain-nodes", type=_non_negative, default=None, metavar="N",
                   help="with --explain: the N best-scored nodes in full, one summary line per failure reason "
                        "for the rest")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")
    s.add_argument("--report", metavar="FILE.html", default=None,
                   help="also write a self-contained HTML report (utilization, outcomes, drill-down, failure "
                        "reasons, preemption); records explanations for the --pod pods (all by default)")


def _non_negative(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return n


def _version_banner() -> str:
    from scheduling_framework import __version__
    from scheduling_framework.versions import version_banner

    return version_banner(__version__)


def load_config_for(args: argparse.Namespace) -> Any:
    """``load_config(args.config)`` for the release and gates chosen on the command line (gate settings
    whose effect is not reproduced are in ``cfg.feature_gates.warnings()``)."""
    from scheduling_framework.config import load_config

    return load_config(getattr(args, "config", None), max_input_bytes=getattr(args, "max_input_bytes", None),
                       kubernetes_version=getattr(args, "kubernetes_version", None),
                       feature_gates=getattr(args, "feature_gates", None))


def _add_strict(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true",
                   help="fields the Kubernetes API does not define (e.g. spec.node_selector) are errors, as with "
                        "kubectl --validate=strict (default: a warning naming each, which the run ignores)")


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        out.write(_version_banner() + "\n")
        return EXIT_OK
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return EXIT_BAD_INPUT if e.code not in (0, None) else EXIT_OK
    args.stderr = err
    try:
        from scheduling_framework.registry import default_registry

        for msg in default_registry().load_errors:
            print(f"warning: {msg}", file=err)
        if args.command == "schedule":
            return _schedule(args, out, err)
        if args.command == "capacity":
            return _capacity(args, out, err)
        if args.command == "demo":
            return _demo(args, out, err)
        if args.command == "compare":
            from scheduling_framework.comparison import cli as compare_cli

            return compare_cli.run(args, out, err)
        if args.command == "autoscale":
            from scheduling_framework.autoscaler import cli as autoscale_cli

            return autoscale_cli.run(args, out, err)
        if args.command in ("replay", "sweep"):
            from scheduling_framework.scenario import cli as scenario_cli

            return scenario_cli.run(args, out, err)
        if args.command == "config":
            return _config_view(args, out)
        if args.command == "serve-extender":
            return _serve_extender(args, err)
        if args.command == "completion":
            from scheduling_framework.cli_help import bash_completion

            out.write(bash_completion(_parser()))
            return EXIT_OK
        return _plugins(args, out)
    except SchedulingFrameworkError as e:
        print(f"error: {_one_line(str(e))}", file=err)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # never a traceback for the user; the message names what failed
        print(f"internal error: {type(e).__name__}: {_one_line(str(e))}", file=err)
        return EXIT_INTERNAL


def _one_line(s: str) -> str:
    return " ".join(s.split()) if "\n" in s and len(s.splitlines()) == 1 else s.replace("\n", "; ")


# --- schedule ----------------------------------------------------------------------------------


def _schedule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.scheduler import ERROR, SCHEDULED, SKIPPED, UNSCHEDULABLE, Scheduler
    from scheduling_framework.warning_list import merged

    if args.cluster == "-" and args.config == "-":
        raise InputError("--config", "only one of --cluster and --config can read standard input ('-')")
    if args.node_template and not args.why:
        raise InputError("--node-template", "--node-template is read by --why: give both")
    if args.why and args.output == "yaml":
        raise InputError("--why", "--why is shown in the table and the JSON output; --output yaml writes the resulting "
                                  "cluster alone")
    cfg = load_config_for(args)
    with _collector_off_then_frozen():
        cluster = load_cluster_with_progress(args.cluster, args.max_input_bytes, err, args.progress, args.strict)
    if args.expand_workloads:
        from scheduling_framework.ingest.workloads import expand_workloads

        cluster = expand_workloads(cluster, seed=args.seed)
    from scheduling_framework.report.focus import pod_matcher

    focus = pod_matcher(args.pod)
    explain: Any = (args.explain or bool(args.report)) and (focus.as_pod_predicate() if args.pod else True)
    with _collector_off_then_frozen():
        sched = Scheduler(cfg, seed=args.seed, explain=explain)
        # loading the file refused duplicates (expanded workloads' pods get names no pod has)
        sched.load(cluster.nodes, cluster.pods, cluster.objects, _checked=True)
    t0 = time.perf_counter()
    _run_with_progress(sched, len(cluster.pending_pods), err, args.progress)
    seconds = time.perf_counter() - t0
    order = [p.key for p in cluster.pending_pods if p.key in sched.results]
    all_results = [sched.results[k] for k in order]
    results = [r for r in all_results if focus(r.pod)] if args.pod else all_results
    for pattern in focus.unmatched(r.pod for r in all_results):
        print(f"warning: --pod {pattern!r} matches no pending pod", file=err)
    stats = {"scheduled": sum(r.outcome == SCHEDULED for r in all_results),
             "unschedulable": sum(r.outcome == UNSCHEDULABLE for r in all_results),
             "errors": sum(r.outcome == ERROR for r in all_results),
             "skipped": sum(r.outcome == SKIPPED for r in all_results),
             # every pod evicted as a victim: bound before the run or placed by it (then reported Preempted)
             "preempted": len({v for r in sched.results.values() for v in r.victims}),
             "seconds": round(seconds, 6)}
    warnings = merged(cfg.feature_gates.warnings(), cluster.warnings, sched.warnings)
    remedies = _why(args, sched, results, cluster.pending_pods) if args.why else None
    status = EXIT_OK
    if args.fail_on_unschedulable and any(r.outcome in (UNSCHEDULABLE, ERROR) for r in all_results):
        status = EXIT_UNSCHEDULABLE
    if args.report:
        _write_report(args.report, cluster, sched, results, stats, warnings, remedies=remedies)
    if args.output == "json":
        pods = [r.to_dict(args.explain) for r in results]
        if remedies is not None:
            for rec in pods:
                if rec["pod"] in remedies:
                    rec.update(remedies[rec["pod"]].record())
        doc = {"kubernetesVersion": cfg.kubernetes_version, "pods": pods, "stats": stats, "warnings": warnings}
        groups = sched.pod_group_results()
        if groups:
            doc["podGroups"] = groups
        json.dump(doc, out, separators=(",", ":") if not args.explain else (", ", ": "))
        out.write("\n")
        return status
    for w in warnings:
        print(f"warning: {w}", file=err)
    if args.output == "yaml":
        from scheduling_framework.report.export import resulting_cluster

        _dump_yaml(resulting_cluster(cluster, sched), out)
        return status
    from scheduling_framework.report.table import print_results

    weights = {name: dict(fwk.score_weights) for name, fwk in sched.profiles.items()}
    print_results(results, stats, out, explain=args.explain, explain_nodes=args.explain_nodes, weights=weights,
                  groups=sched.pod_group_results())
    if remedies:
        from scheduling_framework.remedies.text import why_lines

        for pr in remedies.values():
            out.write("\n")
            for line in why_lines(pr):
                out.write(line + "\n")
    return status


def _why(args: argparse.Namespace, sched: Any, results: Sequence[Any], pending: Sequence[Any]) -> dict[str, Any]:
    """``--why``: remedies for the pods left pending among ``results`` (with ``--pod``, every pod named that is
    not Scheduled), by pod key; the changes are written against the pods as ``pending`` (the input) has them."""
    from scheduling_framework.remedies.run import why
    from scheduling_framework.scheduler import SCHEDULED, UNSCHEDULABLE

    templates = []
    for path in args.node_template:
        from scheduling_framework.ingest.cluster import load_cluster

        try:
            nodes = load_cluster(path, max_input_bytes=args.max_input_bytes, strict=args.strict).nodes
        except SchedulingFrameworkError as e:
            raise InputError("--node-template", f"--node-template: {e}") from None
        if not nodes:
            raise InputError("--node-template", f"--node-template: {path} holds no Node")
        templates += nodes
    keys = {r.pod for r in results if r.outcome == UNSCHEDULABLE or (args.pod and r.outcome != SCHEDULED)}
    targets = [p for p in pending if p.key in keys]
    return {pr.pod: pr for pr in why(sched, targets, templates=templates, seed=args.seed)}


def load_cluster_with_progress(path: str, max_input_bytes: int | None, err: TextIO, flag: bool | None,
                               strict: bool = False) -> Any:
    """``load_cluster``, with a bar of the megabytes read on ``err`` when it is a terminal (or ``--progress``):
    a big dump takes a while to read."""
    from scheduling_framework.ingest.cluster import load_cluster
    from scheduling_framework.report.progress import Progress, should_show

    if not should_show(err, flag):
        return load_cluster(path, max_input_bytes=max_input_bytes, strict=strict)
    read = [0]  # bytes read so far

    def progress(done: int, total: int | None) -> None:
        read[0] = done
        bar.total = max(total or 0, done) >> 20

    with Progress(err, 0, lambda: read[0] >> 20, unit="MB") as bar:
        return load_cluster(path, max_input_bytes=max_input_bytes, progress=progress, strict=strict)


def _freeze_loaded_objects() -> None:
    """The command's objects live until it exits: keep the garbage collector from walking them again."""
    import gc

    gc.freeze()


@contextlib.contextmanager
def _collector_off_then_frozen() -> Iterator[None]:
    """The cyclic garbage collector off while the command builds objects that live until it exits, and those
    objects frozen before it is on again: no collection walks them, neither the one that re-enabling it would
    start at once (millions of objects counted while it was off: seconds for a 150,000-pod cluster) nor any
    while pods are scheduled."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def _write_report(path: str, cluster: Any, sched: Any, results: list[Any], stats: dict[str, Any],
                  warnings: list[str], remedies: dict[str, Any] | None = None) -> None:
    from scheduling_framework.errors import InputError
    from scheduling_framework.report.html import render, report_data

    data = report_data(cluster.nodes, cluster.bound_pods, sched, results, stats, warnings, cluster.pending_pods,
                       remedies=remedies)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(render(data))
    except OSError as e:
        raise InputError(path, f"cannot write report {path}: {e.strerror or e}") from None


def _run_with_progress(sched: Any, total: int, err: TextIO, flag: bool | None) -> None:
    """``sched.run()``, with a progress bar on ``err`` when it is a terminal (or ``--progress``)."""
    from scheduling_framework.report.progress import Progress, should_show

    if not should_show(err, flag) or total == 0:
        sched.run()
        return
    results = sched.results

    def done() -> int:  # pods tried at least once (or skipped): sampled by the bar's thread
        return sum(1 for r in list(results.values()) if r.attempts or r.outcome == "Skipped")

    with Progress(err, total, done):
        sched.run()


def _demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.demo import demo_cluster_path

    with demo_cluster_path() as path:
        if args.print_cluster:
            out.write(path.read_text(encoding="utf-8"))
            return EXIT_OK
        argv = ["schedule", "--cluster", str(path), "--expand-workloads", "--explain", "--output", args.output]
        if args.seed is not None:
            argv += ["--seed", str(args.seed)]
        sched_args = _parser().parse_args(argv)
        sched_args.stderr = err
        return _schedule(sched_args, out, err)


# --- capacity ----------------------------------------------------------------------------------


def _capacity(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from scheduling_framework.report.focus import load_single_pod
    from scheduling_framework.report.table import print_capacity
    from scheduling_framework.simulation import Simulator

    if [args.cluster, args.config, args.pod].count("-") > 1:
        raise InputError("--pod", "only one of --cluster, --config and --pod can read standard input ('-')")
    cfg = load_config_for(args)
    cluster = load_cluster_with_progress(args.cluster, args.max_input_bytes, err, None, args.strict)
    pod = load_single_pod(args.pod, max_input_bytes=args.max_input_bytes, strict=args.strict,
                          warnings=cluster.warnings)
    sim = Simulator.from_cluster(cluster, cfg, seed=args.seed)
    if args.workload:
        from scheduling_framework.ingest.cluster import load_cluster

        for obj in load_cluster(args.workload, max_input_bytes=args.max_input_bytes).objects:
            if obj.kind == "Workload":
                if sim.objects.get(obj.kind, obj.namespace, obj.name) is not None:
                    # the API server answers AlreadyExists; replacing the cluster's object would be silent
                    raise InputError("--workload", f"--workload {args.workload}: Workload {obj.namespace}/{obj.name} "
                                     f"already exists in --cluster {args.cluster}: remove one of the two")
                sim.objects.add(obj)
    _freeze_loaded_objects()
    result = sim.capacity(pod, args.max)
    warnings = list(sim.warnings)
    if args.output == "json":
        json.dump({**result.to_dict(), "warnings": warnings}, out, indent=2)
        out.write("\n")
        return EXIT_OK
    for w in warnings:
        print(f"warning: {w}", file=err)
    print_capacity(result, [ni.name for ni in sim.cluster.snapshot.list()], out)
    return EXIT_OK


def _dump_yaml(doc: Any, out: TextIO) -> None:
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # the C emitter: big clusters dump fast
    yaml.dump(doc, out, Dumper=dumper, sort_keys=False, default_flow_style=False)


# --- serve-extender ---------------------------------------------------------------------------


def _serve_extender(args: argparse.Namespace, err: TextIO) -> int:
    """Serve until SIGTERM / SIGINT; one log line per request on stderr."""
    import logging

    from scheduling_framework.extender.server import serve

    logger = logging.getLogger("scheduling_framework.extender.server")
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        serve(args.config, address=args.address, profile=args.profile, tls_cert=args.tls_cert,
              tls_key=args.tls_key, cluster=args.cluster, request_timeout=args.request_timeout,
              max_request_bytes=args.max_request_bytes, read_timeout=args.read_timeout, workers=args.workers,
              queue=args.queue, max_connections=args.max_connections, strict=args.strict)
    finally:
        logger.removeHandler(handler)
    return EXIT_OK


# --- config view / plugins ---------------------------------------------------------------------


def _config_view(args: argparse.Namespace, out: TextIO) -> int:
    from scheduling_framework.config import config_view
    from scheduling_framework.registry import default_registry

    cfg = load_config_for(args)
    for msg in cfg.feature_gates.warnings():
        print(f"warning: {msg}", file=getattr(args, "stderr", None) or sys.stderr)
    if args.output == "config":
        from scheduling_framework.config import config_document

        _dump_yaml(config_document(cfg, default_registry().points_of), out)
        return EXIT_OK
    view = config_view(cfg, default_registry().points_of)
    if args.output == "json":
        json.dump(view, out, indent=2)
        out.write("\n")
    else:
        import yaml

        out.write(yaml.safe_dump(view, sort_keys=False))
    return EXIT_OK


def _plugins(args: argparse.Namespace, out: TextIO) -> int:
    from scheduling_framework.registry import default_registry

    reg = default_registry()
    items = []
    for name in reg.names():
        points = reg.points_of(name)
        items.append({"name": name, "origin": reg.origin(name), "extensionPoints": sorted(points or [])})
    if args.output == "json":
        json.dump({"plugins": items}, out, indent=2)
        out.write("\n")
        return EXIT_OK
    from scheduling_framework.report.table import table

    rows: list[tuple[str, ...]] = [("NAME", "EXTENSION POINTS", "ORIGIN")]
    rows += [(str(i["name"]), ",".join(i["extensionPoints"]), str(i["origin"])) for i in items]
    table(rows, out, width=None)  # one line per plugin: scripts grep it
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
