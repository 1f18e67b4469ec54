"""The reference Scheduler places a gang (Workload pod group with a gang policy) whole or not at all, and says
why; bad Workload input warns, naming the object and field, and leaves the other pods alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework import Scheduler
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.features import gang_scheduling_gates
from scheduling_framework.testing import make_node, make_pod

GATES = "GenericWorkload=true,GangScheduling=true"


def workload(groups: dict[str, Any], name: str = "train") -> KubeObject:
    pgs = [{"name": g, "policy": {"basic": {}} if p == "basic" else {"gang": {"minCount": p}}}
           for g, p in groups.items()]
    return KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                                 "metadata": {"name": name, "namespace": "default"}, "spec": {"podGroups": pgs}})


def workers(n: int, group: str = "workers", cpu: str = "3", **kw: str) -> list[Pod]:
    out = []
    for i in range(n):
        b = make_pod().name(f"{group}-{i}").uid(f"{group}-{i}").req(cpu=cpu).workload_ref("train", group)
        if "scheduler" in kw:
            b = b.scheduler_name(kw["scheduler"]) if i == n - 1 else b
        out.append(b.obj())
    return out


def run(nodes: int, pods: list[Pod], objects: list[KubeObject], gates: str = GATES,
        release: str = "1.35") -> Scheduler:
    if gates == GATES:
        gates = gang_scheduling_gates(release)  # 1.37 has no GangScheduling gate (GenericWorkload alone)
    sched = Scheduler(kubernetes_version=release, feature_gates=gates, seed=1)
    sched.load([make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(nodes)],
               pods, objects)
    sched.run()
    return sched


def pod_group(name: str, policy: int | str) -> KubeObject:
    """A PodGroup (scheduling.k8s.io/v1alpha2, Kubernetes 1.36+)."""
    pol: dict[str, Any] = {"basic": {}} if policy == "basic" else {"gang": {"minCount": policy}}
    return KubeObject.from_dict({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                 "metadata": {"name": name, "namespace": "default"},
                                 "spec": {"schedulingPolicy": pol}})


def grouped_workers(n: int, group: str = "workers", cpu: str = "3") -> list[Pod]:
    """Workers joined to PodGroup ``group`` by spec.schedulingGroup (Kubernetes 1.36+)."""
    return [make_pod().name(f"{group}-{i}").uid(f"{group}-{i}").req(cpu=cpu).scheduling_group(group).obj()
            for i in range(n)]


def gang(release: str, n: int = 4, min_count: int = 4) -> tuple[list[Pod], list[KubeObject]]:
    """The release's way to make a gang: a Workload and spec.workloadRef (1.35), a PodGroup and
    spec.schedulingGroup (1.36+)."""
    if release == "1.35":
        return workers(n), [workload({"workers": min_count})]
    return grouped_workers(n), [pod_group("workers", min_count)]


@pytest.mark.parametrize("release", ["1.35", "1.36", "1.37"])
def test_gang_of_four_with_room_for_three_schedules_none_and_says_why(release: str) -> None:
    sched = run(3, *gang(release), release=release)
    assert [r.outcome for r in sched.results.values()] == ["Unschedulable"] * 4
    assert sched.cache.pods() == [] or all(p.spec.workload_ref is None for p in sched.cache.pods())
    (group,) = sched.pod_group_results()
    assert group["outcome"] == "Unschedulable" and group["scheduled"] == 0 and group["minCount"] == 4
    how = ("and waited at Permit until the 5m0s timeout" if release == "1.35"  # pod by pod, Permit's deadline
           else "in the pod group's scheduling cycle")  # 1.36+: one pod-group cycle decides for the group
    assert group["message"].startswith(f"minCount 4 not reached, no pod of the gang was bound; 3 pod(s) found a "
                                       f"node {how}; ")
    assert "found no node: 0/3 nodes are available: 3 Insufficient cpu." in group["message"]


@pytest.mark.parametrize("release", ["1.36", "1.37"])
def test_pod_group_cycle_rejects_the_group_at_once_with_upstreams_message(release: str) -> None:
    # upstream 1.36+ (schedule_one_podgroup.go): the members that found a node fail with their Permit status's
    # message behind the group's error; no Permit timeout passes and one cycle tries the whole group
    sched = run(3, *gang(release), release=release)
    placed = {key: r.message for key, r in sched.results.items() if not r.message.startswith("0/3 nodes")}
    assert placed == {key: 'pod group is unschedulable, one or more plugins asked to wait and no plugin rejected '
                           f'pod "{key.split("/")[1]}"' for key in placed}
    assert len(placed) == 3
    assert (sched.clock(), sched.cycles) == (0.0, 1)


@pytest.mark.parametrize("release", ["1.36", "1.37"])
def test_pod_group_cycle_places_the_whole_gang_in_one_cycle(release: str) -> None:
    sched = run(4, *gang(release), release=release)
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}
    assert (sched.clock(), sched.cycles) == (0.0, 1)


def test_pod_group_cycle_members_asking_for_different_schedulers_fail_together() -> None:
    profiles = [{"schedulerName": "default-scheduler"}, {"schedulerName": "other"}]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": profiles}
    sched = Scheduler(config, kubernetes_version="1.36", feature_gates=gang_scheduling_gates("1.36"), seed=1)
    pods = grouped_workers(3)
    pods[-1] = make_pod().name("workers-2").uid("workers-2").req(cpu="3").scheduling_group("workers") \
        .scheduler_name("other").obj()
    sched.load([make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(4)],
               pods, [pod_group("workers", 3)])
    sched.run(max_cycles=1)
    got = {(r.outcome, r.message) for r in sched.results.values()}
    assert len(sched.results) == 3 and len(got) == 1
    ((outcome, message),) = got
    assert outcome == "Error"
    assert message.startswith("all pods in a single pod group should have the same .spec.schedulerName set, got: ")


def test_failed_gang_is_tried_once_not_until_the_run_gives_up() -> None:
    # the room the gang's own members give back after the timeout does not send the gang round again
    sched = run(3, workers(4), [workload({"workers": 4})])
    assert sched.clock() == 300.0
    assert not any("run() stopped" in w for w in sched.warnings)


@pytest.mark.parametrize("release", ["1.35", "1.36", "1.37"])
def test_gang_of_four_with_room_for_four_is_placed_in_one_go_in_every_release(release: str) -> None:
    sched = run(4, *gang(release), release=release)
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}
    assert sched.pod_group_results()[0]["outcome"] == "Scheduled"


@pytest.mark.parametrize(("release", "pods", "objects", "field"), [
    pytest.param("1.36", workers, lambda: [workload({"workers": 4})], "spec.workloadRef", id="1.36-workloadRef"),
    pytest.param("1.37", workers, lambda: [workload({"workers": 4})], "spec.workloadRef", id="1.37-workloadRef"),
    pytest.param("1.35", grouped_workers, lambda: [pod_group("workers", 4)], "spec.schedulingGroup",
                 id="1.35-schedulingGroup"),
])
def test_the_other_release_s_field_is_ignored_with_a_warning(release: str, pods: Any, objects: Any,
                                                             field: str) -> None:
    sched = run(3, pods(4), objects(), release=release)
    assert sum(r.outcome == "Scheduled" for r in sched.results.values()) == 3  # one by one
    assert any(f"pod(s) use {field}, which Kubernetes {release} does not have" in w for w in sched.warnings)
    assert sched.pod_group_results() == []


def test_missing_pod_group_object_warns_and_waits() -> None:
    sched = run(2, grouped_workers(2), [], release="1.36")
    assert sched.results["default/workers-0"].message == \
        'waiting for pods\'s pod group "workers" to appear in scheduling queue'
    assert any("spec.schedulingGroup.podGroupName names a PodGroup the input does not have" in w and
               'default/workers-0 (spec.schedulingGroup.podGroupName "workers")' in w for w in sched.warnings)


def test_pod_group_added_later_releases_the_gang() -> None:
    sched = run(4, grouped_workers(2), [], release="1.36")
    sched.add_object(pod_group("workers", 2))
    sched.run()
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}


def test_gang_of_four_with_room_for_four_is_placed_in_one_go() -> None:
    sched = run(4, workers(4), [workload({"workers": 4})])
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}
    assert len({r.node for r in sched.results.values()}) == 4
    assert sched.clock() == 0.0  # nobody waited for a timeout: the fourth pod released the three waiting
    assert sched.pod_group_results()[0]["outcome"] == "Scheduled"


def test_other_pods_take_the_room_a_failed_gang_gave_back() -> None:
    web = make_pod().name("web").uid("web").req(cpu="3").obj()
    sched = run(3, [*workers(4), web], [workload({"workers": 4})])
    assert sched.results["default/web"].outcome == "Scheduled"
    assert {r.outcome for k, r in sched.results.items() if k != "default/web"} == {"Unschedulable"}


def test_without_the_gates_pods_are_placed_one_by_one_with_a_warning() -> None:
    sched = run(3, workers(4), [workload({"workers": 4})], gates="")
    assert sum(r.outcome == "Scheduled" for r in sched.results.values()) == 3
    assert any("scheduled one by one, not as gangs" in w for w in sched.warnings)


def test_basic_group_is_placed_pod_by_pod() -> None:
    sched = run(3, workers(4), [workload({"workers": "basic"})])
    assert sum(r.outcome == "Scheduled" for r in sched.results.values()) == 3


def test_gang_waits_for_min_count_pods() -> None:
    sched = run(4, workers(2), [workload({"workers": 3})])
    assert {r.message for r in sched.results.values()} == {
        "waiting for minCount pods from a gang to appear in scheduling queue"}
    (group,) = sched.pod_group_results()
    assert group["outcome"] == "Waiting"
    assert group["message"].endswith("(2 pod(s) of the group exist, minCount 3)")
    assert any("fewer pods than the gang policy's minCount" in w and
               "default/train/workers: 2 pod(s), minCount 3" in w for w in sched.warnings)


def test_missing_workload_warns_and_leaves_other_pods_alone() -> None:
    web = make_pod().name("web").uid("web").req(cpu="1").obj()
    sched = run(2, [*workers(2), web], [])
    assert sched.results["default/web"].outcome == "Scheduled"
    assert sched.results["default/workers-0"].message == \
        'waiting for pods\'s workload "train" to appear in scheduling queue'
    assert any("spec.workloadRef.name names a Workload the input does not have" in w and
               'default/workers-0 (spec.workloadRef.name "train")' in w for w in sched.warnings)


def test_missing_pod_group_warns() -> None:
    sched = run(2, workers(2, group="ps"), [workload({"workers": 2})])
    assert sched.results["default/ps-0"].message == 'pod group "ps" doesn\'t exist for a workload "train"'
    assert any('spec.workloadRef.podGroup "ps" of Workload default/train' in w for w in sched.warnings)


def test_members_asking_for_different_schedulers_warn() -> None:
    sched = run(4, workers(3, scheduler="other"), [workload({"workers": 3})])
    assert any("pods ask for different schedulers" in w and '"default-scheduler" (2), "other" (1)' in w
               for w in sched.warnings)
    # the member for another scheduler is not counted: the two others wait for minCount
    assert sched.results["default/workers-0"].message.startswith("waiting for minCount pods")


def test_workload_added_later_releases_the_gang() -> None:
    sched = run(4, workers(2), [])
    sched.add_object(workload({"workers": 2}))
    sched.run()
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}


def test_gang_scheduling_gate_without_generic_workload_warns() -> None:
    sched = Scheduler(kubernetes_version="1.35", feature_gates="GangScheduling=true")
    assert any("GangScheduling=true has no effect without GenericWorkload=true" in w for w in sched.warnings)


def test_plugin_enabled_by_configuration_without_generic_workload_is_inert() -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}}}]}
    sched = Scheduler(config, kubernetes_version="1.35", seed=1)
    sched.load([make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(3)],
               workers(4), [workload({"workers": 4})])
    sched.run()
    assert sum(r.outcome == "Scheduled" for r in sched.results.values()) == 3
    assert any("scheduled one by one, not as gangs" in w for w in sched.warnings)


# --- upstream's queueing-hint tables (tests/fixtures/upstream/gangscheduling-v1.35.yaml) ---------------------
HINTS = yaml.safe_load((Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
                        / "gangscheduling-v1.35.yaml").read_text())


def _hint_pod(name: str, d: dict[str, Any]) -> Pod:
    ns = d.get("namespace", "default")
    ref = d["ref"]
    return make_pod().name(name).uid(f"{ns}-{name}").namespace(ns).req(cpu="1").workload_ref(*ref).obj()


@pytest.mark.parametrize("case", HINTS["podAddedHints"], ids=[c["name"] for c in HINTS["podAddedHints"]])
def test_is_schedulable_after_pod_added(case: dict[str, Any]) -> None:
    target = _hint_pod("p", case["pod"])
    ns = case["pod"].get("namespace", "default")
    sched = Scheduler(kubernetes_version="1.35", feature_gates=GATES, seed=1)
    sched.add_node(make_node().name("node-0").capacity(cpu="8", memory="8Gi").obj())
    for wl_ns in {ns, case["newPod"].get("namespace", "default")}:
        for wl_name in ("w1", "w2"):
            sched.add_object(KubeObject.from_dict({
                "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                "metadata": {"name": wl_name, "namespace": wl_ns},
                "spec": {"podGroups": [{"name": g, "policy": {"gang": {"minCount": 2}}} for g in ("pg", "pg2")]}}))
    sched.add_pod(target)
    assert sched.results[target.key].message.startswith("waiting for minCount pods")
    rechecked = _count_pre_enqueue(sched, target)
    sched.add_pod(_hint_pod("new", case["newPod"]))
    # Queue: the target goes through PreEnqueue again (and, its gang now complete, leaves the gated pods);
    # QueueSkip: it is not even asked again
    assert (rechecked[0] > 0) == (case["expectedHint"] == "Queue")
    released = not any(q.pod.uid == target.uid for q in sched.queue.pending_pods()["gated"])
    assert released == (case["expectedHint"] == "Queue")


def _count_pre_enqueue(sched: Scheduler, target: Pod) -> list[int]:
    calls = [0]
    fwk = sched.profile()
    inner = fwk.run_pre_enqueue_plugins

    def counting(pod: Pod) -> Any:
        if pod.uid == target.uid:
            calls[0] += 1
        return inner(pod)

    fwk.run_pre_enqueue_plugins = counting  # type: ignore[method-assign]
    return calls


@pytest.mark.parametrize("case", HINTS["workloadAddedHints"], ids=[c["name"] for c in HINTS["workloadAddedHints"]])
def test_is_schedulable_after_workload_added(case: dict[str, Any]) -> None:
    target = _hint_pod("p", case["pod"])
    sched = Scheduler(kubernetes_version="1.35", feature_gates=GATES, seed=1)
    sched.add_node(make_node().name("node-0").capacity(cpu="8", memory="8Gi").obj())
    sched.add_pod(target)
    assert "to appear in scheduling queue" in sched.results[target.key].message
    rechecked = _count_pre_enqueue(sched, target)
    wl = case["newWorkload"]
    sched.add_object(KubeObject.from_dict({
        "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
        "metadata": {"name": wl["name"], "namespace": wl.get("namespace", "default")},
        "spec": {"podGroups": [{"name": "pg", "policy": {"gang": {"minCount": 1}}}]}}))
    assert (rechecked[0] > 0) == (case["expectedHint"] == "Queue")
    released = not any(q.pod.uid == target.uid for q in sched.queue.pending_pods()["gated"])
    assert released == (case["expectedHint"] == "Queue")


def test_waiting_gang_members_hold_no_thread_under_the_virtual_clock() -> None:
    import threading

    before = threading.active_count()
    sched = Scheduler(kubernetes_version="1.35", feature_gates=GATES, seed=1)
    sched.load([make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(8)],
               workers(8), [workload({"workers": 8})])
    peak = [0]
    inner = sched._schedule_one

    def counting() -> Any:
        r = inner()
        peak[0] = max(peak[0], threading.active_count() - before)
        return r

    sched._schedule_one = counting  # type: ignore[method-assign]
    sched.run()
    assert {r.outcome for r in sched.results.values()} == {"Scheduled"}
    assert peak[0] == 0


def test_pod_group_cycle_fault_undoes_the_trials_and_errs_every_member(monkeypatch: pytest.MonkeyPatch) -> None:
    sched = Scheduler(kubernetes_version="1.36", feature_gates=gang_scheduling_gates("1.36"), seed=1)
    sched.load([make_node().name(f"node-{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(4)],
               grouped_workers(4), [pod_group("workers", 4)])
    algo = sched._algorithms["default-scheduler"]
    real = algo.schedule_pod
    tried: list[str] = []

    def third_raises(state: Any, pod: Pod, explain: bool = False) -> Any:
        tried.append(pod.name)
        if len(tried) == 3:
            raise RuntimeError("boom")
        return real(state, pod, explain)

    monkeypatch.setattr(algo, "schedule_pod", third_raises)
    sched.run(max_cycles=1)
    assert {r.outcome for r in sched.results.values()} == {"Error"}
    assert all("pod group scheduling cycle of pod" in r.message and "RuntimeError: boom" in r.message
               for r in sched.results.values())
    assert sched.cache.pods() == []  # no trial placement stays assumed
    assert all(not g.assumed for _, g in sched.pod_groups.groups())


@pytest.mark.parametrize(("release", "hint"), [
    ("1.36", "--feature-gates GenericWorkload=true,GangScheduling=true"),
    ("1.37", "the GenericWorkload feature gate is off (Kubernetes 1.37+: --feature-gates GenericWorkload=true)"),
])
def test_gates_off_warning_names_the_release_s_gates(release: str, hint: str) -> None:
    sched = run(4, *gang(release), release=release, gates="")
    assert any("scheduled one by one, not as gangs" in w and hint in w for w in sched.warnings)


def test_basic_pod_group_takes_one_cycle_and_places_every_member_that_fits_at_1_36() -> None:
    # upstream 1.36 ScheduleOne sends every pod with spec.schedulingGroup to the pod-group cycle; a basic group
    # is feasible as soon as one member's Permit succeeds, and the members that found no node fail on their own
    sched = run(2, grouped_workers(3), [pod_group("workers", "basic")], release="1.36")
    outcomes = sorted(r.outcome for r in sched.results.values())
    assert outcomes == ["Scheduled", "Scheduled", "Unschedulable"]
    assert sched.cycles == 1
    (failed,) = [r for r in sched.results.values() if r.outcome == "Unschedulable"]
    assert failed.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
