"""The pieces the Scheduler's loop stands on: queue order and backoff (upstream defaults), the cache's
assume / forget / confirm bookkeeping with incremental snapshots, and the Registry's errors."""

from __future__ import annotations

import pytest

from scheduling_framework.api import Node
from scheduling_framework.errors import RegistryError, SnapshotError
from scheduling_framework.interfaces import QueuedPodInfo
from scheduling_framework.registry import Registry
from scheduling_framework.scheduler import Scheduler, VirtualClock
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.queue import SchedulingQueue
from scheduling_framework.state.snapshot import Snapshot
from tests.runtime.runtime_fakes import InjPlugin, make_node, make_pod, scheduler


def _by_priority(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.pod.priority > b.pod.priority


def test_scheduler_pops_pods_in_queue_sort_order() -> None:
    bound: list[str] = []
    s = scheduler({"filter": [InjPlugin("f")]}, binder=lambda pod, node: bound.append(pod.name))
    s.load([make_node("n1")], [make_pod("low", priority=1), make_pod("high", priority=100),
                               make_pod("mid", priority=50), make_pod("mid2", priority=50)])
    s.run()
    assert bound == ["high", "mid", "mid2", "low"]


@pytest.mark.parametrize(("attempts", "want"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)])
def test_backoff_doubles_from_one_second_up_to_ten(attempts: int, want: float) -> None:
    q = SchedulingQueue(_by_priority, VirtualClock())
    qpi = q.new_info(make_pod("p"))
    qpi.attempts = attempts
    assert q.backoff_duration(qpi) == want


def test_failed_pod_moved_by_an_event_waits_out_its_backoff() -> None:
    clock = VirtualClock()
    q = SchedulingQueue(_by_priority, clock)
    q.add(q.new_info(make_pod("p")))
    qpi = q.pop()
    assert qpi is not None
    q.add_unschedulable(qpi)
    assert q.pop() is None
    q.move_all_to_active_or_backoff("NodeAdd")
    assert q.pop() is None and q.next_backoff_expiry() == 1.0
    clock.advance_to(1.0)
    popped = q.pop()
    assert popped is not None and popped.pod.name == "p" and popped.attempts == 2


def test_event_only_moves_pods_whose_rejecting_plugin_cares() -> None:
    q = SchedulingQueue(_by_priority, VirtualClock())
    q.add(q.new_info(make_pod("p")))
    qpi = q.pop()
    assert qpi is not None
    qpi.unschedulable_plugins = {"NodeName"}  # cares about NodeAdd only
    q.add_unschedulable(qpi)
    assert q.move_all_to_active_or_backoff("AssignedPodDelete") == 0
    assert q.move_all_to_active_or_backoff("NodeAdd") == 1


def test_deleted_pod_leaves_the_queue() -> None:
    q = SchedulingQueue(_by_priority, VirtualClock())
    pod = make_pod("p")
    q.add(q.new_info(pod))
    q.delete(pod)
    assert q.pop() is None and len(q) == 0


# --- cache --------------------------------------------------------------------------------------


def _cache_with_nodes() -> tuple[Scheduler, list[Node]]:
    s = scheduler({})
    nodes = [make_node("n1"), make_node("n2")]
    for n in nodes:
        s.cache.add_node(n)
    return s, nodes


def test_assume_then_forget_restores_the_node() -> None:
    s, nodes = _cache_with_nodes()
    before = NodeInfo(nodes[0]).snapshot_state()
    pod = make_pod("p", cpu="1", node="n1")
    s.cache.assume_pod(pod)
    assert s.cache.is_assumed("p")
    ni = s.cache.node_info("n1")
    assert ni is not None and ni.requested.milli_cpu == 1000
    s.cache.forget_pod(pod)
    ni = s.cache.node_info("n1")
    assert s.cache.get_pod("p") is None and ni is not None and ni.snapshot_state() == before


def test_assume_twice_is_an_error() -> None:
    s, _ = _cache_with_nodes()
    pod = make_pod("p", node="n1")
    s.cache.assume_pod(pod)
    with pytest.raises(SnapshotError):
        s.cache.assume_pod(pod)


def test_forgetting_a_bound_pod_is_an_error() -> None:
    s, _ = _cache_with_nodes()
    pod = make_pod("p", node="n1")
    s.cache.add_pod(pod)
    with pytest.raises(SnapshotError):
        s.cache.forget_pod(pod)


def test_confirmed_pod_is_bound_and_the_informer_copy_is_accepted() -> None:
    s, _ = _cache_with_nodes()
    pod = make_pod("p", cpu="1", node="n1")
    s.cache.assume_pod(pod)
    s.cache.add_pod(pod)
    assert not s.cache.is_assumed("p") and s.cache.pod_count() == 1
    ni = s.cache.node_info("n1")
    assert ni is not None and ni.requested.milli_cpu == 1000


def test_incremental_snapshot_equals_a_fresh_one() -> None:
    s, _ = _cache_with_nodes()
    snap = Snapshot()
    s.cache.update_snapshot(snap)
    a, b = make_pod("a", cpu="1", node="n1"), make_pod("b", cpu="2", node="n2")
    s.cache.assume_pod(a)
    s.cache.add_pod(b)
    s.cache.update_snapshot(snap)
    s.cache.forget_pod(a)
    s.cache.add_node(make_node("n3"))
    s.cache.update_snapshot(snap)
    fresh = s.cache.snapshot()
    assert snap.describe() == fresh.describe()
    assert [ni.name for ni in snap.list()] == [ni.name for ni in fresh.list()] == ["n1", "n2", "n3"]


# --- registry -----------------------------------------------------------------------------------


def test_registry_name_clash_names_both_origins() -> None:
    reg = Registry()
    reg.register("Dup", lambda a, h: InjPlugin("Dup"), origin="pkg-a")
    with pytest.raises(RegistryError) as ei:
        reg.register("Dup", lambda a, h: InjPlugin("Dup"), origin="pkg-b")
    assert "pkg-a" in str(ei.value) and "pkg-b" in str(ei.value) and "Dup" in str(ei.value)


def test_registry_unknown_plugin() -> None:
    with pytest.raises(RegistryError, match='plugin "Nope" does not exist'):
        Registry().get("Nope")


def test_registry_lazy_reference_that_cannot_load_names_the_plugin() -> None:
    reg = Registry()
    reg.register("Broken", "no_such_module_xyz:Plugin")
    with pytest.raises(RegistryError) as ei:
        reg.get("Broken")
    assert "Broken" in str(ei.value) and "no_such_module_xyz" in str(ei.value)
