"""Upstream's extender tables (tests/fixtures/upstream/extender.yaml) against real HTTP extenders on 127.0.0.1:
TestSchedulerWithExtenders, TestFindNodesThatPassExtenders, TestSchedulerBinding, TestIsInterested,
TestConvertToVictims, TestConvertToMetaVictims — case names kept."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.extender import HTTPExtender
from scheduling_framework.runtime.algorithm import Algorithm, CycleError, Diagnosis, FitError
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.scheduler import SCHEDULED, Scheduler
from scheduling_framework.simulation.cluster_snapshot import ClusterSnapshot
from scheduling_framework.status import Code, Status
from tests import yamlio
from tests.extender.fakes import FakeExtenderServer
from tests.runtime.runtime_fakes import config, registry_for

TABLES = yamlio.load((Path(__file__).parents[1] / "fixtures" / "upstream" / "extender.yaml").read_text())


# --- upstream's fake plugins ------------------------------------------------------------------------------


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> None:
        return None


class EqualPrioritizerPlugin:
    name = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, None]:
        return 1, None


class Node2Prioritizer:
    name = "Node2Prioritizer"

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, None]:
        return (100 if node_info.name == "node2" else 10), None


PLUGINS = {p.name: p for p in (TrueFilter(), EqualPrioritizerPlugin(), Node2Prioritizer())}


def _points(spec: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for point, entries in spec.items():
        out[point] = [(PLUGINS[e[0]], e[1]) if isinstance(e, list) else PLUGINS[e] for e in entries]
    return out


def _node(name: str) -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def _pod(name: str = "ignored", requests: Mapping[str, str] | None = None) -> Pod:
    container: dict[str, Any] = {"name": "c", "image": "pause"}
    if requests:
        container["resources"] = {"requests": dict(requests)}
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                           "uid": name},
                          "spec": {"containers": [container]}})


@contextlib.contextmanager
def _servers(specs: Sequence[Mapping[str, Any]]) -> Iterator[list[tuple[FakeExtenderServer, dict[str, Any]]]]:
    """One fake HTTP extender per upstream FakeExtender, with its ``extenders:`` entry."""
    out: list[tuple[FakeExtenderServer, dict[str, Any]]] = []
    try:
        for spec in specs:
            srv = FakeExtenderServer(spec.get("predicates", ()), [tuple(p) for p in spec.get("prioritizers", ())])
            srv.start()
            entry: dict[str, Any] = {"urlPrefix": srv.url}
            if spec.get("predicates"):
                entry["filterVerb"] = "filter"
            if spec.get("prioritizers"):
                entry["prioritizeVerb"] = "prioritize"
                entry["weight"] = spec.get("weight") or 1
            if spec.get("unInterested"):
                entry["managedResources"] = [{"name": "example.com/not-requested"}]
            if spec.get("ignorable"):
                entry["ignorable"] = True
            if spec.get("binder"):
                entry["bindVerb"] = "bind"
            out.append((srv, entry))
        yield out
    finally:
        for srv, _ in out:
            srv.stop()


def _framework(points: dict[str, list[Any]], extenders: list[dict[str, Any]], nodes: Sequence[str]) -> Framework:
    cfg = config(points)
    cfg["extenders"] = extenders
    snap = ClusterSnapshot([_node(n) for n in nodes])
    return Framework.from_config(cfg, registry_for(points), snapshot=snap.snapshot)


@pytest.mark.parametrize("case", TABLES["TestSchedulerWithExtenders"], ids=lambda c: c["name"])
def test_scheduler_with_extenders(case: dict[str, Any]) -> None:
    points = _points(case["plugins"])
    with _servers(case["extenders"]) as servers:
        fwk = _framework(points, [e for _, e in servers], case["nodes"])
        algo = Algorithm(fwk)
        if case.get("expectsErr"):
            with pytest.raises((FitError, CycleError)):
                algo.schedule_pod(CycleState(), _pod())
            return
        result = algo.schedule_pod(CycleState(), _pod())
    want = case["expectedResult"]
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == (
        want["suggestedHost"], want["evaluatedNodes"], want["feasibleNodes"])


def test_uninterested_extender_is_never_called() -> None:
    case = next(c for c in TABLES["TestSchedulerWithExtenders"] if c["name"] == "test 8")
    with _servers(case["extenders"]) as servers:
        fwk = _framework(_points(case["plugins"]), [e for _, e in servers], case["nodes"])
        Algorithm(fwk).schedule_pod(CycleState(), _pod())
        assert servers[0][0].requests == []


def _status(pair: Sequence[str]) -> tuple[str, str]:
    return pair[0], pair[1]


@pytest.mark.parametrize("case", TABLES["TestFindNodesThatPassExtenders"], ids=lambda c: c["name"])
def test_find_nodes_that_pass_extenders(case: dict[str, Any]) -> None:
    with _servers(case["extenders"]) as servers:
        fwk = _framework({"filter": [TrueFilter()]}, [e for _, e in servers], case["nodes"])
        algo = Algorithm(fwk)
        diagnosis = Diagnosis()
        for node, (code, msg) in (case.get("filteredNodesStatuses") or {}).items():
            diagnosis.node_to_status[node] = Status(Code.from_name(code), msg)
        feasible = fwk.snapshot.list()
        if case.get("expectsErr"):
            with pytest.raises(CycleError):
                algo._find_nodes_that_pass_extenders(_pod("1"), feasible, diagnosis)
            return
        got = algo._find_nodes_that_pass_extenders(_pod("1"), feasible, diagnosis)
    assert [ni.name for ni in got] == case["expectedNodes"]
    assert {n: (str(st.code), st.message()) for n, st in diagnosis.node_to_status.items()} == {
        n: _status(v) for n, v in case["expectedStatuses"].items()}


@pytest.mark.parametrize("case", TABLES["TestSchedulerBinding"], ids=lambda c: c["name"])
def test_scheduler_binding(case: dict[str, Any]) -> None:
    servers = [FakeExtenderServer(bind_error="bind failed" if e.get("errBind") else "").start()
               for e in case["extenders"]]
    try:
        # "interested in pod X": the extender manages a resource only pod X requests (names are unique per extender)
        entries = []
        requests = {}
        for i, (srv, e) in enumerate(zip(servers, case["extenders"], strict=True)):
            resource = f"example.com/{e['interestedPodName']}-{i}"
            if e["interestedPodName"] == case["podName"]:
                requests[resource] = "1"
            entry: dict[str, Any] = {"urlPrefix": srv.url, "managedResources": [{"name": resource}]}
            if e["isBinder"]:
                entry["bindVerb"] = "bind"
            if e.get("ignorable"):
                entry["ignorable"] = True
            entries.append(entry)
        cfg = config({})
        cfg["extenders"] = entries
        default_bound: list[str] = []
        sched = Scheduler(cfg, registry_for({}), binder=lambda pod, node: default_bound.append(pod.name))
        sched.load([_node("node")], [_pod(case["podName"], requests)])
        [r] = sched.run()
        assert r.outcome == SCHEDULED, r.message
        assert bool(default_bound) == (case["wantBinderID"] == -1)
        for i, srv in enumerate(servers):
            got_bound = bool(srv.bound) and not case["extenders"][i].get("errBind")
            assert got_bound == (i == case["wantBinderID"]), f"extender #{i}"
    finally:
        for srv in servers:
            srv.stop()


def test_binding_extender_request_body() -> None:
    with FakeExtenderServer() as srv:
        cfg = config({})
        cfg["extenders"] = [{"urlPrefix": srv.url + "/", "bindVerb": "bind"}]
        sched = Scheduler(cfg, registry_for({}))
        sched.load([_node("node")], [_pod("pod0")])
        [r] = sched.run()
    assert r.outcome == SCHEDULED
    [(path, headers, body)] = srv.requests
    assert path == "/bind"
    assert headers["Content-Type"] == "application/json"
    assert body == {"PodName": "pod0", "PodNamespace": "default", "PodUID": "pod0", "Node": "node"}


def test_binding_extender_error_fails_the_pod() -> None:
    with FakeExtenderServer(bind_error="no capacity left") as srv:
        cfg = config({})
        cfg["extenders"] = [{"urlPrefix": srv.url, "bindVerb": "bind"}]
        sched = Scheduler(cfg, registry_for({}))
        sched.load([_node("node")], [_pod("pod0")])
        [r] = sched.run()
    assert r.outcome == "Error"
    assert r.message == f'extender "{srv.url}": no capacity left'


def _pod_with(containers: Sequence[Sequence[Any]]) -> Pod:
    spec: dict[str, Any] = {"containers": [], "initContainers": []}
    for i, (kind, requests, limits) in enumerate(containers):
        c: dict[str, Any] = {"name": f"c{i}", "image": "pause", "resources": {}}
        if requests:
            c["resources"]["requests"] = requests
        if limits:
            c["resources"]["limits"] = limits
        spec["containers" if kind == "container" else "initContainers"].append(c)
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": spec})


@pytest.mark.parametrize("case", TABLES["TestIsInterested"], ids=lambda c: c["label"])
def test_is_interested(case: dict[str, Any]) -> None:
    ext = HTTPExtender({"urlPrefix": "http://127.0.0.1:1",
                        "managedResources": [{"name": n} for n in case["managed"]]})
    assert ext.is_interested(_pod_with(case["containers"])) is case["want"]


def _bound_pod(name: str, uid: str, node: str) -> Pod:
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "uid": uid},
                          "spec": {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]}})


class _V:
    def __init__(self, pods: Sequence[Pod], n: int) -> None:
        self.pods = list(pods)
        self.num_pdb_violations = n


@pytest.mark.parametrize("case", TABLES["TestConvertToVictims"], ids=lambda c: c["name"])
def test_convert_to_victims(case: dict[str, Any]) -> None:
    reply = {"NodeNameToMetaVictims": {
        n: {"Pods": [{"UID": u} for u in v["pods"]], "NumPDBViolations": v["numPDBViolations"]}
        for n, v in case["nodeNameToMetaVictims"].items()}}
    pods = [_bound_pod(name, uid, node) for node, ps in case["nodes"].items() for name, uid in ps]
    snap = ClusterSnapshot([_node(n) for n in case["nodes"]], pods).snapshot
    with FakeExtenderServer(preempt=lambda body: reply) as srv:
        ext = HTTPExtender({"urlPrefix": srv.url, "preemptVerb": "preempt", "nodeCacheCapable": True})
        got = ext.process_preemption(_pod("preemptor"), {}, snap)
    assert {n: ([p.name for p in pods], v) for n, (pods, v) in got.items()} == {
        n: (w["pods"], w["numPDBViolations"]) for n, w in case["want"].items()}


@pytest.mark.parametrize("case", TABLES["TestConvertToMetaVictims"], ids=lambda c: c["name"])
def test_convert_to_meta_victims(case: dict[str, Any]) -> None:
    victims = {n: _V([_bound_pod(name, uid, n) for name, uid in v["pods"]], v["numPDBViolations"])
               for n, v in case["nodeNameToVictims"].items()}
    snap = ClusterSnapshot([_node(n) for n in victims], [p for v in victims.values() for p in v.pods]).snapshot
    with FakeExtenderServer(preempt=lambda body: {"NodeNameToMetaVictims": body["NodeNameToMetaVictims"]}) as srv:
        ext = HTTPExtender({"urlPrefix": srv.url, "preemptVerb": "preempt", "nodeCacheCapable": True})
        ext.process_preemption(_pod("preemptor"), victims, snap)
    [(_, _, body)] = srv.requests
    assert body["NodeNameToVictims"] is None
    assert body["NodeNameToMetaVictims"] == case["want"]

