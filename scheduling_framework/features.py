"""Feature gates of the scheduler, per Kubernetes release, and the one object plugins read them from.

Upstream decides many scheduling behaviours by feature gate, and a gate's default moves from release
to release (alpha off, beta often on, GA locked on, then removed). :data:`GATES` records, for every gate
the scheduler consults, its stages by release (upstream's versioned feature specs).
:class:`FeatureGates` is the state of every gate for one run: the release's defaults plus the user's
overrides, validated the way kube-scheduler validates ``--feature-gates``. Plugins receive it as
``handle.feature_gates`` and ask ``handle.feature_gates.enabled("Name")``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from scheduling_framework.errors import ConfigError
from scheduling_framework.versions import NEWEST_RELEASE, SUPPORTED_RELEASES, at_least, parse_release

ALPHA: Final = "Alpha"
BETA: Final = "Beta"
GA: Final = "GA"
DEPRECATED: Final = "Deprecated"

#: how a gate's effect is reproduced here: honoured by the library, honoured by the DynamicResources
#: plugin's allocator (DRA), or not reproduced (setting it away from its default only earns a warning).
HONOURED: Final = "honoured"
DRA: Final = "DynamicResources"
NOT_REPRODUCED: Final = "not reproduced"


class FeatureGateError(ConfigError):
    """A ``--feature-gates`` / ``feature_gates=`` value that the chosen release rejects."""


@attrs.frozen
class Stage:
    """A gate's state from ``since`` on (until the next stage)."""

    since: str
    default: bool
    pre_release: str
    locked: bool = False


@attrs.frozen
class GateSpec:
    """One gate: its stages (oldest first), the first release without it, and how it is reproduced."""

    name: str
    stages: tuple[Stage, ...]
    removed_in: str | None = None
    effect: str = NOT_REPRODUCED
    note: str = ""

    def stage_at(self, release: str) -> Stage | None:
        """The stage in force at ``release``; None when the gate does not exist there."""
        if self.removed_in is not None and at_least(release, self.removed_in):
            return None
        current: Stage | None = None
        for st in self.stages:
            if at_least(release, st.since):
                current = st
        return current

    def value_at(self, release: str) -> bool:
        """The behaviour at ``release`` when the gate is left alone (a removed gate keeps its last value)."""
        st = self.stage_at(release)
        if st is not None:
            return st.default
        if self.removed_in is not None and at_least(release, self.removed_in):
            return self.stages[-1].default
        return False


def _g(name: str, *stages: tuple[str, bool, str] | tuple[str, bool, str, bool], removed_in: str | None = None,
       effect: str = NOT_REPRODUCED, note: str = "") -> GateSpec:
    return GateSpec(name, tuple(Stage(*s) for s in stages), removed_in, effect, note)


