"""serve-extender: the server answers kube-scheduler-shaped requests with the in-process plugins' verdicts; the
round trip (this project's client calling this project's server) decides as the plugins do in-process; bad
requests, timeouts, TLS, graceful shutdown and the CLI."""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.extender.server import ExtenderServer, ExtenderServerError, PluginExtender, parse_address
from scheduling_framework.ingest.cluster import Cluster
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation.cluster_snapshot import ClusterSnapshot
from tests.extender.fakes import FakeExtenderServer
from tests.extender.tls_util import HOST, self_signed

API = "kubescheduler.config.k8s.io/v1"
KSC = {"apiVersion": API, "kind": "KubeSchedulerConfiguration"}
# the default profile without PostFilter plugins (preemption): in-process and extender messages then compare
PLUGINS = {"apiVersion": API, "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]}
# the client's side: no Filter or Score plugin of its own, everything decided by the extender
BARE = {"schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "bind": {"enabled": [{"name": "DefaultBinder"}]}}}


def node(name: str, cpu: str, labels: dict[str, str] | None = None, taint: bool = False,
         unschedulable: bool = False) -> Node:
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    if unschedulable:
        spec["unschedulable"] = True
    return Node.from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                           "spec": spec, "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})


NODES = [node("n1", "2", {"zone": "a"}, taint=True), node("n2", "4", {"zone": "b", "disktype": "ssd"}),
         node("n3", "1", {"zone": "a"}), node("n4", "8", {"zone": "b"}, unschedulable=True)]


def pod(name: str, cpu: str, affinity: dict[str, Any] | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}
    if affinity:
        spec["affinity"] = affinity
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec})


PREFER_SSD = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 50, "preference": {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}}
REQUIRE_ZONE_B = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}
PODS = [pod("small", "100m", PREFER_SSD), pod("big", "3"), pod("zone-b", "100m", REQUIRE_ZONE_B),
        pod("nowhere", "16"), pod("tiny", "10m")]


@pytest.fixture(scope="module")
def server() -> Any:
    with ExtenderServer(PLUGINS, address="127.0.0.1:0", cluster=Cluster(nodes=list(NODES))) as srv:
        yield srv


def _run(cfg: dict[str, Any], p: Pod, explain: bool = False) -> Any:
    sched = Scheduler(cfg, seed=3, explain=explain)
    sched.load(NODES, [p])
    sched.run()
    return sched.results[p.key]


@pytest.mark.parametrize("node_cache_capable", [False, True], ids=["full nodes", "node names"])
@pytest.mark.parametrize("p", PODS, ids=lambda p: p.name)
def test_round_trip_decides_as_in_process(server: ExtenderServer, p: Pod, node_cache_capable: bool) -> None:
    local = _run(PLUGINS, p, explain=True)
    remote_cfg = {**KSC, "profiles": [BARE],
                  "extenders": [{"urlPrefix": server.url + "/scheduler", "filterVerb": "filter",
                                 "prioritizeVerb": "prioritize", "weight": 1, "nodeCacheCapable": node_cache_capable}]}
    remote = _run(remote_cfg, p, explain=True)
    assert (remote.outcome, remote.node, remote.message) == (local.outcome, local.node, local.message)
    assert {n: (f["code"], f.get("reasons")) for n, f in remote.filter.items()} == {
        n: (f["code"], f.get("reasons")) for n, f in local.filter.items()}


def test_prioritize_scales_the_in_process_totals(server: ExtenderServer) -> None:
    p = pod("small", "100m", PREFER_SSD)
    fwk = Framework.from_config(PLUGINS, snapshot=ClusterSnapshot(NODES).snapshot)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, p, fwk.snapshot.list())
    feasible = [fwk.snapshot.get(n) for n in ("n2", "n3")]
    fwk.run_pre_score_plugins(state, p, feasible)
    names, totals, columns, _ = fwk.score_columns(state, p, feasible)
    top = sum(100 * w for _, _, w in columns)
    want = [{"Host": n, "Score": round(10 * t / top)} for n, t in zip(names, totals, strict=True)]
    status, reply = _post(server, "/prioritize", {"Pod": p.to_dict(), "NodeNames": ["n2", "n3"], "Nodes": None})
    assert (status, reply) == (200, want)


