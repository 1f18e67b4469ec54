"""Reading clusters from YAML (scheduling_framework.ingest.cluster): multi-document files, ``kind: List`` and typed
lists (``kubectl get nodes,pods -A -o yaml``), errors naming document + object + field path, malformed
YAML naming the line, and safe loading only.
"""

from __future__ import annotations

import pathlib
import textwrap

import pytest
import yaml

from scheduling_framework.api import Node, Pod
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.errors import ManifestError, ValidationError
from scheduling_framework.ingest.cluster import (
    Cluster,
    cluster_from_documents,
    cluster_from_text,
    load_cluster,
    load_yaml_documents,
)

MULTI_DOC = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata:
      name: node-1
      labels: {topology.kubernetes.io/zone: a}
    status:
      capacity: {cpu: "4", memory: 8Gi, pods: "110"}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: node-2}
    status:
      capacity: {cpu: "2", memory: 4Gi, pods: "110"}
      allocatable: {cpu: 1500m, memory: 3Gi, pods: "110"}
    ---
    apiVersion: v1
    kind: Namespace
    metadata: {name: shop, labels: {team: web}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: running, namespace: shop}
    spec:
      nodeName: node-1
      containers: [{name: c, resources: {requests: {cpu: 500m}}}]
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: pending}
    spec:
      containers: [{name: c, resources: {requests: {cpu: "1"}}}]
    ---
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: pdb, namespace: shop}
    spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
    """)


def test_multi_document_cluster() -> None:
    c = cluster_from_text(MULTI_DOC)
    assert [n.name for n in c.nodes] == ["node-1", "node-2"]
    assert [p.key for p in c.pods] == ["shop/running", "default/pending"]
    assert [(o.kind, o.name) for o in c.objects] == [("Namespace", "shop"), ("PodDisruptionBudget", "pdb")]
    assert [p.key for p in c.bound_pods] == ["shop/running"]
    assert [p.key for p in c.pending_pods] == ["default/pending"]
    # API defaulting applies: node-1 has no allocatable, so it is its capacity.
    assert c.nodes[0].status.allocatable == c.nodes[0].status.capacity
    assert c.nodes[1].status.allocatable["cpu"] == Quantity.parse("1500m")


def test_kind_list_as_kubectl_prints_it() -> None:
    text = textwrap.dedent("""\
        apiVersion: v1
        kind: List
        metadata: {resourceVersion: ""}
        items:
        - apiVersion: v1
          kind: Node
          metadata: {name: n1, resourceVersion: "123", uid: 9f1c}
          status: {capacity: {cpu: "8"}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: p1, namespace: kube-system, uid: abc}
          spec: {nodeName: n1, containers: [{name: c}]}
          status: {phase: Running}
        - apiVersion: v1
          kind: Namespace
          metadata: {name: kube-system}
        """)
    c = cluster_from_text(text)
    assert [n.name for n in c.nodes] == ["n1"] and c.nodes[0].uid == "9f1c"
    assert [p.key for p in c.pods] == ["kube-system/p1"] and c.pods[0].uid == "abc"
    assert c.pods[0].status.phase == "Running"
    assert [o.name for o in c.objects] == ["kube-system"]


@pytest.mark.parametrize(("text", "nodes", "pods"), [
    pytest.param("kind: NodeList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n", ["a", "b"], [],
                 id="NodeList-items-without-kind"),
    pytest.param("kind: PodList\nitems:\n- metadata: {name: p}\n  spec: {nodeName: a}\n", [], ["default/p"],
                 id="PodList-items-without-kind"),
    pytest.param("kind: Node\nmetadata: {name: a}\n---\nkind: List\nitems:\n- kind: Node\n  metadata: {name: b}\n"
                 "---\nkind: Pod\nmetadata: {name: p}\n", ["a", "b"], ["default/p"], id="mixed-docs-and-list"),
])
def test_lists_and_documents(text: str, nodes: list[str], pods: list[str]) -> None:
    c = cluster_from_text(text)
    assert [n.name for n in c.nodes] == nodes and [p.key for p in c.pods] == pods


@pytest.mark.parametrize(("text", "message"), [
    pytest.param(
        "kind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: List\nitems:\n- kind: Pod\n"
        "  metadata: {name: p, namespace: ns}\n  spec:\n    containers:\n    - name: c\n"
        "      resources: {requests: {memory: 1.5.3}}\n",
        'document 2 items[0]: Pod ns/p: spec.containers[0].resources.requests.memory: invalid quantity "1.5.3"',
        id="quantity-in-list-item"),
    pytest.param("kind: Pod\nmetadata: {name: p}\n"
                 "spec: {containers: [{name: c, resources: {requests: {cpu: 1.5.3}}}]}\n",
                 'document 1: Pod default/p: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"',
                 id="quantity-in-document"),
    pytest.param("kind: NodeList\nitems:\n- metadata: {name: a}\n  status: {capacity: {cpu: zz}}\n",
                 'document 1 items[0]: Node a: status.capacity.cpu: invalid quantity "zz"', id="typed-list-item"),
    pytest.param("kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: b}\nspec:\n  taints:\n"
                 "  - {key: k, effect: Sometimes}\n",
                 'document 2: Node b: spec.taints[0].effect: Unsupported value: "Sometimes": supported values: '
                 '"NoSchedule", "PreferNoSchedule", "NoExecute"', id="taint-effect"),
    pytest.param("kind: Service\nmetadata: {namespace: x}\n",
                 "document 1: Service x/<unnamed>: metadata.name: Required value: name is required",
                 id="object-without-name"),
    pytest.param("- 1\n", "document 1: expected an object manifest, got list", id="document-not-a-mapping"),
    pytest.param("kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n- 5\n",
                 "document 1 items[1]: expected an object manifest, got int", id="list-item-not-a-mapping"),
    pytest.param("metadata: {name: a}\n", "document 1: object: kind: Required value: kind is required",
                 id="missing-kind"),
    pytest.param("kind: 3\nmetadata: {name: a}\n", "document 1: object: kind: Required value: kind is required",
                 id="kind-not-a-string"),
    pytest.param("kind: Pod\nmetadata: {name: p}\nspec: {tolerations: [{operator: Exists, tolerationSeconds: soon}]}\n",
                 "document 1: Pod default/p: spec.tolerations[0].tolerationSeconds: expected an integer, got 'soon'",
                 id="toleration-seconds"),
])
def test_errors_name_document_object_and_field(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as ei:
        cluster_from_text(text)
    assert str(ei.value) == message


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: a}\n",
                 'document 2: Node a: metadata.name: Duplicate value: "a": same name as the Node in document 1',
                 id="duplicate-node"),
    pytest.param("kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: a, namespace: default}\n",
                 'document 2: Pod default/a: metadata.name: Duplicate value: "a": same namespace/name as the Pod in '
                 'document 1', id="duplicate-pod"),
])
def test_duplicates_are_errors(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as ei:
        cluster_from_text(text)
    assert str(ei.value) == message


def test_same_pod_name_in_two_namespaces_is_fine() -> None:
    c = cluster_from_text("kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: a, namespace: other}\n")
    assert [p.key for p in c.pods] == ["default/a", "other/a"]


@pytest.mark.parametrize(("text", "where", "problem"), [
    pytest.param("kind: Node\nmetadata:\n  name: a\n  labels: {x: [1}\n", "cluster.yaml:4:17",
                 "did not find expected ',' or ']'", id="unclosed-flow-sequence"),
    pytest.param("kind: Node\nmetadata:\n\tname: a\n", "cluster.yaml:3:1",
                 "found character that cannot start any token",
                 id="tab-indentation"),
    pytest.param("kind: Node\n---\nkind: Pod\nmetadata: {name: [}\n", "cluster.yaml:4", "", id="error-in-second-doc"),
])
def test_malformed_yaml_names_source_and_line(text: str, where: str, problem: str) -> None:
    with pytest.raises(ValidationError) as ei:
        cluster_from_text(text, "cluster.yaml")
    msg = str(ei.value)
    assert msg.startswith(f"invalid YAML at {where}")
    assert problem in msg
    assert not isinstance(ei.value, ManifestError)


def test_only_safe_yaml_is_loaded() -> None:
    with pytest.raises(ValidationError, match="invalid YAML at <input>:1:1: could not determine a constructor"):
        cluster_from_text("!!python/object/apply:os.system ['echo pwned']\n")


def test_load_yaml_documents_drops_empty_documents() -> None:
    assert load_yaml_documents("a: 1\n---\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]


def test_cluster_from_documents_takes_parsed_manifests() -> None:
    docs = yaml.safe_load_all(MULTI_DOC)
    c = cluster_from_documents(docs)
    assert isinstance(c, Cluster) and len(c.nodes) == 2 and len(c.pods) == 2
    assert isinstance(c.nodes[0], Node) and isinstance(c.pods[0], Pod)


def test_load_cluster_from_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MULTI_DOC, encoding="utf-8")
    assert [n.name for n in load_cluster(path).nodes] == ["node-1", "node-2"]
    assert [n.name for n in load_cluster(str(path)).nodes] == ["node-1", "node-2"]


def test_load_cluster_reports_the_file_in_yaml_errors(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: Node\nmetadata: {name: [}\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=f"invalid YAML at {path}:2:"):
        load_cluster(path)


def test_load_cluster_missing_file(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ValidationError) as ei:
        load_cluster(missing)
    assert str(ei.value).startswith(f"cannot read cluster file {missing}: ")


def test_cluster_round_trips_through_to_dict() -> None:
    c = cluster_from_text(MULTI_DOC)
    docs = [n.to_dict() for n in c.nodes] + [p.to_dict() for p in c.pods] + [o.to_dict() for o in c.objects]
    again = cluster_from_text(yaml.safe_dump_all(docs))
    assert again.nodes == c.nodes and again.pods == c.pods
    assert [o.to_dict() for o in again.objects] == [o.to_dict() for o in c.objects]
