"""Scale-up: the pending pods the current nodes take, then per node group the binpacking estimate, then the
expanders' choice (see :mod:`.plan`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.autoscaler.groups import NodeGroup
from scheduling_framework.autoscaler.model import ScaleUpOption, Unhelpable
from scheduling_framework.errors import SchedulingFrameworkError

if TYPE_CHECKING:
    from scheduling_framework.simulation.simulator import Simulator

#: Unhelpable pods that get remedies computed (``why``): the first ones, by the pods' order.
MAX_REMEDIED = 50


def _by_priority(pods: Sequence[Pod]) -> list[Pod]:
    """Higher priority first, then the input order (cluster-autoscaler tries pods by priority)."""
    return [p for _, _, p in sorted(((-(p.spec.priority or 0), i, p) for i, p in enumerate(pods)))]


def filter_out_schedulable(sim: Simulator, pods: Sequence[Pod]) -> tuple[list[tuple[str, str]], list[Pod]]:
    """Place, first-fit and kept, the pods the current nodes take; the rest stay pending."""
    placed: list[tuple[str, str]] = []
    rest: list[Pod] = []
    for pod in _by_priority(pods):
        try:
            node = sim.find_node_for_pod(pod)
        except SchedulingFrameworkError:
            node = None
        if node is None:
            rest.append(pod)
            continue
        sim.add_pod(pod, node)
        placed.append((pod.key, node))
    return placed, rest


def scale_up(sim: Simulator, pending: Sequence[Pod], groups: Sequence[NodeGroup], *, expanders: Sequence[str],
             seed: int | None = None, priorities: Mapping[int, Sequence[str]] | None = None,
             max_nodes_total: int | None = None, why: bool = False) -> dict[str, Any]:
    """``schedulable`` (pod, node), ``options``, ``chosen`` and ``unhelpable``. The schedulable pods stay placed
    on the simulator (cluster-autoscaler's scale-down sees them there too); the caller forks around it."""
    from scheduling_framework.autoscaler.estimator import estimate
    from scheduling_framework.autoscaler.expander import Option, choose

    schedulable, rest = filter_out_schedulable(sim, pending)
    total = len(sim.cluster)
    options: list[ScaleUpOption] = []
    candidates: list[Any] = []
    reasons: dict[str, list[tuple[str, str]]] = {p.key: [] for p in rest}
    for g in groups:
        size = sum(1 for ni in sim.cluster.node_infos() if ni.node is not None and g.owns(ni.node))
        room = g.max_size - size
        if max_nodes_total is not None:
            room = min(room, max_nodes_total - total)
        if room <= 0 or not rest:
            for p in rest:
                reasons[p.key].append((g.name, "max size reached" if g.max_size - size <= 0
                                       else "--max-nodes-total reached"))
            continue
        est = estimate(sim, rest, g.template, max_nodes=room)
        placed = tuple(sorted(est.placed_pods()))
        for key, why_not in est.unplaced_reasons().items():
            reasons.setdefault(key, []).append((g.name, why_not))
        if not est.node_count or not placed:
            continue
        note = f"capped at {room} node(s)" if est.capped else ""
        options.append(ScaleUpOption(g.name, est.node_count, placed, note))
        candidates.append(Option(node_group=g.name, node_count=est.node_count, pods=list(placed), template=g.template,
                                 price_per_hour=g.price_per_hour, priority=g.priority,
                                 pod_requests=est.pod_requests()))
    chosen_opt = choose(candidates, expanders, seed=seed, priorities=priorities,
                        cluster_size=total) if candidates else None
    chosen = next((o for o in options if chosen_opt is not None and o.node_group == chosen_opt.node_group),
                  None)
    helped = {k for o in options for k in o.pods}
    unhelpable: list[Unhelpable] = []
    for pod in rest:
        if pod.key in helped:
            continue
        groups_why = tuple(reasons.get(pod.key, ()))
        reason = "; ".join(f"{g}: {r}" for g, r in groups_why) if groups_why else "no node group"
        remedies: tuple[str, ...] = ()
        if why and len(unhelpable) < MAX_REMEDIED:
            found = sim.remedies(pod)
            remedies = tuple(r.change for r in found.remedies) + tuple(found.facts)
        unhelpable.append(Unhelpable(pod.key, reason, groups_why, remedies))
    return {"schedulable": schedulable, "options": options, "chosen": chosen, "unhelpable": unhelpable}


__all__ = ["MAX_REMEDIED", "filter_out_schedulable", "scale_up"]
