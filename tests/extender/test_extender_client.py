"""The extender client against real HTTP servers on 127.0.0.1: request bodies as kube-scheduler sends them,
every reply shape, misbehaving extenders (HTTP 500, non-JSON, wrong shape, timeout, unreachable), ignorable
vs not, NodeResourcesFit's ignored resources, preemption, explanations and warnings."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest

from scheduling_framework.api import Node, Pod
from scheduling_framework.config import load_config
from scheduling_framework.errors import ConfigError
from scheduling_framework.extender import ExtenderError, HTTPExtender, build_extenders
from scheduling_framework.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, Scheduler
from tests.extender.fakes import FakeExtenderServer, TrickleServer, extender_entry

API = "kubescheduler.config.k8s.io/v1"


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None) -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}},
                           "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})


def pod(name: str, cpu: str = "100m", extra: dict[str, str] | None = None, priority: int | None = None,
        node_name: str = "") -> Pod:
    requests = {"cpu": cpu, **(extra or {})}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": requests}}]}
    if priority is not None:
        spec["priority"] = priority
    if node_name:
        spec["nodeName"] = node_name
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec})


def run(extenders: list[dict[str, Any]], nodes: list[Node], pods: list[Pod], explain: bool = False,
        **cfg: Any) -> tuple[Scheduler, dict[str, Any]]:
    sched = Scheduler({"apiVersion": API, "kind": "KubeSchedulerConfiguration", "extenders": extenders, **cfg},
                      seed=1, explain=explain)
    sched.load(nodes, pods)
    t0 = time.monotonic()
    sched.run()
    assert time.monotonic() - t0 < 20
    return sched, sched.results


def raw(status: int, body: bytes | str | Any, delay: float = 0.0) -> Any:
    data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
    return lambda verb, req: (status, data, delay)


NODES = [node("node1"), node("node2")]


# --- request bodies -------------------------------------------------------------------------------------


def test_filter_request_body_with_full_nodes() -> None:
    with FakeExtenderServer(["TruePredicateExtender"]) as srv:
        run([extender_entry(srv, filter_verb=True)], NODES, [pod("p")])
    path, headers, body = srv.requests[0]
    assert path == "/filter"
    assert headers["Content-Type"] == "application/json"
    assert set(body) == {"Pod", "Nodes", "NodeNames"}
    assert body["NodeNames"] is None
    assert body["Pod"]["metadata"]["name"] == "p"
    assert body["Pod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    assert set(body["Nodes"]) == {"metadata", "items"}
    assert sorted(n["metadata"]["name"] for n in body["Nodes"]["items"]) == ["node1", "node2"]
    assert body["Nodes"]["items"][0]["status"]["capacity"]["cpu"] == "4"


def test_node_cache_capable_sends_and_reads_names_only() -> None:
    with FakeExtenderServer(["Node2PredicateExtender"]) as srv:
        _, results = run([extender_entry(srv, nodeCacheCapable=True)], NODES, [pod("p")])
    body = srv.requests[0][2]
    assert body["Nodes"] is None
    assert sorted(body["NodeNames"]) == ["node1", "node2"]
    assert results["default/p"].node == "node2"


def test_prioritize_request_and_scores_scaled_and_weighted() -> None:
    # default profile: node1 and node2 tie on every plugin; the extender's 10 vs 1, x10, x weight 3, decides
    with FakeExtenderServer(prioritizers=[("Node1PrioritizerExtender", 1)]) as srv:
        _, results = run([extender_entry(srv, filter_verb=False, prioritize=True, weight=3)], NODES,
                             [pod("p")], explain=True)
    assert [r[0] for r in srv.requests] == ["/prioritize"]
    r = results["default/p"]
    assert r.node == "node1"
    assert r.scores["node1"][srv.url] == {"raw": 10, "normalized": 100, "weighted": 300}
    assert r.scores["node2"][srv.url] == {"raw": 1, "normalized": 10, "weighted": 30}
    plugins_total = sum(v["weighted"] for k, v in r.scores["node1"].items() if k != srv.url)
    assert r.total_scores["node1"] == plugins_total + 300


# --- reply shapes ----------------------------------------------------------------------------------------


def test_failed_nodes_give_upstream_fit_error_and_explanation() -> None:
    with FakeExtenderServer([{"node1": "Unschedulable", "node2": "UnschedulableAndUnresolvable"}]) as srv:
        _, results = run([extender_entry(srv)], NODES, [pod("p")], explain=True)
    r = results["default/p"]
    assert r.outcome == UNSCHEDULABLE
    # (the PostFilter plugins' messages follow)
    assert r.message.startswith('0/2 nodes are available: 1 FakeExtender: node "node1" failed, '
                                '1 FakeExtender: node "node2" failed and unresolvable. ')
    assert r.filter["node1"] == {"code": "Unschedulable", "plugin": srv.url,
                                 "reasons": ['FakeExtender: node "node1" failed']}
    assert r.filter["node2"]["code"] == "UnschedulableAndUnresolvable"


def test_failed_and_unresolvable_takes_precedence() -> None:
    reply = {"Nodes": {"items": []}, "FailedNodes": {"node1": "a"}, "FailedAndUnresolvableNodes": {"node1": "b"}}
    with FakeExtenderServer(raw=raw(200, reply)) as srv:
        _, results = run([extender_entry(srv)], [node("node1")], [pod("p")], explain=True)
    assert results["default/p"].filter["node1"]["code"] == "UnschedulableAndUnresolvable"
    assert results["default/p"].filter["node1"]["reasons"] == ["b"]


def test_reply_keys_are_matched_ignoring_case_as_go_does() -> None:
    reply = {"nodenames": ["node2"], "failednodes": {"node1": "not here"}}
    with FakeExtenderServer(raw=raw(200, reply)) as srv:
        _, results = run([extender_entry(srv, nodeCacheCapable=True)], NODES, [pod("p")])
    assert results["default/p"].node == "node2"


def test_reply_with_neither_nodes_nor_names_filters_every_node() -> None:
    with FakeExtenderServer(raw=raw(200, {})) as srv:
        _, results = run([extender_entry(srv)], NODES, [pod("p")])
    assert results["default/p"].outcome == UNSCHEDULABLE
    assert results["default/p"].message.startswith("0/2 nodes are available:")


BAD_REPLIES = [
    pytest.param(raw(500, "boom"), "failed filter with extender at URL {url}/filter, code 500", id="HTTP 500"),
    pytest.param(raw(200, "<html>"), 'extender "{url}": filter reply is not valid JSON: Expecting value: line 1 '
                                     "column 1 (char 0)", id="non-JSON"),
    pytest.param(raw(200, {"FailedNodes": ["node1"]}),
                 'extender "{url}": filter reply: json: cannot unmarshal array into Go struct field '
                 "ExtenderFilterResult.FailedNodes of type v1.FailedNodesMap", id="wrong shape"),
    pytest.param(raw(200, [1, 2]), 'extender "{url}": filter reply: json: cannot unmarshal array into Go value of '
                                   "type v1.ExtenderFilterResult", id="not an object"),
    pytest.param(raw(200, {"Error": "out of GPUs"}), 'extender "{url}": out of GPUs', id="extender error"),
    pytest.param(raw(200, {"NodeNames": ["node9"]}),
                 'extender "{url}" claims a filtered node "node9" which is not found in the input node list',
                 id="unknown node"),
    pytest.param(raw(200, {"NodeNames": "node1"}),
                 'extender "{url}": filter reply: json: cannot unmarshal string into Go struct field '
                 "ExtenderFilterResult.NodeNames of type []string", id="names not a list"),
]


@pytest.mark.parametrize(("reply", "message"), BAD_REPLIES)
def test_misbehaving_filter_gives_an_error_naming_the_extender(reply: Any, message: str) -> None:
    with FakeExtenderServer(raw=reply) as srv:
        _, results = run([extender_entry(srv, nodeCacheCapable=True)], NODES, [pod("p")])
    r = results["default/p"]
    assert (r.outcome, r.message) == (ERROR, message.format(url=srv.url))


@pytest.mark.parametrize(("reply", "message"), BAD_REPLIES)
def test_misbehaving_ignorable_filter_is_skipped_with_a_warning(reply: Any, message: str) -> None:
    with FakeExtenderServer(raw=reply) as srv:
        sched, results = run([extender_entry(srv, nodeCacheCapable=True, ignorable=True)], NODES, [pod("p")])
    assert results["default/p"].outcome == SCHEDULED
    [w] = sched.warnings
    assert w == (f'extender "{srv.url}": filter failed and was skipped, as kube-scheduler does: '
                 + message.format(url=srv.url))


def test_timeout_is_bounded_by_http_timeout() -> None:
    with FakeExtenderServer(raw=raw(200, {}, delay=2.0)) as srv:
        t0 = time.monotonic()
        _, results = run([extender_entry(srv, httpTimeout="200ms")], NODES, [pod("p")],
                         podInitialBackoffSeconds=1, podMaxBackoffSeconds=1)
        elapsed = time.monotonic() - t0
    r = results["default/p"]
    assert r.outcome == ERROR
    assert r.message == (f'Post "{srv.url}/filter": context deadline exceeded '
                         "(Client.Timeout exceeded while awaiting headers)")
    assert elapsed < 5 * 0.2 * 2 + 1.5  # every attempt gave up after httpTimeout


def test_timeout_of_an_ignorable_extender_skips_it() -> None:
    with FakeExtenderServer(raw=raw(200, {}, delay=1.0)) as srv:
        sched, results = run([extender_entry(srv, httpTimeout="100ms", ignorable=True)], NODES, [pod("p")])
    assert results["default/p"].outcome == SCHEDULED
    assert "context deadline exceeded" in sched.warnings.to_list()[0]


TRICKLE_TIMEOUTS = {
    "headers": 'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
    "body": "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
}


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_trickling_reply_fails_at_http_timeout(phase: str) -> None:
    # One byte every 0.1 s: each read succeeds, only the whole-call deadline can stop it (issue 26).
    with TrickleServer(phase) as srv:
        ext = HTTPExtender({"urlPrefix": srv.url, "filterVerb": "filter", "httpTimeout": "500ms"})
        t0 = time.monotonic()
        with pytest.raises(ExtenderError) as err:
            ext.filter(pod("p"), [])
        elapsed = time.monotonic() - t0
    assert str(err.value) == TRICKLE_TIMEOUTS[phase].format(url=srv.url)
    assert 0.45 < elapsed < 0.5 + 0.5


@pytest.mark.parametrize(("ignorable", "outcome"), [(False, ERROR), (True, SCHEDULED)],
                         ids=["not ignorable: the pod fails", "ignorable: the extender is skipped"])
def test_trickling_extender_counts_as_failed(ignorable: bool, outcome: str) -> None:
    with TrickleServer("body") as srv:
        sched, results = run([extender_entry(srv, httpTimeout="300ms", ignorable=ignorable)],
                             NODES, [pod("p")], podInitialBackoffSeconds=1, podMaxBackoffSeconds=1)
    assert results["default/p"].outcome == outcome
    want = TRICKLE_TIMEOUTS["body"]
    assert (sched.warnings.to_list()[0].endswith(want) if ignorable else results["default/p"].message == want)


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_unreachable_extender() -> None:
    port = _closed_port()
    url = f"http://127.0.0.1:{port}"
    _, results = run([{"urlPrefix": url, "filterVerb": "filter"}], NODES, [pod("p")])
    assert results["default/p"].message == (f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: '
                                            "connection refused")


def test_ignorable_extenders_run_after_the_others() -> None:
    with FakeExtenderServer(["Node1PredicateExtender"]) as a, FakeExtenderServer(["Node2PredicateExtender"]) as b:
        cfg = load_config({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                           "extenders": [extender_entry(a, ignorable=True), extender_entry(b)]})
        assert [e.name for e in build_extenders(cfg)] == [b.url, a.url]


def test_prioritize_error_is_ignored_as_upstream() -> None:
    with FakeExtenderServer(raw=raw(500, "")) as srv:
        sched, results = run([extender_entry(srv, filter_verb=False, prioritize=True)], NODES, [pod("p")])
    assert results["default/p"].outcome == SCHEDULED
    assert sched.warnings.to_list() == [f'extender "{srv.url}": prioritize failed and was skipped, as '
                                        f"kube-scheduler does: failed prioritize with extender at URL "
                                        f"{srv.url}/prioritize, code 500"]


def test_connections_are_reused() -> None:
    with FakeExtenderServer(["TruePredicateExtender"]) as srv:
        ext = HTTPExtender(extender_entry(srv))
        for _ in range(5):
            ext.send("filter", {"NodeNames": []})
        ext.close()
    assert len(srv.client_ports) == 5
    assert len(set(srv.client_ports)) == 1  # one kept-alive connection


def test_ignored_by_scheduler_resources_are_not_counted_by_node_resources_fit() -> None:
    gpu_pod = pod("p", extra={"example.com/gpu": "1"})
    _, results = run([], NODES, [gpu_pod])
    assert results["default/p"].outcome == UNSCHEDULABLE
    assert "Insufficient example.com/gpu" in results["default/p"].message
    with FakeExtenderServer(["TruePredicateExtender"]) as srv:
        entry = extender_entry(srv, managedResources=[{"name": "example.com/gpu", "ignoredByScheduler": True}])
        _, results = run([entry], NODES, [gpu_pod])
    assert results["default/p"].outcome == SCHEDULED
    assert len(srv.requests) == 1  # interested: the pod requests a resource it manages


def test_bad_url_and_tls_config_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"extenders\[0\].urlPrefix"):
        Scheduler({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                   "extenders": [{"urlPrefix": "ftp://x", "filterVerb": "f"}]})
    with pytest.raises(ConfigError, match=r"extenders\[0\].tlsConfig.caData"):
        Scheduler({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                   "extenders": [{"urlPrefix": "https://x", "filterVerb": "f", "tlsConfig": {"caData": "@@"}}]})


def test_extender_error_is_a_scheduling_framework_error() -> None:
    ext = HTTPExtender({"urlPrefix": f"http://127.0.0.1:{_closed_port()}", "filterVerb": "filter"})
    with pytest.raises(ExtenderError) as ei:
        ext.send("filter", {})
    assert ei.value.extender == ext.name
    assert ei.value.verb == "filter"


# --- preemption -------------------------------------------------------------------------------------------


def test_preempt_verb_narrows_the_candidates() -> None:
    nodes = [node("node1", cpu="1"), node("node2", cpu="1")]
    low = [pod("low1", cpu="1", priority=0, node_name="node1"), pod("low2", cpu="1", priority=0, node_name="node2")]
    seen: list[Any] = []

    def preempt(body: Any) -> Any:
        seen.append(body)
        # keep node2 only, with the victims the scheduler proposed there
        return {"NodeNameToMetaVictims": {"node2": {"Pods": [{"UID": p["metadata"]["uid"]}
                                                             for p in body["NodeNameToVictims"]["node2"]["Pods"]],
                                                    "NumPDBViolations": 0}}}

    with FakeExtenderServer(preempt=preempt) as srv:
        _, results = run([extender_entry(srv, filter_verb=False, preemptVerb="preempt")], nodes,
                         [*low, pod("high", cpu="1", priority=100)])
    body = seen[0]
    assert sorted(body["NodeNameToVictims"]) == ["node1", "node2"]
    assert body["NodeNameToMetaVictims"] is None
    assert body["NodeNameToVictims"]["node1"]["Pods"][0]["metadata"]["name"] == "low1"
    r = results["default/high"]
    assert r.victims == ["default/low2"]
    assert r.node == "node2"


@pytest.mark.parametrize(("reply", "ignorable", "want"), [
    pytest.param({"NodeNameToMetaVictims": {"node1": {"Pods": [], "NumPDBViolations": 0}}}, False,
                 'expected at least one victim pod on node "node1"', id="no victims"),
    pytest.param({"NodeNameToMetaVictims": {"node1": {"Pods": [{"UID": "nope"}]}}}, False,
                 "extender: {url} claims to preempt pod (UID: &{{nope}}) on node: node1, but the pod is not found "
                 "on that node", id="unknown victim"),
    pytest.param({"NodeNameToMetaVictims": {"node7": {"Pods": [{"UID": "x"}]}}}, False,
                 'extender "{url}": nodeinfo not found for node name "node7"', id="unknown node"),
    pytest.param({"NodeNameToMetaVictims": {"node1": {"Pods": [], "NumPDBViolations": 0}}}, True, None,
                 id="no victims, ignorable"),
])
def test_preempt_verb_errors(reply: Any, ignorable: bool, want: str | None) -> None:
    nodes = [node("node1", cpu="1")]
    pods = [pod("low1", cpu="1", priority=0, node_name="node1"), pod("high", cpu="1", priority=100)]
    with FakeExtenderServer(preempt=lambda body: reply) as srv:
        _, results = run([extender_entry(srv, filter_verb=False, preemptVerb="preempt", ignorable=ignorable)],
                         nodes, pods)
    r = results["default/high"]
    assert r.victims == []
    if want is not None:
        assert r.message.endswith(want.format(url=srv.url)) or want.format(url=srv.url) in r.message


# --- Python API -------------------------------------------------------------------------------------------


def test_simulator_uses_the_configuration_extenders() -> None:
    from scheduling_framework.simulation import Simulator

    with FakeExtenderServer(["Node2PredicateExtender"]) as srv:
        sim = Simulator({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                         "extenders": [extender_entry(srv)]})
        for n in NODES:
            sim.add_node(n)
        placement = sim.best_node_for_pod(pod("p"))
    assert placement.node == "node2"
