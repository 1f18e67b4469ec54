"""Hostile and mistaken scenario inputs (issue #36 items 7-10).

7. a ``config:`` that is not a configuration (an ``/etc/shadow``-like file) is named, not echoed;
8. two objects of one kind, namespace and name are refused naming both, whatever the kind;
9. a step naming nodes or pods that do not exist names the step: a warning, an error under ``--strict``;
10. ``sweep --resume`` refuses a line that is not a JSON object, however deeply it nests.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.cli import main
from scheduling_framework.config import load_config
from scheduling_framework.errors import ConfigError, ManifestValidationError, SnapshotError
from scheduling_framework.ingest.cluster import Cluster, cluster_from_documents, cluster_from_text, load_cluster
from scheduling_framework.scenario import ScenarioError, run_scenario, scenario_from_dict
from scheduling_framework.scenario import sweep as sw
from scheduling_framework.scenario.rowfiles import RowFileError, read_rows
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator
from scheduling_framework.testing import FakeCluster, framework_for, make_pod

ROOT = Path(__file__).resolve().parents[2]
NODE_SIZES = ROOT / "examples" / "scenarios" / "node-sizes.yaml"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _write(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


# --- 7. a config file that is not a configuration -----------------------------------------------------------

SHADOW = "".join(f"user{i}:$6$saltsalt$QWERTYUIOPasdfghjklzxcvbnm0123456789abcdefghijklmnop{i}:19000:0:99999:7:::\n"
                 for i in range(20))
PASSWD = "".join(f"user{i}:x:{1000 + i}:{1000 + i}:User {i}:/home/user{i}:/bin/bash\n" for i in range(20))
NOT_CONFIGS = [
    ("shadow", SHADOW, "it has no apiVersion and no kind"),
    ("passwd", PASSWD, "it holds a string, not a mapping"),
    ("a-pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n",
     'kind "Pod"'),
    ("a-list", "- one\n- two\n", "it holds a list, not a mapping"),
]


def _no_echo(err: str, text: str) -> None:
    """At most a short excerpt of the file's first line (40 characters), none of the others."""
    lines = text.splitlines()
    assert not any(line[:20] in err for line in lines[1:])
    assert lines[0][:41] not in err or len(lines[0]) <= 40
    assert len(err) < 400


@pytest.mark.parametrize(("text", "problem"), [c[1:] for c in NOT_CONFIGS], ids=[c[0] for c in NOT_CONFIGS])
def test_replay_names_a_config_file_that_is_not_one_without_echoing_it(tmp_path: Path, text: str,
                                                                        problem: str) -> None:
    (tmp_path / "cfg").write_text(text)
    scenario = _write(tmp_path / "s.yaml", {"kind": "Scenario", "config": "cfg", "steps": []})
    code, out, err = _run("replay", str(scenario))
    assert (code, out) == (2, "")
    assert f"config: {tmp_path / 'cfg'}: not a KubeSchedulerConfiguration" in err and problem in err
    _no_echo(err, text)


@pytest.mark.parametrize(("text", "problem"), [c[1:] for c in NOT_CONFIGS], ids=[c[0] for c in NOT_CONFIGS])
def test_schedule_names_a_config_file_that_is_not_one_without_echoing_it(tmp_path: Path, text: str,
                                                                          problem: str) -> None:
    (tmp_path / "cfg").write_text(text)
    code, out, err = _run("schedule", "--cluster", str(ROOT / "examples" / "tiny-cluster.yaml"),
                          "--config", str(tmp_path / "cfg"))
    assert (code, out) == (2, "")
    assert f"{tmp_path / 'cfg'}: not a KubeSchedulerConfiguration" in err and problem in err
    _no_echo(err, text)


def test_sweep_names_a_config_file_that_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "shadow").write_text(SHADOW)
    base = {"kind": "Scenario", "name": "b", "config": "shadow", "steps": []}
    path = _write(tmp_path / "sw.yaml", {"kind": "Sweep", "name": "w", "scenario": base, "seeds": 1})
    code, out, err = _run("sweep", str(path))
    assert out == ""
    assert code == 2 and "not a KubeSchedulerConfiguration" in err and str(tmp_path / "shadow") in err
    _no_echo(err, SHADOW)


