"""Issue 14 item 12: plugins cannot change the caller's Pod and Node objects.

Pods and nodes are frozen attrs classes and their mappings are read-only (``FrozenDict``, and ``FrozenList``
inside raw volume sources): an attempt to change one raises TypeError, which the framework turns into an Error
naming the plugin, and the caller's objects stay as they were."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from scheduling_framework.api import Pod
from scheduling_framework.api.frozen import FrozenDict, FrozenList, deep_freeze
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.scheduler import ERROR, SCHEDULED
from tests.runtime.runtime_fakes import make_node, make_pod, scheduler

MUTATIONS: dict[str, Callable[[Any, Any], None]] = {
    "pod-labels-set": lambda pod, ni: pod.labels.__setitem__("hacked", "yes"),
    "pod-labels-update": lambda pod, ni: pod.labels.update({"hacked": "yes"}),
    "pod-labels-pop": lambda pod, ni: pod.labels.pop("app"),
    "pod-labels-clear": lambda pod, ni: pod.labels.clear(),
    "pod-labels-ior": lambda pod, ni: pod.labels.__ior__({"hacked": "yes"}),
    "pod-annotations-setdefault": lambda pod, ni: pod.annotations.setdefault("hacked", "yes"),
    "pod-node-selector": lambda pod, ni: pod.spec.node_selector.__setitem__("zone", "b"),
    "pod-requests": lambda pod, ni: pod.spec.containers[0].resources.requests.__delitem__("cpu"),
    "pod-volume-source": lambda pod, ni: pod.spec.volumes[0].source.__setitem__("pool", "other"),
    "pod-volume-source-list": lambda pod, ni: pod.spec.volumes[0].source["monitors"].append("m9"),
    "node-labels": lambda pod, ni: ni.node.labels.__setitem__("hacked", "yes"),
    "node-allocatable": lambda pod, ni: ni.node.status.allocatable.pop("cpu"),
}


class Mutator:
    name = "Mutator"

    def __init__(self, how: Callable[[Any, Any], None]) -> None:
        self.how = how

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> None:
        self.how(pod, node_info)


def _pod() -> Pod:
    return Pod.from_dict({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a", "namespace": "default", "labels": {"app": "web"}, "annotations": {"k": "v"}},
        "spec": {"nodeSelector": {"zone": "a"},
                 "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                 "volumes": [{"name": "v", "rbd": {"monitors": ["m1"], "image": "img"}}]}})


@pytest.mark.parametrize("what", list(MUTATIONS), ids=list(MUTATIONS))
def test_a_filter_plugin_cannot_change_the_callers_objects(what: str) -> None:
    pod = _pod()
    node = make_node("n1", labels={"zone": "a"})
    before_pod, before_node = pod.to_dict(), node.to_dict()
    before_fields = (dict(pod.labels), dict(pod.annotations), dict(pod.spec.node_selector),
                     dict(node.labels), dict(node.status.allocatable))
    s = scheduler({"filter": [Mutator(MUTATIONS[what])]})
    s.load([node], [pod])
    r = {x.pod: x for x in s.run()}["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "Mutator")
    assert "TypeError" in r.message and "read-only" in r.message
    assert pod.to_dict() == before_pod and node.to_dict() == before_node
    assert (dict(pod.labels), dict(pod.annotations), dict(pod.spec.node_selector), dict(node.labels),
            dict(node.status.allocatable)) == before_fields
    assert pod.spec.volumes[0].source["monitors"] == ["m1"]


def test_reading_plugins_see_plain_mappings() -> None:
    """The read side is unchanged: a frozen mapping is a dict and a frozen list is a list to every reader."""
    pod = _pod()
    assert isinstance(pod.labels, dict) and pod.labels == {"app": "web"}
    assert isinstance(pod.spec.volumes[0].source["monitors"], list)
    seen: list[dict[str, str]] = []

    class Reader:
        name = "Reader"

        def filter(self, state: CycleState, p: Any, ni: Any) -> None:
            seen.append({**p.labels, **ni.node.labels})

    s = scheduler({"filter": [Reader()]})
    s.load([make_node("n1", labels={"zone": "a"})], [pod])
    assert {x.pod: x.outcome for x in s.run()} == {"default/a": SCHEDULED}
    assert seen == [{"app": "web", "zone": "a"}]


@pytest.mark.parametrize("value", [FrozenDict({"a": FrozenList([1, FrozenDict({"b": 2})])}),
                                   deep_freeze({"a": [1, {"b": [2]}]})], ids=["built", "deep_freeze"])
def test_frozen_containers_copy_and_pickle(value: Any) -> None:
    for got in (copy.deepcopy(value), pickle.loads(pickle.dumps(value)), copy.copy(value)):
        assert got == value
    assert type(copy.deepcopy(value)) is FrozenDict
    plain = value.copy()
    plain["new"] = 1  # copy() hands out a plain, mutable dict
    assert "new" not in value


def test_objects_built_by_hand_are_frozen_too() -> None:
    """Constructors convert plain dicts (attrs converters), not only from_dict."""
    from scheduling_framework.api.meta import ObjectMeta

    meta = ObjectMeta(name="x", labels={"a": "b"})
    with pytest.raises(TypeError):
        meta.labels["c"] = "d"  # type: ignore[index]
    evolved = make_pod("y", labels={"a": "b"})
    assert type(evolved.labels) is FrozenDict
