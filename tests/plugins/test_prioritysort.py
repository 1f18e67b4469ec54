"""PrioritySort: upstream TestLess as a table (the fixture file lists these cases as skipped), plus the
ordering properties a heap relies on."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugins_intree.queuesort import PrioritySort
from scheduling_framework.api import Pod
from scheduling_framework.interfaces import QueuedPodInfo, points_of_class

LOW, HIGH = 10, 100
T1 = datetime(2024, 1, 1)
T2 = T1 + timedelta(seconds=1)


def _qpi(priority: int, ts: datetime | float = T1) -> QueuedPodInfo:
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"priority": priority, "containers": [{"name": "c", "image": "pause"}]}})
    return QueuedPodInfo(pod, ts)


@pytest.mark.parametrize(("p1", "p2", "want"), [
    pytest.param(_qpi(LOW), _qpi(HIGH), False, id="p1.priority less than p2.priority"),
    pytest.param(_qpi(HIGH), _qpi(LOW), True, id="p1.priority greater than p2.priority"),
    pytest.param(_qpi(HIGH, T1), _qpi(HIGH, T2), True,
                 id="equal priority. p1 is added to schedulingQ earlier than p2"),
    pytest.param(_qpi(HIGH, T2), _qpi(HIGH, T1), False,
                 id="equal priority. p2 is added to schedulingQ earlier than p1"),
])
def test_less(p1: QueuedPodInfo, p2: QueuedPodInfo, want: bool) -> None:
    assert PrioritySort(None, None).less(p1, p2) is want


def test_priority_wins_over_arrival() -> None:
    assert PrioritySort(None, None).less(_qpi(HIGH, T2), _qpi(LOW, T1))


@given(st.lists(st.tuples(st.integers(-5, 5), st.floats(0, 10, allow_nan=False)), min_size=1, max_size=4))
def test_strict_weak_ordering(items: list[tuple[int, float]]) -> None:
    qs = [_qpi(p, t) for p, t in items]
    less = PrioritySort(None, None).less
    for a in qs:
        assert not less(a, a)
        for b in qs:
            assert not (less(a, b) and less(b, a))
            for c in qs:
                if less(a, b) and less(b, c):
                    assert less(a, c)


def test_points() -> None:
    assert points_of_class(PrioritySort) == {"queueSort"}
