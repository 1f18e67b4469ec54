"""cluster-autoscaler's expander test tables (tests/fixtures/autoscaler/expander.yaml), the chain and bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.api import Node
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.autoscaler import expander as ex
from scheduling_framework.autoscaler.expander import (
    EXPANDERS,
    ExpanderError,
    Option,
    PrioritiesError,
    chain,
    choose,
    least_waste,
    most_pods,
    node_unfitness,
    parse_priorities,
    preferred_node,
    price,
    priority,
)

DATA = yaml.safe_load((Path(__file__).parent.parent / "fixtures" / "autoscaler" / "expander.yaml").read_text())


def _cases(section: str) -> list[Any]:
    return [pytest.param(c, id=c["name"], marks=[pytest.mark.skip(reason=c["skip"])] if c.get("skip") else [])
            for c in DATA[section]]


def _node(name: str, status: dict[str, str]) -> Node:
    return Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "status": {"capacity": status}})


def _options(case: dict[str, Any]) -> list[Option]:
    nodes = {k: _node(k, v) for k, v in (case.get("nodes") or {}).items()}
    pods = case.get("pods") or {}
    out = []
    for spec in case["options"]:
        if isinstance(spec, str):
            spec = {"nodeGroup": spec}
        keys = spec.get("pods", [])
        requests: dict[str, Quantity] = {}
        for key in keys:
            for res, q in (pods[key] or {}).items():
                requests[res] = requests.get(res, Quantity()) + Quantity.parse(q)
        out.append(Option(spec["nodeGroup"], spec.get("nodeCount", 1), keys,
                          nodes[spec["node"]] if "node" in spec else None, pod_requests=requests,
                          exists=spec.get("exists", True)))
    return out


def _names(options: list[Option]) -> list[str]:
    return [o.node_group for o in options]


@pytest.mark.parametrize("case", _cases("random"))
def test_random(case: dict[str, Any]) -> None:
    options = _options(case)
    for seed in range(20):
        picked = ex.random(options, seed=seed)
        assert len(picked) == min(1, len(options))
        assert all(o.node_group in case["expect_one_of"] for o in picked)
    if len(options) > 1:  # each option gets picked by some seed
        assert {ex.random(options, seed=s)[0].node_group for s in range(20)} == set(case["expect_one_of"])


@pytest.mark.parametrize("case", _cases("most_pods"))
def test_most_pods(case: dict[str, Any]) -> None:
    assert _names(most_pods(_options(case))) == case["expect"]


@pytest.mark.parametrize("case", _cases("least_waste"))
def test_least_waste(case: dict[str, Any]) -> None:
    assert _names(least_waste(_options(case))) == case["expect"]


class TablePricing:
    """Upstream's test pricing model: prices by the template node's name and by pod key, unknown ones fail."""

    def __init__(self, nodes: dict[str, float], pods: dict[str, float]) -> None:
        self.nodes, self.pods = nodes, pods

    def node_price(self, option: Option) -> float | None:
        return None if option.template is None else self.nodes.get(option.template.name)

    def pods_price(self, option: Option) -> float | None:
        prices = [self.pods.get(p) for p in option.pods]
        return None if None in prices else sum(p for p in prices if p is not None)

    def stabilization_price(self) -> float | None:
        return self.pods.get("stabilize")


@pytest.mark.parametrize("case", _cases("price"))
def test_price(case: dict[str, Any]) -> None:
    pricing = TablePricing(case["pricing"]["nodes"], case["pricing"]["pods"])
    got = price(_options(case), pricing=pricing, preferred_cpu_millis=Quantity.parse(case["preferred"]).milli_value())
    assert _names(got) == case["expect"]


@pytest.mark.parametrize("case", _cases("preferred"))
def test_preferred(case: dict[str, Any]) -> None:
    if "cluster_size" in case:
        assert preferred_node(case["cluster_size"])[0] == case["expect_cpu_millis"]
    else:
        assert node_unfitness(*case["unfitness"]) == case["expect"]


@pytest.mark.parametrize("case", _cases("priority"))
def test_priority(case: dict[str, Any]) -> None:
    events: list[str] = []
    for step in case["steps"]:
        events.clear()
        got = priority(_options(step), step["config"], strict=step.get("strict", True),
                       warn=lambda reason, msg: events.append(f"Warning {reason} {msg}"))
        assert _names(got) == step["expect"]
        if "warnings" in step:
            assert events == step["warnings"]


@pytest.mark.parametrize("case", _cases("chain"))
def test_chain(case: dict[str, Any]) -> None:
    def substring(s: str) -> ex.Filter:
        return lambda opts: [o for o in opts if s in o.node_group]

    fb = substring(case["fallback"])
    got = chain(_options(case), [substring(s) for s in case["filters"]], lambda opts: next(iter(fb(opts)), None))
    assert got is not None and got.node_group == case["expect"]


# --- the chain through choose, and what it refuses ------------------------------------------------------------

def _opt(name: str, pods: int, cpu: str, *, prio: int | None = None, per_hour: float | None = None,
         requests: str = "1") -> Option:
    return Option(name, 1, [f"p{i}" for i in range(pods)], _node(f"{name}-t", {"cpu": cpu, "memory": "8Gi"}),
                  per_hour, prio, {"cpu": Quantity.parse(requests), "memory": Quantity.parse("1Gi")})


def test_choose_chains_priority_then_least_waste() -> None:
    opts = [_opt("big", 2, "16"), _opt("small", 2, "2"), _opt("other", 2, "2")]
    conf = {10: ["^big$", "^small$"], 1: [".*"]}
    assert choose(opts, ["priority", "least-waste"], priorities=conf, seed=1) == opts[1]
    # priorities from the options' own field when no configuration is given
    ranked = [_opt("a", 1, "2", prio=1), _opt("b", 1, "2", prio=5), _opt("c", 1, "2")]
    assert choose(ranked, ["priority"], seed=3) == ranked[1]
    # YAML text as in the ConfigMap
    assert choose(opts, ["priority", "most-pods"], priorities="5:\n  - oth.*\n", seed=0) == opts[2]


def test_choose_ties_are_broken_at_random_by_the_seed() -> None:
    opts = [_opt(n, 1, "2") for n in "abcdef"]
    picks = {choose(opts, ["least-waste"], seed=s) for s in range(30)}
    assert len(picks) > 1 and picks <= set(opts)
    assert choose(opts, ["least-waste"], seed=7) == choose(opts, ["least-waste"], seed=7)
    assert choose([], ["random"], seed=1) is None


def test_choose_price_uses_price_per_hour() -> None:
    cheap, dear, unpriced = _opt("cheap", 1, "4", per_hour=0.2), _opt("dear", 1, "4", per_hour=0.4), _opt("x", 1, "4")
    assert choose([dear, cheap, unpriced], ["price"], seed=1) == cheap
    # a group without a price cannot be priced: left out, as CA leaves out a node it cannot price
    assert choose([unpriced], ["price"], seed=1) is None
    # GPU nodes are made unattractive for pods that do not need them
    gpu = Option("gpu", 1, ["p"], Node.from_dict({"metadata": {"name": "g"}, "status": {"capacity": {
        "cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}}}), 0.01)
    assert choose([gpu, dear], ["price"], seed=1) == dear
    # the preferred node follows the cluster size: a big cluster prefers the big node at the same price per cpu
    small, big = _opt("small", 8, "2", per_hour=0.1), _opt("big", 8, "32", per_hour=1.6)
    small = Option("small", 16, small.pods, small.template, 0.1, pod_requests=small.pod_requests)
    assert choose([small, big], ["price"], cluster_size=1000, seed=1) == big
    assert choose([small, big], ["price"], cluster_size=1, seed=1) == small


def test_least_waste_without_capacity_reads_allocatable() -> None:
    alloc = Node.from_dict({"metadata": {"name": "t"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}})
    opt = Option("g", 1, ["p"], alloc, pod_requests={"cpu": Quantity.parse("1"), "memory": Quantity.parse("2Gi")})
    assert ex.waste_score(opt) == 1.0
    assert least_waste([Option("none", 1, ["p"]), opt]) == [opt]  # no template: left out


@pytest.mark.parametrize(("expanders", "words"), [
    pytest.param(["cheapest"], "Expander cheapest not supported; known: " + ", ".join(EXPANDERS), id="unknown"),
    pytest.param([], "no expander given; known: random", id="none"),
    pytest.param(["price", "price"], "Expander price was specified multiple times", id="twice"),
    pytest.param(["random", "most-pods"], "Expander most-pods came after an expander random", id="after-random"),
])
def test_bad_expanders_are_refused(expanders: list[str], words: str) -> None:
    with pytest.raises(ExpanderError) as e:
        choose([_opt("a", 1, "2")], expanders)
    assert e.value.path == "expander" and words in str(e.value)


@pytest.mark.parametrize(("config", "path", "words"), [
    pytest.param("", "priorities", "configmap is empty", id="empty"),
    pytest.param("10: [a\n", "priorities", "Can't parse YAML with priorities", id="yaml"),
    pytest.param("- a\n", "priorities", "expected a mapping", id="list"),
    pytest.param({"ten": ["a"]}, "priorities", "priority 'ten' is not an integer", id="key"),
    pytest.param({10: "a.*"}, "priorities[10]", "expected a list of regular expressions", id="not-a-list"),
    pytest.param({10: ["ok", 5]}, "priorities[10][1]", "expected a regular expression", id="not-a-string"),
    pytest.param({10: ["a(b"]}, "priorities[10][0]",
                 "Can't compile regexp rule for priority 10 and rule a(b: error parsing regexp: missing closing )",
                 id="regexp"),
    pytest.param({10: ["a(?=b)"]}, "priorities[10][0]", "error parsing regexp: invalid or unsupported Perl syntax",
                 id="go-syntax"),
])
def test_bad_priorities_name_the_field(config: Any, path: str, words: str) -> None:
    with pytest.raises(PrioritiesError) as e:
        parse_priorities(config)
    assert e.value.path == path and words in str(e.value) and str(e.value).startswith(path)
    with pytest.raises(PrioritiesError):  # choose refuses it too, with nothing to choose from
        choose([], ["priority"], priorities=config)


def test_priorities_accept_yaml_and_string_keys() -> None:
    assert parse_priorities("10:\n  - a.*\n'-3': [b]\n20:\n") == {10: ("a.*",), -3: ("b",), 20: ()}
    assert parse_priorities({"+5": ["x"]}) == {5: ("x",)}
