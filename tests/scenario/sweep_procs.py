"""Helpers for the sweep tests that run real processes: a slow sweep, the CLI in a child process, /proc scans."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MARK = "SF_SWEEP_TEST_MARK"


def slow_sweep(tmp: Path, pods: int = 4000, seeds: int = 2, nodes: int = 60, name: str = "slow") -> Path:
    """A sweep of ``seeds`` scenarios that each schedule ``pods`` pods (about 0.4 ms a pod on one core)."""
    doc = {"kind": "Sweep", "name": name, "seeds": seeds, "scenario": {
        "kind": "Scenario",
        "templates": {
            "nodes": {"w": {"status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}},
            "pods": {"p": {"spec": {"containers": [{"name": "c", "image": "i",
                                                    "resources": {"requests": {"cpu": "100m"}}}]}}}},
        "steps": [{"op": "createNodes", "template": "w", "count": nodes},
                  {"op": "createPods", "template": "p", "count": pods}]}}
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


class Cli:
    """``scheduling-framework ARGS`` in a child process (its own session), marked in its environment so that
    every process it starts can be found afterwards."""

    def __init__(self, args: Sequence[str], cwd: Path, limit_file_size: int | None = None) -> None:
        self.mark = uuid.uuid4().hex
        env = {**os.environ, MARK: self.mark, "PYTHONPATH": str(ROOT)}

        def limits() -> None:
            if limit_file_size is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))

        code = "import sys; from scheduling_framework.cli import main; sys.exit(main(sys.argv[1:]))"
        self.proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                     preexec_fn=limits if limit_file_size is not None else None)

    def wait(self, timeout: float = 300) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def signal(self, sig: int, group: bool = False) -> None:
        if group:  # as a terminal's Ctrl-C: the whole foreground process group
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)

    def leftovers(self, grace: float = 15.0) -> list[int]:
        """Processes still carrying this run's mark after ``grace`` seconds (none is the goal)."""
        deadline = time.monotonic() + grace
        while True:
            left = marked(self.mark)
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def kill_all(self) -> None:
        for pid in marked(self.mark):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def marked(mark: str) -> list[int]:
    needle = f"{MARK}={mark}".encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as fh:
                if needle in fh.read() and _state(int(d)) != "Z":
                    out.append(int(d))
        except OSError:
            continue
    return out


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _state(pid: int) -> str:
    fields = _stat(pid)
    return "?" if fields is None else fields[0]


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` so far (0 when it is gone)."""
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _ppid(pid: int) -> int:
    fields = _stat(pid)
    return -1 if fields is None else int(fields[1])


def pool_workers(mark: str) -> list[int]:
    """The sweep's pool workers: forked by the fork server (their parent runs multiprocessing.forkserver)."""
    pids = marked(mark)
    return sorted(p for p in pids if "forkserver" in _cmdline(_ppid(p)) and _state(p) != "Z")


def busy_workers(mark: str, count: int, among: Sequence[int] | None = None) -> list[int] | None:
    """``count`` pool workers (of ``among``, if given) that are running a task, or None while there are fewer.

    A worker killed before the driver has handed it its task costs no attempt (the task never started), so a
    test that means to kill a running task waits for this: a scenario takes seconds of CPU, a forked worker
    starts in milliseconds.
    """
    pids = [p for p in pool_workers(mark) if among is None or p in among]
    busy = [p for p in pids if cpu_seconds(p) >= 0.3]
    return busy if len(busy) == count else None


def ray_workers(mark: str, name: str) -> list[int]:
    """Ray worker processes running a task of function ``name`` (Ray titles them ``ray::NAME``)."""
    return sorted(p for p in marked(mark) if _cmdline(p).startswith(f"ray::{name}"))


def wait_for(what: Callable[[], Any], timeout: float = 120.0, every: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def jsonl_rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "a cut-short last line was left"
    return [json.loads(line) for line in text.splitlines()]