#: every gate the scheduler consults in the supported releases (upstream's versioned feature specs).
GATES: Final[Mapping[str, GateSpec]] = {g.name: g for g in (
    _g("ClearingNominatedNodeNameAfterBinding", ("1.34", False, ALPHA), ("1.35", True, BETA),
       note="the nominatedNodeName field of bound pods; outputs report the nominated node either way"),
    _g("CompositePodGroup", ("1.37", False, ALPHA)),
    _g("CSIMigrationPortworx", ("1.31", True, BETA), ("1.33", True, GA, True), removed_in="1.36",
       effect=HONOURED),
    _g("DRAAdminAccess", ("1.32", False, ALPHA), ("1.34", True, BETA), ("1.36", True, GA, True), effect=DRA),
    _g("DRAConsumableCapacity", ("1.34", False, ALPHA), ("1.36", True, BETA), effect=DRA),
    _g("DRADerivedAttributes", ("1.37", False, ALPHA), note="not implemented"),
    _g("DRADeviceBindingConditions", ("1.34", False, ALPHA), ("1.36", True, BETA), effect=DRA),
    _g("DRADeviceCompatibilityGroups", ("1.37", False, ALPHA), note="not implemented"),
    _g("DRADeviceTaintRules", ("1.35", False, ALPHA), ("1.36", False, BETA), ("1.37", True, GA), effect=DRA),
    _g("DRADeviceTaints", ("1.33", False, ALPHA), ("1.36", True, BETA), ("1.37", True, GA), effect=DRA),
    _g("DRAExtendedResource", ("1.34", False, ALPHA), ("1.36", True, BETA), ("1.37", True, GA, True),
       effect=DRA),
    _g("DRAFractionalCapacityRange", ("1.37", True, BETA), effect=DRA),
    _g("DRAListTypeAttributes", ("1.36", False, ALPHA), note="not implemented"),
    _g("DRANodeAllocatableResources", ("1.36", False, ALPHA), note="not implemented"),
    _g("DRAOptionalNodeOperations", ("1.37", False, ALPHA), note="not implemented"),
    _g("DRAPartitionableDevices", ("1.33", False, ALPHA), ("1.36", True, BETA), effect=DRA),
    _g("DRAPrioritizedList", ("1.33", False, ALPHA), ("1.34", True, BETA), ("1.36", True, GA),
       ("1.37", True, GA, True), effect=DRA),
    _g("DRAResourceClaimDeviceStatus", ("1.32", False, ALPHA), ("1.33", True, BETA), ("1.37", True, GA, True),
       effect=DRA),
    _g("DRASchedulerFilterTimeout", ("1.34", True, BETA), effect=DRA),
    _g("DRAWorkloadResourceClaims", ("1.36", False, ALPHA), ("1.37", False, BETA), note="not implemented"),
    _g("DynamicResourceAllocation", ("1.32", False, BETA), ("1.34", True, GA), ("1.35", True, GA, True),
       effect=HONOURED, note="adds DynamicResources to the default profile when that plugin is installed"),
    # Removed in 1.37 (kubernetes#139520): GenericWorkload alone enables gang scheduling from then on.
    _g("GangScheduling", ("1.35", False, ALPHA), removed_in="1.37", effect=HONOURED,
       note="with GenericWorkload, adds GangScheduling to the default profile (1.37 folds it into "
            "GenericWorkload)"),
    _g("GenericWorkload", ("1.35", False, ALPHA), ("1.37", False, BETA), effect=HONOURED,
       note="1.35: Workload objects and spec.workloadRef are read; 1.36+: PodGroup objects and "
            "spec.schedulingGroup"),
    _g("InPlacePodLevelResourcesVerticalScaling", ("1.35", False, ALPHA), ("1.36", True, BETA), effect=HONOURED),
    _g("InPlacePodVerticalScaling", ("1.33", True, BETA), ("1.35", True, GA, True), effect=HONOURED),
    _g("InPlacePodVerticalScalingSchedulerPreemption", ("1.37", False, ALPHA)),
    _g("InterPodAffinityHostnameFastPath", ("1.37", False, ALPHA),
       note="a speed-up with the same results"),
    _g("MatchLabelKeysInPodAffinity", ("1.31", True, BETA), ("1.33", True, GA, True), effect=HONOURED),
    _g("MatchLabelKeysInPodTopologySpread", ("1.27", True, BETA), effect=HONOURED,
       note="only its default (on) is reproduced"),
    _g("MatchLabelKeysInPodTopologySpreadSelectorMerge", ("1.34", True, BETA), effect=HONOURED,
       note="only its default (on) is reproduced"),
    _g("NodeDeclaredFeatures", ("1.35", False, ALPHA), ("1.36", True, BETA), ("1.37", True, GA, True),
       effect=HONOURED),
    _g("NodeInclusionPolicyInPodTopologySpread", ("1.26", True, BETA), ("1.33", True, GA, True),
       effect=HONOURED),
    _g("NominatedNodeNameForExpectation", ("1.34", False, ALPHA), ("1.35", True, BETA)),
    _g("OpportunisticBatching", ("1.35", True, BETA), note="a speed-up with the same results"),
    _g("PodGroupPreemptionPolicy", ("1.37", False, ALPHA)),
    _g("PodLevelResources", ("1.32", False, ALPHA), ("1.34", True, BETA), effect=HONOURED,
       note="only its default (on) is reproduced"),
    _g("SchedulerAsyncAPICalls", ("1.34", False, BETA), note="the library makes no API calls"),
    _g("SchedulerAsyncPreemption", ("1.32", False, ALPHA), ("1.33", True, BETA),
       note="preemption runs synchronously; the victims are the same"),
    _g("SchedulerPopFromBackoffQ", ("1.33", True, BETA)),
    _g("SchedulerPreQueueingHints", ("1.37", False, ALPHA)),
    _g("SchedulerQueueingHints", ("1.32", True, BETA), ("1.34", True, GA, True)),
    _g("SidecarContainers", ("1.29", True, BETA), ("1.33", True, GA, True), effect=HONOURED),
    _g("StorageCapacityScoring", ("1.33", False, ALPHA), ("1.37", True, BETA), effect=HONOURED),
    _g("TaintTolerationComparisonOperators", ("1.35", False, ALPHA), effect=HONOURED),
    _g("TopologyAwareWorkloadScheduling", ("1.36", False, ALPHA)),
    _g("VolumeAttributesClass", ("1.31", False, BETA), ("1.34", True, GA), ("1.36", True, GA, True),
       effect=HONOURED),
    _g("VolumeLimitScaling", ("1.35", False, ALPHA), ("1.37", True, BETA), effect=HONOURED),
)}

