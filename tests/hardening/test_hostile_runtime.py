"""Issue 36 items 11 and 12: retries that cannot change the answer, and a Simulator used from two threads.

Item 11: a pod whose cycle ends in Error is retried after backoff; when nothing happened since (no cluster event,
no application call, no other pod's cycle) and every plugin of its profile decides from the scheduler's state
alone, the retry would end in the same Error and is not run. A DRA claim whose search hits filterTimeout (an
Error from 1.36) then costs one search, not five.

Item 12: a Simulator called from a second thread while another is inside a call or has a fork open raises
SimulatorBusyError instead of corrupting the cluster; one after another, threads may share it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulingFrameworkError, SimulatorBusyError
from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.scheduler import ERROR, SCHEDULED, Scheduler, decides_from_state
from scheduling_framework.simulation import ClusterSnapshot, Simulator
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import config, make_node, make_pod, registry_for, scheduler

RV1 = "resource.k8s.io/v1"
TIMED_OUT = 'running "DynamicResources" filter plugin: node w-1: timed out trying to allocate devices'


# --- item 11: Error retries ---------------------------------------------------------------------------------


class StepClock:
    """DynamicResources' filterTimeout clock, moving one second per read: the allocator reads it at the start of
    a search and every 256 steps, so a 10 s filterTimeout passes after about 2,560 steps whatever the machine's
    load, and ``reads`` counts the search work done."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


@pytest.fixture
def step_clock(monkeypatch: pytest.MonkeyPatch) -> StepClock:
    from plugins_intree.dynamicresources.plugin import DynamicResources

    clock = StepClock()
    monkeypatch.setattr(DynamicResources, "clock", clock)
    return clock


def gpu_slice(groups: dict[str, int], generation: int = 1) -> dict[str, Any]:
    devices = [{"name": f"{g}-{i}", "attributes": {"group": {"string": g}}} for g, n in groups.items()
               for i in range(n)]
    return {"apiVersion": RV1, "kind": "ResourceSlice", "metadata": {"name": "w-1-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": "w-1", "devices": devices,
                     "pool": {"name": "w-1", "generation": generation, "resourceSliceCount": 1}}}


