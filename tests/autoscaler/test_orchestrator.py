"""cluster-autoscaler's scale-up orchestrator cases (tests/fixtures/autoscaler/orchestrator.yaml): which group
grows and by how many nodes, and which pods triggered it, remain unschedulable or await another loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.api import Node, Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.autoscaler.estimator import estimate
from scheduling_framework.autoscaler.groups import NodeGroup, load_node_groups
from scheduling_framework.autoscaler.limits import DEFAULT_MAX_CORES, DEFAULT_MAX_MEMORY_GIB, GIB, ResourceLimits
from scheduling_framework.autoscaler.nodegroupset import BalancingOptions, compute_similar_node_groups
from scheduling_framework.autoscaler.scaleup import is_skip_reason, scale_up, scale_up_to_node_group_min_size
from scheduling_framework.simulation import ClusterSnapshot, Simulator
from tests import yamlio

DATA = yamlio.load((Path(__file__).parent.parent / "fixtures" / "autoscaler" / "orchestrator.yaml").read_text())
GROUP_LABEL = "ng"  # upstream's nodeGroupLabel
GPU = "nvidia.com/gpu"
#: upstream's bounds for a group with nodes but no NodeGroupConfig
DEFAULT_MIN, DEFAULT_MAX = 1, 10


def _cases(kind: str = "") -> list[Any]:
    """The cases of one kind: "compute_similar", "min_size", or "" for the scale-ups."""
    own = {"compute_similar", "min_size"}
    return [pytest.param(c, id=c["name"], marks=[pytest.mark.skip(reason=c["skip"])] if c.get("skip") else [])
            for c in DATA["cases"] if (kind in c if kind else not own & set(c))]


def _limits(case: dict[str, Any]) -> ResourceLimits:
    """Upstream's resource limiter: defaultOptions, with the case's changes (memory in bytes)."""
    spec = case.get("limits") or {}
    mem = {k: Quantity.parse(spec[k]).value() for k in ("min_memory", "max_memory") if k in spec}
    return ResourceLimits({"cpu": spec.get("min_cores", 0), "memory": mem.get("min_memory", 0)},
                          {"cpu": spec.get("max_cores", DEFAULT_MAX_CORES),
                           "memory": mem.get("max_memory", DEFAULT_MAX_MEMORY_GIB * GIB)})


def _balancing(case: dict[str, Any]) -> BalancingOptions | None:
    return BalancingOptions(ignored_labels=(GROUP_LABEL,)) if case.get("balance_similar_node_groups") else None


def _node_manifest(name: str, cpu: int, memory: str, gpu: int = 0, group: str | None = None) -> dict[str, Any]:
    """Upstream's BuildTestNode (+ AddGpusToNode, SetNodeReadyState, the node-group label)."""
    alloc = {"cpu": f"{cpu}m", "memory": memory, "pods": "100"}
    labels: dict[str, str] = {}
    taints: list[dict[str, str]] = []
    if gpu:
        alloc[GPU] = str(gpu)
        labels["cloud.google.com/gke-accelerator"] = "nvidia-tesla-k80"
        taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
    if group:
        labels[GROUP_LABEL] = group
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"providerID": name, "taints": taints},
            "status": {"capacity": alloc, "allocatable": dict(alloc),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(spec: dict[str, Any]) -> Pod:
    """Upstream's BuildTestPod (+ RequestGpuForPod, TolerateGpuForPod, the node it is bound to)."""
    requests = {"cpu": f"{spec.get('cpu', 0)}m", "memory": spec.get("memory", "0")}
    resources: dict[str, Any] = {"requests": requests}
    if spec.get("gpu"):
        requests[GPU] = str(spec["gpu"])
        resources["limits"] = {GPU: str(spec["gpu"])}
    pod_spec: dict[str, Any] = {"containers": [{"name": "c", "resources": resources}]}
    if spec.get("tolerates_gpu"):
        pod_spec["tolerations"] = [{"key": GPU, "operator": "Exists"}]
    if spec.get("node"):
        pod_spec["nodeName"] = spec["node"]
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": spec["name"], "namespace": "default", "uid": spec["name"]},
                          "spec": pod_spec})


