"""The scheduler_perf workloads this runner reproduces: templates, operations, parameters, thresholds.

Each test case mirrors one of upstream's ``test/integration/scheduler_perf`` configurations
(``misc/``, ``affinity/``, ``topology_spreading/`` performance-config.yaml) and the object templates
they reference (``templates/*.yaml``): the same node shape (4 cpu, 32Gi, 110 pods), the same pod
requests, labels, affinities and spreading constraints, the same namespaces, operation order and
counts. ``threshold`` is upstream's CI floor in pods/s for that workload, where the config sets one.

Where upstream's test harness adds something the templates do not show, so do we: every node gets
``kubernetes.io/hostname`` = its name (the integration node preparer sets it), ``labelNodePrepareStrategy``
labels nodes round-robin over its values, and pods without a namespace go to ``namespace-<op index>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# --- templates (upstream templates/*.yaml, as manifests) ------------------------------------------


def _pause(cpu: str | None = "100m", memory: str | None = "500Mi", limits: bool = True,
           image: str = "registry.k8s.io/pause:3.10.1") -> dict[str, Any]:
    c: dict[str, Any] = {"image": image, "name": "pause", "ports": [{"containerPort": 80}]}
    if cpu is not None:
        reqs = {"cpu": cpu, "memory": memory}
        c["resources"] = {"limits": dict(reqs), "requests": dict(reqs)} if limits else {"requests": dict(reqs)}
    return c


NODE_DEFAULT: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
               "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}

NODE_WITH_NAME: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "scheduler-perf-node", "labels": {"kubernetes.io/hostname": "scheduler-perf-node"}},
    "spec": {},
    "status": {"capacity": {"pods": "90000", "cpu": "4", "memory": "32Gi"},
               "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}

POD_DEFAULT: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
    "spec": {"containers": [_pause()]},
}

DAEMONSET_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "daemonset-"},
    "spec": {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-node"]}]}]}}},
        "containers": [{"image": "registry.k8s.io/pause:3.10.2", "name": "pause"}],
    },
}

POD_WITH_NODE_AFFINITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "node-affinity-"},
    "spec": {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                   "values": ["zone1", "zone2"]}]}]}}},
        "containers": [_pause()],
    },
}

POD_WITH_POD_AFFINITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "affinity-pod-", "labels": {"color": "blue"}},
    "spec": {
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "blue"}}, "topologyKey": "topology.kubernetes.io/zone",
             "namespaces": ["sched-1", "sched-0"]}]}},
        "containers": [_pause()],
    },
}

POD_WITH_POD_ANTI_AFFINITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "anti-affinity-pod-", "labels": {"color": "green"}},
    "spec": {
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname",
             "namespaces": ["sched-1", "sched-0"]}]}},
        "containers": [_pause(image="registry.k8s.io/pause:3.10.2")],
    },
}


def _spreading(when: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "spreading-pod-", "labels": {"color": "blue"}},
        "spec": {
            "topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                           "whenUnsatisfiable": when,
                                           "labelSelector": {"matchLabels": {"color": "blue"}}}],
            "containers": [_pause()],
        },
    }


POD_WITH_TOPOLOGY_SPREADING = _spreading("DoNotSchedule")
POD_WITH_PREFERRED_TOPOLOGY_SPREADING = _spreading("ScheduleAnyway")

POD_LOW_PRIORITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
    "spec": {"terminationGracePeriodSeconds": 0, "containers": [_pause("900m")]},
}

POD_HIGH_PRIORITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
    "spec": {"priority": 10, "containers": [_pause("3000m")]},
}

POD_HIGH_PRIORITY_LARGE_CPU: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-h-"},
    "spec": {"priority": 10, "containers": [_pause("9", limits=False)]},
}


POD_WITH_PREFERRED_POD_AFFINITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "preferred-affinity-pod-", "labels": {"color": "red"}},
    "spec": {
        "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": {"labelSelector": {"matchLabels": {"color": "red"}},
                                 "topologyKey": "kubernetes.io/hostname", "namespaces": ["sched-1", "sched-0"]},
             "weight": 1}]}},
        "containers": [_pause()],
    },
}

POD_WITH_PREFERRED_POD_ANTI_AFFINITY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "preferred-anti-affinity-pod-", "labels": {"color": "yellow"}},
    "spec": {
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": {"labelSelector": {"matchLabels": {"color": "yellow"}},
                                 "topologyKey": "kubernetes.io/hostname", "namespaces": ["sched-1", "sched-0"]},
             "weight": 1}]}},
        "containers": [_pause()],
    },
}

#: the pods SchedulingPodMatchingAntiAffinity measures: no affinity of their own, but labelled like the
#: anti-affinity pods already running, so those pods' required anti-affinity terms reject them
POD_WITH_POD_ANTI_AFFINITY_LABEL: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "anti-affinity-matching-pod-", "labels": {"color": "green"}},
    "spec": {"containers": [_pause()]},
}

#: upstream's template spells the two policies ``NodeAffinityPolicy`` / ``NodeTaintsPolicy``; Go's JSON
#: decoder matches field names case-insensitively, so upstream reads them as nodeAffinityPolicy /
#: nodeTaintsPolicy (our parser is case-sensitive, hence the API spelling here)
POD_WITH_NODE_INCLUSION_POLICY: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "spreading-pod-with-node-inclusion-policy-", "labels": {"foo": "bar"}},
    "spec": {
        "containers": [_pause()],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                       "whenUnsatisfiable": "DoNotSchedule", "nodeAffinityPolicy": "Honor",
                                       "nodeTaintsPolicy": "Honor", "labelSelector": {"matchLabels": {"foo": "bar"}}}],
    },
}

NODE_WITH_TAINT: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"generateName": "taint-node-"},
    "spec": {"taints": [{"effect": "NoSchedule", "key": "foo"}]},
    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
               "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}

LIGHT_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "light-pod-"},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.2", "name": "pause"}],
             "terminationGracePeriodSeconds": 0},
}

GATED_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "gated-pod-"},
    "spec": {"schedulingGates": [{"name": "test.k8s.io/hold"}],
             "containers": [{"image": "registry.k8s.io/pause:3.10", "name": "pause"}]},
}

POD_WITH_FINALIZER: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "pod-", "finalizers": ["test.k8s.io/finalizer"]},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause"}]},
}

POD_WITH_LABEL: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "pod-", "labels": {"app": "scheduler-perf"}},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause"}]},
}

#: selects POD_WITH_LABEL: PodTopologySpread's default constraints (zone and hostname) take its selector
SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-"},
    "spec": {"selector": {"app": "scheduler-perf"}, "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}]},
}

# churn templates (upstream templates/churn/): a node no pod fits (0 pods), a Service selecting nothing here
CHURN_NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "node-churn-"},
    "status": {"capacity": {"pods": "0"}, "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}

CHURN_SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-churn-"},
    "spec": {"selector": {"app": "foo"}, "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]},
}

# DRA (upstream dra/performance-config.yaml and dra/templates/*.yaml)
DRA_DRIVER = "test-driver.cdi.k8s.io"

#: ``node-with-dra: "true"``: the partitionable-device slices select the DRA nodes by this label (their
#: nodeSelector); the other DRA workloads' slices name their node instead
NODE_WITH_DRA: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-dra-", "labels": {"node-with-dra": "true"}},
    "spec": {},
    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
               "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"},
}

DEVICE_CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]},
}

_CLAIM_SPEC: dict[str, Any] = {
    "devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}}

RESOURCE_CLAIM_TEMPLATE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "test-claim-template"}, "spec": {"spec": _CLAIM_SPEC},
}

RESOURCE_CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"generateName": "test-claim-"}, "spec": _CLAIM_SPEC,
}

POD_WITH_CLAIM_TEMPLATE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra-"},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                             "resources": {"claims": [{"name": "resource"}]}}],
             "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]},
}

#: pod i uses claim ``test-claim-<i // 5>`` (five pods share a claim)
POD_WITH_CLAIM_REF: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra-"},
    "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                             "resources": {"claims": [{"name": "resource"}]}}],
             "resourceClaims": [{"name": "resource", "resourceClaimName": "test-claim-{div5}"}]},
}


#: taints every device (empty selector); RESOURCE_CLAIM_TEMPLATE_TOLERATION's requests tolerate it
DEVICE_TAINT_RULE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "taint-all-devices"},
    "spec": {"deviceSelector": None, "taint": {"key": "example.com/taint", "value": "tainted",
                                               "effect": "NoSchedule"}},
}

RESOURCE_CLAIM_TEMPLATE_TOLERATION: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "test-claim-template"},
    "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
        "deviceClassName": "test-class", "tolerations": [{"key": "example.com/taint", "operator": "Exists"}]}}]}}},
}


_NODE_WITH_DRA_SELECTOR: dict[str, Any] = {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "node-with-dra", "operator": "In", "values": ["true"]}]}]}


def _pool_slice(kind: str, index: int, spec: dict[str, Any]) -> dict[str, Any]:
    """One of the two slices of pool ``resourceslice-<index>`` (its counter sets, or its devices), for every
    node labelled node-with-dra: a slice holds either sharedCounters or devices."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"resourceslice-{kind}-{index}"},
            "spec": {"pool": {"name": f"resourceslice-{index}", "generation": 1, "resourceSliceCount": 2},
                     "driver": DRA_DRIVER, "nodeSelector": _NODE_WITH_DRA_SELECTOR, **spec}}


