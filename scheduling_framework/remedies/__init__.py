"""What would make a pending pod fit: verified remedies (docs/remedies.md).

```python
from scheduling_framework.cluster import load_cluster
from scheduling_framework.simulation import Simulator
from scheduling_framework.remedies import remedies_for

cluster = load_cluster("examples/remedies/cluster.yaml")
sim = Simulator.from_cluster(cluster)
for pod in cluster.pending_pods:
    why = remedies_for(sim, pod)
    print(pod.key, why.facts, [r.change for r in why.remedies])
```
"""

from scheduling_framework.remedies.engine import examine, facts, fmt_amount, remedies_for
from scheduling_framework.remedies.model import KINDS, NodeShortfall, PodRemedies, Remedy, records

__all__ = ["KINDS", "NodeShortfall", "PodRemedies", "Remedy", "examine", "facts", "fmt_amount", "records",
           "remedies_for"]
