"""Coscheduling over scheduler-plugins' own test tables (tests/upstream.yaml), then end to end on the reference
Scheduler through the registry hook, as an installed package registers it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from scheduling_framework import PluginError, Registry, Scheduler
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.registry import discover
from scheduling_framework.runtime.waiting_pods import WaitingPod, WaitingPodsMap
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status
from scheduling_framework.testing import make_node, make_pod

from coscheduling import POD_GROUP_LABEL, Coscheduling, register_plugins

TABLES = yaml.safe_load((Path(__file__).parent / "upstream.yaml").read_text(encoding="utf-8"))


def pod_group(name: str, min_member: int, namespace: str = "ns", timeout: int | None = None) -> KubeObject:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return KubeObject.from_dict({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                 "metadata": {"name": name, "namespace": namespace}, "spec": spec})


def pod(d: dict[str, Any]) -> Pod:
    b = make_pod().name(d["name"]).namespace(d.get("namespace", "ns")).uid(d["name"])
    if d.get("pg"):
        b = b.label(POD_GROUP_LABEL, d["pg"])
    if d.get("node"):
        b = b.node(d["node"])
    if d.get("gated"):
        b = b.scheduling_gates("example-gate")
    return b.obj()


class FakeHandle:
    """What Coscheduling reads through its handle."""

    def __init__(self, pgs: dict[str, int], pods: Iterable[Pod]) -> None:
        self.objects = ObjectStore(pod_group(n, m) for n, m in pgs.items())
        self.pods = list(pods)
        node = make_node().name("node").capacity(cpu="4").obj()
        self.snapshot = Snapshot.from_objects([node], [p for p in self.pods if p.spec.node_name])
        self.waiting_pods = WaitingPodsMap()
        self.activated: list[str] = []

    def list_pods(self, namespace: str | None = None) -> list[Pod]:
        return [p for p in self.pods if namespace is None or p.namespace == namespace]

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]:
        return iter(self.waiting_pods)

    def activate(self, pods: Iterable[Pod]) -> None:
        self.activated.extend(p.name for p in pods)


def _status(st: Status | None) -> dict[str, str] | None:
    return None if st is None else {"code": str(st.code), "message": st.message()}


@pytest.mark.parametrize("case", TABLES["preFilter"], ids=[c["name"] for c in TABLES["preFilter"]])
def test_pre_filter(case: dict[str, Any]) -> None:
    target = pod(case["pod"])
    handle = FakeHandle(case["pgs"], [*map(pod, case.get("pendingPods", [])), target])
    _, st = Coscheduling(None, handle).pre_filter(CycleState(), target, handle.snapshot.list())
    assert (st is None) == case["expectedSuccess"]
    if st is not None:
        assert _status(st) == {"code": "UnschedulableAndUnresolvable", "message": case["message"]}


_PERMIT = {"PodGroupNotSpecified": None, "PodGroupNotFound": {"code": "Unschedulable", "message": "PodGroup not found"},
           "Wait": {"code": "Wait", "message": ""}, "Success": None}


@pytest.mark.parametrize("case", TABLES["permit"], ids=[c["name"] for c in TABLES["permit"]])
def test_permit(case: dict[str, Any]) -> None:
    target = pod(case["pod"])
    handle = FakeHandle(case["pgs"], [*map(pod, case.get("existingPods", [])), target])
    st, timeout = Coscheduling(None, handle).permit(CycleState(), target, "node")
    assert _status(st) == _PERMIT[case["want"]]
    assert timeout == (60 if case["want"] == "Wait" else 0)


@pytest.mark.parametrize("case", TABLES["postFilter"], ids=[c["name"] for c in TABLES["postFilter"]])
def test_post_filter(case: dict[str, Any]) -> None:
    target = pod(case["pod"])
    handle = FakeHandle(case["pgs"], [*map(pod, case.get("existingPods", [])), target])
    _, st = Coscheduling(None, handle).post_filter(CycleState(), target, {"node": Status(Code.SUCCESS)})
    assert _status(st) == case["want"]


@pytest.mark.parametrize("case", TABLES["postFilterRejectThreshold"],
                         ids=[c["name"] for c in TABLES["postFilterRejectThreshold"]])
def test_post_filter_reject_threshold(case: dict[str, Any]) -> None:
    assigned = [pod({"name": f"assigned-{i}", "pg": "pg1", "node": "node"}) for i in range(case["assignedCount"])]
    target = pod({"name": "p", "pg": "pg1"})
    handle = FakeHandle({"pg1": case["minMember"]}, [*assigned, target])
    pl = Coscheduling({"podGroupRejectPercentage": case["threshold"]}, handle)
    _, st = pl.post_filter(CycleState(), target, {"node": Status(Code.SUCCESS)})
    want = "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter" if case["reject"] else ""
    assert _status(st) == {"code": "Unschedulable", "message": want}


def test_post_filter_rejects_the_waiting_members() -> None:
    waiting = pod({"name": "w", "pg": "pg1"})
    target = pod({"name": "p", "pg": "pg1"})
    handle = FakeHandle({"pg1": 3}, [waiting, target])
    handle.waiting_pods.add(WaitingPod(waiting, {"Coscheduling": 60}, clock=lambda: 0.0))
    Coscheduling(None, handle).post_filter(CycleState(), target, {})
    wp = handle.waiting_pods.get("w")
    assert wp is not None and wp.done() and wp.wait().message() == "optimistic rejection in PostFilter"


def test_group_timeout_overrides_the_plugin_wait() -> None:
    target = pod({"name": "p", "pg": "pg1"})
    handle = FakeHandle({}, [target])
    handle.objects.add(pod_group("pg1", 2, timeout=5))
    st, timeout = Coscheduling(None, handle).permit(CycleState(), target, "node")
    assert st is not None and st.code == Code.WAIT and timeout == 5


@pytest.mark.parametrize(("args", "problem"), [
    ({"permitWaitingTimeSeconds": -1}, "args.permitWaitingTimeSeconds: must be greater than or equal to 0"),
    ({"podGroupBackoffSeconds": -1}, "args.podGroupBackoffSeconds: must be greater than or equal to 0"),
    ({"podGroupRejectPercentage": 101}, "args.podGroupRejectPercentage: must be between 0 and 100"),
    ({"permitWaitingTime": 1}, "args.permitWaitingTime: unknown field"),
])
def test_bad_args_name_the_field(args: dict[str, Any], problem: str) -> None:
    with pytest.raises(PluginError, match=problem.replace(".", r"\.")):
        Coscheduling(args, None)


# --- end to end ---------------------------------------------------------------------------------------------
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler", "plugins": {
              "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
              "preFilter": {"enabled": [{"name": "Coscheduling"}]},
              "postFilter": {"enabled": [{"name": "Coscheduling"}]},
              "permit": {"enabled": [{"name": "Coscheduling"}]},
              "reserve": {"enabled": [{"name": "Coscheduling"}]}}}]}


def run(nodes: int, members: int = 4, min_member: int = 4) -> Scheduler:
    registry = discover()  # the in-tree plugins, and this package when it is installed
    if "Coscheduling" not in registry:
        register_plugins(registry)
    sched = Scheduler(CONFIG, registry, seed=1)
    sched.load([make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(nodes)],
               [make_pod().name(f"worker-{i}").uid(f"worker-{i}").req(cpu="3").label(POD_GROUP_LABEL, "train").obj()
                for i in range(members)],
               [pod_group("train", min_member, "default")])
    sched.run()
    return sched


def test_the_package_registers_the_plugin() -> None:
    registry = Registry()
    register_plugins(registry)
    assert registry.get("Coscheduling") is Coscheduling
    assert registry.points_of("Coscheduling") == {"queueSort", "preFilter", "postFilter", "reserve", "permit"}


def test_gang_of_four_with_room_for_three_schedules_none() -> None:
    sched = run(3)
    assert {r.outcome for r in sched.results.values()} == {"Unschedulable"}
    messages = sorted(r.message for r in sched.results.values())
    assert messages[-1].endswith("PodGroup default/train gets rejected due to Pod worker-3 is unschedulable even "
                                 "after PostFilter.") or "gets rejected due to Pod" in " ".join(messages)
    assert not any("run() stopped" in w for w in sched.warnings)


def test_gang_of_four_with_room_for_four_is_placed_in_one_go() -> None:
    sched = run(4)
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}
    assert sched.clock() == 0.0


def test_too_few_members_wait_in_pre_filter() -> None:
    sched = run(4, members=2, min_member=3)
    for i in (0, 1):
        r = sched.results[f"default/worker-{i}"]
        assert r.outcome == "Unschedulable"
        assert r.message.startswith(f"0/4 nodes are available: pre-filter pod worker-{i} cannot find enough sibling "
                                    "pods, current pods number: 2, minMember of group: 3.")


def test_what_if_simulator_counts_the_batch_as_siblings() -> None:
    from scheduling_framework.simulation import Simulator

    registry = discover()
    if "Coscheduling" not in registry:
        register_plugins(registry)
    sim = Simulator(CONFIG, registry, seed=1, objects=[pod_group("train", 2, "default")])
    sim.add_node(make_node().name("node-0").capacity(cpu="8", memory="8Gi").obj())
    pods = [make_pod().name(f"w{i}").uid(f"w{i}").req(cpu="3").label(POD_GROUP_LABEL, "train").obj()
            for i in range(2)]
    assert len(sim.schedule_pods(pods).placements) == 2


def test_kubernetes_own_pod_group_is_not_read() -> None:
    target = pod({"name": "p", "pg": "pg1"})
    handle = FakeHandle({}, [target])
    handle.objects.add(KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                             "metadata": {"name": "pg1", "namespace": "ns"},
                                             "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}))
    assert Coscheduling(None, handle).permit(CycleState(), target, "node")[0].message() == "PodGroup not found"


@pytest.mark.parametrize("kubernetes_first", [True, False], ids=["kubernetes-first", "ours-first"])
def test_ours_is_read_beside_kubernetes_own_pod_group_of_the_same_name(kubernetes_first: bool) -> None:
    # two API groups, two objects: the store keeps both, and Coscheduling reads its own (minMember 1)
    target = pod({"name": "p", "pg": "pg1"})
    handle = FakeHandle({}, [target])
    theirs = KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                   "metadata": {"name": "pg1", "namespace": "ns"},
                                   "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    for o in ([theirs, pod_group("pg1", 1)] if kubernetes_first else [pod_group("pg1", 1), theirs]):
        handle.objects.add(o)
    assert Coscheduling(None, handle).permit(CycleState(), target, "node")[0] is None
