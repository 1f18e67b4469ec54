"""``schedule --output yaml`` (the resulting cluster, which ``--cluster`` reads again) and
``--fail-on-unschedulable`` (exit 3), through the CLI as a user runs it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.cli import EXIT_UNSCHEDULABLE, main
from tests.fixture_runner import ROOT


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def node(name: str, cpu: str = "2") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"cpu": cpu, "memory": "4Gi", "pods": "10"}}}


def pod(name: str, cpu: str = "1", node: str | None = None, priority: int | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "x",
                                                  "resources": {"requests": {"cpu": cpu}}}]}}
    if node:
        p["spec"]["nodeName"] = node
    if priority is not None:
        p["spec"]["priority"] = priority
    return p


def write(tmp_path: Path, name: str, docs: list[dict[str, Any]]) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs))
    return str(p)


def items_by_kind(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{i['kind']}/{i['metadata']['name']}": i for i in doc["items"]}


def test_yaml_output_is_the_resulting_cluster_and_round_trips(tmp_path: Path) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}
    cluster = write(tmp_path, "c.yaml", [ns, node("n1"), node("n2"), pod("a"), pod("b"), pod("run", node="n1"),
                                         pod("huge", cpu="9")])
    code, text, _ = run("schedule", "--cluster", cluster, "--output", "yaml", "--seed", "1")
    assert code == 0
    doc = yaml.safe_load(text)
    assert doc["apiVersion"] == "v1" and doc["kind"] == "List"
    items = items_by_kind(doc)
    assert list(items) == ["Namespace/default", "Node/n1", "Node/n2", "Pod/a", "Pod/b", "Pod/run", "Pod/huge"]
    assert items["Pod/a"]["spec"]["nodeName"] in ("n1", "n2")
    assert items["Pod/run"]["spec"]["nodeName"] == "n1"
    assert "nodeName" not in items["Pod/huge"]["spec"]
    # the same run in JSON agrees on every placement
    _, js, _ = run("schedule", "--cluster", cluster, "--output", "json", "--seed", "1")
    placed = {r["pod"].split("/")[1]: r["node"] for r in json.loads(js)["pods"] if r["node"]}
    assert placed == {k.split("/")[1]: v["spec"]["nodeName"] for k, v in items.items()
                      if k.startswith("Pod/") and v["spec"].get("nodeName") and k != "Pod/run"}
    # round trip: the output is a valid --cluster; nothing is left to place but the pod that never fits
    again = tmp_path / "again.yaml"
    again.write_text(text)
    code, js2, _ = run("schedule", "--cluster", str(again), "--output", "json", "--seed", "1")
    assert code == 0
    assert [(r["pod"], r["outcome"]) for r in json.loads(js2)["pods"]] == [("default/huge", "Unschedulable")]
    code, text2, _ = run("schedule", "--cluster", str(again), "--output", "yaml", "--seed", "1")
    assert yaml.safe_load(text2) == doc  # a fixed point


def test_yaml_output_drops_preemption_victims_and_binds_the_preemptor(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1"), pod("low", cpu="2", node="n1", priority=1),
                                         pod("high", cpu="1", priority=100)])
    code, text, _ = run("schedule", "--cluster", cluster, "--output", "yaml")
    assert code == 0
    items = items_by_kind(yaml.safe_load(text))
    assert "Pod/low" not in items  # evicted
    assert items["Pod/high"]["spec"]["nodeName"] == "n1"
    assert "nominatedNodeName" not in (items["Pod/high"].get("status") or {})


def test_yaml_output_two_preemptors_for_one_room(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", [node("n1"), pod("low", cpu="2", node="n1", priority=1),
                                         pod("high1", cpu="2", priority=100), pod("high2", cpu="2", priority=100)])
    code, text, _ = run("schedule", "--cluster", cluster, "--output", "yaml")
    assert code == 0
    items = items_by_kind(yaml.safe_load(text))
    bound = [k for k in ("Pod/high1", "Pod/high2") if items[k]["spec"].get("nodeName")]
    assert len(bound) == 1  # one of them took the victim's room, the other stays pending
    pending = next(k for k in ("Pod/high1", "Pod/high2") if k not in bound)
    assert "nominatedNodeName" not in (items[pending].get("status") or {})  # it cannot preempt its peer
    assert "Pod/low" not in items


@pytest.mark.parametrize(("docs", "flag", "want"), [
    ([node("n1"), pod("a")], True, 0),
    ([node("n1"), pod("a"), pod("huge", cpu="9")], True, EXIT_UNSCHEDULABLE),
    ([node("n1"), pod("a"), pod("huge", cpu="9")], False, 0),
    ([node("n1"), {**pod("other"), "spec": {**pod("other")["spec"], "schedulerName": "nope"}}], True, 0),
], ids=["all-scheduled", "one-unschedulable", "flag-off", "skipped-is-not-a-failure"])
def test_fail_on_unschedulable(tmp_path: Path, docs: list[dict[str, Any]], flag: bool, want: int) -> None:
    cluster = write(tmp_path, "c.yaml", docs)
    for output in ("table", "json", "yaml"):
        argv = ["schedule", "--cluster", cluster, "--output", output]
        code, out, _ = run(*([*argv, "--fail-on-unschedulable"] if flag else argv))
        assert code == want, output
        assert out  # the output is written all the same


def test_example_cluster_round_trips() -> None:
    code, text, _ = run("schedule", "--cluster", str(ROOT / "examples" / "cluster.yaml"), "--output", "yaml",
                        "--seed", "1")
    assert code == 0
    assert sum(1 for i in yaml.safe_load(text)["items"] if i["kind"] == "Pod" and i["spec"].get("nodeName")) >= 6


def test_config_view_output_config_round_trips_through_the_cli(tmp_path: Path) -> None:
    code, text, _ = run("config", "view", "--config", str(ROOT / "examples" / "config.yaml"), "--output", "config")
    assert code == 0
    doc = yaml.safe_load(text)
    assert doc["kind"] == "KubeSchedulerConfiguration"
    written = tmp_path / "effective.yaml"
    written.write_text(text)
    _, a, _ = run("config", "view", "--config", str(ROOT / "examples" / "config.yaml"), "--output", "json")
    _, b, _ = run("config", "view", "--config", str(written), "--output", "json")
    assert json.loads(a) == json.loads(b)
    # and a schedule with it decides the same
    cluster = str(ROOT / "examples" / "cluster.yaml")
    _, s1, _ = run("schedule", "--cluster", cluster, "--config", str(ROOT / "examples" / "config.yaml"),
                   "--output", "json", "--seed", "3")
    _, s2, _ = run("schedule", "--cluster", cluster, "--config", str(written), "--output", "json", "--seed", "3")
    assert json.loads(s1)["pods"] == json.loads(s2)["pods"]


def test_resulting_cluster_writes_the_nomination_of_a_pod_left_pending() -> None:
    from scheduling_framework.ingest.cluster import cluster_from_documents
    from scheduling_framework.report import resulting_cluster

    class Result:
        outcome = "Unschedulable"
        nominated_node = "n1"
        victims: list[str] = []

    class Run:
        results = {"default/p": Result()}

        class cache:  # stands in for the Scheduler's cache
            @staticmethod
            def get_pod(uid: str) -> None:
                return None

    c = cluster_from_documents([node("n1"), pod("p")])
    doc = resulting_cluster(c, Run())  # type: ignore[arg-type]
    assert doc["items"][1]["status"]["nominatedNodeName"] == "n1"


def test_yaml_output_carries_generated_claims_and_their_allocations(tmp_path: Path) -> None:
    import re

    page = (ROOT / "docs" / "dra.md").read_text().split("## Worked example", 1)[1]
    cluster = tmp_path / "gpu.yaml"
    cluster.write_text(re.findall(r"```yaml\n(.*?)```", page, re.S)[0])
    code, text, _ = run("schedule", "--cluster", str(cluster), "--output", "yaml", "--seed", "1")
    assert code == 0
    items = yaml.safe_load(text)["items"]
    claims = {i["metadata"]["name"]: i for i in items if i["kind"] == "ResourceClaim"}
    bound = [i for i in items if i["kind"] == "Pod" and i["spec"].get("nodeName") and i["spec"].get("resourceClaims")]
    assert bound and claims
    for p in bound:  # each placed pod names its generated claim, which is in the file, allocated
        for st in p["status"]["resourceClaimStatuses"]:
            assert claims[st["resourceClaimName"]]["status"]["allocation"]["devices"]["results"]
    again = tmp_path / "again.yaml"
    again.write_text(text)
    code, text2, _ = run("schedule", "--cluster", str(again), "--output", "yaml", "--seed", "1")
    assert yaml.safe_load(text2) == yaml.safe_load(text)