def partitionable_countersets(index: int) -> dict[str, Any]:
    """``resourceslice-partitionable-countersets.yaml`` (``{{.Index}}`` = index): four counters of one."""
    return _pool_slice("countersets", index, {"sharedCounters": [
        {"name": "counter-set", "counters": {f"counter{i}": {"value": "1"} for i in range(1, 5)}}]})


def partitionable_devices(index: int) -> dict[str, Any]:
    """``resourceslice-partitionable-devices.yaml``: two devices consuming two counters each (the first one
    marked preallocate), four consuming one."""
    def device(name: str, preallocate: bool, counters: tuple[str, ...]) -> dict[str, Any]:
        return {"name": name,
                "attributes": {"preallocate": {"bool": preallocate}, "dra.example.com/slice": {"int": index}},
                "capacity": {"counters": {"value": str(len(counters))}},
                "consumesCounters": [{"counterSet": "counter-set",
                                      "counters": {c: {"value": "1"} for c in counters}}]}

    return _pool_slice("devices", index, {"devices": [
        device("device-2-counters-1", True, ("counter1", "counter2")),
        device("device-2-counters-2", False, ("counter3", "counter4")),
        *(device(f"device-1-counter-{i}", False, (f"counter{i}",)) for i in range(1, 5))]})


def backtracking_countersets(index: int) -> dict[str, Any]:
    """``resourceslice-partitionable-backtracking-countersets.yaml``: eight cpu counters of one, 70Gi of mem."""
    return _pool_slice("countersets", index, {"sharedCounters": [
        {"name": "counter-set-for-cpu", "counters": {f"cpu{i}": {"value": "1"} for i in range(1, 9)}},
        {"name": "counter-set-for-mem", "counters": {"mem": {"value": "70Gi"}}}]})


