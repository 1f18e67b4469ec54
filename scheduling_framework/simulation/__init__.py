"""Simulation for autoscalers and what-if tools: forkable cluster snapshots and placement queries.

```python
from scheduling_framework.simulation import Simulator

sim = Simulator(seed=1)                         # the default profile over an empty ClusterSnapshot
sim.add_node(node)
with sim.fork():                                # reverted at the end of the block
    sim.add_node_from_template(template, count=2)
    outcome = sim.schedule_pods(pending)
```

See docs/autoscaler-simulation.md for a worked example and the API reference.
"""

from typing import TYPE_CHECKING, Any

from scheduling_framework.simulation.capacity import CapacityResult
from scheduling_framework.simulation.cluster_snapshot import ClusterSnapshot, Fork
from scheduling_framework.simulation.core import DrainResult, ScheduleOutcome
from scheduling_framework.simulation.placement import Placement
from scheduling_framework.simulation.templates import HOSTNAME_LABEL, node_from_template, pod_for_node

if TYPE_CHECKING:
    from scheduling_framework.simulation.simulator import Simulator


def __getattr__(name: str) -> Any:
    # Simulator is built on services (capacity, scheduling_framework.remedies) that are built on this package's
    # core: it is loaded when first asked for, so that importing the core (as those services do) does not load
    # them back half-initialized.
    if name == "Simulator":
        from scheduling_framework.simulation.simulator import Simulator

        globals()["Simulator"] = Simulator
        return Simulator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "HOSTNAME_LABEL", "CapacityResult", "ClusterSnapshot", "DrainResult", "Fork", "Placement", "ScheduleOutcome",
    "Simulator",
    "node_from_template", "pod_for_node",
]
