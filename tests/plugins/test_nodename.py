"""NodeName driven directly over the ported upstream fixture and the shared sample, plus the upstream cases
the fixture skips (a pod that names a node)."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from plugins_intree.nodename import NodeName
from plugins_intree.nodename.plugin import ERR_REASON, fits
from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import points_of_class
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _docs() -> Iterator[tuple[str, dict[str, Any]]]:
    yield "upstream", yaml.safe_load((FIXTURES / "upstream" / "nodename.yaml").read_text())
    for doc in yaml.safe_load_all((FIXTURES / "samples" / "node-name-ports-unschedulable.yaml").read_text()):
        if doc["plugin"] == "NodeName":
            yield "samples", doc


def _cases() -> Iterator[Any]:
    for where, doc in _docs():
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{where}/{case['name']}")


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    snapshot = Snapshot.from_objects([Node.from_dict(n) for n in case["nodes"]], [])
    pod = Pod.from_dict(case["pod"])
    for name, want in case["expect"]["filter"].items():
        assert _code(NodeName(None, None).filter(CycleState(), pod, snapshot.get(name))) == want["code"]


def _node(name: str) -> NodeInfo:
    return NodeInfo(Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}))


def _pod(node_name: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node_name:
        spec["nodeName"] = node_name
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": spec})


def test_host_matches() -> None:
    assert NodeName(None, None).filter(CycleState(), _pod("foo"), _node("foo")) is None


def test_host_doesnt_match() -> None:
    got = NodeName(None, None).filter(CycleState(), _pod("bar"), _node("foo"))
    assert got is not None and (got.code, got.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON])


def test_no_host_fits_any_node() -> None:
    assert fits(_pod(), _node("anything"))


def test_points_are_the_released_ones() -> None:
    # upstream master's PreFilter (narrowing to spec.nodeName) is deliberately not implemented
    assert points_of_class(NodeName) == {"filter"}
