"""Scale-down: which nodes cluster-autoscaler would find unneeded, and what blocks the others.

For each node of an autoscaled group, in the cluster's order (cluster-autoscaler's unneeded-nodes pass):

1. eligibility (:func:`.drain.eligible`): the deletion taint, the ``scale-down-disabled`` annotation,
   readiness, utilization under the threshold; a node over the threshold is simply not a candidate;
2. the group's minimum size, counting the nodes already found removable;
3. the drain rules (:func:`.drain.pods_to_move`): the first pod that blocks names the rule;
4. the pods that must move are placed on the other nodes with the first node that passes the Filter
   plugins (cluster-autoscaler's ``RunFiltersUntilPassingNode``, here ``Simulator.find_node_for_pod``); when
   one finds none, ``NoPlaceToMovePods``. A removable node's removal and its pods' new places are kept for the
   nodes after it, as cluster-autoscaler keeps them within one pass;
5. with cluster-wide limits (:mod:`.limits`), a node whose removal would take the cluster's cores, memory or
   GPUs under their minimum, counting the nodes already found removable, is kept:
   ``MinimalResourceLimitExceeded``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.autoscaler.drain import (
    DrainOptions,
    UtilizationError,
    being_deleted,
    eligible,
    pods_to_move,
    utilization,
)
from scheduling_framework.autoscaler.groups import NodeGroup
from scheduling_framework.autoscaler.limits import (
    FLAGS,
    MINIMAL_RESOURCE_LIMIT_EXCEEDED,
    ResourceLimits,
    node_delta,
    scale_down_limits_left,
    try_decrement,
)
from scheduling_framework.autoscaler.model import Blocked, ScaleDownCandidate
from scheduling_framework.errors import SchedulingFrameworkError

if TYPE_CHECKING:
    from scheduling_framework.simulation.simulator import Simulator

#: Kinds whose objects stand for cluster-autoscaler's controller listers (see drain.py).
CONTROLLER_KINDS = ("ReplicationController", "ReplicaSet", "Job", "StatefulSet", "DaemonSet")
NOT_AUTOSCALED = "NotAutoscaled"
MIN_SIZE = "NodeGroupMinSizeReached"
NO_PLACE = "NoPlaceToMovePods"


def controllers_of(objects: Iterable[KubeObject]) -> list[KubeObject] | None:
    """The controller objects of a dump, or None when it has none at all (a ``kubectl get nodes,pods`` dump):
    then no controller is looked up, rather than every pod's found missing."""
    found = [o for o in objects if o.kind in CONTROLLER_KINDS]
    return found or None


def scale_down(sim: Simulator, groups: Sequence[NodeGroup], objects: Sequence[KubeObject],
               options: DrainOptions | None = None, *, now: datetime | None = None,
               limits: ResourceLimits | None = None) -> tuple[list[ScaleDownCandidate], list[Blocked], int]:
    """The removable nodes, the blocked ones and how many nodes were over the utilization threshold. The
    simulator is left as it was (every change is made on a fork, reverted at the end). ``limits``: the
    cluster-wide minimums the removals must keep (the nodes being deleted already do not count)."""
    opts = options or DrainOptions()
    at = now if now is not None else datetime.now(UTC)
    custom = limits is not None and limits.custom()
    left = scale_down_limits_left(limits, [ni.node for ni in sim.cluster.node_infos() if ni.node is not None
                                           and not being_deleted(ni.node, opts, at)]) if limits is not None else {}
    pdbs = [o for o in objects if o.kind == "PodDisruptionBudget"]
    controllers = controllers_of(objects)
    size = {g.name: 0 for g in groups}
    group_of: dict[str, NodeGroup] = {}
    for ni in sim.cluster.node_infos():
        if ni.node is None:
            continue
        g = next((g for g in groups if g.owns(ni.node)), None)
        if g is not None:
            group_of[ni.name] = g
            size[g.name] += 1
    candidates: list[ScaleDownCandidate] = []
    blocked: list[Blocked] = []
    busy = 0
    outer = sim.fork()
    try:
        for name in [ni.name for ni in sim.cluster.node_infos()]:
            ni = sim.cluster.get(name)
            node = ni.node
            if node is None:
                continue
            g = group_of.get(name)
            if g is None:
                blocked.append(Blocked(name, NOT_AUTOSCALED, "no node group owns it"))
                continue
            try:
                util = utilization(ni, opts, now)
            except UtilizationError:
                util = None
            ok, reason = eligible(node, util, opts, now)
            if not ok:
                if reason.value == "NotUnderutilized":
                    busy += 1
                else:
                    blocked.append(Blocked(name, reason.value, "", g.name))
                continue
            if size[g.name] <= g.min_size:
                blocked.append(Blocked(name, MIN_SIZE, f"node group {g.name} has {size[g.name]} node(s), "
                                                       f"minSize {g.min_size}", g.name))
                continue
            to_move, _ds, blocking = pods_to_move([pi.pod for pi in ni.pods], pdbs, opts, controllers=controllers,
                                                  now=now)
            if blocking is not None:
                blocked.append(Blocked(name, blocking.reason.value, f"{blocking.pod}: {blocking.detail}", g.name))
                continue
            step = sim.fork()  # the removal is kept only when the limits allow it too
            try:
                moves, failed = _move(sim, name, to_move)
            except BaseException:
                step.revert()
                raise
            exceeded = try_decrement(left, node_delta(node, custom)) if left and not failed else []
            if failed or exceeded:
                step.revert()
                blocked.append(Blocked(name, NO_PLACE, failed, g.name) if failed else
                               Blocked(name, MINIMAL_RESOURCE_LIMIT_EXCEEDED, _under_minimum(exceeded), g.name))
                continue
            step.commit()
            size[g.name] -= 1
            candidates.append(ScaleDownCandidate(name, g.name, util.utilization if util is not None else 0.0,
                                                 tuple(moves)))
    finally:
        outer.revert()
    return candidates, blocked, busy


def _under_minimum(resources: Sequence[str]) -> str:
    flags = [FLAGS.get(r, f"--gpu-total {r}") for r in resources]
    return f"removing it would take the cluster's {', '.join(resources)} under the minimum ({', '.join(flags)})"


def _move(sim: Simulator, node: str, pods: Sequence[Pod]) -> tuple[list[tuple[str, str]], str]:
    """Remove ``node`` and place its ``pods`` first-fit on the others, kept when every pod finds a node."""
    f = sim.fork()
    moves: list[tuple[str, str]] = []
    try:
        sim.remove_node(node)
        for bound in pods:
            pod = bound.with_node_name("")  # evicted: its replacement is pending
            try:
                dest = sim.find_node_for_pod(pod)
            except SchedulingFrameworkError as e:
                f.revert()
                return [], f"{pod.key}: {e}"
            if dest is None:
                f.revert()
                return [], f"{pod.key} fits on no other node"
            sim.add_pod(pod, dest)
            moves.append((pod.key, dest))
    except BaseException:
        f.revert()
        raise
    f.commit()
    return moves, ""


__all__ = ["CONTROLLER_KINDS", "controllers_of", "scale_down"]
