"""The cluster a run leaves behind, as a ``kind: List`` that ``--cluster`` reads again (runs compose)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.dra.claims import RESOURCE_CLAIM
from scheduling_framework.ingest.cluster import Cluster

if TYPE_CHECKING:
    from scheduling_framework.scheduler import Scheduler


def resulting_cluster(cluster: Cluster, run: Scheduler) -> dict[str, Any]:
    """The input objects as the run left them, in input order: a ``kind: List`` of every object, node
    and pod, where each pod the run placed carries ``spec.nodeName``, each pod left pending carries the
    ``status.nominatedNodeName`` preemption gave it (or none), and pods evicted during the run (victims
    of preemption) are gone. Finished pods (Succeeded / Failed) are kept as they were.

    Feeding the result to another run schedules nothing twice: placed pods are running pods there.
    ``run`` is the Scheduler that ran (its cache and results are read).
    """
    cache = run.cache
    evicted = {v for r in run.results.values() for v in r.victims}
    items: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    store = getattr(run, "objects", None)
    for o in cluster.objects:
        seen.add((o.kind, o.namespace, o.name))
        if o.kind == RESOURCE_CLAIM and store is not None:
            # DRA: a claim as the run left it (allocation, reservedFor); gone when the controller deleted it
            cur = store.get(o.kind, o.namespace, o.name)
            if cur is not None:
                items.append(cur.to_dict())
            continue
        items.append(o.to_dict())
    for c in store.list(RESOURCE_CLAIM) if store is not None else ():
        # claims the run generated from templates for pods it placed (the pods name them in their status)
        owner = c.metadata.controller_ref()
        if (c.kind, c.namespace, c.name) not in seen and owner is not None:
            placed = cache.get_pod(owner.uid)
            if placed is not None and placed.spec.node_name:
                items.append(c.to_dict())
    items += [n.to_dict() for n in cluster.nodes]
    for p in cluster.pods:
        out = _pod_after(p, cache.get_pod(p.uid), run.results.get(p.key), p.key in evicted)
        if out is not None and store is not None and out.spec.node_name and p.uid in store.pod_status:
            # status fields the run's plugins wrote (DynamicResources: extendedResourceClaimStatus)
            out = out.with_status_fields(store.pod_status[p.uid])
        if out is not None:
            items.append(out.to_dict())
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _pod_after(pod: Pod, cached: Pod | None, result: Any, evicted: bool) -> Pod | None:
    if pod.status.phase in ("Succeeded", "Failed"):
        return pod  # ignored by the run, kept in the file
    if evicted or (result is not None and result.outcome == "Preempted"):
        return None
    if cached is not None and cached.spec.node_name:
        placed = pod.with_node_name(cached.spec.node_name)
        if cached.status.resource_claim_statuses != placed.status.resource_claim_statuses:
            # the claims generated for it from templates
            placed = placed.with_resource_claim_statuses(cached.status.resource_claim_statuses)
        return placed.with_nominated_node_name("") if placed.status.nominated_node_name else placed
    if pod.spec.node_name or result is None:
        return pod  # running (or ignored, e.g. bound to a node the file lacks): as it was
    nominated = result.nominated_node or ""
    if nominated != pod.status.nominated_node_name:
        return pod.with_nominated_node_name(nominated)
    return pod
