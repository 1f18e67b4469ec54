"""``compare``: the same cluster under two releases or configurations, pod by pod.

Both sides load the same cluster objects (read once), schedule the same pending pods with the same seed and
record their cycles (recorder.CycleBook). Side A runs first; side B runs knowing where A put each pod (tie
alignment, B's verdicts of A's nodes). Then each pod's outcomes are compared and every difference is explained
from the two cycles that decided it (why.explain).
"""

from __future__ import annotations

import gc
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.comparison.model import (
    ALIGN,
    DEVICES,
    EARLIER,
    INDEPENDENT,
    MODES,
    MOVED,
    NEWLY_SCHEDULABLE,
    NEWLY_UNSCHEDULABLE,
    OUTCOME,
    OWN,
    SEQUENTIAL,
    TIE_BREAKS,
    Comparison,
    NodeChange,
    PodComparison,
    PodSide,
    Side,
    changed_kinds,
    side_info,
)
from scheduling_framework.comparison.recorder import CycleBook, CycleRecord
from scheduling_framework.comparison.why import explain, verdicts_agree
from scheduling_framework.config import KubeSchedulerConfiguration, resolve_config
from scheduling_framework.errors import ConfigError, SchedulingFrameworkError
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.versions import parse_release, release_key

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"

def _bind_mounts(pod: Pod) -> bool:
    from scheduling_framework.api.declared_features import pod_feature_use

    try:
        return pod_feature_use(pod).bind_mount_options
    except SchedulingFrameworkError:
        return False


def _image_volumes(pod: Pod) -> bool:
    spec = pod.raw_manifest().get("spec")
    volumes = spec.get("volumes") if isinstance(spec, Mapping) else None
    return isinstance(volumes, list) and any(isinstance(v, Mapping) and v.get("image") for v in volumes)


#: Behaviour changes between releases that move placements (docs/versions.md, "Behaviour by release"): the
#: release that brought each, the plugin concerned, the note, and which pods it can concern (None: any). A pod's
#: ``why`` quotes the notes of the plugins responsible when the sides' releases straddle them.
RELEASE_CHANGES: tuple[tuple[str, str, str, Callable[[Pod], bool] | None], ...] = (
    ("1.35", "DynamicResources", "DynamicResources scores nodes from 1.35 (weight 2): the earlier alternatives of "
                                 "a claim's firstAvailable list are preferred", None),
    ("1.36", "NodeResourcesBalancedAllocation", "NodeResourcesBalancedAllocation scores the change in balance the "
                                                "pod brings from 1.36 (upstream PR #135573); the balance with the "
                                                "pod before", None),
    ("1.36", "NodeDeclaredFeatures", "NodeDeclaredFeatures is in the default profile from 1.36 (gate beta, on): a "
                                     "node not declaring a feature the pod needs is rejected", None),
    ("1.36", "DynamicResources", "the DRA allocator searches pools by driver then pool name from 1.36 (upstream PR "
                                 "#136641), in the order the ResourceSlices are listed before", None),
    ("1.36", "DynamicResources", "DRA features on by default from 1.36: partitionable devices, device taints, "
                                 "consumable capacity, binding conditions, extended resources", None),
    ("1.36", "ImageLocality", "ImageLocality scores image volumes from 1.36 (upstream PR #130231)", _image_volumes),
    ("1.37", "ImageLocality", "ImageLocality counts image volumes in its scale's top from 1.37 (upstream PR "
                              "#138951)", _image_volumes),
    ("1.37", "NodeDeclaredFeatures", "from 1.37 a volume mounted with bindMountOptions needs the node to declare "
                                     "VolumeBindMountOptions", _bind_mounts),
    ("1.37", "NodeVolumeLimits", "NodeVolumeLimits rejects a node whose CSINode lacks the volume's driver from "
                                 "1.37 (VolumeLimitScaling beta)", None),
    ("1.37", "VolumeBinding", "VolumeBinding scores storage capacity from 1.37 (StorageCapacityScoring on)", None),
    ("1.37", "DynamicResources", "DeviceTaintRules taint the devices they select from 1.37 (DRADeviceTaintRules "
                                 "GA)", None),
)

