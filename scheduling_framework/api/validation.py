"""API validation of Pods and Nodes: the part of the API server's checks that scheduling decisions rely on.

A real cluster never holds an object that fails these checks, so a dump never does either; a hand-written
file can, and then the scheduler would compute with nonsense (a negative request is free capacity, a
preferred term of weight 0 or 1,000 skews scores). The checks and messages follow
``pkg/apis/core/validation`` (resources, ports, affinity weights, topology spread constraints, taints,
tolerations); each problem is one ``field.Error``-style line with its field path, and every problem of an
object is returned, not only the first.

Objects built in code (``make_pod``, ``Pod.from_dict``) are not validated: plugin tests build deliberately
odd objects. Loading a cluster (``load_cluster``, ``cluster_from_text``, the CLI) validates every Pod and Node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduling_framework.api._field import duplicate, invalid, not_supported, required
from scheduling_framework.api.declared_features import declared_features_errors, pod_feature_use_errors
from scheduling_framework.api.names import is_qualified_name, is_valid_label_value
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Container, Pod, PodSpec, ResourceRequirements
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resources import is_extended_resource_name, is_native_resource
from scheduling_framework.api.selectors import PreferredSchedulingTerm
from scheduling_framework.api.taints import TAINT_EFFECTS, Taint, Toleration

_NEGATIVE = "must be greater than or equal to 0"
_NOT_POSITIVE = "must be greater than zero"
_PORT_RANGE = "must be between 1 and 65535, inclusive"
_WEIGHT_RANGE = "must be in the range 1-100"
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_NODE_POLICIES = ("Honor", "Ignore")


def validate_pod(pod: Pod) -> list[str]:
    """Every problem with ``pod`` that would change a scheduling decision, each as ``path: problem``."""
    return [*validate_pod_spec(pod.spec, "spec"), *pod_feature_use_errors(pod)]


def validate_node(node: Node) -> list[str]:
    """Every problem with ``node``'s taints and resources, each as ``path: problem``."""
    errs: list[str] = []
    errs.extend(_taints(node.spec.taints, "spec.taints"))
    for field in ("capacity", "allocatable"):
        values = getattr(node.status, field)
        for name, q in values.items():
            if q.sign() < 0:
                errs.append(invalid(f"status.{field}[{name}]", str(q), _NEGATIVE))
    errs.extend(declared_features_errors(node.status.declared_features))
    return errs


def validate_pod_spec(spec: PodSpec, path: str = "spec") -> list[str]:
    errs: list[str] = []
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            errs.extend(_container(c, f"{path}.{group}[{i}]"))
    if spec.resources is not None:
        errs.extend(_resources(spec.resources, f"{path}.resources", pod_level=True))
    for name, q in spec.overhead.items():
        if q.sign() < 0:
            errs.append(invalid(f"{path}.overhead[{name}]", str(q), _NEGATIVE))
    aff = spec.affinity
    if aff is not None:
        if aff.node_affinity is not None:
            errs.extend(_preferred_node_terms(
                aff.node_affinity.preferred_during_scheduling_ignored_during_execution,
                f"{path}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"))
        for name, pa in (("podAffinity", aff.pod_affinity), ("podAntiAffinity", aff.pod_anti_affinity)):
            if pa is None:
                continue
            ppath = f"{path}.affinity.{name}"
            # An empty topologyKey is left to the plugins (upstream's own tables schedule such pods).
            for i, wt in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
                wpath = f"{ppath}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                if not 1 <= wt.weight <= 100:
                    errs.append(invalid(f"{wpath}.weight", wt.weight, _WEIGHT_RANGE))
    errs.extend(_tolerations(spec.tolerations, f"{path}.tolerations"))
    errs.extend(_spread_constraints(spec, f"{path}.topologySpreadConstraints"))
    if spec.priority is not None and not -(2**31) <= spec.priority < 2**31:
        errs.append(invalid(f"{path}.priority", spec.priority, "must fit in an int32"))
    if spec.preemption_policy is not None and spec.preemption_policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported(f"{path}.preemptionPolicy", spec.preemption_policy,
                                  ("Never", "PreemptLowerPriority")))
    return errs


def _container(c: Container, path: str) -> list[str]:
    errs = _resources(c.resources, f"{path}.resources", pod_level=False)
    for i, p in enumerate(c.ports):
        ppath = f"{path}.ports[{i}]"
        if p.container_port == 0:
            errs.append(required(f"{ppath}.containerPort"))
        elif not 1 <= p.container_port <= 65535:
            errs.append(invalid(f"{ppath}.containerPort", p.container_port, _PORT_RANGE))
        if p.host_port != 0 and not 1 <= p.host_port <= 65535:
            errs.append(invalid(f"{ppath}.hostPort", p.host_port, _PORT_RANGE))
        if p.protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{ppath}.protocol", p.protocol, _PROTOCOLS))
    return errs


