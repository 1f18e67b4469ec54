"""cluster-autoscaler's node-group-set tables (tests/fixtures/autoscaler/nodegroupset.yaml): which groups are
similar, and how a balanced scale-up is split; plus the balanced scale-up end to end."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework import cli
from scheduling_framework.api import Node, Pod
from scheduling_framework.autoscaler.nodegroupset import (
    BalancingOptions,
    balance_scale_up_between_groups,
    find_similar_node_groups,
)
from scheduling_framework.state.node_info import NodeInfo
from tests import yamlio

DATA = yamlio.load((Path(__file__).parent.parent / "fixtures" / "autoscaler" / "nodegroupset.yaml").read_text())
ROOT = Path(__file__).resolve().parents[2]


def _cases(section: str) -> list[Any]:
    return [pytest.param(c, id=c["name"], marks=[pytest.mark.skip(reason=c["skip"])] if c.get("skip") else [])
            for c in DATA[section]]


def _node_info(spec: dict[str, Any], name: str) -> NodeInfo:
    """Upstream's BuildTestNode (+ the case's overrides and labels) with the case's pods on it."""
    name = spec.get("name", name)
    capacity: dict[str, str] = {"cpu": f"{spec['cpu']}m", "memory": str(spec["memory"]), "pods": "100"}
    allocatable = dict(capacity)
    capacity.update({k: str(v) for k, v in (spec.get("capacity") or {}).items()})
    allocatable.update({k: str(v) for k, v in (spec.get("allocatable") or {}).items()})
    labels = {} if spec.get("no_hostname") else {"kubernetes.io/hostname": name}
    labels.update(spec.get("labels") or {})
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                           "status": {"capacity": capacity, "allocatable": allocatable}})
    pods = [Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": f"{name}-pod-{i}", "namespace": "default", "uid": f"{name}-{i}"},
                           "spec": {"nodeName": name, "containers": [{"name": "c", "resources": {"requests": {
                               "cpu": f"{p['cpu']}m", "memory": str(p["memory"])}}}]}})
            for i, p in enumerate(spec.get("pods") or [])]
    return NodeInfo(node, pods)


@pytest.mark.parametrize("case", _cases("compare"))
def test_compare(case: dict[str, Any]) -> None:
    comparator = BalancingOptions(case.get("ignored_labels") or (), case.get("balancing_labels") or ()).comparator()
    n1, n2 = _node_info(case["n1"], "node1"), _node_info(case["n2"], "node2")
    assert comparator(n1, n2) is case["similar"]
    assert comparator(n2, n1) is case["similar"]  # the comparison is symmetric


@pytest.mark.parametrize("case", _cases("find_similar"))
def test_find_similar_node_groups(case: dict[str, Any]) -> None:
    comparator = BalancingOptions(case.get("ignored_labels") or ()).comparator()
    infos = {g["group"]: _node_info(g, f"n{i + 1}") for i, g in enumerate(case["groups"])}
    for group, want in case["want"].items():
        assert find_similar_node_groups(group, infos, comparator) == want


@pytest.mark.parametrize("case", _cases("balance"))
def test_balance_scale_up_between_groups(case: dict[str, Any]) -> None:
    infos = balance_scale_up_between_groups([(g["name"], g["size"], g["max"]) for g in case["groups"]],
                                            case["new_nodes"])
    got = {i.group: i.new_size for i in infos}
    if "want" in case:
        assert got == case["want"]
    else:
        want = case["want_any"]
        assert sorted(got) == sorted(want["groups"])
        assert sum(got.values()) == want["total"] and set(got.values()) <= set(want["sizes"])


def test_balancing_never_passes_a_max_size_nor_leaves_a_group_behind() -> None:
    groups = [("a", 0, 3), ("b", 2, 9), ("c", 5, 4), ("d", 2, 2), ("e", 1, 20)]
    for n in range(40):
        infos = balance_scale_up_between_groups(groups, n)
        assert sum(i.delta for i in infos) == min(n, 3 + 7 + 19)
        assert all(i.current_size < i.new_size <= i.max_size for i in infos)
        sizes = {g: cur for g, cur, _ in groups} | {i.group: i.new_size for i in infos}
        # a group that could still grow is never two nodes behind one that grew
        grown = [i.new_size for i in infos]
        assert all(sizes[g] >= max(grown, default=0) - 1 for g, cur, mx in groups if sizes[g] < mx and mx > cur)


# ---- the command -----------------------------------------------------------------------------------------------
def _groups_file(tmp_path: Path) -> str:
    """Two groups of the same 16-cpu shape (their own eks.amazonaws.com/nodegroup label aside) and a third."""
    def template(name: str, cpu: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"eks.amazonaws.com/nodegroup": name}},
                "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}}}
    doc = {"nodeGroups": [{"name": "general", "minSize": 1, "maxSize": 10, "templateNode": "general-1"},
                          {"name": "large-a", "minSize": 0, "maxSize": 5, "template": template("large-a", "16")},
                          {"name": "large-b", "minSize": 0, "maxSize": 5, "template": template("large-b", "16")}]}
    path = tmp_path / "groups.yaml"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _plan(groups: str, *extra: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["autoscale", "--cluster", str(ROOT / "examples" / "autoscaler" / "cluster.yaml"),
                     "--node-groups", groups, "--no-scale-down", "--seed", "1", "--output", "json",
                     "--expander", "least-waste", *extra], out, err)
    assert code == 0, err.getvalue()
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def test_the_chosen_scale_up_is_split_among_similar_groups(tmp_path: Path) -> None:
    groups = _groups_file(tmp_path)
    plain = _plan(groups)
    assert "balanced" not in plain["scaleUp"]["chosen"]
    assert any("not balanced" in n for n in plain["notes"])
    doc = _plan(groups, "--balance-similar-node-groups", "--balancing-ignore-label", "eks.amazonaws.com/nodegroup")
    chosen = doc["scaleUp"]["chosen"]
    assert chosen["nodes"] == 2
    assert sorted((b["nodeGroup"], b["nodes"]) for b in chosen["balanced"]) == [("large-a", 1), ("large-b", 1)]
    assert not any("not balanced" in n for n in doc["notes"])


def test_groups_with_their_own_label_are_not_similar_unless_it_is_ignored(tmp_path: Path) -> None:
    doc = _plan(_groups_file(tmp_path), "--balance-similar-node-groups=true")
    assert "balanced" not in doc["scaleUp"]["chosen"]


def test_balancing_by_label_alone(tmp_path: Path) -> None:
    doc = _plan(_groups_file(tmp_path), "--balance-similar-node-groups", "--balancing-label", "kubernetes.io/os")
    assert "balanced" not in doc["scaleUp"]["chosen"]  # the templates do not carry the label: never similar