# Where errors about a side's settings point: the Python names; the CLI passes its flags.
PYTHON_NAMES = {f"{s}.{f}": f"{s}.{f}" for s in "ab" for f in ("kubernetes_version", "feature_gates", "config")}


def compare(cluster: Cluster | str | os.PathLike[str], a: Side | None = None, b: Side | None = None, *,
            seed: int | None = None, mode: str = SEQUENTIAL, ties: str = ALIGN, strict: bool = False,
            max_input_bytes: int | None = None, expand_workloads: bool = False,
            names: Mapping[str, str] | None = None, gc_freeze: bool = False) -> Comparison:
    """Schedule the pending pods of ``cluster`` under side ``a`` and side ``b`` (None: the defaults) and compare
    them pod by pod.

    ``seed``: both sides' tie-breaking seed (None: one drawn at random, reported in the result's ``seed``).
    ``mode``: ``"sequential"`` (each side schedules the pods one after another as ``schedule`` does, each
    placement visible to the next) or ``"independent"`` (each pod alone against the starting cluster, with no
    binding, preemption or retry). ``ties``: ``"align"`` (B breaks a tie toward A's node when A's node is among
    B's equally top-scored nodes) or ``"seed"`` (B keeps its own draw, as ``schedule --seed``). ``cluster``: a
    loaded Cluster (``load_cluster``) or a file path. Raises ConfigError naming the side's field (``names`` maps
    ``a.config`` and the like to other words, such as the command line's flags). ``gc_freeze``: once both
    sides are loaded, move every object to the garbage collector's permanent generation (``gc.freeze()``, for
    the whole process), so that no collection walks a big cluster during the runs, as the CLI does."""
    if mode not in MODES:
        raise ConfigError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    if ties not in TIE_BREAKS:
        raise ConfigError(f"ties: expected one of {', '.join(TIE_BREAKS)}, got {ties!r}")
    a, b = a or Side(), b or Side()
    if seed is None:  # both sides draw from the same seed all the same; the one drawn is reported
        seed = random.SystemRandom().randrange(2**31)
    labels = {**PYTHON_NAMES, **(names or {})}
    cfg_a = load_side(a, "a", labels)
    cfg_b = load_side(b, "b", labels)
    if not isinstance(cluster, Cluster):
        from scheduling_framework.ingest import gc_paused
        from scheduling_framework.ingest.cluster import load_cluster

        with gc_paused():
            cluster = load_cluster(cluster, max_input_bytes=max_input_bytes, strict=strict)
    if expand_workloads:
        from scheduling_framework.ingest.workloads import expand_workloads as expand

        cluster = expand(cluster, seed=seed)
    side_a = _SideRunner(cluster, cfg_a, seed, CycleBook(), mode)
    side_b = _SideRunner(cluster, cfg_b, seed, CycleBook(align=ties == ALIGN), mode)
    sides = (side_a, side_b)
    for s in sides:
        s.prepare()
    if gc_freeze:
        gc.freeze()
    side_a.run()
    # B learns where A put each pod: it aligns its ties to them and gives A's nodes a verdict of its own
    book_a = side_a.book
    side_b.book.peer = {rec.pod: rec.host for rec in (book_a.records[i] for i in book_a.latest.values())}
    side_b.run()
    return _compare_runs(cluster, a, b, cfg_a, cfg_b, sides[0].out, sides[1].out, seed, mode, ties,
                         sides[0].seconds + sides[1].seconds)


