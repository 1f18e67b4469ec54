"""Status / Code, CycleState and the small result types of the plugin contract.

Ported from pkg/scheduler/framework/interface_test.go (TestStatus, TestStatusCodes, TestPreFilterResultMerge,
TestIsStatusEqual-style equality) and cycle_state_test.go (TestCycleStateClone), adapted to the Python API:
a plugin returns ``None`` for success, as Go returns a nil *Status.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scheduling_framework as sf
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    PostFilterResult,
    PreFilterResult,
)
from scheduling_framework.status import Code, Status, code_of, is_success, merge_reasons

# --- Code -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "value", "name"), [
    (Code.SUCCESS, 0, "Success"),
    (Code.ERROR, 1, "Error"),
    (Code.UNSCHEDULABLE, 2, "Unschedulable"),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 3, "UnschedulableAndUnresolvable"),
    (Code.WAIT, 4, "Wait"),
    (Code.SKIP, 5, "Skip"),
    (Code.PENDING, 6, "Pending"),
], ids=lambda v: str(v))
def test_status_codes(code: Code, value: int, name: str) -> None:
    assert int(code) == value
    assert str(code) == name
    assert Code.from_name(name) is code


def test_code_from_unknown_name() -> None:
    with pytest.raises(KeyError):
        Code.from_name("Fine")


# --- TestStatus -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("status", "code", "message", "success", "wait", "skip", "rejected"), [
    pytest.param(Status(Code.SUCCESS, ""), Code.SUCCESS, "", True, False, False, False, id="success status"),
    pytest.param(Status(Code.WAIT, ""), Code.WAIT, "", False, True, False, False, id="wait status"),
    pytest.param(Status(Code.ERROR, "unknown error"), Code.ERROR, "unknown error", False, False, False, False,
                 id="error status"),
    pytest.param(Status(Code.SKIP, ""), Code.SKIP, "", False, False, True, False, id="skip status"),
    pytest.param(None, Code.SUCCESS, "", True, False, False, False, id="nil status"),
    pytest.param(Status.unschedulable("a", "b"), Code.UNSCHEDULABLE, "a, b", False, False, False, True,
                 id="unschedulable status"),
    pytest.param(Status.unresolvable("x"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x", False, False, False, True,
                 id="unresolvable status"),
    pytest.param(Status(Code.PENDING, "waiting for a claim"), Code.PENDING, "waiting for a claim", False, False,
                 False, True, id="pending status"),
])
def test_status(status: Status | None, code: Code, message: str, success: bool, wait: bool, skip: bool,
                rejected: bool) -> None:
    assert code_of(status) is code
    assert is_success(status) is success
    if status is None:
        return
    assert status.code is code
    assert status.message() == message
    assert status.is_success() is success
    assert status.is_wait() is wait
    assert status.is_skip() is skip
    assert status.is_rejected() is rejected


def test_status_from_error() -> None:
    err = RuntimeError("internal error")
    s = Status.from_error(err, plugin="P")
    assert s.code is Code.ERROR and s.error is err and s.plugin == "P"
    assert s.reasons == ["internal error"] and s.message() == "internal error"
    explicit = Status(Code.ERROR, "custom", error=err)
    assert explicit.reasons == ["custom"]


def test_status_skip_constructor_and_with_plugin() -> None:
    s = Status.skip()
    assert s.is_skip() and s.reasons == []
    assert s.with_plugin("NodeName") is s and s.plugin == "NodeName"


def test_status_equality_ignores_plugin_and_error() -> None:
    assert Status(Code.UNSCHEDULABLE, "a").with_plugin("X") == Status(Code.UNSCHEDULABLE, "a")
    assert Status(Code.UNSCHEDULABLE, "a") != Status(Code.UNSCHEDULABLE, "b")
    assert Status(Code.UNSCHEDULABLE, "a") != Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "a")
    assert Status(Code.ERROR, error=ValueError("x")) == Status(Code.ERROR, "x")
    assert Status() == None  # noqa: E711 - a success Status equals Go's nil
    assert Status(Code.ERROR) != None  # noqa: E711
    assert Status().__eq__("Success") is NotImplemented
    assert hash(Status(Code.WAIT, "w")) == hash(Status(Code.WAIT, "w"))
    assert len({Status(Code.WAIT, "w"), Status(Code.WAIT, "w").with_plugin("p")}) == 1


def test_status_text_forms() -> None:
    s = Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory", plugin="NodeResourcesFit")
    assert str(s) == "Unschedulable: Insufficient cpu, Insufficient memory"
    assert repr(s) == "Status(Unschedulable, ['Insufficient cpu', 'Insufficient memory'], plugin='NodeResourcesFit')"
    assert s.to_dict() == {"code": "Unschedulable", "plugin": "NodeResourcesFit",
                           "reasons": ["Insufficient cpu", "Insufficient memory"]}
    assert str(Status(Code.SKIP)) == "Skip" and Status(Code.SKIP).to_dict() == {"code": "Skip"}
    assert repr(Status()) == "Status(Success, [])"


def test_merge_reasons() -> None:
    assert merge_reasons([Status(Code.UNSCHEDULABLE, "a", "b"), Status(), Status(Code.ERROR, "c")]) == ["a", "b", "c"]
    assert merge_reasons([]) == []


def test_public_names() -> None:
    assert sf.Code is Code and sf.Status is Status and sf.CycleState is CycleState
    assert sf.PreFilterResult is PreFilterResult and sf.PostFilterResult is PostFilterResult
    assert sf.NodeScore is NodeScore
    assert (sf.MAX_NODE_SCORE, sf.MIN_NODE_SCORE) == (MAX_NODE_SCORE, MIN_NODE_SCORE) == (100, 0)


# --- TestPreFilterResultMerge -----------------------------------------------------------------------------

def pfr(*names: str) -> PreFilterResult:
    return PreFilterResult(names)


ALL = None  # a nil *PreFilterResult / nil NodeNames: every node

PREFILTER_MERGE = [
    pytest.param(ALL, ALL, ALL, id="all nil"),
    pytest.param(ALL, pfr(), pfr(), id="nil receiver empty input"),
    pytest.param(pfr(), ALL, pfr(), id="empty receiver nil input"),
    pytest.param(pfr(), pfr(), pfr(), id="empty receiver empty input"),
    pytest.param(ALL, pfr("node1"), pfr("node1"), id="nil receiver populated input"),
    pytest.param(pfr(), pfr("node1"), pfr(), id="empty receiver populated input"),
    pytest.param(pfr("node1"), ALL, pfr("node1"), id="populated receiver nil input"),
    pytest.param(pfr("node1"), pfr(), pfr(), id="populated receiver empty input"),
    pytest.param(pfr("node1", "node2"), pfr("node2", "node3"), pfr("node2"), id="populated receiver and input"),
]


@pytest.mark.parametrize(("receiver", "other", "want"), PREFILTER_MERGE)
def test_pre_filter_result_merge(receiver: PreFilterResult | None, other: PreFilterResult | None,
                                 want: PreFilterResult | None) -> None:
    got = (receiver if receiver is not None else PreFilterResult()).merge(other)
    assert got == want
    assert got.all_nodes() is (want is None)


def test_pre_filter_result_merge_does_not_alias_inputs() -> None:
    a = pfr("n1", "n2")
    merged = a.merge(None)
    assert merged is not a and merged.node_names is not a.node_names
    assert merged.node_names is not None
    merged.node_names.add("n3")
    assert a.node_names == {"n1", "n2"}


def test_pre_filter_result_misc() -> None:
    assert PreFilterResult() == None  # noqa: E711 - "all nodes" equals a nil result
    assert pfr("a") != None  # noqa: E711
    assert pfr("a", "b") == pfr("b", "a")
    assert repr(pfr("b", "a")) == "PreFilterResult(['a', 'b'])" and repr(PreFilterResult()) == "PreFilterResult(all)"
    assert PreFilterResult().__eq__(3) is NotImplemented


@given(st.one_of(st.none(), st.frozensets(st.sampled_from("abcde"))),
       st.one_of(st.none(), st.frozensets(st.sampled_from("abcde"))))
def test_pre_filter_result_merge_is_intersection_with_all_as_identity(a: frozenset[str] | None,
                                                                       b: frozenset[str] | None) -> None:
    got = PreFilterResult(a).merge(PreFilterResult(b))
    if a is None and b is None:
        assert got.all_nodes()
    elif a is None or b is None:
        assert got.node_names == set(a if b is None else b)  # type: ignore[arg-type]
    else:
        assert got.node_names == set(a & b)
    assert got == PreFilterResult(b).merge(PreFilterResult(a))


def test_post_filter_result_and_node_score() -> None:
    r = PostFilterResult()
    assert (r.nominated_node_name, r.mode, r.victims) == ("", "Override", ())
    assert PostFilterResult("n1", victims=("ns/p",)).victims == ("ns/p",)
    s = NodeScore("n1", 10)
    s.score = 20
    assert s == NodeScore("n1", 20) and s != NodeScore("n2", 20)
    assert repr(s) == "NodeScore('n1', 20)"
    assert s.__eq__(("n1", 20)) is NotImplemented


# --- CycleState -------------------------------------------------------------------------------------------

class Cloneable:
    def __init__(self, data: list[int]) -> None:
        self.data = data

    def clone(self) -> Cloneable:
        return Cloneable(list(self.data))


def test_cycle_state_read_write_delete() -> None:
    cs = CycleState()
    with pytest.raises(KeyError):
        cs.read("missing")
    cs.write("k", 1)
    assert cs.read("k") == 1 and "k" in cs and cs.get("k") == 1 and cs.keys() == ["k"]
    cs.write("k", 2)
    assert cs.read("k") == 2
    cs.delete("k")
    cs.delete("k")  # deleting a missing key is harmless
    assert "k" not in cs and cs.get("k", "dflt") == "dflt"
    with pytest.raises(KeyError):
        cs.read("k")


def test_cycle_state_clone() -> None:
    # cycle_state_test.go TestCycleStateClone: a cloned value is independent of the original.
    cs = CycleState()
    value = Cloneable([1])
    shared = (1, 2)
    cs.write("cloneable", value)
    cs.write("plain", shared)
    cs.skip_filter_plugins.add("A")
    cs.skip_score_plugins.add("B")
    cs.skip_pre_bind_plugins.add("C")
    cs.record_plugin_metrics = True
    c = cs.clone()
    assert c.read("cloneable") is not value and c.read("cloneable").data == [1]
    assert c.read("plain") is shared  # values without clone() are shared (they must be immutable)
    assert (c.skip_filter_plugins, c.skip_score_plugins, c.skip_pre_bind_plugins) == ({"A"}, {"B"}, {"C"})
    assert c.record_plugin_metrics
    value.data.append(2)
    cs.write("new", 1)
    cs.delete("plain")
    cs.skip_filter_plugins.add("Z")
    assert c.read("cloneable").data == [1]
    assert "new" not in c and c.read("plain") is shared and c.skip_filter_plugins == {"A"}
    c.write("only-in-clone", 3)
    assert "only-in-clone" not in cs


def test_cycle_state_concurrent_writes() -> None:
    cs = CycleState()
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for j in range(200):
                cs.write(f"{i}-{j}", j)
                assert cs.read(f"{i}-{j}") == j
                if j % 3 == 0:
                    cs.delete(f"{i}-{j}")
                cs.clone()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cs.keys()) == 8 * (200 - len(range(0, 200, 3)))


OPS = st.lists(st.tuples(st.sampled_from(["write", "delete", "mutate"]), st.sampled_from("abcd"),
                         st.integers(0, 9)), max_size=30)


@given(OPS, OPS)
def test_cycle_state_clone_independence(before: list[tuple[str, str, int]], after: list[tuple[str, str, int]]) -> None:
    def apply(cs: CycleState, model: dict[str, list[int]], ops: list[tuple[str, str, int]]) -> None:
        for op, key, n in ops:
            if op == "write":
                cs.write(key, Cloneable([n]))
                model[key] = [n]
            elif op == "delete":
                cs.delete(key)
                model.pop(key, None)
            elif key in model:
                cs.read(key).data.append(n)
                model[key].append(n)

    def snapshot(cs: CycleState) -> dict[str, Any]:
        keys = cs.keys()
        return {k: list(cs.read(k).data) for k in keys}

    original: dict[str, list[int]] = {}
    cs = CycleState()
    apply(cs, original, before)
    clone = cs.clone()
    frozen = {k: list(v) for k, v in original.items()}
    assert snapshot(clone) == frozen
    # Mutating the original after cloning leaves the clone alone, and the other way round.
    apply(cs, original, after)
    assert snapshot(clone) == frozen
    assert snapshot(cs) == original
    clone_model = {k: list(v) for k, v in frozen.items()}
    apply(clone, clone_model, after)
    assert snapshot(cs) == original
    assert snapshot(clone) == clone_model