def _resources(res: ResourceRequirements, path: str, *, pod_level: bool) -> list[str]:
    errs: list[str] = []
    for kind, values in (("limits", res.limits), ("requests", res.requests)):
        for name, q in values.items():
            errs.extend(_resource_value(name, q, f"{path}.{kind}[{name}]"))
    for name, q in res.requests.items():
        limit = res.limits.get(name)
        if limit is None:
            continue
        # Extended resources and hugepages cannot be overcommitted: the request must equal the limit.
        if q.cmp(limit) != 0 and not _overcommit_allowed(name):
            errs.append(invalid(f"{path}.requests", str(q), f"must be equal to {name} limit of {limit}"))
        elif q.cmp(limit) > 0:
            errs.append(invalid(f"{path}.requests", str(q), f"must be less than or equal to {name} limit of {limit}"))
    return errs


def _resource_value(name: str, q: Quantity, path: str) -> list[str]:
    errs: list[str] = []
    # Unprefixed names outside the standard set ("pods" in a container) are not refused: upstream's own
    # scheduler tables request them, and the plugins treat them as scalar resources consistently.
    if "/" in name and not is_native_resource(name):
        problems = is_qualified_name(name)
        errs.extend(invalid(path, name, m) for m in problems)
        if not problems and not is_extended_resource_name(name):
            errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    if q.sign() < 0:
        errs.append(invalid(path, str(q), _NEGATIVE))
    elif is_extended_resource_name(name) and q.milli_value() % 1000 != 0:
        errs.append(invalid(path, str(q), "must be an integer"))
    return errs


def _overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not name.startswith("hugepages-")


def _preferred_node_terms(terms: Sequence[PreferredSchedulingTerm], path: str) -> list[str]:
    return [invalid(f"{path}[{i}].weight", t.weight, _WEIGHT_RANGE)
            for i, t in enumerate(terms) if not 1 <= t.weight <= 100]


def _spread_constraints(spec: PodSpec, path: str) -> list[str]:
    errs: list[str] = []
    constraints = spec.topology_spread_constraints
    for i, c in enumerate(constraints):
        cpath = f"{path}[{i}]"
        if c.max_skew <= 0:
            errs.append(invalid(f"{cpath}.maxSkew", c.max_skew, _NOT_POSITIVE))
        if not c.topology_key:
            errs.append(required(f"{cpath}.topologyKey", "can not be empty"))
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{cpath}.whenUnsatisfiable", c.when_unsatisfiable,
                                      ("DoNotSchedule", "ScheduleAnyway")))
        # Two constraints on one {topologyKey, whenUnsatisfiable} pair are not refused: upstream's tables use
        # them and PodTopologySpread evaluates each constraint on its own.
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errs.append(invalid(f"{cpath}.minDomains", c.min_domains, _NOT_POSITIVE))
            if c.when_unsatisfiable != "DoNotSchedule":
                errs.append(invalid(f"{cpath}.minDomains", c.min_domains,
                                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                    f"not {c.when_unsatisfiable}"))
        for name, policy in (("nodeAffinityPolicy", c.node_affinity_policy),
                             ("nodeTaintsPolicy", c.node_taints_policy)):
            if policy is not None and policy not in _NODE_POLICIES:
                errs.append(not_supported(f"{cpath}.{name}", policy, _NODE_POLICIES))
    return errs


def _tolerations(tolerations: Sequence[Toleration], path: str) -> list[str]:
    errs: list[str] = []
    for i, t in enumerate(tolerations):
        tpath = f"{path}[{i}]"
        if t.key:
            errs.extend(invalid(f"{tpath}.key", t.key, m) for m in is_qualified_name(t.key))
        if not t.key and t.operator != "Exists":
            errs.append(invalid(f"{tpath}.operator", t.operator,
                                'operator must be Exists when `key` is empty, which means "match all values and '
                                'all keys"'))
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(invalid(f"{tpath}.effect", t.effect,
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if t.operator in ("Equal", ""):
            problems = is_valid_label_value(t.value)
            if problems:
                errs.append(invalid(f"{tpath}.operator", t.value, ";".join(problems)))
        elif t.operator == "Exists":
            if t.value:
                errs.append(invalid(f"{tpath}.operator", _toleration_text(t),
                                    "value must be empty when `operator` is 'Exists'"))
        elif t.operator not in ("Lt", "Gt"):  # Lt/Gt: the TaintTolerationComparisonOperators gate decides
            errs.append(not_supported(f"{tpath}.operator", t.operator, ("Equal", "Exists")))
        if t.effect and t.effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{tpath}.effect", t.effect, TAINT_EFFECTS))
    return errs


def _toleration_text(t: Toleration) -> Mapping[str, object]:
    return t.to_dict()


def _taints(taints: Sequence[Taint], path: str) -> list[str]:
    errs: list[str] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(taints):
        tpath = f"{path}[{i}]"
        errs.extend(invalid(f"{tpath}.key", t.key, m) for m in is_qualified_name(t.key))
        errs.extend(invalid(f"{tpath}.value", t.value, m) for m in is_valid_label_value(t.value))
        if not t.effect:
            errs.append(required(f"{tpath}.effect"))
        elif t.effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{tpath}.effect", t.effect, TAINT_EFFECTS))
        if (t.key, t.effect) in seen:
            errs.append(duplicate(tpath, str(t)) + ": taints must be unique by key and effect pair")
        seen.add((t.key, t.effect))
    return errs


__all__ = ["validate_node", "validate_pod", "validate_pod_spec"]
