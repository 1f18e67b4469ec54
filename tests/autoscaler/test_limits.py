"""cluster-autoscaler's resource limit tables (tests/fixtures/autoscaler/limits.yaml), and the limits end to end:
a scale-up capped, a scale-down kept over a minimum."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework import cli
from scheduling_framework.api import Node
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.autoscaler.cli import gpu_limit
from scheduling_framework.autoscaler.drain import being_deleted
from scheduling_framework.autoscaler.limits import (
    GPU_LABELS,
    ResourceLimits,
    check_delta,
    check_removal,
    node_delta,
    resources_left,
    totals,
)
from scheduling_framework.errors import InputError, ValidationError
from tests import yamlio

DATA = yamlio.load((Path(__file__).parent.parent / "fixtures" / "autoscaler" / "limits.yaml").read_text())
ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "autoscaler" / "cluster.yaml")
GROUPS = str(ROOT / "examples" / "autoscaler" / "node-groups.yaml")


def _cases(section: str) -> list[Any]:
    return [pytest.param(c, id=c["name"], marks=[pytest.mark.skip(reason=c["skip"])] if c.get("skip") else [])
            for c in DATA[section]]


def _node(name: str, millicpu: int, memory: str | int, gpus: int = 0, gpu_type: str = "",
          taints: list[dict[str, str]] | None = None) -> Node:
    """Upstream's BuildTestNode (+ AddGpusToNode and the GPU label)."""
    res = {"cpu": f"{millicpu}m", "memory": str(memory), "pods": "100"}
    if gpus:
        res["nvidia.com/gpu"] = str(gpus)
    labels = {GPU_LABELS[0]: gpu_type} if gpu_type else {}
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                           "spec": {"taints": taints or []}, "status": {"capacity": res, "allocatable": dict(res)}})


def _group(spec: dict[str, Any]) -> list[Node]:
    return [_node(f"n{i}", spec["cpu"] * 1000, spec["memory"], spec.get("gpus", 0), spec.get("gpu_type", ""))
            for i in range(spec["size"])]


@pytest.mark.parametrize("case", _cases("scaleup"))
def test_scale_up_resource_manager(case: dict[str, Any]) -> None:
    limits = ResourceLimits(case["limits"]["min"], case["limits"]["max"]) if "limits" in case else None
    nodes = _group(case["group"]) if "group" in case else []
    custom = limits is not None and limits.custom()
    left = resources_left(limits, nodes) if limits is not None else {}
    if "delta" in case:
        assert node_delta(nodes[0], custom) == case["delta"]
    if "left" in case:
        assert left == case["left"]
    if "apply" in case:
        spec = case["apply"]
        got, _ = check_delta(spec.get("left", left), node_delta(nodes[0], custom), spec["count"])
        assert got == spec["want"]
    if "check" in case:
        spec = case["check"]
        assert check_delta(spec.get("left", left), spec["delta"], 1)[1] == spec["exceeded"]


@pytest.mark.parametrize("case", _cases("scaledown"))
def test_scale_down_limits(case: dict[str, Any]) -> None:
    if "totals" in case:
        spec = case["totals"]
        taint = [{"key": "ToBeDeletedByClusterAutoscaler", "value": str(int(time.time())), "effect": "NoSchedule"}]
        nodes = [_node(f"n{i}", n["cpu"], n["memory"], taints=taint if n.get("deleting") else None)
                 for i, n in enumerate(spec["nodes"])]
        got = totals(n for n in nodes if not being_deleted(n))
        assert got == {"cpu": spec["cores"], "memory": Quantity.parse(spec["memory"]).value()}
    if "check" in case:
        spec = case["check"]
        assert check_removal(spec["left"], spec["delta"]) == spec["exceeded"]


@pytest.mark.parametrize("case", _cases("flags"))
def test_gpu_total_flag(case: dict[str, Any]) -> None:
    if case.get("error"):
        with pytest.raises(InputError, match=r"^--gpu-total: "):
            gpu_limit(case["input"])
    else:
        kind, lo, hi = case["want"]
        assert gpu_limit(case["input"]) == (kind, (lo, hi))


