"""Results in notebooks and data tools: ``_repr_html_``, records (one per pod, one per node verdict) and,
with pandas installed, DataFrames of the same rows."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from scheduling_framework import Scheduler
from scheduling_framework.report import notebook
from scheduling_framework.report.notebook import PandasMissingError, RunResults, results_html
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import make_node, make_pod

NODES = [make_node().name(f"n{i}").capacity(cpu="2", pods="10").obj() for i in range(3)]
PODS = [make_pod().name("web").req(cpu="1").obj(), make_pod().name("huge").req(cpu="9").obj()]


def scheduler_results(explain: bool = True) -> RunResults:
    s = Scheduler(seed=1, explain=explain)
    s.load(NODES, PODS)
    return s.run()


def test_run_returns_a_list_with_notebook_views() -> None:
    res = scheduler_results()
    assert isinstance(res, list) and [r.pod for r in res] == ["default/web", "default/huge"]
    page = res._repr_html_()
    assert page.index("default/huge") < page.index("default/web")  # not placed first
    assert "2 pods (1 Unschedulable, 1 Scheduled)" in page


def test_pod_records() -> None:
    recs = scheduler_results().to_records()
    web = next(r for r in recs if r["name"] == "web")
    assert web == {"pod": "default/web", "namespace": "default", "name": "web", "outcome": "Scheduled",
                   "node": web["node"], "nominatedNode": None, "victims": [], "message": ""}
    assert web["node"] in {"n0", "n1", "n2"}


def test_node_verdict_records_one_per_node() -> None:
    rows = scheduler_results().node_verdict_records()
    huge = [r for r in rows if r["pod"] == "default/huge"]
    assert sorted(r["node"] for r in huge) == ["n0", "n1", "n2"]
    assert all(r["plugin"] == "NodeResourcesFit" and r["reasons"] == ["Insufficient cpu"] for r in huge)
    web = [r for r in rows if r["pod"] == "default/web"]
    assert len(web) == 3 and all(r["code"] == "Success" and isinstance(r["totalScore"], int) for r in web)


def test_without_explain_there_are_no_verdicts() -> None:
    assert scheduler_results(explain=False).node_verdict_records() == []


def test_simulator_outcome_has_the_same_views() -> None:
    sim = Simulator(seed=1)
    for n in NODES:
        sim.add_node(n)
    out = sim.schedule_pods(PODS)
    recs = out.to_records()
    assert [(r["pod"], r["outcome"]) for r in recs] == [("default/web", "Scheduled"), ("default/huge", "Unschedulable")]
    verdicts = [r for r in out.node_verdict_records() if r["pod"] == "default/huge"]
    assert sorted(r["node"] for r in verdicts) == ["n0", "n1", "n2"]
    assert all(r["code"] == "UnschedulableAndUnresolvable" for r in verdicts)
    assert "ScheduleOutcome" in out._repr_html_()


def test_html_escapes_names_and_messages() -> None:
    page = results_html([{"pod": "ns/<b>", "outcome": "Unschedulable", "node": None, "message": "<script>x</script>",
                          "victims": []}], "t")
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;" in page


def test_html_shows_at_most_html_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notebook, "HTML_ROWS", 1)
    page = scheduler_results()._repr_html_()
    assert "1 more pods not shown" in page


def test_dataframe_without_pandas_is_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def no_pandas(name: str, *a: Any) -> Any:
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real(name, *a)

    monkeypatch.setattr(notebook.importlib, "import_module", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas") as ei:
        scheduler_results().to_dataframe()
    assert isinstance(ei.value, PandasMissingError)


def test_dataframes_hold_the_records() -> None:
    pytest.importorskip("pandas", reason="pandas is optional (pip install pandas)")
    res = scheduler_results()
    df = res.to_dataframe()
    assert list(df["pod"]) == ["default/web", "default/huge"] and list(df.columns)[:4] == ["pod", "namespace",
                                                                                            "name", "outcome"]
    vdf = res.node_verdicts_dataframe()
    assert len(vdf) == len(res.node_verdict_records()) == 6