def _setup(case: dict[str, Any]) -> tuple[Simulator, list[NodeGroup], list[Pod]]:
    nodes = [Node.from_dict(_node_manifest(n["name"], n["cpu"], n["memory"], n.get("gpu", 0), n.get("group")))
             for n in case["nodes"]]
    sim = Simulator(seed=1, cluster=ClusterSnapshot(nodes=nodes, pods=[_pod(p) for p in case.get("pods", [])]))
    configs = {g["name"]: g for g in case.get("groups", [])}
    names = list(configs) + [n["group"] for n in case["nodes"] if n.get("group") and n["group"] not in configs]
    doc = []
    for name in dict.fromkeys(names):
        cfg = configs.get(name)
        first = next((n["name"] for n in case["nodes"] if n.get("group") == name), None)
        entry: dict[str, Any] = {"name": name, "minSize": DEFAULT_MIN if cfg is None else cfg.get("min", 0),
                                 "maxSize": DEFAULT_MAX if cfg is None else cfg["max"],
                                 "nodeSelector": {GROUP_LABEL: name},
                                 "zeroOrMaxNodeScaling": case.get("zero_or_max_node_scaling", False)}
        if first is not None:
            entry["templateNode"] = first
        else:
            assert cfg is not None
            t = cfg["template"]
            entry["template"] = _node_manifest("n", t["cpu"], t["memory"], t.get("gpu", 0))
        doc.append(entry)
    groups = load_node_groups({"nodeGroups": doc}, nodes)
    return sim, groups, [_pod(p) for p in case["extra_pods"]]


def _names(keys: Any) -> list[str]:
    return sorted(k.split("/", 1)[1] for k in keys)


@pytest.mark.parametrize("case", _cases())
def test_scale_up_orchestrator(case: dict[str, Any]) -> None:
    sim, groups, pending = _setup(case)
    choose = case.get("choose")
    result = scale_up(sim, pending, groups, expanders=["priority"] if choose else ["random"], seed=1,
                      priorities={10: [f"^{choose['group']}$"]} if choose else None,
                      max_nodes_total=case.get("max_nodes_total"), filter_schedulable=False,
                      all_or_nothing=case.get("all_or_nothing", False),
                      simulate_skipped_groups=case.get("simulate_skipped_groups", False),
                      limits=_limits(case), balancing=_balancing(case))
    expect, ours = case["expect"], case.get("ours", {})
    options = {o.node_group: o for o in result["options"]}
    chosen = result["chosen"]

    if choose is not None:  # upstream's mock expander finds this option, or fails
        option = options[choose["group"]]
        if option.nodes != choose["nodes"]:  # capped by maxSize / --max-nodes-total, as CA's limiter caps it
            assert option.note.startswith("capped at"), option
            group = next(g for g in groups if g.name == choose["group"])
            assert estimate(sim, pending, group.template).node_count == choose["nodes"]
    final = None if chosen is None else {"group": chosen.node_group, "nodes": chosen.nodes}
    if "scale_up" in expect:
        assert final == expect["scale_up"]
    if "balanced" in expect:
        assert chosen is not None
        assert dict(chosen.balanced or [(chosen.node_group, chosen.nodes)]) == expect["balanced"]
    if "options" in expect:
        want = ours.get("options", expect["options"])
        assert sorted((o.node_group, o.nodes) for o in result["options"]) == sorted(
            (o["group"], o["nodes"]) for o in want)

    fits = result["schedulable_groups"]
    if "triggered" in expect:
        assert _names(chosen.pods if chosen is not None else ()) == sorted(ours.get("triggered", expect["triggered"]))
    if "remain" in expect:
        assert _names(k for k, gs in fits.items() if not gs) == sorted(expect["remain"])
    if "awaiting" in expect:
        awaiting = [k for k, gs in fits.items() if gs and chosen is not None and chosen.node_group not in gs]
        assert _names(awaiting) == sorted(expect["awaiting"])
    unhelpable = {u.pod: u for u in result["unhelpable"]}
    if "remain" in expect or "unhelpable" in ours:
        assert _names(unhelpable) == sorted(ours.get("unhelpable", expect["remain"]))
    if "no_scale_up_reason" in expect:
        assert any(expect["no_scale_up_reason"] in u.reason for u in unhelpable.values()), unhelpable
    for name, want_groups in (expect.get("remain_groups") or {}).items():
        verdicts = dict(unhelpable[f"default/{name}"].groups)
        assert sorted(g for g, r in verdicts.items() if not is_skip_reason(r)) == sorted(want_groups["rejected"])
        assert sorted(g for g, r in verdicts.items() if is_skip_reason(r)) == sorted(want_groups["skipped"])