def test_the_excerpt_is_short(tmp_path: Path) -> None:
    (tmp_path / "long").write_text("x" * 10_000 + "\n")
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path / "long")
    assert "x" * 41 not in str(e.value) and "x" * 20 + "..." in str(e.value)


@pytest.mark.parametrize(("text", "expected"), [
    ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofilez: []\n",
     'strict decoding error: unknown field "profilez"'),
    ("kind: KubeSchedulerConfiguration\nprofiles: []\n", 'apiVersion: Required value'),
    ("apiVersion: kubescheduler.config.k8s.io/v1\nprofiles: []\n", 'kind: Required value'),
    ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
     'apiVersion: Unsupported value'),
], ids=["typo", "no-apiversion", "no-kind", "old-apiversion"])
def test_a_configuration_with_mistakes_still_gets_each_named(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path / "c.yaml")
    assert expected in str(e.value) and "not a KubeSchedulerConfiguration" not in str(e.value)


# --- 8. duplicate objects -----------------------------------------------------------------------------------

OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "workers",
     "namespace": "default"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
    {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "w", "namespace": "default"},
     "spec": {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 2}}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
     "spec": {"driver": "d.example.com", "nodeName": "n1", "pool": {"name": "p", "generation": 1,
                                                                   "resourceSliceCount": 1},
              "devices": [{"name": "g0"}]}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
     "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}, "provisioner": "x"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"}, "spec": {"drivers": []}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"}},
]


def _ref(o: dict[str, Any]) -> str:
    ns = o["metadata"].get("namespace")
    return f"{o['kind']} {ns}/{o['metadata']['name']}" if ns else f"{o['kind']} {o['metadata']['name']}"


@pytest.mark.parametrize("obj", OBJECTS, ids=[o["kind"] for o in OBJECTS])
def test_duplicate_objects_of_any_kind_are_refused_naming_both(obj: dict[str, Any]) -> None:
    other = copy.deepcopy(obj)
    other["metadata"]["labels"] = {"copy": "2"}  # not the same content: one would silently replace the other
    with pytest.raises(ManifestValidationError) as e:
        cluster_from_documents([obj, {"kind": "Node", "metadata": {"name": "x"}}, other])
    same = "namespace/name" if obj["metadata"].get("namespace") else "name"
    assert e.value.errors == [f'document 3: {_ref(obj)}: metadata.name: Duplicate value: "{obj["metadata"]["name"]}": '
                              f'same {same} as the {obj["kind"]} in document 1']


def test_the_gang_of_the_issue_is_refused_from_the_cli(tmp_path: Path) -> None:
    pg = OBJECTS[0]
    four = copy.deepcopy(pg)
    four["spec"]["schedulingPolicy"]["gang"]["minCount"] = 4
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "List", "items": [pg, four]}]))
    code, out, err = _run("schedule", "--cluster", str(path))
    assert (code, out) == (2, "")
    assert ('document 1 items[1]: PodGroup default/workers: metadata.name: Duplicate value: "workers": same '
            "namespace/name as the PodGroup in document 1 items[0]") in err


def test_a_streamed_json_dump_refuses_them_too(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [OBJECTS[2], OBJECTS[3], OBJECTS[2]]}))
    with pytest.raises(ManifestValidationError) as e:
        load_cluster(path)
    assert e.value.errors == ['document 1 items[2]: DeviceClass gpu: metadata.name: Duplicate value: "gpu": same '
                              "name as the DeviceClass in document 1 items[0]"]


def _with(o: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(o)
    out["metadata"] = {**out["metadata"], **meta}
    return out


NOT_DUPLICATES = [
    ("two-namespaces", [OBJECTS[0], _with(OBJECTS[0], namespace="team")]),
    ("two-kinds", [OBJECTS[5], _with(OBJECTS[3], name="data")]),
    ("cluster-scoped-and-namespaced", [OBJECTS[6], _with(OBJECTS[5], name="pv")]),
    ("two-api-groups", [OBJECTS[0], {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                     "metadata": {"name": "workers", "namespace": "default"},
                                     "spec": {"minMember": 2}}]),
    ("two-event-apis", [{"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"}},
                        {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                         "metadata": {"name": "e", "namespace": "default"}}]),
]


