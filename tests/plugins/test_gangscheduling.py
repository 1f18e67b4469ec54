"""GangScheduling over upstream's TestGangSchedulingFlow tables of Kubernetes 1.35, 1.36 and 1.37
(tests/fixtures/upstream/gangscheduling-v1.3x.yaml) and 1.37's TestPlacementFeasible, plus the plugin's own
edge cases."""

from __future__ import annotations

import pathlib
from collections.abc import Iterable
from typing import Any

import pytest

from plugins_intree.gangscheduling import GangScheduling
from plugins_intree.gangscheduling.plugin import MSG_WAIT_PERMIT, MSG_WAIT_PERMIT_135, placement_feasible
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.features import FeatureGates
from scheduling_framework.runtime.waiting_pods import WaitingPod, WaitingPodsMap
from scheduling_framework.state.podgroups import DEFAULT_SCHEDULING_TIMEOUT_SECONDS, PodGroupManager
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code, Status
from scheduling_framework.testing import make_pod
from tests import yamlio

UPSTREAM = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
TABLE = yamlio.load((UPSTREAM / "gangscheduling-v1.35.yaml").read_text())
TABLE_136 = yamlio.load((UPSTREAM / "gangscheduling-v1.36.yaml").read_text())
TABLE_137 = yamlio.load((UPSTREAM / "gangscheduling-v1.37.yaml").read_text())


def workload(name: str, groups: dict[str, Any], namespace: str = "ns1") -> KubeObject:
    pgs = [{"name": g, "policy": {"basic": {}} if p == "basic" else {"gang": {"minCount": p}}}
           for g, p in groups.items()]
    return KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                                 "metadata": {"name": name, "namespace": namespace}, "spec": {"podGroups": pgs}})


def table_pod(name: str) -> Pod:
    ref = TABLE["pods"][name]
    b = make_pod().namespace("ns1").name(name).uid(name)
    if ref:
        b = b.workload_ref(ref["workload"], ref["podGroup"], ref.get("replicaKey", ""))
    return b.obj()


def pod_group_object(name: str, policy: Any, namespace: str = "ns1") -> KubeObject:
    pol = {"basic": {}} if policy == "basic" else {"gang": {"minCount": policy}}
    return KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                 "metadata": {"name": name, "namespace": namespace},
                                 "spec": {"schedulingPolicy": pol}})


def table_136_pod(name: str) -> Pod:
    d = TABLE_136["pods"][name]
    b = make_pod().namespace("ns1").name(name).uid(name)
    return (b.scheduling_group(d["podGroup"]) if d else b).obj()


def table_137_pod(name: str) -> Pod:
    d = TABLE_137["pods"][name]
    b = make_pod().namespace("ns1").name(name).uid(name)
    return (b.scheduling_group(d["podGroup"]) if d else b).obj()


class FakeHandle:
    """What GangScheduling reads through its handle: the objects, the pod groups, waiting pods, Activate."""

    def __init__(self, workloads: Iterable[KubeObject] = (), clock: Any = None, release: str = "1.35") -> None:
        self.objects = ObjectStore(workloads)
        self.pod_groups = PodGroupManager(clock if clock is not None else (lambda: 0.0))
        self.waiting_pods = WaitingPodsMap()
        self.activated: list[str] = []
        gates = {"GenericWorkload": True} if release >= "1.37" else {"GenericWorkload": True, "GangScheduling": True}
        self.feature_gates = FeatureGates.for_release(release, gates)

    def activate(self, pods: Iterable[Pod]) -> None:
        self.activated.extend(p.name for p in pods)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)


def _as_dict(st: Status | None) -> dict[str, str] | None:
    return None if st is None else {"code": str(st.code), "message": st.message()}


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_gang_scheduling_flow(case: dict[str, Any]) -> None:
    handle = FakeHandle(workload(n, TABLE["workloads"][n]) for n in case.get("initialWorkloads", []))
    _flow(handle, case, table_pod)


@pytest.mark.parametrize("case", TABLE_136["cases"], ids=[c["name"] for c in TABLE_136["cases"]])
def test_gang_scheduling_flow_pod_group_api(case: dict[str, Any]) -> None:
    handle = FakeHandle((pod_group_object(n, TABLE_136["podGroups"][n]) for n in case.get("initialPodGroups", [])),
                        release=TABLE_136["release"])
    _flow(handle, case, table_136_pod)


@pytest.mark.parametrize("case", TABLE_137["cases"], ids=[c["name"] for c in TABLE_137["cases"]])
def test_gang_scheduling_flow_137(case: dict[str, Any]) -> None:
    handle = FakeHandle((pod_group_object(n, TABLE_137["podGroups"][n]) for n in case.get("initialPodGroups", [])),
                        release=TABLE_137["release"])
    _flow(handle, case, table_137_pod)


@pytest.mark.parametrize("case", TABLE_137["placementFeasible"],
                         ids=[c["name"] for c in TABLE_137["placementFeasible"]])
