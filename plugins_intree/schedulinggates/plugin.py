"""SchedulingGates: keeps a pod out of the active queue while ``spec.schedulingGates`` is not empty."""

from __future__ import annotations

from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.status import Code, Status

NAME = "SchedulingGates"


class SchedulingGates:
    """PreEnqueue only."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        # Formatted as Go prints a []string: "[gate1 gate2]". Unresolvable: only removing the gates helps.
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{' '.join(gates)}]")
