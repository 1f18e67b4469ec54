"""Why a pod lands differently on the two sides, from the two cycles that decided it (recorder.CycleRecord).

Two things move a choice: a Filter verdict (a node one side accepts, the other rejects) and the scores (both
sides accept both nodes, but rank them the other way round). For the nodes concerned -- where each side put
the pod -- :func:`explain` lists the verdicts that differ, and, when both sides scored both nodes, the score
columns: each plugin's weight and normalized score on the two nodes on each side, and its *shift*, how many
weighted points it moved toward B's node (B's margin of B's node over A's node minus A's margin). The plugins
responsible are the rejecting plugins of the verdicts that differ, else the plugins whose shift is positive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduling_framework.comparison.recorder import NOT_EVALUATED, CycleRecord

_SUCCESS = "Success"
# Verdicts that are no evidence of a different decision: a pass, or a node the cycle did not reach.
_OPEN = (_SUCCESS, NOT_EVALUATED)


def verdict_of(rec: CycleRecord | None, node: str) -> dict[str, Any] | None:
    return None if rec is None else rec.verdict(node)


def _same_verdict(x: Mapping[str, Any] | None, y: Mapping[str, Any] | None) -> bool:
    if x is None or y is None:
        return True
    return (x.get("code"), x.get("plugin", ""), list(x.get("reasons") or [])) == (
        y.get("code"), y.get("plugin", ""), list(y.get("reasons") or []))


def verdicts_agree(ra: CycleRecord | None, rb: CycleRecord | None, nodes: Sequence[str]) -> bool:
    """No node of ``nodes`` is rejected on one side only (a node a cycle did not reach counts as open)."""
    for n in nodes:
        va, vb = verdict_of(ra, n), verdict_of(rb, n)
        if va is None or vb is None:
            continue
        if (va.get("code") in _OPEN) != (vb.get("code") in _OPEN):
            return False
    return True


def _rejecting_plugins(v: Mapping[str, Any], rec: CycleRecord | None) -> list[str]:
    """The plugin a rejection names; for a PreFilter status without one, the plugins the cycle noted."""
    plugin = v.get("plugin")
    if plugin:
        return [str(plugin)]
    if v.get("code") in _OPEN or rec is None:
        return []
    return sorted(rec.unschedulable_plugins)


def _column_map(rec: CycleRecord) -> dict[str, tuple[Sequence[int], int]]:
    return {name: (vals, weight) for name, vals, weight in rec.columns}


def score_columns(ra: CycleRecord, rb: CycleRecord, node_a: str, node_b: str) -> list[dict[str, Any]] | None:
    """Each score plugin's weight and normalized scores on the two nodes on each side, and its shift toward
    ``node_b``; None unless both sides scored both nodes. Plugins whose shift is 0 are left out; the largest
    shifts come first."""
    ia_a, ia_b, ib_a, ib_b = ra.scored(node_a), ra.scored(node_b), rb.scored(node_a), rb.scored(node_b)
    if ia_a is None or ia_b is None or ib_a is None or ib_b is None:
        return None
    ca, cb = _column_map(ra), _column_map(rb)
    plugins = list(ca) + [p for p in cb if p not in ca]
    rows = []
    for p in plugins:
        side: dict[str, Any] = {}
        margins = []
        for label, cols, i_a, i_b in (("a", ca, ia_a, ia_b), ("b", cb, ib_a, ib_b)):
            if p in cols:
                vals, weight = cols[p]
                side[label] = {"weight": weight, "normalized": {node_a: vals[i_a], node_b: vals[i_b]}}
                margins.append(weight * (vals[i_b] - vals[i_a]))
            else:
                side[label] = None  # not a score plugin of this side
                margins.append(0)
        shift = margins[1] - margins[0]
        if shift:
            rows.append({"plugin": p, "a": side["a"], "b": side["b"], "shift": shift})
    rows.sort(key=lambda r: -r["shift"])
    return rows


def _verdict_text(node: str, side: str, v: Mapping[str, Any]) -> str:
    code = v.get("code")
    if code == NOT_EVALUATED:
        return (f"{node} was not evaluated on {side} (its cycle had found the feasible nodes it needed: "
                "percentageOfNodesToScore)")
    reasons = "; ".join(str(r) for r in v.get("reasons") or [])
    who = f"by {v['plugin']}" if v.get("plugin") else f"({code})"
    return f"{node} rejected on {side} {who}" + (f": {reasons}" if reasons else "")


def explain(a_node: str | None, b_node: str | None, ra: CycleRecord | None, rb: CycleRecord | None,
            *, tie: bool = False, devices: tuple[Sequence[str], Sequence[str]] | None = None,
            errors: tuple[str, str] = ("", "")) -> dict[str, Any]:
    """The ``why`` of one pod: ``text`` (one line), ``plugins`` (responsible), ``verdicts`` (node, a, b for each
    node concerned whose verdict differs), ``scores`` (see :func:`score_columns`) and ``totals`` (each side's
    total on the nodes concerned), ``devices`` when the claims got other devices."""
    nodes = [n for n in dict.fromkeys((a_node, b_node)) if n is not None]
    out: dict[str, Any] = {"text": "", "plugins": [], "verdicts": [], "scores": [], "totals": {}}
    texts: list[str] = []
    plugins: list[str] = []
    for n in nodes:
        va, vb = verdict_of(ra, n), verdict_of(rb, n)
        if va is None or vb is None or _same_verdict(va, vb):
            continue
        out["verdicts"].append({"node": n, "a": va, "b": vb})
        for label, v, rec in (("A", va, ra), ("B", vb, rb)):
            if v.get("code") != _SUCCESS:
                texts.append(_verdict_text(n, label, v))
                plugins += _rejecting_plugins(v, rec)
    for label, rec in (("a", ra), ("b", rb)):
        if rec is not None and rec.totals:
            totals = {}
            for n in nodes:
                i = rec.scored(n)
                if i is not None:
                    totals[n] = rec.totals[i]
            out["totals"][label] = totals
    if a_node is not None and b_node is not None and a_node != b_node and ra is not None and rb is not None:
        rows = score_columns(ra, rb, a_node, b_node)
        if rows is not None:
            out["scores"] = rows
            moved = [r for r in rows if r["shift"] > 0]
            if not tie and not out["verdicts"] and moved:
                plugins += [r["plugin"] for r in moved]
                parts = [f"{r['plugin']} +{r['shift']} (normalized {a_node}/{b_node}: A "
                         f"{_pair(r['a'], a_node, b_node)}, B {_pair(r['b'], a_node, b_node)})" for r in moved[:3]]
                texts.append(f"scores moved toward {b_node}: " + ", ".join(parts))
        elif not out["verdicts"] and not tie:
            texts.append(_unscored_text(a_node, b_node, ra, rb))
    if devices is not None and devices[0] != devices[1]:
        out["devices"] = {"a": list(devices[0]), "b": list(devices[1])}
        if not nodes or a_node == b_node:
            plugins.append("DynamicResources")
            texts.append("the claims got other devices: A " + (", ".join(devices[0]) or "none") + "; B " +
                         (", ".join(devices[1]) or "none"))
    for label, msg in zip(("A", "B"), errors, strict=True):
        if msg:
            texts.append(f"{label}: {msg}")
    if tie:
        texts.insert(0, _tie_text(a_node, b_node, ra, rb))
        plugins = []
    out["plugins"] = list(dict.fromkeys(plugins))
    out["text"] = "; ".join(texts)
    return out


def _pair(side: Mapping[str, Any] | None, a_node: str, b_node: str) -> str:
    """``93/82``: a score column's normalized scores on A's node and B's node (``-``: not a score plugin there)."""
    if side is None:
        return "-"
    return f"{side['normalized'][a_node]}/{side['normalized'][b_node]}"


