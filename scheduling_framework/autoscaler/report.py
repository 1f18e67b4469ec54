"""``autoscale --report plan.html``: the plan as the HTML report shows it (report.html's autoscale section).

The page is the ``schedule --report`` page with an autoscaler section first: the scale-up options (the
chosen one marked), the pods no node group helps with each group's reason (and the remedies with ``--why``),
the scale-down candidates with where their pods go, and the blocked nodes with the rule that blocks each.
Its pod table holds the pending pods, each with what the plan does for it; its node table the nodes before
and after the pending pods the current nodes take, scale-down candidates and blocked nodes marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.autoscaler.model import Plan
from scheduling_framework.errors import InputError
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.state.node_info import NodeInfo, PodInfo


def report_data(cluster: Cluster, plan: Plan, *, notes: Sequence[str], warnings: Sequence[str],
                seconds: float) -> dict[str, Any]:
    """The page's data (report.html reads it): ``autoscale`` is the plan's JSON document as ``--output json``
    has it; ``pods`` the pending pods' outcomes (``Scheduled`` on an existing node, ``ScaleUp`` on the chosen
    group's new nodes, ``Pending`` when only a group not chosen takes it, ``Unschedulable`` when none does)."""
    from scheduling_framework.report.html import node_rows

    pending = cluster.pending_pods
    by_key: dict[str, Pod] = {p.key: p for p in pending}
    on_existing = dict(plan.schedulable)
    placed: dict[str, list[Pod]] = {}  # node -> the pending pods the current nodes take
    for key, node in plan.schedulable:
        pod = by_key.get(key)
        if pod is not None:
            placed.setdefault(node, []).append(pod)

    def after(before: NodeInfo) -> NodeInfo:
        pods = placed.get(before.name)
        if not pods:
            return before
        ni = before.clone(noted=False)  # a scratch copy: the report's own, kept out of the change journal
        for pod in pods:
            ni.add_pod(PodInfo(pod))
        return ni

    rows, resources = node_rows(cluster.nodes, cluster.bound_pods, after)
    candidates = {c.node: c for c in plan.candidates}
    blocked = {b.node: b for b in plan.blocked}
    for row in rows:
        if row["name"] in candidates:
            row["scaleDown"] = "candidate"
        elif row["name"] in blocked:
            row["scaleDown"] = "blocked: " + blocked[row["name"]].rule
    chosen = set(plan.chosen.pods) if plan.chosen is not None else set()
    offered: dict[str, list[str]] = {}
    for o in plan.options:
        for k in o.pods:
            offered.setdefault(k, []).append(o.node_group)
    unhelpable = {u.pod: u for u in plan.unhelpable}
    pods = []
    for p in pending:
        rec: dict[str, Any] = {"pod": p.key, "node": None}
        if p.key in on_existing:
            rec.update(outcome="Scheduled", node=on_existing[p.key],
                       message="fits on an existing node (cluster-autoscaler's filter-out-schedulable step)")
        elif p.key in chosen and plan.chosen is not None:
            rec.update(outcome="ScaleUp", node=f"new {plan.chosen.node_group} node",
                       message=f"the chosen scale-up: {plan.chosen.nodes} new node(s) of {plan.chosen.node_group}")
        elif p.key in offered:
            rec.update(outcome="Pending", message=f"node group(s) {', '.join(offered[p.key])} could take it; not "
                                                  "the expander's choice in this loop")
        elif p.key in unhelpable:
            u = unhelpable[p.key]
            rec.update(outcome="Unschedulable", message=u.reason, nodeGroups={g: r for g, r in u.groups})
            if u.remedies:
                rec["autoscaleRemedies"] = list(u.remedies)
        else:  # scale-up not simulated (--no-scale-up)
            rec.update(outcome="Pending", message="scale-up not simulated")
        for o in plan.options:
            if p.key in o.pods:
                rec.setdefault("nodeGroups", {})[o.node_group] = f"takes it ({o.nodes} new node(s))"
        pods.append(rec)
    doc = plan.to_dict()
    doc["notes"] = list(notes)
    stats = {"seconds": seconds, "pending": len(pending)}
    return {"stats": stats, "warnings": list(warnings), "resources": resources, "nodes": rows, "pods": pods,
            "explain": {}, "failureReasons": [], "preemptions": [], "podGroups": [], "autoscale": doc}


def write_report(path: str, data: dict[str, Any]) -> None:
    from scheduling_framework.report.html import render

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(render(data, title="scheduling-framework autoscale"))
    except OSError as e:
        raise InputError(path, f"cannot write report {path}: {e.strerror or e}") from None


__all__ = ["report_data", "write_report"]