def backtracking_devices(index: int) -> dict[str, Any]:
    """``resourceslice-partitionable-backtracking-devices.yaml``: eight devices taking one cpu counter each and
    10Gi of mem, device-1 20Gi: seven devices fit only without device-1, which the search tries first."""
    return _pool_slice("devices", index, {"devices": [
        {"name": f"device-{i}", "consumesCounters": [
            {"counterSet": "counter-set-for-cpu", "counters": {f"cpu{i}": {"value": "1"}}},
            {"counterSet": "counter-set-for-mem", "counters": {"mem": {"value": "20Gi" if i == 1 else "10Gi"}}}]}
        for i in range(1, 9)]})


#: allocated by allocResourceClaims: a device with two counters that is marked preallocate
RESOURCE_CLAIM_WITH_SELECTOR: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"generateName": "test-claim-with-selector-"},
    "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "selectors": [
        {"cel": {"expression": f"device.capacity['{DRA_DRIVER}'].counters.compareTo(quantity('2')) >= 0 &&\n"
                               f"device.attributes['{DRA_DRIVER}'].preallocate"}}]}}]}},
}

#: two devices of the same slice (matchAttribute on dra.example.com/slice)
RESOURCE_CLAIM_TEMPLATE_FOR_TWO_DEVICES: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "test-claim-template"},
    "spec": {"spec": {"devices": {
        "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 2}}],
        "constraints": [{"requests": ["req-0"], "matchAttribute": "dra.example.com/slice"}]}}},
}

RESOURCE_CLAIM_TEMPLATE_BACKTRACKING: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "test-claim-template"},
    "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class",
                                                                           "count": 7}}]}}},
}


# --- operations ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateNodes:
    """``createNodes``: ``count`` nodes from ``template``, optionally labelled round-robin."""

    count: int | str
    template: Mapping[str, Any] = field(default_factory=lambda: NODE_DEFAULT)
    label_key: str = ""
    label_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNamespaces:
    """``createNamespaces``: ``<prefix>-0`` ... ``<prefix>-<count-1>``."""

    prefix: str
    count: int


@dataclass(frozen=True)
class CreatePods:
    """``createPods``: ``count`` pods from ``template`` (the test case default when None), scheduled
    before the next operation; ``collect_metrics`` marks the measured ones. ``skip_wait``
    (``skipWaitToCompletion``): the pods are only queued; the scheduler meets them in the next drain
    (upstream creates them and goes on without waiting, the scheduler works on them meanwhile)."""

    count: int | str
    template: Mapping[str, Any] | None = None
    namespace: str | None = None
    collect_metrics: bool = False
    skip_wait: bool = False


@dataclass(frozen=True)
class Churn:
    """``churn``: every ``interval_ms`` of the scheduling loop, for each template (a Node, Pod or Service):

    * ``create`` mode: one more object (``number`` ticks at most, 0 = no limit);
    * ``recreate`` mode: slot ``tick % number`` of that template is created when empty, deleted when
      it holds an object (so with ``number`` 1 the objects appear on one tick and go on the next).

    Objects go to ``namespace-<op index>`` (namespaced kinds)."""

    templates: tuple[Mapping[str, Any], ...]
    interval_ms: int = 500
    mode: str = "create"
    number: int = 0


@dataclass(frozen=True)
class Barrier:
    """``barrier`` with ``stageRequirement: Attempted``: wait until every queued pod went through PreEnqueue
    or a scheduling cycle. Here: schedule until the queue has nothing left to try (gated pods stay)."""


@dataclass(frozen=True)
class DeletePods:
    """``deletePods`` with ``deletePodsPerSecond`` and ``skipWaitToCompletion``: the pods of ``namespace``
    (listed when the operation runs) are deleted one by one, ``per_second`` of them per second of the
    scheduling loops that follow. A pod with finalizers only gets its deletionTimestamp (as the API server
    does); the others leave the cluster."""

    namespace: str
    per_second: int


@dataclass(frozen=True)
class CreateResourceDriver:
    """``createResourceDriver``: a ResourceSlice with ``max_claims`` devices for every node whose name starts
    with ``node_prefix`` (upstream's test driver publishes one per node)."""

    max_claims: int | str
    node_prefix: str = "scheduler-perf-dra-"
    driver: str = DRA_DRIVER


