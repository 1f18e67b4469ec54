"""Serving a profile's Filter and Score plugins as a scheduler extender (``scheduling-framework serve-extender``).

A real kube-scheduler configured with ``extenders: [{urlPrefix: http://<this>, filterVerb: filter,
prioritizeVerb: prioritize, weight: N}]`` POSTs each pod and its candidate nodes here; the answer is what the
profile's plugins (in-tree or pip-installed) decide in-process:

- ``POST <any prefix>/filter`` — PreFilter, then Filter on every candidate node; nodes that fail go to
  ``FailedNodes`` (``FailedAndUnresolvableNodes`` when the status is UnschedulableAndUnresolvable) with the
  plugins' message; a plugin error is the reply's ``Error``.
- ``POST <any prefix>/prioritize`` — PreFilter, PreScore and Score over the candidates; each node's weighted
  total, as a share of the profile's maximum (sum of weights x 100), scaled to the protocol's 0-10 and rounded.
- ``GET /healthz`` — ``ok``.

preempt and bind are not served (404): a preempt request carries no Node objects and this server does no
cluster I/O to bind. The nodes: kube-scheduler sends full Node objects when the extender entry has
``nodeCacheCapable: false`` (recommended); with ``nodeCacheCapable: true`` it sends names only, which this
server can resolve only against a cluster file (``cluster=`` / ``--cluster``). Pods on the nodes are known only
from that cluster file: without it, plugins that count the pods already on a node (NodeResourcesFit's
requested resources, NodePorts, InterPodAffinity, PodTopologySpread) see empty nodes — serve such plugins
with a cluster file, or keep them in kube-scheduler and serve only the plugins that read the pod and the node.

Server: the standard library's ``http.server.ThreadingHTTPServer``, with a thread per connection for the HTTP
side and a bounded number of requests computed at once (``workers``, the rest waiting in a ``queue``; 503
beyond). kube-scheduler calls an extender once per verb per scheduling cycle, one cycle at a time, and plugins
are synchronous Python: no framework (aiohttp, uvicorn, ...) needs installing on the image. Every request is
bounded: its body (``max_request_bytes``, 413), the time to read it (``read_timeout`` from its first byte,
408) and the time to answer it (``request_timeout``; the work is then cancelled at its next check and its
memory returned). Each is logged on the ``scheduling_framework.extender.server`` logger;
:meth:`ExtenderServer.stop` (SIGTERM in the CLI) stops accepting and waits for the requests in flight.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import io
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.config import KubeSchedulerConfiguration, expand_profile, load_config
from scheduling_framework.config.types import EffectiveProfile
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, SchedulingFrameworkError
from scheduling_framework.extender.types import (
    MAX_EXTENDER_PRIORITY,
    ExtenderArgs,
    ExtenderFilterResult,
    HostPriority,
    WireError,
    host_priority_list_to_json,
)
from scheduling_framework.interfaces import MAX_NODE_SCORE
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.runtime.algorithm import absent_nodes_status
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code

log = logging.getLogger("scheduling_framework.extender.server")

DEFAULT_ADDRESS = "127.0.0.1:8888"
DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024
DEFAULT_REQUEST_TIMEOUT = 30.0
#: Time a client has to send a whole request (line, headers and body) once its first byte arrived.
DEFAULT_READ_TIMEOUT = 10.0
#: Requests computed at once (plugins are Python: more would only share the interpreter and add memory).
DEFAULT_WORKERS = 4
#: Requests waiting for a worker before the server answers 503.
DEFAULT_QUEUE = 64
#: Open connections before new ones are answered 503 and closed.
DEFAULT_MAX_CONNECTIONS = 1024
#: listen() backlog: connections the kernel queues before accept() (capped by net.core.somaxconn).
LISTEN_BACKLOG = 1024
#: A request body this large (or a cancelled request) is followed by a garbage collection and
#: ``malloc_trim``, so the memory of its objects goes back to the system.
_TRIM_AFTER_BYTES = 1024 * 1024
FILTER_VERB = "filter"
PRIORITIZE_VERB = "prioritize"


class ExtenderServerError(SchedulingFrameworkError):
    """The extender server cannot start: a bad address, TLS files, configuration or cluster file."""


class _RequestError(Exception):
    """A request this server rejects: (HTTP status, message)."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


