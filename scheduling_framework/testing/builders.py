"""Fluent builders for test objects, in the spirit of upstream's ``st.MakePod()`` / ``st.MakeNode()``.

Every builder assembles a plain manifest dict and ``obj()`` parses it with ``Pod.from_dict`` /
``Node.from_dict``, so a built object is exactly what parsing the equivalent YAML gives (API
defaulting included). ``manifest()`` returns that dict, ready for ``yaml.safe_dump``.

Builders mutate and return themselves, so calls chain; ``clone()`` copies one to derive variants.
Quantities may be given as strings ("500m", "1Gi") or numbers; resource names given as keyword
arguments have ``_`` read as ``-`` (``ephemeral_storage="1Gi"``); others go in a positional mapping
(``req({"nvidia.com/gpu": "1"}, cpu="1")``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self, TypeAlias

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.state.snapshot import Snapshot

#: The image of containers the builders add for resources (upstream uses the pause image too).
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
#: Pod capacity a built node gets unless ``capacity(pods=...)`` says otherwise (the kubelet's default).
DEFAULT_NODE_PODS = 110

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"

Quantityish: TypeAlias = str | int | float
Manifest: TypeAlias = dict[str, Any]


def _quantity(value: Quantityish) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError(f"a resource quantity must be a string or a number, got {value!r}")
    return value if isinstance(value, str) else str(value)


def resource_list(resources: Mapping[str, Quantityish] | None = None, **kwargs: Quantityish) -> dict[str, str]:
    """A manifest ResourceList: ``resource_list(cpu="1", ephemeral_storage="1Gi")`` -> ``{"cpu": "1", ...}``."""
    out: dict[str, str] = {}
    for name, value in (resources or {}).items():
        out[str(name)] = _quantity(value)
    for name, value in kwargs.items():
        out[name.replace("_", "-")] = _quantity(value)
    return out


def _selector_dict(selector: Any) -> Manifest | None:
    """A LabelSelector manifest from a builder, a dict, or ``{"app": "web"}``-style match labels."""
    if selector is None:
        return None
    if isinstance(selector, LabelSelectorBuilder):
        return selector.obj()
    if isinstance(selector, Mapping):
        if set(selector) <= {"matchLabels", "matchExpressions"}:
            return copy.deepcopy(dict(selector))
        return {"matchLabels": {str(k): str(v) for k, v in selector.items()}}
    raise TypeError(f"expected a label selector (make_label_selector(), a selector dict or match labels), "
                    f"got {type(selector).__name__}")


class LabelSelectorBuilder:
    """Builds a LabelSelector manifest (upstream ``st.MakeLabelSelector()``); ``obj()`` returns the dict."""

    def __init__(self) -> None:
        self._m: Manifest = {}

    def label(self, key: str, value: str) -> Self:
        self._m.setdefault("matchLabels", {})[key] = value
        return self

    def _expr(self, key: str, operator: str, values: Sequence[str] | None) -> Self:
        req: Manifest = {"key": key, "operator": operator}
        if values is not None:
            req["values"] = list(values)
        self._m.setdefault("matchExpressions", []).append(req)
        return self

    def in_(self, key: str, values: Sequence[str]) -> Self:
        return self._expr(key, "In", values)

    def not_in(self, key: str, values: Sequence[str]) -> Self:
        return self._expr(key, "NotIn", values)

    def exists(self, key: str) -> Self:
        return self._expr(key, "Exists", None)

    def not_exist(self, key: str) -> Self:
        return self._expr(key, "DoesNotExist", None)

    def obj(self) -> Manifest:
        return copy.deepcopy(self._m)


class NodeSelectorBuilder:
    """Builds a NodeSelector manifest (upstream ``st.MakeNodeSelector()``): each call adds one term (ORed)."""

    def __init__(self) -> None:
        self._terms: list[Manifest] = []

    def _term(self, key: str, operator: str, values: Sequence[str] | None, match_fields: bool) -> Self:
        req: Manifest = {"key": key, "operator": operator}
        if values is not None:
            req["values"] = list(values)
        self._terms.append({"matchFields" if match_fields else "matchExpressions": [req]})
        return self

    def in_(self, key: str, values: Sequence[str], match_fields: bool = False) -> Self:
        return self._term(key, "In", values, match_fields)

    def not_in(self, key: str, values: Sequence[str]) -> Self:
        return self._term(key, "NotIn", values, False)

    def exists(self, key: str) -> Self:
        return self._term(key, "Exists", None, False)

    def obj(self) -> Manifest:
        return {"nodeSelectorTerms": copy.deepcopy(self._terms)}


class _ObjectBuilder:
    """What the Pod and Node builders share: the manifest, its metadata and spec, labels and annotations,
    conditions, and the results (``manifest()``, ``clone()``)."""

    def __init__(self, manifest: Manifest) -> None:
        self._m: Manifest = manifest

    @property
    def _meta(self) -> Manifest:
        meta: Manifest = self._m["metadata"]
        return meta

    @property
    def _spec(self) -> Manifest:
        spec: Manifest = self._m["spec"]
        return spec

    def _status_part(self) -> Manifest:
        status: Manifest = self._m.setdefault("status", {})
        return status

    def name(self, name: str) -> Self:
        self._meta["name"] = name
        return self

    def uid(self, uid: str) -> Self:
        self._meta["uid"] = uid
        return self

    def label(self, key: str, value: str) -> Self:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> Self:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def annotations(self, annotations: Mapping[str, str]) -> Self:
        for k, v in annotations.items():
            self.annotation(k, v)
        return self

    def condition(self, type_: str, status: str, reason: str = "") -> Self:
        c: Manifest = {"type": type_, "status": status}
        if reason:
            c["reason"] = reason
        self._status_part().setdefault("conditions", []).append(c)
        return self

    def manifest(self) -> Manifest:
        """The manifest dict (a copy), as it would be written in YAML."""
        return copy.deepcopy(self._m)

    def clone(self) -> Self:
        b = copy.copy(self)
        b._m = self.manifest()
        return b


class PodBuilder(_ObjectBuilder):
    """Builds a v1 Pod. ``obj()`` gives the parsed :class:`~scheduling_framework.api.Pod`."""

    def __init__(self) -> None:
        super().__init__({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}})

    # plumbing ------------------------------------------------------------------------------------
    def _status(self) -> Manifest:
        return self._status_part()

    def _affinity(self, kind: str) -> Manifest:
        part: Manifest = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        return part

    def _add_container(self, prefix: str, field: str, image: str, resources: Manifest | None = None,
                       **extra: Any) -> Self:
        containers: list[Manifest] = self._spec.setdefault(field, [])
        c: Manifest = {"name": f"{prefix}{len(containers)}", "image": image}
        if resources:
            c["resources"] = resources
        c.update(extra)
        containers.append(c)
        return self

    # metadata ------------------------------------------------------------------------------------
    def generate_name(self, prefix: str) -> Self:
        self._meta["generateName"] = prefix
        return self

    def namespace(self, namespace: str) -> Self:
        self._meta["namespace"] = namespace
        return self

    def owner_reference(self, name: str, kind: str, api_version: str = "v1", uid: str = "",
                        controller: bool = True) -> Self:
        """Set the pod's owner (the controlling one by default), as upstream's ``OwnerReference``."""
        ref: Manifest = {"apiVersion": api_version, "kind": kind, "name": name}
        if uid:
            ref["uid"] = uid
        if controller:
            ref["controller"] = True
        self._meta["ownerReferences"] = [ref]
        return self

    def creation_timestamp(self, timestamp: str) -> Self:
        """An RFC 3339 timestamp such as ``"2024-01-01T00:00:00+00:00"``."""
        self._meta["creationTimestamp"] = timestamp
        return self

    def terminating(self, timestamp: str = "2024-01-01T00:00:00+00:00") -> Self:
        """Mark the pod as being deleted (metadata.deletionTimestamp)."""
        self._meta["deletionTimestamp"] = timestamp
        return self

    # containers and resources --------------------------------------------------------------------
    def container(self, image: str) -> Self:
        """Append a container named ``con<N>`` running ``image``."""
        return self._add_container("con", "containers", image)

    def req(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Append a container requesting these resources: ``req(cpu="1", memory="1Gi")``."""
        rl = resource_list(resources, **kwargs)
        if not rl:
            return self
        return self._add_container("con", "containers", PAUSE_IMAGE, {"requests": rl})

    def lim(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Append a container with only limits (API defaulting makes them its requests too)."""
        rl = resource_list(resources, **kwargs)
        if not rl:
            return self
        return self._add_container("con", "containers", PAUSE_IMAGE, {"limits": rl})

    def res(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Append a container whose requests and limits are both these resources."""
        rl = resource_list(resources, **kwargs)
        if not rl:
            return self
        return self._add_container("con", "containers", PAUSE_IMAGE, {"requests": rl, "limits": dict(rl)})

    def init_req(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Append an init container ``init-con<N>`` requesting (and limited to) these resources."""
        rl = resource_list(resources, **kwargs)
        if not rl:
            return self
        return self._add_container("init-con", "initContainers", PAUSE_IMAGE, {"requests": rl, "limits": dict(rl)})

    def sidecar_req(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Append a restartable init container (a sidecar, ``restartPolicy: Always``) with these resources."""
        rl = resource_list(resources, **kwargs)
        if not rl:
            return self
        return self._add_container("sidecar-con", "initContainers", PAUSE_IMAGE,
                                   {"requests": rl, "limits": dict(rl)}, restartPolicy="Always")

    def overhead(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        self._spec["overhead"] = resource_list(resources, **kwargs)
        return self

    def pod_resources(self, requests: Mapping[str, Quantityish] | None = None,
                      limits: Mapping[str, Quantityish] | None = None) -> Self:
        """Pod-level resources (``spec.resources``)."""
        r: Manifest = {}
        if requests:
            r["requests"] = resource_list(requests)
        if limits:
            r["limits"] = resource_list(limits)
        self._spec["resources"] = r
        return self

    def host_port(self, port: int, protocol: str | None = None, host_ip: str | None = None) -> Self:
        """Append a container named ``container`` that uses ``port`` on the host."""
        p: Manifest = {"containerPort": port, "hostPort": port}
        if protocol is not None:
            p["protocol"] = protocol
        if host_ip is not None:
            p["hostIP"] = host_ip
        containers: list[Manifest] = self._spec.setdefault("containers", [])
        containers.append({"name": "container", "image": PAUSE_IMAGE, "ports": [p]})
        return self

    # scheduling constraints ----------------------------------------------------------------------
    def node(self, node_name: str) -> Self:
        """``spec.nodeName``: the pod is bound to (running on) this node."""
        self._spec["nodeName"] = node_name
        return self

    def scheduler_name(self, name: str) -> Self:
        self._spec["schedulerName"] = name
        return self

    def priority(self, value: int) -> Self:
        self._spec["priority"] = value
        return self

    def priority_class_name(self, name: str) -> Self:
        self._spec["priorityClassName"] = name
        return self

    def preemption_policy(self, policy: str) -> Self:
        """``"PreemptLowerPriority"`` or ``"Never"``."""
        self._spec["preemptionPolicy"] = policy
        return self

    def node_selector(self, labels: Mapping[str, str]) -> Self:
        self._spec["nodeSelector"] = dict(labels)
        return self

    def toleration(self, key: str = "", value: str | None = None, effect: str | None = None,
                   operator: str | None = None, seconds: int | None = None) -> Self:
        """Tolerate a taint. The operator defaults to ``Exists`` without a value, ``Equal`` with one."""
        t: Manifest = {}
        if key:
            t["key"] = key
        t["operator"] = operator or ("Exists" if value is None else "Equal")
        if value is not None:
            t["value"] = value
        if effect is not None:
            t["effect"] = effect
        if seconds is not None:
            t["tolerationSeconds"] = seconds
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def node_affinity(self, required: Any = None) -> Self:
        """Set required node affinity to a NodeSelector (``make_node_selector()`` or its dict)."""
        sel = required.obj() if isinstance(required, NodeSelectorBuilder) else copy.deepcopy(required)
        self._affinity("nodeAffinity")["requiredDuringSchedulingIgnoredDuringExecution"] = sel
        return self

    def node_affinity_in(self, key: str, values: Sequence[str], match_fields: bool = False) -> Self:
        """Required node affinity: ``key In values`` (replaces any required node affinity, as upstream)."""
        return self.node_affinity(NodeSelectorBuilder().in_(key, values, match_fields))

    def node_affinity_not_in(self, key: str, values: Sequence[str]) -> Self:
        return self.node_affinity(NodeSelectorBuilder().not_in(key, values))

    def preferred_node_affinity(self, weight: int, key: str, values: Sequence[str], operator: str = "In") -> Self:
        """Append a preferred node affinity term ``key <operator> values`` with ``weight``."""
        prefs: list[Manifest] = self._affinity("nodeAffinity").setdefault(
            "preferredDuringSchedulingIgnoredDuringExecution", [])
        prefs.append({"weight": weight,
                      "preference": {"matchExpressions": [{"key": key, "operator": operator, "values": list(values)}]}})
        return self

    def _pod_affinity(self, kind: str, topology_key: str, selector: Any, preferred: bool, weight: int) -> Self:
        sel = _selector_dict(selector)
        term: Manifest = {"topologyKey": topology_key} if sel is None else {"labelSelector": sel,
                                                                            "topologyKey": topology_key}
        part = self._affinity(kind)
        if preferred:
            part.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        else:
            part.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        return self

    def pod_affinity(self, topology_key: str, selector: Any, preferred: bool = False, weight: int = 1) -> Self:
        """Append a pod affinity term (required, or preferred with ``weight``)."""
        return self._pod_affinity("podAffinity", topology_key, selector, preferred, weight)

    def pod_anti_affinity(self, topology_key: str, selector: Any, preferred: bool = False, weight: int = 1) -> Self:
        """Append a pod anti-affinity term (required, or preferred with ``weight``)."""
        return self._pod_affinity("podAntiAffinity", topology_key, selector, preferred, weight)

    def pod_affinity_in(self, label_key: str, topology_key: str, values: Sequence[str], preferred: bool = False,
                        weight: int = 1) -> Self:
        return self.pod_affinity(topology_key, LabelSelectorBuilder().in_(label_key, values), preferred, weight)

    def pod_anti_affinity_in(self, label_key: str, topology_key: str, values: Sequence[str],
                             preferred: bool = False, weight: int = 1) -> Self:
        return self.pod_anti_affinity(topology_key, LabelSelectorBuilder().in_(label_key, values), preferred, weight)

    def pod_affinity_exists(self, label_key: str, topology_key: str, preferred: bool = False,
                            weight: int = 1) -> Self:
        return self.pod_affinity(topology_key, LabelSelectorBuilder().exists(label_key), preferred, weight)

    def pod_anti_affinity_exists(self, label_key: str, topology_key: str, preferred: bool = False,
                                 weight: int = 1) -> Self:
        return self.pod_anti_affinity(topology_key, LabelSelectorBuilder().exists(label_key), preferred, weight)

    def spread_constraint(self, max_skew: int, topology_key: str, when_unsatisfiable: str = "DoNotSchedule",
                          selector: Any = None, min_domains: int | None = None,
                          node_affinity_policy: str | None = None, node_taints_policy: str | None = None,
                          match_label_keys: Sequence[str] | None = None) -> Self:
        """Append a topology spread constraint (upstream's ``SpreadConstraint``)."""
        c: Manifest = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when_unsatisfiable}
        sel = _selector_dict(selector)
        if sel is not None:
            c["labelSelector"] = sel
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def scheduling_gates(self, *names: str) -> Self:
        gates: list[Manifest] = self._spec.setdefault("schedulingGates", [])
        gates.extend({"name": n} for n in names)
        return self

    def workload_ref(self, name: str, pod_group: str, replica_key: str = "") -> Self:
        """``spec.workloadRef``: the pod belongs to pod group ``pod_group`` of Workload ``name`` (same namespace)."""
        ref: Manifest = {"name": name, "podGroup": pod_group}
        if replica_key:
            ref["podGroupReplicaKey"] = replica_key
        self._spec["workloadRef"] = ref
        return self

    def scheduling_group(self, pod_group: str) -> Self:
        """``spec.schedulingGroup.podGroupName`` (Kubernetes 1.36+): the pod belongs to PodGroup ``pod_group``."""
        self._spec["schedulingGroup"] = {"podGroupName": pod_group}
        return self

    def pvc(self, claim_name: str) -> Self:
        """Append a volume using the PersistentVolumeClaim ``claim_name`` (the volume has the same name)."""
        self._spec.setdefault("volumes", []).append({"name": claim_name,
                                                     "persistentVolumeClaim": {"claimName": claim_name}})
        return self

    def volume(self, volume: Mapping[str, Any]) -> Self:
        """Append a volume given as its manifest dict."""
        self._spec.setdefault("volumes", []).append(copy.deepcopy(dict(volume)))
        return self

    def host_network(self, enabled: bool = True) -> Self:
        self._spec["hostNetwork"] = enabled
        return self

    # status --------------------------------------------------------------------------------------
    def nominated_node_name(self, node_name: str) -> Self:
        self._status()["nominatedNodeName"] = node_name
        return self

    def phase(self, phase: str) -> Self:
        self._status()["phase"] = phase
        return self

    def start_time(self, timestamp: str) -> Self:
        self._status()["startTime"] = timestamp
        return self

    # results -------------------------------------------------------------------------------------
    def obj(self) -> Pod:
        """The parsed Pod (``Pod.from_dict(self.manifest())``)."""
        return Pod.from_dict(self.manifest())

    def __repr__(self) -> str:
        return f"make_pod() for {self._meta.get('namespace', 'default')}/{self._meta.get('name', '<unnamed>')}"


class NodeBuilder(_ObjectBuilder):
    """Builds a v1 Node. ``obj()`` gives the parsed :class:`~scheduling_framework.api.Node`.

    A new node has capacity ``pods: 110`` and nothing else; allocatable defaults to capacity.
    """

    def __init__(self) -> None:
        super().__init__({"apiVersion": "v1", "kind": "Node", "metadata": {}, "spec": {},
                          "status": {"capacity": {"pods": str(DEFAULT_NODE_PODS)}}})

    @property
    def _status(self) -> Manifest:
        status: Manifest = self._m["status"]
        return status

    def zone(self, zone: str, region: str | None = None) -> Self:
        """Label the node with ``topology.kubernetes.io/zone`` (and ``/region`` when given)."""
        self.label(ZONE_LABEL, zone)
        if region is not None:
            self.label(REGION_LABEL, region)
        return self

    def hostname_label(self) -> Self:
        """Label the node ``kubernetes.io/hostname=<its name>``, as the kubelet does (call after ``name``)."""
        return self.label(HOSTNAME_LABEL, str(self._meta.get("name", "")))

    def capacity(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Set the capacity: ``capacity(cpu="4", memory="8Gi", pods=110)``; ``pods`` defaults to 110.

        Allocatable equals capacity unless :meth:`allocatable` sets it.
        """
        rl = resource_list(resources, **kwargs)
        rl.setdefault("pods", str(DEFAULT_NODE_PODS))
        self._status["capacity"] = rl
        return self

    def allocatable(self, resources: Mapping[str, Quantityish] | None = None, /, **kwargs: Quantityish) -> Self:
        """Set allocatable explicitly (when it differs from capacity)."""
        self._status["allocatable"] = resource_list(resources, **kwargs)
        return self

    def image(self, name: str, size_bytes: int, *more_names: str) -> Self:
        """Add an image present on the node, known by ``name`` (and ``more_names``), of ``size_bytes``."""
        self._status.setdefault("images", []).append({"names": [name, *more_names], "sizeBytes": size_bytes})
        return self

    def images(self, images: Mapping[str, int]) -> Self:
        for name, size in images.items():
            self.image(name, size)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        t: Manifest = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._spec.setdefault("taints", []).append(t)
        return self

    def unschedulable(self, unschedulable: bool = True) -> Self:
        self._spec["unschedulable"] = unschedulable
        return self

    def declared_features(self, *features: str) -> Self:
        """Set ``status.declaredFeatures`` (the kubelet publishes them sorted)."""
        self._status["declaredFeatures"] = list(features)
        return self

    def obj(self) -> Node:
        return Node.from_dict(self.manifest())

    def __repr__(self) -> str:
        return f"make_node() for {self._meta.get('name', '<unnamed>')}"


def make_pod() -> PodBuilder:
    """A Pod builder: ``make_pod().name("p").req(cpu="1").obj()``."""
    return PodBuilder()


def make_node() -> NodeBuilder:
    """A Node builder: ``make_node().name("n1").capacity(cpu="4", memory="8Gi").obj()``."""
    return NodeBuilder()


def make_label_selector() -> LabelSelectorBuilder:
    return LabelSelectorBuilder()


def make_node_selector() -> NodeSelectorBuilder:
    return NodeSelectorBuilder()


# Any: an object of a Python Kubernetes client (V1Pod, lightkube, kr8s; see scheduling_framework.api.clients)
PodLike: TypeAlias = Pod | PodBuilder | Mapping[str, Any] | Any
NodeLike: TypeAlias = Node | NodeBuilder | Mapping[str, Any] | Any


def as_pod(pod: PodLike) -> Pod:
    """A Pod from a Pod, a builder, a manifest dict or a client object (UnsupportedObjectError, a TypeError,
    for anything else)."""
    if isinstance(pod, Pod):
        return pod
    if isinstance(pod, PodBuilder):
        return pod.obj()
    return Pod.from_dict(pod)


def as_node(node: NodeLike) -> Node:
    """A Node from a Node, a builder, a manifest dict or a client object (UnsupportedObjectError otherwise)."""
    if isinstance(node, Node):
        return node
    if isinstance(node, NodeBuilder):
        return node.obj()
    return Node.from_dict(node)


def node_info(node: NodeLike | None, *pods: PodLike) -> NodeInfo:
    """A NodeInfo of ``node`` with ``pods`` on it (as upstream's ``NewNodeInfo(pods...)`` + ``SetNode``).

    The pods are counted on the node whatever their ``spec.nodeName`` says.
    """
    return NodeInfo(None if node is None else as_node(node), [as_pod(p) for p in pods])


def make_snapshot(nodes: Iterable[NodeLike], pods: Iterable[PodLike] = ()) -> Snapshot:
    """A Snapshot of ``nodes``; pods with ``spec.nodeName`` are placed on their node, the rest ignored."""
    return Snapshot.from_objects([as_node(n) for n in nodes], [as_pod(p) for p in pods])