def load_side(side: Side, which: str, names: Mapping[str, str]) -> KubeSchedulerConfiguration:
    """The configuration side ``which`` ("a" or "b") follows; errors name the field (``names``) at fault."""
    from scheduling_framework.features import FeatureGates

    release = None
    if side.kubernetes_version is not None:
        release = parse_release(side.kubernetes_version, field=names[f"{which}.kubernetes_version"])
    if side.feature_gates is not None:
        try:
            FeatureGates.for_release(release, side.feature_gates)
        except ConfigError as e:
            raise ConfigError(f"{names[f'{which}.feature_gates']}: {e}") from None
    from scheduling_framework.config import config_view
    from scheduling_framework.registry import default_registry

    try:
        cfg = resolve_config(side.config, kubernetes_version=release, feature_gates=side.feature_gates)
        config_view(cfg, default_registry().points_of)  # every profile can be built (no unknown plugin, ...)
    except ConfigError as e:
        raise ConfigError(f"{names[f'{which}.config']}: {e}") from None
    return cfg


# --- running one side ----------------------------------------------------------------------------------------


class SideRun:
    """One side's answers: each pending pod's outcome, the cluster at the end, what the run warned about."""

    def __init__(self, book: CycleBook) -> None:
        self.book = book
        self.pods: dict[str, PodSide] = {}
        #: node -> (pods, requested cpu millicores, requested memory bytes); the requests are None when not known
        self.usage: dict[str, tuple[int, int | None, int | None]] = {}
        self.allocatable: dict[str, dict[str, int]] = {}
        self.warnings: list[str] = []


class _SideRunner:
    """One side: its scheduler (or simulators) prepared, then run."""

    def __init__(self, cluster: Cluster, cfg: KubeSchedulerConfiguration, seed: int | None, book: CycleBook,
                 mode: str) -> None:
        self.cluster, self.cfg, self.seed, self.book, self.mode = cluster, cfg, seed, book, mode
        self.out = SideRun(book)
        self.sched: Any = None
        #: CPU seconds of the run
        self.seconds = 0.0

    def prepare(self) -> None:
        if self.mode == SEQUENTIAL:
            from scheduling_framework.scheduler import Scheduler

            self.sched = Scheduler(self.cfg, seed=self.seed)
            for algorithm in self.sched._algorithms.values():
                self.book.install(algorithm)
            self.sched.load(self.cluster.nodes, self.cluster.pods, self.cluster.objects)

    def run(self) -> None:
        t0 = time.process_time()
        if self.mode == INDEPENDENT:
            _run_independent(self.cluster, self.cfg, self.seed, self.book, self.out)
        else:
            self.sched.run()
        self.seconds = time.process_time() - t0
        if self.mode == SEQUENTIAL:
            _collect_sequential(self.cluster, self.sched, self.book, self.out)


def _devices(claims: Sequence[Mapping[str, Any]] | None) -> tuple[str, ...]:
    out = []
    for c in claims or ():
        name = c.get("podClaimName") or c.get("name") or "?"
        alloc = c.get("allocation") or {}
        for d in alloc.get("devices") or ():
            out.append(f"{name}/{d.get('request')}: {d.get('driver')}/{d.get('pool')}/{d.get('device')}")
    return tuple(out)


def _tied(book: CycleBook, key: str) -> tuple[str, ...]:
    rec = book.last(key)
    if rec is None:
        return ()
    tied = rec.tied
    return tied if len(tied) > 1 else ()


def _collect_sequential(cluster: Cluster, sched: Any, book: CycleBook, out: SideRun) -> None:
    for key in [p.key for p in cluster.pending_pods]:
        r = sched.results.get(key)
        if r is None:
            continue
        out.pods[key] = PodSide(r.outcome, r.node, r.nominated_node, tuple(r.victims), r.message, _tied(book, key),
                                _devices(r.claims))
    for n in cluster.nodes:
        ni = sched.cache.node_info(n.name)
        if ni is None:
            continue
        out.usage[n.name] = (len(ni.pods), int(ni.requested.milli_cpu), int(ni.requested.memory))
        out.allocatable[n.name] = {"cpu": int(ni.allocatable.milli_cpu), "memory": int(ni.allocatable.memory),
                                   "pods": int(ni.allocatable.allowed_pod_number)}
    out.warnings = list(sched.warnings)


