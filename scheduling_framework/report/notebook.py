"""Results in notebooks and data tools: HTML for Jupyter, records, and pandas DataFrames.

``Scheduler.run()`` returns :class:`RunResults` (a list of PodResult) and ``Simulator.schedule_pods`` a
ScheduleOutcome; both render as an HTML table in Jupyter (``_repr_html_``) and convert to records (one dict
per pod; one per node verdict of the pods whose cycles were explained) and, when pandas is installed, to
DataFrames. pandas is optional: nothing here imports it until a DataFrame is asked for.
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Iterable, Sequence
from typing import Any

from scheduling_framework.errors import SchedulingFrameworkError

#: Rows shown by ``_repr_html_`` (the records hold them all).
HTML_ROWS = 200

_COLOURS = {"Scheduled": "#1a7f37", "Unschedulable": "#cf222e", "Error": "#cf222e", "Skipped": "#9a6700",
            "Preempted": "#9a6700"}
_POD_COLUMNS = ("pod", "namespace", "name", "outcome", "node", "nominatedNode", "victims", "message")
_VERDICT_COLUMNS = ("pod", "node", "code", "plugin", "reasons", "totalScore")


class PandasMissingError(SchedulingFrameworkError, ImportError):
    """A DataFrame was asked for without pandas installed."""


def _split(key: str) -> tuple[str, str]:
    ns, _, name = key.rpartition("/")
    return ns, name


def pod_record(r: Any) -> dict[str, Any]:
    """One pod's row: a PodResult (Scheduler) or a Placement (Simulator)."""
    ns, name = _split(r.pod)
    if hasattr(r, "outcome"):  # PodResult
        return {"pod": r.pod, "namespace": ns, "name": name, "outcome": r.outcome, "node": r.node,
                "nominatedNode": r.nominated_node, "victims": list(r.victims), "message": r.message}
    outcome = "Scheduled" if r.node is not None else "Skipped" if r.skipped else "Unschedulable"
    return {"pod": r.pod, "namespace": ns, "name": name, "outcome": outcome, "node": r.node,
            "nominatedNode": None, "victims": [], "message": r.message}


def verdict_records(r: Any) -> list[dict[str, Any]]:
    """One row per node the pod's cycle judged: Filter code, plugin and reasons, weighted total score.
    PodResults have them when explained (``Scheduler(explain=True)``); Placements after a failed fit (the
    rejected nodes) and for scored nodes (their totals)."""
    rows: list[dict[str, Any]] = []
    if hasattr(r, "outcome"):
        totals = r.total_scores or {}
        for node, st in (r.filter or {}).items():
            rows.append({"pod": r.pod, "node": node, "code": st.get("code", "Success"), "plugin": st.get("plugin", ""),
                         "reasons": list(st.get("reasons", []) or []), "totalScore": totals.get(node)})
        for node, total in totals.items():
            if node not in (r.filter or {}):
                rows.append({"pod": r.pod, "node": node, "code": "Success", "plugin": "", "reasons": [],
                             "totalScore": total})
        return rows
    seen: set[str] = set()
    d = r.diagnosis
    if d is not None:
        for node, st in d.node_to_status.items():
            seen.add(node)
            rows.append({"pod": r.pod, "node": node, "code": str(st.code), "plugin": st.plugin,
                         "reasons": list(st.reasons), "totalScore": None})
    for node, total in r.total_scores.items():
        if node not in seen:
            rows.append({"pod": r.pod, "node": node, "code": "Success", "plugin": "", "reasons": [],
                         "totalScore": total})
    return rows


def to_dataframe(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> Any:
    try:
        pd = importlib.import_module("pandas")
    except ImportError:
        raise PandasMissingError("a DataFrame needs pandas, which is not installed (pip install pandas); "
                                 "to_records() gives the same rows as dicts") from None
    return pd.DataFrame.from_records(list(records), columns=list(columns))


def results_html(records: Sequence[dict[str, Any]], title: str) -> str:
    """A compact HTML table for Jupyter: counts per outcome, then the pods (not placed first)."""
    counts: dict[str, int] = {}
    for rec in records:
        counts[rec["outcome"]] = counts.get(rec["outcome"], 0) + 1
    rank = {"Unschedulable": 0, "Error": 1, "Preempted": 2, "Skipped": 3, "Scheduled": 4}
    ordered = sorted(records, key=lambda rec: rank.get(rec["outcome"], 5))
    e = html.escape
    summary = ", ".join(f"{n} {e(o)}" for o, n in sorted(counts.items(), key=lambda kv: rank.get(kv[0], 5)))
    rows = []
    for rec in ordered[:HTML_ROWS]:
        colour = _COLOURS.get(rec["outcome"], "inherit")
        victims = f" (victims: {e(', '.join(rec['victims']))})" if rec["victims"] else ""
        rows.append(f"<tr><td>{e(rec['pod'])}</td><td style=\"color:{colour};font-weight:600\">{e(rec['outcome'])}"
                    f"</td><td>{e(rec['node'] or '-')}</td><td style=\"text-align:left\">{e(rec['message'])}{victims}"
                    "</td></tr>")
    more = (f"<p>{len(ordered) - HTML_ROWS} more pods not shown: to_records() / to_dataframe() hold them all.</p>"
            if len(ordered) > HTML_ROWS else "")
    return (f"<div><strong>{e(title)}</strong>: {len(records)} pods ({summary or 'none'})"
            "<table><thead><tr><th>pod</th><th>outcome</th><th>node</th><th style=\"text-align:left\">detail</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}</div>")


class ResultsMixin:
    """``to_records`` / ``node_verdict_records`` / ``to_dataframe`` / ``node_verdicts_dataframe`` /
    ``_repr_html_`` over ``_result_items()``."""

    def _result_items(self) -> Iterable[Any]:
        raise NotImplementedError

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per pod: pod, namespace, name, outcome, node, nominatedNode, victims, message."""
        return [pod_record(r) for r in self._result_items()]

    def node_verdict_records(self) -> list[dict[str, Any]]:
        """One dict per (pod, node) verdict: pod, node, code, plugin, reasons, totalScore."""
        return [row for r in self._result_items() for row in verdict_records(r)]

    def to_dataframe(self) -> Any:
        """:meth:`to_records` as a pandas DataFrame (PandasMissingError, an ImportError, without pandas)."""
        return to_dataframe(self.to_records(), _POD_COLUMNS)

    def node_verdicts_dataframe(self) -> Any:
        """:meth:`node_verdict_records` as a pandas DataFrame."""
        return to_dataframe(self.node_verdict_records(), _VERDICT_COLUMNS)

    def _repr_html_(self) -> str:
        return results_html(self.to_records(), type(self).__name__)


class RunResults(ResultsMixin, list[Any]):
    """What ``Scheduler.run()`` returns: its PodResults (a list), with notebook and DataFrame views."""

    def _result_items(self) -> Iterable[Any]:
        return self


__all__ = ["HTML_ROWS", "PandasMissingError", "ResultsMixin", "RunResults", "pod_record", "results_html",
           "to_dataframe", "verdict_records"]