# Gates whose effect here is fixed at their default: turning them off is a warning, not silence.
_DEFAULT_ONLY: Final = frozenset({"MatchLabelKeysInPodTopologySpread", "MatchLabelKeysInPodTopologySpreadSelectorMerge",
                                  "PodLevelResources"})

_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_ALL_ALPHA: Final = "AllAlpha"
_ALL_BETA: Final = "AllBeta"


def parse_bool(text: str) -> bool | None:
    """Go's strconv.ParseBool: the spellings it accepts, None for anything else."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def parse_gate_string(text: str) -> dict[str, bool]:
    """``"Name=true,Other=false"`` (the ``--feature-gates`` syntax) as a mapping; FeatureGateError otherwise."""
    out, errors = _parse_gate_string(text)
    if errors:
        raise FeatureGateError(errors)
    return out


def _parse_gate_string(text: str) -> tuple[dict[str, bool], list[str]]:
    out: dict[str, bool] = {}
    errors: list[str] = []
    for part in text.split(","):
        item = part.strip()
        if not item:
            continue
        name, eq, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not eq:
            errors.append(f"missing bool value for {name}")
            continue
        value = parse_bool(raw)
        if value is None:
            errors.append(f'invalid value of {name}={raw}, err: strconv.ParseBool: parsing "{raw}": invalid syntax')
            continue
        out[name] = value
    return out, [f"feature gates: {e}" for e in errors]


def _as_mapping(gates: str | Mapping[str, Any] | Iterable[str] | None) -> tuple[dict[str, bool], list[str]]:
    if gates is None:
        return {}, []
    if isinstance(gates, str):
        return _parse_gate_string(gates)
    if isinstance(gates, Mapping):
        out: dict[str, bool] = {}
        errors: list[str] = []
        for name, value in gates.items():
            if not isinstance(name, str):
                errors.append(f"feature gates: gate names are strings, got {name!r}")
            elif isinstance(value, bool):
                out[name] = value
            elif isinstance(value, str) and parse_bool(value) is not None:
                out[name] = bool(parse_bool(value))
            else:
                errors.append(f"feature gates: invalid value of {name}={value!r}: expected true or false")
        return out, errors
    if isinstance(gates, Iterable):
        return _parse_gate_string(",".join(str(g) for g in gates))
    raise FeatureGateError(f"feature gates: expected a mapping of gate name to bool or a string "
                           f"such as \"Name=true,Other=false\", got {type(gates).__name__}")


def _unknown_message(name: str, release: str) -> str:
    msg = f"feature gates: unrecognized feature gate: {name} (Kubernetes {release})"
    spec = GATES.get(name)
    if spec is not None:
        if spec.removed_in is not None and at_least(release, spec.removed_in):
            msg += f"; it was removed in {spec.removed_in}"
        else:
            first = next((r for r in SUPPORTED_RELEASES if spec.stage_at(r) is not None), None)
            if first is not None:
                msg += f"; it exists from Kubernetes {first}"
    return msg


@attrs.frozen
class FeatureGates:
    """Every scheduler gate's state for one run: the defaults of ``release`` plus validated overrides.

    Build with :meth:`for_release`. ``enabled(name)`` answers for any name: a gate that does not exist
    in the release is off, unless it was removed after graduating (then its behaviour stays on).
    """

    release: str = NEWEST_RELEASE
    overrides: tuple[tuple[str, bool], ...] = ()
    _values: Mapping[str, bool] = attrs.field(factory=dict, eq=False, repr=False, alias="_values")

    @classmethod
    def for_release(cls, release: str | None = None,
                    gates: str | Mapping[str, Any] | Iterable[str] | None = None) -> FeatureGates:
        """Validate ``gates`` (``"A=true,B=false"`` or a mapping) against ``release`` (default newest).

        Raises FeatureGateError listing every problem: an unrecognized gate, a value a locked gate
        cannot take, a value that is not a bool.
        """
        rel = NEWEST_RELEASE if release is None else parse_release(release)
        wanted, errors = _as_mapping(gates)
        values = {name: spec.value_at(rel) for name, spec in GATES.items()}
        known = {name: spec.stage_at(rel) for name, spec in GATES.items()}
        all_alpha = wanted.pop(_ALL_ALPHA, None)
        all_beta = wanted.pop(_ALL_BETA, None)
        for name, st in known.items():
            if st is None or st.locked:
                continue
            if all_alpha is not None and st.pre_release == ALPHA:
                values[name] = all_alpha
            if all_beta is not None and st.pre_release == BETA:
                values[name] = all_beta
        for name, value in wanted.items():
            st = known.get(name)
            if st is None:
                errors.append(_unknown_message(name, rel))
                continue
            if st.locked and value != st.default:
                errors.append(f"feature gates: cannot set feature gate {name} to {str(value).lower()}, "
                              f"feature is locked to {str(st.default).lower()} (Kubernetes {rel})")
                continue
            values[name] = value
        if errors:
            raise FeatureGateError(errors)
        overrides = tuple(sorted(wanted.items()))
        if all_alpha is not None:
            overrides += ((_ALL_ALPHA, all_alpha),)
        if all_beta is not None:
            overrides += ((_ALL_BETA, all_beta),)
        return cls(rel, overrides, values)

    def __attrs_post_init__(self) -> None:
        if not self._values:
            object.__setattr__(self, "_values", {n: s.value_at(self.release) for n, s in GATES.items()})

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on (False for a gate this release does not know)."""
        return self._values.get(name, False)

    def known_gate(self, name: str) -> bool:
        """Whether gate ``name`` exists in this release."""
        spec = GATES.get(name)
        return spec is not None and spec.stage_at(self.release) is not None

    def known(self) -> list[str]:
        """The gates that exist in this release, sorted."""
        return sorted(n for n, s in GATES.items() if s.stage_at(self.release) is not None)

    def to_dict(self) -> dict[str, bool]:
        """Every gate of this release with its state (what ``config view`` prints as ``featureGates``)."""
        return {n: self._values[n] for n in self.known()}

    def explicit(self) -> dict[str, bool]:
        """The overrides as given (``AllAlpha`` / ``AllBeta`` included)."""
        return dict(self.overrides)

    def warnings(self) -> list[str]:
        """One line per override whose effect this library does not reproduce."""
        out: list[str] = []
        for name, value in self.overrides:
            spec = GATES.get(name)
            if spec is None:
                continue
            default = spec.value_at(self.release)
            if value == default:
                continue
            if spec.effect == NOT_REPRODUCED or (name in _DEFAULT_ONLY and not value):
                why = f": {spec.note}" if spec.note else ""
                out.append(f"feature gate {name}={str(value).lower()} is accepted but has no effect in this "
                           f"library{why}")
        if (self.enabled("GangScheduling") and not self.enabled("GenericWorkload")
                and self.known_gate("GangScheduling")):
            out.append("feature gate GangScheduling=true has no effect without GenericWorkload=true (the "
                       "GangScheduling plugin reads Workload objects)")
        return out