def _run_independent(cluster: Cluster, cfg: KubeSchedulerConfiguration, seed: int | None, book: CycleBook,
                     out: SideRun) -> None:
    from scheduling_framework.simulation import Simulator
    from scheduling_framework.status import Code

    served = [p.scheduler_name for p in cfg.profiles]
    sims: dict[str, Simulator] = {}
    counts: Counter[str] = Counter()
    for pod in cluster.pending_pods:
        name = pod.spec.scheduler_name
        if name not in served:
            out.pods[pod.key] = PodSide("Skipped", message=f'pod is for schedulerName "{name}", which no profile '
                                                           "of the configuration serves")
            continue
        sim = sims.get(name)
        if sim is None:
            sim = Simulator.from_cluster(cluster, cfg, seed=seed, profile=name)
            book.install(sim.algorithm)
            sims[name] = sim
        pl = sim.best_node_for_pod(pod)
        if pl.node is not None:
            outcome = SCHEDULED
            counts[pl.node] += 1
        elif pl.skipped:
            outcome = "Skipped"
        elif pl.status is not None and pl.status.code == Code.ERROR:
            outcome = "Error"
        else:
            outcome = UNSCHEDULABLE
        out.pods[pod.key] = PodSide(outcome, pl.node, message=pl.message, tied=_tied(book, pod.key))
    for n in cluster.nodes:
        out.usage[n.name] = (counts.get(n.name, 0), None, None)
    for sim in sims.values():
        out.warnings += list(sim.warnings)


# --- comparing ---------------------------------------------------------------------------------------------


def _kind(a: PodSide, b: PodSide) -> str:
    if a.outcome == b.outcome == SCHEDULED:
        if a.node != b.node:
            return MOVED
        return DEVICES if a.devices != b.devices else ""
    if a.outcome == b.outcome:
        return DEVICES if a.devices != b.devices else ""
    if a.outcome == SCHEDULED and b.outcome == UNSCHEDULABLE:
        return NEWLY_UNSCHEDULABLE
    if a.outcome == UNSCHEDULABLE and b.outcome == SCHEDULED:
        return NEWLY_SCHEDULABLE
    return OUTCOME


def _divergence(book_a: CycleBook, book_b: CycleBook, state_changes: Iterable[str]) -> int | None:
    """The index of the first cycle after which the two sides' clusters may differ: the first cycle whose pod or
    node differs, or the first cycle of a pod whose preemption (victims, nomination) or devices differ."""
    la, lb = book_a.records, book_b.records
    n = min(len(la), len(lb))
    d: int | None = None
    for i in range(n):
        if la[i].pod != lb[i].pod or la[i].host != lb[i].host:
            d = i
            break
    if d is None and len(la) != len(lb):
        d = n
    keys = set(state_changes)
    if keys:
        for book in (book_a, book_b):
            for i, rec in enumerate(book.records):
                if d is not None and i >= d:
                    break
                if rec.pod in keys:
                    d = i
                    break
    return d


def _pod_at(book_a: CycleBook, book_b: CycleBook, i: int) -> str:
    return book_a.records[i].pod if i < len(book_a.records) else book_b.records[i].pod


def _release_notes(plugins: Sequence[str], ra: str, rb: str, pod: Pod | None) -> list[str]:
    if ra == rb:
        return []
    lo, hi = sorted((ra, rb), key=release_key)
    return [note for rel, plugin, note, concerns in RELEASE_CHANGES
            if plugin in plugins and release_key(lo) < release_key(rel) <= release_key(hi)
            and (concerns is None or (pod is not None and concerns(pod)))]


