"""Scale-down drain rules, node utilization and eligibility, with cluster-autoscaler's semantics.

Ported from cluster-autoscaler (``simulator/drainability/rules``, ``simulator/drain.go``,
``simulator/utilization/info.go``, ``core/scaledown/eligibility``) so that what-if tools built on
:class:`~scheduling_framework.simulation.Simulator` answer "may this node be removed?" the way CA does:

- :func:`pods_to_move`: which pods of a node a drain must reschedule, which are DaemonSet pods, or which
  pod blocks the drain and why (CA's ``BlockingPodReason`` names);
- :func:`utilization`: cpu and memory (or GPU) requests over allocatable, as CA's ``utilization.Calculate``;
- :func:`eligible`: whether a node is a scale-down candidate (annotation, deletion taint, readiness,
  utilization threshold), as CA's ``eligibility.Checker``.

Controllers. CA reads a pod's controller through listers. Here ``controllers`` plays the listers: None means
CA without listers (the ReplicaCount rule does not run, any owner kind counts as present); a collection of
objects (a cluster dump's ReplicationControllers, ReplicaSets, Jobs, StatefulSets and DaemonSets) is looked
up by kind, namespace and name, and a controller missing from it is what CA sees when its lister answers
"not found": the pod blocks with ``ControllerNotFound`` (for a StatefulSet too, and for an ``apps``
DaemonSet). Owners of other kinds are never looked up, as in CA.

PDBs. ``disruptionsAllowed`` is read from ``status.disruptionsAllowed`` (absent: 0), as CA reads it; a PDB
without ``spec.selector`` matches no pod, an empty selector every pod of its namespace.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scheduling_framework.api import Node, Pod
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.resources import pod_requests
from scheduling_framework.api.selectors import LabelSelector
from scheduling_framework.state.node_info import NodeInfo

__all__ = [
    "DAEMONSET_POD_ANNOTATION", "MIRROR_POD_ANNOTATION", "SAFE_TO_EVICT_ANNOTATION",
    "SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION", "SCALE_DOWN_DISABLED_ANNOTATION", "TO_BE_DELETED_TAINT",
    "RULES", "BlockingPod", "BlockingReason", "Controllers", "DrainContext", "DrainOptions", "Outcome", "Pdb",
    "Rule", "Status", "being_deleted",
    "UnremovableReason", "Utilization", "UtilizationError", "default_rules", "drainable", "eligible",
    "is_daemonset_pod", "is_mirror_pod", "is_pod_long_terminating", "is_pod_terminal", "node_ready",
    "pods_to_move", "utilization",
]

SAFE_TO_EVICT_ANNOTATION = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
DAEMONSET_POD_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
SCALE_DOWN_DISABLED_ANNOTATION = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"

#: a terminating pod past its grace period by this much counts as gone (CA's PodLongTerminatingExtraThreshold)
POD_LONG_TERMINATING_EXTRA_THRESHOLD = timedelta(seconds=30)
DEFAULT_TERMINATION_GRACE_PERIOD = 30
#: CA's MaxKubernetesEmptyNodeDeletionTime: a deletion taint younger than this marks a node being deleted
MAX_KUBERNETES_EMPTY_NODE_DELETION_TIME = timedelta(minutes=3)
NVIDIA_GPU = "nvidia.com/gpu"


class BlockingReason(enum.Enum):
    """Why a pod blocks a node's scale-down (CA's ``drain.BlockingPodReason``)."""

    NoReason = "NoReason"
    ControllerNotFound = "ControllerNotFound"
    MinReplicasReached = "MinReplicasReached"
    NotReplicated = "NotReplicated"
    LocalStorageRequested = "LocalStorageRequested"
    NotSafeToEvictAnnotation = "NotSafeToEvictAnnotation"
    UnmovableKubeSystemPod = "UnmovableKubeSystemPod"
    NotEnoughPdb = "NotEnoughPdb"
    UnexpectedError = "UnexpectedError"


class Outcome(enum.Enum):
    """What a rule decided for one pod (CA's ``drainability.OutcomeType``)."""

    UNDEFINED = "Undefined"  # no decision: the next rule decides
    DRAIN_OK = "DrainOk"  # the pod is evicted with the node
    BLOCK_DRAIN = "BlockDrain"  # the node cannot be drained
    SKIP_DRAIN = "SkipDrain"  # the pod neither blocks nor moves (mirror and long-terminating pods)


@dataclass(frozen=True)
class Status:
    """A rule's decision. ``overrides``: outcomes of later rules this status wins over (CA's Overrides)."""

    outcome: Outcome = Outcome.UNDEFINED
    reason: BlockingReason = BlockingReason.NoReason
    detail: str = ""
    overrides: tuple[Outcome, ...] = ()


UNDEFINED = Status()
DRAIN_OK = Status(Outcome.DRAIN_OK)
SKIP_DRAIN = Status(Outcome.SKIP_DRAIN)


def blocked(reason: BlockingReason, detail: str) -> Status:
    return Status(Outcome.BLOCK_DRAIN, reason, detail)


@dataclass(frozen=True)
class BlockingPod:
    """The pod that blocks a drain: its ``namespace/name``, CA's reason, the rule that decided and a detail."""

    pod: str
    reason: BlockingReason
    rule: str
    detail: str


@dataclass(frozen=True)
class DrainOptions:
    """cluster-autoscaler's scale-down flags, with its defaults; :meth:`from_flags` reads them by flag name."""

    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    min_replica_count: int = 0
    scale_down_utilization_threshold: float = 0.5
    scale_down_gpu_utilization_threshold: float = 0.5
    ignore_daemonsets_utilization: bool = False
    ignore_mirror_pods_utilization: bool = False
    scale_down_unready_enabled: bool = True
    max_cloud_provider_node_deletion_time: timedelta = timedelta(minutes=5)
    #: the cloud provider's GPU node label (CA's GPULabel); a node with it, or with GPU allocatable, is a GPU node
    gpu_label: str = ""
    gpu_resource_name: str = NVIDIA_GPU

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> DrainOptions:
        """Options from CA flag names (``skip-nodes-with-system-pods``, ``scale-down-utilization-threshold``, ...).

        ``max-cloud-provider-node-deletion-time`` takes seconds or a timedelta.
        """
        known = {f.replace("_", "-"): f for f in cls.__dataclass_fields__}
        kw: dict[str, Any] = {}
        for flag, value in flags.items():
            name = known.get(flag.lstrip("-"))
            if name is None:
                raise ValueError(f"unknown cluster-autoscaler flag: {flag}")
            if name == "max_cloud_provider_node_deletion_time" and not isinstance(value, timedelta):
                value = timedelta(seconds=float(value))
            kw[name] = value
        return cls(**kw)


# --- pods ------------------------------------------------------------------------------------


def is_mirror_pod(pod: Pod) -> bool:
    """A static pod's API mirror (CA's ``IsMirrorPod``)."""
    return MIRROR_POD_ANNOTATION in pod.metadata.annotations


def is_daemonset_pod(pod: Pod) -> bool:
    """Controlled by a DaemonSet, or annotated as a DaemonSet pod by a custom controller (CA's ``IsDaemonSetPod``)."""
    ref = pod.metadata.controller_ref()
    if ref is not None and ref.kind == "DaemonSet":
        return True
    return pod.metadata.annotations.get(DAEMONSET_POD_ANNOTATION) == "true"


def _spec_field(pod: Pod, name: str) -> Any:
    spec = pod.raw_manifest().get("spec")
    return spec.get(name) if isinstance(spec, Mapping) else None


def is_pod_terminal(pod: Pod) -> bool:
    """Succeeded or failed for good: it will not run again (CA's ``IsPodTerminal``)."""
    restart = _spec_field(pod, "restartPolicy") or "Always"
    phase = pod.status.phase
    if restart == "Never" and phase in ("Succeeded", "Failed"):
        return True
    if restart == "OnFailure" and phase == "Succeeded":
        return True
    return phase == "Failed"


def _as_utc(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def is_pod_long_terminating(pod: Pod, now: datetime) -> bool:
    """Deleted longer ago than its grace period plus 30s: CA treats it as already gone."""
    ts = pod.metadata.deletion_timestamp
    if ts is None:
        return False
    grace = _spec_field(pod, "terminationGracePeriodSeconds")
    seconds = DEFAULT_TERMINATION_GRACE_PERIOD if grace is None else int(grace)
    return _as_utc(ts) + timedelta(seconds=seconds) + POD_LONG_TERMINATING_EXTRA_THRESHOLD < _as_utc(now)


def _has_blocking_local_storage(pod: Pod) -> bool:
    """A hostPath or disk-backed emptyDir volume not listed in the safe-to-evict-local-volumes annotation."""
    listed = pod.metadata.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES_ANNOTATION, "")
    safe = set(listed.split(",")) if listed else set()
    for v in pod.spec.volumes:
        local = v.source_kind == "hostPath" or (v.source_kind == "emptyDir" and v.source.get("medium") != "Memory")
        if local and v.name not in safe:
            return True
    return False


# --- PDBs and controllers ------------------------------------------------------------------------


@dataclass
class Pdb:
    """A PodDisruptionBudget as the drain rules read it: namespace, selector and disruptions allowed."""

    name: str
    namespace: str
    selector: LabelSelector | None
    disruptions_allowed: int

    @classmethod
    def from_object(cls, obj: KubeObject | Mapping[str, Any]) -> Pdb:
        o = obj if isinstance(obj, KubeObject) else KubeObject.from_dict(obj, "PodDisruptionBudget")
        sel = o.spec.get("selector")
        selector = None if sel is None else LabelSelector.from_dict(sel, "spec.selector")
        return cls(o.name, o.namespace, selector, int(o.status.get("disruptionsAllowed") or 0))

    def matches(self, pod: Pod) -> bool:
        return (pod.namespace == self.namespace and self.selector is not None
                and self.selector.matches(pod.metadata.labels))


_CONTROLLER_KINDS = frozenset({"ReplicationController", "ReplicaSet", "Job", "StatefulSet", "DaemonSet"})


class Controllers:
    """The controller objects of a dump, by (kind, namespace, name): CA's listers."""

    def __init__(self, objects: Iterable[KubeObject | Mapping[str, Any]]) -> None:
        self._by_key: dict[tuple[str, str, str], KubeObject] = {}
        for obj in objects:
            o = obj if isinstance(obj, KubeObject) else KubeObject.from_dict(obj)
            if o.kind in _CONTROLLER_KINDS:
                self._by_key[(o.kind, o.namespace, o.name)] = o

    def get(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        return self._by_key.get((kind, namespace, name))


@dataclass
class DrainContext:
    """What the rules read besides the pod: PDBs, the controllers (None: no listers) and the time."""

    pdbs: list[Pdb] = field(default_factory=list)
    controllers: Controllers | None = None
    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def matching_pdbs(self, pod: Pod) -> list[Pdb]:
        return [p for p in self.pdbs if p.matches(pod)]


# --- rules -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A named drainability rule: decides for one pod or returns an undefined status."""

    name: str
    check: Callable[[DrainContext, Pod], Status]

    def __call__(self, ctx: DrainContext, pod: Pod) -> Status:
        return self.check(ctx, pod)


def _mirror(ctx: DrainContext, pod: Pod) -> Status:
    return SKIP_DRAIN if is_mirror_pod(pod) else UNDEFINED


def _long_terminating(ctx: DrainContext, pod: Pod) -> Status:
    return SKIP_DRAIN if is_pod_long_terminating(pod, ctx.now) else UNDEFINED


def _replicas(obj: KubeObject) -> int | None:
    r = obj.spec.get("replicas")
    return None if r is None else int(r)


def _replica_count(min_replica_count: int) -> Callable[[DrainContext, Pod], Status]:
    """The pod's controller must exist, and an RC / RS must want at least ``min_replica_count`` replicas."""

    def check(ctx: DrainContext, pod: Pod) -> Status:
        if ctx.controllers is None:
            return UNDEFINED
        ref = pod.metadata.controller_ref()
        if ref is None:
            return UNDEFINED
        ns, kind = pod.namespace, ref.kind
        where = f"{pod.namespace}/{pod.name}"
        # CA's order: a ReplicationController first, then DaemonSet pods, then Job, ReplicaSet, StatefulSet
        if kind == "ReplicationController" or (kind == "ReplicaSet" and not is_daemonset_pod(pod)):
            obj = ctx.controllers.get(kind, ns, ref.name)
            if obj is None:
                return blocked(BlockingReason.ControllerNotFound,
                               f"replication controller for {where} is not available: {kind} {ref.name} not found")
            replicas = _replicas(obj)
            if replicas is not None and replicas < min_replica_count:
                return blocked(BlockingReason.MinReplicasReached,
                               f"replication controller for {where} has too few replicas spec: {replicas} "
                               f"min: {min_replica_count}")
            return UNDEFINED
        if is_daemonset_pod(pod):
            group = ref.api_version.split("/")[0] if "/" in ref.api_version else ""
            if group != "apps" or kind != "DaemonSet":
                return UNDEFINED  # CA has no lister for other DaemonSet groups or kinds
            if ctx.controllers.get("DaemonSet", ns, ref.name) is None:
                return blocked(BlockingReason.ControllerNotFound,
                               f"daemonset for {where} is not present: DaemonSet {ref.name} not found")
            return UNDEFINED
        if kind in ("Job", "StatefulSet") and ctx.controllers.get(kind, ns, ref.name) is None:
            what = "job" if kind == "Job" else "statefulset"
            return blocked(BlockingReason.ControllerNotFound,
                           f"{what} for {where} is not available: {kind} {ref.name} not found")
        return UNDEFINED

    return check


def _daemonset(ctx: DrainContext, pod: Pod) -> Status:
    return DRAIN_OK if is_daemonset_pod(pod) else UNDEFINED


def _safe_to_evict(ctx: DrainContext, pod: Pod) -> Status:
    return DRAIN_OK if pod.metadata.annotations.get(SAFE_TO_EVICT_ANNOTATION) == "true" else UNDEFINED


def _terminal(ctx: DrainContext, pod: Pod) -> Status:
    return DRAIN_OK if is_pod_terminal(pod) else UNDEFINED


_REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})


