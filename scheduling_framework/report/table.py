"""Terminal tables that fit 120 columns: the outcome table, per-pod explanations, capacity answers.

An explanation is one row per node: the weighted score each plugin gave (abbreviated plugin names, with
a legend) and the total, for the nodes that passed Filter, best first; then the nodes Filter rejected, each
with its verdict in upstream's words -- the plugin that rejected it, or no plugin at all for statuses a
PreFilter gave every node (e.g. "node(s) didn't satisfy plugin(s) [NodeAffinity]"). ``explain_nodes``
keeps the N best-scored nodes in full and folds the rest into one line per failure reason.
"""

from __future__ import annotations

import io
import re
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

WIDTH = 120


# --- generic -----------------------------------------------------------------------------------------


def table(rows: Sequence[Sequence[str]], out: TextIO, indent: str = "", width: int | None = WIDTH,
          right: Iterable[int] = ()) -> None:
    """Aligned columns; the last column wraps so that no line is wider than ``width`` (when the other
    columns leave it at least 30 characters; None: never wrap). Columns in ``right`` are right-aligned."""
    if not rows:
        return
    ncols = max(len(r) for r in rows)
    rows = [tuple(r) + ("",) * (ncols - len(r)) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(ncols)]
    right_cols = set(right)
    lead = len(indent) + sum(widths[:-1]) + 2 * (ncols - 1)
    room = max(width - lead, 30) if width is not None else sys.maxsize
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right_cols else c.ljust(widths[i]) for i, c in enumerate(r[:-1])]
        last = r[-1].rjust(widths[-1]) if ncols - 1 in right_cols else r[-1]
        lines = textwrap.wrap(last, room, break_on_hyphens=False) or [""] if len(last) > room else [last]
        out.write((indent + "  ".join([*cells, lines[0]])).rstrip() + "\n")
        for cont in lines[1:]:
            out.write(" " * lead + cont + "\n")


def wrap(text: str, indent: str = "", width: int = WIDTH) -> str:
    return "\n".join(textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                                   break_on_hyphens=False))


# --- the outcome table -------------------------------------------------------------------------------


