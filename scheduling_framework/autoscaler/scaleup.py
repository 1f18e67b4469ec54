"""Scale-up: the pending pods the current nodes take, then per node group the binpacking estimate, then the
expanders' choice, capped by the cluster-wide limits and split among similar groups (see :mod:`.plan`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from scheduling_framework.api.pod import Pod
from scheduling_framework.autoscaler.groups import NodeGroup
from scheduling_framework.autoscaler.limits import (
    EXCEEDED_QUOTA_PREFIX,
    ResourceLimits,
    check_delta,
    consume,
    exceeded_reason,
    node_delta,
    resources_left,
)
from scheduling_framework.autoscaler.model import ScaleUpOption, Unhelpable
from scheduling_framework.autoscaler.nodegroupset import (
    BalancingOptions,
    balance_scale_up_between_groups,
    compute_similar_node_groups,
    find_similar_node_groups,
)
from scheduling_framework.errors import SchedulingFrameworkError

if TYPE_CHECKING:
    from scheduling_framework.simulation.simulator import Simulator
    from scheduling_framework.state.node_info import NodeInfo

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


def is_skip_reason(reason: str) -> bool:
    """Whether a group's reason for a pod says the group was not tried (cluster-autoscaler's skipped groups),
    rather than that its template refuses the pod."""
    return reason in SKIP_REASONS or reason.startswith(EXCEEDED_QUOTA_PREFIX)


def _template_info(sim: Simulator, g: NodeGroup) -> NodeInfo:
    """The group's template as its new nodes start: the template node with the DaemonSet pods it would run."""
    from scheduling_framework.state.node_info import NodeInfo

    with sim.fork():
        (name,) = sim.add_node_from_template(g.template, 1, f"{g.template.name}-similar", daemon_sets=True)
        ni = sim.cluster.get(name)
        return NodeInfo(ni.node, [pi.pod for pi in ni.pods])


def _limit_delta(g: NodeGroup, limits: ResourceLimits | None) -> dict[str, int]:
    return node_delta(g.template, limits is not None and limits.custom())