def _replicated(skip_nodes_with_custom_controller_pods: bool) -> Callable[[DrainContext, Pod], Status]:
    """A pod without a controller blocks; with ``skip_nodes_with_custom_controller_pods`` so does one whose
    controller is not a ReplicationController, Job, ReplicaSet or StatefulSet."""

    def check(ctx: DrainContext, pod: Pod) -> Status:
        ref = pod.metadata.controller_ref()
        replicated = ref is not None
        if skip_nodes_with_custom_controller_pods:
            replicated = ref is not None and ref.kind in _REPLICATED_KINDS
        if not replicated:
            return blocked(BlockingReason.NotReplicated, f"{pod.namespace}/{pod.name} is not replicated")
        return UNDEFINED

    return check


def _system(ctx: DrainContext, pod: Pod) -> Status:
    if pod.namespace == "kube-system" and not ctx.matching_pdbs(pod):
        return blocked(BlockingReason.UnmovableKubeSystemPod,
                       f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {pod.name}")
    return UNDEFINED


def _not_safe_to_evict(ctx: DrainContext, pod: Pod) -> Status:
    if pod.metadata.annotations.get(SAFE_TO_EVICT_ANNOTATION) == "false":
        return blocked(BlockingReason.NotSafeToEvictAnnotation,
                       f"pod annotated as not safe to evict present: {pod.name}")
    return UNDEFINED


def _local_storage(ctx: DrainContext, pod: Pod) -> Status:
    if _has_blocking_local_storage(pod):
        return blocked(BlockingReason.LocalStorageRequested, f"pod with local storage present: {pod.name}")
    return UNDEFINED


def _pdb(ctx: DrainContext, pod: Pod) -> Status:
    for p in ctx.matching_pdbs(pod):
        if p.disruptions_allowed < 1:
            return blocked(BlockingReason.NotEnoughPdb,
                           f"not enough pod disruption budget to move {pod.namespace}/{pod.name} "
                           f"(PodDisruptionBudget {p.namespace}/{p.name})")
    return UNDEFINED


def default_rules(options: DrainOptions) -> list[Rule]:
    """CA's default rule list, in its order; rules turned off by the options are left out."""
    o = options
    rules: list[tuple[Rule, bool]] = [
        (Rule("Mirror", _mirror), True),
        (Rule("LongTerminating", _long_terminating), True),
        (Rule("ReplicaCount", _replica_count(o.min_replica_count)), o.skip_nodes_with_custom_controller_pods),
        # decisions that let the pod go
        (Rule("DaemonSet", _daemonset), True),
        (Rule("SafeToEvict", _safe_to_evict), True),
        (Rule("Terminal", _terminal), True),
        # decisions that block
        (Rule("Replicated", _replicated(o.skip_nodes_with_custom_controller_pods)), True),
        (Rule("System", _system), o.skip_nodes_with_system_pods),
        (Rule("NotSafeToEvict", _not_safe_to_evict), True),
        (Rule("LocalStorage", _local_storage), o.skip_nodes_with_local_storage),
        (Rule("PDB", _pdb), True),
    ]
    return [r for r, on in rules if on]


#: every default rule by name, with the default options (for running one rule alone)
RULES: dict[str, Callable[[DrainOptions], Rule]] = {
    "Mirror": lambda o: Rule("Mirror", _mirror),
    "LongTerminating": lambda o: Rule("LongTerminating", _long_terminating),
    "ReplicaCount": lambda o: Rule("ReplicaCount", _replica_count(o.min_replica_count)),
    "DaemonSet": lambda o: Rule("DaemonSet", _daemonset),
    "SafeToEvict": lambda o: Rule("SafeToEvict", _safe_to_evict),
    "Terminal": lambda o: Rule("Terminal", _terminal),
    "Replicated": lambda o: Rule("Replicated", _replicated(o.skip_nodes_with_custom_controller_pods)),
    "System": lambda o: Rule("System", _system),
    "NotSafeToEvict": lambda o: Rule("NotSafeToEvict", _not_safe_to_evict),
    "LocalStorage": lambda o: Rule("LocalStorage", _local_storage),
    "PDB": lambda o: Rule("PDB", _pdb),
}


def drainable(rules: Sequence[Rule], ctx: DrainContext, pod: Pod) -> tuple[Status, str]:
    """The first decision of ``rules`` for ``pod`` and the rule that made it (CA's ``Rules.Drainable``).

    A status with ``overrides`` does not end the walk: it is kept aside, and wins over a later rule whose
    outcome it lists (the first kept status that lists it wins).
    """
    kept: list[tuple[str, Status]] = []
    for r in rules:
        st = r(ctx, pod)
        if st.overrides:
            kept.append((r.name, st))
            continue
        for name, k in kept:
            if st.outcome in k.overrides:
                return k, name
        if st.outcome is not Outcome.UNDEFINED:
            return st, r.name
    return UNDEFINED, ""


def _pdbs(pdbs: Iterable[Pdb | KubeObject | Mapping[str, Any]]) -> list[Pdb]:
    return [p if isinstance(p, Pdb) else Pdb.from_object(p) for p in pdbs]


def pods_to_move(node_pods: Iterable[Pod], pdbs: Iterable[Pdb | KubeObject | Mapping[str, Any]] = (),
                 options: DrainOptions | None = None, *,
                 controllers: Iterable[KubeObject | Mapping[str, Any]] | None = None,
                 now: datetime | None = None, extra_rules: Sequence[Rule] = (),
                 ) -> tuple[list[Pod], list[Pod], BlockingPod | None]:
    """The pods a drain of a node must reschedule, its DaemonSet pods, or the first pod that blocks it.

    CA's ``GetPodsToMove``: each pod goes through ``extra_rules`` then :func:`default_rules`; a blocked pod
    ends the walk (nothing is returned to move), a skipped pod (mirror, long terminating) is in neither list.
    ``controllers``: see the module docstring (None: no controller lookups).
    """
    opts = options or DrainOptions()
    ctx = DrainContext(_pdbs(pdbs), None if controllers is None else Controllers(controllers),
                       now if now is not None else datetime.now(UTC))
    rules = [*extra_rules, *default_rules(opts)]
    to_move: list[Pod] = []
    ds_pods: list[Pod] = []
    for pod in node_pods:
        st, rule = drainable(rules, ctx, pod)
        if st.outcome is Outcome.BLOCK_DRAIN:
            return [], [], BlockingPod(pod.key, st.reason, rule, st.detail)
        if st.outcome in (Outcome.UNDEFINED, Outcome.DRAIN_OK):
            (ds_pods if is_daemonset_pod(pod) else to_move).append(pod)
    return to_move, ds_pods, None


# --- utilization --------------------------------------------------------------------------------


class UtilizationError(ValueError):
    """The node lacks allocatable of a resource utilization divides by (CA's Calculate error)."""


@dataclass(frozen=True)
class Utilization:
    """CA's ``utilization.Info``: per-resource ratios, the highest one and its resource name."""

    cpu: float = 0.0
    memory: float = 0.0
    gpu: float = 0.0
    resource_name: str = ""
    utilization: float = 0.0


def _is_gpu_node(node: Node, options: DrainOptions) -> bool:
    if options.gpu_label and options.gpu_label in node.metadata.labels:
        return True
    q = node.status.allocatable.get(options.gpu_resource_name)
    return q is not None and q.milli_value() != 0


def _resource_utilization(ni: NodeInfo, node: Node, resource: str, options: DrainOptions, now: datetime) -> float:
    alloc = node.status.allocatable.get(resource)
    if alloc is None:
        raise UtilizationError(f"failed to get {resource} from {node.name}")
    if alloc.milli_value() == 0:
        raise UtilizationError(f"{resource} is 0 at {node.name}")
    requested = 0
    factored_out = 0  # DaemonSet / mirror pods' requests, taken off allocatable when ignored
    for pi in ni.pods:
        pod = pi.pod
        q = pod_requests(pod).get(resource)
        value = 0 if q is None else q.milli_value()
        if (options.ignore_daemonsets_utilization and is_daemonset_pod(pod)) or (
                options.ignore_mirror_pods_utilization and is_mirror_pod(pod)):
            factored_out += value
            continue
        if is_pod_long_terminating(pod, now):
            continue
        requested += value
    return requested / (alloc.milli_value() - factored_out)


def utilization(node_info: NodeInfo, options: DrainOptions | None = None, now: datetime | None = None
                ) -> Utilization:
    """A node's utilization as CA computes it: requests over allocatable.

    GPU nodes (``options.gpu_label`` set on the node, or GPU allocatable) are judged by GPU alone (0 when
    the GPU is not ready, i.e. has no allocatable); other nodes by the higher of cpu and memory. With
    ``ignore_daemonsets_utilization`` / ``ignore_mirror_pods_utilization`` those pods' requests are taken off
    both sides; long-terminating pods never count. Raises :class:`UtilizationError` when the node lacks cpu
    or memory allocatable (CA's error; its eligibility check then goes on with a zero utilization).
    """
    opts = options or DrainOptions()
    t = now if now is not None else datetime.now(UTC)
    node = node_info.node
    if node is None:
        raise UtilizationError("node info without a node")
    if _is_gpu_node(node, opts):
        name = opts.gpu_resource_name
        try:
            g = _resource_utilization(node_info, node, name, opts, t)
        except UtilizationError:
            return Utilization(resource_name=name)
        return Utilization(gpu=g, resource_name=name, utilization=g)
    cpu = _resource_utilization(node_info, node, "cpu", opts, t)
    mem = _resource_utilization(node_info, node, "memory", opts, t)
    if cpu > mem:
        return Utilization(cpu, mem, resource_name="cpu", utilization=cpu)
    return Utilization(cpu, mem, resource_name="memory", utilization=mem)


# --- eligibility ---------------------------------------------------------------------------------


class UnremovableReason(enum.Enum):
    """Why a node is not a scale-down candidate (CA's ``simulator.UnremovableReason``, the ones checked here)."""

    NoReason = "NoReason"
    CurrentlyBeingDeleted = "CurrentlyBeingDeleted"
    ScaleDownDisabledAnnotation = "ScaleDownDisabledAnnotation"
    ScaleDownUnreadyDisabled = "ScaleDownUnreadyDisabled"
    NotUnderutilized = "NotUnderutilized"


def node_ready(node: Node) -> bool:
    """CA's readiness: Ready condition True, no disk pressure or network trouble, no not-ready taint."""
    ready_found, ready = False, True
    for c in node.status.conditions:
        if c.type == "Ready":
            ready_found = True
            if c.status in ("False", "Unknown"):
                ready = False
        elif c.type in ("DiskPressure", "NetworkUnavailable") and c.status == "True":
            ready = False
    bad_taints = ("node.kubernetes.io/not-ready", "node.kubernetes.io/disk-pressure",
                  "node.kubernetes.io/network-unavailable")
    if any(t.key in bad_taints for t in node.spec.taints):
        ready = False
    return ready_found and ready


def _being_deleted(node: Node, options: DrainOptions, now: datetime) -> bool:
    for t in node.spec.taints:
        if t.key == TO_BE_DELETED_TAINT:
            try:
                since = datetime.fromtimestamp(int(t.value), UTC)
            except ValueError:
                return False  # CA: an unparsable taint value gives no deletion time
            age = _as_utc(now) - since
            return age < options.max_cloud_provider_node_deletion_time or age < MAX_KUBERNETES_EMPTY_NODE_DELETION_TIME
    return False


def being_deleted(node: Node, options: DrainOptions | None = None, now: datetime | None = None) -> bool:
    """Whether cluster-autoscaler is deleting the node (its ToBeDeletedByClusterAutoscaler taint, recent enough)."""
    return _being_deleted(node, options or DrainOptions(), now if now is not None else datetime.now(UTC))


def eligible(node: Node, utilization: Utilization | None, options: DrainOptions | None = None,
             now: datetime | None = None) -> tuple[bool, UnremovableReason]:
    """Whether ``node`` is a scale-down candidate, and why not (CA's eligibility checks, in its order).

    ``utilization`` None stands for CA's failed computation, which it logs and treats as zero. Node group
    checks (is the node autoscaled) are the caller's. GPU nodes use the GPU threshold.
    """
    opts = options or DrainOptions()
    t = now if now is not None else datetime.now(UTC)
    if _being_deleted(node, opts, t):
        return False, UnremovableReason.CurrentlyBeingDeleted
    if node.metadata.annotations.get(SCALE_DOWN_DISABLED_ANNOTATION) == "true":
        return False, UnremovableReason.ScaleDownDisabledAnnotation
    if not opts.scale_down_unready_enabled and not node_ready(node):
        return False, UnremovableReason.ScaleDownUnreadyDisabled
    threshold = (opts.scale_down_gpu_utilization_threshold if _is_gpu_node(node, opts)
                 else opts.scale_down_utilization_threshold)
    value = utilization.utilization if utilization is not None else 0.0
    if value >= threshold:
        return False, UnremovableReason.NotUnderutilized
    return True, UnremovableReason.NoReason
