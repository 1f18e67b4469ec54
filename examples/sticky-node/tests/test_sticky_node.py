"""StickyNode's tests, written with scheduling_framework.testing only: builders, the fake cluster and
framework fixtures (from the pytest plugin scheduling-framework installs), and plain-data answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scheduling_framework import PluginError, Registry
from scheduling_framework.testing import FakeCluster, make_node, make_pod

from sticky_node import ERR_REASON, StickyNode, memory_store, register_plugins

UNRESOLVABLE = "UnschedulableAndUnresolvable"


def vm_pod(name: str, vm: str, cpu: str = "1") -> Any:
    """A launcher pod controlled by the VirtualMachineInstance ``vm``."""
    return make_pod().name(name).req(cpu=cpu, memory="1Gi").owner_reference(vm, "VirtualMachineInstance",
                                                                            "kubevirt.io/v1")


@pytest.fixture
def placements(tmp_path: Path) -> Path:
    return tmp_path / "placements.json"


@pytest.fixture
def cluster(fake_cluster: FakeCluster) -> FakeCluster:
    # node-1 already runs a busy pod, so NodeResourcesFit (LeastAllocated) prefers node-2 and node-3.
    fake_cluster.add_nodes(3)
    fake_cluster.add_pod(make_pod().name("busy").req(cpu="3", memory="6Gi").node("node-1"))
    return fake_cluster


@pytest.fixture
def sticky(cluster: FakeCluster, framework_factory: Any, placements: Path) -> Any:
    return framework_factory([StickyNode, "NodeResourcesFit"], args={"StickyNode": {"storePath": str(placements)}})


def test_a_pod_of_no_vm_skips_the_filter(sticky: Any) -> None:
    pod = make_pod().name("web").req(cpu="1")
    assert sticky.pre_filter(pod)["skipped"] == ["StickyNode"]
    assert sticky.schedule(pod)["outcome"] == "Scheduled"


def test_the_first_placement_is_recorded_by_post_bind(sticky: Any, placements: Path) -> None:
    result = sticky.schedule(vm_pod("virt-launcher-vm1-a", "vm1"))
    assert result["node"] in ("node-2", "node-3")
    assert json.loads(placements.read_text()) == {"default/vm1": result["node"]}


def test_a_restarted_vm_returns_to_its_node(sticky: Any, placements: Path) -> None:
    placements.write_text(json.dumps({"default/vm1": "node-1"}))
    pod = vm_pod("virt-launcher-vm1-b", "vm1")
    assert sticky.filter(pod) == {
        "node-1": {"code": "Success"},
        "node-2": {"code": UNRESOLVABLE, "plugin": "StickyNode", "reasons": [ERR_REASON]},
        "node-3": {"code": UNRESOLVABLE, "plugin": "StickyNode", "reasons": [ERR_REASON]},
    }
    # node-1 is the busiest node: NodeResourcesFit alone would pick another one.
    assert sticky.schedule(pod)["node"] == "node-1"


def test_only_the_first_placement_is_kept(sticky: Any, placements: Path) -> None:
    first = sticky.schedule(vm_pod("virt-launcher-vm1-a", "vm1"))["node"]
    sticky.delete_pod("default/virt-launcher-vm1-a")
    sticky.post_bind(vm_pod("virt-launcher-vm1-b", "vm1"), "node-1")
    assert json.loads(placements.read_text()) == {"default/vm1": first}


def test_the_node_is_remembered_from_one_run_to_the_next(cluster: FakeCluster, framework_factory: Any,
                                                         placements: Path) -> None:
    args = {"StickyNode": {"storePath": str(placements)}}
    first = framework_factory([StickyNode, "NodeResourcesFit"], args=args).schedule(vm_pod("launcher-a", "vm1"))
    second = framework_factory([StickyNode, "NodeResourcesFit"], args=args).schedule(vm_pod("launcher-b", "vm1"))
    assert second["node"] == first["node"]


def test_a_full_sticky_node_leaves_the_pod_pending(sticky: Any, placements: Path) -> None:
    placements.write_text(json.dumps({"default/vm1": "node-1"}))
    result = sticky.schedule(vm_pod("virt-launcher-vm1-b", "vm1", cpu="2"))
    assert result["outcome"] == "Unschedulable"
    assert result["message"] == f"0/3 nodes are available: 1 Insufficient cpu, 2 {ERR_REASON}."


def test_a_vanished_sticky_node_is_reported_by_pre_filter(sticky: Any, placements: Path) -> None:
    placements.write_text(json.dumps({"default/vm1": "node-9"}))
    assert sticky.pre_filter(vm_pod("launcher", "vm1")) == {
        "code": UNRESOLVABLE, "plugin": "StickyNode", "nodes": None, "skipped": [],
        "reasons": ['VM default/vm1 sticks to node "node-9", which is not in the cluster']}


def test_an_in_process_store_by_name(cluster: FakeCluster, framework_factory: Any) -> None:
    store = memory_store("test_an_in_process_store_by_name")
    fw = framework_factory([StickyNode], args={"StickyNode": {"storeName": "test_an_in_process_store_by_name"}})
    node = fw.schedule(vm_pod("launcher", "vm7"))["node"]
    assert store.placements() == {"default/vm7": node}


def test_owner_kinds_choose_which_owners_are_vms(cluster: FakeCluster, framework_factory: Any,
                                                 placements: Path) -> None:
    placements.write_text(json.dumps({"default/web-abc": "node-1"}))
    pod = make_pod().name("web-abc-1").owner_reference("web-abc", "ReplicaSet", "apps/v1")
    default = framework_factory([StickyNode], args={"StickyNode": {"storePath": str(placements)}})
    assert default.pre_filter(pod)["skipped"] == ["StickyNode"]
    replica_sets = framework_factory([StickyNode], args={"StickyNode": {"storePath": str(placements),
                                                                         "ownerKinds": ["ReplicaSet"]}})
    assert replica_sets.feasible_nodes(pod) == ["node-1"]


@pytest.mark.parametrize(("args", "message"), [
    pytest.param({"storePath": 3}, "args.storePath: expected a non-empty string, got 3", id="path-not-a-string"),
    pytest.param({"storePath": "a.json", "storeName": "b"}, "storePath and storeName are exclusive", id="both"),
    pytest.param({"ownerKinds": "VirtualMachineInstance"}, "args.ownerKinds: expected a non-empty list",
                 id="kinds-not-a-list"),
    pytest.param({"stor": "x"}, "args.stor: unknown field", id="unknown-field"),
    pytest.param(["x"], "args: expected a mapping", id="not-a-mapping"),
])
def test_bad_args_are_reported_when_the_framework_is_built(framework_factory: Any, args: Any, message: str) -> None:
    with pytest.raises(PluginError, match="plugin 'StickyNode'") as err:
        framework_factory([StickyNode], args={"StickyNode": args})
    assert message in str(err.value)


def test_an_unreadable_store_is_reported_when_the_framework_is_built(framework_factory: Any,
                                                                     placements: Path) -> None:
    placements.write_text("[1, 2]")
    with pytest.raises(PluginError, match=r"args\.storePath: .*expected a JSON object"):
        framework_factory([StickyNode], args={"StickyNode": {"storePath": str(placements)}})


def test_the_package_registers_the_plugin() -> None:
    registry = Registry()
    register_plugins(registry)
    assert registry.get("StickyNode") is StickyNode
    assert registry.points_of("StickyNode") == {"preFilter", "filter", "postBind"}


def test_it_joins_the_default_profile_with_multipoint(fake_cluster: FakeCluster, framework_factory: Any,
                                                      placements: Path) -> None:
    fake_cluster.add_node(make_node().name("a").capacity(cpu="4", memory="8Gi"),
                          make_node().name("b").capacity(cpu="4", memory="8Gi"))
    placements.write_text(json.dumps({"default/vm1": "b"}))
    fw = framework_factory([StickyNode], args={"StickyNode": {"storePath": str(placements)}}, with_defaults=True)
    assert fw.framework.list_plugins()["filter"][-1] == {"name": "StickyNode"}
    assert fw.schedule(vm_pod("launcher", "vm1"))["node"] == "b"
