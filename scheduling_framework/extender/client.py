"""Calling scheduler extenders over HTTP, as kube-scheduler's HTTPExtender does (pkg/scheduler/extender.go).

An extender is a web service kube-scheduler POSTs JSON to, one URL per verb (``<urlPrefix>/<verb>``):
``filterVerb`` after the Filter plugins, ``prioritizeVerb`` next to the Score plugins, ``preemptVerb`` to
narrow preemption victims, ``bindVerb`` to bind instead of the bind plugins. :class:`HTTPExtender` is one
configured entry of ``extenders:``; :func:`build_extenders` makes them for a configuration, in kube-scheduler's
order (ignorable extenders last).

Transport: the standard library's ``http.client``, with a small pool of keep-alive connections per extender.
The protocol is one JSON POST per call to a few fixed URLs; ``http.client`` + ``ssl`` give keep-alive,
TLS with a custom CA, client certificates and SNI override, and socket timeouts with no dependency (the
run-time dependency list stays as DESIGN.md wants). requests / urllib3 / httpx would add packages for what
this protocol does not use (redirects, proxies, cookies, HTTP/2).

Every call is bounded by ``httpTimeout`` (default 5 s, as upstream) as a whole, from connecting to the last byte
of the reply, as Go's ``http.Client.Timeout`` is: a slow, silent or trickling extender cannot hang a run. Errors
raise :class:`ExtenderError` with upstream's message where upstream's names the extender (``failed filter with
extender at URL ..., code 500``, ``Post "<url>": context deadline exceeded ...``) and ``extender "<urlPrefix>": ...``
before it otherwise.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import http.client
import io
import json
import os
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import attrs

from scheduling_framework.api.pod import Pod
from scheduling_framework.errors import ConfigError, SchedulingFrameworkError
from scheduling_framework.extender.types import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    MetaVictims,
    WireError,
    WireVictims,
    host_priority_list_from_json,
)
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.warning_list import Warnings

#: upstream DefaultExtenderTimeout
DEFAULT_EXTENDER_TIMEOUT = 5.0
#: Largest reply read from an extender (a reply with every node of a 5,000-node cluster fits many times).
MAX_REPLY_BYTES = 64 * 1024 * 1024
#: Keep-alive connections kept per extender (kube-scheduler calls an extender from one cycle at a time,
#: plus the binding goroutines).
_POOL_SIZE = 4


class ExtenderError(SchedulingFrameworkError):
    """A call to an extender failed: unreachable, timed out, HTTP status other than 200, a reply that is
    not JSON or not of the expected shape, or an error the extender reported. ``extender`` is its name
    (the urlPrefix), ``verb`` the verb called."""

    def __init__(self, extender: str, verb: str, message: str) -> None:
        self.extender = extender
        self.verb = verb
        super().__init__(message)


class VictimsLike(Protocol):
    """What :meth:`HTTPExtender.process_preemption` reads of the preemption plugin's victims."""

    @property
    def pods(self) -> Sequence[Pod]: ...

    @property
    def num_pdb_violations(self) -> int: ...


class NodeInfoLister(Protocol):
    def get(self, node_name: str) -> NodeInfo: ...


@attrs.frozen
class ManagedResource:
    """An extended resource an extender manages; ``ignored_by_scheduler``: NodeResourcesFit does not check it."""

    name: str
    ignored_by_scheduler: bool = False


@attrs.frozen
class ExtenderConfig:
    """One entry of a KubeSchedulerConfiguration's ``extenders:`` (defaults as upstream)."""

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: Mapping[str, Any] | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], path: str = "extenders[0]") -> ExtenderConfig:
        """From the (loaded, validated) camelCase entry; ``path`` names it in errors."""
        from scheduling_framework.api._field import parse_duration

        timeout = DEFAULT_EXTENDER_TIMEOUT
        raw_timeout = d.get("httpTimeout")
        if raw_timeout is not None:
            seconds = parse_duration(str(raw_timeout))
            if seconds is None or seconds < 0:
                raise ConfigError(f'{path}.httpTimeout: Invalid value: "{raw_timeout}": not a duration')
            timeout = seconds if seconds > 0 else DEFAULT_EXTENDER_TIMEOUT
        resources = tuple(ManagedResource(str(r.get("name", "")), bool(r.get("ignoredByScheduler")))
                          for r in d.get("managedResources") or ())
        tls = d.get("tlsConfig")
        return cls(url_prefix=str(d.get("urlPrefix", "")), filter_verb=str(d.get("filterVerb", "")),
                   preempt_verb=str(d.get("preemptVerb", "")), prioritize_verb=str(d.get("prioritizeVerb", "")),
                   bind_verb=str(d.get("bindVerb", "")), weight=int(d.get("weight", 0) or 0),
                   enable_https=bool(d.get("enableHTTPS")), tls_config=dict(tls) if tls else None,
                   http_timeout=timeout, node_cache_capable=bool(d.get("nodeCacheCapable")),
                   managed_resources=resources, ignorable=bool(d.get("ignorable")))