def outcome_rows(results: Sequence[Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("POD", "OUTCOME", "NODE", "DETAIL")]
    for r in results:
        detail = r.message
        if r.nominated_node:
            victims = ", ".join(r.victims) if r.victims else "none"
            detail = (detail + " " if detail and r.outcome != "Scheduled" else "") + \
                f"[nominated {r.nominated_node}; victims: {victims}]"
        rows.append((r.pod, r.outcome, r.node or "-", detail))
    return rows


def pod_group_rows(groups: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("POD GROUP", "POLICY", "OUTCOME", "SCHEDULED", "DETAIL")]
    for g in groups:
        policy = f"gang (minCount {g['minCount']})" if g["policy"] == "gang" else str(g["policy"] or "-")
        rows.append((str(g["podGroup"]), policy, str(g["outcome"]), f"{g['scheduled']}/{len(g['pods'])}",
                     str(g["message"])))
    return rows


def print_results(results: Sequence[Any], stats: Mapping[str, Any], out: TextIO, *, explain: bool = False,
                  explain_nodes: int | None = None, width: int = WIDTH,
                  weights: Mapping[str, Mapping[str, int]] | None = None,
                  groups: Sequence[Mapping[str, Any]] = ()) -> None:
    """The outcome table, then the pod groups (Workload API), then (``explain``) each pod's explanation, then
    the summary line. ``weights``: scheduler name -> plugin -> score weight, for the explanations' legends."""
    table(outcome_rows(results), out, width=width)
    if groups:
        out.write("\n")
        table(pod_group_rows(groups), out, width=width)
    if explain:
        for r in results:
            out.write("\n")
            for line in explain_lines(r, explain_nodes, width, (weights or {}).get(r.scheduler_name)):
                out.write(line + "\n")
    skipped = f", {stats['skipped']} skipped" if stats.get("skipped") else ""
    preempted = f", {stats['preempted']} preempted" if stats.get("preempted") else ""
    out.write(f"\n{stats['scheduled']} scheduled, {stats['unschedulable']} unschedulable, "
              f"{stats['errors']} errors{skipped}{preempted} in {stats['seconds']:.3f}s\n")


# --- explanations ------------------------------------------------------------------------------------


def abbreviate(plugins: Sequence[str]) -> dict[str, str]:
    """Short, unique column names: the capitals of a CamelCase name (NodeResourcesFit -> NRF), else its
    first four letters; a digit is appended on a clash."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in plugins:
        caps = "".join(re.findall(r"[A-Z]", name))
        base = caps if len(caps) >= 2 else name[:4]
        abbr, i = base, 2
        while abbr in used:
            abbr, i = f"{base}{i}", i + 1
        used.add(abbr)
        out[name] = abbr
    return out


def verdict_text(st: Mapping[str, Any], r: Any = None) -> str:
    """A Filter verdict as one line: code, rejecting plugin (when one owns it) and reasons (for pod
    result ``r``, DynamicResources' "cannot allocate all claims" names the claims)."""
    code = str(st.get("code", ""))
    reasons = "; ".join(str(x) for x in st.get("reasons", []) or []) + (claims_note(r, st) if r is not None else "")
    plugin = st.get("plugin")
    if plugin:
        return f"{code} {plugin}: {reasons}" if reasons else f"{code} {plugin}"
    return f"{code}: {reasons}" if reasons else code


def explain_lines(r: Any, explain_nodes: int | None = None, width: int = WIDTH,
                  weights: Mapping[str, int] | None = None) -> list[str]:
    """The explanation of one pod's last cycle (see the module docstring). ``weights`` (plugin -> score
    weight, from the pod's profile) fills the legend."""
    head = f"{r.pod}: {r.outcome}{' on ' + r.node if r.node else ''}"
    filt: Mapping[str, Mapping[str, Any]] = r.filter or {}
    scores: Mapping[str, Mapping[str, Mapping[str, int]]] = r.scores or {}
    totals: Mapping[str, int] = r.total_scores or {}
    if not filt and not scores:
        return [head, "  (no scheduling cycle to explain)" if not r.message else wrap(r.message, "  ", width)]
    plugins: list[str] = []
    for per in scores.values():
        for p in per:
            if p not in plugins:
                plugins.append(p)
    abbr = abbreviate(plugins)
    passed = [n for n, st in filt.items() if st.get("code") == "Success"]
    passed += [n for n in scores if n not in filt]
    rejected = [(n, st) for n, st in filt.items() if st.get("code") != "Success"]
    # best first; nodes that passed but were not scored (a lone feasible node) after the scored ones
    order = {n: i for i, n in enumerate(passed)}
    passed.sort(key=lambda n: (n not in totals, -totals.get(n, 0), order[n]))
    shown = passed if explain_nodes is None else passed[:explain_nodes]
    lines = [head]
    scored = [n for n in shown if n in totals]
    if scored:
        rows: list[tuple[str, ...]] = [("NODE", "TOTAL", *(abbr[p] for p in plugins))]
        for n in scored:
            per = scores.get(n, {})
            rows.append((n, str(totals[n]), *(str(per[p]["weighted"]) if p in per else "" for p in plugins)))
        lines += _table_lines(rows, width, right=range(1, len(rows[0])))
    verdicts = [(n, "Success (the only node that passed: not scored, as upstream)") for n in shown
                if n not in totals]
    if explain_nodes is None:
        verdicts += [(n, verdict_text(st, r)) for n, st in rejected]
    if verdicts:
        lines += _table_lines([("NODE", "FILTER"), *verdicts], width)
    if explain_nodes is not None:
        rest = passed[len(shown):]
        if rest:
            rest_totals = [totals[n] for n in rest if n in totals]
            span = f" (total scores {min(rest_totals)}-{max(rest_totals)})" if rest_totals else ""
            lines.append(wrap(f"{len(rest)} more node(s) passed Filter{span}", "  ", width))
        groups: dict[str, list[str]] = {}
        for n, st in rejected:
            groups.setdefault(verdict_text(st, r), []).append(n)
        for text, nodes in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            sample = ", ".join(nodes[:3]) + (", ..." if len(nodes) > 3 else "")
            lines.append(wrap(f"{len(nodes)} node(s): {text} ({sample})", "  ", width))
    if plugins:
        legend = ", ".join(f"{abbr[p]} {p}" + _weight(scores, p, weights) for p in plugins)
        lines.append(wrap(f"scores are normalized x weight: {legend}", "  ", width))
    lines += claims_lines(r)
    if r.message and r.outcome != "Scheduled":
        lines.append(wrap(r.message, "  ", width))
    return lines


def claims_note(r: Any, st: Mapping[str, Any]) -> str:
    """Which of the pod's claims DynamicResources could not allocate on the node (the ones it had to allocate)."""
    if st.get("plugin") != "DynamicResources" or "cannot allocate all claims" not in st.get("reasons", []):
        return ""
    names = getattr(r, "unallocated_claims", None) or []
    return f" [claim{'s' if len(names) > 1 else ''}: {', '.join(names)}]" if names else ""


def claims_lines(r: Any) -> list[str]:
    """The devices each of the pod's ResourceClaims got (DRA), under the pod's explanation."""
    lines = []
    for c in getattr(r, "claims", None) or []:
        name = c.get("name") or f"<{c.get('podClaimName')}: not created>"
        alloc = c.get("allocation")
        if alloc is None:
            lines.append(f"  claim {name}: not allocated")
            continue
        devices = ", ".join(f"{d['request']}={d['driver']}/{d['pool']}/{d['device']}" for d in alloc["devices"])
        lines.append(f"  claim {name}: {devices or 'no devices'}")
    return lines


def _table_lines(rows: Sequence[Sequence[str]], width: int, right: Iterable[int] = ()) -> list[str]:
    buf = io.StringIO()
    table(rows, buf, indent="  ", width=width, right=right)
    return buf.getvalue().splitlines()


def _weight(scores: Mapping[str, Mapping[str, Mapping[str, int]]], plugin: str,
            weights: Mapping[str, int] | None) -> str:
    if weights and plugin in weights:
        return f" x{weights[plugin]}"
    for per in scores.values():
        sc = per.get(plugin)
        if sc and sc.get("normalized"):
            return f" x{sc['weighted'] // sc['normalized']}"
    return ""


# --- capacity ----------------------------------------------------------------------------------------


def print_capacity(result: Any, node_names: Sequence[str], out: TextIO, width: int = WIDTH) -> None:
    """How many copies fit, per node (copies and what then limits the node), and why the loop stopped."""
    what = {"Unschedulable": "the next copy does not fit", "LimitReached": "--max reached",
            "Error": "a plugin failed"}.get(result.stop_reason, result.stop_reason)
    size = getattr(result, "pods_per_copy", 1)
    gang = f" of its gang ({size} pods each)" if size != 1 else ""
    out.write(f"{result.pod}: {result.count} more cop{'y' if result.count == 1 else 'ies'}{gang} fit ({what})\n")
    rows: list[tuple[str, ...]] = [("NODE", "COPIES", "LIMITED BY")]
    for n in node_names:
        copies = result.per_node.get(n, 0)
        reason = result.reasons.get(n, "")
        if copies or reason:
            rows.append((n, str(copies), reason))
    if len(rows) > 1:
        table(rows, out, width=width, right=(1,))
    if result.message:
        out.write(wrap(result.message, "", width) + "\n")
