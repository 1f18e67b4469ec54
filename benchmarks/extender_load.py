"""A bounded load test of ``scheduling-framework serve-extender`` on loopback (the figures in docs/extenders.md).

Starts the server as a subprocess (so its resident memory can be read from /proc), then:

1. ``--clients`` keep-alive clients (spread over ``--procs`` processes) POST a filter request with
   ``--nodes`` full Node objects, one after another, for ``--seconds``: requests/s, p50/p99 latency, HTTP
   statuses, connection errors by kind;
2. ``--heavy`` requests of ``--heavy-nodes`` nodes, each cut by the server's ``--request-timeout``: the
   server's RSS before, at its peak and after.

    python -m benchmarks.extender_load --clients 32 --seconds 20 --heavy 3 --heavy-nodes 100000

Timings depend on the machine and on whatever else runs on it: say which when quoting them.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any


def node(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"n-{i}", "labels": {"kubernetes.io/hostname": f"n-{i}", "zone": f"z{i % 3}"}},
            "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def request_body(nodes: int) -> bytes:
    pod = {"metadata": {"name": "web", "namespace": "default", "uid": "u1"},
           "spec": {"containers": [{"name": "c", "image": "nginx",
                                    "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]}}
    return json.dumps({"Pod": pod, "Nodes": {"items": [node(i) for i in range(nodes)]}, "NodeNames": None},
                      separators=(",", ":")).encode()


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _client_proc(port: int, threads: int, seconds: float, body: bytes, out: Any) -> None:
    lat: list[float] = []
    statuses: dict[int, int] = {}
    errors: dict[str, int] = {}
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def one() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < end:
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/filter", body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                continue
            dt = time.perf_counter() - t0
            with lock:
                lat.append(dt)
                statuses[resp.status] = statuses.get(resp.status, 0) + 1
        conn.close()

    ts = [threading.Thread(target=one) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((lat, statuses, errors))


def load(port: int, clients: int, procs: int, seconds: float, nodes: int) -> dict[str, Any]:
    body = request_body(nodes)
    q: Any = multiprocessing.Queue()
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    ps = [multiprocessing.Process(target=_client_proc, args=(port, n, seconds, body, q)) for n in per if n]
    t0 = time.monotonic()
    for p in ps:
        p.start()
    lat: list[float] = []
    statuses: dict[int, int] = {}
    errors: dict[str, int] = {}
    for _ in ps:
        pl, ps_, pe = q.get()
        lat += pl
        for k, v in ps_.items():
            statuses[k] = statuses.get(k, 0) + v
        for k, v in pe.items():
            errors[k] = errors.get(k, 0) + v
    for p in ps:
        p.join()
    wall = time.monotonic() - t0
    lat.sort()
    return {"requests": len(lat), "seconds": round(wall, 1), "rps": round(len(lat) / seconds, 1),
            "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
            "p99_ms": round(1000 * lat[int(len(lat) * 0.99)], 1) if lat else None,
            "statuses": statuses, "errors": errors}


def heavy(port: int, count: int, nodes: int, pid: int) -> dict[str, Any]:
    body = request_body(nodes)
    before = rss_kib(pid)
    peak = before
    replies = []
    for _ in range(count):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        done = threading.Event()

        def watch(done: threading.Event = done) -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, rss_kib(pid))
                time.sleep(0.05)

        w = threading.Thread(target=watch)
        w.start()
        t0 = time.monotonic()
        conn.request("POST", "/filter", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        replies.append((resp.status, json.loads(resp.read()).get("Error"), round(time.monotonic() - t0, 2)))
        conn.close()
        time.sleep(2.0)  # the cancelled work reaches its next check and lets go of its memory
        done.set()
        w.join()
    time.sleep(1.0)
    return {"body_bytes": len(body), "replies": replies, "rss_before_kib": before, "rss_peak_kib": peak,
            "rss_after_kib": rss_kib(pid)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--procs", type=int, default=4, help="client processes the clients are spread over")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--nodes", type=int, default=10, help="nodes per filter request of the load phase")
    ap.add_argument("--heavy", type=int, default=0, help="requests cut by the request timeout, after the load")
    ap.add_argument("--heavy-nodes", type=int, default=100_000)
    ap.add_argument("--request-timeout", type=float, default=2.0)
    ap.add_argument("--server-args", default="", help="more serve-extender flags, space-separated")
    args = ap.parse_args(argv)

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cmd = [sys.executable, "-m", "scheduling_framework", "serve-extender", "--address", f"127.0.0.1:{port}",
           "--request-timeout", str(args.request_timeout), *args.server_args.split()]
    server = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        load(port, 4, 1, 1.0, args.nodes)  # warm up (imports, first frameworks)
        report: dict[str, Any] = {"cpus": os.cpu_count(), "loadavg_before": os.getloadavg()}
        report["rss_before_load_kib"] = rss_kib(server.pid)
        report["load"] = load(port, args.clients, args.procs, args.seconds, args.nodes)
        report["rss_after_load_kib"] = rss_kib(server.pid)
        if args.heavy:
            report["heavy"] = heavy(port, args.heavy, args.heavy_nodes, server.pid)
        report["loadavg_after"] = os.getloadavg()
        print(json.dumps(report, indent=1))
    finally:
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