def _compare_pod(key: str, pa: PodSide, pb: PodSide, ra: CycleRecord | None, rb: CycleRecord | None,
                 releases: tuple[str, str], pod: Pod | None) -> PodComparison:
    kind = _kind(pa, pb)
    aligned = kind == "" and rb is not None and rb.drawn is not None
    if not kind and not aligned:
        return PodComparison(key, pa, pb)
    tie = aligned
    if kind == MOVED and pa.node is not None and pb.node is not None:
        ta = ra.tied if ra is not None else ()
        tb = rb.tied if rb is not None else ()
        if (pa.node in tb or pb.node in ta or set(ta) & set(tb)) and verdicts_agree(ra, rb, (pa.node, pb.node)):
            tie = True
    errors = (pa.message if pa.outcome == "Error" else "", pb.message if pb.outcome == "Error" else "")
    why = explain(pa.node, pb.node, ra, rb, tie=tie, devices=(pa.devices, pb.devices), errors=errors)
    if kind in (NEWLY_UNSCHEDULABLE, NEWLY_SCHEDULABLE, OUTCOME) and not why["text"]:
        why["text"] = f"A: {pa.brief()}; B: {pb.brief()}" + (f" ({pb.message or pa.message})"
                                                              if pb.message or pa.message else "")
    notes = _release_notes(why["plugins"], *releases, pod)
    if notes:
        why["releaseNotes"] = notes
    return PodComparison(key, pa, pb, changed=bool(kind) and not tie, tie=tie, kind=kind, why=why)


def _compare_runs(cluster: Cluster, a: Side, b: Side, cfg_a: KubeSchedulerConfiguration,
                  cfg_b: KubeSchedulerConfiguration, run_a: SideRun, run_b: SideRun, seed: int | None, mode: str,
                  ties: str, seconds: float) -> Comparison:
    import attrs

    releases = (cfg_a.kubernetes_version, cfg_b.kubernetes_version)
    keys = list(dict.fromkeys([p.key for p in cluster.pending_pods if p.key in run_a.pods or p.key in run_b.pods]))
    missing = PodSide("Skipped", message="not in this side's run")
    by_key = {p.key: p for p in cluster.pending_pods}
    pods = [_compare_pod(k, run_a.pods.get(k, missing), run_b.pods.get(k, missing), run_a.book.last(k),
                         run_b.book.last(k), releases, by_key.get(k)) for k in keys]
    # the cause of each difference: the same cluster state on both sides, or earlier placements that differed
    if mode == SEQUENTIAL:
        state = [p.pod for p in pods if p.a.victims != p.b.victims or p.a.nominated_node != p.b.nominated_node
                 or p.a.devices != p.b.devices]
        d = _divergence(run_a.book, run_b.book, state)
        first = None if d is None else _pod_at(run_a.book, run_b.book, d)
        tie_note = ", a tie" if any(p.pod == first and p.tie for p in pods) else ""
        out = []
        for p in pods:
            if not p.kind and not p.tie:
                out.append(p)
                continue
            ia, ib = run_a.book.latest.get(p.pod, -1), run_b.book.latest.get(p.pod, -1)
            if d is None or p.pod == first or (ia <= d and ib <= d):
                out.append(attrs.evolve(p, cause=OWN))
            else:
                why = dict(p.why or {})
                why["text"] = f"after earlier placements differed (from {first}{tie_note}): " + str(why.get("text", ""))
                out.append(attrs.evolve(p, cause=EARLIER, diverged_after=first, why=why))
        pods = out
    else:
        first = None
        pods = [attrs.evolve(p, cause=OWN) if p.kind or p.tie else p for p in pods]
    nodes = _node_changes(cluster, run_a, run_b)
    summary = _summary(pods, nodes, run_a, run_b, first, mode)
    config_changes = config_differences(cfg_a, cfg_b)
    warnings = _side_warnings(cluster.warnings, run_a.warnings, run_b.warnings)
    return Comparison(side_info("A", a, releases[0], cfg_a.file, cfg_a.feature_gates.explicit()),
                      side_info("B", b, releases[1], cfg_b.file, cfg_b.feature_gates.explicit()),
                      seed, mode, ties, tuple(pods), tuple(nodes), summary, tuple(config_changes), tuple(warnings),
                      seconds)