# --- kube-scheduler-shaped requests -------------------------------------------------------------------


def _post(server: ExtenderServer, path: str, body: Any, raw: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, Any]:
    host, port = server.httpd.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=10)
    data = raw if raw is not None else json.dumps(body).encode()
    conn.request("POST", path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    out = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(out)
    except ValueError:
        return resp.status, out


# What kube-scheduler's HTTPExtender marshals: Go field names, informer objects without kind/apiVersion,
# a NodeList with list metadata, NodeNames null when nodeCacheCapable is false.
KUBE_SCHEDULER_FILTER_REQUEST = {
    "Pod": {"metadata": {"name": "web-1", "namespace": "default", "uid": "4b9b5e9c", "resourceVersion": "812",
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                                     "resources": {"requests": {"cpu": "1500m", "memory": "128Mi"}}}],
                     "schedulerName": "default-scheduler", "priority": 0,
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300}]},
            "status": {"phase": "Pending", "qosClass": "Burstable"}},
    "Nodes": {"metadata": {"resourceVersion": "900"},
              "items": [{k: v for k, v in n.to_dict().items() if k not in ("kind", "apiVersion")} for n in NODES]},
    "NodeNames": None,
}


def test_filter_answers_a_kube_scheduler_request(server: ExtenderServer) -> None:
    status, reply = _post(server, "/scheduler/filter", KUBE_SCHEDULER_FILTER_REQUEST)
    assert status == 200
    assert set(reply) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    assert reply["Error"] == "" and reply["NodeNames"] is None
    assert [n["metadata"]["name"] for n in reply["Nodes"]["items"]] == ["n2"]
    assert reply["Nodes"]["items"][0] == KUBE_SCHEDULER_FILTER_REQUEST["Nodes"]["items"][1]  # echoed as sent
    assert reply["FailedNodes"] == {}
    assert reply["FailedAndUnresolvableNodes"] == {
        "n1": "node(s) had untolerated taint(s)", "n3": "Insufficient cpu", "n4": "node(s) were unschedulable"}


def test_names_only_request_without_a_cluster_file_is_an_error() -> None:
    with ExtenderServer(PLUGINS, address="127.0.0.1:0") as srv:
        status, reply = _post(srv, "/filter", {"Pod": PODS[0].to_dict(), "NodeNames": ["n1"]})
    assert status == 200
    assert "nodeCacheCapable: false" in reply["Error"] and "--cluster" in reply["Error"]


def test_unknown_node_name_is_unresolvable(server: ExtenderServer) -> None:
    _, reply = _post(server, "/filter", {"Pod": PODS[4].to_dict(), "NodeNames": ["n2", "n9"]})
    assert reply["NodeNames"] == ["n2"]
    assert reply["FailedAndUnresolvableNodes"] == {"n9": "node \"n9\" is not in the extender's cluster file"}


@pytest.mark.parametrize(("path", "raw", "headers", "want_status", "want"), [
    pytest.param("/filter", b"{not json", None, 400, "request body is not JSON", id="non-JSON"),
    pytest.param("/filter", b'{"Pod": []}', None, 200,
                 "json: cannot unmarshal array into Go struct field ExtenderArgs.Pod of type v1.Pod", id="wrong shape"),
    pytest.param("/filter", b'{"Pod": {"metadata": {"name": "x"}, "spec": {"containers": 3}}}', None, 200,
                 "Pod: Pod default/x: spec.containers", id="bad pod"),
    pytest.param("/prioritize", b'{"Pod": 1}', None, 400, "json: cannot unmarshal number", id="prioritize shape"),
    pytest.param("/preempt", b"{}", None, 404, 'unknown verb "preempt"', id="preempt not served"),
])
def test_bad_requests(server: ExtenderServer, path: str, raw: bytes, headers: Any, want_status: int,
                      want: str) -> None:
    status, reply = _post(server, path, None, raw=raw, headers=headers)
    assert status == want_status
    assert want in reply["Error"]