@pytest.mark.parametrize("case", _cases("compute_similar"))
def test_compute_similar_node_groups(case: dict[str, Any]) -> None:
    spec = case["compute_similar"]
    got = compute_similar_node_groups(spec["node_group"], spec.get("similar_node_groups") or [],
                                      spec.get("schedulable_pod_groups") or {}, enabled=spec["balancing_enabled"])
    assert sorted(got) == sorted(spec["want"])


@pytest.mark.parametrize("case", _cases("min_size"))
def test_scale_up_to_node_group_min_size(case: dict[str, Any]) -> None:
    sim, groups, _ = _setup(case)
    got = scale_up_to_node_group_min_size(sim, groups, limits=_limits(case),
                                          max_nodes_total=case.get("max_nodes_total"))
    assert [{"group": o.node_group, "nodes": o.nodes} for o in got] == case["expect"]["min_size"]


def test_every_upstream_case_is_listed_once() -> None:
    names = [c["name"] for c in DATA["cases"]]
    assert len(names) == len(set(names)) == 49
    assert sum(1 for c in DATA["cases"] if not c.get("skip")) == 34


# ---- beyond upstream's cases: the pieces the port adds (kept apart from the upstream table) ----
def _one_group_case(**extra: Any) -> dict[str, Any]:
    return {"nodes": [{"name": "n1", "cpu": 1000, "memory": "1000", "group": "ng"}],
            "pods": [{"name": "p0", "cpu": 1000, "node": "n1"}],
            "extra_pods": [{"name": f"p{i}", "cpu": 600} for i in range(1, 4)], **extra}


def test_filter_out_schedulable_runs_first_by_default() -> None:
    case = _one_group_case(extra_pods=[{"name": "small", "cpu": 0, "memory": "10"}, {"name": "big", "cpu": 600}])
    sim, groups, pending = _setup(case)
    result = scale_up(sim, pending, groups, expanders=["random"], seed=1)
    assert result["schedulable"] == [("default/small", "n1")]
    assert set(result["schedulable_groups"]) == {"default/big"}
    assert [(o.node_group, o.nodes) for o in result["options"]] == [("ng", 1)]


def test_zero_or_max_node_scaling_group_grows_to_its_max_size() -> None:
    sim, groups, pending = _setup(_one_group_case(groups=[{"name": "ng", "min": 0, "max": 4}],
                                                  zero_or_max_node_scaling=True))
    [option] = scale_up(sim, pending, groups, expanders=["random"], seed=1, filter_schedulable=False)["options"]
    assert (option.nodes, len(option.pods)) == (3, 3)  # three new nodes: the group at its max size of four
    assert option.note == "zeroOrMaxNodeScaling: grows to maxSize 4"


def test_all_or_nothing_keeps_a_group_that_takes_every_pod() -> None:
    sim, groups, pending = _setup(_one_group_case())
    result = scale_up(sim, pending, groups, expanders=["random"], seed=1, all_or_nothing=True)
    assert (result["chosen"].node_group, result["chosen"].nodes) == ("ng", 3)
    assert result["unhelpable"] == []


def test_max_size_reason_without_simulating_skipped_groups() -> None:
    sim, groups, pending = _setup(_one_group_case(groups=[{"name": "ng", "min": 0, "max": 1}],
                                                  extra_pods=[{"name": "huge", "cpu": 5000}]))
    plain = scale_up(sim, pending, groups, expanders=["random"], seed=1)["unhelpable"]
    assert plain[0].groups == (("ng", "max size reached"),)
    simulated = scale_up(sim, pending, groups, expanders=["random"], seed=1, simulate_skipped_groups=True)
    assert simulated["unhelpable"][0].groups == (("ng", "Insufficient cpu"),)