def grouped_docs() -> list[dict[str, Any]]:
    """One node with two groups of 8 devices and a claim of 4 requests x 3 devices that must all share a group:
    no solution, and a search longer than a 10 s filterTimeout on the StepClock."""
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "w-1", "labels": {"kubernetes.io/hostname": "w-1"}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}
    device_class = {"apiVersion": RV1, "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
    claim = {"apiVersion": RV1, "kind": "ResourceClaim", "metadata": {"name": "big", "namespace": "default"},
             "spec": {"devices": {
                 "requests": [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu", "count": 3}} for i in range(4)],
                 "constraints": [{"matchAttribute": "gpu.example.com/group"}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
           "spec": {"containers": [{"name": "c", "image": "img", "resources": {"claims": [{"name": "big"}]}}],
                    "resourceClaims": [{"name": "big", "resourceClaimName": "big"}]}}
    return [node, device_class, claim, pod, gpu_slice({"a": 8, "b": 8})]


def dra_scheduler(extra_pods: tuple[dict[str, Any], ...] = (), version: str | None = None) -> Scheduler:
    c = cluster_from_documents([*grouped_docs(), *extra_pods])
    s = Scheduler(None, seed=1, kubernetes_version=version)
    s.load(c.nodes, c.pods, c.objects)
    return s


def one_search(step_clock: StepClock) -> int:
    """The clock reads of one timed-out search (a scheduler allowed a single attempt)."""
    s = dra_scheduler()
    s.max_error_retries = 1
    s.run()
    assert s.results["default/p"].outcome == ERROR
    reads, step_clock.reads = step_clock.reads, 0
    return reads


@pytest.mark.parametrize("version", [None, "1.36"], ids=["newest", "1.36"])
def test_a_timed_out_claim_is_searched_once_not_five_times(step_clock: StepClock, version: str | None) -> None:
    single = one_search(step_clock)
    s = dra_scheduler(version=version)
    s.run()
    r = s.results["default/p"]
    assert (r.outcome, r.plugin, r.attempts) == (ERROR, "DynamicResources", 1)
    assert r.message.startswith(TIMED_OUT)
    assert step_clock.reads == single  # one filterTimeout spent, not max_error_retries of them
    assert s.max_error_retries == 5


def test_a_plugin_declared_nondeterministic_keeps_the_bounded_retries(step_clock: StepClock,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins_intree.dynamicresources.plugin import DynamicResources

    single = one_search(step_clock)
    monkeypatch.setattr(DynamicResources, "deterministic", False, raising=False)
    s = dra_scheduler()
    s.run()
    r = s.results["default/p"]
    assert (r.outcome, r.attempts) == (ERROR, s.max_error_retries)
    assert step_clock.reads == s.max_error_retries * single


def test_an_event_during_the_backoff_lets_the_retry_run_and_succeed(step_clock: StepClock) -> None:
    s = dra_scheduler()
    r = s.schedule_one()
    assert r is not None and (r.outcome, r.attempts) == (ERROR, 1)
    # while the pod waits out its backoff, the driver publishes a pool with a group big enough for the claim
    s.add_object(gpu_slice({"a": 12, "b": 8}, generation=2))
    s.run()
    r = s.results["default/p"]
    assert (r.outcome, r.node, r.attempts) == (SCHEDULED, "w-1", 2)


def test_an_event_after_the_retries_ended_lets_the_pod_try_again(step_clock: StepClock) -> None:
    s = dra_scheduler()
    s.run()
    assert (s.results["default/p"].outcome, s.results["default/p"].attempts) == (ERROR, 1)
    s.add_object(gpu_slice({"a": 12, "b": 8}, generation=2))
    s.run()
    r = s.results["default/p"]
    assert (r.outcome, r.node, r.attempts) == (SCHEDULED, "w-1", 2)


def test_another_pods_cycle_in_between_is_a_change(step_clock: StepClock) -> None:
    """A cycle of another pod may move the round-robin start, draw from the tie-break rng or assume a pod: the
    retry that follows it runs; the next one, with nothing in between, does not."""
    too_big = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "default", "uid": "q"},
               "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "64"}}}]}}
    s = dra_scheduler(extra_pods=(too_big,))
    s.run()
    assert s.results["default/q"].outcome == "Unschedulable"
    assert (s.results["default/p"].outcome, s.results["default/p"].attempts) == (ERROR, 2)


class FailingFilter:
    """A third-party Filter plugin that always errs, counting its calls; ``deterministic`` as a class says."""

    name = "Failing"

    def __init__(self) -> None:
        self.calls = 0

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status:
        self.calls += 1
        return Status(Code.ERROR, "backend unavailable")


class DeterministicFailingFilter(FailingFilter):
    name = "DeterministicFailing"
    deterministic = True


@pytest.mark.parametrize(("plugin", "attempts"), [
    (FailingFilter(), 5),
    (DeterministicFailingFilter(), 1),
], ids=["third-party: retried as before", "third-party declaring deterministic = True: one attempt"])
def test_third_party_plugins_say_whether_a_retry_can_help(plugin: FailingFilter, attempts: int) -> None:
    s = scheduler({"filter": [plugin]})
    s.load([make_node("n1")], [make_pod("a")])
    s.run()
    r = s.results["default/a"]
    assert (r.outcome, r.plugin, r.attempts, plugin.calls) == (ERROR, plugin.name, attempts, attempts)


def test_in_tree_plugins_decide_from_state_and_others_say_so() -> None:
    s = Scheduler(None)
    assert all(decides_from_state(pl) for pl in s.profile().plugins.values())
    assert not decides_from_state(FailingFilter())
    assert decides_from_state(DeterministicFailingFilter())


class ScoreErrors:
    """Score errs for every pod (after filtering moved the round-robin start on a sampled cluster)."""

    name = "ScoreErrors"
    deterministic = True

    def __init__(self) -> None:
        self.calls = 0

    def score(self, state: CycleState, pod: Any, node_name: str) -> tuple[int, Status | None]:
        self.calls += 1
        return 0, Status(Code.ERROR, "score failed")


def test_an_error_after_the_round_robin_start_moved_is_retried() -> None:
    """150 nodes: a cycle filters 73 of them (numFeasibleNodesToFind) and the next starts after them, so the
    retry looks at other nodes and is run, though nothing else happened."""
    plugin = ScoreErrors()
    s = scheduler({"score": [plugin]})
    s.load([make_node(f"n{i:03d}") for i in range(150)], [make_pod("a")])
    s.run()
    r = s.results["default/a"]
    assert (r.outcome, r.attempts) == (ERROR, s.max_error_retries)


# --- item 12: one Simulator, two threads --------------------------------------------------------------------


class Gate:
    """A Filter plugin that, for the pod named "hold", signals ``entered`` and waits for ``release``."""

    name = "Gate"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> None:
        if pod.name == "hold":
            self.entered.set()
            assert self.release.wait(30), "the test never released the gate"


def gate_simulator() -> tuple[Simulator, Gate]:
    gate = Gate()
    points = {"filter": [gate]}
    sim = Simulator(config(points), registry_for(points), seed=1,
                    cluster=ClusterSnapshot([make_node("n1"), make_node("n2")]))
    return sim, gate


def run_in_thread(fn: Any, name: str = "worker") -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def target() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # (reported to the test through ``out``)
            out.append(e)

    t = threading.Thread(target=target, name=name, daemon=True)
    t.start()
    return t, out


def test_a_call_while_another_thread_is_inside_one_raises() -> None:
    sim, gate = gate_simulator()
    t, out = run_in_thread(lambda: sim.best_node_for_pod(make_pod("hold")))
    assert gate.entered.wait(30)
    before = sim.cluster.snapshot.describe()
    with pytest.raises(SimulatorBusyError) as exc:
        sim.schedule_pods([make_pod("other")])
    gate.release.set()
    t.join(30)
    assert not t.is_alive()
    assert isinstance(exc.value, SchedulingFrameworkError)
    assert str(exc.value) == ("Simulator used from two threads at once: schedule_pods() called on thread "
                              "'MainThread' while thread 'worker' is inside Simulator.best_node_for_pod(). A "
                              "Simulator is not thread-safe: use one per thread, or hold a lock from fork() to "
                              "revert()")
    assert sim.cluster.snapshot.describe() == before  # the refused call changed nothing
    assert out[0].node in ("n1", "n2")  # the worker's call was not disturbed
    # the worker is done: this thread may use the simulator now
    assert sim.schedule_pods([make_pod("other")]).all_scheduled


def test_a_call_while_another_thread_has_a_fork_open_raises() -> None:
    sim, _ = gate_simulator()
    opened, close = threading.Event(), threading.Event()

    def worker() -> None:
        fork = sim.fork()
        sim.add_pod(make_pod("w", node="n1"))
        opened.set()
        assert close.wait(30)
        fork.revert()  # through the Fork, not the simulator: the fork is closed all the same

    t, out = run_in_thread(worker)
    assert opened.wait(30)
    for call in (sim.fork, lambda: sim.add_pod(make_pod("m", node="n2")), lambda: sim.find_node_for_pod(make_pod("m")),
                 sim.revert):
        with pytest.raises(SimulatorBusyError, match=r"while thread 'worker' has fork #\d+ open"):
            call()
    close.set()
    t.join(30)
    assert out == [None]
    assert sim.cluster.depth == 0 and not sim.cluster.has_pod("default/w")
    with sim.fork():
        sim.add_pod(make_pod("m", node="n2"))


def test_a_query_that_calls_back_into_the_simulator_on_its_own_thread_is_fine() -> None:
    sim, _ = gate_simulator()

    class Asks:
        name = "Asks"

        def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
            if pod.name == "probe":
                return None
            return sim.check_pod_on_node(make_pod("probe"), node_info.node.name)

    sim.framework.plugins["Gate"].filter = Asks().filter  # the gate now asks the simulator, from inside a query
    with sim.fork():
        assert sim.schedule_pods([make_pod("a")]).all_scheduled


def test_threads_may_use_a_simulator_one_after_another() -> None:
    sim, _ = gate_simulator()

    def iteration(name: str) -> bool:
        with sim.fork():
            return sim.schedule_pods([make_pod(name)]).all_scheduled

    for i in range(3):
        t, out = run_in_thread(lambda i=i: iteration(f"w{i}"), name=f"worker-{i}")
        t.join(30)
        assert out == [True]
        assert iteration(f"m{i}")


@pytest.fixture
def fast_switching() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@pytest.mark.usefixtures("fast_switching")
def test_two_threads_forking_placing_reverting_get_an_error_not_a_corrupt_cluster() -> None:
    """The issue's report: fork / schedule / revert loops on two threads corrupted the cluster silently. Now one of
    the threads is refused (at a call of its own, before it changed anything) and the cluster ends as it began."""
    sim = Simulator(seed=1, cluster=ClusterSnapshot([make_node(f"n{i}") for i in range(4)]))
    before = sim.cluster.snapshot.describe()
    start = threading.Barrier(2)

    def loop(tag: str) -> int:
        start.wait(30)
        for i in range(400):
            with sim.fork():
                sim.schedule_pods([make_pod(f"{tag}-{i}-{k}", cpu="100m") for k in range(3)])
        return 400

    threads = [run_in_thread(lambda tag=tag: loop(tag), name=tag) for tag in ("a", "b")]
    for t, _ in threads:
        t.join(60)
        assert not t.is_alive()
    outcomes = [out[0] for _, out in threads]
    assert any(isinstance(o, SimulatorBusyError) for o in outcomes), outcomes
    assert all(o == 400 or isinstance(o, SimulatorBusyError) for o in outcomes), outcomes
    assert sim.cluster.depth == 0
    assert sim.cluster.snapshot.describe() == before