def scale_up(sim: Simulator, pending: Sequence[Pod], groups: Sequence[NodeGroup], *, expanders: Sequence[str],
             seed: int | None = None, priorities: Mapping[int, Sequence[str]] | None = None,
             max_nodes_total: int | None = None, why: bool = False, filter_schedulable: bool = True,
             all_or_nothing: bool = False, simulate_skipped_groups: bool = False,
             limits: ResourceLimits | None = None, balancing: BalancingOptions | None = None) -> dict[str, Any]:
    """``schedulable`` (pod, node), ``options``, ``chosen``, ``unhelpable``, ``schedulable_groups`` and
    ``similar``. The schedulable pods stay placed on the simulator (cluster-autoscaler's scale-down sees them there
    too); the caller forks around it.

    A group at its ``maxSize``, or with the cluster at ``max_nodes_total``, is skipped (not estimated); a
    ``zero_or_max_node_scaling`` group is skipped when growing it to its max size would pass ``max_nodes_total``,
    and otherwise offers exactly that growth when its estimate needs any node. ``schedulable_groups`` maps each pod
    left after the first step to the estimated groups whose empty template takes it (cluster-autoscaler's
    schedulable groups of its equivalence group): a pod with none is what cluster-autoscaler reports as remaining
    unschedulable; ``unhelpable`` also lists the pods a group takes but whose estimate was capped.

    ``limits``: the cluster-wide limits (:mod:`.limits`): a group whose next node (a zeroOrMaxNodeScaling group:
    whose growth) passes a maximum is skipped with cluster-autoscaler's reason, and the chosen option's node count
    is capped to what fits (``capped_from``, ``capped_by``); its pods stay the option's, as cluster-autoscaler
    reports them. ``balancing``: balance similar node groups (:mod:`.nodegroupset`): a group's estimate may use
    its similar groups' room too, and the chosen node count is split among the chosen group and its similar groups
    (``chosen.balanced``, when it is split); ``similar`` maps each estimated group to its similar groups.

    ``filter_schedulable`` False skips the first step: the pods are taken as unschedulable, as the scale-up
    orchestrator receives them. ``all_or_nothing``: only a group whose new nodes take every pending pod is an
    option, and a scale-up the limits or the groups' sizes cut short is dropped; without one, nothing is
    schedulable and every pod is unhelpable. ``simulate_skipped_groups``: a skipped group's template is still
    checked against the pods, and the Filter message replaces the skip reason for those it refuses
    (cluster-autoscaler's ScaleUpSimulationForSkippedNodeGroupsEnabled)."""
    from scheduling_framework.autoscaler.estimator import estimate, template_rejections
    from scheduling_framework.autoscaler.expander import Option, choose

    schedulable, rest = filter_out_schedulable(sim, pending) if filter_schedulable else ([], list(pending))
    total = len(sim.cluster)
    nodes = [ni.node for ni in sim.cluster.node_infos() if ni.node is not None]
    size = {g.name: sum(1 for n in nodes if g.owns(n)) for g in groups}
    by_name = {g.name: g for g in groups}
    left = resources_left(limits, nodes) if limits is not None else {}
    keys = [p.key for p in rest]
    verdicts: dict[str, dict[str, str]] = {g.name: {} for g in groups}  # group -> pod -> why not
    valid: list[NodeGroup] = []
    for g in groups if rest else ():
        skip = _skip_reason(g, size[g.name], total, max_nodes_total)
        if not skip and left:
            count = g.max_size - size[g.name] if g.zero_or_max_node_scaling else 1
            _, exceeded = check_delta(left, _limit_delta(g, limits), count)
            skip = exceeded_reason(exceeded) if exceeded else ""
        if skip:
            refused = template_rejections(sim, rest, g.template) if simulate_skipped_groups else {}
            verdicts[g.name] = {k: refused.get(k, skip) for k in keys}
        else:
            valid.append(g)
    takes: dict[str, list[str]] = {}  # group -> the pending pods its empty template takes
    infos: dict[str, NodeInfo] = {}
    if balancing is not None and len(valid) > 1:
        for g in valid:
            refused = template_rejections(sim, rest, g.template)
            takes[g.name] = [k for k in keys if k not in refused]
            infos[g.name] = _template_info(sim, g)
    comparator = balancing.comparator() if balancing is not None else None
    options: list[ScaleUpOption] = []
    candidates: list[Any] = []
    similar: dict[str, list[str]] = {}
    fits: dict[str, list[str]] = {k: [] for k in keys}
    for g in valid:
        similar[g.name] = [] if comparator is None else compute_similar_node_groups(
            g.name, find_similar_node_groups(g.name, infos, comparator), takes,
            zero_or_max_node_scaling=g.zero_or_max_node_scaling)
        room = sum(max(0, by_name[n].max_size - size[n]) for n in (g.name, *similar[g.name]))
        if max_nodes_total is not None and not g.zero_or_max_node_scaling:
            room = min(room, max_nodes_total - total)
        est = estimate(sim, rest, g.template, max_nodes=room)
        for k in keys:
            if k not in est.rejected:
                fits[k].append(g.name)
        placed = tuple(sorted(est.placed_pods()))
        verdicts[g.name] = est.unplaced_reasons()
        if not est.node_count or not placed:
            continue
        if all_or_nothing and len(placed) < len(rest):
            for key in placed:
                verdicts[g.name][key] = (f"its {est.node_count} new node(s) take {len(placed)} of the {len(rest)} "
                                         "pending pods")
            continue
        count, note = est.node_count, f"capped at {room} node(s)" if est.capped else ""
        if g.zero_or_max_node_scaling:
            count, note = g.max_size - size[g.name], f"zeroOrMaxNodeScaling: grows to maxSize {g.max_size}"
        options.append(ScaleUpOption(g.name, count, placed, note))
        candidates.append(Option(node_group=g.name, node_count=count, pods=list(placed), template=g.template,
                                 price_per_hour=g.price_per_hour, priority=g.priority,
                                 pod_requests=est.pod_requests()))
    chosen_opt = choose(candidates, expanders, seed=seed, priorities=priorities,
                        cluster_size=total) if candidates else None
    chosen = next((o for o in options if chosen_opt is not None and o.node_group == chosen_opt.node_group),
                  None)
    if chosen is not None:
        chosen, short = _resize(chosen, by_name, size, similar.get(chosen.node_group, []), limits, left, total,
                                max_nodes_total)
        if short and all_or_nothing:  # the resize would not take every pod: nothing is done
            for key in chosen.pods:
                verdicts[chosen.node_group][key] = short
            chosen, options = None, []
    if all_or_nothing and not options:
        fits = {key: [] for key in fits}  # nothing is schedulable when the whole set cannot be
    helped = {k for o in options for k in o.pods}
    unhelpable: list[Unhelpable] = []
    for pod in rest:
        if pod.key in helped:
            continue
        groups_why = tuple((g.name, verdicts[g.name][pod.key]) for g in groups if pod.key in verdicts[g.name])
        reason = "; ".join(f"{g}: {r}" for g, r in groups_why) if groups_why else "no node group"
        if all_or_nothing:
            reason = f"{ALL_OR_NOTHING}: {reason}"
        remedies: tuple[str, ...] = ()
        if why and len(unhelpable) < MAX_REMEDIED:
            found = sim.remedies(pod)
            remedies = tuple(r.change for r in found.remedies) + tuple(found.facts)
        unhelpable.append(Unhelpable(pod.key, reason, groups_why, remedies))
    return {"schedulable": schedulable, "options": options, "chosen": chosen, "unhelpable": unhelpable,
            "schedulable_groups": {key: tuple(names) for key, names in fits.items()}, "similar": similar}


