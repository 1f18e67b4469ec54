"""``schedule --report run.html``: one self-contained page (inline CSS and JavaScript, no network fetch).

The page shows per-node utilization before and after the run (cpu, memory, pods, extended resources), the
pod outcome table (sortable, filterable), a drill-down per pod (with ``--why``, what would make a pending pod
fit; the best-scored nodes with each plugin's score, the other nodes' Filter verdicts grouped by reason), the
failure reasons across unschedulable pods, and preemption victims. The run's data is embedded as one JSON
document (``report_data``), which the script renders with ``textContent`` only (names from the cluster file
never become markup).
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.ingest.overcommit import overcommitted
from scheduling_framework.state.node_info import NodeInfo, PodInfo

#: Nodes shown beside an unschedulable pod's requests: the ones closest to fitting it.
CLOSEST_NODES = 5
#: Unschedulable pods that get that comparison (each costs one pass over the nodes).
CLOSEST_FOR_PODS = 2000
# The per-pod explanation (every node's Filter verdict and scores) is most of a big report: it is embedded
# gzip-compressed (base64), one blob per pod, and decompressed by the page when the pod is opened.
_EXPLAIN_KEYS = ("filter", "scores", "totalScores")


def _amounts(r: Any) -> dict[str, int]:
    out = {"cpu": int(r.milli_cpu), "memory": int(r.memory), "ephemeral-storage": int(r.ephemeral_storage)}
    out.update({k: int(v) for k, v in r.scalar_resources.items()})
    return out


def _node_usage(ni: NodeInfo) -> dict[str, int]:
    used = _amounts(ni.requested)
    used["pods"] = len(ni.pods)
    return used


def node_rows(nodes: Sequence[Node], bound_before: Iterable[Pod], after: Callable[[NodeInfo], NodeInfo | None],
              rules: Any = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The report's node table: per node its allocatable, its requests before (the pods bound when the run
    started, resizes counted by ``rules``) and after (``after(before)``: the node's state once the run is over,
    given its state before),
    and the resources over-committed before; with the resources to show (cpu, memory, pods, then each extended
    resource some node has)."""
    before: dict[str, NodeInfo] = {}
    for n in nodes:
        ni = NodeInfo()
        ni.set_node(n)
        before[n.name] = ni
    for p in bound_before:
        ni_b = before.get(p.spec.node_name)
        if ni_b is not None and p.status.phase not in ("Succeeded", "Failed"):
            ni_b.add_pod(PodInfo(p, rules) if rules is not None else PodInfo(p))
    resources = ["cpu", "memory", "pods"]
    rows = []
    for n in nodes:
        alloc = _amounts(before[n.name].allocatable)
        alloc["pods"] = int(before[n.name].allocatable.allowed_pod_number)
        after_ni = after(before[n.name])
        row: dict[str, Any] = {"name": n.name, "allocatable": alloc, "before": _node_usage(before[n.name]),
                               "after": _node_usage(after_ni) if after_ni is not None else {}}
        over = overcommitted(before[n.name])
        if over:
            row["overcommitted"] = [r for r, _, _ in over]
        rows.append(row)
        for k, v in alloc.items():
            if k not in resources and k != "ephemeral-storage" and v > 0:
                resources.append(k)
    return rows, resources


def report_data(nodes: Sequence[Node], bound_before: Iterable[Pod], run: Any, results: Sequence[Any],
                stats: dict[str, Any], warnings: Sequence[str], pending: Iterable[Pod] = (),
                remedies: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's data: ``run`` is the Scheduler after ``run()``; ``bound_before`` the pods running when
    the run started; ``results`` the PodResults to show (explanations where recorded, under ``explain``
    compressed: see :func:`explain_blob`); ``pending`` the pending pods, whose requests an unschedulable
    pod's row compares with the free room of the nodes closest to fitting it; ``remedies`` (``--why``: pod key
    -> PodRemedies) adds ``facts``, ``remedies`` and ``why`` to a pod's record, as ``--output json`` has them."""
    rows, resources = node_rows(nodes, bound_before, lambda ni: run.cache.node_info(ni.name), run.cache.rules)
    pods = []
    explain: dict[str, str] = {}
    reasons: dict[str, dict[str, int]] = {}
    preemptions = []
    by_key = {p.key: p for p in pending}
    free = _free_after(nodes, run)
    compared = 0
    for r in results:
        d = r.to_dict(True)
        ex = {k: d.pop(k) for k in _EXPLAIN_KEYS}
        if any(ex.values()):
            explain[r.pod] = explain_blob(ex)
        pod = by_key.get(r.pod)
        if r.outcome in ("Unschedulable", "Error") and pod is not None and compared < CLOSEST_FOR_PODS:
            compared += 1
            d["requests"], d["closest"] = _closest_nodes(pod, free)
        if remedies and r.pod in remedies:
            d.update(remedies[r.pod].record())
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
            "explain": explain, "failureReasons": breakdown, "preemptions": preemptions,
            "podGroups": groups}


def explain_blob(explain: dict[str, Any]) -> str:
    """One pod's explanation as the page embeds it: compact JSON, gzip, base64 (``DecompressionStream``
    reads it back). A 500-node explanation shrinks about twentyfold."""
    raw = json.dumps(explain, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def read_explain_blob(blob: str) -> dict[str, Any]:
    """The explanation :func:`explain_blob` packed (for tests and tools reading a report)."""
    value: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(blob)))
    return value


def _free_after(nodes: Sequence[Node], run: Any) -> list[tuple[str, dict[str, int], dict[str, int]]]:
    """Per node after the run: name, allocatable and free room per resource (``pods``: how many more pods)."""
    out = []
    for n in nodes:
        ni = run.cache.node_info(n.name)
        if ni is None:
            continue
        alloc, used = _amounts(ni.allocatable), _amounts(ni.requested)
        alloc["pods"] = ni.allocatable.allowed_pod_number
        room = {k: v - used.get(k, 0) for k, v in alloc.items()}
        room["pods"] = alloc["pods"] - len(ni.pods)
        out.append((n.name, alloc, room))
    return out


_Free = list[tuple[str, dict[str, int], dict[str, int]]]


def _closest_nodes(pod: Pod, free: _Free) -> tuple[dict[str, int], list[Any]]:
    """The pod's requests and the CLOSEST_NODES nodes nearest to fitting them after the run: each with its
    free room per requested resource, ranked by the summed shortfall as a fraction of allocatable."""
    want = {k: v for k, v in _amounts(PodInfo(pod).requests).items() if v > 0}
    want["pods"] = 1
    items = list(want.items())
    ranked: list[tuple[float, str, dict[str, int]]] = []
    for name, alloc, room in free:
        short = 0.0
        for k, v in items:
            r = room.get(k, 0)
            if r < v:
                cap = alloc.get(k, 0)
                short += (v - r) / cap if cap > 0 else 1.0
        ranked.append((short, name, room))
    ranked.sort(key=lambda x: (x[0], x[1]))
    return want, [{"node": name, "free": {k: room.get(k, 0) for k in want}} for _, name, room in ranked[:CLOSEST_NODES]]


def render(data: dict[str, Any], title: str = "scheduling-framework run") -> str:
    """The page: the template (report.html beside this module) with ``data`` embedded (``</`` escaped so
    the JSON cannot end the script)."""
    template = resources.files("scheduling_framework.report").joinpath("report.html").read_text(encoding="utf-8")
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")
    return template.replace("%%TITLE%%", _escape(title)).replace("%%DATA%%", payload)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
