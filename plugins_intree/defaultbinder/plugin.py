"""DefaultBinder: binds the pod through the embedding application's binder (``handle.binder``)."""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.status import Status


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        binder = getattr(self.handle, "binder", None)
        if binder is None:
            return None  # no application binder: the framework's caller records the placement itself
        fn = getattr(binder, "bind", binder)
        fn(pod, node_name)
        return None