class RequestCancelled(Exception):
    """The request's time is up: its work stops at the next check (see :class:`PluginExtender`)."""


Cancel = Callable[[], bool]


def _never() -> bool:
    return False


def parse_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``; an empty host listens on every interface) -> (host, port)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ExtenderServerError(f'--address "{address}": expected host:port, e.g. {DEFAULT_ADDRESS}')
    return host.strip("[]"), int(port)


class PluginExtender:
    """The protocol logic, without HTTP: answers filter and prioritize requests with a profile's plugins.

    ``cluster_nodes`` / ``cluster_pods`` / ``objects`` come from a cluster file: they resolve node names
    (nodeCacheCapable requests) and put the pods already bound on each node. Thread-safe: every request
    builds its own Framework and snapshot, so plugins never share state between requests.

    ``cancelled`` (``filter`` / ``prioritize``): asked between steps — after each decoded node, after the
    snapshot is built, before each node's Filter plugins, between PreFilter, PreScore and Score — and when true
    the work stops with :class:`RequestCancelled`, dropping what it built. A single plugin call is not
    interrupted, so the work ends within one such step after the request's time is up.
    """

    def __init__(self, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None, *,
                 profile: str | None = None, registry: Registry | None = None,
                 cluster_nodes: Iterable[Node] = (), cluster_pods: Iterable[Pod] = (),
                 objects: Iterable[KubeObject] = ()) -> None:
        self.config = config if isinstance(config, KubeSchedulerConfiguration) else load_config(config)
        self.registry = registry if registry is not None else default_registry()
        profiles = list(self.config.profiles)
        prof = profiles[0] if profile is None else next((p for p in profiles if p.scheduler_name == profile), None)
        if prof is None:
            names = ", ".join(p.scheduler_name for p in profiles)
            raise ConfigError(f"profile {profile!r} not found (the configuration has: {names})")
        self.profile: EffectiveProfile = expand_profile(prof, self.registry.points_of, self.config.kubernetes_version)
        self.cluster_nodes = {n.name: n for n in cluster_nodes}
        self.cluster_pods = [p for p in cluster_pods if p.spec.node_name]
        self.objects = list(objects)
        probe = self._framework([])  # a plugin that cannot be built fails now, not at the first request
        self.filter_plugins = [pl.name for pl in probe.plugins_at("filter")]
        self.score_plugins = [pl.name for pl in probe.plugins_at("score")]

    def _framework(self, nodes: list[Node]) -> Framework:
        from scheduling_framework.simulation.cluster_snapshot import ClusterSnapshot

        names = {n.name for n in nodes}
        pods = [p for p in self.cluster_pods if p.spec.node_name in names]
        snap = ClusterSnapshot(nodes, pods)
        return Framework(self.profile, self.registry, snapshot=snap.snapshot, objects=ObjectStore(self.objects),
                         parallelism=self.config.parallelism)

    def _decode(self, body: Any, cancelled: Cancel = _never) -> tuple[Pod, list[str], list[Node], bool]:
        """(pod, candidate names in request order, every node of the snapshot, names-only request)."""
        try:
            args = ExtenderArgs.from_json(body)
        except WireError as e:
            raise _RequestError(400, str(e)) from None
        try:
            # kube-scheduler's objects come from informers, whose TypeMeta (kind, apiVersion) is usually empty
            pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", **args.pod}, strict=None)
        except SchedulingFrameworkError as e:
            raise _RequestError(400, f"Pod: {e}") from None
        nodes = dict(self.cluster_nodes)
        if args.node_names is not None:
            if not self.cluster_nodes:
                raise _RequestError(400, "the request names nodes only (nodeCacheCapable: true) but this extender "
                                         "has no cluster file to find them in: set nodeCacheCapable: false in "
                                         "kube-scheduler's extender entry, or start serve-extender with --cluster")
            return pod, list(args.node_names), list(nodes.values()), True
        names: list[str] = []
        for i, raw in enumerate(args.nodes or ()):
            if not i & 255 and cancelled():
                raise RequestCancelled
            try:
                n = Node.from_dict({"apiVersion": "v1", "kind": "Node", **raw}, strict=None)
            except SchedulingFrameworkError as e:
                raise _RequestError(400, f"Nodes.items[{i}]: {e}") from None
            nodes[n.name] = n
            names.append(n.name)
        return pod, names, list(nodes.values()), False

    def filter(self, body: Any, cancelled: Cancel = _never) -> dict[str, Any]:
        """An ExtenderFilterResult (as JSON) for an ExtenderArgs request."""
        try:
            pod, names, nodes, names_only = self._decode(body, cancelled)
        except _RequestError as e:
            return ExtenderFilterResult(error=str(e)).to_json()
        fwk = self._framework(nodes)
        if cancelled():
            raise RequestCancelled
        infos = fwk.snapshot.node_info_map
        state = CycleState()
        passed: list[str] = []
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        pre_res, st, with_nodes = fwk.run_pre_filter_plugins(state, pod, fwk.snapshot.list())
        if st is not None and st.code != Code.SUCCESS:
            if not st.is_rejected():
                return ExtenderFilterResult(error=st.message()).to_json()
            target = unresolvable if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE else failed
            for name in names:
                target[name] = st.message()
        else:
            allowed = pre_res.node_names if pre_res is not None else None
            absent = absent_nodes_status(with_nodes).message()
            for name in names:
                if cancelled():
                    raise RequestCancelled
                ni = infos.get(name)
                if ni is None:
                    unresolvable[name] = f'node "{name}" is not in the extender\'s cluster file'
                    continue
                if allowed is not None and name not in allowed:
                    unresolvable[name] = absent
                    continue
                fst = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
                if fst is None or fst.code == Code.SUCCESS:
                    passed.append(name)
                elif fst.code == Code.ERROR:
                    return ExtenderFilterResult(error=fst.message()).to_json()
                elif fst.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    unresolvable[name] = fst.message()
                else:
                    failed[name] = fst.message()
        if names_only:
            return ExtenderFilterResult(None, passed, failed, unresolvable).to_json()
        items: dict[Any, Any] = {(n.get("metadata") or {}).get("name"): n
                                 for n in (ExtenderArgs.from_json(body).nodes or ())}
        return ExtenderFilterResult([items[n] for n in passed], None, failed, unresolvable).to_json()

    def prioritize(self, body: Any, cancelled: Cancel = _never) -> list[dict[str, Any]]:
        """A HostPriorityList (as JSON); raises _RequestError (400 / 500) when it cannot score."""
        pod, names, nodes, _ = self._decode(body, cancelled)
        fwk = self._framework(nodes)
        if cancelled():
            raise RequestCancelled
        infos = fwk.snapshot.node_info_map
        candidates: list[NodeInfo] = [infos[n] for n in names if n in infos]
        scores = self.scores(fwk, pod, candidates, cancelled)
        return host_priority_list_to_json([HostPriority(n, scores.get(n, 0)) for n in names])

    @staticmethod
    def scores(fwk: Framework, pod: Pod, candidates: list[NodeInfo], cancelled: Cancel = _never) -> dict[str, int]:
        """Each candidate's weighted plugin total as a share of the maximum, scaled to 0..10 (rounded)."""
        if not candidates or not fwk.has_score_plugins():
            return {ni.name: 0 for ni in candidates}
        state = CycleState()
        fwk.run_pre_filter_plugins(state, pod, fwk.snapshot.list())  # state Score plugins may read
        if cancelled():
            raise RequestCancelled
        st = fwk.run_pre_score_plugins(state, pod, candidates)
        if st is not None and st.code != Code.SUCCESS:
            raise _RequestError(500, st.message())
        if cancelled():
            raise RequestCancelled
        names, totals, columns, st = fwk.score_columns(state, pod, candidates)
        if st is not None and st.code != Code.SUCCESS:
            raise _RequestError(500, st.message())
        top = sum(MAX_NODE_SCORE * w for _, _, w in columns)
        if top <= 0:
            return {n: 0 for n in names}
        return {n: (t * MAX_EXTENDER_PRIORITY * 2 + top) // (2 * top) for n, t in zip(names, totals, strict=True)}


class _Admission:
    """At most ``workers`` requests computed at once and ``queue`` more waiting for a worker; a request beyond
    those is refused at once (the server is saturated)."""

    def __init__(self, workers: int, queue: int) -> None:
        self.workers = workers
        self.queue = queue
        self.running = 0
        self.waiting = 0
        self._cond = threading.Condition()

    def enter(self, deadline: float) -> str:
        """"ok" (a worker slot is held: call :meth:`leave`), "saturated" or "timeout" (no slot by ``deadline``)."""
        with self._cond:
            if self.running >= self.workers:
                if self.waiting >= self.queue:
                    return "saturated"
                self.waiting += 1
                try:
                    while self.running >= self.workers:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            return "timeout"
                        self._cond.wait(left)
                finally:
                    self.waiting -= 1
            self.running += 1
            return "ok"

    def leave(self) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify()


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() waits for the requests in flight
    block_on_close = True
    request_queue_size = LISTEN_BACKLOG  # socketserver's default of 5 resets bursts of connections
    ssl_context: ssl.SSLContext | None = None
    request_timeout = DEFAULT_REQUEST_TIMEOUT
    read_timeout = DEFAULT_READ_TIMEOUT
    max_connections = DEFAULT_MAX_CONNECTIONS

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        # open connections (kube-scheduler keeps them alive); stopping closes the idle ones at once
        self.connections: set[Any] = set()
        self.connections_lock = threading.Lock()
        self.stopping = False
        self.accepted = 0  # connections given a thread (counted before the thread registers itself)

    def close_idle_connections(self) -> None:
        with self.connections_lock:
            handlers = list(self.connections)
        for h in handlers:
            if not getattr(h, "busy", False):
                with contextlib.suppress(OSError):
                    h.connection.shutdown(socket.SHUT_RDWR)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            full = self.accepted >= self.max_connections
            if not full:
                self.accepted += 1
        if full:
            # refused in the accepting thread: a short canned answer fits the new socket's send buffer
            log.info("%s refused: %d connections open", client_address[0], self.max_connections)
            if self.ssl_context is None:  # over TLS there is no answer without a handshake: only the close
                with contextlib.suppress(OSError):
                    request.settimeout(0.2)
                    request.sendall(_canned(503, f"too many connections (limit {self.max_connections})",
                                            retry_after=True))
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.accepted -= 1

    def finish_request(self, request: Any, client_address: Any) -> None:
        # TLS handshakes happen in the request's thread, bounded by the read timeout, never in accept().
        request.settimeout(min(self.request_timeout, self.read_timeout))
        if self.ssl_context is not None:
            try:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError) as e:
                log.info("TLS handshake with %s failed: %s", client_address[0], e)
                return
        super().finish_request(request, client_address)