def test_placement_feasible(case: dict[str, Any]) -> None:
    scheduled = case.get("initialScheduledCount", 0)
    got = []
    for i, code in enumerate(case["podStatuses"]):
        if code == "Success":
            scheduled += 1
        remaining = case["unscheduled"] - (i + 1)
        st = placement_feasible(case["minCount"], scheduled, remaining) if case["minCount"] else None
        got.append("Success" if st is None else str(st.code))
    assert got == case["expectedStatuses"]


@pytest.mark.parametrize(("min_count", "scheduled", "remaining", "want"), [
    (4, 3, 0, "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"),
    (4, 1, 3, "minCount (4) is not yet satisfied: 1 scheduled, 3 remaining"),
], ids=["cannot be satisfied", "not yet satisfied"])
def test_placement_feasible_messages(min_count: int, scheduled: int, remaining: int, want: str) -> None:
    st = placement_feasible(min_count, scheduled, remaining)
    assert st is not None and (st.message(), st.plugin) == (want, "GangScheduling")


def _flow(handle: FakeHandle, case: dict[str, Any], table_pod: Any) -> None:
    for name in case.get("initialPods", []):
        handle.pod_groups.add_pod(table_pod(name))
    pod = table_pod(case["pod"])
    handle.pod_groups.add_pod(pod)
    pl = GangScheduling(None, handle)
    # 1.35: the plugin's Reserve assumes the pod in its group; 1.36+: the scheduler's cache does (no Reserve)
    v135 = handle.feature_gates.release == "1.35"

    def assume(p: Pod) -> None:
        if v135:
            assert pl.reserve(CycleState(), p, "some-node") is None
        else:
            handle.pod_groups.assume(p)

    got = pl.pre_enqueue(pod)
    assert _as_dict(got) == case["wantPreEnqueue"]
    if got is not None:
        return
    for name in case.get("podsWaitingOnPermit", []):
        other = table_pod(name)
        assume(other)
        st, timeout = pl.permit(CycleState(), other, "some-node")
        assert st is not None and st.code == Code.WAIT, name
        handle.waiting_pods.add(WaitingPod(other, {pl.name: timeout}, clock=lambda: 0.0))
    assume(pod)
    handle.activated.clear()
    st, _ = pl.permit(CycleState(), pod, "some-node")
    assert _as_dict(st) == case["wantPermit"]
    assert sorted(handle.activated) == sorted(case.get("wantActivatedPods", []))
    allowed = set(case.get("wantAllowedPods", []))
    for name in case.get("podsWaitingOnPermit", []):
        wp = handle.waiting_pods.get(name)
        assert wp is not None
        assert wp.done() == (name in allowed), name


def _gang(n: int, min_count: int) -> tuple[FakeHandle, GangScheduling, list[Pod]]:
    handle = FakeHandle([workload("w", {"g": min_count}, "default")])
    pods = [make_pod().name(f"p{i}").uid(f"p{i}").workload_ref("w", "g").obj() for i in range(n)]
    for p in pods:
        handle.pod_groups.add_pod(p)
    return handle, GangScheduling(None, handle), pods


def test_pre_enqueue_names_a_missing_pod_group() -> None:
    handle = FakeHandle([workload("w", {"g": 2}, "default")])
    pod = make_pod().name("p").uid("p").workload_ref("w", "other").obj()
    st = GangScheduling(None, handle).pre_enqueue(pod)
    assert _as_dict(st) == {"code": "UnschedulableAndUnresolvable",
                            "message": 'pod group "other" doesn\'t exist for a workload "w"'}


def test_permit_after_the_workload_is_gone_is_an_error() -> None:
    handle = FakeHandle()
    pod = make_pod().name("p").uid("p").workload_ref("w", "g").obj()
    st, _ = GangScheduling(None, handle).permit(CycleState(), pod, "n")
    assert _as_dict(st) == {"code": "Error",
                            "message": 'failed to get workload default/w: workload.scheduling.k8s.io "w" not found'}


def test_bound_members_count_towards_the_quorum() -> None:
    handle = FakeHandle([workload("w", {"g": 2}, "default")])
    bound = make_pod().name("b").uid("b").node("n1").workload_ref("w", "g").obj()
    pod = make_pod().name("p").uid("p").workload_ref("w", "g").obj()
    handle.pod_groups.add_pod(bound)
    handle.pod_groups.add_pod(pod)
    pl = GangScheduling(None, handle)
    pl.reserve(CycleState(), pod, "n2")
    assert pl.permit(CycleState(), pod, "n2") == (None, 0)


def test_unreserve_takes_the_pod_out_of_the_quorum() -> None:
    _, pl, pods = _gang(2, 2)
    pl.reserve(CycleState(), pods[0], "n")
    pl.unreserve(CycleState(), pods[0], "n")
    pl.reserve(CycleState(), pods[1], "n")
    st, _ = pl.permit(CycleState(), pods[1], "n")
    assert st is not None and st.code == Code.WAIT and st.message() == MSG_WAIT_PERMIT_135