@pytest.mark.parametrize(("kwargs", "field"), [
    pytest.param({"cores": (5, 2)}, "cores_total", id="max-under-min"),
    pytest.param({"memory_gib": (-1, 2)}, "memory_total", id="negative"),
    pytest.param({"cores": (1,)}, "cores_total", id="not-a-pair"),
    pytest.param({"gpus": {"t4": (3, 1)}}, "gpu_total[t4]", id="gpu"),
])
def test_bad_limits_name_the_argument(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as e:
        ResourceLimits.from_totals(**kwargs)
    assert e.value.path == field


def test_a_node_without_capacity_counts_its_allocatable() -> None:
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "t"},
                           "status": {"allocatable": {"cpu": "7500m", "memory": "2Gi"}}})
    assert node_delta(node) == {"cpu": 8, "memory": 2 * 1024 ** 3}  # cores rounded up, as Quantity.Value()


# ---- the command -----------------------------------------------------------------------------------------------
def _plan(*extra: str, groups: str = GROUPS) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["autoscale", "--cluster", CLUSTER, "--node-groups", groups, "--seed", "1", "--output", "json",
                     *extra], out, err)
    assert code == 0, err.getvalue()
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def test_the_chosen_scale_up_is_capped_by_the_cores_left() -> None:
    up = _plan("--no-scale-down", "--expander", "least-waste", "--cores-total", "0:40")["scaleUp"]
    assert (up["chosen"]["nodeGroup"], up["chosen"]["nodes"]) == ("highcpu", 1)  # 20 cores used, 16-core nodes
    assert up["chosen"]["cappedFrom"] == 2
    assert up["chosen"]["cappedBy"] == 'exceeded quota: "cluster-wide", resources: cpu'
    assert len(up["chosen"]["pods"]) == 6  # the option's pods, as cluster-autoscaler reports them
    assert {o["nodeGroup"]: o["nodes"] for o in up["options"]}["highcpu"] == 2


def test_a_group_whose_next_node_passes_the_maximum_is_skipped() -> None:
    up = _plan("--no-scale-down", "--cores-total", "0:30")["scaleUp"]
    assert {o["nodeGroup"] for o in up["options"]} == {"gpu"}
    report = next(u for u in up["unhelpable"] if u["pod"] == "shop/eu-report")
    assert report["nodeGroups"]["large"] == 'exceeded quota: "cluster-wide", resources: cpu'


def test_gpu_limits_count_the_gpus_of_the_labelled_type(tmp_path: Path) -> None:
    groups = tmp_path / "g.yaml"
    groups.write_text(Path(GROUPS).read_text().replace(
        "eks.amazonaws.com/nodegroup: gpu", f"eks.amazonaws.com/nodegroup: gpu\n        {GPU_LABELS[1]}: nvidia-l4"),
        encoding="utf-8")
    chosen = _plan("--no-scale-down", "--expander", "priority", "--gpu-total", "nvidia-l4:0:1",
                   groups=str(groups))["scaleUp"]["chosen"]
    assert (chosen["nodeGroup"], chosen["nodes"], chosen["cappedFrom"]) == ("gpu", 1, 2)
    assert chosen["cappedBy"].endswith("resources: nvidia-l4")


@pytest.mark.parametrize(("minimum", "rule"), [pytest.param(16, None, id="room-for-one"),
                                               pytest.param(17, "MinimalResourceLimitExceeded", id="none")])
def test_scale_down_keeps_the_minimum(minimum: int, rule: str | None) -> None:
    down = _plan("--no-scale-up", "--cores-total", f"{minimum}:1000")["scaleDown"]  # five 4-core nodes: 20 cores
    blocked = {b["node"]: b["rule"] for b in down["blocked"]}
    if rule is None:
        assert [c["node"] for c in down["candidates"]] == ["general-5"]
    else:
        assert down["candidates"] == [] and blocked["general-5"] == rule
