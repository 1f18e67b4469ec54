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

from scheduling_framework.simulation.capacity import CapacityResult
from scheduling_framework.simulation.cluster_snapshot import ClusterSnapshot, Fork
from scheduling_framework.simulation.placement import Placement
from scheduling_framework.simulation.simulator import DrainResult, ScheduleOutcome, Simulator
from scheduling_framework.simulation.templates import HOSTNAME_LABEL, node_from_template, pod_for_node

__all__ = [
    "HOSTNAME_LABEL", "CapacityResult", "ClusterSnapshot", "DrainResult", "Fork", "Placement", "ScheduleOutcome",
    "Simulator",
    "node_from_template", "pod_for_node",
]