class _DeadlineSocket:
    """A connected socket whose every write and read gives up at the owning connection's ``deadline``
    (``time.monotonic()``). http.client reads through a buffered file that loops over ``recv`` until it
    has what it asked for, so a per-socket timeout alone bounds only each ``recv``: a server trickling one
    byte at a time would hold the call forever. Here each ``recv`` gets only the time left."""

    __slots__ = ("_conn", "_sock")

    def __init__(self, sock: socket.socket, conn: _BoundedConnection) -> None:
        self._sock = sock
        self._conn = conn

    def left(self) -> float:
        left = self._conn.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline exceeded")
        return left

    def sendall(self, data: Any) -> None:
        # sendall's timeout bounds the whole send (not each chunk) since Python 3.5
        self._sock.settimeout(self.left())
        self._sock.sendall(data)

    def recv_into(self, buf: Any) -> int:
        self._sock.settimeout(self.left())
        return self._sock.recv_into(buf)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self))

    def settimeout(self, value: float | None) -> None:
        self._sock.settimeout(value)

    def close(self) -> None:
        self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket) -> None:
        self._dsock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        return self._dsock.recv_into(buf)


class _BoundedConnection(http.client.HTTPConnection):
    """An HTTP connection bounded by ``deadline`` (set before each request) from connect to the last byte."""

    deadline: float = 0.0

    def connect(self) -> None:
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self)


class _TLSConnection(_BoundedConnection):
    """The same over TLS, presenting ``server_name`` (tlsConfig.serverName) for SNI and hostname checks."""

    default_port = http.client.HTTPS_PORT

    def __init__(self, host: str, port: int | None, *, timeout: float, context: ssl.SSLContext,
                 server_name: str) -> None:
        super().__init__(host, port, timeout=timeout)
        self._server_name = server_name
        self._ctx = context

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        # the handshake's timeout (the time left) bounds the whole handshake, as sendall's does
        self.sock.settimeout(max(self.deadline - time.monotonic(), 0.001))
        self.sock = _DeadlineSocket(self._ctx.wrap_socket(self.sock, server_hostname=self._server_name), self)


def _pem(value: str, what: str, path: str) -> bytes:
    """tlsConfig *Data fields are []byte in Go (base64 in YAML); PEM text is accepted as is."""
    if value.lstrip().startswith("-----BEGIN"):
        return value.encode()
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{path}.tlsConfig.{what}: Invalid value: not base64-encoded PEM data") from None


def _tls_context(cfg: ExtenderConfig, path: str) -> ssl.SSLContext:
    tls: Mapping[str, Any] = cfg.tls_config or {}
    ca_file = str(tls.get("caFile") or "")
    ca_data = _pem(str(tls["caData"]), "caData", path) if tls.get("caData") else b""
    ctx = ssl.create_default_context() if not (ca_file or ca_data) else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        if ca_file:
            ctx.load_verify_locations(cafile=ca_file)
        if ca_data:
            ctx.load_verify_locations(cadata=ca_data.decode("ascii", "replace"))
        # upstream: HTTPS without a CA skips verification
        if tls.get("insecure") or (cfg.enable_https and not (ca_file or ca_data)):
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        cert_file, key_file = str(tls.get("certFile") or ""), str(tls.get("keyFile") or "")
        if tls.get("certData") or tls.get("keyData"):
            cert = _pem(str(tls.get("certData") or ""), "certData", path)
            key = _pem(str(tls.get("keyData") or ""), "keyData", path)
            _load_chain_from_data(ctx, cert, key)
        elif cert_file or key_file:
            ctx.load_cert_chain(cert_file, key_file or None)
    except (OSError, ssl.SSLError, ValueError) as e:
        raise ConfigError(f"{path}.tlsConfig: {e}") from None
    return ctx


