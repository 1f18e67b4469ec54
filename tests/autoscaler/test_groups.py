"""Node groups read from YAML: templates, copies of existing nodes, membership, and errors naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.api.node import Node
from scheduling_framework.autoscaler.groups import load_node_groups
from scheduling_framework.errors import ConfigError


def node(name: str, group: str, taints: list[dict[str, str]] | None = None) -> Node:
    return Node.from_dict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "eks.amazonaws.com/nodegroup": group,
                                              "topology.kubernetes.io/zone": "us-east-1a"}},
        "spec": {"providerID": f"aws:///us-east-1a/{name}", "taints": taints or []},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})


NODES = [node("a1", "general"), node("g1", "gpu", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                                                  {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}])]
TEMPLATE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big", "labels": {"pool": "big"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def test_groups_from_templates_and_existing_nodes() -> None:
    doc = {"nodeGroups": [
        {"name": "general", "minSize": 1, "maxSize": 10, "templateNode": "a1", "pricePerHour": 0.2},
        {"name": "gpu", "maxSize": 3, "templateNode": "g1", "priority": 5},
        {"name": "big", "maxSize": 2, "template": TEMPLATE, "nodeSelector": {"pool": "big"}}]}
    general, gpu, big = load_node_groups(doc, NODES)
    assert (general.min_size, general.max_size, general.price_per_hour) == (1, 10, 0.2)
    assert general.node_selector == {"eks.amazonaws.com/nodegroup": "general"}
    assert general.owns(NODES[0]) and not general.owns(NODES[1]) and gpu.owns(NODES[1])
    copy = gpu.template
    assert "kubernetes.io/hostname" not in copy.metadata.labels and copy.name == "template-gpu"
    assert [t.key for t in copy.spec.taints] == ["dedicated"]  # the node's own condition taints are not copied
    assert (gpu.min_size, gpu.priority) == (0, 5)
    assert big.node_selector == {"pool": "big"} and not big.owns(NODES[0])
    assert not big.zero_or_max_node_scaling


def test_zero_or_max_node_scaling_is_read() -> None:
    doc = {"nodeGroups": [{"name": "tpu", "maxSize": 4, "template": TEMPLATE, "zeroOrMaxNodeScaling": True}]}
    [tpu] = load_node_groups(doc, NODES)
    assert tpu.zero_or_max_node_scaling


@pytest.mark.parametrize(("groups", "words"), [
    pytest.param({"nodeGroups": "x"}, "nodeGroups list", id="not-a-list"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1}]}, "nodeGroups[0]: give one of template",
                 id="no-template"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "template": TEMPLATE, "templateNode": "a1"}]},
                 "give one of template", id="both-templates"),
    pytest.param({"nodeGroups": [{"name": "g", "minSize": 3, "maxSize": 1, "template": TEMPLATE}]},
                 "nodeGroups[0].maxSize: 1 is below minSize 3", id="max-below-min"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": -1, "template": TEMPLATE}]},
                 "nodeGroups[0].maxSize: expected a non-negative integer", id="negative"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "templateNode": "nope"}]},
                 "nodeGroups[0].templateNode: the cluster has no node 'nope'", id="unknown-node"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "template": {"kind": "Node"}}]},
                 "nodeGroups[0].template:", id="bad-template"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "template": TEMPLATE},
                                 {"name": "g", "maxSize": 1, "template": TEMPLATE}]},
                 "nodeGroups[1].name: node group 'g' is listed twice", id="duplicate"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "template": TEMPLATE, "pricePerHour": "cheap"}]},
                 "nodeGroups[0].pricePerHour", id="bad-price"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "template": TEMPLATE, "maxsize": 3}]},
                 "unknown field(s) maxsize", id="unknown-field"),
    pytest.param({"nodeGroups": [{"name": "g", "maxSize": 1, "template": TEMPLATE, "zeroOrMaxNodeScaling": "yes"}]},
                 "nodeGroups[0].zeroOrMaxNodeScaling: expected true or false", id="bad-zero-or-max"),
])
def test_bad_groups_name_the_field(groups: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_node_groups(groups, NODES)
    assert words in str(e.value)