class _RequestReader(io.RawIOBase):
    """What a connection's handler reads through: between requests a read may wait ``idle`` seconds; once the
    first byte of a request has come, the request line, headers and body must all arrive within ``limit``
    seconds of it (a client sending a byte now and then cannot hold the connection's thread)."""

    def __init__(self, sock: Any, idle: float, limit: float) -> None:
        self.sock = sock
        self.idle = idle
        self.limit = limit
        self.deadline: float | None = None
        self.expired = False

    def readable(self) -> bool:
        return True

    def next_request(self) -> None:
        self.deadline = None
        self.expired = False

    def readinto(self, buf: Any) -> int:
        if self.deadline is None:
            self.sock.settimeout(self.idle)
            n = int(self.sock.recv_into(buf))
            if n:
                self.deadline = time.monotonic() + self.limit
            return n
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            raise TimeoutError("request not read in time")
        self.sock.settimeout(left)
        try:
            return int(self.sock.recv_into(buf))
        except TimeoutError:
            self.expired = True
            raise


def _canned(status: int, message: str, *, retry_after: bool = False) -> bytes:
    """A whole HTTP/1.1 reply that closes the connection (for answers given outside a handler's flow)."""
    body = _json({"Error": message})
    reason = {400: "Bad Request", 408: "Request Timeout", 503: "Service Unavailable"}.get(status, "Error")
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{'Retry-After: 1' + chr(13) + chr(10) if retry_after else ''}Connection: close\r\n\r\n")
    return head.encode() + body


