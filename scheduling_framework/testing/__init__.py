"""Helpers for testing plugins with no cluster: builders, a framework in one call, pytest fixtures.

```python
from scheduling_framework.testing import framework_for, make_node, make_pod

fw = framework_for([MyPlugin], args={"MyPlugin": {"threshold": 2}},
                   nodes=[make_node().name("n1").capacity(cpu="4", memory="8Gi")])
assert fw.filter(make_pod().name("p").req(cpu="1"))["n1"]["code"] == "Success"
```

The pytest fixtures (``fake_cluster``, ``framework_factory``, ``cycle_state``) come from
``scheduling_framework.testing.pytest_plugin``, registered as a ``pytest11`` entry point.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scheduling_framework.testing.builders import (
        DEFAULT_NODE_PODS,
        PAUSE_IMAGE,
        LabelSelectorBuilder,
        NodeBuilder,
        NodeSelectorBuilder,
        PodBuilder,
        as_node,
        as_pod,
        make_label_selector,
        make_node,
        make_node_selector,
        make_pod,
        make_snapshot,
        node_info,
        resource_list,
    )
    from scheduling_framework.testing.harness import (
        TEST_ORIGIN,
        FakeCluster,
        FrameworkHarness,
        build_registry,
        config_for,
        framework_for,
    )

_BUILDERS = (
    "DEFAULT_NODE_PODS", "PAUSE_IMAGE", "LabelSelectorBuilder", "NodeBuilder", "NodeSelectorBuilder", "PodBuilder",
    "as_node", "as_pod", "make_label_selector", "make_node", "make_node_selector", "make_pod", "make_snapshot",
    "node_info", "resource_list",
)
_HARNESS = ("TEST_ORIGIN", "FakeCluster", "FrameworkHarness", "build_registry", "config_for", "framework_for")
_LAZY = {**dict.fromkeys(_BUILDERS, "scheduling_framework.testing.builders"),
         **dict.fromkeys(_HARNESS, "scheduling_framework.testing.harness")}


def __getattr__(name: str) -> Any:
    # Loaded on first use, so that the pytest plugin (a submodule) costs other test suites nothing.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scheduling_framework.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_NODE_PODS", "PAUSE_IMAGE", "TEST_ORIGIN", "FakeCluster", "FrameworkHarness", "LabelSelectorBuilder",
    "NodeBuilder", "NodeSelectorBuilder", "PodBuilder", "as_node", "as_pod", "build_registry", "config_for",
    "framework_for", "make_label_selector", "make_node", "make_node_selector", "make_pod", "make_snapshot",
    "node_info", "resource_list",
]