@pytest.mark.parametrize("docs", [c[1] for c in NOT_DUPLICATES], ids=[c[0] for c in NOT_DUPLICATES])
def test_objects_that_only_share_a_name_are_not_duplicates(docs: list[dict[str, Any]]) -> None:
    assert len(cluster_from_documents(docs).objects) == 2


def test_the_default_namespace_is_the_same_namespace() -> None:
    bare = copy.deepcopy(OBJECTS[5])
    del bare["metadata"]["namespace"]
    with pytest.raises(ManifestValidationError, match="same namespace/name as the PersistentVolumeClaim in document 1"):
        cluster_from_documents([bare, OBJECTS[5]])


def test_a_new_api_version_of_the_same_object_is_a_duplicate() -> None:
    old = {**OBJECTS[2], "apiVersion": "resource.k8s.io/v1beta2"}
    with pytest.raises(ManifestValidationError, match="same name as the DeviceClass in document 1"):
        cluster_from_text(yaml.safe_dump_all([old, OBJECTS[2]]))


def test_a_scenarios_inline_cluster_refuses_them() -> None:
    doc = {"kind": "Scenario", "cluster": [OBJECTS[9], OBJECTS[9]], "steps": []}
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(doc)
    assert e.value.problems == ['cluster: document 2: PriorityClass high: metadata.name: Duplicate value: "high": '
                                "same name as the PriorityClass in document 1"]


# The Python API's lists: refused as the file's documents are, naming both by position, before anything is applied

PG4 = copy.deepcopy(OBJECTS[0])
PG4["spec"]["schedulingPolicy"]["gang"]["minCount"] = 4
GANG_DUPLICATE = ('objects[2]: PodGroup default/workers: metadata.name: Duplicate value: "workers": same '
                  "namespace/name as the PodGroup in objects[0]")
NODE = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
POD = {"kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "x"}]}}
BOUND = {**POD, "spec": {**POD["spec"], "nodeName": "n1"}}


def _load(**lists: Any) -> None:
    Scheduler().load(**lists)


API_ENTRIES = [
    ("Simulator-objects", lambda: Simulator(objects=[OBJECTS[0], OBJECTS[2], PG4]), [GANG_DUPLICATE]),
    ("Simulator.from_cluster", lambda: Simulator.from_cluster(Cluster(objects=[KubeObject.from_dict(o) for o in
                                                                              (OBJECTS[0], OBJECTS[2], PG4)])),
     [GANG_DUPLICATE]),
    ("Scheduler.load-objects", lambda: _load(objects=[OBJECTS[0], OBJECTS[2], PG4]), [GANG_DUPLICATE]),
    ("Scheduler.load-nodes", lambda: _load(nodes=[NODE, NODE]),
     ['nodes[1]: Node n1: metadata.name: Duplicate value: "n1": same name as the Node in nodes[0]']),
    ("Scheduler.load-pods", lambda: _load(nodes=[NODE], pods=[BOUND, POD]),
     ['pods[1]: Pod default/web: metadata.name: Duplicate value: "web": same namespace/name as the Pod in pods[0]']),
    ("Scheduler.load-pod-uids", lambda: _load(pods=[_with(POD, uid="u"), _with(POD, name="db", uid="u")]),
     ['pods[1]: Pod default/db: metadata.uid: Duplicate value: "u": same uid as Pod default/web (pods[0])']),
    ("framework_for", lambda: framework_for(["NodeResourcesFit"], nodes=[NODE], pods=[POD, BOUND]),
     ['pods[1]: Pod default/web: metadata.name: Duplicate value: "web": same namespace/name as the Pod in pods[0]']),
    ("FakeCluster", lambda: FakeCluster(objects=[OBJECTS[2], OBJECTS[2]]).framework(["NodeResourcesFit"]),
     ['objects[1]: DeviceClass gpu: metadata.name: Duplicate value: "gpu": same name as the DeviceClass in '
      "objects[0]"]),
]


@pytest.mark.parametrize(("call", "errors"), [c[1:] for c in API_ENTRIES], ids=[c[0] for c in API_ENTRIES])
def test_the_python_api_refuses_them_naming_both_positions(call: Any, errors: list[str]) -> None:
    with pytest.raises(ManifestValidationError) as e:
        call()
    assert e.value.errors == errors


def test_scheduler_load_refusing_them_applies_nothing() -> None:
    sched = Scheduler()
    with pytest.raises(ManifestValidationError):
        sched.load([NODE], [BOUND], [OBJECTS[0], PG4])
    assert (sched.cache.nodes(), sched.objects.kinds(), len(sched.queue)) == ([], [], 0)
    sched.load([NODE], [BOUND], [OBJECTS[0]])  # the same lists without the duplicate load
    assert len(sched.cache.nodes()) == 1 and sched.objects.get("PodGroup", "default", "workers") is not None


def test_schedule_pods_refuses_one_namespace_name_under_two_uids() -> None:
    sim = Simulator()
    sim.add_node(NODE)
    with pytest.raises(SnapshotError, match=r"pod default/web appears twice in the pods to schedule \(uid b"):
        sim.schedule_pods([_with(POD, uid="a"), _with(POD, uid="b")])
    assert sim.cluster.pods() == []


# Two API groups: two objects (the file path keeps both; so must the store every reader asks)

SIG_PG = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
          "metadata": {"name": "workers", "namespace": "default"}, "spec": {"minMember": 2}}


