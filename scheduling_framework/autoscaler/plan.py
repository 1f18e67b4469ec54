"""``autoscale``: cluster-autoscaler's scale-up and scale-down decisions for a cluster dump.

Scale-up, as cluster-autoscaler's scale-up orchestrator decides it:

1. the pending pods the current nodes can take are placed there first, first-fit (its filter-out-schedulable
   step), and kept there for what follows;
2. for each node group under its ``maxSize`` (and the cluster under ``--max-nodes-total`` and the cluster-wide
   limits, :mod:`.limits`), the binpacking estimator says how many new nodes of the group's template the
   remaining pods need and which pods they take (:mod:`.estimator`; DaemonSet pods on new nodes counted);
3. the expanders choose among the groups that help (:mod:`.expander`); the choice is capped by the cluster-wide
   limits and, with balancing, split among the similar groups (:mod:`.nodegroupset`);
4. the pods no group takes are listed with each group's reason, and, with ``why``, the remedies
   ``schedule --why`` computes.

Scale-down: :mod:`.scaledown`. Both run on one Simulator built from the dump with the scheduler configuration
given; nothing in it changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from scheduling_framework.autoscaler.drain import DrainOptions
from scheduling_framework.autoscaler.groups import NodeGroup
from scheduling_framework.autoscaler.limits import ResourceLimits
from scheduling_framework.autoscaler.model import Plan
from scheduling_framework.autoscaler.nodegroupset import BalancingOptions
from scheduling_framework.autoscaler.scaledown import scale_down
from scheduling_framework.autoscaler.scaleup import scale_up, scale_up_to_node_group_min_size
from scheduling_framework.ingest.model import Cluster

#: cluster-autoscaler behaviour this simulation does not reproduce, said with every plan.
NOTES = (
    "scale-down-unneeded-time and scale-down-delay-after-add are not simulated: a candidate is a node "
    "cluster-autoscaler would find unneeded in this loop, not one it removes now",
    "similar node groups are not balanced (--balance-similar-node-groups)",
    "scale-up timing, backoff and the cloud provider's quotas are not simulated",
)
#: the note a plan made with --balance-similar-node-groups leaves out
BALANCING_NOTE = NOTES[1]


def autoscale(cluster: Cluster, groups: Sequence[NodeGroup], *, config: Any = None, seed: int | None = None,
              expanders: Sequence[str] = ("random",), priorities: Mapping[int, Sequence[str]] | None = None,
              max_nodes_total: int | None = None, options: DrainOptions | None = None, why: bool = False,
              scale_up_enabled: bool = True, scale_down_enabled: bool = True, now: datetime | None = None,
              cores_total: tuple[int, int] | None = None, memory_total: tuple[int, int] | None = None,
              gpu_total: Mapping[str, tuple[int, int]] | None = None, balance_similar_node_groups: bool = False,
              balancing_ignore_labels: Sequence[str] = (), balancing_labels: Sequence[str] = (),
              enforce_node_group_min_size: bool = False) -> Plan:
    """The plan for ``cluster``: scale-up options and the expander's choice, pods no group helps, scale-down
    candidates and blocked nodes (see the module docstring). ``expanders``: cluster-autoscaler's ``--expander``
    chain (``least-waste``, ``most-pods``, ``price``, ``priority``, ``random``).

    The cluster-wide limits, as cluster-autoscaler's flags give them (:mod:`.limits`): ``cores_total`` (min, max)
    in cores (default 0:320000), ``memory_total`` (min, max) in GiB (default 0:6400000), ``gpu_total`` {GPU type:
    (min, max)}; ValidationError names the argument at fault. ``balance_similar_node_groups`` splits the scale-up
    among similar groups (:mod:`.nodegroupset`), ``balancing_ignore_labels`` and ``balancing_labels`` being
    ``--balancing-ignore-label`` and ``--balancing-label``. ``enforce_node_group_min_size`` adds the groups under
    their minSize to the plan (``min_size``)."""
    from scheduling_framework.simulation.simulator import Simulator

    limits = ResourceLimits.from_totals(cores_total, memory_total, gpu_total)
    balancing = BalancingOptions(balancing_ignore_labels, balancing_labels) \
        if balance_similar_node_groups else None
    sim = Simulator.from_cluster(cluster, config, seed=seed)
    up: dict[str, Any] = {}
    min_size: list[Any] = []
    with sim.fork():  # the pending pods the current nodes take stay there for the scale-down, as in CA's loop
        if scale_up_enabled:
            up = scale_up(sim, cluster.pending_pods, groups, expanders=expanders, seed=seed, priorities=priorities,
                          max_nodes_total=max_nodes_total, why=why, limits=limits, balancing=balancing)
        candidates, blocked, _busy = scale_down(sim, groups, cluster.objects, options, now=now, limits=limits) \
            if scale_down_enabled else ([], [], 0)
        if scale_up_enabled and enforce_node_group_min_size:
            min_size = scale_up_to_node_group_min_size(sim, groups, limits=limits, max_nodes_total=max_nodes_total)
    notes = tuple(n for n in NOTES if balancing is None or n != BALANCING_NOTE)
    return Plan(schedulable=tuple(up.get("schedulable", ())), options=tuple(up.get("options", ())),
                chosen=up.get("chosen"), expander=tuple(expanders), unhelpable=tuple(up.get("unhelpable", ())),
                candidates=tuple(candidates), blocked=tuple(blocked), notes=notes, warnings=tuple(sim.warnings),
                min_size=tuple(min_size))


__all__ = ["BALANCING_NOTE", "NOTES", "autoscale"]
