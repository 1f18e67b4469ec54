"""``autoscale``: cluster-autoscaler's scale-up and scale-down decisions for a cluster dump.

Scale-up, as cluster-autoscaler's scale-up orchestrator decides it:

1. the pending pods the current nodes can take are placed there first, first-fit (its filter-out-schedulable
   step), and kept there for what follows;
2. for each node group under its ``maxSize`` (and the cluster under ``--max-nodes-total``), the binpacking
   estimator says how many new nodes of the group's template the remaining pods need and which pods they take
   (:mod:`.estimator`; DaemonSet pods on new nodes counted);
3. the expanders choose among the groups that help (:mod:`.expander`);
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
from scheduling_framework.autoscaler.model import Plan
from scheduling_framework.autoscaler.scaledown import scale_down
from scheduling_framework.autoscaler.scaleup import scale_up
from scheduling_framework.ingest.model import Cluster

#: cluster-autoscaler behaviour this simulation does not reproduce, said with every plan.
NOTES = (
    "scale-down-unneeded-time and scale-down-delay-after-add are not simulated: a candidate is a node "
    "cluster-autoscaler would find unneeded in this loop, not one it removes now",
    "similar node groups are not balanced (--balance-similar-node-groups)",
    "scale-up timing, backoff and the cloud provider's limits and quotas are not simulated",
)


def autoscale(cluster: Cluster, groups: Sequence[NodeGroup], *, config: Any = None, seed: int | None = None,
              expanders: Sequence[str] = ("random",), priorities: Mapping[int, Sequence[str]] | None = None,
              max_nodes_total: int | None = None, options: DrainOptions | None = None, why: bool = False,
              scale_up_enabled: bool = True, scale_down_enabled: bool = True, now: datetime | None = None) -> Plan:
    """The plan for ``cluster``: scale-up options and the expander's choice, pods no group helps, scale-down
    candidates and blocked nodes (see the module docstring). ``expanders``: cluster-autoscaler's ``--expander``
    chain (``least-waste``, ``most-pods``, ``price``, ``priority``, ``random``)."""
    from scheduling_framework.simulation.simulator import Simulator

    sim = Simulator.from_cluster(cluster, config, seed=seed)
    up: dict[str, Any] = {}
    with sim.fork():  # the pending pods the current nodes take stay there for the scale-down, as in CA's loop
        if scale_up_enabled:
            up = scale_up(sim, cluster.pending_pods, groups, expanders=expanders, seed=seed, priorities=priorities,
                          max_nodes_total=max_nodes_total, why=why)
        candidates, blocked, _busy = scale_down(sim, groups, cluster.objects, options, now=now) \
            if scale_down_enabled else ([], [], 0)
    return Plan(schedulable=tuple(up.get("schedulable", ())), options=tuple(up.get("options", ())),
                chosen=up.get("chosen"), expander=tuple(expanders), unhelpable=tuple(up.get("unhelpable", ())),
                candidates=tuple(candidates), blocked=tuple(blocked), notes=NOTES, warnings=tuple(sim.warnings))


__all__ = ["NOTES", "autoscale"]
