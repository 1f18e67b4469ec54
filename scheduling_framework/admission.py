"""What the API server's admission would have done to a pod before the scheduler sees it.

A dump of a running cluster holds pods that went through admission already (``spec.priority`` is set);
hand-written manifests and expanded workloads did not. :class:`PriorityAdmission` resolves
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

from collections.abc import Iterable

import attrs

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER, Pod
from scheduling_framework.warning_list import Warnings

PRIORITY_CLASS_KIND = "PriorityClass"
PRIORITY_CLASS_API_VERSIONS = ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1")
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
# The API server creates these at start-up; they cannot be deleted.
SYSTEM_PRIORITY_CLASSES = {SYSTEM_CLUSTER_CRITICAL: 2_000_000_000, SYSTEM_NODE_CRITICAL: 2_000_001_000}
_INT32 = (-(2**31), 2**31 - 1)

WARN_UNUSABLE_CLASS = "ignored PriorityClass object(s) that could not be used"
WARN_NO_CLASS = "skipped pending pod(s) the API server would refuse: their PriorityClass does not exist"
WARN_BOUND_NO_CLASS = "bound pod(s) without spec.priority name a PriorityClass that does not exist: priority 0 assumed"
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
        refuse it (the caller decides what to do and reports it: see :func:`missing_class_item`)."""
        spec = pod.spec
        if spec.priority is not None:
            if spec.priority_class_name:
                pc = self.classes.get(spec.priority_class_name)
                if pc is not None and pc.value != spec.priority:
                    self.warnings.add_item(WARN_PRIORITY_MISMATCH, f"{pod.key} ({spec.priority} != "
                                                                   f"{pc.name} {pc.value})")
            return pod, ""
        if spec.priority_class_name:
            pc = self.classes.get(spec.priority_class_name)
            if pc is None:
                return pod, (f'pods "{pod.name}" is forbidden: no PriorityClass with name '
                             f"{spec.priority_class_name} was found")
        else:
            pc = self.default
            if pc is None:
                return pod, ""  # priority 0, as upstream when no class is the default
        policy = spec.preemption_policy or pc.preemption_policy
        return pod.with_priority(pc.value, policy, pc.name), ""


def missing_class_item(pod: Pod) -> str:
    """The warning item for a pod whose PriorityClass does not exist."""
    return f'{pod.key} (priorityClassName "{pod.spec.priority_class_name}")'


__all__ = [
    "PRIORITY_CLASS_API_VERSIONS", "PRIORITY_CLASS_KIND", "SYSTEM_CLUSTER_CRITICAL", "SYSTEM_NODE_CRITICAL",
    "SYSTEM_PRIORITY_CLASSES", "WARN_BOUND_NO_CLASS", "WARN_NO_CLASS", "PriorityAdmission", "PriorityClass",
    "missing_class_item",
]