def gang_scheduling_gates(release: str | None = None) -> str:
    """The ``--feature-gates`` value that turns gang scheduling on at ``release`` (default newest):
    ``GenericWorkload=true,GangScheduling=true`` up to 1.36, ``GenericWorkload=true`` from 1.37 (which removed
    the GangScheduling gate, folding it into GenericWorkload)."""
    rel = NEWEST_RELEASE if release is None else parse_release(release)
    if GATES["GangScheduling"].stage_at(rel) is not None:
        return "GenericWorkload=true,GangScheduling=true"
    return "GenericWorkload=true"


def dra_allocator_flags(gates: FeatureGates) -> dict[str, bool]:
    """The DRA allocator's feature switches (``scheduling_framework.dra.allocator.Features`` fields) as the
    gates of a release set them (upstream's scheduler passes the same gates to its allocator)."""
    return {
        "admin_access": gates.enabled("DRAAdminAccess"),
        "prioritized_list": gates.enabled("DRAPrioritizedList"),
        "partitionable_devices": gates.enabled("DRAPartitionableDevices"),
        "device_taints": gates.enabled("DRADeviceTaints"),
        "device_binding_and_status": (gates.enabled("DRADeviceBindingConditions")
                                      and gates.enabled("DRAResourceClaimDeviceStatus")),
        "consumable_capacity": gates.enabled("DRAConsumableCapacity"),
        "fractional_capacity_range": gates.enabled("DRAFractionalCapacityRange"),
        # not a gate: the allocator of 1.34 and 1.35 loses an All subrequest's index (fixed in 1.36)
        "all_subrequest_index_reset": not at_least(gates.release, "1.36"),
        # not a gate: from 1.36 the allocator searches pools and slices in name order
        "sorted_pools": at_least(gates.release, "1.36"),
        # not a gate: the CEL runtime error wording changed in 1.37
        "cel_error_hints": at_least(gates.release, "1.37"),
    }


