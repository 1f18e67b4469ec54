"""Remedies for the pods a Scheduler run left pending, on the cluster as the run left it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.remedies.engine import remedies_for
from scheduling_framework.remedies.model import PodRemedies

if TYPE_CHECKING:
    from scheduling_framework.scheduler import Scheduler
    from scheduling_framework.simulation.simulator import Simulator

UNSCHEDULABLE = "Unschedulable"


def end_state(sched: Scheduler) -> Cluster:
    """The cluster as ``sched`` holds it: its nodes, the pods bound or placed (victims of preemption gone) and
    its objects as the run left them (claims allocated by the run included)."""
    store = sched.objects
    objects = [o for kind in store.kinds() for o in store.list(kind)]
    return Cluster(list(sched.cache.nodes()), [p for p in sched.cache.pods() if p.spec.node_name], objects)


def _signature(pod: Pod) -> str:
    """Pods alike in everything a remedy reads (replicas of one template) share their remedies."""
    m = pod.raw_manifest()
    meta = m.get("metadata") or {}
    spec = {k: v for k, v in (m.get("spec") or {}).items() if k not in ("hostname", "nodeName")}
    return json.dumps([meta.get("namespace"), meta.get("labels"), spec, pod.spec.priority], sort_keys=True,
                      default=str)


def why(sched: Scheduler, pods: Iterable[Any] | None = None, *, templates: Iterable[Node] = (),
        seed: int | None = None) -> list[PodRemedies]:
    """Remedies for ``pods`` (PodResults or Pods; default: every pod the run left Unschedulable), each computed
    on the cluster as the run left it, with the profile the pod names. Replicas share one computation."""
    from scheduling_framework.simulation.simulator import Simulator

    if pods is None:
        pods = [r for r in sched.results.values() if r.outcome == UNSCHEDULABLE]
    by_key = {p.key: p for p in sched._known_pods()}
    chosen: list[tuple[Pod, str]] = []
    for p in pods:
        if isinstance(p, Pod):
            r = sched.results.get(p.key)
            chosen.append((p, r.message if r is not None else ""))
        elif p.pod in by_key:  # a PodResult: the pod as the run admitted it
            chosen.append((by_key[p.pod], p.message))
    if not chosen:
        return []
    end = end_state(sched)
    shapes = list(templates)
    sims: dict[str, Simulator] = {}
    done: dict[str, PodRemedies] = {}
    out: list[PodRemedies] = []
    served = {p.scheduler_name for p in sched.config.profiles}
    for pod, message in chosen:
        profile = pod.spec.scheduler_name
        if profile not in served:
            out.append(PodRemedies(pod.key, message, not_computed=(
                f'no remedy computed: no profile serves schedulerName "{profile}"',)))
            continue
        sim = sims.get(profile)
        if sim is None:
            sim = sims[profile] = Simulator.from_cluster(end, sched.config, sched.registry, seed, profile=profile)
        sig = _signature(pod)
        known = done.get(sig)
        if known is None:
            known = done[sig] = remedies_for(sim, pod, message=message, templates=shapes)
        out.append(attrs.evolve(known, pod=pod.key, message=message))
    return out


__all__ = ["end_state", "why"]