@dataclass(frozen=True)
class CreateAny:
    """``createAny``: ``count`` objects from ``template`` (generateName gets the index; a function of the
    index stands for a template using ``{{.Index}}``), in ``namespace``."""

    template: Mapping[str, Any] | Callable[[int], Mapping[str, Any]]
    namespace: str | None = None
    count: int | str = 1


@dataclass(frozen=True)
class AllocClaims:
    """``allocResourceClaims``: allocate every claim of ``namespace`` with the structured allocator, on the
    first node (by name) where it fits, without pods."""

    namespace: str


@dataclass(frozen=True)
class SteadyState:
    """``createPods`` with ``steadyState``: ``count`` pods at a time, scheduled, then deleted, for
    ``duration_s`` seconds of the measured loop."""

    count: int | str
    duration_s: float | str
    template: Mapping[str, Any]
    namespace: str


Op = (CreateNodes | CreateNamespaces | CreatePods | Churn | Barrier | DeletePods | CreateResourceDriver | CreateAny
      | AllocClaims | SteadyState)


@dataclass(frozen=True)
class Workload:
    test_case: str
    name: str
    ops: tuple[Op, ...]
    params: Mapping[str, int]
    threshold: float | None = None
    default_pod_template: Mapping[str, Any] = field(default_factory=lambda: POD_DEFAULT)
    needs: tuple[str, ...] = ()  # plugins the workload cannot run without
    upstream: bool = True  # False: an extra size of an upstream test case (scaling figures)
    smoke: bool = False  # upstream's small integration-test size

    @property
    def full_name(self) -> str:
        return f"{self.test_case}/{self.name}"

    def count(self, value: int | str) -> int:
        return self.params[value[1:]] if isinstance(value, str) else value

    def seconds(self, value: float | str) -> float:
        return float(self.params[value[1:]]) if isinstance(value, str) else float(value)


# --- test cases ------------------------------------------------------------------------------------

_BASIC_OPS: tuple[Op, ...] = (CreateNodes("$initNodes"), CreatePods("$initPods"),
                              CreatePods("$measurePods", collect_metrics=True))

_DAEMONSET_OPS: tuple[Op, ...] = (CreateNodes(1, NODE_WITH_NAME), CreateNodes("$initNodes"),
                                  CreatePods("$measurePods", collect_metrics=True))

_ZONE = "topology.kubernetes.io/zone"
_ZONE1 = ("zone1",)
_MOONS = ("moon-1", "moon-2", "moon-3")

_NODE_AFFINITY_OPS: tuple[Op, ...] = (CreateNodes("$initNodes", NODE_DEFAULT, _ZONE, _ZONE1), CreatePods("$initPods"),
                                      CreatePods("$measurePods", collect_metrics=True))

_POD_AFFINITY_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes", NODE_DEFAULT, _ZONE, _ZONE1), CreateNamespaces("sched", 2),
    CreatePods("$initPods", namespace="sched-0"),
    CreatePods("$measurePods", namespace="sched-1", collect_metrics=True))

_POD_ANTI_AFFINITY_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"), CreateNamespaces("sched", 2),
    CreatePods("$initPods", namespace="sched-0"),
    CreatePods("$measurePods", namespace="sched-1", collect_metrics=True))
_PREFERRED_AFFINITY_OPS = _POD_ANTI_AFFINITY_OPS  # upstream's preferred (anti-)affinity cases: the same operations


def _spreading_ops(measured: Mapping[str, Any]) -> tuple[Op, ...]:
    return (CreateNodes("$initNodes", NODE_DEFAULT, _ZONE, _MOONS), CreatePods("$initPods", POD_DEFAULT),
            CreatePods("$measurePods", measured, collect_metrics=True))


_PREEMPTION_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"), CreatePods("$initPods", POD_LOW_PRIORITY),
    CreatePods("$measurePods", POD_HIGH_PRIORITY, collect_metrics=True))

_UNSCHEDULABLE_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"), CreatePods("$initPods"), Churn((POD_HIGH_PRIORITY_LARGE_CPU,), 200),
    CreatePods("$measurePods", POD_DEFAULT, collect_metrics=True))


_PREEMPTION_ASYNC_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"), CreatePods("$initPods", POD_LOW_PRIORITY), Churn((POD_HIGH_PRIORITY,), 200),
    CreatePods("$measurePods", POD_DEFAULT, collect_metrics=True))

_MIXED_CHURN_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"),
    Churn((CHURN_NODE, POD_HIGH_PRIORITY_LARGE_CPU, CHURN_SERVICE), 1000, mode="recreate", number=1),
    CreatePods("$measurePods", POD_DEFAULT, collect_metrics=True))

# gated pods (namespace-1) stay gated to the end; namespace-3's pods are deleted 50/s while pods are measured
_WHILE_GATED_OPS: tuple[Op, ...] = (
    CreateNodes(1, NODE_WITH_NAME), CreatePods("$gatedPods", GATED_POD, skip_wait=True), Barrier(),
    CreatePods("$deletingPods"), DeletePods("namespace-3", 50), CreatePods("$measurePods", collect_metrics=True))

