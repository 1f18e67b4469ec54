"""Simulator: placement queries for autoscalers and what-if tools, on a Framework over a ClusterSnapshot.

The queries themselves are :class:`~scheduling_framework.simulation.core.SimulatorCore`'s (see its module);
:class:`Simulator` adds the two that are services of their own built on those queries: :meth:`Simulator.capacity`
(:mod:`~scheduling_framework.simulation.capacity`) and :meth:`Simulator.remedies`
(:mod:`scheduling_framework.remedies`). Those modules work on a SimulatorCore, so the imports go one way:
core <- capacity, remedies <- this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scheduling_framework.api.coerce import coerce_node, iter_objects
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.remedies.engine import remedies_for
from scheduling_framework.remedies.model import PodRemedies
from scheduling_framework.simulation.capacity import CapacityResult
from scheduling_framework.simulation.capacity import capacity as _capacity
from scheduling_framework.simulation.core import (
    MIRROR_POD_ANNOTATION,
    DrainResult,
    ScheduleOutcome,
    SimulatorCore,
    _get_ident,
    _same_answer,
    guard_methods,
)
from scheduling_framework.simulation.placement import Placement


class Simulator(SimulatorCore):
    __doc__ = SimulatorCore.__doc__

    def capacity(self, pod: Pod | Any, max: int | None = None) -> CapacityResult:
        """How many more copies of ``pod`` fit, on which nodes, and what then limits each node
        (cluster-capacity's question): copies are placed one by one with this profile, each visible to the
        next, until one no longer fits or ``max`` are placed. The cluster is left unchanged.
        See :func:`scheduling_framework.simulation.capacity.capacity`."""
        if self._owner != _get_ident():
            self._claim("capacity")
        return _capacity(self, self._as_pod(pod), max)

    def remedies(self, pod: Pod | Any, templates: Iterable[Node | Any] = ()) -> PodRemedies:
        """What would make ``pod`` fit on this cluster: facts about the cluster in plain words, and remedies
        (changes to the pod or to nodes, a new node from one of ``templates``), each verified by re-running the
        plugins with it applied on a fork. The cluster is left unchanged. See docs/remedies.md."""
        if self._owner != _get_ident():
            self._claim("remedies")
        shapes = [coerce_node(t, strict=self.strict, warnings=self.warnings) for t in iter_objects(templates)]
        return remedies_for(self, self._as_pod(pod), templates=shapes)


guard_methods(Simulator)

__all__ = ["MIRROR_POD_ANNOTATION", "DrainResult", "Placement", "ScheduleOutcome", "Simulator", "SimulatorCore",
           "_same_answer"]