def _node_changes(cluster: Cluster, run_a: SideRun, run_b: SideRun) -> list[NodeChange]:
    out = []
    for n in cluster.nodes:
        ua, ub = run_a.usage.get(n.name), run_b.usage.get(n.name)
        if ua is None or ub is None or ua == ub:
            continue
        out.append(NodeChange(n.name, ua[0], ub[0], ua[1], ub[1], ua[2], ub[2],
                              run_a.allocatable.get(n.name) or run_b.allocatable.get(n.name) or {}))
    return out


def _side_stats(pods: Sequence[PodComparison], run: SideRun, which: str) -> dict[str, Any]:
    outcomes = Counter(getattr(p, which).outcome for p in pods)
    out: dict[str, Any] = {"scheduled": outcomes.get(SCHEDULED, 0), "unschedulable": outcomes.get(UNSCHEDULABLE, 0),
                           "errors": outcomes.get("Error", 0), "skipped": outcomes.get("Skipped", 0),
                           "preempted": outcomes.get("Preempted", 0),
                           "nodesUsed": sum(1 for u in run.usage.values() if u[0] > 0)}
    if run.allocatable:
        for res, i in (("cpu", 1), ("memory", 2)):
            total = sum(al[res] for al in run.allocatable.values())
            used = sum(int(u[i] or 0) for u in run.usage.values())
            out[f"{res}Requested"] = round(100 * used / total, 1) if total else 0.0
    return out


def _summary(pods: Sequence[PodComparison], nodes: Sequence[NodeChange], run_a: SideRun, run_b: SideRun,
             first: str | None, mode: str) -> dict[str, Any]:
    changed = [p for p in pods if p.changed]
    kinds = changed_kinds(pods)
    plugins: Counter[str] = Counter(pl for p in changed for pl in p.plugins)
    return {
        "pods": len(pods),
        "changed": len(changed),
        "placedDifferently": kinds[MOVED],
        "newlyUnschedulable": kinds[NEWLY_UNSCHEDULABLE],
        "newlySchedulable": kinds[NEWLY_SCHEDULABLE],
        "otherOutcome": kinds[OUTCOME],
        "otherDevices": kinds[DEVICES],
        "ownDecision": sum(1 for p in changed if p.cause == OWN),
        "afterEarlierPlacements": sum(1 for p in changed if p.cause == EARLIER),
        "ties": sum(1 for p in pods if p.tie),
        "divergedAfter": first,
        "divergedOnTie": first is not None and any(p.pod == first and p.tie for p in pods),
        "plugins": dict(sorted(plugins.items(), key=lambda kv: (-kv[1], kv[0]))),
        "nodesChanged": len(nodes),
        "a": _side_stats(pods, run_a, "a"),
        "b": _side_stats(pods, run_b, "b"),
    }


def _side_warnings(common: Iterable[str], wa: Sequence[str], wb: Sequence[str]) -> list[str]:
    from scheduling_framework.warning_list import merged

    sa, sb = set(wa), set(wb)
    return merged(common, [w if w in sb else f"A: {w}" for w in wa], [f"B: {w}" for w in wb if w not in sa])


# --- configuration differences ------------------------------------------------------------------------------


