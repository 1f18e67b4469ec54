"""A scenario's ``cluster:`` file: read streamed as ``schedule --cluster`` reads it, once per process, kept in the
scenario as a reference (cheap to ship to sweep workers), with the same results as the same manifests inline."""

from __future__ import annotations

import io
import json
import os
import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.cli import main
from scheduling_framework.ingest.cluster import load_cluster
from scheduling_framework.scenario import ScenarioError, load_scenario, run_scenario, scenario_from_dict
from scheduling_framework.scenario import io as sio
from scheduling_framework.scenario import sweep as sw
from scheduling_framework.scenario.model import ClusterFile
from scheduling_framework.scenario.replay import starting_cluster

MANAGED = [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {}}}}]


def _node(i: int, cpu: str = "2") -> dict[str, Any]:
    name = f"ip-10-0-0-{i}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"node-uid-{i}", "managedFields": MANAGED,
                         "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"z{i % 2}"}},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "20"}}}


def _pod(name: str, node: str | None, cpu: str = "500m") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx",
                                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": "db"},
                         "managedFields": MANAGED},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def _manifests() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [_node(i) for i in range(3)]
    items += [_pod(f"db-{i}", f"ip-10-0-0-{i % 3}") for i in range(5)]
    items += [_pod("waiting-0", None, "1"), _pod("waiting-1", None, "3")]  # the second fits nowhere
    items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
                  "data": {"a": "b"}})  # an ignored kind: a warning
    odd = _node(9)
    odd["spec"] = {"unschedulabel": True}  # an unknown field: a warning (an error under strict)
    items.append(odd)
    return items


BODY: dict[str, Any] = {
    "kind": "Scenario", "name": "s", "seed": 2,
    "templates": {"nodes": {"worker": {"metadata": {"labels": {"kubernetes.io/hostname": "worker"}},
                                       "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "20"}}}},
                  "pods": {"web": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "w", "image": "nginx",
                                                            "resources": {"requests": {"cpu": "500m"}}}]}}}},
    "steps": [{"op": "createNodes", "template": "worker", "count": 1},
              {"op": "createPods", "template": "web", "count": 6},
              {"op": "deleteNodes", "names": ["ip-10-0-0-1"]},  # its pods of the starting cluster are recreated
              {"op": "cordonNodes", "names": ["worker-0"]},
              {"op": "wait", "seconds": 20}],
}


def _write_dump(path: Path, items: list[dict[str, Any]] | None = None) -> Path:
    doc = {"apiVersion": "v1", "kind": "List", "items": _manifests() if items is None else items}
    path.write_text(json.dumps(doc, indent=4) if path.suffix == ".json" else yaml.safe_dump(doc))
    return path


def _scenario_file(tmp_path: Path, cluster: Any, name: str = "s.yaml", **extra: Any) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump({**BODY, "cluster": cluster, **extra}))
    return p


def _stable(result: dict[str, Any]) -> dict[str, Any]:
    """A replay's JSON without the wall-clock figures."""
    d = dict(result)
    d.pop("seconds")
    d["steps"] = [{k: v for k, v in s.items() if k not in ("p50Ms", "p99Ms")} for s in d["steps"]]
    d["final"] = {k: v for k, v in d["final"].items() if k not in ("p50Ms", "p99Ms")}
    return d


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    sio.clear_cluster_cache()
    yield
    sio.clear_cluster_cache()


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    seen: list[tuple[str, bool]] = []

    def counting(path: str, **kw: Any) -> Any:
        seen.append((os.fspath(path), kw.get("strict", False)))
        return load_cluster(path, **kw)

    monkeypatch.setattr(sio, "load_cluster", counting)
    return seen


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_replay_of_a_cluster_file_equals_the_inline_manifests(tmp_path: Path, suffix: str) -> None:
    dump = _write_dump(tmp_path / f"c{suffix}")
    from_file = run_scenario(load_scenario(_scenario_file(tmp_path, dump.name, "file.yaml"))).to_dict()
    inline = run_scenario(load_scenario(_scenario_file(tmp_path, _manifests(), "inline.yaml"))).to_dict()
    assert _stable(from_file) == {**_stable(inline), "scenario": from_file["scenario"]}
    # the timeline did something worth comparing: evictions, pods recreated, one pod left pending, warnings
    assert sum(s["evicted"] for s in from_file["steps"]) > 0 and from_file["final"]["pending"] > 0
    assert any('kind "ConfigMap"' in w for w in from_file["warnings"])
    assert any("spec.unschedulabel" in w for w in from_file["warnings"])


