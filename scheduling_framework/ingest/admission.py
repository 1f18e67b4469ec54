"""What the API server's admission would have done to a pod before the scheduler sees it.

A dump of a running cluster holds pods that went through admission already (``spec.priority`` is set);
hand-written manifests and expanded workloads did not. :class:`Admission` runs, on pods without
``spec.priority`` (taken as not yet admitted), what the default admission plugins do that matters to
scheduling, in upstream's order:

- LimitRanger: container requests and limits default from the namespace's LimitRanges (``default``,
  ``defaultRequest``, with the LimitRange's own defaulting from ``max`` and ``min``);
- DefaultTolerationSeconds: tolerations of ``node.kubernetes.io/not-ready`` and ``unreachable``
  (NoExecute, 300 s) unless the pod tolerates them already;
- Priority: see below;
- RuntimeClass: ``spec.overhead`` from the class's ``overhead.podFixed``, its ``scheduling.nodeSelector``
  merged into the pod's and its ``scheduling.tolerations`` added; a missing class or a conflict refuses
  the pod.

:class:`PriorityAdmission` resolves
``spec.priority`` and ``spec.preemptionPolicy`` from ``priorityClassName`` as upstream's Priority
admission plugin does (plugin/pkg/admission/priority):

- a pod that already has ``spec.priority`` keeps it (and its preemption policy): it was admitted;
- a pod naming a class gets that class's value and preemption policy; a class that does not exist makes the
  API server refuse the pod, and the refusal message is upstream's;
- a pod naming no class gets the ``globalDefault`` class (the lowest value when several are marked, as
  upstream picks after a race), or priority 0;
- ``system-cluster-critical`` (2000000000) and ``system-node-critical`` (2000001000) always exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER, Pod
from scheduling_framework.api.taints import Toleration
from scheduling_framework.warning_list import Warnings

PRIORITY_CLASS_KIND = "PriorityClass"
PRIORITY_CLASS_API_VERSIONS = ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1")
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
# The API server creates these at start-up; they cannot be deleted.
SYSTEM_PRIORITY_CLASSES = {SYSTEM_CLUSTER_CRITICAL: 2_000_000_000, SYSTEM_NODE_CRITICAL: 2_000_001_000}
_INT32 = (-(2**31), 2**31 - 1)

WARN_UNUSABLE_CLASS = "ignored PriorityClass object(s) that could not be used"
WARN_BOUND_REFUSED = ("bound pod(s) without spec.priority that the API server would refuse: counted as they are "
                      "(priority 0)")
WARN_PRIORITY_MISMATCH = ("kept spec.priority of pod(s) whose PriorityClass has another value "
                          "(the API server would refuse them)")


@attrs.frozen(slots=True)
class PriorityClass:
    """A ``scheduling.k8s.io`` PriorityClass: name, value, globalDefault and preemptionPolicy (defaulted)."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY

    @classmethod
    def from_object(cls, obj: KubeObject) -> PriorityClass:
        """Raises ValueError naming the field when the object is not a usable PriorityClass."""
        raw = obj.raw
        value = raw.get("value")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"value: expected an integer, got {value!r}")
        if not _INT32[0] <= value <= _INT32[1]:
            raise ValueError(f"value: {value} is out of the int32 range")
        gd = raw.get("globalDefault", False)
        if not isinstance(gd, bool):
            raise ValueError(f"globalDefault: expected a boolean, got {gd!r}")
        pp = raw.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
        if pp not in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
            raise ValueError(f'preemptionPolicy: Unsupported value: "{pp}": supported values: '
                             f'"{PREEMPT_LOWER_PRIORITY}", "{PREEMPT_NEVER}"')
        return cls(obj.name, value, gd, str(pp))


