"""Property: any sequence of node/pod changes, forks, reverts and commits leaves the ClusterSnapshot equal to a
snapshot rebuilt from scratch from the surviving nodes and pods; a revert puts back the very NodeInfo objects
that were live at the fork, unmodified; a failed call changes nothing."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_builders import make_node, make_pod

from scheduling_framework.api import Node, Pod
from scheduling_framework.errors import SnapshotError
from scheduling_framework.simulation import ClusterSnapshot
from scheduling_framework.state.snapshot import Snapshot

NODE_NAMES = [f"n{i}" for i in range(5)]
ZONES = [None, "z-a", "z-b", "z-c"]
IMAGES = [(), ((["img-a:1"], 100),), ((["img-a:1"], 100), (["img-b:1", "img-b:latest"], 50))]
PVC_KEYS = ["default/claim-a", "default/claim-b"]


def node_variant(name: str, variant: int) -> Node:
    return make_node(name, cpu="8", zone=ZONES[variant % len(ZONES)], images=IMAGES[variant % len(IMAGES)])


def pod_variant(index: int, variant: int, node: str) -> Pod:
    # Host ports are unique per pod: two pods using one host port on one node cannot pass NodePorts, and
    # NodeInfo (like upstream's) keeps used ports as a set, so such a state has no well-defined rebuild.
    kinds: list[dict[str, Any]] = [
        {},
        {"host_ports": [8000 + index]},
        {"pvcs": ["claim-a"]},
        {"pvcs": ["claim-a", "claim-b"], "host_ports": [9000 + index]},
        {"labels": {"app": "db"}, "anti_affinity_to": {"app": "db"}},
        {"labels": {"app": "web"}, "affinity_to": {"app": "db"}},
    ]
    return make_pod(f"p{index}", cpu=f"{100 * (variant + 1)}m", node=node, **kinds[variant % len(kinds)])


TXN = st.sampled_from(["fork", "revert", "commit", "read"])
OPS = st.one_of(
    st.tuples(st.just("add_node"), st.sampled_from(NODE_NAMES), st.integers(0, 11)),
    st.tuples(st.just("remove_node"), st.sampled_from(NODE_NAMES), st.just(0)),
    st.tuples(st.just("add_pod"), st.integers(0, 7), st.tuples(st.sampled_from(NODE_NAMES), st.integers(0, 5))),
    st.tuples(st.just("add_pod"), st.integers(0, 7), st.tuples(st.sampled_from(NODE_NAMES), st.integers(0, 5))),
    st.tuples(st.just("remove_pod"), st.integers(0, 7), st.just(0)),
    st.tuples(TXN, st.just(0), st.just(0)),
    st.tuples(TXN, st.just(0), st.just(0)),
    st.tuples(st.just("refresh"), st.just(0), st.just(0)),
)

Model = tuple[dict[str, Node], dict[str, Pod]]


def rebuilt(model: Model) -> Snapshot:
    nodes, pods = model
    return Snapshot.from_objects(list(nodes.values()), list(pods.values()))


def assert_matches(cs: ClusterSnapshot, model: Model, images: bool = False) -> None:
    s = cs.snapshot
    r = rebuilt(model)
    assert s.describe() == r.describe()
    assert [ni.name for ni in s.node_info_list] == [ni.name for ni in r.node_info_list]
    assert all(s.node_info_map[ni.name] is ni for ni in s.node_info_list)
    lists = ((s.have_pods_with_affinity_list(), r.have_pods_with_affinity_list()),
             (s.have_pods_with_required_anti_affinity_list(), r.have_pods_with_required_anti_affinity_list()))
    for mine, theirs in lists:
        assert [ni.name for ni in mine] == [ni.name for ni in theirs]
        assert all(s.node_info_map[ni.name] is ni for ni in mine)  # the live NodeInfos, not stale copies
    for key in PVC_KEYS:
        assert s.is_pvc_used_by_pods(key) == r.is_pvc_used_by_pods(key)
    assert {p.uid: cs.pod_node(p) for p in model[1].values()} == {p.uid: p.spec.node_name for p in model[1].values()}
    assert sorted(p.uid for p in cs.pods()) == sorted(model[1])
    if images:
        assert {n: ni.image_states for n, ni in s.node_info_map.items()} == {
            n: ni.image_states for n, ni in r.node_info_map.items()}


def live_objects(cs: ClusterSnapshot) -> dict[str, tuple[Any, dict[str, Any]]]:
    return {n: (ni, ni.snapshot_state()) for n, ni in cs.snapshot.node_info_map.items()}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(NODE_NAMES), st.integers(0, 11)), max_size=4, unique_by=lambda t: t[0]),
       st.lists(OPS, max_size=50))
def test_random_operations_match_a_rebuilt_snapshot(initial: list[tuple[str, int]],
                                                    ops: list[tuple[str, Any, Any]]) -> None:
    nodes = {name: node_variant(name, v) for name, v in initial}
    cs = ClusterSnapshot(nodes.values())
    stack: list[Model] = [(dict(nodes), {})]
    at_fork: list[dict[str, tuple[Any, dict[str, Any]]]] = []
    for op, a, b in ops:
        model = stack[-1]
        before = cs.snapshot.describe()
        try:
            if op == "add_node":
                node = node_variant(a, b)
                cs.add_node(node)
                assert a not in model[0], "duplicate node accepted"
                model[0][a] = node
            elif op == "remove_node":
                removed = cs.remove_node(a)
                assert sorted(p.uid for p in removed) == sorted(
                    uid for uid, p in model[1].items() if p.spec.node_name == a)
                del model[0][a]
                for uid in [uid for uid, p in model[1].items() if p.spec.node_name == a]:
                    del model[1][uid]
            elif op == "add_pod":
                node_name, variant = b
                pod = pod_variant(a, variant, node_name)
                cs.add_pod(pod)
                assert node_name in model[0] and pod.uid not in model[1]
                model[1][pod.uid] = pod
            elif op == "remove_pod":
                cs.remove_pod(f"default/p{a}")
                del model[1][f"default/p{a}"]
            elif op == "fork":
                cs.fork()
                stack.append((dict(model[0]), dict(model[1])))
                at_fork.append(live_objects(cs))
            elif op == "revert":
                cs.revert()
                assert len(stack) > 1
                stack.pop()
                saved = at_fork.pop()
                # The NodeInfos live at the fork are live again, and were never modified meanwhile.
                now = cs.snapshot.node_info_map
                assert set(now) == set(saved)
                for name, (obj, state) in saved.items():
                    assert now[name] is obj
                    assert obj.snapshot_state() == state
            elif op == "commit":
                cs.commit()
                assert len(stack) > 1
                top = stack.pop()
                stack[-1] = top
                at_fork.pop()
            elif op == "read":
                cs.snapshot.have_pods_with_affinity_list()
                cs.snapshot.have_pods_with_required_anti_affinity_list()
                cs.snapshot.is_pvc_used_by_pods(PVC_KEYS[0])
            elif op == "refresh":
                cs.refresh_image_states()
                assert_matches(cs, stack[-1], images=True)
        except SnapshotError:
            # Only invalid requests fail, and they change nothing.
            if op == "add_node":
                assert a in model[0]
            elif op == "remove_node":
                assert a not in model[0]
            elif op == "add_pod":
                assert b[0] not in model[0] or f"default/p{a}" in model[1]
            elif op == "remove_pod":
                assert f"default/p{a}" not in model[1]
            else:
                assert op in ("revert", "commit") and len(stack) == 1
            assert cs.snapshot.describe() == before
        assert cs.depth == len(stack) - 1
        assert_matches(cs, stack[-1])
    while cs.depth:
        cs.revert()
        stack.pop()
    assert_matches(cs, stack[0])
    cs.refresh_image_states()
    assert_matches(cs, stack[0], images=True)
