"""The scheduling queue: active (ordered by the profile's QueueSort), backoff and unschedulable pods.

Time is read from ``clock`` (seconds), so a simulation can run a virtual clock and never sleep.
Pods that failed wait in the unschedulable pool until a cluster event that one of the plugins that
rejected them cares about; then they move to backoff (or active, once their backoff has passed).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterable
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.errors import PluginError
from scheduling_framework.interfaces import QueuedPodInfo
from scheduling_framework.status import Code, Status

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0

# Cluster events and the in-tree plugins whose verdicts they may change (a simplified form of upstream's
# EventsToRegister / queueing hints). Plugins not listed are assumed to care about every event.
ASSIGNED_POD_ADD = "AssignedPodAdd"
ASSIGNED_POD_DELETE = "AssignedPodDelete"
ASSIGNED_POD_UPDATE = "AssignedPodUpdate"
NODE_ADD = "NodeAdd"
NODE_UPDATE = "NodeUpdate"
NODE_DELETE = "NodeDelete"
UNSCHEDULED_POD_UPDATE = "UnscheduledPodUpdate"
OBJECT_CHANGE = "ObjectChange"

PLUGIN_EVENTS: dict[str, frozenset[str]] = {
    "NodeResourcesFit": frozenset({ASSIGNED_POD_DELETE, ASSIGNED_POD_UPDATE, NODE_ADD, NODE_UPDATE}),
    "NodePorts": frozenset({ASSIGNED_POD_DELETE, NODE_ADD}),
    "NodeName": frozenset({NODE_ADD}),
    "NodeUnschedulable": frozenset({NODE_ADD, NODE_UPDATE}),
    "NodeAffinity": frozenset({NODE_ADD, NODE_UPDATE}),
    "TaintToleration": frozenset({NODE_ADD, NODE_UPDATE}),
    "PodTopologySpread": frozenset({ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, ASSIGNED_POD_UPDATE, NODE_ADD,
                                    NODE_UPDATE, NODE_DELETE}),
    "InterPodAffinity": frozenset({ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, ASSIGNED_POD_UPDATE, NODE_ADD,
                                   NODE_UPDATE, OBJECT_CHANGE}),
    # Claims, classes and slices are objects; a deleted pod releases its claims.
    "DynamicResources": frozenset({ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE, OBJECT_CHANGE,
                                   UNSCHEDULED_POD_UPDATE}),
    # A pod of the group bound, or a Workload added (upstream: Pod/Add and Workload/Add).
    "GangScheduling": frozenset({ASSIGNED_POD_ADD, OBJECT_CHANGE}),
}


def plugin_cares(plugin: str, event: str) -> bool:
    events = PLUGIN_EVENTS.get(plugin)
    return events is None or event in events


class SchedulingQueue:
    def __init__(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
                 clock: Callable[[], float] = time.monotonic,
                 initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 sort_key: Callable[[QueuedPodInfo], tuple[Any, ...]] | None = None) -> None:
        self._less = less
        # The order of ``less`` as a key compared in C, when the profile's QueueSort has one (the in-tree
        # PrioritySort: Framework.queue_sort_key); heap entries then hold (key + (seq,), seq, qpi) instead of a
        # _Key calling ``less``. Pinned by tests/test_perf_equivalence.py::test_queue_sort_key_order_equals_less.
        self._sort_key = sort_key
        # Pods a QueueSort less() failed on, with the Error status they get when popped (the comparison falls
        # back to arrival order so the heap stays sound).
        self._sort_errors: dict[str, Status] = {}
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._seq = itertools.count()
        self._active: list[tuple[Any, int, QueuedPodInfo]] = []
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._gated: dict[str, QueuedPodInfo] = {}
        self._in_queue: dict[str, str] = {}  # uid -> "active" | "backoff" | "unschedulable" | "gated"
        self.moved_since: int = 0  # count of move requests, to detect events during a cycle

    # adding ----------------------------------------------------------------------------------
    def new_info(self, pod: Pod) -> QueuedPodInfo:
        qpi = QueuedPodInfo(pod, self.clock())
        return qpi

    def add(self, qpi: QueuedPodInfo, gated_by: str = "") -> None:
        uid = qpi.pod.uid
        if gated_by:
            qpi.gated = True
            qpi.gating_plugin = gated_by
            self._gated[uid] = qpi
            self._in_queue[uid] = "gated"
            return
        qpi.gated = False
        self._push_active(qpi)

    def _compare(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        try:
            return bool(self._less(a, b))
        except Exception as e:
            plugin = e.plugin if isinstance(e, PluginError) else ""
            msg = str(e) if isinstance(e, PluginError) else f"QueueSort less() raised {type(e).__name__}: {e}"
            st = Status(Code.ERROR, f"ordering the scheduling queue: {msg}", plugin=plugin, error=e)
            self._sort_errors.setdefault(a.pod.uid, st)
            self._sort_errors.setdefault(b.pod.uid, st)
            return False

    def take_sort_error(self, uid: str) -> Status | None:
        """The Error status of a QueueSort failure involving this pod since it was last popped, or None."""
        return self._sort_errors.pop(uid, None) if self._sort_errors else None

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        seq = next(self._seq)
        key = self._sort_key
        if key is not None:
            heapq.heappush(self._active, ((*key(qpi), seq), seq, qpi))
        else:
            heapq.heappush(self._active, (_Key(qpi, self._compare, seq), seq, qpi))
        self._in_queue[qpi.pod.uid] = "active"

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule (flushing finished backoffs first), or None when active is empty."""
        self.flush_backoff_completed()
        while self._active:
            _, _, qpi = heapq.heappop(self._active)
            if self._in_queue.get(qpi.pod.uid) != "active":
                continue  # removed or moved meanwhile
            del self._in_queue[qpi.pod.uid]
            qpi.attempts += 1
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self.clock()
            return qpi
        return None

    def pop_specific(self, uid: str) -> QueuedPodInfo | None:
        """Take pod ``uid`` out of the active queue or backoff for the pod-group cycle it joins (upstream's
        PopSpecificPod); None when it is elsewhere (unschedulable, gated) or not queued."""
        where = self._in_queue.get(uid)
        if where not in ("active", "backoff"):
            return None
        heap = self._active if where == "active" else self._backoff
        for entry in heap:
            qpi = entry[2]
            if qpi.pod.uid == uid:
                del self._in_queue[uid]  # the heap entry is skipped lazily
                qpi.attempts += 1
                if qpi.initial_attempt_timestamp is None:
                    qpi.initial_attempt_timestamp = self.clock()
                return qpi
        return None

    # failures --------------------------------------------------------------------------------
    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        d = self.initial_backoff
        for _ in range(1, qpi.attempts):
            d *= 2
            if d >= self.max_backoff:
                return self.max_backoff
        return min(d, self.max_backoff)

    def add_unschedulable(self, qpi: QueuedPodInfo, moved_during_cycle: bool = False) -> None:
        """A pod that failed; if an event happened during its cycle it goes straight to backoff."""
        qpi.timestamp = self.clock()
        if moved_during_cycle:
            self._push_backoff(qpi)
        else:
            self._unschedulable[qpi.pod.uid] = qpi
            self._in_queue[qpi.pod.uid] = "unschedulable"

    def _push_backoff(self, qpi: QueuedPodInfo) -> None:
        expiry = qpi.timestamp + self.backoff_duration(qpi)
        heapq.heappush(self._backoff, (expiry, next(self._seq), qpi))
        self._in_queue[qpi.pod.uid] = "backoff"

    def flush_backoff_completed(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, qpi = heapq.heappop(self._backoff)
            if self._in_queue.get(qpi.pod.uid) == "backoff":
                self._push_active(qpi)

    def next_backoff_expiry(self) -> float | None:
        while self._backoff and self._in_queue.get(self._backoff[0][2].pod.uid) != "backoff":
            heapq.heappop(self._backoff)
        return self._backoff[0][0] if self._backoff else None

    # events ----------------------------------------------------------------------------------
    def move_all_to_active_or_backoff(self, event: str,
                                      pre_check: Callable[[QueuedPodInfo], bool] | None = None) -> int:
        """Requeue unschedulable pods that a plugin which rejected them cares about ``event`` (and that
        ``pre_check``, when given, accepts)."""
        self.moved_since += 1
        moved = 0
        for uid, qpi in list(self._unschedulable.items()):
            plugins = qpi.unschedulable_plugins | qpi.pending_plugins
            if plugins and not any(plugin_cares(p, event) for p in plugins):
                continue
            if pre_check is not None and not pre_check(qpi):
                continue
            del self._unschedulable[uid]
            if self.clock() >= qpi.timestamp + self.backoff_duration(qpi):
                self._push_active(qpi)
            else:
                self._push_backoff(qpi)
            moved += 1
        return moved

    def activate(self, uids: Iterable[str]) -> None:
        """Move the pods ``uids`` waiting in the unschedulable pool or in backoff to the active queue now
        (upstream's Activate; gated and active pods stay where they are)."""
        for uid in uids:
            where = self._in_queue.get(uid)
            if where == "unschedulable":
                self._push_active(self._unschedulable.pop(uid))
            elif where == "backoff":
                for _, _, qpi in self._backoff:
                    if qpi.pod.uid == uid:
                        self._push_active(qpi)  # the stale backoff entry is skipped when popped
                        break

    def activate_gated(self, pre_enqueue: Callable[[Pod], Any],
                       only: Callable[[QueuedPodInfo], bool] | None = None) -> None:
        """Re-run PreEnqueue for gated pods (after their spec changed, or an event that may free them;
        ``only`` limits it to the pods it accepts)."""
        for uid, qpi in list(self._gated.items()):
            if only is not None and not only(qpi):
                continue
            st = pre_enqueue(qpi.pod)
            if st is None or st.is_success():
                del self._gated[uid]
                qpi.gated = False
                self._push_active(qpi)

    def update(self, pod: Pod) -> None:
        uid = pod.uid
        where = self._in_queue.get(uid)
        if where is None:
            return
        for pool in (self._unschedulable, self._gated):
            q = pool.get(uid)
            if q is not None:
                q.pod_info = q.pod_info.with_pod(pod)
                return
        for heap in (self._active, self._backoff):
            for entry in heap:
                if entry[2].pod.uid == uid:
                    entry[2].pod_info = entry[2].pod_info.with_pod(pod)
                    return

    def delete(self, pod: Pod) -> None:
        uid = pod.uid
        where = self._in_queue.pop(uid, None)
        self._unschedulable.pop(uid, None)
        self._gated.pop(uid, None)
        del where  # heap entries are skipped lazily

    # views -----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._in_queue)

    def active_len(self) -> int:
        return sum(1 for v in self._in_queue.values() if v == "active")

    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        out: dict[str, list[QueuedPodInfo]] = {"active": [], "backoff": [], "unschedulable": [], "gated": []}
        for _, _, q in self._active:
            if self._in_queue.get(q.pod.uid) == "active":
                out["active"].append(q)
        for _, _, q in self._backoff:
            if self._in_queue.get(q.pod.uid) == "backoff":
                out["backoff"].append(q)
        out["unschedulable"] = list(self._unschedulable.values())
        out["gated"] = list(self._gated.values())
        return out


class _Key:
    """Orders heap entries by the profile's QueueSort ``less``; equal pods keep their arrival order."""

    __slots__ = ("less", "qpi", "seq")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool], seq: int) -> None:
        self.qpi = qpi
        self.less = less
        self.seq = seq

    def __lt__(self, other: _Key) -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.seq < other.seq
