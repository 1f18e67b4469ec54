"""NodeUnschedulable driven directly over the ported upstream fixtures and the shared sample."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
import yaml

from plugins_intree.nodeunschedulable import NodeUnschedulable
from plugins_intree.nodeunschedulable.plugin import ERR_REASON_UNSCHEDULABLE, tolerates_unschedulable
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.taints import Toleration
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import Snapshot
from scheduling_framework.status import Code, Status

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _docs() -> Iterator[tuple[str, dict[str, Any]]]:
    yield "upstream", yaml.safe_load((FIXTURES / "upstream" / "nodeunschedulable.yaml").read_text())
    for doc in yaml.safe_load_all((FIXTURES / "samples" / "node-name-ports-unschedulable.yaml").read_text()):
        if doc["plugin"] == "NodeUnschedulable":
            yield "samples", doc


def _cases() -> Iterator[Any]:
    for where, doc in _docs():
        assert doc["plugin"] == "NodeUnschedulable"
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{where}/{case['name']}")


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    assert case["points"] == ["filter"]
    snapshot = Snapshot.from_objects([Node.from_dict(n) for n in case["nodes"]], [])
    pod = Pod.from_dict(case["pod"])
    plugin = NodeUnschedulable(None, None)
    for name, want in case["expect"]["filter"].items():
        got = plugin.filter(CycleState(), pod, snapshot.get(name))
        assert _code(got) == want["code"]
        if "reasons" in want:
            assert got is not None and got.reasons == want["reasons"]


def _pod(*tolerations: Toleration) -> Pod:
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "pause"}]}})
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, tolerations=tolerations))


@pytest.mark.parametrize(("tol", "want"), [
    (Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"), True),
    (Toleration("", "Exists", "", ""), True),  # tolerates everything
    (Toleration("node.kubernetes.io/unschedulable", "Equal", "", ""), True),
    (Toleration("node.kubernetes.io/unschedulable", "Equal", "x", "NoSchedule"), False),
    (Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"), False),
    (Toleration("node.kubernetes.io/unschedulable", "Gt", "", "NoSchedule"), False),
])
def test_tolerates_unschedulable(tol: Toleration, want: bool) -> None:
    assert tolerates_unschedulable(_pod(tol)) is want


def test_cordoned_node_rejects_untolerating_pod() -> None:
    ni = NodeInfo(Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                                  "spec": {"unschedulable": True}}))
    got = NodeUnschedulable(None, None).filter(CycleState(), _pod(), ni)
    assert got is not None and (got.code, got.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                           [ERR_REASON_UNSCHEDULABLE])