def config_differences(cfg_a: KubeSchedulerConfiguration, cfg_b: KubeSchedulerConfiguration) -> list[dict[str, Any]]:
    """What the two effective configurations (``config view``) differ in: the release, plugins per profile and
    extension point, score weights, plugin args (one entry per differing field) and feature gates."""
    from scheduling_framework.config import config_view
    from scheduling_framework.registry import default_registry

    points_of = default_registry().points_of
    va, vb = config_view(cfg_a, points_of), config_view(cfg_b, points_of)
    out: list[dict[str, Any]] = []
    if va["kubernetesVersion"] != vb["kubernetesVersion"]:
        out.append({"kind": "kubernetesVersion", "a": va["kubernetesVersion"], "b": vb["kubernetesVersion"]})
    pa = {p["schedulerName"]: p for p in va["profiles"]}
    pb = {p["schedulerName"]: p for p in vb["profiles"]}
    for name in list(pa) + [n for n in pb if n not in pa]:
        if name not in pa or name not in pb:
            out.append({"kind": "profile", "profile": name, "a": name in pa, "b": name in pb})
            continue
        out += _profile_differences(name, pa[name], pb[name])
    for key in ("percentageOfNodesToScore", "parallelism"):
        if va.get(key) != vb.get(key):
            out.append({"kind": "setting", "field": key, "a": va.get(key), "b": vb.get(key)})
    ga, gb = cfg_a.feature_gates.to_dict(), cfg_b.feature_gates.to_dict()
    newer_b = release_key(cfg_b.kubernetes_version) >= release_key(cfg_a.kubernetes_version)
    for gate in sorted(set(ga) | set(gb)):
        x, y = ga.get(gate), gb.get(gate)
        if x == y:
            continue
        if x is None or y is None:
            # A gate only one release has: added (a difference when it starts on) or removed (its behaviour kept,
            # GA, or dropped with a feature that was off): only a new gate that is on changes what runs.
            added_on = y if x is None else x
            new_side_is_b = x is None
            if not added_on or new_side_is_b != newer_b:
                continue
        out.append({"kind": "featureGate", "gate": gate, "a": x, "b": y})
    return out


def _profile_differences(profile: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pts_a, pts_b = a.get("plugins", {}), b.get("plugins", {})
    points: dict[str, tuple[list[str], list[str]]] = {}
    for point in list(pts_a) + [p for p in pts_b if p not in pts_a]:
        names_a = [e["name"] for e in pts_a.get(point, [])]
        names_b = [e["name"] for e in pts_b.get(point, [])]
        for n in dict.fromkeys(names_a + names_b):
            if (n in names_a) != (n in names_b):
                where = points.setdefault(n, ([], []))
                (where[0] if n in names_a else where[1]).append(point)
    for plugin, (only_a, only_b) in points.items():
        out.append({"kind": "plugin", "profile": profile, "plugin": plugin, "a": only_a, "b": only_b})
    wa = {e["name"]: e.get("weight") for e in pts_a.get("score", [])}
    wb = {e["name"]: e.get("weight") for e in pts_b.get("score", [])}
    for n in wa:
        if n in wb and wa[n] != wb[n]:
            out.append({"kind": "weight", "profile": profile, "plugin": n, "a": wa[n], "b": wb[n]})
    args_a = {e["name"]: e.get("args") for e in a.get("pluginConfig", [])}
    args_b = {e["name"]: e.get("args") for e in b.get("pluginConfig", [])}
    for n in list(args_a) + [x for x in args_b if x not in args_a]:
        for path, x, y in _field_differences(args_a.get(n), args_b.get(n)):
            out.append({"kind": "args", "profile": profile, "plugin": n, "field": path, "a": x, "b": y})
    return out


def _field_differences(x: Any, y: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(x, Mapping) and isinstance(y, Mapping):
        out = []
        for k in list(x) + [k for k in y if k not in x]:
            out += _field_differences(x.get(k), y.get(k), f"{path}.{k}" if path else str(k))
        return out
    return [] if x == y else [(path, x, y)]


__all__ = ["PYTHON_NAMES", "RELEASE_CHANGES", "SideRun", "compare", "config_differences", "load_side"]
