"""cluster-autoscaler's drain, utilization and eligibility test tables (tests/fixtures/autoscaler/drain.yaml)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.api import Node, Pod
from scheduling_framework.autoscaler.drain import (
    RULES,
    BlockingReason,
    Controllers,
    DrainContext,
    DrainOptions,
    Outcome,
    Pdb,
    Rule,
    Status,
    UtilizationError,
    drainable,
    eligible,
    is_pod_long_terminating,
    pods_to_move,
    utilization,
)
from scheduling_framework.state.node_info import NodeInfo

DATA = yaml.safe_load((Path(__file__).parent.parent / "fixtures" / "autoscaler" / "drain.yaml").read_text())
NOW = datetime.fromisoformat(DATA["test_time"])

FAKE_RULES = {
    "AlwaysDrain": Rule("AlwaysDrain", lambda ctx, pod: Status(Outcome.DRAIN_OK)),
    "NeverDrain": Rule("NeverDrain", lambda ctx, pod: Status(Outcome.BLOCK_DRAIN, BlockingReason.UnexpectedError,
                                                                 "nope")),
    "CantDecide": Rule("CantDecide", lambda ctx, pod: Status()),
}


def _cases(section: list[dict[str, Any]], prefix: str) -> list[Any]:
    out = []
    for c in section:
        marks = [pytest.mark.skip(reason=c["skip"])] if c.get("skip") else []
        out.append(pytest.param(c, id=f"{prefix}/{c['name']}", marks=marks))
    return out


def _manifests(pods: list[Pod]) -> list[str]:
    return sorted(json.dumps(p.to_dict(), sort_keys=True) for p in pods)


def _run_pods_to_move(case: dict[str, Any]) -> None:
    pods = [Pod.from_dict(m) for m in case["pods"]]
    extra = [FAKE_RULES[n] for n in case.get("rules", [])]
    to_move, ds, blocking = pods_to_move(pods, case.get("pdbs", []), DrainOptions(),
                                         controllers=case.get("controllers"), now=NOW, extra_rules=extra)
    want_block = case.get("want_blocking")
    if want_block is None:
        assert blocking is None, blocking
    else:
        assert blocking is not None
        assert (blocking.pod, blocking.reason.value) == (want_block["pod"], want_block["reason"])
        assert blocking.detail
    assert _manifests(to_move) == _manifests([Pod.from_dict(m) for m in case.get("want_pods", [])])
    assert _manifests(ds) == _manifests([Pod.from_dict(m) for m in case.get("want_ds", [])])


@pytest.mark.parametrize("case", _cases(DATA["get_pods_to_move"], "TestGetPodsToMove"))
def test_get_pods_to_move(case: dict[str, Any]) -> None:
    _run_pods_to_move(case)


@pytest.mark.parametrize("case", _cases(DATA["drain"], "TestDrain"))
def test_drain_legacy_table(case: dict[str, Any]) -> None:
    _run_pods_to_move(case)


@pytest.mark.parametrize("case", _cases(DATA["is_pod_long_terminating"], "TestIsPodLongTerminating"))
def test_is_pod_long_terminating(case: dict[str, Any]) -> None:
    assert is_pod_long_terminating(Pod.from_dict(case["pod"]), NOW) is case["want"]


@pytest.mark.parametrize("case", [c for pkg, cases in DATA["rules"].items() for c in _cases(cases, pkg)])
def test_rule(case: dict[str, Any]) -> None:
    opts = DrainOptions.from_flags(case.get("options", {}))
    rule = RULES[case["rule"]](opts)
    controllers = case.get("controllers")
    ctx = DrainContext([Pdb.from_object(p) for p in case.get("pdbs", [])],
                       None if controllers is None else Controllers(controllers), NOW)
    st = rule(ctx, Pod.from_dict(case["pod"]))
    want = case["want"]
    assert st.outcome.value == want["outcome"]
    assert st.reason.value == want.get("reason", "NoReason")
    assert bool(st.detail) == (st.outcome is Outcome.BLOCK_DRAIN)


def _status(d: dict[str, Any]) -> Status:
    return Status(Outcome(d["outcome"]), BlockingReason(d.get("reason", "NoReason")),
                  overrides=tuple(Outcome(o) for o in d.get("overrides", [])))


def _fixed(name: str, status: Status) -> Rule:
    def check(ctx: DrainContext, pod: Pod) -> Status:
        return status

    return Rule(name, check)


@pytest.mark.parametrize("case", _cases(DATA["rule_order"], "rules.TestDrainable"))
def test_rule_order(case: dict[str, Any]) -> None:
    rules = [_fixed("FakeRule", _status(r)) for r in case["rules"]]
    got, _ = drainable(rules, DrainContext(now=NOW), Pod.from_dict({"metadata": {"name": "p"}}))
    assert got == _status(case["want"])


@pytest.mark.parametrize("case", _cases(DATA["utilization"], "TestCalculate"))
def test_utilization(case: dict[str, Any]) -> None:
    ni = NodeInfo(Node.from_dict(case["node"]), [Pod.from_dict(p) for p in case["pods"]])
    opts = DrainOptions.from_flags(case.get("options", {}))
    if case.get("want_error"):
        with pytest.raises(UtilizationError):
            utilization(ni, opts, NOW)
        return
    got = utilization(ni, opts, NOW)
    exact = case["want"].get("exact", [])
    for key, want in case["want"].items():
        if key == "exact":
            continue
        value = getattr(got, key)
        if key in exact:
            assert value == want, (key, value)
        else:
            assert value == pytest.approx(want, rel=0.01), (key, value)


@pytest.mark.parametrize("case", _cases(DATA["eligibility"], "TestFilterOutUnremovable"))
def test_eligibility(case: dict[str, Any]) -> None:
    opts = DrainOptions.from_flags(case.get("options", {}))
    pods = [Pod.from_dict(p) for p in case.get("pods", [])]
    got = []
    for m in case["nodes"]:
        node = Node.from_dict(m)
        ni = NodeInfo(node, [p for p in pods if p.spec.node_name == node.name])
        try:
            util = utilization(ni, opts, NOW)
        except UtilizationError:
            util = None  # CA logs the error and goes on
        ok, _ = eligible(node, util, opts, NOW)
        if ok:
            got.append(node.name)
    assert got == case["want"]


def test_options_from_flags() -> None:
    o = DrainOptions.from_flags({"--skip-nodes-with-system-pods": False, "scale-down-utilization-threshold": 0.7,
                                 "max-cloud-provider-node-deletion-time": 60})
    assert not o.skip_nodes_with_system_pods and o.scale_down_utilization_threshold == 0.7
    assert o.max_cloud_provider_node_deletion_time.total_seconds() == 60
    assert DrainOptions().skip_nodes_with_local_storage and DrainOptions().skip_nodes_with_custom_controller_pods
    with pytest.raises(ValueError):
        DrainOptions.from_flags({"no-such-flag": 1})
