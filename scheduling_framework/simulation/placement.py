"""Where one pod goes, or why it goes nowhere: the result type of the simulator's placements.

In its own module so that the capacity search (which places copies) and the Simulator share it without
importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from scheduling_framework.runtime.algorithm import Diagnosis
from scheduling_framework.status import Status


@attrs.frozen(repr=False)
class Placement:
    """Where one pod goes, or why it goes nowhere.

    ``node`` is None when the pod was not placed; ``message`` then says why, in upstream's words
    ("0/3 nodes are available: ..."). ``status`` is the rejecting or failing status when one plugin
    decided (PreEnqueue, Reserve, a plugin error); ``diagnosis`` holds per-node Filter statuses after a
    fit failure. ``total_scores`` maps each scored node to its weighted total (empty when only one node
    was feasible: upstream does not score then).
    """

    pod: str
    node: str | None
    message: str = ""
    status: Status | None = None
    total_scores: Mapping[str, int] = attrs.field(factory=dict)
    diagnosis: Diagnosis | None = attrs.field(default=None, repr=False)
    #: never attempted, as kube-scheduler would not: being deleted, or refused by priority admission
    skipped: bool = False

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    def __repr__(self) -> str:
        if self.node is not None:
            return f"Placement({self.pod} -> {self.node})"
        what = "skipped" if self.skipped else "not placed"
        return f"Placement({self.pod} {what}: {self.message})"


__all__ = ["Placement"]
