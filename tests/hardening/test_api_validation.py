"""API validation at load (issue #14 item 6): what the API server would refuse never reaches the scheduler.

Messages follow pkg/apis/core/validation (``path: Invalid value: ...``); every problem is listed.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework import cli
from scheduling_framework.api import Node, Pod
from scheduling_framework.api.validation import validate_node, validate_pod
from scheduling_framework.errors import ManifestError, ManifestValidationError, SchedulingFrameworkError
from scheduling_framework.ingest.cluster import cluster_from_documents, cluster_from_text
from tests.fixture_runner import ROOT, fixture_cases


def pod(spec: dict[str, Any], name: str = "p") -> dict[str, Any]:
    full = {"containers": [{"name": "c"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": full}


def ctr(**resources: Any) -> dict[str, Any]:
    return {"name": "c", "resources": resources}


def tol(**t: Any) -> dict[str, Any]:
    return {"tolerations": [t]}


def tsc(**c: Any) -> dict[str, Any]:
    base = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    return {"topologySpreadConstraints": [{**base, **c}]}


P = "spec.containers[0]"

POD_CASES = [
    pytest.param({"containers": [ctr(requests={"cpu": "-1"})]},
                 f'{P}.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
                 id="negative-request"),
    pytest.param({"containers": [ctr(limits={"memory": "-1Gi"}, requests={"memory": "0"})]},
                 f'{P}.resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
                 id="negative-limit"),
    pytest.param({"containers": [ctr(requests={"cpu": "2"}, limits={"cpu": "1"})]},
                 f'{P}.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
                 id="request-above-limit"),
    pytest.param({"containers": [ctr(requests={"example.com/gpu": "1"}, limits={"example.com/gpu": "2"})]},
                 f'{P}.resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
                 id="extended-resource-not-overcommittable"),
    pytest.param({"containers": [ctr(requests={"example.com/gpu": "500m"})]},
                 f'{P}.resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer',
                 id="extended-resource-fraction"),
    pytest.param({"containers": [ctr(requests={"example.com/gpu_": "1"})]},
                 f'{P}.resources.requests[example.com/gpu_]: Invalid value: "example.com/gpu_": name part must '
                 "consist of", id="resource-name-not-qualified"),
    pytest.param({"resources": {"requests": {"cpu": "-2"}}},
                 'spec.resources.requests[cpu]: Invalid value: "-2": must be greater than or equal to 0',
                 id="pod-level-negative"),
    pytest.param({"overhead": {"cpu": "-1"}},
                 'spec.overhead[cpu]: Invalid value: "-1": must be greater than or equal to 0', id="negative-overhead"),
    pytest.param({"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]},
                 f"{P}.ports[0].containerPort: Required value", id="container-port-zero"),
    pytest.param({"containers": [{"name": "c", "ports": [{"containerPort": 70000}]}]},
                 f"{P}.ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                 id="container-port-out-of-range"),
    pytest.param({"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": -8080}]}]},
                 f"{P}.ports[0].hostPort: Invalid value: -8080: must be between 1 and 65535, inclusive",
                 id="negative-host-port"),
    pytest.param({"containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": "HTTP"}]}]},
                 f'{P}.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
                 id="unknown-protocol"),
    pytest.param({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]}}},
                 "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid "
                 "value: 0: must be in the range 1-100", id="node-affinity-weight-0"),
    pytest.param({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 1000, "podAffinityTerm": {"topologyKey": "zone"}}]}}},
                 "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid "
                 "value: 1000: must be in the range 1-100", id="pod-anti-affinity-weight-1000"),
    pytest.param(tsc(maxSkew=0), "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater "
                 "than zero", id="max-skew-0"),
    pytest.param(tsc(minDomains=0), "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater "
                 "than zero", id="min-domains-0"),
    pytest.param(tsc(minDomains=2, whenUnsatisfiable="ScheduleAnyway"),
                 "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
                 "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway", id="min-domains-with-schedule-anyway"),
    pytest.param(tsc(topologyKey=""), "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be "
                 "empty", id="empty-topology-key"),
    pytest.param(tsc(nodeTaintsPolicy="Maybe"), 'spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported '
                 'value: "Maybe": supported values: "Honor", "Ignore"', id="unknown-node-taints-policy"),
    pytest.param(tol(key="k", operator="Exists", value="v"),
                 "spec.tolerations[0].operator: Invalid value: ", id="exists-with-value"),
    pytest.param(tol(operator="Equal", value="v"), 'spec.tolerations[0].operator: Invalid value: "Equal": operator '
                 "must be Exists when `key` is empty", id="empty-key-needs-exists"),
    pytest.param(tol(key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=5),
                 'spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when '
                 "`tolerationSeconds` is set", id="toleration-seconds-without-no-execute"),
    pytest.param(tol(key="k", operator="Exists", effect="NoScheduleSometimes"),
                 'spec.tolerations[0].effect: Unsupported value: "NoScheduleSometimes": supported values: '
                 '"NoSchedule", "PreferNoSchedule", "NoExecute"', id="unknown-toleration-effect"),
    pytest.param(tol(key="bad key", operator="Exists"), 'spec.tolerations[0].key: Invalid value: "bad key": name '
                 "part must consist of", id="toleration-key-not-qualified"),
    pytest.param({"preemptionPolicy": "Sometimes"}, 'spec.preemptionPolicy: Unsupported value: "Sometimes": '
                 'supported values: "Never", "PreemptLowerPriority"', id="unknown-preemption-policy"),
]


@pytest.mark.parametrize(("spec", "message"), POD_CASES)
def test_invalid_pod_fields(spec: dict[str, Any], message: str) -> None:
    problems = validate_pod(Pod.from_dict(pod(spec)))
    assert any(p.startswith(message) for p in problems), problems
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_documents([pod(spec)])
    assert f"document 1: Pod default/p: {message}" in str(ei.value)


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"hostNetwork": "false"}, "spec.hostNetwork: expected a boolean, got 'false'",
                 id="hostNetwork-string"),
    pytest.param({"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]},
                 "spec.containers[0].ports[0].containerPort: expected an integer, got '80'", id="port-string"),
    pytest.param({"priority": "1000"}, "spec.priority: expected an integer, got '1000'", id="priority-string"),
    pytest.param({"tolerations": [{"operator": "Exists", "tolerationSeconds": "30"}]},
                 "spec.tolerations[0].tolerationSeconds: expected an integer, got '30'", id="seconds-string"),
])
def test_strings_where_booleans_and_integers_belong_are_refused(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError, match="Pod default/p: " + message.replace("[", r"\[").replace("]", r"\]")):
        cluster_from_documents([pod(spec)])


def test_node_unschedulable_string_is_refused() -> None:
    with pytest.raises(ManifestError, match=r"spec\.unschedulable: expected a boolean, got 'true'"):
        cluster_from_text("kind: Node\nmetadata: {name: n}\nspec: {unschedulable: 'true'}\n")


@pytest.mark.parametrize(("node", "message"), [
    pytest.param({"spec": {"taints": [{"key": "k", "effect": ""}]}}, "spec.taints[0].effect: Required value",
                 id="taint-without-effect"),
    pytest.param({"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "v",
                                                                              "effect": "NoSchedule"}]}},
                 'spec.taints[1]: Duplicate value: "k=v:NoSchedule": taints must be unique by key and effect pair',
                 id="duplicate-taint"),
    pytest.param({"spec": {"taints": [{"key": "k", "value": "a b", "effect": "NoSchedule"}]}},
                 'spec.taints[0].value: Invalid value: "a b": a valid label must be', id="taint-value"),
    pytest.param({"status": {"capacity": {"cpu": "-4"}}},
                 'status.capacity[cpu]: Invalid value: "-4": must be greater than or equal to 0',
                 id="negative-capacity"),
    pytest.param({"status": {"capacity": {"cpu": "4"}, "allocatable": {"memory": "-1"}}},
                 'status.allocatable[memory]: Invalid value: "-1": must be greater than or equal to 0',
                 id="negative-allocatable"),
])
def test_invalid_node_fields(node: dict[str, Any], message: str) -> None:
    manifest = {"kind": "Node", "metadata": {"name": "n"}, **node}
    if "effect" in str(node) and "Required" in message:
        # an empty effect is refused by the parser already (upstream's NotSupported for "")
        with pytest.raises(ManifestError):
            cluster_from_documents([manifest])
        return
    assert any(p.startswith(message) for p in validate_node(Node.from_dict(manifest)))
    with pytest.raises(ManifestValidationError, match="document 1: Node n: "):
        cluster_from_documents([manifest])


def test_every_problem_is_listed_with_its_object_and_path() -> None:
    docs = [
        pod({"containers": [ctr(requests={"cpu": "-1"}, limits={"cpu": "-2"})],
             "topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}]}),
        pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 101, "preference": {}}]}}}, name="q"),
    ]
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_documents(docs)
    errs = ei.value.errors
    assert len(errs) == 6, errs
    assert sum(e.startswith("document 1: Pod default/p: ") for e in errs) == 5
    assert errs[-1].startswith("document 2: Pod default/q: spec.affinity.nodeAffinity")
    assert isinstance(ei.value, SchedulingFrameworkError) and isinstance(ei.value, ManifestError)


def test_negative_requests_no_longer_make_free_capacity(tmp_path: Path) -> None:
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "1", "pods": "10"}}}
    pods = [pod({"containers": [ctr(requests={"cpu": "1"})]}, name=f"p{i}") for i in range(3)]
    pods.append(pod({"containers": [ctr(requests={"cpu": "-2"})]}, name="free"))
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([node, *pods]))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["schedule", "--cluster", str(path)], out, err) == 2
    assert 'Pod default/free: spec.containers[0].resources.requests[cpu]: Invalid value: "-2"' in err.getvalue()


def test_a_valid_kubectl_style_pod_passes() -> None:
    text = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: 0b7e}
spec:
  hostNetwork: false
  containers:
  - name: web
    image: nginx
    ports: [{containerPort: 80, protocol: TCP}, {containerPort: 53, hostPort: 53, protocol: UDP}]
    resources:
      requests: {cpu: 250m, memory: 64Mi, example.com/gpu: "1"}
      limits: {cpu: "1", memory: 128Mi, example.com/gpu: "1"}
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {operator: Exists}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 2}
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}
"""
    c = cluster_from_text(text)
    assert c.pods[0].spec.host_network is False


def test_validation_can_be_skipped_for_test_tables() -> None:
    c = cluster_from_documents([pod(tsc(minDomains=2, whenUnsatisfiable="ScheduleAnyway"))], validate=False)
    assert c.pods[0].spec.topology_spread_constraints[0].min_domains == 2


SAMPLES = sorted(p for p in (ROOT / "tests/fixtures/samples").glob("*.yaml") if not p.name.startswith("config-"))


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_shared_samples_pass_validation(sample: Path) -> None:
    """The conformance samples run through the CLI, which validates: none of them may be refused."""
    for _, case in fixture_cases(sample):
        docs: list[Any] = []
        for key in ("namespaces", "nodes", "pods", "pdbs", "extraObjects"):
            docs += case.get(key) or []
        docs.append(case["pod"])
        cluster_from_documents(docs)