@pytest.mark.parametrize(("release", "want"), [("1.35", MSG_WAIT_PERMIT_135), ("1.36", MSG_WAIT_PERMIT),
                                               ("1.37", MSG_WAIT_PERMIT)])
def test_permit_wait_message_per_release(release: str, want: str) -> None:
    handle = FakeHandle(release=release)
    if release == "1.35":
        handle.objects.add(workload("w", {"g": 2}, "default"))
        pod = make_pod().name("p").uid("p").workload_ref("w", "g").obj()
    else:
        handle.objects.add(pod_group_object("g", 2, "default"))
        pod = make_pod().name("p").uid("p").scheduling_group("g").obj()
    handle.pod_groups.add_pod(pod)
    handle.pod_groups.assume(pod)
    st, _ = GangScheduling(None, handle).permit(CycleState(), pod, "n")
    assert st is not None and (st.code, st.message()) == (Code.WAIT, want)


def test_members_share_one_deadline() -> None:
    now = [100.0]
    handle = FakeHandle([workload("w", {"g": 3}, "default")], clock=lambda: now[0])
    pods = [make_pod().name(f"p{i}").uid(f"p{i}").workload_ref("w", "g").obj() for i in range(3)]
    for p in pods:
        handle.pod_groups.add_pod(p)
    pl = GangScheduling(None, handle)
    pl.reserve(CycleState(), pods[0], "n")
    _, first = pl.permit(CycleState(), pods[0], "n")
    now[0] = 160.0
    pl.reserve(CycleState(), pods[1], "n")
    _, second = pl.permit(CycleState(), pods[1], "n")
    assert (first, second) == (DEFAULT_SCHEDULING_TIMEOUT_SECONDS, DEFAULT_SCHEDULING_TIMEOUT_SECONDS - 60)


def test_a_new_deadline_after_the_old_one_passed() -> None:
    now = [0.0]
    handle = FakeHandle([workload("w", {"g": 3}, "default")], clock=lambda: now[0])
    pod = make_pod().name("p").uid("p").workload_ref("w", "g").obj()
    handle.pod_groups.add_pod(pod)
    pl = GangScheduling(None, handle)
    pl.reserve(CycleState(), pod, "n")
    pl.permit(CycleState(), pod, "n")
    now[0] = DEFAULT_SCHEDULING_TIMEOUT_SECONDS + 1
    _, timeout = pl.permit(CycleState(), pod, "n")
    assert timeout == DEFAULT_SCHEDULING_TIMEOUT_SECONDS


def test_replica_keys_are_separate_gangs() -> None:
    handle = FakeHandle([workload("w", {"g": 2}, "default")])
    a = make_pod().name("a").uid("a").workload_ref("w", "g", "0").obj()
    b = make_pod().name("b").uid("b").workload_ref("w", "g", "1").obj()
    for p in (a, b):
        handle.pod_groups.add_pod(p)
    pl = GangScheduling(None, handle)
    assert _as_dict(pl.pre_enqueue(a)) == {"code": "UnschedulableAndUnresolvable",
                                           "message": "waiting for minCount pods from a gang to appear in "
                                                      "scheduling queue"}


def test_without_generic_workload_the_plugin_passes_every_pod() -> None:
    handle, _, pods = _gang(2, 2)
    handle.feature_gates = FeatureGates.for_release("1.35", {"GangScheduling": True})
    pl = GangScheduling(None, handle)
    assert (pl.pre_enqueue(pods[0]), pl.permit(CycleState(), pods[0], "n")) == (None, (None, 0))


def test_pod_group_api_permit_after_the_pod_group_is_gone_is_an_error() -> None:
    handle = FakeHandle(release="1.36")
    pod = make_pod().name("p").uid("p").scheduling_group("pg").obj()
    st, _ = GangScheduling(None, handle).permit(CycleState(), pod, "n")
    assert _as_dict(st) == {"code": "Error",
                            "message": 'failed to get podGroup default/pg: podgroup.scheduling.k8s.io "pg" not found'}


@pytest.mark.parametrize(("release", "pod_kind"), [("1.35", "schedulingGroup"), ("1.36", "workloadRef")])
def test_each_release_reads_only_its_own_field(release: str, pod_kind: str) -> None:
    handle = FakeHandle([workload("w", {"g": 2}, "default")], release=release)
    handle.objects.add(pod_group_object("g", 2, "default"))
    b = make_pod().name("p").uid("p")
    pod = (b.scheduling_group("g") if pod_kind == "schedulingGroup" else b.workload_ref("w", "g")).obj()
    handle.pod_groups.add_pod(pod)
    assert GangScheduling(None, handle).pre_enqueue(pod) is None  # one pod of minCount 2, yet not held
