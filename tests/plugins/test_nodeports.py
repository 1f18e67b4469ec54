"""NodePorts driven directly over the ported upstream fixtures and the shared sample (PreFilter, then Filter
on every node unless PreFilter returned SKIP), plus unit tests of the host-port helpers."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

from plugins_intree.nodeports import NodePorts, fits, host_ports
from plugins_intree.nodeports.plugin import ERR_REASON
from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _docs() -> Iterator[tuple[str, dict[str, Any]]]:
    yield "upstream", yamlio.load((FIXTURES / "upstream" / "nodeports.yaml").read_text())
    for doc in yamlio.load_all((FIXTURES / "samples" / "node-name-ports-unschedulable.yaml").read_text()):
        if doc["plugin"] == "NodePorts":
            yield "samples", doc


def _cases() -> Iterator[Any]:
    for where, doc in _docs():
        assert doc["plugin"] == "NodePorts"
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{where}/{case['name']}")


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    snapshot = Snapshot.from_objects([Node.from_dict(n) for n in case["nodes"]],
                                     [Pod.from_dict(p) for p in case.get("pods") or []])
    plugin = NodePorts(None, None)
    pod = Pod.from_dict(case["pod"])
    expect = case["expect"]
    state = CycleState()
    skip = False
    if "preFilter" in case["points"]:
        result, st = plugin.pre_filter(state, pod, snapshot.list())
        assert result is None
        if "prefilterStatus" in expect:
            assert _code(st) == expect["prefilterStatus"]["code"]
        skip = st is not None and st.code == Code.SKIP
    for name, want in expect["filter"].items():
        got = None if skip else plugin.filter(state, pod, snapshot.get(name))
        assert _code(got) == want["code"], name
        if "reasons" in want:
            assert got is not None and got.reasons == want["reasons"]


def _pod(spec: dict[str, Any], node_name: str = "") -> Pod:
    base: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node_name:
        base["nodeName"] = node_name
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": {**base, **spec}})


def _ports(*ports: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"containerPort": p["hostPort"], **p} for p in ports]


def test_host_ports_order_and_defaults() -> None:
    pod = _pod({
        "initContainers": [
            {"name": "plain", "image": "i", "ports": _ports({"hostPort": 1})},
            {"name": "sidecar", "image": "i", "restartPolicy": "Always", "ports": _ports({"hostPort": 2})},
        ],
        "containers": [{"name": "c", "image": "i",
                        "ports": [*_ports({"hostPort": 3, "protocol": "UDP", "hostIP": "10.0.0.1"}),
                                  {"containerPort": 80}]}],
    })
    assert host_ports(pod) == (("", "TCP", 2), ("10.0.0.1", "UDP", 3))


def test_filter_without_pre_filter_is_an_error() -> None:
    # upstream TestPreFilterDisabled: the state written by PreFilter is missing
    ni = NodeInfo(Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))
    got = NodePorts(None, None).filter(CycleState(), _pod({}), ni)
    assert got is not None and got.code == Code.ERROR
    assert got.reasons == ['reading "PreFilterNodePorts" from cycleState: not found']


def test_unspecified_host_ip_conflicts_with_every_address() -> None:
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    existing = _pod({"containers": [{"name": "c", "image": "i", "ports": _ports({"hostPort": 80})}]}, "n")
    ni = NodeInfo(node, [existing])
    wanted = _pod({"containers": [{"name": "c", "image": "i", "ports": _ports({"hostPort": 80, "hostIP": "1.2.3.4"})}]})
    assert not fits(wanted, ni)
    plugin = NodePorts(None, None)
    state = CycleState()
    assert plugin.pre_filter(state, wanted, [ni]) == (None, None)
    got = plugin.filter(state, wanted, ni)
    assert got is not None and (got.code, got.reasons) == (Code.UNSCHEDULABLE, [ERR_REASON])


def test_registered_points() -> None:
    from scheduling_framework.interfaces import points_of_class
    assert points_of_class(NodePorts) == {"preFilter", "filter"}
    assert NodePorts(None, None).pre_filter_extensions() is None
