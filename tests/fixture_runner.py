"""Runs conformance-format fixtures (shared/conformance/FORMAT.md) in-process, the way the CLI would.

Usage from a test module::

    from tests.fixture_runner import fixture_cases, run_case
    CASES = fixture_cases("tests/fixtures/upstream/tainttoleration.yaml")

    @pytest.mark.parametrize("plugin,case", CASES, ids=[c["name"] for _, c in CASES])
    def test_fixture(plugin, case):
        assert run_case(plugin, case) == []

``run_case`` returns a list of problems (empty = pass). Besides the shared format it honours the optional
keys ``expect.rawScores`` and ``expect.prefilterResult`` (checked only when the Python API can see them) and
``kubernetesVersion`` (on a case or a whole file: the release whose behaviour the expectations follow).
"""

from __future__ import annotations

import pathlib
from typing import Any

from scheduling_framework.config import load_config
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import Scheduler
from tests import yamlio

ROOT = pathlib.Path(__file__).resolve().parent.parent


def fixture_cases(*paths: str | pathlib.Path) -> list[tuple[str, dict[str, Any]]]:
    """(plugin, case) pairs from fixture files (paths relative to the repository root)."""
    out = []
    for p in paths:
        path = ROOT / p if not pathlib.Path(p).is_absolute() else pathlib.Path(p)
        for doc in yamlio.load_all(path.read_text()):
            if not doc:
                continue
            loose = bool(doc.get("looseFailureCodes"))
            for case in doc.get("cases") or []:
                if doc.get("kubernetesVersion") and "kubernetesVersion" not in case:
                    case = {**case, "kubernetesVersion": doc["kubernetesVersion"]}
                out.append((doc.get("plugin", ""), {**case, "_looseFailureCodes": True} if loose else case))
    return out


def case_config(case: dict[str, Any], plugin: str) -> dict[str, Any]:
    plugins: dict[str, Any] = {"multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                                              "disabled": [{"name": "*"}]}}

    def enable(name: str, points: list[str], weight: int | None = None) -> None:
        for p in points:
            entry: dict[str, Any] = {"name": name}
            if p == "score" and weight is not None:
                entry["weight"] = weight
            plugins.setdefault(p, {"enabled": []})["enabled"].append(entry)

    for extra in case.get("alsoEnable") or []:
        enable(extra["name"], extra["points"], extra.get("weight"))
    enable(plugin, case.get("points") or [], case.get("weight", 1))
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugins}
    if case.get("pluginConfig"):
        profile["pluginConfig"] = case["pluginConfig"]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


def schedule_case(plugin: str, case: dict[str, Any]) -> dict[str, Any]:
    """The CLI's JSON result object for the case's pending pod (as `schedule --explain --output json`)."""
    docs: list[Any] = []
    for key in ("namespaces", "nodes", "pods", "pdbs", "extraObjects"):
        docs += case.get(key) or []
    docs.append(case["pod"])
    # Upstream's tables build objects the API server would refuse (minDomains with ScheduleAnyway, ...):
    # skip API validation here, as their Go tests do; tests/hardening checks the shared samples validate.
    cluster = cluster_from_documents(docs, validate=False)
    # optional ``kubernetesVersion``: the release whose behaviour the case expects (default newest)
    sched = Scheduler(load_config(case_config(case, plugin), kubernetes_version=case.get("kubernetesVersion")),
                      seed=1, explain=True)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    sched.run()
    pod = cluster.pending_pods[-1]
    return sched.results[pod.key].to_dict(explain=True)


def _reasons_equal(want: Any, got: Any) -> bool:
    return sorted(want or []) == sorted(got or [])


def run_case(plugin: str, case: dict[str, Any]) -> list[str]:
    try:
        r = schedule_case(plugin, case)
    except Exception as e:  # report, don't crash the table
        return [f"raised {type(e).__name__}: {e}"]
    return check_result(plugin, case, r)


_FAILURE_CODES = {"Unschedulable", "UnschedulableAndUnresolvable"}


def _same_code(want: Any, got: Any, loose: bool) -> bool:
    """Codes match; a table that pins error text only (looseFailureCodes) lets any two failure codes match."""
    return bool(want == got or (loose and want in _FAILURE_CODES and got in _FAILURE_CODES))


def check_result(plugin: str, case: dict[str, Any], r: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    expect = case.get("expect") or {}
    loose = bool(case.get("_looseFailureCodes"))
    filt = r.get("filter") or {}
    scores = r.get("scores") or {}
    for node, want in (expect.get("filter") or {}).items():
        got = filt.get(node)
        if got is None:
            if want.get("code") == "Success" and node in scores:
                continue
            # An Error from Filter aborts the cycle: the pod's outcome is Error, no per-node verdict.
            if want.get("code") == "Error" and r.get("outcome") == "Error":
                continue
            problems.append(f"filter[{node}]: missing, want {want}")
            continue
        if not _same_code(want.get("code"), got.get("code"), loose):
            problems.append(f"filter[{node}].code: got {got.get('code')} want {want.get('code')} "
                            f"({got.get('reasons')})")
        elif "reasons" in want and not _reasons_equal(want["reasons"], got.get("reasons")):
            problems.append(f"filter[{node}].reasons: got {got.get('reasons')} want {want['reasons']}")
    feasible = [n for n, st in filt.items() if st.get("code") == "Success"]
    single = not scores and len(feasible) == 1
    for node, want in ({} if single else (expect.get("scores") or {})).items():
        got = (scores.get(node) or {}).get(plugin)
        got_n = got.get("normalized") if isinstance(got, dict) else None
        if got_n != want:
            problems.append(f"scores[{node}]: got {got_n} want {want}")
    for node, want in ({} if single else (expect.get("rawScores") or {})).items():
        got = (scores.get(node) or {}).get(plugin)
        got_r = got.get("raw") if isinstance(got, dict) else None
        if got_r != want:
            problems.append(f"rawScores[{node}]: got {got_r} want {want}")
    pre = expect.get("prefilterStatus")
    if pre and pre.get("code") not in (None, "Success", "Skip"):
        for node, got in filt.items():
            if not _same_code(pre["code"], got.get("code"), loose):
                problems.append(f"prefilter: filter[{node}].code {got.get('code')} want {pre['code']}")
                break
            if "reasons" in pre and not _reasons_equal(pre["reasons"], got.get("reasons")):
                problems.append(f"prefilter reasons: got {got.get('reasons')} want {pre['reasons']}")
                break
    pres = expect.get("prescoreStatus")
    if pres and pres.get("code") == "Skip":
        for node, per in scores.items():
            if plugin in (per or {}):
                problems.append(f"prescore Skip: {plugin} still scored {node}")
                break
    elif pres and pres.get("code") == "Error" and r.get("outcome") != "Error":
        problems.append(f"prescore Error: outcome {r.get('outcome')}")
    if "selectedNode" in expect and r.get("node") != expect["selectedNode"]:
        problems.append(f"node: got {r.get('node')} want {expect['selectedNode']}")
    pe = expect.get("preemption")
    if pe:
        if r.get("nominatedNode") != pe.get("nominatedNode"):
            problems.append(f"nominatedNode: got {r.get('nominatedNode')} want {pe.get('nominatedNode')}")
        if "victims" in pe and sorted(r.get("victims") or []) != sorted(pe["victims"] or []):
            problems.append(f"victims: got {r.get('victims')} want {pe['victims']}")
    return problems