# pods with a finalizer (namespace-1) are queued, then deleted 100/s (they get a deletionTimestamp and stay)
_DELETED_WITH_FINALIZERS_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"), CreatePods("$deletingPods", POD_WITH_FINALIZER, skip_wait=True),
    DeletePods("namespace-1", 100), CreatePods("$measurePods", collect_metrics=True))

_POD_MATCHING_ANTI_AFFINITY_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes"), CreateNamespaces("sched", 2),
    CreatePods("$initPods", namespace="sched-0"),
    CreatePods("$measurePods", POD_WITH_POD_ANTI_AFFINITY_LABEL, "sched-1", collect_metrics=True))

_MIXED_BASE_POD_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes", NODE_DEFAULT, _ZONE, _ZONE1), CreateNamespaces("sched", 1),
    CreatePods("$initPods", namespace="sched-0"),
    CreatePods("$initPods", POD_WITH_POD_AFFINITY, "sched-0"),
    CreatePods("$initPods", POD_WITH_POD_ANTI_AFFINITY, "sched-0"),
    CreatePods("$initPods", POD_WITH_PREFERRED_POD_AFFINITY, "sched-0"),
    CreatePods("$initPods", POD_WITH_PREFERRED_POD_ANTI_AFFINITY, "sched-0"),
    CreatePods("$measurePods", collect_metrics=True))

_DEFAULT_SPREADING_OPS: tuple[Op, ...] = (
    CreateNodes("$initNodes", NODE_DEFAULT, _ZONE, _MOONS), CreateAny(SERVICE, "service-ns"),
    CreatePods("$initPods", POD_DEFAULT),
    CreatePods("$measurePods", POD_WITH_LABEL, "service-ns", collect_metrics=True))

_NODE_INCLUSION_POLICY_OPS: tuple[Op, ...] = (
    CreateNodes("$normalNodes"), CreateNodes("$taintNodes", NODE_WITH_TAINT),
    CreatePods("$measurePods", collect_metrics=True))


def _dra_claim_template_ops() -> tuple[Op, ...]:
    return (CreateNodes("$nodesWithoutDRA"), CreateNodes("$nodesWithDRA", NODE_WITH_DRA),
            CreateResourceDriver("$maxClaimsPerNode"), CreateAny(DEVICE_CLASS),
            CreateAny(RESOURCE_CLAIM_TEMPLATE, "init"), CreatePods("$initPods", POD_WITH_CLAIM_TEMPLATE, "init"),
            CreateAny(RESOURCE_CLAIM_TEMPLATE, "test"),
            CreatePods("$measurePods", POD_WITH_CLAIM_TEMPLATE, "test", collect_metrics=True))


def _dra_claim_ops() -> tuple[Op, ...]:
    return (CreateNodes("$nodesWithoutDRA"), CreateNodes("$nodesWithDRA", NODE_WITH_DRA),
            CreateResourceDriver("$maxClaimsPerNode"), CreateAny(DEVICE_CLASS),
            CreateAny(RESOURCE_CLAIM, "init", "$initClaims"), CreatePods("$initPods", POD_WITH_CLAIM_REF, "init"),
            CreateAny(RESOURCE_CLAIM, "test", "$measureClaims"),
            CreatePods("$measurePods", POD_WITH_CLAIM_REF, "test", collect_metrics=True))


def _dra_steady_ops() -> tuple[Op, ...]:
    return (CreateNodes("$nodesWithoutDRA"), CreateNodes("$nodesWithDRA", NODE_WITH_DRA),
            CreateResourceDriver("$maxClaimsPerNode"), CreateAny(DEVICE_CLASS),
            CreateAny(RESOURCE_CLAIM, "init", "$initClaims"), AllocClaims("init"),
            CreateAny(RESOURCE_CLAIM_TEMPLATE, "test"),
            SteadyState(10, "$duration", POD_WITH_CLAIM_TEMPLATE, "test"))


def _dra_toleration_ops() -> tuple[Op, ...]:
    # DeviceTaintRule objects are not read by this implementation (docs/differences.md): the rule is created
    # as upstream does, but the devices are not tainted, so the tolerations have nothing to tolerate
    return (CreateNodes("$nodesWithoutDRA"), CreateAny(DEVICE_TAINT_RULE), CreateNodes("$nodesWithDRA", NODE_WITH_DRA),
            CreateResourceDriver("$maxClaimsPerNode"), CreateAny(DEVICE_CLASS),
            CreateAny(RESOURCE_CLAIM_TEMPLATE_TOLERATION, "init"),
            CreatePods("$initPods", POD_WITH_CLAIM_TEMPLATE, "init"),
            CreateAny(RESOURCE_CLAIM_TEMPLATE_TOLERATION, "test"),
            CreatePods("$measurePods", POD_WITH_CLAIM_TEMPLATE, "test", collect_metrics=True))


def _dra_partitionable_ops() -> tuple[Op, ...]:
    return (CreateNodes("$nodesWithoutDRA"), CreateNodes("$nodesWithDRA", NODE_WITH_DRA),
            CreateAny(partitionable_countersets, count="$resourceSlices"),
            CreateAny(partitionable_devices, count="$resourceSlices"), CreateAny(DEVICE_CLASS),
            CreateAny(RESOURCE_CLAIM_WITH_SELECTOR, "init", "$initClaims"), AllocClaims("init"),
            CreateAny(RESOURCE_CLAIM_TEMPLATE_FOR_TWO_DEVICES, "test"),
            SteadyState("$measurePods", "$duration", POD_WITH_CLAIM_TEMPLATE, "test"))