class PriorityAdmission:
    """Resolves pod priorities from the PriorityClasses among ``objects`` (other kinds are ignored).

    PriorityClass objects that cannot be used (no integer ``value``, ...) are reported in ``warnings``
    and left out.
    """

    def __init__(self, objects: Iterable[KubeObject] = (), warnings: Warnings | None = None) -> None:
        self.warnings = warnings if warnings is not None else Warnings()
        self.classes: dict[str, PriorityClass] = {n: PriorityClass(n, v) for n, v in SYSTEM_PRIORITY_CLASSES.items()}
        for o in objects:
            if o.kind != PRIORITY_CLASS_KIND:
                continue
            try:
                self.classes[o.name] = PriorityClass.from_object(o)
            except ValueError as e:
                self.warnings.add_item(WARN_UNUSABLE_CLASS, f"{o.name} ({e})")
        self.default: PriorityClass | None = None
        for pc in self.classes.values():
            if pc.global_default and (self.default is None or pc.value < self.default.value):
                self.default = pc

    def admit(self, pod: Pod) -> tuple[Pod, str]:
        """The pod as admission leaves it, and "" — or the pod unchanged and why the API server would
        refuse it (the caller decides what to do and reports it: see :func:`refused_item`)."""
        priority, policy, class_name, refusal = self.resolve(pod)
        if refusal or priority is None:
            return pod, refusal
        return pod.with_priority(priority, policy, class_name), ""

    def resolve(self, pod: Pod) -> tuple[int | None, str | None, str, str]:
        """(priority, preemption policy, class name, refusal) for ``pod``; priority None: keep the pod's."""
        spec = pod.spec
        if spec.priority is not None:
            if spec.priority_class_name:
                pc = self.classes.get(spec.priority_class_name)
                if pc is not None and pc.value != spec.priority:
                    self.warnings.add_item(WARN_PRIORITY_MISMATCH, f"{pod.key} ({spec.priority} != "
                                                                   f"{pc.name} {pc.value})")
            return None, None, "", ""
        if spec.priority_class_name:
            pc = self.classes.get(spec.priority_class_name)
            if pc is None:
                return None, None, "", (f'pods "{pod.name}" is forbidden: no PriorityClass with name '
                                        f"{spec.priority_class_name} was found")
        else:
            pc = self.default
            if pc is None:  # no default class: priority 0, as upstream
                return 0, spec.preemption_policy, "", ""
        return pc.value, spec.preemption_policy or pc.preemption_policy, pc.name, ""


LIMIT_RANGE_KIND = "LimitRange"
RUNTIME_CLASS_KIND = "RuntimeClass"
ADMISSION_KINDS = frozenset({PRIORITY_CLASS_KIND, LIMIT_RANGE_KIND, RUNTIME_CLASS_KIND})
DEFAULT_TOLERATION_SECONDS = 300
WARN_REFUSED = "skipped pending pod(s) the API server would refuse"
WARN_UNUSABLE_ADMISSION = "ignored LimitRange/RuntimeClass object(s) that could not be used"
_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"


