"""Pods held at Permit: each waits until every plugin that asked it to wait allows it, one rejects it,
or a plugin's timeout passes."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from scheduling_framework.api.pod import Pod
from scheduling_framework.status import Code, Status


class WaitingPod:
    """A pod waiting at Permit. ``allow(plugin)`` / ``reject(plugin, msg)`` may be called from any thread."""

    def __init__(self, pod: Pod, plugin_timeouts: dict[str, float]) -> None:
        self.pod = pod
        self._pending = set(plugin_timeouts)
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._status: Status | None = None
        self._timers: dict[str, threading.Timer] = {}
        for plugin, timeout in plugin_timeouts.items():
            t = threading.Timer(timeout, self.reject, (plugin, f"rejected due to timeout after waiting {_dur(timeout)} "
                                                               f"at plugin {plugin}"))
            t.daemon = True
            self._timers[plugin] = t
            t.start()

    def get_pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        with self._lock:
            self._pending.discard(plugin)
            timer = self._timers.pop(plugin, None)
            if timer is not None:
                timer.cancel()  # an allowed plugin's timeout no longer applies
            if self._pending or self._done.is_set():
                return
            self._finish(Status(Code.SUCCESS))

    def reject(self, plugin: str, msg: str) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._finish(Status(Code.UNSCHEDULABLE, msg, plugin=plugin))

    def _finish(self, status: Status) -> None:
        self._status = status
        for t in self._timers.values():
            t.cancel()
        self._done.set()

    def wait(self, timeout: float | None = None) -> Status:
        self._done.wait(timeout)
        with self._lock:
            if self._status is None:
                return Status(Code.ERROR, f"waiting on permit for pod {self.pod.key} did not finish")
            return self._status


def _dur(seconds: float) -> str:
    # Render like Go's time.Duration for the common cases ("10s", "1m0s", "500ms").
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    if seconds < 60:
        return f"{seconds:g}s"
    m, s = divmod(seconds, 60)
    if m < 60:
        return f"{int(m)}m{s:g}s"
    h, m = divmod(m, 60)
    return f"{int(h)}h{int(m)}m{s:g}s"


class WaitingPodsMap:
    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, wp: WaitingPod) -> None:
        with self._lock:
            self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
