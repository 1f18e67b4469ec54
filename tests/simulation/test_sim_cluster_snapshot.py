"""ClusterSnapshot: copy-on-write forks, revert / commit, node order, errors that change nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sim_builders import make_node, make_pod

from scheduling_framework.errors import SnapshotError
from scheduling_framework.simulation import HOSTNAME_LABEL, ClusterSnapshot, Fork
from scheduling_framework.state.snapshot import node_tree_order


def three_nodes() -> ClusterSnapshot:
    return ClusterSnapshot([make_node("a"), make_node("b"), make_node("c")],
                           [make_pod("p1", node="a"), make_pod("p2", node="b")])


def test_fork_copies_nothing() -> None:
    cs = three_nodes()
    before = dict(cs.snapshot.node_info_map)
    cs.fork()
    assert all(cs.snapshot.node_info_map[n] is ni for n, ni in before.items())


def test_first_write_in_a_fork_clones_only_that_node() -> None:
    cs = three_nodes()
    a, b = cs.get("a"), cs.get("b")
    a_state = a.snapshot_state()
    cs.fork()
    cs.add_pod(make_pod("p3", node="a"))
    cs.add_pod(make_pod("p4", node="a"))
    assert cs.get("a") is not a
    assert cs.get("b") is b
    assert a.snapshot_state() == a_state  # the parent's NodeInfo is untouched
    assert len(cs.get("a").pods) == 3
    assert cs.snapshot.node_info_list[cs.snapshot.node_info_list.index(cs.get("a"))] is cs.get("a")


def test_revert_restores_the_objects_live_at_the_fork() -> None:
    cs = three_nodes()
    live = dict(cs.snapshot.node_info_map)
    cs.fork()
    cs.add_pod(make_pod("p3", node="a"))
    cs.remove_pod("default/p2")
    cs.add_node(make_node("d"), [make_pod("p5")])
    cs.remove_node("c")
    cs.revert()
    assert cs.snapshot.node_info_map == live
    assert all(cs.snapshot.node_info_map[n] is ni for n, ni in live.items())
    assert [ni.name for ni in cs.snapshot.list()] == ["a", "b", "c"]
    assert cs.pod_node("default/p2") == "b" and not cs.has_pod("default/p3") and not cs.has_pod("default/p5")


def test_outside_a_fork_changes_apply_in_place() -> None:
    cs = three_nodes()
    a = cs.get("a")
    cs.add_pod(make_pod("p3", node="a"))
    assert cs.get("a") is a and len(a.pods) == 2


def test_commit_into_parent_then_parent_revert_restores_the_original() -> None:
    cs = three_nodes()
    a = cs.get("a")
    state = a.snapshot_state()
    outer = cs.fork()
    cs.add_pod(make_pod("p3", node="a"))
    inner = cs.fork()
    cs.add_pod(make_pod("p4", node="a"))
    cs.add_node(make_node("d"))
    inner.commit()
    assert {p.name for p in cs.pods()} == {"p1", "p2", "p3", "p4"} and "d" in cs
    outer.revert()
    assert cs.get("a") is a and a.snapshot_state() == state
    assert "d" not in cs and not cs.has_pod("default/p4")


def test_inner_revert_keeps_outer_changes() -> None:
    cs = three_nodes()
    cs.fork()
    cs.add_pod(make_pod("p3", node="a"))
    after_outer = cs.snapshot.describe()
    cs.fork()
    cs.add_pod(make_pod("p4", node="a"))
    cs.remove_node("b")
    cs.revert()
    assert cs.snapshot.describe() == after_outer
    assert cs.depth == 1


def test_commit_of_the_last_fork_keeps_changes() -> None:
    cs = three_nodes()
    with cs.fork() as f:
        cs.add_pod(make_pod("p3", node="c"))
        f.commit()
    assert cs.pod_node("default/p3") == "c" and cs.depth == 0


def test_context_manager_reverts_and_closes_nested_forks() -> None:
    cs = three_nodes()
    before = cs.snapshot.describe()
    with cs.fork() as f:
        cs.add_pod(make_pod("p3", node="c"))
        g = cs.fork()
        cs.add_pod(make_pod("p4", node="c"))
    assert (f.state, g.state) == ("reverted", "reverted")
    assert cs.snapshot.describe() == before and cs.depth == 0


def test_context_manager_reverts_on_exception() -> None:
    cs = three_nodes()
    before = cs.snapshot.describe()
    with pytest.raises(RuntimeError), cs.fork():
        cs.add_pod(make_pod("p3", node="c"))
        raise RuntimeError("boom")
    assert cs.snapshot.describe() == before


def test_on_revert_callbacks_run_in_reverse_and_follow_commits() -> None:
    cs = three_nodes()
    calls: list[str] = []
    cs.on_revert(lambda: calls.append("base"))  # no fork open: dropped
    outer = cs.fork()
    cs.on_revert(lambda: calls.append("outer-1"))
    cs.fork()
    cs.on_revert(lambda: calls.append("inner"))
    cs.commit()
    cs.on_revert(lambda: calls.append("outer-2"))
    outer.revert()
    assert calls == ["outer-2", "inner", "outer-1"]


# --- node order -------------------------------------------------------------------------------


def test_node_order_is_node_tree_order_through_adds_removes_and_reverts() -> None:
    zones = ["z1", "z2", "z1", "z3", "z1", "z1", "z2"]
    nodes = [make_node(f"n{i}", zone=z) for i, z in enumerate(zones)]
    cs = ClusterSnapshot(nodes[:3])
    live = list(nodes[:3])

    def check() -> None:
        assert [ni.name for ni in cs.snapshot.list()] == node_tree_order(live)

    cs.fork()
    for n in nodes[3:]:  # some land last, some in the middle of the round-robin
        cs.add_node(n)
        live.append(n)
        check()
    cs.remove_node("n0")
    live.remove(nodes[0])
    check()
    cs.add_node(nodes[0])
    live.append(nodes[0])
    check()
    cs.revert()
    live = list(nodes[:3])
    check()


def test_a_zone_introduced_in_a_reverted_fork_is_forgotten() -> None:
    cs = ClusterSnapshot([make_node("a1", zone="a")])
    with cs.fork():
        cs.add_node(make_node("c1", zone="c"))
    b1, c2, a2 = make_node("b1", zone="b"), make_node("c2", zone="c"), make_node("a2", zone="a")
    for n in (b1, c2, a2):
        cs.add_node(n)
    # zones in first-seen order: a, b, c
    assert [ni.name for ni in cs.snapshot.list()] == ["a1", "b1", "c2", "a2"]


def test_adding_the_kth_node_of_a_zone_lands_in_round_k() -> None:
    cs = ClusterSnapshot([make_node("a1", zone="a"), make_node("a2", zone="a"), make_node("b1", zone="b")])
    cs.add_node(make_node("b2", zone="b"))
    cs.add_node(make_node("c1", zone="c"))
    assert [ni.name for ni in cs.snapshot.list()] == ["a1", "b1", "c1", "a2", "b2"]


# --- images -----------------------------------------------------------------------------------


def test_image_counts_follow_nodes_and_refresh_brings_every_node_up_to_date() -> None:
    img = (["registry/app:1"], 1000)
    cs = ClusterSnapshot([make_node("a", images=[img]), make_node("b")])
    assert cs.get("a").image_states["registry/app:1"].num_nodes == 1
    with cs.fork():
        cs.add_node(make_node("c", images=[img]))
        assert cs.get("c").image_states["registry/app:1"].num_nodes == 2
        assert cs.get("a").image_states["registry/app:1"].num_nodes == 1  # kept, as upstream's snapshot does
        a = cs.get("a")
        cs.refresh_image_states()
        assert cs.get("a") is not a and cs.get("a").image_states["registry/app:1"].num_nodes == 2
    assert cs.get("a").image_states["registry/app:1"].num_nodes == 1


# --- templates --------------------------------------------------------------------------------


def test_add_node_from_template_copies_with_new_names() -> None:
    cs = three_nodes()
    tmpl = make_node("m5-large", zone="z1", labels={"pool": "m5"})
    ds = make_pod("agent", owner_kind="DaemonSet")
    with cs.fork():
        names = cs.add_node_from_template(tmpl, count=2, name_prefix="m5", pods=[ds])
        assert names == ["m5-0", "m5-1"]
        n = cs.get("m5-1").node
        assert n is not None
        assert n.labels[HOSTNAME_LABEL] == "m5-1" and n.labels["pool"] == "m5" and n.uid == "m5-1"
        assert [p.key for p in (pi.pod for pi in cs.get("m5-1").pods)] == ["default/agent-m5-1"]
        assert cs.pod_node("default/agent-m5-0") == "m5-0"
        assert cs.add_node_from_template(tmpl, name_prefix="m5") == ["m5-2"]
    with cs.fork():
        assert cs.add_node_from_template(tmpl, name_prefix="m5") == ["m5-0"]  # names are reused after a revert
    assert cs.add_node_from_template(tmpl, count=0) == []
    assert cs.add_node_from_template(tmpl) == ["template-m5-large-0"]


def test_add_pod_with_a_node_name_stores_the_bound_pod() -> None:
    cs = three_nodes()
    pi = cs.add_pod(make_pod("p9"), "c")
    assert pi.pod.spec.node_name == "c" and cs.pod_node("default/p9") == "c"


def test_remove_node_returns_and_drops_its_pods() -> None:
    cs = three_nodes()
    pods = cs.remove_node("a")
    assert [p.name for p in pods] == ["p1"] and not cs.has_pod("default/p1")
    cs.add_node(make_node("a"))
    assert cs.get("a").pods == []


# --- errors -----------------------------------------------------------------------------------


def _reverted(cs: ClusterSnapshot) -> Fork:
    f = cs.fork()
    cs.add_pod(make_pod("p8", node="c"))
    f.revert()
    return f


def _committed(cs: ClusterSnapshot) -> Fork:
    f = cs.fork()
    cs.add_pod(make_pod("p8", node="c"))
    f.commit()
    return f


def _nested(cs: ClusterSnapshot) -> Fork:
    outer = cs.fork()
    cs.add_pod(make_pod("p8", node="c"))
    cs.fork()
    cs.add_pod(make_pod("p9", node="c"))
    return outer


def _nothing(cs: ClusterSnapshot) -> None:
    return None


def _clashing_pod(cs: ClusterSnapshot) -> None:
    cs.add_pod(make_pod("other", uid="u-template-t-1", node="a"))


# (id, setup: steps that succeed and return a value for the failing step, the failing step, message)
ERRORS: list[tuple[str, Callable[[ClusterSnapshot], Any], Callable[[ClusterSnapshot, Any], Any], str]] = [
    ("revert without fork", _nothing, lambda cs, _: cs.revert(), "revert without an open fork"),
    ("commit without fork", _nothing, lambda cs, _: cs.commit(), "commit without an open fork"),
    ("fork reverted twice", _reverted, lambda cs, f: f.revert(), "fork #1 was already reverted"),
    ("commit on a reverted fork", _reverted, lambda cs, f: f.commit(),
     "fork #1 was reverted; a reverted fork cannot be committed"),
    ("commit twice", _committed, lambda cs, f: f.commit(), "fork #1 was already committed"),
    ("revert a committed fork", _committed, lambda cs, f: f.revert(), "fork #1 was committed"),
    ("commit outer fork with open inner", _nested, lambda cs, f: f.commit(),
     "fork #1 has open nested fork(s) #2; commit or revert them first"),
    ("revert outer fork with open inner", _nested, lambda cs, f: f.revert(),
     "fork #1 has open nested fork(s) #2; commit or revert them first"),
    ("duplicate node", _nothing, lambda cs, _: cs.add_node(make_node("a")), 'duplicate node "a"'),
    ("pod on unknown node", _nothing, lambda cs, _: cs.add_pod(make_pod("p9", node="zz")),
     'pod default/p9 references unknown node "zz"'),
    ("pod without node", _nothing, lambda cs, _: cs.add_pod(make_pod("p9")), "pod default/p9 has no spec.nodeName"),
    ("pod already present", _nothing, lambda cs, _: cs.add_pod(make_pod("p1", node="c")),
     'pod default/p1 (uid default/p1) is already in the snapshot, on node "a"'),
    ("node with pods of another node", _nothing,
     lambda cs, _: cs.add_node(make_node("d"), [make_pod("p9", node="a")]),
     'pod default/p9 references unknown node "a"'),
    ("node with a pod already present", _nothing, lambda cs, _: cs.add_node(make_node("d"), [make_pod("p1")]),
     "pod default/p1 (uid default/p1) is already in the snapshot"),
    ("remove unknown node", _nothing, lambda cs, _: cs.remove_node("zz"),
     'cannot remove node "zz": it is not in the snapshot'),
    ("remove unknown pod", _nothing, lambda cs, _: cs.remove_pod(make_pod("p9")),
     "cannot remove pod default/p9 (uid default/p9): it is not in the snapshot"),
    ("get unknown node", _nothing, lambda cs, _: cs.get("zz"), 'node "zz" is not in the snapshot'),
    ("negative template count", _nothing, lambda cs, _: cs.add_node_from_template(make_node("t"), count=-1),
     "count must be >= 0"),
    ("template pod copies clash", _clashing_pod,
     lambda cs, _: cs.add_node_from_template(make_node("t"), count=2, pods=[make_pod("x", uid="u")]),
     'pod default/x-template-t-1 (uid u-template-t-1) is already in the snapshot, on node "a"'),
]


@pytest.mark.parametrize("setup,fail,message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_clear_and_change_nothing(setup: Callable[[ClusterSnapshot], Any],
                                             fail: Callable[[ClusterSnapshot, Any], Any], message: str) -> None:
    cs = three_nodes()
    ctx = setup(cs)
    before = (cs.snapshot.describe(), [ni.name for ni in cs.snapshot.list()], sorted(p.uid for p in cs.pods()),
              cs.depth)
    with pytest.raises(SnapshotError) as ei:
        fail(cs, ctx)
    assert message in str(ei.value)
    assert before == (cs.snapshot.describe(), [ni.name for ni in cs.snapshot.list()],
                      sorted(p.uid for p in cs.pods()), cs.depth)


@pytest.mark.parametrize("nodes,pods,message", [
    ([make_node("a"), make_node("a")], [], 'duplicate node "a"'),
    ([make_node("a")], [make_pod("p", node="b")], 'pod default/p references unknown node "b"'),
    ([make_node("a")], [make_pod("p")], "pod default/p has no spec.nodeName"),
    ([make_node("a")], [make_pod("p", node="a"), make_pod("p", node="a")], "is already in the snapshot"),
], ids=["duplicate node", "unknown node", "pending pod", "duplicate pod"])
def test_constructor_rejects_bad_input(nodes: list[Any], pods: list[Any], message: str) -> None:
    with pytest.raises(SnapshotError) as ei:
        ClusterSnapshot(nodes, pods)
    assert message in str(ei.value)


# --- cost -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [30, 600])
def test_fork_and_revert_work_is_proportional_to_the_changes(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_framework.state.node_info import NodeInfo

    cs = ClusterSnapshot([make_node(f"n{i}", zone=f"z{i % 3}") for i in range(size)])
    node_list = cs.snapshot.node_info_list
    clones: list[str] = []
    real_clone = NodeInfo.clone

    def counting_clone(self: NodeInfo) -> NodeInfo:
        clones.append(self.name)
        return real_clone(self)

    monkeypatch.setattr(NodeInfo, "clone", counting_clone)
    f = cs.fork()
    cs.add_node_from_template(make_node("t", zone="z0"), name_prefix="new")  # lands last: appended
    cs.add_pod(make_pod("p1"), "n1")
    cs.add_pod(make_pod("p2"), "n1")
    cs.add_pod(make_pod("p3"), "n2")
    undo_entries = len(f._log)
    cs.revert()
    assert sorted(clones) == ["n1", "n2"]  # one copy per changed node, whatever the cluster size
    # the new node's zone and its append, three pod locations, four node content tokens (the new node's, one
    # per pod): nothing per node
    assert undo_entries == 9
    assert cs.snapshot.node_info_list is node_list  # the node list was never copied