def taint_rules_enabled(gates: FeatureGates) -> bool:
    """Whether DeviceTaintRules taint devices: DRADeviceTaintRules from 1.35; in 1.34, which has no such gate,
    DeviceTaintRules came with DRADeviceTaints."""
    if "DRADeviceTaintRules" in gates.known():
        return gates.enabled("DRADeviceTaintRules")
    return gates.enabled("DRADeviceTaints")


def features_of(handle: Any) -> FeatureGates:
    """The gates a plugin's framework handle carries (the newest release's defaults when it has none)."""
    gates = getattr(handle, "feature_gates", None)
    if isinstance(gates, FeatureGates):
        return gates
    return _NEWEST


_NEWEST: Final = FeatureGates()


def gate_enabled(handle: Any, name: str) -> bool:
    """Gate ``name`` as a plugin's handle gives it: a plain mapping of overrides (tests, embedding applications)
    or the FeatureGates of the run (:func:`features_of`)."""
    gates = getattr(handle, "feature_gates", None)
    if isinstance(gates, Mapping) and name in gates:
        return bool(gates[name])
    return features_of(handle).enabled(name)
# --- input governed by gates whose effect is not reproduced -----------------------------------------------


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _spec(obj: Any) -> Mapping[str, Any]:
    return _mapping(_mapping(getattr(obj, "raw", None)).get("spec"))


def _resize_pending(pod: Any) -> bool:
    """The kubelet's resize conditions (or the older ``status.resize``): requests differ from what runs."""
    status = getattr(pod, "status", None)
    return any(c.type in ("PodResizePending", "PodResizeInProgress") for c in getattr(status, "conditions", ()))


def _pod_level_resize(pod: Any) -> bool:
    return getattr(getattr(pod, "spec", None), "resources", None) is not None and _resize_pending(pod)


def _declares_features(node: Any) -> bool:
    raw = node.raw_manifest() if callable(getattr(node, "raw_manifest", None)) else {}
    return bool(_mapping(_mapping(raw).get("status")).get("declaredFeatures"))


def _has_workload_ref(pod: Any) -> bool:
    raw = pod.raw_manifest() if callable(getattr(pod, "raw_manifest", None)) else {}
    spec = _mapping(_mapping(raw).get("spec"))
    return bool(spec.get("workloadRef") or spec.get("schedulingGroup"))


@attrs.frozen
class GovernedInput:
    """What a gate governs in a cluster: object kinds (each, or those ``obj`` accepts), or nodes / pods that
    ``node`` / ``pod`` accept. ``what`` names it in the warning."""

    what: str
    kinds: frozenset[str] = frozenset()
    obj: Any = None  # Callable[[KubeObject], bool] | None: None accepts every object of ``kinds``
    node: Any = None  # Callable[[Node], bool] | None
    pod: Any = None  # Callable[[Pod], bool] | None


