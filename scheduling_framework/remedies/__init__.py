"""What would make a pending pod fit: verified remedies (docs/remedies.md).

```python
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.simulation import Simulator
from scheduling_framework.remedies import remedies_for

cluster = load_cluster("examples/remedies/cluster.yaml")
sim = Simulator.from_cluster(cluster)
for pod in cluster.pending_pods:
    found = remedies_for(sim, pod)                   # or sim.remedies(pod)
    print(pod.key, found.facts, [r.change for r in found.remedies])
```

After a Scheduler run, ``why(sched, pods)`` computes them on the cluster as the run left it.
"""

from scheduling_framework.remedies.engine import examine, facts, fmt_amount, remedies_for
from scheduling_framework.remedies.model import KINDS, NodeShortfall, PodRemedies, Remedy, records
from scheduling_framework.remedies.run import end_state, why

__all__ = ["KINDS", "NodeShortfall", "PodRemedies", "Remedy", "end_state", "examine", "facts", "fmt_amount",
           "records", "remedies_for", "why"]