class Admission:
    """The admission chain (see the module docstring) over the PriorityClasses, LimitRanges and
    RuntimeClasses among ``objects``. Objects of those kinds that cannot be used go to ``warnings``."""

    def __init__(self, objects: Iterable[KubeObject] = (), warnings: Warnings | None = None) -> None:
        objs = [o for o in objects if o.kind in ADMISSION_KINDS]
        self.warnings = warnings if warnings is not None else Warnings()
        self.priority = PriorityAdmission(objs, self.warnings)
        self.limit_ranges: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        self.runtime_classes: dict[str, Mapping[str, Any]] = {}
        for o in objs:
            try:
                if o.kind == LIMIT_RANGE_KIND:
                    self.limit_ranges.setdefault(o.namespace, []).extend(_container_defaults(o))
                elif o.kind == RUNTIME_CLASS_KIND:
                    self.runtime_classes[o.name] = _runtime_class(o)
            except (ValueError, TypeError) as e:
                self.warnings.add_item(WARN_UNUSABLE_ADMISSION, f"{o.kind} {o.name} ({e})")

    def admit(self, pod: Pod) -> tuple[Pod, str]:
        """The pod as admission leaves it, and "" — or the pod and why the API server would refuse it."""
        if pod.spec.priority is not None:
            return self.priority.admit(pod)  # admitted by the API server already
        raw0 = pod.raw_manifest()
        if not (self.limit_ranges.get(pod.namespace) or
                (isinstance(raw0.get("spec"), Mapping) and raw0["spec"].get("runtimeClassName"))):
            # the common case: one shallow copy of the pod for tolerations and priority together
            priority, policy, class_name, refusal = self.priority.resolve(pod)
            if refusal:
                return pod, refusal
            return _admitted(pod, _missing_default_tolerations(pod.spec.tolerations), priority, policy,
                             class_name), ""
        pod = _admitted(pod, _missing_default_tolerations(pod.spec.tolerations), None, None, "")
        raw = pod.to_dict()
        spec = raw.get("spec")
        if not isinstance(spec, dict):
            return self.priority.admit(pod)
        changed = self._limit_ranger(pod.namespace, spec)
        refusal = ""
        rc_name = spec.get("runtimeClassName")
        if rc_name:
            rc = self.runtime_classes.get(str(rc_name))
            if rc is None:
                refusal = f'pod rejected: RuntimeClass "{rc_name}" not found'
            else:
                refusal = _apply_runtime_class(spec, rc)
                changed = True
        if refusal:
            return pod, f'pods "{pod.name}" is forbidden: {refusal}'
        if changed:
            try:
                pod = Pod.from_dict(raw, strict=None)
            except ValueError as e:  # a default that does not parse: leave the pod as it was
                self.warnings.add_item(WARN_UNUSABLE_ADMISSION, f"defaults for pod {pod.key} ({e})")
        return self.priority.admit(pod)

    def _limit_ranger(self, namespace: str, spec: dict[str, Any]) -> bool:
        items = self.limit_ranges.get(namespace)
        if not items:
            return False
        changed = False
        for field in ("initContainers", "containers"):
            for c in spec.get(field) or []:
                if not isinstance(c, dict):
                    continue
                res = dict(c.get("resources") or {})
                limits = dict(res.get("limits") or {})
                requests = dict(res.get("requests") or {})
                # API defaulting ran before admission: a limit with no request set the request
                for k, v in limits.items():
                    requests.setdefault(k, v)
                for default_limits, default_requests in items:
                    for k, v in default_requests.items():
                        if k not in requests:
                            requests[k] = v
                            changed = True
                    for k, v in default_limits.items():
                        if k not in limits:
                            limits[k] = v
                            changed = True
                if limits:
                    res["limits"] = limits
                if requests:
                    res["requests"] = requests
                c["resources"] = res
        return changed


def _container_defaults(o: KubeObject) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(default limits, default requests) of each Container item, with the LimitRange's API defaulting."""
    limits = o.raw.get("spec", {}).get("limits") if isinstance(o.raw.get("spec"), Mapping) else None
    if limits is None:
        return []
    if not isinstance(limits, list):
        raise ValueError("spec.limits: expected a list")
    out = []
    for i, item in enumerate(limits):
        if not isinstance(item, Mapping):
            raise ValueError(f"spec.limits[{i}]: expected an object")
        if item.get("type") != "Container":
            continue
        maps = {}
        for f in ("default", "defaultRequest", "max", "min"):
            v = item.get(f) or {}
            if not isinstance(v, Mapping):
                raise ValueError(f"spec.limits[{i}].{f}: expected an object")
            maps[f] = dict(v)
        default, default_request = maps["default"], maps["defaultRequest"]
        for k, v in maps["max"].items():
            default.setdefault(k, v)
        for k, v in default.items():
            default_request.setdefault(k, v)
        for k, v in maps["min"].items():
            default_request.setdefault(k, v)
        out.append((default, default_request))
    return out


def _runtime_class(o: KubeObject) -> Mapping[str, Any]:
    for f in ("overhead", "scheduling"):
        v = o.raw.get(f)
        if v is not None and not isinstance(v, Mapping):
            raise ValueError(f"{f}: expected an object")
    return o.raw