def test_cli_replay_json_is_the_same(tmp_path: Path) -> None:
    dump = _write_dump(tmp_path / "c.json")
    outs = []
    for name, cluster in (("s.yaml", dump.name), ("s.yaml", _manifests())):
        _scenario_file(tmp_path, cluster, name)
        out, err = io.StringIO(), io.StringIO()
        assert main(["replay", str(tmp_path / name), "--output", "json"], out, err) == 0, err.getvalue()
        outs.append(_stable(json.loads(out.getvalue())))
    assert outs[0] == outs[1]


def test_the_scenario_keeps_a_reference_not_the_manifests(tmp_path: Path) -> None:
    dump = _write_dump(tmp_path / "c.json")
    sc = load_scenario(_scenario_file(tmp_path, "c.json"))
    assert sc.cluster == ()
    assert sc.cluster_file is not None and sc.cluster_file.path == str(dump.resolve())
    st = dump.stat()
    assert (sc.cluster_file.size, sc.cluster_file.mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert len(pickle.dumps(sc)) < 3000  # the templates and steps, not the cluster's objects
    inline = load_scenario(_scenario_file(tmp_path, _manifests(), "i.yaml"))
    assert inline.cluster_file is None and len(inline.cluster) == len(_manifests())


def test_the_file_is_parsed_once_per_process(tmp_path: Path, calls: list[tuple[str, bool]]) -> None:
    _write_dump(tmp_path / "c.json")
    path = _scenario_file(tmp_path, "c.json")
    sc = load_scenario(path)  # validation
    first = run_scenario(sc)
    run_scenario(sc)
    run_scenario(load_scenario(path))  # the same file, unchanged: the same parse
    starting_cluster(sc)
    assert calls == [(str((tmp_path / "c.json").resolve()), False)]
    # strict: one parse for validation and replay; a lenient replay then uses it (no unknown field: the same)
    _write_dump(tmp_path / "c.json", _manifests()[:-1])
    strict = load_scenario(path, strict=True)
    run_scenario(strict, strict=True)
    run_scenario(strict)
    assert [s for _, s in calls] == [False, True]
    assert first.final.nodes == 4


def test_starting_cluster_hands_out_a_copy(tmp_path: Path) -> None:
    _write_dump(tmp_path / "c.yaml")
    sc = load_scenario(_scenario_file(tmp_path, "c.yaml"))
    a = starting_cluster(sc)
    n, p, o, w = len(a.nodes), len(a.pods), len(a.objects), list(a.warnings)
    a.nodes.clear()
    a.pods.pop()
    a.objects.append(a.objects[0])
    a.warnings.add("changed by a caller")
    b = starting_cluster(sc)
    assert (len(b.nodes), len(b.pods), len(b.objects), list(b.warnings)) == (n, p, o, w)
    assert run_scenario(sc).to_dict()["warnings"] == run_scenario(sc).to_dict()["warnings"]


def test_a_changed_file_is_read_again(tmp_path: Path, calls: list[tuple[str, bool]]) -> None:
    dump = _write_dump(tmp_path / "c.json")
    path = _scenario_file(tmp_path, "c.json")
    old = load_scenario(path)
    assert run_scenario(old).steps[0].nodes == 4
    _write_dump(dump, [_node(i) for i in range(6)])
    os.utime(dump, ns=(dump.stat().st_atime_ns, dump.stat().st_mtime_ns + 10**9))
    new = load_scenario(path)
    assert run_scenario(new).steps[0].nodes == 6
    assert len(calls) == 2
    # A scenario read before the change replays the cluster it read while that is cached, never the new one.
    assert run_scenario(old).steps[0].nodes == 4
    # The same size, a new modification time: read again too.
    st = dump.stat()
    os.utime(dump, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert run_scenario(load_scenario(path)).steps[0].nodes == 6
    assert len(calls) == 3
    # Once the old content is forgotten (another process, or the cache moved on), the change is an error.
    sio.clear_cluster_cache()
    with pytest.raises(ScenarioError, match=r"cluster: cluster file .*c\.json changed after the scenario was read"):
        run_scenario(old)


def test_the_cache_keeps_the_last_files(tmp_path: Path) -> None:
    for i in range(4):
        _write_dump(tmp_path / f"c{i}.yaml", [_node(j) for j in range(i + 1)])
        assert run_scenario(load_scenario(_scenario_file(tmp_path, f"c{i}.yaml"))).steps[0].nodes == i + 1
    assert len(sio._cache) == sio.MAX_CACHED_FILES


def test_an_empty_file_is_an_empty_cluster(tmp_path: Path) -> None:
    for text in ("", "# nothing yet\n", "kind: List\nitems: []\n"):
        (tmp_path / "c.yaml").write_text(text)
        st = (tmp_path / "c.yaml").stat()
        os.utime(tmp_path / "c.yaml", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        r = run_scenario(load_scenario(_scenario_file(tmp_path, "c.yaml")))
        assert (r.steps[0].nodes, r.steps[0].pods) == (0, 0)


ERRORS = [
    ("bad.yaml", "kind: List\nitems:\n- {kind: Node, apiVersion: v1, metadata: {name: a}\n",
     "cluster: invalid YAML at {path}:4:1: did not find expected ',' or '}}'"),
    ("bad.json", '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}]}',
     "cluster: invalid YAML at {path}:1:"),
    ("invalid.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: lots}}\n",
     'cluster: {path}: document 1: Node a: status.allocatable.cpu: invalid quantity "lots"'),
    ("invalid.json", json.dumps({"kind": "List", "items": [_node(0), _node(0)]}),
     'cluster: {path}: document 1 items[1]: Node ip-10-0-0-0: metadata.name: Duplicate value: "ip-10-0-0-0": '
     "same name as the Node in document 1 items[0]"),
    ("list.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n- a list\n",
     "cluster: {path}: document 2: expected an object manifest, got list"),
]


@pytest.mark.parametrize(("name", "text", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_in_the_file_name_it(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    path = _scenario_file(tmp_path, name)
    expected = message.format(path=tmp_path.resolve() / name)
    for strict in (False, True):
        with pytest.raises(ScenarioError) as e:
            load_scenario(path, strict=strict)
        assert str(e.value).startswith(f"{path}: ")
        assert expected in str(e.value), str(e.value)


def test_unreadable_and_strict_errors(tmp_path: Path) -> None:
    path = _scenario_file(tmp_path, "missing.json")
    missing = re.escape(f"cluster: cannot read cluster file {tmp_path.resolve()}/missing.json: No such file")
    with pytest.raises(ScenarioError, match=missing):
        load_scenario(path)
    (tmp_path / "d").mkdir()
    with pytest.raises(ScenarioError, match=r"cluster: cannot read cluster file .*/d: not a regular file"):
        load_scenario(_scenario_file(tmp_path, "d"))
    _write_dump(tmp_path / "c.json")
    with pytest.raises(ScenarioError, match=r'cluster: .*c\.json: document 1 items\[11\]: Node ip-10-0-0-9: unknown '
                                            r'field "spec\.unschedulabel"'):
        load_scenario(_scenario_file(tmp_path, "c.json"), strict=True)
    assert run_scenario(load_scenario(_scenario_file(tmp_path, "c.json"))).final.nodes == 4  # lenient: warned


def _sweep_doc(cluster: Any) -> dict[str, Any]:
    return {"kind": "Sweep", "name": "w", "scenario": {**BODY, "cluster": cluster},
            "matrix": {"steps[1].count": [3, 9]}, "seeds": 2}


def _rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in (*sw.TIMING_FIELDS, "id")} for r in rows]


def test_sweep_over_a_cluster_file_on_the_process_pool(tmp_path: Path) -> None:
    _write_dump(tmp_path / "c.json")
    by_file = sw.sweep_from_dict(_sweep_doc("c.json"), base_dir=str(tmp_path))
    inline = sw.sweep_from_dict(_sweep_doc(_manifests()), base_dir=str(tmp_path))
    assert isinstance(by_file.base["cluster"], ClusterFile)
    assert len(pickle.dumps(by_file)) < 4000  # what each worker process receives
    pooled = sw.run_sweep(by_file, workers=2)
    assert _rows(pooled) == _rows(sw.run_sweep(inline, workers=1))
    assert all(r["error"] is None for r in pooled) and len(pooled) == 4
    assert [r["id"] for r in pooled] == [by_file.case_id(i) for i in range(4)]
    assert sw.first_warnings(by_file) == sw.first_warnings(inline)


def test_sweep_ids_follow_the_files_content(tmp_path: Path) -> None:
    dump = _write_dump(tmp_path / "c.json")
    ids = [sw.sweep_from_dict(_sweep_doc("c.json"), base_dir=str(tmp_path)).case_id(i) for i in range(4)]
    assert ids == [sw.sweep_from_dict(_sweep_doc(str(dump)), base_dir="/").case_id(i) for i in range(4)]
    (tmp_path / "copy.json").write_bytes(dump.read_bytes())  # another path, the same content: the same ids
    assert ids == [sw.sweep_from_dict(_sweep_doc("copy.json"), base_dir=str(tmp_path)).case_id(i) for i in range(4)]
    _write_dump(dump, _manifests()[:-1])
    assert sw.sweep_from_dict(_sweep_doc("c.json"), base_dir=str(tmp_path)).case_id(0) not in ids


def test_sweep_matrix_of_cluster_files(tmp_path: Path, calls: list[tuple[str, bool]]) -> None:
    _write_dump(tmp_path / "a.json")
    _write_dump(tmp_path / "b.yaml", [_node(i, "4") for i in range(2)])
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: "
                                       "{allocatable: {cpu: lots}}\n")
    doc = {**_sweep_doc("a.json"), "matrix": {"cluster": ["a.json", "b.yaml", "bad.yaml"]}}
    rows = sw.run_sweep(sw.sweep_from_dict(doc, base_dir=str(tmp_path)), workers=1)
    assert [r["nodes"] for r in rows[:4]] == [4, 4, 2, 2]  # after the steps: one node added, one deleted
    assert all("bad.yaml: document 1: Node a: status.allocatable.cpu" in r["error"] for r in rows[4:])
    assert sorted(os.path.basename(p) for p, _ in calls) == ["a.json", "b.yaml", "bad.yaml"]  # once each


def test_a_matrix_path_into_the_cluster_inlines_it(tmp_path: Path) -> None:
    _write_dump(tmp_path / "c.yaml")
    doc = {**_sweep_doc("c.yaml"), "matrix": {"cluster[0].status.allocatable.cpu": ["2", "8"]}, "seeds": [1]}
    rows = sw.run_sweep(sw.sweep_from_dict(doc, base_dir=str(tmp_path)), workers=1)
    assert [r["error"] for r in rows] == [None, None]
    assert rows[0]["cpuUtilization"] > rows[1]["cpuUtilization"]


def test_the_bytes_travel_with_the_sweep_to_other_machines(tmp_path: Path) -> None:
    dump = _write_dump(tmp_path / "c.json")
    sweep = sw.sweep_from_dict(_sweep_doc("c.json"), base_dir=str(tmp_path))
    expected = _rows([sw.run_index(sweep, i) for i in range(len(sweep))])
    shipped = pickle.dumps(sw.with_cluster_data(sweep))  # as Ray puts it in its object store
    assert len(shipped) < dump.stat().st_size  # compressed
    dump.unlink()  # a worker on a machine without the file
    sio.clear_cluster_cache()
    remote = pickle.loads(shipped)
    assert _rows([sw.run_index(remote, i) for i in range(len(remote))]) == expected
    assert [remote.case_id(i) for i in range(4)] == [sweep.case_id(i) for i in range(4)]


def test_inline_cluster_lists_are_unchanged() -> None:
    sc = scenario_from_dict({**BODY, "cluster": _manifests()})
    assert sc.cluster_file is None and sc.cluster[0]["metadata"]["name"] == "ip-10-0-0-0"
    with pytest.raises(ScenarioError, match=r"cluster\[1\]: Invalid value: expected an object manifest"):
        scenario_from_dict({**BODY, "cluster": [_node(0), 42]})
