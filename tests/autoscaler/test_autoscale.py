"""``autoscale`` end to end: the example cluster's scale-up and scale-down, bad input naming the flag or field."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework import cli

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "autoscaler" / "cluster.yaml")
GROUPS = str(ROOT / "examples" / "autoscaler" / "node-groups.yaml")


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def plan(*extra: str) -> dict[str, Any]:
    code, out, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", GROUPS, "--seed", "1", "--output",
                         "json", *extra)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_scale_down_candidates_and_blocked_nodes() -> None:
    down = plan("--no-scale-up")["scaleDown"]
    assert [(c["node"], c["nodeGroup"]) for c in down["candidates"]] == [("general-5", "general")]
    assert down["candidates"][0]["moves"] == {"shop/search-0": "general-1"}
    assert {b["node"]: b["rule"] for b in down["blocked"]} == {"general-3": "NotEnoughPdb",
                                                                "general-4": "LocalStorageRequested"}


def test_local_storage_can_be_allowed() -> None:
    down = plan("--no-scale-up", "--skip-nodes-with-local-storage", "false")["scaleDown"]
    assert {c["node"] for c in down["candidates"]} == {"general-4", "general-5"}


def test_min_size_is_respected(tmp_path: Path) -> None:
    groups = tmp_path / "g.yaml"
    groups.write_text(Path(GROUPS).read_text().replace("minSize: 1", "minSize: 5"), encoding="utf-8")
    code, out, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", str(groups), "--no-scale-up",
                         "--output", "json")
    assert code == 0, err
    down = json.loads(out)["scaleDown"]
    assert down["candidates"] == []
    assert {b["node"]: b["rule"] for b in down["blocked"]}["general-5"] == "NodeGroupMinSizeReached"


@pytest.mark.parametrize(("argv", "flag", "words"), [
    pytest.param(["--expander", "cheapest"], "--expander", "unknown expander(s) cheapest", id="unknown-expander"),
    pytest.param(["--scale-down-utilization-threshold", "1.5"], "--scale-down-utilization-threshold",
                 "between 0 and 1", id="threshold"),
    pytest.param(["--max-nodes-total", "-1"], "--max-nodes-total", "non-negative", id="max-nodes"),
    pytest.param(["--cores-total", "5"], "--cores-total", "expected MIN:MAX", id="cores-one-number"),
    pytest.param(["--cores-total", "10:2"], "--cores-total", "0 <= MIN <= MAX", id="cores-max-under-min"),
    pytest.param(["--memory-total", "0:lots"], "--memory-total", "integers", id="memory-not-a-number"),
    pytest.param(["--gpu-total", "t4:1"], "--gpu-total", "TYPE:MIN:MAX", id="gpu-no-max"),
    pytest.param(["--gpu-total", "t4:0:1", "--gpu-total", "t4:0:2"], "--gpu-total", "given twice", id="gpu-twice"),
    pytest.param(["--balancing-label", "a", "--balancing-ignore-label", "b"], "--balancing-label",
                 "cannot be combined", id="balancing-label-and-ignore-label"),
])
def test_bad_flags_are_named(argv: list[str], flag: str, words: str) -> None:
    code, _, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", GROUPS, *argv)
    assert code == 2 and err.startswith(f"error: {flag}") and words in err, err


@pytest.mark.parametrize(("content", "words"), [
    pytest.param(None, "no/such", id="missing"),
    pytest.param("nodeGroups: [{name: g, maxSize: 1}]\n", "nodeGroups[0]: give one of template", id="no-template"),
    pytest.param("a: [\n", "--node-groups", id="malformed"),
    pytest.param("nodeGroups: []\n---\nnodeGroups: []\n", "expected one YAML document", id="two-documents"),
])
def test_bad_node_groups_name_the_flag(tmp_path: Path, content: str | None, words: str) -> None:
    path = "no/such/groups.yaml"
    if content is not None:
        path = str(tmp_path / "g.yaml")
        Path(path).write_text(content, encoding="utf-8")
    code, _, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", path)
    assert code == 2 and err.startswith("error: --node-groups") and words in err, err
    assert "Traceback" not in err


# --- scale-up -------------------------------------------------------------------------------------------------


def test_scale_up_options_and_unhelpable_pods() -> None:
    up = plan("--no-scale-down", "--expander", "least-waste")["scaleUp"]
    assert up["schedulableOnExistingNodes"] == {}
    options = {o["nodeGroup"]: (o["nodes"], len(o["pods"])) for o in up["options"]}
    assert options == {"large": (2, 6), "highcpu": (2, 6), "gpu": (2, 4)}
    assert [u["pod"] for u in up["unhelpable"]] == ["shop/eu-report"]
    assert set(up["unhelpable"][0]["nodeGroups"]) == {"general", "large", "highcpu", "gpu"}


@pytest.mark.parametrize(("expander", "group"), [
    pytest.param("least-waste", "highcpu", id="least-waste"),  # 32Gi nodes: less memory left idle
    pytest.param("price", "large", id="price"),  # the cheaper node
])
def test_least_waste_and_price_choose_differently(expander: str, group: str) -> None:
    chosen = plan("--no-scale-down", "--expander", expander)["scaleUp"]["chosen"]
    assert (chosen["nodeGroup"], chosen["nodes"]) == (group, 2)


def test_a_gpu_pool_scale_up() -> None:
    doc = plan("--no-scale-down", "--expander", "priority,least-waste")["scaleUp"]
    gpu = next(o for o in doc["options"] if o["nodeGroup"] == "gpu")
    assert {"shop/train-0", "shop/train-1"} <= set(gpu["pods"])
    assert doc["chosen"]["nodeGroup"] == "gpu"  # the highest priority among the groups that help


def test_max_size_reached(tmp_path: Path) -> None:
    groups = tmp_path / "g.yaml"
    groups.write_text(Path(GROUPS).read_text().replace("maxSize: 5", "maxSize: 0"), encoding="utf-8")
    code, out, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", str(groups), "--no-scale-down",
                         "--output", "json", "--seed", "1")
    assert code == 0, err
    up = json.loads(out)["scaleUp"]
    assert {o["nodeGroup"] for o in up["options"]} == {"gpu"}
    report = next(u for u in up["unhelpable"] if u["pod"] == "shop/eu-report")
    assert report["nodeGroups"]["large"] == report["nodeGroups"]["highcpu"] == "max size reached"


def test_why_adds_remedies_to_unhelpable_pods() -> None:
    up = plan("--no-scale-down", "--why")["scaleUp"]
    [u] = up["unhelpable"]
    assert u["remedies"][0] == "drop nodeSelector topology.kubernetes.io/zone=eu-west-1a"


def test_the_plan_leaves_the_cluster_as_it_was() -> None:
    from scheduling_framework.autoscaler.groups import load_node_groups
    from scheduling_framework.autoscaler.plan import autoscale
    from scheduling_framework.ingest.cluster import load_cluster
    from tests import yamlio

    cluster = load_cluster(CLUSTER)
    groups = load_node_groups(yamlio.load(Path(GROUPS).read_text()), cluster.nodes)
    first = autoscale(cluster, groups, seed=1, expanders=["least-waste"]).to_dict()
    again = autoscale(cluster, groups, seed=1, expanders=["least-waste"]).to_dict()
    assert first == again


def test_enforce_node_group_min_size(tmp_path: Path) -> None:
    groups = tmp_path / "g.yaml"
    groups.write_text(Path(GROUPS).read_text().replace("minSize: 1", "minSize: 7"), encoding="utf-8")
    code, out, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", str(groups), "--no-scale-down",
                         "--enforce-node-group-min-size", "--output", "json", "--seed", "1")
    assert code == 0, err
    assert json.loads(out)["scaleUp"]["minSize"] == [{"nodeGroup": "general", "nodes": 2, "note": "minSize 7"}]
    assert plan("--no-scale-down")["scaleUp"]["minSize"] == []  # off by default


def test_the_table_shows_a_capped_scale_up() -> None:
    code, out, err = run("autoscale", "--cluster", CLUSTER, "--node-groups", GROUPS, "--no-scale-down", "--seed", "1",
                         "--expander", "least-waste", "--cores-total", "0:40")
    assert code == 0, err
    assert "chosen (least-waste): highcpu, 1 new node(s) for 6 pod(s)" in out
    assert 'capped from 2 node(s) by the cluster-wide limits: exceeded quota: "cluster-wide", resources: cpu' in out