def _apply_runtime_class(spec: dict[str, Any], rc: Mapping[str, Any]) -> str:
    """Apply a RuntimeClass to a pod spec (manifest); the refusal, or ""."""
    fixed = (rc.get("overhead") or {}).get("podFixed")
    if fixed:
        if spec.get("overhead") and dict(spec["overhead"]) != dict(fixed):
            return "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
        spec["overhead"] = dict(fixed)
    sched = rc.get("scheduling") or {}
    selector = dict(sched.get("nodeSelector") or {})
    if selector:
        merged = dict(spec.get("nodeSelector") or {})
        for k, v in selector.items():
            if k in merged and merged[k] != v:
                return (f"conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; "
                        f"pod.spec.nodeSelector[{k}] = {merged[k]}")
            merged[k] = v
        spec["nodeSelector"] = merged
    tols = list(spec.get("tolerations") or [])
    for t in sched.get("tolerations") or []:
        if t not in tols:
            tols.append(t)
    if tols:
        spec["tolerations"] = tols
    return ""


def _missing_default_tolerations(tols: tuple[Toleration, ...]) -> list[str]:
    """DefaultTolerationSeconds: the keys (not-ready, unreachable) the pod does not tolerate for NoExecute
    yet — a toleration with that key or none, and effect NoExecute or none, counts."""
    add = []
    for key in (_NOT_READY, _UNREACHABLE):
        for t in tols:
            if (t.key == key or not t.key) and (t.effect == "NoExecute" or not t.effect):
                break
        else:
            add.append(key)
    return add


def _admitted(pod: Pod, add_tolerations: list[str], priority: int | None, policy: str | None,
              class_name: str) -> Pod:
    """The pod with the DefaultTolerationSeconds tolerations for ``add_tolerations`` and, unless
    ``priority`` is None, the resolved priority — one copy of the pod (admission runs per pending pod)."""
    if not add_tolerations and priority is None:
        return pod
    raw = dict(pod.raw_manifest())
    spec_raw = dict(raw.get("spec") or {})
    changes: dict[str, Any] = {}
    if add_tolerations:
        spec_raw["tolerations"] = [*(spec_raw.get("tolerations") or []),
                                   *({"key": k, "operator": "Exists", "effect": "NoExecute",
                                      "tolerationSeconds": DEFAULT_TOLERATION_SECONDS} for k in add_tolerations)]
        changes["tolerations"] = pod.spec.tolerations + tuple(
            Toleration(k, "Exists", "", "NoExecute", DEFAULT_TOLERATION_SECONDS) for k in add_tolerations)
    if priority is not None:
        spec_raw["priority"] = priority
        changes["priority"] = priority
        if class_name:
            spec_raw["priorityClassName"] = class_name
            changes["priority_class_name"] = class_name
        if policy:
            spec_raw["preemptionPolicy"] = policy
            changes["preemption_policy"] = policy
    raw["spec"] = spec_raw
    return Pod(pod.metadata, attrs.evolve(pod.spec, **changes), pod.status, raw)


def refused_item(pod: Pod, refusal: str) -> str:
    """The warning item for a pod the API server would refuse."""
    prefix = f'pods "{pod.name}" is forbidden: '
    return f"{pod.key} ({refusal.removeprefix(prefix)})"


def missing_class_item(pod: Pod) -> str:
    """The warning item for a pod whose PriorityClass does not exist."""
    return f'{pod.key} (priorityClassName "{pod.spec.priority_class_name}")'


__all__ = [
    "PRIORITY_CLASS_API_VERSIONS", "PRIORITY_CLASS_KIND", "SYSTEM_CLUSTER_CRITICAL", "SYSTEM_NODE_CRITICAL",
    "ADMISSION_KINDS", "Admission", "WARN_REFUSED", "refused_item",
    "SYSTEM_PRIORITY_CLASSES", "WARN_BOUND_REFUSED", "PriorityAdmission", "PriorityClass",
    "missing_class_item",
]