def _resize(chosen: ScaleUpOption, by_name: Mapping[str, NodeGroup], size: Mapping[str, int], similar: Sequence[str],
            limits: ResourceLimits | None, left: Mapping[str, int], total: int,
            max_nodes_total: int | None) -> tuple[ScaleUpOption, str]:
    """The chosen option as cluster-autoscaler executes it: capped by ``max_nodes_total`` and the cluster-wide
    limits, then split among the chosen group and its similar groups (those the limits leave room for one node
    in), each group's share capped by the limits in turn. Also why it falls short of the option ("" when not)."""
    wanted = chosen.nodes
    count = wanted
    if max_nodes_total is not None and count + total > max_nodes_total:
        count = max(0, max_nodes_total - total)
    capped_by = ""
    if left:
        allowed, exceeded = check_delta(left, _limit_delta(by_name[chosen.node_group], limits), count)
        if allowed < count:
            count, capped_by = allowed, exceeded_reason(exceeded)
    targets = [chosen.node_group] + [n for n in similar
                                     if not (left and check_delta(left, _limit_delta(by_name[n], limits), 1)[1])]
    room = dict(left)
    split: list[tuple[str, int]] = []
    for info in balance_scale_up_between_groups([(n, size[n], by_name[n].max_size) for n in targets], count):
        delta = _limit_delta(by_name[info.group], limits)
        added = check_delta(room, delta, info.delta)[0] if room else info.delta
        if added > 0:
            consume(room, delta, added)
            split.append((info.group, added))
    nodes = sum(n for _, n in split)
    balanced = tuple(split) if split != [(chosen.node_group, nodes)] else ()
    resized = attrs.evolve(chosen, nodes=nodes, balanced=balanced, capped_from=wanted if capped_by else 0,
                           capped_by=capped_by)
    short = ""
    if nodes < wanted:
        short = (f"its scale-up is capped at {nodes} of {wanted} node(s)" +
                 (f": {capped_by}" if capped_by else ""))
    return resized, short


def scale_up_to_node_group_min_size(sim: Simulator, groups: Sequence[NodeGroup], *,
                                    limits: ResourceLimits | None = None,
                                    max_nodes_total: int | None = None) -> list[ScaleUpOption]:
    """The groups under their ``minSize`` and the nodes that bring them there (cluster-autoscaler's
    ScaleUpToNodeGroupMinSize, ``--enforce-node-group-min-size``): a group whose next node passes a cluster-wide
    maximum is left alone; the others grow by what is missing, capped by the limits (each group checked against
    the same room) and by ``max_nodes_total`` — compared, as cluster-autoscaler does, with the group's own size."""
    nodes = [ni.node for ni in sim.cluster.node_infos() if ni.node is not None]
    left = resources_left(limits, nodes) if limits is not None else {}
    out: list[ScaleUpOption] = []
    for g in groups:
        size = sum(1 for n in nodes if g.owns(n))
        if size >= g.min_size:
            continue
        delta = _limit_delta(g, limits)
        if left and check_delta(left, delta, 1)[1]:
            continue
        count, note = g.min_size - size, f"minSize {g.min_size}"
        if left:
            allowed, exceeded = check_delta(left, delta, count)
            if allowed < count:
                count, note = allowed, f"minSize {g.min_size}, capped: {exceeded_reason(exceeded)}"
        if max_nodes_total is not None and count + size > max_nodes_total:
            count, note = max_nodes_total - size, f"minSize {g.min_size}, capped by --max-nodes-total"
        if count >= 1:
            out.append(ScaleUpOption(g.name, count, (), note))
    return out


__all__ = ["ALL_OR_NOTHING", "ATOMIC_OVER_MAX_NODES_TOTAL", "MAX_NODES_TOTAL_REACHED", "MAX_REMEDIED",
           "MAX_SIZE_REACHED", "SKIP_REASONS", "filter_out_schedulable", "is_skip_reason", "scale_up",
           "scale_up_to_node_group_min_size"]
