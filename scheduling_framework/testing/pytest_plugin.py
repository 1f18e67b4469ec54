"""pytest fixtures for plugin authors, registered through the ``pytest11`` entry point.

Installing scheduling-framework makes them available in every test, with no conftest:

```python
from scheduling_framework.testing import make_node, make_pod

def test_prefers_labelled_nodes(fake_cluster, framework_factory):
    fake_cluster.add_nodes(2).add_node(make_node().name("gpu").label("gpu", "true"))
    fw = framework_factory([MyPlugin], args={"MyPlugin": {"labelKey": "gpu"}})
    assert fw.schedule(make_pod().name("p"))["node"] == "gpu"
```

The kit itself is imported only when a fixture is used, so the plugin costs nothing to other test suites.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scheduling_framework.cycle_state import CycleState
    from scheduling_framework.testing.harness import FakeCluster, FrameworkHarness, PluginSpec


class FrameworkFactory(Protocol):
    """The ``framework_factory`` fixture: :func:`~scheduling_framework.testing.framework_for` over ``fake_cluster``."""

    def __call__(self, plugins: Iterable[PluginSpec] = (), **kwargs: Any) -> FrameworkHarness: ...


@pytest.fixture
def fake_cluster() -> FakeCluster:
    """An empty :class:`~scheduling_framework.testing.FakeCluster`: ``add_node``, ``add_nodes``, ``add_pod``."""
    from scheduling_framework.testing.harness import FakeCluster

    return FakeCluster()


@pytest.fixture
def framework_factory(fake_cluster: FakeCluster) -> FrameworkFactory:
    """``framework_factory(plugins, args=..., weights=..., with_defaults=..., config=...)`` -> a
    :class:`~scheduling_framework.testing.FrameworkHarness` over the nodes and pods of ``fake_cluster``
    at the time of the call."""

    def factory(plugins: Iterable[PluginSpec] = (), **kwargs: Any) -> FrameworkHarness:
        return fake_cluster.framework(plugins, **kwargs)

    return factory


@pytest.fixture
def cycle_state() -> CycleState:
    """A fresh CycleState, for calling a plugin's methods directly."""
    from scheduling_framework.cycle_state import CycleState

    return CycleState()