def _load_chain_from_data(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # ssl loads client certificates from files only: a private temporary file, removed at once.
    fd, name = tempfile.mkstemp(suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(cert + b"\n" + key)
        ctx.load_cert_chain(name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


class HTTPExtender:
    """One configured extender. Thread-safe: calls may come from the scheduling cycle and binding threads."""

    def __init__(self, config: ExtenderConfig | Mapping[str, Any], path: str = "extenders[0]") -> None:
        cfg = config if isinstance(config, ExtenderConfig) else ExtenderConfig.from_dict(config, path)
        self.config = cfg
        self.weight = cfg.weight
        self.timeout = cfg.http_timeout
        self._managed = frozenset(r.name for r in cfg.managed_resources)
        self._base = cfg.url_prefix.rstrip("/")
        parts = urlsplit(cfg.url_prefix)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f'{path}.urlPrefix: Invalid value: "{cfg.url_prefix}": '
                              "must be an http:// or https:// URL with a host")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        try:
            self._port = parts.port or (443 if self._https else 80)
        except ValueError:
            raise ConfigError(f'{path}.urlPrefix: Invalid value: "{cfg.url_prefix}": bad port') from None
        self._path = parts.path.rstrip("/")
        self._ssl = _tls_context(cfg, path) if self._https else None
        self._server_name = str((cfg.tls_config or {}).get("serverName") or "") or self._host
        self._idle: list[_BoundedConnection] = []
        self._lock = threading.Lock()
        # Where skipped failures are reported (the Scheduler's or Simulator's warnings); None: nowhere.
        self.warnings: Warnings | None = None

    # what the extender does ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The extender's name in messages and score explanations: its urlPrefix (as upstream)."""
        return self.config.url_prefix

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def is_interested(self, pod: Pod) -> bool:
        """True when the extender manages no resources, or the pod requests or limits one it manages
        (in a container or an init container)."""
        managed = self._managed
        if not managed:
            return True
        for c in (*pod.spec.containers, *pod.spec.init_containers):
            res = c.resources
            if any(n in managed for n in res.requests) or any(n in managed for n in res.limits):
                return True
        return False

    # verbs ------------------------------------------------------------------------------------------
    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> ExtenderArgs:
        # The manifests as they are (json.dumps only reads them): copying 500 Node objects per call would cost
        # more than the call.
        if self.config.node_cache_capable:
            return ExtenderArgs(pod.raw_manifest(), None, [ni.name for ni in nodes])
        return ExtenderArgs(pod.raw_manifest(), [ni.node.raw_manifest() for ni in nodes if ni.node is not None],
                            None)

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]
               ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """(nodes that pass, failed node -> message, failed-and-unresolvable node -> message)."""
        verb = self.config.filter_verb
        if not verb:
            return list(nodes), {}, {}
        reply = self.send(verb, self._args(pod, nodes).to_json())
        result = self._decode(verb, ExtenderFilterResult.from_json, reply)
        if result.error:
            raise ExtenderError(self.name, verb, f'extender "{self.name}": {result.error}')
        if self.config.node_cache_capable and result.node_names is not None:
            names = result.node_names
        elif result.nodes is not None:
            names = [str((n.get("metadata") or {}).get("name", "")) if isinstance(n.get("metadata"), Mapping)
                     else "" for n in result.nodes]
        else:
            names = []
        by_name = {ni.name: ni for ni in nodes}
        passed: list[NodeInfo] = []
        for n in names:
            ni = by_name.get(n)
            if ni is None:
                raise ExtenderError(self.name, verb, f'extender "{self.name}" claims a filtered node "{n}" which '
                                                     "is not found in the input node list")
            passed.append(ni)
        return passed, result.failed_nodes or {}, result.failed_and_unresolvable_nodes or {}

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[HostPriority], int]:
        """(each node's score in [0, 10], the extender's weight); weight 0 without a prioritizeVerb."""
        verb = self.config.prioritize_verb
        if not verb:
            return [HostPriority(ni.name, 0) for ni in nodes], 0
        reply = self.send(verb, self._args(pod, nodes).to_json())
        return self._decode(verb, host_priority_list_from_json, reply), self.weight

    def process_preemption(self, pod: Pod, node_name_to_victims: Mapping[str, VictimsLike],
                           node_infos: NodeInfoLister) -> dict[str, tuple[list[Pod], int]]:
        """The candidates the extender keeps: node -> (victim pods, PDB violations). Victims come back as
        UIDs and are resolved against the pods on the node (an unknown UID or node is an error)."""
        verb = self.config.preempt_verb
        if not verb:
            raise ExtenderError(self.name, "preempt", f"preempt verb is not defined for extender {self.name} "
                                                      "but run into ProcessPreemption")
        if self.config.node_cache_capable:
            args = ExtenderPreemptionArgs(pod.raw_manifest(), None, {
                n: MetaVictims(tuple(p.uid for p in v.pods), v.num_pdb_violations)
                for n, v in node_name_to_victims.items()})
        else:
            args = ExtenderPreemptionArgs(pod.raw_manifest(), {
                n: WireVictims(tuple(p.raw_manifest() for p in v.pods), v.num_pdb_violations)
                for n, v in node_name_to_victims.items()}, None)
        result = self._decode(verb, ExtenderPreemptionResult.from_json, self.send(verb, args.to_json()))
        out: dict[str, tuple[list[Pod], int]] = {}
        for node_name, mv in (result.node_name_to_meta_victims or {}).items():
            try:
                ni = node_infos.get(node_name)
            except SchedulingFrameworkError as e:
                raise ExtenderError(self.name, verb, f'extender "{self.name}": {e}') from None
            on_node = {pi.pod.uid: pi.pod for pi in ni.pods}
            pods: list[Pod] = []
            for uid in (mv.pod_uids if mv is not None else ()):
                p = on_node.get(uid)
                if p is None:
                    raise ExtenderError(self.name, verb,
                                        f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                                        f"{node_name}, but the pod is not found on that node")
                pods.append(p)
            out[node_name] = (pods, mv.num_pdb_violations if mv is not None else 0)
        return out

    def bind(self, pod: Pod, node_name: str) -> None:
        """Ask the extender to bind ``pod`` to ``node_name``; raises ExtenderError when it does not."""
        verb = self.config.bind_verb
        if not verb:
            raise ExtenderError(self.name, "bind", "unexpected empty bindVerb in extender")
        args = ExtenderBindingArgs(pod.name, pod.namespace, pod.uid, node_name)
        result = self._decode(verb, ExtenderBindingResult.from_json, self.send(verb, args.to_json()))
        if result.error:
            raise ExtenderError(self.name, verb, f'extender "{self.name}": {result.error}')

    def _decode(self, verb: str, decode: Any, reply: Any) -> Any:
        try:
            return decode(reply)
        except WireError as e:
            raise ExtenderError(self.name, verb, f'extender "{self.name}": {verb} reply: {e}') from None

    # skipped failures (for the run's warnings) -------------------------------------------------------
    def note_skipped(self, verb: str, err: BaseException) -> None:
        """Record a failure the scheduler skipped (an ignorable extender, a prioritize error) in ``warnings``:
        kube-scheduler only logs them, but a run that silently ignored an extender would mislead."""
        sink = self.warnings
        if sink is not None:
            with self._lock:
                group = f'extender "{self.name}": {verb} failed and was skipped, as kube-scheduler does'
                sink.add_item(group, str(err))

    # HTTP ----------------------------------------------------------------------------------------------
    def url(self, verb: str) -> str:
        return f"{self._base}/{verb}"

    def send(self, verb: str, payload: Any) -> Any:
        """POST ``payload`` as JSON to ``<urlPrefix>/<verb>``; the decoded JSON reply. The whole call (connect,
        TLS handshake, sending, the reply's headers and body, the retry on a stale kept-alive connection) ends
        by httpTimeout, as Go's ``http.Client.Timeout`` bounds kube-scheduler's."""
        url = self.url(verb)
        body = json.dumps(payload, separators=(",", ":"), default=_plain).encode()
        deadline = time.monotonic() + self.timeout
        conn, reused = self._acquire(deadline)
        try:
            try:
                status, data = self._exchange(conn, verb, body, deadline)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not reused:
                    raise
                # A kept-alive connection the server had closed: one retry on a new connection, as Go does.
                conn.close()
                conn, reused = self._new_connection(deadline), False
                status, data = self._exchange(conn, verb, body, deadline)
        except _BodyTimeout:
            conn.close()
            # Go's error for a body cut by Client.Timeout (not wrapped in a url.Error: it comes from reading)
            raise ExtenderError(self.name, verb, "context deadline exceeded "
                                                 "(Client.Timeout or context cancellation while reading body)"
                                ) from None
        except TimeoutError:
            conn.close()
            raise ExtenderError(self.name, verb, f'Post "{url}": context deadline exceeded '
                                                 "(Client.Timeout exceeded while awaiting headers)") from None
        except ConnectionRefusedError:
            conn.close()
            raise ExtenderError(self.name, verb, f'Post "{url}": dial tcp {self._host}:{self._port}: connect: '
                                                 "connection refused") from None
        except ssl.SSLError as e:
            conn.close()
            raise ExtenderError(self.name, verb, f'Post "{url}": tls: {e.reason or e}') from None
        except (OSError, http.client.HTTPException, _TooLarge) as e:
            conn.close()
            detail = str(e) or type(e).__name__
            if isinstance(e, socket.gaierror):
                detail = f"dial tcp: lookup {self._host}: {e.strerror}"
            raise ExtenderError(self.name, verb, f'Post "{url}": {detail}') from None
        if status != 200:
            raise ExtenderError(self.name, verb, f"failed {verb} with extender at URL {url}, code {status}")
        try:
            return json.loads(data)
        except ValueError as e:
            raise ExtenderError(self.name, verb,
                                f'extender "{self.name}": {verb} reply is not valid JSON: {e}') from None

    def _new_connection(self, deadline: float) -> _BoundedConnection:
        remaining = max(deadline - time.monotonic(), 0.001)
        conn: _BoundedConnection
        if self._ssl is not None:
            conn = _TLSConnection(self._host, self._port, timeout=remaining, context=self._ssl,
                                  server_name=self._server_name)
        else:
            conn = _BoundedConnection(self._host, self._port, timeout=remaining)
        conn.deadline = deadline
        return conn

    def _acquire(self, deadline: float) -> tuple[_BoundedConnection, bool]:
        with self._lock:
            if self._idle:
                conn = self._idle.pop()
                conn.deadline = deadline
                return conn, True
        return self._new_connection(deadline), False

    def _release(self, conn: _BoundedConnection) -> None:
        with self._lock:
            if len(self._idle) < _POOL_SIZE:
                self._idle.append(conn)
                return
        conn.close()

    def _exchange(self, conn: _BoundedConnection, verb: str, body: bytes, deadline: float) -> tuple[int, bytes]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn.timeout = left  # bounds connect(); every later read and write checks the deadline itself
        conn.request("POST", f"{self._path}/{verb}", body=body,
                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        resp = conn.getresponse()
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                chunk = resp.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise _TooLarge(f"reply larger than {MAX_REPLY_BYTES} bytes")
                chunks.append(chunk)
        except TimeoutError:
            raise _BodyTimeout from None
        if resp.will_close:
            conn.close()
        else:
            self._release(conn)
        return resp.status, b"".join(chunks)

    def close(self) -> None:
        """Close the kept-alive connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"


class _TooLarge(Exception):
    pass


class _BodyTimeout(Exception):
    """The deadline passed while the reply's body was being read."""


def _plain(obj: Any) -> Any:
    """json.dumps fallback: manifests may be read-only mappings rather than dicts."""
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def extender_configs(config: Any) -> list[dict[str, Any]]:
    """The ``extenders:`` entries of a loaded KubeSchedulerConfiguration (its defaulted document)."""
    raw = getattr(config, "raw", None) or {}
    return [dict(e) for e in raw.get("extenders") or ()]


def build_extenders(config: Any) -> list[HTTPExtender]:
    """The HTTPExtenders of a loaded configuration, non-ignorable ones first (kube-scheduler's order:
    an ignorable extender that fails must not stop the others from being asked)."""
    entries = extender_configs(config)
    built = [HTTPExtender(e, f"extenders[{i}]") for i, e in enumerate(entries)]
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]


def ignored_resources(config: Any) -> list[str]:
    """Managed resources marked ``ignoredByScheduler``: NodeResourcesFit does not check them."""
    out: list[str] = []
    for e in extender_configs(config):
        for r in e.get("managedResources") or ():
            if r.get("ignoredByScheduler"):
                out.append(str(r.get("name", "")))
    return out