def _dra_backtracking_ops() -> tuple[Op, ...]:
    return (CreateNodes("$nodesWithoutDRA"), CreateNodes("$nodesWithDRA", NODE_WITH_DRA),
            CreateAny(backtracking_countersets, count="$resourceSlices"),
            CreateAny(backtracking_devices, count="$resourceSlices"), CreateAny(DEVICE_CLASS),
            CreateAny(RESOURCE_CLAIM_TEMPLATE_BACKTRACKING, "test"),
            SteadyState("$measurePods", "$duration", POD_WITH_CLAIM_TEMPLATE, "test"))


def _dra(nodes: int, without: int, init: int, measure: int, max_claims: int) -> dict[str, int]:
    return {"nodesWithDRA": nodes, "nodesWithoutDRA": without, "initPods": init, "measurePods": measure,
            "maxClaimsPerNode": max_claims}


def _dra_shared(nodes: int, without: int, init: int, measure: int, max_claims: int) -> dict[str, int]:
    return {**_dra(nodes, without, init, measure, max_claims), "initClaims": init // 5, "measureClaims": measure // 5}


def _dra_steady(nodes: int, without: int, init_claims: int, duration: int) -> dict[str, int]:
    return {"nodesWithDRA": nodes, "nodesWithoutDRA": without, "initClaims": init_claims, "maxClaimsPerNode": 10,
            "duration": duration}


def _p(init_nodes: int, measure: int, init_pods: int | None = None) -> dict[str, int]:
    d = {"initNodes": init_nodes, "measurePods": measure}
    if init_pods is not None:
        d["initPods"] = init_pods
    return d


WORKLOADS: tuple[Workload, ...] = (
    # misc/performance-config.yaml
    Workload("SchedulingBasic", "5Nodes", _BASIC_OPS, _p(5, 10, 5), smoke=True),
    Workload("SchedulingBasic", "500Nodes", _BASIC_OPS, _p(500, 1000, 500)),
    Workload("SchedulingBasic", "5000Nodes_10000Pods", _BASIC_OPS, _p(5000, 10000, 1000), threshold=680),
    Workload("SchedulingBasic", "5000Nodes_50000Pods", _BASIC_OPS, _p(5000, 50000, 5000), threshold=810),
    Workload("SchedulingBasic", "15000Nodes_10000Pods", _BASIC_OPS, _p(15000, 10000, 1000), upstream=False),
    Workload("SchedulingDaemonset", "5Nodes", _DAEMONSET_OPS, _p(5, 10), default_pod_template=DAEMONSET_POD,
             smoke=True),
    Workload("SchedulingDaemonset", "15000Nodes", _DAEMONSET_OPS, _p(15000, 30000), threshold=1100,
             default_pod_template=DAEMONSET_POD),
    Workload("PreemptionBasic", "5Nodes", _PREEMPTION_OPS, _p(5, 5, 20), needs=("DefaultPreemption",), smoke=True),
    Workload("PreemptionBasic", "1000Nodes", _PREEMPTION_OPS, _p(1000, 1000, 4000), needs=("DefaultPreemption",)),
    Workload("Unschedulable", "5Nodes/1Init/10Pods", _UNSCHEDULABLE_OPS, _p(5, 10, 1), smoke=True),
    Workload("Unschedulable", "5kNodes/100Init/10kPods", _UNSCHEDULABLE_OPS, _p(5000, 10000, 100), threshold=590),
    Workload("Unschedulable", "5kNodes/20kInit/10kPods", _UNSCHEDULABLE_OPS, _p(5000, 10000, 20000), threshold=600),
    Workload("PreemptionAsync", "5Nodes", _PREEMPTION_ASYNC_OPS, _p(5, 5, 20), needs=("DefaultPreemption",),
             smoke=True),
    Workload("PreemptionAsync", "5000Nodes", _PREEMPTION_ASYNC_OPS, _p(5000, 5000, 20000), threshold=570,
             needs=("DefaultPreemption",)),
    Workload("SchedulingWithMixedChurn", "10Nodes", _MIXED_CHURN_OPS, _p(10, 100), smoke=True),
    Workload("SchedulingWithMixedChurn", "5000Nodes_10000Pods", _MIXED_CHURN_OPS, _p(5000, 10000), threshold=710),
    Workload("SchedulingWhileGated", "1Node_10GatedPods", _WHILE_GATED_OPS,
             {"gatedPods": 10, "deletingPods": 10, "measurePods": 10}, default_pod_template=LIGHT_POD, smoke=True),
    Workload("SchedulingWhileGated", "1Node_10000GatedPods", _WHILE_GATED_OPS,
             {"gatedPods": 10000, "deletingPods": 20000, "measurePods": 20000}, threshold=910,
             default_pod_template=LIGHT_POD),
    Workload("SchedulingDeletedPodsWithFinalizers", "10Node_100DeletingPods", _DELETED_WITH_FINALIZERS_OPS,
             {"initNodes": 10, "deletingPods": 10, "measurePods": 10}, default_pod_template=LIGHT_POD, smoke=True),
    Workload("SchedulingDeletedPodsWithFinalizers", "5000Node_5000DeletingPods", _DELETED_WITH_FINALIZERS_OPS,
             {"initNodes": 5000, "deletingPods": 5000, "measurePods": 5000}, threshold=830,
             default_pod_template=LIGHT_POD),
    # affinity/performance-config.yaml
    Workload("SchedulingPodAntiAffinity", "5Nodes", _POD_ANTI_AFFINITY_OPS, _p(5, 4, 1),
             default_pod_template=POD_WITH_POD_ANTI_AFFINITY, smoke=True),
    Workload("SchedulingPodAntiAffinity", "5000Nodes_2000Pods", _POD_ANTI_AFFINITY_OPS, _p(5000, 2000, 1000),
             threshold=60, default_pod_template=POD_WITH_POD_ANTI_AFFINITY),
    Workload("SchedulingPodAffinity", "5Nodes", _POD_AFFINITY_OPS, _p(5, 10, 5),
             default_pod_template=POD_WITH_POD_AFFINITY, smoke=True),
    Workload("SchedulingPodAffinity", "5000Nodes_5000Pods", _POD_AFFINITY_OPS, _p(5000, 5000, 5000), threshold=35,
             default_pod_template=POD_WITH_POD_AFFINITY),
    Workload("SchedulingPodMatchingAntiAffinity", "5Nodes", _POD_MATCHING_ANTI_AFFINITY_OPS, _p(5, 4, 1),
             default_pod_template=POD_WITH_POD_ANTI_AFFINITY, smoke=True),
    Workload("SchedulingPodMatchingAntiAffinity", "5000Nodes_5000Pods", _POD_MATCHING_ANTI_AFFINITY_OPS,
             _p(5000, 5000, 1000), threshold=595, default_pod_template=POD_WITH_POD_ANTI_AFFINITY),
    Workload("SchedulingPreferredPodAffinity", "5Nodes", _PREFERRED_AFFINITY_OPS, _p(5, 10, 5),
             default_pod_template=POD_WITH_PREFERRED_POD_AFFINITY, smoke=True),
    Workload("SchedulingPreferredPodAffinity", "5000Nodes_5000Pods", _PREFERRED_AFFINITY_OPS, _p(5000, 5000, 5000),
             threshold=90, default_pod_template=POD_WITH_PREFERRED_POD_AFFINITY),
    Workload("SchedulingPreferredPodAntiAffinity", "5Nodes", _PREFERRED_AFFINITY_OPS, _p(5, 10, 5),
             default_pod_template=POD_WITH_PREFERRED_POD_ANTI_AFFINITY, smoke=True),
    Workload("SchedulingPreferredPodAntiAffinity", "5000Nodes_5000Pods", _PREFERRED_AFFINITY_OPS,
             _p(5000, 5000, 5000), threshold=90, default_pod_template=POD_WITH_PREFERRED_POD_ANTI_AFFINITY),
    Workload("MixedSchedulingBasePod", "5Nodes", _MIXED_BASE_POD_OPS, _p(5, 10, 2), smoke=True),
    Workload("MixedSchedulingBasePod", "5000Nodes_5000Pods", _MIXED_BASE_POD_OPS, _p(5000, 5000, 2000),
             threshold=140),
    Workload("SchedulingNodeAffinity", "5Nodes", _NODE_AFFINITY_OPS, _p(5, 10, 5),
             default_pod_template=POD_WITH_NODE_AFFINITY, smoke=True),
    Workload("SchedulingNodeAffinity", "5000Nodes_10000Pods", _NODE_AFFINITY_OPS, _p(5000, 10000, 5000),
             threshold=220, default_pod_template=POD_WITH_NODE_AFFINITY),
    # topology_spreading/performance-config.yaml
    Workload("TopologySpreading", "5Nodes", _spreading_ops(POD_WITH_TOPOLOGY_SPREADING), _p(5, 10, 10), smoke=True),
    Workload("TopologySpreading", "5000Nodes_5000Pods", _spreading_ops(POD_WITH_TOPOLOGY_SPREADING),
             _p(5000, 5000, 5000), threshold=460),
    Workload("PreferredTopologySpreading", "5Nodes", _spreading_ops(POD_WITH_PREFERRED_TOPOLOGY_SPREADING),
             _p(5, 10, 10), smoke=True),
    Workload("PreferredTopologySpreading", "5000Nodes_5000Pods",
             _spreading_ops(POD_WITH_PREFERRED_TOPOLOGY_SPREADING), _p(5000, 5000, 5000), threshold=340),
    Workload("DefaultTopologySpreading", "5Nodes", _DEFAULT_SPREADING_OPS, _p(5, 10, 10), smoke=True),
    Workload("DefaultTopologySpreading", "5000Nodes_10000Pods", _DEFAULT_SPREADING_OPS, _p(5000, 10000, 5000)),
    Workload("DefaultTopologySpreading", "5000Nodes_50000Pods", _DEFAULT_SPREADING_OPS, _p(5000, 50000, 5000),
             threshold=160),
    Workload("SchedulingWithNodeInclusionPolicy", "5Nodes", _NODE_INCLUSION_POLICY_OPS,
             {"taintNodes": 1, "normalNodes": 4, "measurePods": 4}, default_pod_template=POD_WITH_NODE_INCLUSION_POLICY,
             smoke=True),
    Workload("SchedulingWithNodeInclusionPolicy", "5000Nodes", _NODE_INCLUSION_POLICY_OPS,
             {"taintNodes": 1000, "normalNodes": 4000, "measurePods": 4000}, threshold=270,
             default_pod_template=POD_WITH_NODE_INCLUSION_POLICY),
    # dra/performance-config.yaml (no thresholds set upstream)
    Workload("SchedulingWithResourceClaimTemplate", "fast", _dra_claim_template_ops(), _dra(1, 1, 0, 10, 10),
             needs=("DynamicResources",), smoke=True),
    Workload("SchedulingWithResourceClaimTemplate", "2000pods_100nodes", _dra_claim_template_ops(),
             _dra(100, 0, 1000, 1000, 20), needs=("DynamicResources",)),
    Workload("SchedulingWithResourceClaimTemplate", "2000pods_200nodes", _dra_claim_template_ops(),
             _dra(200, 0, 1000, 1000, 10), needs=("DynamicResources",)),
    Workload("SchedulingWithResourceClaimTemplate", "5000pods_500nodes", _dra_claim_template_ops(),
             _dra(500, 0, 2500, 2500, 10), threshold=40, needs=("DynamicResources",)),
    Workload("SchedulingWithResourceClaimTemplateToleration", "fast", _dra_toleration_ops(),
             _dra(1, 1, 0, 10, 10), needs=("DynamicResources",), smoke=True),
    Workload("SchedulingWithResourceClaim", "fast", _dra_claim_ops(), _dra_shared(1, 1, 0, 10, 2),
             needs=("DynamicResources",), smoke=True),
    Workload("SchedulingWithResourceClaim", "2000pods_100nodes", _dra_claim_ops(),
             _dra_shared(100, 0, 1000, 1000, 4), needs=("DynamicResources",)),
    Workload("SchedulingWithResourceClaim", "2000pods_200nodes", _dra_claim_ops(),
             _dra_shared(200, 0, 1000, 1000, 2), needs=("DynamicResources",)),
    Workload("SchedulingWithResourceClaim", "5000pods_500nodes", _dra_claim_ops(),
             _dra_shared(500, 0, 2500, 2500, 2), needs=("DynamicResources",)),
    Workload("SteadyStateClusterResourceClaimTemplate", "fast", _dra_steady_ops(), _dra_steady(1, 1, 0, 2),
             needs=("DynamicResources",), smoke=True),
    Workload("SteadyStateClusterResourceClaimTemplate", "empty_500nodes", _dra_steady_ops(),
             _dra_steady(500, 0, 0, 10), threshold=64, needs=("DynamicResources",)),
    Workload("SteadyStateClusterResourceClaimTemplate", "half_500nodes", _dra_steady_ops(),
             _dra_steady(500, 0, 2500, 10), threshold=70, needs=("DynamicResources",)),
    Workload("SteadyStateClusterResourceClaimTemplate", "full_500nodes", _dra_steady_ops(),
             _dra_steady(500, 0, 4990, 10), threshold=60, needs=("DynamicResources",)),
    Workload("SteadyStateClusterResourceClaimTemplatePartitionable", "fast", _dra_partitionable_ops(),
             {"nodesWithDRA": 1, "nodesWithoutDRA": 1, "resourceSlices": 10, "initClaims": 10, "measurePods": 10,
              "duration": 2}, needs=("DynamicResources",), smoke=True),
    Workload("SteadyStateClusterResourceClaimTemplatePartitionable", "2000pods_100nodes", _dra_partitionable_ops(),
             {"nodesWithDRA": 100, "nodesWithoutDRA": 0, "resourceSlices": 2000, "initClaims": 2000,
              "measurePods": 2000, "duration": 10}, needs=("DynamicResources",)),
    Workload("SteadyStateClusterResourceClaimTemplatePartitionableBacktracking", "fast", _dra_backtracking_ops(),
             {"nodesWithDRA": 1, "nodesWithoutDRA": 1, "resourceSlices": 1, "measurePods": 1, "duration": 2},
             needs=("DynamicResources",), smoke=True),
)


def select(patterns: list[str], smoke: bool) -> list[Workload]:
    """Workloads matching any pattern (a test case name, or ``TestCase/workload``); all of the size class
    (smoke or full) when no pattern is given. An explicit full name selects that workload whatever its size."""
    pool = [w for w in WORKLOADS if w.smoke == smoke]
    if not patterns:
        return pool
    out: list[Workload] = []
    for pat in patterns:
        exact = [w for w in WORKLOADS if w.full_name == pat]
        hits = exact or [w for w in pool if w.test_case == pat]
        if not hits:
            known = sorted({w.test_case for w in WORKLOADS} | {w.full_name for w in WORKLOADS})
            raise SystemExit(f"unknown workload {pat!r}; known: {', '.join(known)}")
        out.extend(w for w in hits if w not in out)
    return out
