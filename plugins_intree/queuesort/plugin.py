"""PrioritySort: higher priority first; among equal priorities, the pod queued earlier first."""

from __future__ import annotations

from typing import Any

from scheduling_framework.interfaces import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    """QueueSort only."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` goes before ``b``: a strict weak ordering, so ``less(x, x)`` is False."""
        p1 = a.pod.priority
        p2 = b.pod.priority
        if p1 != p2:
            return p1 > p2
        return bool(a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, Any]:
        """``less`` as a key: ``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)`` (for the numeric
        timestamps the scheduling queue gives), so the queue's heap compares keys in C (Framework.queue_sort_key)."""
        return (-qpi.pod.priority, qpi.timestamp)

