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
#: a node group's reasons for not being tried at all (cluster-autoscaler's skipped node groups)
MAX_SIZE_REACHED = "max size reached"
MAX_NODES_TOTAL_REACHED = "--max-nodes-total reached"
ATOMIC_OVER_MAX_NODES_TOTAL = "atomic scale-up exceeds cluster node count limit"
SKIP_REASONS = (MAX_SIZE_REACHED, MAX_NODES_TOTAL_REACHED, ATOMIC_OVER_MAX_NODES_TOTAL)
#: the reason every pending pod gets when an all-or-nothing scale-up cannot take them all
ALL_OR_NOTHING = "all-or-nothing"


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


def _skip_reason(g: NodeGroup, size: int, total: int, max_nodes_total: int | None) -> str:
    if g.max_size - size <= 0:
        return MAX_SIZE_REACHED
    if max_nodes_total is not None:
        if g.zero_or_max_node_scaling and total + g.max_size - size > max_nodes_total:
            return ATOMIC_OVER_MAX_NODES_TOTAL
        if max_nodes_total - total <= 0:
            return MAX_NODES_TOTAL_REACHED
    return ""


def scale_up(sim: Simulator, pending: Sequence[Pod], groups: Sequence[NodeGroup], *, expanders: Sequence[str],
             seed: int | None = None, priorities: Mapping[int, Sequence[str]] | None = None,
             max_nodes_total: int | None = None, why: bool = False, filter_schedulable: bool = True,
             all_or_nothing: bool = False, simulate_skipped_groups: bool = False) -> dict[str, Any]:
    """``schedulable`` (pod, node), ``options``, ``chosen``, ``unhelpable`` and ``schedulable_groups``. The
    schedulable pods stay placed on the simulator (cluster-autoscaler's scale-down sees them there too); the caller
    forks around it.

    A group at its ``maxSize``, or with the cluster at ``max_nodes_total``, is skipped (not estimated); a
    ``zero_or_max_node_scaling`` group is skipped when growing it to its max size would pass ``max_nodes_total``,
    and otherwise offers exactly that growth when its estimate needs any node. ``schedulable_groups`` maps each pod
    left after the first step to the estimated groups whose empty template takes it (cluster-autoscaler's
    schedulable groups of its equivalence group): a pod with none is what cluster-autoscaler reports as remaining
    unschedulable; ``unhelpable`` also lists the pods a group takes but whose estimate was capped.

    ``filter_schedulable`` False skips the first step: the pods are taken as unschedulable, as the scale-up
    orchestrator receives them. ``all_or_nothing``: only a group whose new nodes take every pending pod is an
    option; without one, nothing is schedulable and every pod is unhelpable. ``simulate_skipped_groups``: a skipped
    group's template is still checked against the pods, and the Filter message replaces the skip reason for those
    it refuses (cluster-autoscaler's ScaleUpSimulationForSkippedNodeGroupsEnabled)."""
    from scheduling_framework.autoscaler.estimator import estimate, template_rejections
    from scheduling_framework.autoscaler.expander import Option, choose

    schedulable, rest = filter_out_schedulable(sim, pending) if filter_schedulable else ([], list(pending))
    total = len(sim.cluster)
    options: list[ScaleUpOption] = []
    candidates: list[Any] = []
    reasons: dict[str, list[tuple[str, str]]] = {p.key: [] for p in rest}
    fits: dict[str, list[str]] = {p.key: [] for p in rest}
    for g in groups:
        if not rest:
            break
        size = sum(1 for ni in sim.cluster.node_infos() if ni.node is not None and g.owns(ni.node))
        skip = _skip_reason(g, size, total, max_nodes_total)
        if skip:
            refused = template_rejections(sim, rest, g.template) if simulate_skipped_groups else {}
            for p in rest:
                reasons[p.key].append((g.name, refused.get(p.key, skip)))
            continue
        room = g.max_size - size
        if max_nodes_total is not None and not g.zero_or_max_node_scaling:
            room = min(room, max_nodes_total - total)
        est = estimate(sim, rest, g.template, max_nodes=room)
        for p in rest:
            if p.key not in est.rejected:
                fits[p.key].append(g.name)
        placed = tuple(sorted(est.placed_pods()))
        for key, why_not in est.unplaced_reasons().items():
            reasons.setdefault(key, []).append((g.name, why_not))
        if not est.node_count or not placed:
            continue
        if all_or_nothing and len(placed) < len(rest):
            for key in placed:
                reasons[key].append((g.name, f"its {est.node_count} new node(s) take {len(placed)} of the {len(rest)} "
                                             "pending pods"))
            continue
        nodes, note = est.node_count, f"capped at {room} node(s)" if est.capped else ""
        if g.zero_or_max_node_scaling:
            nodes, note = room, f"zeroOrMaxNodeScaling: grows to maxSize {g.max_size}"
        options.append(ScaleUpOption(g.name, nodes, placed, note))
        candidates.append(Option(node_group=g.name, node_count=nodes, pods=list(placed), template=g.template,
                                 price_per_hour=g.price_per_hour, priority=g.priority,
                                 pod_requests=est.pod_requests()))
    if all_or_nothing and not options:
        fits = {key: [] for key in fits}  # nothing is schedulable when the whole set cannot be
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
        if all_or_nothing:
            reason = f"{ALL_OR_NOTHING}: {reason}"
        remedies: tuple[str, ...] = ()
        if why and len(unhelpable) < MAX_REMEDIED:
            found = sim.remedies(pod)
            remedies = tuple(r.change for r in found.remedies) + tuple(found.facts)
        unhelpable.append(Unhelpable(pod.key, reason, groups_why, remedies))
    return {"schedulable": schedulable, "options": options, "chosen": chosen, "unhelpable": unhelpable,
            "schedulable_groups": {key: tuple(names) for key, names in fits.items()}}


__all__ = ["ALL_OR_NOTHING", "ATOMIC_OVER_MAX_NODES_TOTAL", "MAX_NODES_TOTAL_REACHED", "MAX_REMEDIED",
           "MAX_SIZE_REACHED", "SKIP_REASONS", "filter_out_schedulable", "scale_up"]