@pytest.mark.parametrize("order", ["kubernetes-first", "scheduler-plugins-first"])
def test_a_pod_group_of_each_api_group_both_stay_and_the_gang_reads_its_own(order: str) -> None:
    objs = [PG4, SIG_PG] if order == "kubernetes-first" else [SIG_PG, PG4]
    sim = Simulator.from_cluster(cluster_from_documents(objs), kubernetes_version="1.37",
                                 feature_gates="GenericWorkload=true", seed=1)
    assert sorted(o.raw["apiVersion"] for o in sim.objects.list("PodGroup")) == [
        "scheduling.k8s.io/v1alpha2", "scheduling.x-k8s.io/v1alpha1"]
    for i in range(10):
        sim.add_node(_with(NODE, name=f"node-{i}"))
    worker = make_pod().name("worker").uid("worker").req(cpu="3").scheduling_group("workers").obj()
    result = sim.capacity(worker)  # Kubernetes' gang: minCount 4 (scheduler-plugins' minMember 2 is not its)
    assert (result.count, result.pods_per_copy) == (2, 4)


# --- 9. steps naming nodes or pods that do not exist --------------------------------------------------------

NODE_T = {"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD_T = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}}


def _timeline(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Scenario", "name": "t", "templates": {"nodes": {"worker": NODE_T}, "pods": {"web": POD_T}},
            "steps": [{"op": "createNodes", "template": "worker", "count": 2},
                      {"op": "createPods", "template": "web", "count": 2}, *steps]}


MISSING = [
    ("deleteNodes", {"op": "deleteNodes", "names": ["does-not-exist"]},
     'steps[2]: deleteNodes names node(s) that do not exist (nothing done for them): "does-not-exist"'),
    ("cordonNodes", {"op": "cordonNodes", "names": ["worker-0", "ghost"]},
     'steps[2]: cordonNodes names node(s) that do not exist (nothing done for them): "ghost"'),
    ("uncordonNodes", {"op": "uncordonNodes", "names": ["ghost"]},
     'steps[2]: uncordonNodes names node(s) that do not exist (nothing done for them): "ghost"'),
    ("deletePods", {"op": "deletePods", "names": ["default/ghost"]},
     'steps[2]: deletePods names pod(s) that do not exist (nothing done for them): "default/ghost"'),
    ("deletePods-no-namespace", {"op": "deletePods", "names": ["web-0"]},
     'steps[2]: deletePods names pod(s) that do not exist (nothing done for them): "web-0" (pods are named '
     "namespace/name)"),
]


@pytest.mark.parametrize(("step", "warning"), [c[1:] for c in MISSING], ids=[c[0] for c in MISSING])
def test_a_step_naming_what_does_not_exist_warns_naming_the_step(step: dict[str, Any], warning: str) -> None:
    r = run_scenario(scenario_from_dict(_timeline(step)))
    assert warning in r.warnings
    assert r.final.scheduled == 2 and r.final.nodes == 2  # the names that exist were acted on; nothing else


@pytest.mark.parametrize(("step", "warning"), [c[1:] for c in MISSING], ids=[c[0] for c in MISSING])
def test_under_strict_it_is_an_error_naming_the_step(step: dict[str, Any], warning: str) -> None:
    sc = scenario_from_dict(_timeline(step), strict=True)
    with pytest.raises(ScenarioError) as e:
        run_scenario(sc, strict=True)
    assert e.value.problems[0].startswith(f"steps[2].names: Not found: {warning.split(': ', 1)[1].split(': ', 1)[1]}")


def test_a_node_deleted_by_an_earlier_step_is_named_with_that_step() -> None:
    r = run_scenario(scenario_from_dict(_timeline({"op": "deleteNodes", "names": ["worker-0"]},
                                                  {"op": "deleteNodes", "names": ["worker-0"]})))
    assert ('steps[3]: deleteNodes names node(s) that do not exist (nothing done for them): "worker-0" '
            "(deleted by steps[2])") in r.warnings
    assert r.final.nodes == 1


def test_a_name_listed_twice_in_one_step_is_refused_when_read() -> None:
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(_timeline({"op": "deleteNodes", "names": ["worker-0", "worker-0"]}))
    assert e.value.problems == ['steps[2].names[1]: Duplicate value: "worker-0"']


def test_cli_replay_warns_and_strict_fails(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.yaml", _timeline({"op": "deleteNodes", "names": ["does-not-exist"]},
                                                 {"op": "cordonNodes", "names": ["ghost"]}))
    code, out, err = _run("replay", str(path))
    assert code == 0 and "deleteNodes" in out
    assert 'warning: steps[2]: deleteNodes names node(s) that do not exist (nothing done for them): ' \
           '"does-not-exist"' in err
    assert 'warning: steps[3]: cordonNodes names node(s) that do not exist (nothing done for them): "ghost"' in err
    code, out, err = _run("replay", str(path), "--strict")
    assert (code, out) == (2, "")
    assert 'steps[2].names: Not found: "does-not-exist"' in err


