"""Real HTTP extenders on 127.0.0.1 for the tests (not a test module).

:class:`FakeExtenderServer` plays upstream's ``tf.FakeExtender`` (pkg/scheduler/testing/framework/fake_extender.go)
behind the real wire protocol: named predicates decide the filter verb's answer (failed nodes get
``FakeExtender: node "x" failed`` / ``... failed and unresolvable``), named prioritizers with weights the
prioritize verb's. ``raw`` replaces the whole reply (status, body bytes, delay) to play a misbehaving
extender. Every request is recorded (path, headers, decoded body).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUCCESS, UNSCHEDULABLE, UNRESOLVABLE, ERROR = "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error"


def _node1(name: str) -> str:
    return SUCCESS if name == "node1" else UNSCHEDULABLE


def _node2(name: str) -> str:
    return SUCCESS if name == "node2" else UNSCHEDULABLE


# upstream's FitPredicate functions, by name: node name -> code
PREDICATES: dict[str, Callable[[str], str]] = {
    "TruePredicateExtender": lambda n: SUCCESS,
    "FalsePredicateExtender": lambda n: UNSCHEDULABLE,
    "ErrorPredicateExtender": lambda n: ERROR,
    "Node1PredicateExtender": _node1,
    "Node2PredicateExtender": _node2,
}


def _prio(best: str) -> Callable[[Sequence[str]], dict[str, int] | None]:
    return lambda names: {n: (10 if n == best else 1) for n in names}


# upstream's PriorityFunc functions, by name: node names -> scores (None = error)
PRIORITIZERS: dict[str, Callable[[Sequence[str]], dict[str, int] | None]] = {
    "ErrorPrioritizerExtender": lambda names: None,
    "Node1PrioritizerExtender": _prio("node1"),
    "Node2PrioritizerExtender": _prio("node2"),
}

Raw = Callable[[str, Any], tuple[int, bytes, float]]


class FakeExtenderServer:
    """One fake extender on an ephemeral loopback port. Use as a context manager or start()/stop()."""

    def __init__(self, predicates: Sequence[str | Mapping[str, str]] = (),
                 prioritizers: Sequence[tuple[str, int]] = (), *, bind_error: str = "",
                 raw: Raw | None = None, tls: Any = None, preempt: Callable[[Any], Any] | None = None) -> None:
        self.predicates = list(predicates)
        self.prioritizers = list(prioritizers)
        self.bind_error = bind_error
        self.raw = raw
        self.preempt = preempt
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.bound: list[Any] = []
        self.client_ports: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no delayed-ACK stall between the headers and the body

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(n)
                try:
                    body = json.loads(data)
                except ValueError:
                    body = data
                outer.requests.append((self.path, dict(self.headers), body))
                outer.client_ports.append(self.client_address[1])
                status, out, delay = outer.reply(self.path.rsplit("/", 1)[-1], body)
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass  # the client gave up (timeout tests)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FakeExtenderServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeExtenderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # upstream FakeExtender behaviour -------------------------------------------------------------
    def reply(self, verb: str, body: Any) -> tuple[int, bytes, float]:
        if self.raw is not None:
            return self.raw(verb, body)
        if verb == "filter":
            return 200, json.dumps(self.filter(body)).encode(), 0.0
        if verb == "prioritize":
            scores = self.prioritize(body)
            if scores is None:
                return 500, b"some error", 0.0
            return 200, json.dumps(scores).encode(), 0.0
        if verb == "bind":
            self.bound.append(body)
            return 200, json.dumps({"Error": self.bind_error}).encode(), 0.0
        if verb == "preempt" and self.preempt is not None:
            return 200, json.dumps(self.preempt(body)).encode(), 0.0
        return 404, b"not found", 0.0

    @staticmethod
    def node_names(body: Mapping[str, Any]) -> list[str]:
        if body.get("NodeNames") is not None:
            return list(body["NodeNames"])
        return [n["metadata"]["name"] for n in (body.get("Nodes") or {}).get("items") or ()]

    def _code(self, name: str) -> str:
        for p in self.predicates:
            code = p.get(name, p.get("*", SUCCESS)) if isinstance(p, Mapping) else PREDICATES[p](name)
            if code != SUCCESS:
                return code
        return SUCCESS

    def filter(self, body: Mapping[str, Any]) -> dict[str, Any]:
        passed: list[str] = []
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        for name in self.node_names(body):
            code = self._code(name)
            if code == SUCCESS:
                passed.append(name)
            elif code == UNSCHEDULABLE:
                failed[name] = f'FakeExtender: node "{name}" failed'
            elif code == UNRESOLVABLE:
                unresolvable[name] = f'FakeExtender: node "{name}" failed and unresolvable'
            else:
                return {"Error": "some error"}
        if body.get("NodeNames") is not None:
            return {"NodeNames": passed, "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable}
        items = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in passed]
        return {"Nodes": {"metadata": {}, "items": items}, "FailedNodes": failed,
                "FailedAndUnresolvableNodes": unresolvable}

    def prioritize(self, body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        names = self.node_names(body)
        combined: dict[str, int] = {}
        for fn, weight in self.prioritizers:
            if weight == 0:
                continue
            scores = PRIORITIZERS[fn](names)
            if scores is None:
                return None
            for n, s in scores.items():
                combined[n] = combined.get(n, 0) + s * weight
        return [{"Host": n, "Score": s} for n, s in combined.items()]


def extender_entry(server: FakeExtenderServer | TrickleServer, *, filter_verb: bool = True,
                   prioritize: bool = False,
                   weight: int = 1, **extra: Any) -> dict[str, Any]:
    """A KubeSchedulerConfiguration ``extenders:`` entry pointing at ``server``."""
    e: dict[str, Any] = {"urlPrefix": server.url}
    if filter_verb:
        e["filterVerb"] = "filter"
    if prioritize:
        e["prioritizeVerb"] = "prioritize"
        e["weight"] = weight
    e.update(extra)
    return e


class TrickleServer:
    """A raw-socket HTTP server on 127.0.0.1 that reads each request, then sends its 200 reply one byte every
    ``interval`` seconds, from the status line (``phase="headers"``) or only the body (``phase="body"``, the
    headers at once). It gives up after ``max_seconds`` per connection, so a client that does not bound the
    whole call fails a test in seconds rather than hanging it."""

    def __init__(self, phase: str = "headers", interval: float = 0.1, max_seconds: float = 6.0) -> None:
        import socket

        self.phase = phase
        self.interval = interval
        self.max_seconds = max_seconds
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.port = int(self.sock.getsockname()[1])
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: Any) -> None:
        body = b"{}" + b" " * 4000
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        with conn:
            conn.settimeout(self.max_seconds)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                if self.phase == "body":
                    conn.sendall(head)
                    out = body
                else:
                    out = head + body
                end = time.monotonic() + self.max_seconds
                for i in range(len(out)):
                    if self._stop.is_set() or time.monotonic() > end:
                        return  # the connection closes mid-reply
                    conn.sendall(out[i:i + 1])
                    time.sleep(self.interval)
            except OSError:
                return  # the client gave up

    def __enter__(self) -> TrickleServer:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sock.close()