def test_request_size_is_bounded() -> None:
    with ExtenderServer(PLUGINS, address="127.0.0.1:0", max_request_bytes=100) as srv:
        status, reply = _post(srv, "/filter", None, raw=b" " * 200)
    assert status == 413
    assert "exceeds the limit of 100" in reply["Error"]


def test_healthz(server: ExtenderServer) -> None:
    host, port = server.httpd.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=5)
    conn.request("GET", "/healthz")
    resp = conn.getresponse()
    assert (resp.status, resp.read()) == (200, b"ok")


class SlowFilter:
    name = "SlowFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        time.sleep(0.4)


def _slow_registry() -> Registry:
    reg = Registry()
    reg.merge(default_registry())
    reg.register("SlowFilter", SlowFilter)
    return reg


SLOW = {**KSC, "profiles": [{"schedulerName": "default-scheduler",
                             "plugins": {"multiPoint": {"disabled": [{"name": "*"}]},
                                         "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                                         "filter": {"enabled": [{"name": "SlowFilter"}]},
                                         "bind": {"enabled": [{"name": "DefaultBinder"}]}}}]}


def test_per_request_timeout() -> None:
    with ExtenderServer(SLOW, address="127.0.0.1:0", registry=_slow_registry(), request_timeout=0.2) as srv:
        t0 = time.monotonic()
        status, reply = _post(srv, "/filter", {"Pod": PODS[0].to_dict(), "Nodes": {"items": [NODES[1].to_dict()]}})
        assert time.monotonic() - t0 < 0.4
    assert (status, reply["Error"]) == (200, "filter did not finish within 0.2s")


def test_stop_finishes_the_requests_in_flight() -> None:
    srv = ExtenderServer(SLOW, address="127.0.0.1:0", registry=_slow_registry()).start()
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(_post(srv, "/filter", {
        "Pod": PODS[0].to_dict(), "Nodes": {"items": [NODES[1].to_dict()]}})))
    t.start()
    time.sleep(0.15)
    srv.stop()
    t.join(5)
    assert got and got[0][0] == 200 and got[0][1]["Error"] == ""


def test_bad_server_settings() -> None:
    with pytest.raises(ExtenderServerError, match="expected host:port"):
        parse_address("8888")
    with pytest.raises(ExtenderServerError, match="go together"):
        ExtenderServer(PLUGINS, address="127.0.0.1:0", tls_cert="x.crt")
    with pytest.raises(ExtenderServerError, match="--tls-cert/--tls-key"):
        ExtenderServer(PLUGINS, address="127.0.0.1:0", tls_cert="/nonexistent.crt", tls_key="/nonexistent.key")
    with pytest.raises(Exception, match="profile 'nope' not found"):
        PluginExtender(PLUGINS, profile="nope")


# --- TLS -----------------------------------------------------------------------------------------------


