"""Issue 14: property tests for the input parsers (cluster files, manifests, configurations).

Properties:

- a random mutation of a valid cluster (a field replaced by junk of another type, a key dropped, a value made
  huge, negative or deeply nested) never crashes: loading either succeeds or raises a SchedulingFrameworkError
  with a one-line-able message of bounded length; when it loads, a scheduling run completes;
- random byte-level damage to a valid file is handled the same way (only SchedulingFrameworkError);
- a random KubeSchedulerConfiguration mutation raises only ConfigError;
- alias bombs and deep nesting of random shapes are refused fast and in little memory.

Examples: ``SF_FUZZ_EXAMPLES`` (default 25 per property in the normal run); the long run is described in
docs/testing-plugins.md ("Long fuzz runs").
"""

from __future__ import annotations

import copy
import json
import os
import time
import tracemalloc
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_framework.config import load_config
from scheduling_framework.errors import ConfigError, InputError, SchedulingFrameworkError
from scheduling_framework.ingest.cluster import cluster_from_documents, cluster_from_text
from scheduling_framework.ingest.untrusted import MAX_NESTING_DEPTH
from scheduling_framework.scheduler import Scheduler

EXAMPLES = int(os.environ.get("SF_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "uid": "n1-uid", "labels": {"zone": "a", "kubernetes.io/hostname": "n1"}},
    "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}], "unschedulable": False},
    "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "2"},
               "allocatable": {"cpu": "3800m", "memory": "7Gi", "pods": "110", "example.com/gpu": "2"},
               "images": [{"names": ["nginx:1"], "sizeBytes": 100000000}],
               "conditions": [{"type": "Ready", "status": "True"}]},
}
RUNNING: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "db-0", "namespace": "shop", "uid": "db-0-uid", "labels": {"app": "db"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "s1",
                                      "controller": True}]},
    "spec": {"nodeName": "n1", "priority": 100,
             "containers": [{"name": "db", "image": "postgres", "resources": {"requests": {"cpu": "1"}},
                             "ports": [{"containerPort": 5432, "hostPort": 5432, "protocol": "TCP"}]}],
             "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]},
    "status": {"phase": "Running"},
}
PENDING: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "web-1-uid", "labels": {"app": "web"}},
    "spec": {
        "priority": 10, "preemptionPolicy": "PreemptLowerPriority", "hostNetwork": False,
        "nodeSelector": {"zone": "a"},
        "containers": [{"name": "web", "image": "nginx:1",
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                      "limits": {"cpu": "1", "memory": "2Gi", "example.com/gpu": "1"}},
                        "ports": [{"containerPort": 8080}]}],
        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "2"}}}],
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                   "labelSelector": {"matchLabels": {"app": "web"}}}}]},
        },
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchExpressions": [
                                           {"key": "app", "operator": "In", "values": ["web"]}]}}],
        "schedulingGates": [],
        "volumes": [{"name": "tmp", "emptyDir": {}}],
    },
}
NAMESPACE: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop",
                                                                                "labels": {"team": "a"}}}