def test_sweep_strict_makes_it_the_rows_error(tmp_path: Path) -> None:
    base = _timeline({"op": "deleteNodes", "names": ["worker-1"]})
    path = _write(tmp_path / "sw.yaml", {"kind": "Sweep", "name": "w", "scenario": base,
                                         "matrix": {"steps[2].names[0]": ["worker-1", "worker-9"]}})
    lenient = sw.run_sweep(sw.load_sweep(path), workers=1)
    assert [r["error"] for r in lenient] == [None, None]
    strict = sw.run_sweep(sw.load_sweep(path, strict=True), workers=1)
    assert strict[0]["error"] is None
    assert 'steps[2].names: Not found: "worker-9"' in strict[1]["error"]


GHOST_9 = 'steps[2]: deleteNodes names node(s) that do not exist (nothing done for them): "worker-9"'


def _ghost_sweep(tmp_path: Path, names: list[str], seeds: int = 2) -> Path:
    return _write(tmp_path / "sw.yaml", {"kind": "Sweep", "name": "w",
                                         "scenario": _timeline({"op": "deleteNodes", "names": ["worker-1"]}),
                                         "matrix": {"steps[2].names[0]": names}, "seeds": seeds})


def test_sweep_rows_carry_the_step_warnings(tmp_path: Path) -> None:
    rows = sw.run_sweep(sw.load_sweep(_ghost_sweep(tmp_path, ["worker-1", "worker-9"])), workers=1)
    assert [r.get("warnings") for r in rows] == [None, None, [GHOST_9], [GHOST_9]]  # absent when there are none
    assert [r["nodes"] for r in rows] == [1, 1, 2, 2]
    assert sw.summary(rows)["withWarnings"] == 2