def _unscored_text(a_node: str, b_node: str, ra: CycleRecord, rb: CycleRecord) -> str:
    for label, rec, n in (("A", ra, b_node), ("B", rb, a_node)):
        if rec.scored(n) is None:
            if not rec.totals:
                return f"{label} had a single feasible node, chosen without scoring"
            return f"{n} passed Filter on {label} but was not among the nodes {label} scored"
    return "the nodes were scored on both sides"


def _tie_text(a_node: str | None, b_node: str | None, ra: CycleRecord | None, rb: CycleRecord | None) -> str:
    if rb is not None and rb.drawn is not None:
        return (f"tie: {a_node}, A's node, was among B's equally top-scored nodes ({', '.join(rb.tied)}); B took it "
                f"where its own draw picked {rb.drawn}")
    if ra is not None and b_node in ra.tied:
        return f"tie: {b_node} was among A's equally top-scored nodes ({', '.join(ra.tied)})"
    if rb is not None and a_node in rb.tied:
        return f"tie: {a_node} was among B's equally top-scored nodes ({', '.join(rb.tied)})"
    both = sorted(set(ra.tied if ra else ()) & set(rb.tied if rb else ()))
    return f"tie: both sides had {', '.join(both)} among their equally top-scored nodes"


__all__ = ["explain", "score_columns", "verdict_of", "verdicts_agree"]