VALID = [NODE, RUNNING, PENDING, NAMESPACE]

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["", "-1", "1.5.3", "NaN", "1e400", "9" * 60, "true", "Exists", "DoNotSchedule", "x" * 5000,
                     "hugepages-2Mi", "example.com/gpu_", "\u0000", "\ufeff"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


PATHS = [(d, p) for d in range(len(VALID)) for p in _paths(VALID[d])]


def _apply(docs: list[Any], doc: int, path: tuple[Any, ...], action: str, junk: Any) -> None:
    parent: Any = docs[doc]
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if action == "drop" and isinstance(parent, dict):
        del parent[last]
    elif action == "nest":
        value: Any = parent[last]
        for _ in range(20):
            value = [value]
        parent[last] = value
    else:
        parent[last] = junk


MUTATION = st.tuples(st.sampled_from(PATHS), st.sampled_from(["replace", "replace", "drop", "nest"]), JUNK)


def _check_error(e: SchedulingFrameworkError) -> None:
    text = str(e)
    assert text and len(text) < 20_000, len(text)


@FUZZ
@given(st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_manifests_never_crash(mutations: list[Any]) -> None:
    docs = copy.deepcopy(VALID)
    for (doc, path), action, junk in mutations:
        try:
            _apply(docs, doc, path, action, junk)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced the parent
    try:
        cluster = cluster_from_documents(docs)
    except SchedulingFrameworkError as e:
        _check_error(e)
        return
    sched = Scheduler(load_config(None), seed=1)
    sched.load(cluster.nodes, cluster.pods, cluster.objects)
    sched.run()
    for pod in cluster.pending_pods:
        assert pod.key in sched.results


BASE_TEXT = yaml.safe_dump_all(VALID)


def _edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (position, characters cut, insertion) applied in turn."""
    for pos, cut, insert in edits:
        pos = min(pos, len(text))
        text = text[:pos] + insert + text[pos + cut:]
    return text


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(BASE_TEXT)),
                          st.integers(min_value=0, max_value=8),
                          st.sampled_from(["", "[", "{", "&a ", "*a", "!!binary ", "\t", ": ", "- ", "'", '"', "\\",
                                           "\ufeff", "\x00", "\x85", "---\n", "...\n", "%YAML 1.1\n", "?", "|",
                                           "~", "0x", "1e999", "<<: *a\n", "\u2028"])),
                min_size=1, max_size=6))
def test_damaged_yaml_text_never_crashes(edits: list[tuple[int, int, str]]) -> None:
    try:
        cluster_from_text(_edited(BASE_TEXT, edits), "fuzz.yaml")
    except SchedulingFrameworkError as e:
        _check_error(e)


BASE_JSON = json.dumps({"apiVersion": "v1", "kind": "List", "items": VALID}, indent=4)


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(BASE_JSON)),
                          st.integers(min_value=0, max_value=8),
                          st.sampled_from(["", "[", "{", "]", "}", ",", ":", '"', "\\", "\\u12", "\\ud800", "NaN",
                                           "Infinity", "1e999", "-0", "\x00", "\ufeff", "\u2028", "null", "true",
                                           '"kind": "List", "items": [', "[" * 200, "{\"a\": " * 150, "é"])),
                min_size=1, max_size=6))
def test_damaged_json_dump_never_crashes(edits: list[tuple[int, int, str]]) -> None:
    """The streamed JSON reader (and its fall-back to YAML) on damaged kubectl JSON: a loaded cluster or a
    SchedulingFrameworkError with a one-line message, never anything else."""
    try:
        cluster_from_text(_edited(BASE_JSON, edits), "fuzz.json")
    except SchedulingFrameworkError as e:
        _check_error(e)


CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "parallelism": 16, "percentageOfNodesToScore": 50,
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}],
                                        "disabled": [{"name": "ImageLocality"}]}},
                  "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                      "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}},
                                   {"name": "PodTopologySpread", "args": {"defaultingType": "List",
                                                                          "defaultConstraints": []}}]}],
}
CONFIG_PATHS = _paths(CONFIG)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(CONFIG_PATHS), st.sampled_from(["replace", "drop", "nest"]), JUNK),
                min_size=1, max_size=4))
def test_mutated_configs_raise_only_config_errors(mutations: list[Any]) -> None:
    doc = [copy.deepcopy(CONFIG)]
    for path, action, junk in mutations:
        try:
            _apply(doc, 0, path, action, junk)
        except (KeyError, IndexError, TypeError):
            continue
    try:
        load_config(doc[0])
    except ConfigError as e:
        _check_error(e)


def _bomb(levels: int, fanout: int, leaf: str, flow: bool) -> str:
    lines = [f"a0: &a0 [{leaf}]"] if flow else ["a0: &a0", f"- {leaf}"]
    for i in range(1, levels + 1):
        refs = [f"*a{i - 1}"] * fanout
        if flow:
            lines.append(f"a{i}: &a{i} [" + ", ".join(refs) + "]")
        else:
            lines.append(f"a{i}: &a{i}")
            lines += [f"- {r}" for r in refs]
    return "\n".join(lines) + "\n"


def _bounded(fn: Any) -> tuple[float, int]:
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        fn()
    finally:
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return seconds, peak


@FUZZ
@given(levels=st.integers(min_value=6, max_value=12), fanout=st.integers(min_value=7, max_value=12),
       leaf=st.sampled_from(["1", "x", "-1", "1.5.3", "{a: b}"]), flow=st.booleans(),
       where=st.sampled_from(["cpu", "labels", "containers", "config"]))
def test_alias_bombs_are_refused_fast(levels: int, fanout: int, leaf: str, flow: bool, where: str) -> None:
    head = _bomb(levels, fanout, leaf, flow)
    last = f"*a{levels}"
    if where == "config":
        text = head + ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                       f"parallelism: {last}\n")

        def load() -> None:
            with pytest.raises(InputError, match="aliases expand"):
                from scheduling_framework.ingest.untrusted import load_yaml_documents

                load_yaml_documents(text, "k.yaml")
    else:
        body = {"cpu": f"kind: Node\nmetadata: {{name: n}}\nstatus: {{capacity: {{cpu: {last}}}}}\n",
                "labels": f"kind: Node\nmetadata: {{name: n, labels: {last}}}\n",
                "containers": f"kind: Pod\nmetadata: {{name: p}}\nspec: {{containers: {last}}}\n"}[where]
        text = head + body

        def load() -> None:
            with pytest.raises(InputError, match="aliases expand"):
                cluster_from_text(text, "bomb.yaml")

    seconds, peak = _bounded(load)
    assert seconds < 5 and peak < 64 * 1024 * 1024, (seconds, peak)


@FUZZ
@given(depth=st.integers(min_value=MAX_NESTING_DEPTH + 1, max_value=60_000),
       opener=st.sampled_from(["[", "{a: ", "- ", "block-map"]))
def test_deep_nesting_is_refused_fast(depth: int, opener: str) -> None:
    if opener == "block-map":
        depth = min(depth, 3000)  # indentation makes the text quadratic
        text = "".join(" " * i + f"k{i}:\n" for i in range(depth))
    elif opener == "[":
        text = "[" * depth + "]" * depth
    elif opener == "{a: ":
        text = "{a: " * depth + "1" + "}" * depth
    else:
        text = "- " * depth + "x\n"

    def load() -> None:
        with pytest.raises(InputError, match="nesting deeper than"):
            cluster_from_text(text, "deep.yaml")

    seconds, peak = _bounded(load)
    assert seconds < 10 and peak < 128 * 1024 * 1024, (seconds, peak)