def _release_memory() -> None:
    """Collect cycles and give freed heap pages back to the system (glibc ``malloc_trim``; elsewhere a no-op)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        with contextlib.suppress(Exception):
            trim(0)


_TRIM: list[Any] = []


def _malloc_trim() -> Any:
    if not _TRIM:
        fn = None
        with contextlib.suppress(Exception):
            name = ctypes.util.find_library("c")
            if name:
                fn = getattr(ctypes.CDLL(name), "malloc_trim", None)
        _TRIM.append(fn)
    return _TRIM[0]


class ExtenderServer:
    """An HTTP(S) extender server for one profile. ``start()`` serves in a background thread (tests,
    embedding), ``serve_forever()`` in the caller's; ``stop()`` shuts down gracefully. ``port=0`` picks a
    free port (see :attr:`url`).

    Bounds: ``workers`` requests are computed at once and ``queue`` more wait for a worker (beyond that: 503
    with ``Retry-After``); ``request_timeout`` bounds each request from the end of its body
    to its answer, waiting included, and cancels its work when passed; ``read_timeout`` bounds reading each
    request (line, headers, body) from its first byte (408, connection closed); ``max_connections`` connections
    are kept open at once (503 beyond); ``max_request_bytes`` bounds a body (413)."""

    def __init__(self, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None, *,
                 address: str = DEFAULT_ADDRESS, profile: str | None = None, registry: Registry | None = None,
                 tls_cert: str | None = None, tls_key: str | None = None, cluster: Any = None,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES, read_timeout: float = DEFAULT_READ_TIMEOUT,
                 workers: int = DEFAULT_WORKERS, queue: int = DEFAULT_QUEUE,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS, strict: bool = False) -> None:
        for name, value, least in (("request_timeout", request_timeout, 0.0), ("read_timeout", read_timeout, 0.0),
                                   ("workers", workers, 1), ("queue", queue, 0),
                                   ("max_connections", max_connections, 1)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < least or (
                    isinstance(least, float) and value <= 0):
                raise ExtenderServerError(f"--{name.replace('_', '-')}: {value!r}: must be "
                                          f"{'a positive number' if isinstance(least, float) else f'at least {least}'}")
        if cluster is not None and isinstance(cluster, str):
            from scheduling_framework.ingest.cluster import load_cluster

            cluster = load_cluster(cluster, strict=strict)
            for w in cluster.warnings:
                log.warning("cluster: %s", w)
        self.extender = PluginExtender(config, profile=profile, registry=registry,
                                       cluster_nodes=cluster.nodes if cluster is not None else (),
                                       cluster_pods=cluster.bound_pods if cluster is not None else (),
                                       objects=cluster.objects if cluster is not None else ())
        self.request_timeout = request_timeout
        self.read_timeout = read_timeout
        self.max_request_bytes = max_request_bytes
        self.admission = _Admission(workers, queue)
        # work threads still running (a cancelled one until it reaches its next check)
        self.active_work = 0
        self._work_lock = threading.Lock()
        host, port = parse_address(address)
        ctx: ssl.SSLContext | None = None
        if tls_cert or tls_key:
            if not (tls_cert and tls_key):
                raise ExtenderServerError("--tls-cert and --tls-key go together")
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                ctx.load_cert_chain(tls_cert, tls_key)
            except (OSError, ssl.SSLError) as e:
                raise ExtenderServerError(f"--tls-cert/--tls-key: {e}") from None
        try:
            self.httpd = _Server((host, port), _handler(self))
        except OSError as e:
            raise ExtenderServerError(f'cannot listen on "{address}": {e.strerror or e}') from None
        self.httpd.ssl_context = ctx
        self.httpd.request_timeout = request_timeout
        self.httpd.read_timeout = read_timeout
        self.httpd.max_connections = max_connections
        self.scheme = "https" if ctx is not None else "http"
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        host = str(host)
        return f"{self.scheme}://{'[' + host + ']' if ':' in host else host}:{port}"

    def start(self) -> ExtenderServer:
        self._thread = threading.Thread(target=self.serve_forever, name="serve-extender", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        log.info("serving extender for profile %s on %s (filter: %s; score: %s)", self.extender.profile.scheduler_name,
                 self.url, ", ".join(self.extender.filter_plugins) or "-",
                 ", ".join(self.extender.score_plugins) or "-")
        if not self.extender.cluster_nodes:
            log.info("no cluster file: nodes come from each request and carry no pods (plugins counting the pods "
                     "on a node see empty nodes)")
        self.httpd.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop accepting, finish the requests in flight (then close their connections), close the socket."""
        self.httpd.stopping = True
        self.httpd.shutdown()
        self.httpd.close_idle_connections()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> ExtenderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # one request ----------------------------------------------------------------------------------
    def handle(self, verb: str, body: bytes, deadline: float | None = None) -> tuple[int, bytes]:
        """(status, JSON body) for a POST of ``body`` to ``.../<verb>``, answered by ``deadline``
        (``time.monotonic()``; default: ``request_timeout`` from now)."""
        if verb not in (FILTER_VERB, PRIORITIZE_VERB):
            return 404, _json({"Error": f'unknown verb "{verb}": this extender serves {FILTER_VERB} and '
                                        f"{PRIORITIZE_VERB}"})
        if deadline is None:
            deadline = time.monotonic() + self.request_timeout
        admitted = self.admission.enter(deadline)
        if admitted == "saturated":
            return 503, _json({"Error": f"busy: {self.admission.workers} requests running and "
                                        f"{self.admission.queue} waiting"})
        if admitted == "timeout":
            return self._late(verb)
        fn: Callable[[Any, Cancel], Any] = self.extender.filter if verb == FILTER_VERB else self.extender.prioritize
        out: dict[str, Any] = {}
        cancel = threading.Event()

        def work() -> None:
            try:
                out["reply"] = fn(_loads(body), cancel.is_set)
            except RequestCancelled:
                log.info("%s cancelled at its deadline", verb)
            except _RequestError as e:
                out["error"] = (e.status, str(e))
            except RecursionError:
                out["error"] = (400, "request body is nested too deeply")
            except Exception as e:  # a plugin bug must not kill the server; the reply says what failed
                log.exception("%s failed", verb)
                out["error"] = (500, f"{type(e).__name__}: {e}")
            finally:
                self.admission.leave()
                if cancel.is_set():
                    # nobody reads the answer: what the work built goes now (an answered large request is
                    # trimmed by its handler once the answer is sent)
                    out.clear()
                    _release_memory()
                with self._work_lock:
                    self.active_work -= 1

        with self._work_lock:
            self.active_work += 1
        worker = threading.Thread(target=work, name=f"extender-{verb}", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            cancel.set()  # the work stops at its next check and frees what it built
            return self._late(verb)
        if "error" in out:
            status, msg = out["error"]
            return (200, _json({"Error": msg})) if verb == FILTER_VERB and status != 400 else (
                status, _json({"Error": msg}))
        return 200, _json(out["reply"])

    def _late(self, verb: str) -> tuple[int, bytes]:
        msg = f"{verb} did not finish within {self.request_timeout:g}s"
        return (200, _json({"Error": msg})) if verb == FILTER_VERB else (503, _json({"Error": msg}))


def _loads(body: bytes) -> Any:
    try:
        return json.loads(body)
    except RecursionError:
        raise _RequestError(400, "request body is not JSON: nested too deeply") from None
    except ValueError as e:
        raise _RequestError(400, f"request body is not JSON: {e}") from None


def _json(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def _handler(server: ExtenderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as kube-scheduler's client expects
        # headers and body go out in two writes: without TCP_NODELAY the body waits for the client's delayed ACK
        disable_nagle_algorithm = True
        server_version = "scheduling-framework-extender"

        busy = False
        reader: _RequestReader

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s " + format, self.client_address[0], *args)

        def setup(self) -> None:
            super().setup()
            # every read goes through the request deadline (slow clients cannot hold the thread)
            self.rfile.close()
            self.reader = _RequestReader(self.connection, server.request_timeout, server.read_timeout)
            self.rfile = io.BufferedReader(self.reader, 65536)
            with server.httpd.connections_lock:
                server.httpd.connections.add(self)

        def finish(self) -> None:
            with server.httpd.connections_lock:
                server.httpd.connections.discard(self)
            super().finish()

        def handle_one_request(self) -> None:
            self.busy = False  # waiting for a request line: a stopping server may close the connection
            self.reader.next_request()
            super().handle_one_request()
            if self.reader.expired:
                # the request line, headers or body did not arrive in time: say so, then close
                log.info("%s request not read within %gs", self.client_address[0], server.read_timeout)
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.wfile.write(_canned(408, f"request not read within {server.read_timeout:g}s"))

        def parse_request(self) -> bool:
            self.busy = True
            return super().parse_request()

        def _reply(self, status: int, body: bytes, started: float) -> None:
            self.send_response(status)
            if server.httpd.stopping or self.close_connection:
                self.close_connection = True
                self.send_header("Connection", "close")
            if status == 503:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Type", "application/json" if body[:1] in (b"{", b"[") else "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            log.info("%s %s %s %d %dB %.1fms", self.client_address[0], self.command, self.path, status, len(body),
                     (time.monotonic() - started) * 1000)

        def do_GET(self) -> None:
            started = time.monotonic()
            if self.path.rstrip("/").endswith("/healthz") or self.path == "/healthz":
                self._reply(200, b"ok", started)
            else:
                self._reply(404, b"not found", started)

        def do_POST(self) -> None:
            started = time.monotonic()
            try:
                self._post(started)
            except OSError:
                self.close_connection = True  # the client went away: nobody to answer
            except Exception as e:  # never drop a connection without an answer
                log.exception("POST %s failed", self.path)
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self._reply(500, _json({"Error": f"{type(e).__name__}: {e}"}), started)

        def _post(self, started: float) -> None:
            length = self.headers.get("Content-Length")
            if length is None:
                self.close_connection = True
                self._reply(411, _json({"Error": "Content-Length required"}), started)
                return
            text = length.strip()
            # str.isdigit() accepts digits of every script ("²", "٣"): HTTP allows ASCII digits only
            if not (text.isascii() and text.isdigit()):
                self.close_connection = True
                self._reply(400, _json({"Error": f"invalid Content-Length {length!r}: expected a number of "
                                                 "bytes in ASCII digits"}), started)
                return
            n = int(text)
            if n > server.max_request_bytes:
                self.close_connection = True
                self._reply(413, _json({"Error": f"request body of {n} bytes exceeds the limit of "
                                                 f"{server.max_request_bytes}"}), started)
                return
            try:
                body = self.rfile.read(n)
            except TimeoutError:
                self.close_connection = True  # handle_one_request answers 408
                return
            if len(body) < n:
                self.close_connection = True  # the client closed mid-body
                return
            self.reader.deadline = None  # read: the request timeout runs from here
            status, out = server.handle(self.path.rstrip("/").rsplit("/", 1)[-1], body,
                                        time.monotonic() + server.request_timeout)
            self._reply(status, out, started)
            if n >= _TRIM_AFTER_BYTES:
                del body, out
                _release_memory()

    return Handler


def serve(config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None, **kwargs: Any) -> None:
    """Serve until SIGTERM or SIGINT (then finish the requests in flight and return). ``kwargs`` are
    :class:`ExtenderServer`'s."""
    import signal

    server = ExtenderServer(config, **kwargs)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.start()
        while not stop.wait(0.5):
            pass
        log.info("shutting down: finishing the requests in flight")
    finally:
        server.stop()
        for s, h in previous.items():
            signal.signal(s, h)