def test_cli_sweep_prints_each_warning_once_naming_its_first_scenario(tmp_path: Path) -> None:
    jsonl, csv = tmp_path / "rows.jsonl", tmp_path / "rows.csv"
    code, out, err = _run("sweep", str(_ghost_sweep(tmp_path, ["worker-1", "worker-9"])), "--workers", "1",
                          "--jsonl", str(jsonl), "--csv", str(csv))
    assert code == 0
    assert err.count(GHOST_9) == 1 and f"warning: scenario 2: {GHOST_9}\n" in err
    assert out.startswith("sweep w: 4 scenarios, 0 failed, 4 with every pod scheduled, 2 with warnings (local "
                          "backend)\n")
    assert [r.get("warnings") for r in read_rows(str(jsonl))] == [None, None, [GHOST_9], [GHOST_9]]
    assert "warnings" not in csv.read_text(encoding="utf-8").splitlines()[0]  # the CSV columns stay as they were


def test_cli_sweep_prints_at_most_twenty_distinct_warnings(tmp_path: Path) -> None:
    path = _ghost_sweep(tmp_path, [f"ghost-{i}" for i in range(22)], seeds=1)
    code, out, err = _run("sweep", str(path), "--workers", "1", "--output", "json")
    assert code == 0 and err.count("names node(s) that do not exist") == 20
    assert 'warning: more warnings not shown: each row\'s "warnings" holds those of its scenario' in err
    doc = json.loads(out)
    assert doc["summary"]["withWarnings"] == 22 and all(len(r["warnings"]) == 1 for r in doc["rows"])


# --- 10. resume refuses lines that are not JSON objects -----------------------------------------------------

DEEP = "[" * 100_000
NOT_OBJECTS = [
    ("deep-array", DEEP),
    ("deep-array-closed", "[" * 5_000 + "]" * 5_000),
    ("deep-inside-a-row", '{"id": "x", "params": {"a": ' + "[" * 100_000),
    ("deep-but-parsable", '{"id": "x", "params": {"a": ' + "[" * 500 + "]" * 500 + "}}"),
    ("an-array", "[1, 2]"),
    ("a-string", '"row"'),
]


@pytest.mark.parametrize("line", [c[1] for c in NOT_OBJECTS], ids=[c[0] for c in NOT_OBJECTS])
def test_resume_refuses_a_line_that_is_not_a_json_object(tmp_path: Path, line: str) -> None:
    path = tmp_path / "rows.jsonl"
    good = json.dumps({"id": "0123", "index": 0, "params": {}, "seed": 1, "error": None})
    text = f"{good}\n{line}\n"
    path.write_text(text)
    with pytest.raises(RowFileError) as e:
        sw.run_sweep(sw.load_sweep(NODE_SIZES), workers=1, jsonl=str(path), resume=True)
    assert str(e.value).startswith(f"{path}: cannot resume: line 2 is not a JSON object")
    assert path.read_text() == text  # untouched
    with pytest.raises(RowFileError, match="line 2 is not a JSON object"):
        read_rows(str(path))


def test_cli_sweep_resume_on_a_deep_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(DEEP + "\n")
    code, out, err = _run("sweep", str(NODE_SIZES), "--jsonl", str(path), "--resume", "--workers", "1")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {path}: cannot resume: line 1 is not a JSON object")
    assert "RecursionError" not in err and len(err) < 300
    code, out, err = _run("sweep", str(NODE_SIZES), "--jsonl", str(path), "--resume", "--dry-run")
    assert code == 2 and "line 1 is not a JSON object" in err


def test_resume_still_reads_rows_whose_params_nest(tmp_path: Path) -> None:
    # a matrix value may be a whole manifest: rows nest as deep as the YAML the sweep read allows
    path = tmp_path / "rows.jsonl"
    nested: Any = "x"
    for _ in range(60):  # 120 levels: about what the sweep file's YAML (at most 128) can hold
        nested = {"k": [nested]}
    path.write_text(json.dumps({"id": "a", "index": 0, "params": {"p": nested}, "seed": 1}) + "\n")
    assert [r["id"] for r in read_rows(str(path))] == ["a"]

