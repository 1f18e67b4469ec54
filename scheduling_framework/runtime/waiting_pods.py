"""Pods held at Permit: each waits until every plugin that asked it to wait allows it, one rejects it,
or a plugin's timeout passes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from scheduling_framework.api.pod import Pod
from scheduling_framework.status import Code, Status


class WaitingPod:
    """A pod waiting at Permit. ``allow(plugin)`` / ``reject(plugin, msg)`` may be called from any thread.

    Each waiting plugin's timeout rejects the pod when it passes: on a real-time timer by default, or, given
    ``clock`` (a virtual clock), when whoever moves that clock calls :meth:`expire` (the Scheduler does, as it
    lets backoffs pass)."""

    def __init__(self, pod: Pod, plugin_timeouts: dict[str, float],
                 clock: Callable[[], float] | None = None) -> None:
        self.pod = pod
        self._pending = set(plugin_timeouts)
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._status: Status | None = None
        self._timers: dict[str, threading.Timer] = {}
        self._timeouts = dict(plugin_timeouts)
        self._deadlines: dict[str, float] = {}
        # Told when the wait ends (WaitingPodsMap counts finished waits; see WaitingPodsMap.finished).
        self.on_finish: Callable[[], None] | None = None
        if clock is not None:
            now = clock()
            self._deadlines = {plugin: now + timeout for plugin, timeout in plugin_timeouts.items()}
            return
        for plugin, timeout in plugin_timeouts.items():
            t = threading.Timer(timeout, self.reject, (plugin, _timeout_message(plugin, timeout)))
            t.daemon = True
            self._timers[plugin] = t
            t.start()

    def done(self) -> bool:
        """Whether the pod was allowed or rejected (the wait is over)."""
        return self._done.is_set()

    def next_deadline(self) -> float | None:
        """The earliest virtual-clock timeout still pending (None with real-time timers, or when done)."""
        with self._lock:
            if self._done.is_set():
                return None
            pending = [self._deadlines[p] for p in self._pending if p in self._deadlines]
            return min(pending) if pending else None

    def expire(self, now: float) -> bool:
        """Reject the pod for the first pending plugin whose virtual-clock timeout has passed at ``now``."""
        with self._lock:
            if self._done.is_set():
                return False
            due = [(d, p) for p, d in self._deadlines.items() if p in self._pending and d <= now]
            if not due:
                return False
            _, plugin = min(due)
            self._finish(Status(Code.UNSCHEDULABLE, _timeout_message(plugin, self._timeouts[plugin]), plugin=plugin))
            return True

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
        if self.on_finish is not None:
            self.on_finish()

    def wait(self, timeout: float | None = None) -> Status:
        self._done.wait(timeout)
        with self._lock:
            if self._status is None:
                return Status(Code.ERROR, f"waiting on permit for pod {self.pod.key} did not finish")
            return self._status


def _timeout_message(plugin: str, timeout: float) -> str:
    return f"rejected due to timeout after waiting {_dur(timeout)} at plugin {plugin}"


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
        #: how many waits of pods added here have ended (allowed, rejected, timed out): a cheap "anything
        #: new?" test for whoever tracks the waits
        self.finished = 0
        self._finish_lock = threading.Lock()

    def add(self, wp: WaitingPod) -> None:
        wp.on_finish = self._count_finish
        with self._lock:
            self._pods[wp.pod.uid] = wp

    def _count_finish(self) -> None:
        with self._finish_lock:
            self.finished += 1

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

    def next_deadline(self) -> float | None:
        """The earliest virtual-clock Permit timeout among the waiting pods."""
        with self._lock:
            pods = list(self._pods.values())
        best: float | None = None
        for wp in pods:
            d = wp.next_deadline()
            if d is not None and (best is None or d < best):
                best = d
        return best

    def expire(self, now: float) -> None:
        """Reject every waiting pod whose virtual-clock timeout has passed at ``now``."""
        with self._lock:
            pods = list(self._pods.values())
        for wp in pods:
            wp.expire(now)
