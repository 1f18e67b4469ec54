"""``schedule --report run.html``: one self-contained page (inline CSS and JavaScript, no network fetch).

The page shows per-node utilization before and after the run (cpu, memory, pods, extended resources), the
pod outcome table (sortable, filterable), a drill-down per pod (Filter verdict of every node, each plugin's
scores), the failure reasons across unschedulable pods, and preemption victims. The run's data is embedded
as one JSON document (``report_data``), which the script renders with ``textContent`` only (names from the
cluster file never become markup).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.node_info import NodeInfo, PodInfo


def _amounts(r: Any) -> dict[str, int]:
    out = {"cpu": int(r.milli_cpu), "memory": int(r.memory), "ephemeral-storage": int(r.ephemeral_storage)}
    out.update({k: int(v) for k, v in r.scalar_resources.items()})
    return out


def _node_usage(ni: NodeInfo) -> dict[str, int]:
    used = _amounts(ni.requested)
    used["pods"] = len(ni.pods)
    return used


def report_data(nodes: Sequence[Node], bound_before: Iterable[Pod], run: Any, results: Sequence[Any],
                stats: dict[str, Any], warnings: Sequence[str]) -> dict[str, Any]:
    """The report's data: ``run`` is the Scheduler after ``run()``; ``bound_before`` the pods running when
    the run started; ``results`` the PodResults to show (explanations where recorded)."""
    before: dict[str, NodeInfo] = {}
    for n in nodes:
        ni = NodeInfo()
        ni.set_node(n)
        before[n.name] = ni
    for p in bound_before:
        ni_b = before.get(p.spec.node_name)
        if ni_b is not None and p.status.phase not in ("Succeeded", "Failed"):
            ni_b.add_pod(PodInfo(p, run.cache.rules))  # resizes counted as the run counts them
    resources = ["cpu", "memory", "pods"]
    rows = []
    for n in nodes:
        alloc = _amounts(before[n.name].allocatable)
        alloc["pods"] = int(before[n.name].allocatable.allowed_pod_number)
        after_ni = run.cache.node_info(n.name)
        after = _node_usage(after_ni) if after_ni is not None else {}
        rows.append({"name": n.name, "allocatable": alloc, "before": _node_usage(before[n.name]), "after": after})
        for k, v in alloc.items():
            if k not in resources and k != "ephemeral-storage" and v > 0:
                resources.append(k)
    pods = []
    reasons: dict[str, dict[str, int]] = {}
    preemptions = []
    for r in results:
        d = r.to_dict(True)
        pods.append(d)
        if r.outcome in ("Unschedulable", "Error"):
            seen: set[str] = set()
            for st in (r.filter or {}).values():
                for reason in st.get("reasons", []) or []:
                    e = reasons.setdefault(reason, {"pods": 0, "nodes": 0})
                    e["nodes"] += 1
                    if reason not in seen:
                        seen.add(reason)
                        e["pods"] += 1
        if r.nominated_node or r.victims:
            preemptions.append({"pod": r.pod, "outcome": r.outcome, "nominatedNode": r.nominated_node,
                                "node": r.node, "victims": list(r.victims)})
    breakdown = [{"reason": k, **v} for k, v in sorted(reasons.items(), key=lambda kv: (-kv[1]["nodes"], kv[0]))]
    groups = run.pod_group_results() if hasattr(run, "pod_group_results") else []
    return {"stats": dict(stats), "warnings": list(warnings), "resources": resources, "nodes": rows, "pods": pods,
            "failureReasons": breakdown, "preemptions": preemptions, "podGroups": groups}


def render(data: dict[str, Any], title: str = "scheduling-framework run") -> str:
    """The page: the template (report.html beside this module) with ``data`` embedded (``</`` escaped so
    the JSON cannot end the script)."""
    template = resources.files("scheduling_framework.report").joinpath("report.html").read_text(encoding="utf-8")
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")
    return template.replace("%%TITLE%%", _escape(title)).replace("%%DATA%%", payload)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