def test_tls_round_trip(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    ca_data = base64.b64encode(cert.read_bytes()).decode()
    with ExtenderServer(PLUGINS, address="127.0.0.1:0", tls_cert=str(cert), tls_key=str(key)) as srv:
        assert srv.url.startswith("https://")
        for tls in ({"caData": ca_data}, {"caFile": str(cert), "serverName": HOST}, {"insecure": True}):
            cfg = {**KSC, "profiles": [BARE], "extenders": [
                {"urlPrefix": srv.url, "filterVerb": "filter", "enableHTTPS": True, "tlsConfig": tls}]}
            r = _run(cfg, PODS[1])
            assert (r.outcome, r.node) == ("Scheduled", "n2"), tls
        # https without a CA to trust and without enableHTTPS: the self-signed certificate is refused
        cfg = {**KSC, "profiles": [BARE], "extenders": [{"urlPrefix": srv.url, "filterVerb": "filter"}]}
        r = _run(cfg, PODS[1])
    assert r.outcome == "Error"
    assert r.message.startswith(f'Post "{srv.url}/filter": tls: CERTIFICATE_VERIFY_FAILED')


def test_tls_client_certificate(tmp_path: Path) -> None:
    import ssl

    server_cert, server_key = self_signed(tmp_path, "server")
    client_cert, client_key = self_signed(tmp_path, "client")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(server_cert, server_key)
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(client_cert)
    with FakeExtenderServer(["TruePredicateExtender"], tls=ctx) as srv:
        base = {"caFile": str(server_cert)}
        ok = {**base, "certData": base64.b64encode(client_cert.read_bytes()).decode(),
              "keyData": base64.b64encode(client_key.read_bytes()).decode()}
        for tls, want in ((ok, "Scheduled"), ({**base, "certFile": str(client_cert), "keyFile": str(client_key)},
                                               "Scheduled"), (base, "Error")):
            cfg = {**KSC, "profiles": [BARE], "extenders": [
                {"urlPrefix": srv.url, "filterVerb": "filter", "enableHTTPS": True, "tlsConfig": tls}]}
            assert _run(cfg, PODS[4]).outcome == want


# --- CLI -----------------------------------------------------------------------------------------------


def test_cli_serve_extender_starts_logs_and_stops_on_sigterm(tmp_path: Path) -> None:
    import yaml

    cfg = tmp_path / "ksc.yaml"
    cfg.write_text(yaml.safe_dump(PLUGINS))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "scheduling_framework", "serve-extender", "--config", str(cfg),
                             "--address", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "serving extender for profile default-scheduler on http://127.0.0.1:" in line, line
        url = line.split(" on ", 1)[1].split()[0]
        host, port = url.rsplit("/", 1)[-1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request("GET", "/healthz")
        assert conn.getresponse().read() == b"ok"
        conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        rest = proc.stderr.read()
        assert "GET /healthz 200" in rest
        assert "shutting down" in rest
    finally:
        if proc.poll() is None:
            proc.kill()


def test_cli_serve_extender_bad_input(tmp_path: Path) -> None:
    import io

    from scheduling_framework.cli import main

    err = io.StringIO()
    assert main(["serve-extender", "--address", "nope"], stdout=io.StringIO(), stderr=err) == 2
    assert "expected host:port" in err.getvalue()
    err = io.StringIO()
    assert main(["serve-extender", "--profile", "x", "--address", "127.0.0.1:0"], stdout=io.StringIO(),
                stderr=err) == 2
    assert "profile 'x' not found" in err.getvalue()


def test_cli_schedule_calls_the_configured_extenders(tmp_path: Path, server: ExtenderServer) -> None:
    import io
    import socket

    import yaml

    from scheduling_framework.cli import main

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed = s.getsockname()[1]
    s.close()
    cfg = {**KSC, "profiles": [BARE], "extenders": [
        {"urlPrefix": server.url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 1},
        {"urlPrefix": f"http://127.0.0.1:{closed}", "filterVerb": "filter", "ignorable": True}]}
    (tmp_path / "ksc.yaml").write_text(yaml.safe_dump(cfg))
    items = [n.to_dict() for n in NODES] + [PODS[1].to_dict()]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    out = io.StringIO()
    code = main(["schedule", "--cluster", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "ksc.yaml"),
                 "--output", "json", "--explain"], stdout=out, stderr=io.StringIO())
    assert code == 0
    doc = json.loads(out.getvalue())
    [p] = doc["pods"]
    assert (p["outcome"], p["node"]) == ("Scheduled", "n2")
    assert p["filter"]["n3"] == {"code": "UnschedulableAndUnresolvable", "plugin": server.url,
                                 "reasons": ["Insufficient cpu"]}
    assert doc["warnings"] == [f'extender "http://127.0.0.1:{closed}": filter failed and was skipped, as '
                               f'kube-scheduler does: Post "http://127.0.0.1:{closed}/filter": dial tcp '
                               f"127.0.0.1:{closed}: connect: connection refused"]


def test_stop_closes_idle_kept_alive_connections_at_once() -> None:
    srv = ExtenderServer(PLUGINS, address="127.0.0.1:0", request_timeout=20).start()
    host, port = srv.httpd.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=5)
    conn.request("GET", "/healthz")
    assert conn.getresponse().read() == b"ok"  # the connection stays open (HTTP/1.1 keep-alive)
    t0 = time.monotonic()
    srv.stop()
    assert time.monotonic() - t0 < 5
    conn.close()


def test_serve_extender_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    from scheduling_framework.cli import main

    assert main(["serve-extender", "--help"]) == 0
    assert "examples:\n  scheduling-framework serve-extender" in capsys.readouterr().out