#: gate -> the input it governs. A gate enabled in a run, whose effect here is NOT_REPRODUCED, earns a warning
#: as soon as the input holds what it governs (:class:`UnreproducedInput`); once its effect is reproduced
#: (``GATES[name].effect`` no longer NOT_REPRODUCED) the warning stops by itself.
GOVERNED_INPUT: Final[Mapping[str, GovernedInput]] = {
    "DRADeviceTaintRules": GovernedInput("DeviceTaintRule objects", frozenset({"DeviceTaintRule"})),
    "DRAExtendedResource": GovernedInput(
        "DeviceClasses with spec.extendedResourceName", frozenset({"DeviceClass"}),
        obj=lambda o: bool(_spec(o).get("extendedResourceName"))),
    "NodeDeclaredFeatures": GovernedInput("nodes with status.declaredFeatures", node=_declares_features),
    "InPlacePodVerticalScaling": GovernedInput(
        "pods with a pending or in-progress resize (PodResizePending/PodResizeInProgress)", pod=_resize_pending),
    "InPlacePodLevelResourcesVerticalScaling": GovernedInput(
        "pods with pod-level resources and a pending or in-progress resize", pod=_pod_level_resize),
    "GenericWorkload": GovernedInput("Workload or PodGroup objects", frozenset({"Workload", "PodGroup"})),
    "GangScheduling": GovernedInput("pods with spec.workloadRef", pod=_has_workload_ref),
    "TopologyAwareWorkloadScheduling": GovernedInput(
        "PodGroups with spec.schedulingConstraints", frozenset({"PodGroup"}),
        obj=lambda o: bool(_spec(o).get("schedulingConstraints"))),
    "DRAWorkloadResourceClaims": GovernedInput(
        "PodGroups with spec.resourceClaims", frozenset({"PodGroup"}),
        obj=lambda o: bool(_spec(o).get("resourceClaims"))),
}


def unreproduced_gate_message(name: str, release: str, what: str) -> str:
    spec = GATES[name]
    why = f" ({spec.note})" if spec.note else ""
    return (f"feature gate {name} is on in this run (Kubernetes {release}) but its effect is not reproduced"
            f"{why}: the input has {what}; the real scheduler's decisions for them may differ")


class UnreproducedInput:
    """Watches the objects, nodes and pods a run loads for input governed by an enabled gate whose effect is
    not reproduced, and reports each such gate once through ``report(message)``. A gate stops being watched
    once reported, so a big cluster costs a few attribute reads per object at most (nothing when no gate
    applies)."""

    __slots__ = ("release", "_report", "_by_kind", "_nodes", "_pods")

    def __init__(self, gates: FeatureGates, report: Any) -> None:
        self.release = gates.release
        self._report = report
        self._by_kind: dict[str, list[tuple[str, GovernedInput]]] = {}
        self._nodes: list[tuple[str, GovernedInput]] = []
        self._pods: list[tuple[str, GovernedInput]] = []
        for name, gi in GOVERNED_INPUT.items():
            spec = GATES.get(name)
            if spec is None or spec.effect != NOT_REPRODUCED or not gates.enabled(name):
                continue
            for kind in gi.kinds:
                self._by_kind.setdefault(kind, []).append((name, gi))
            if gi.node is not None:
                self._nodes.append((name, gi))
            if gi.pod is not None:
                self._pods.append((name, gi))

    @property
    def active(self) -> bool:
        return bool(self._by_kind or self._nodes or self._pods)

    def _hit(self, name: str, gi: GovernedInput) -> None:
        for kind in gi.kinds:
            rest = [e for e in self._by_kind.get(kind, ()) if e[0] != name]
            if rest:
                self._by_kind[kind] = rest
            else:
                self._by_kind.pop(kind, None)
        self._nodes = [e for e in self._nodes if e[0] != name]
        self._pods = [e for e in self._pods if e[0] != name]
        self._report(unreproduced_gate_message(name, self.release, gi.what))

    def saw_object(self, obj: Any) -> None:
        watchers = self._by_kind.get(getattr(obj, "kind", ""))
        if watchers:
            for name, gi in list(watchers):
                if gi.obj is None or gi.obj(obj):
                    self._hit(name, gi)

    def saw_node(self, node: Any) -> None:
        for name, gi in list(self._nodes):
            if gi.node(node):
                self._hit(name, gi)

    def saw_pod(self, pod: Any) -> None:
        for name, gi in list(self._pods):
            if gi.pod(pod):
                self._hit(name, gi)

    def scan(self, nodes: Iterable[Any] = (), pods: Iterable[Any] = (), objects: Iterable[Any] = ()) -> None:
        """:meth:`saw_object`, :meth:`saw_node` and :meth:`saw_pod` over a whole cluster."""
        if not self.active:
            return
        for o in objects:
            self.saw_object(o)
        for n in nodes:
            if not self._nodes:
                break
            self.saw_node(n)
        for p in pods:
            if not self._pods:
                break
            self.saw_pod(p)
