"""Upgrade impact: the same cluster under two releases or two configurations, pod by pod.

```python
from scheduling_framework.comparison import Side, compare

result = compare("examples/compare/balanced.yaml", a=Side(kubernetes_version="1.35"),
                 b=Side(kubernetes_version="1.37"), seed=1)
for p in result.changed:
    print(p.pod, p.a.node, "->", p.b.node, p.why["text"])
```

See docs/compare.md for what is compared, how ties and earlier placements are told apart, and the JSON schema.
"""

from scheduling_framework.comparison.engine import RELEASE_CHANGES, compare, config_differences
from scheduling_framework.comparison.model import (
    ALIGN,
    INDEPENDENT,
    SEED,
    SEQUENTIAL,
    Comparison,
    NodeChange,
    PodComparison,
    PodSide,
    Side,
)

__all__ = ["ALIGN", "INDEPENDENT", "RELEASE_CHANGES", "SEED", "SEQUENTIAL", "Comparison", "NodeChange",
           "PodComparison", "PodSide", "Side", "compare", "config_differences"]
