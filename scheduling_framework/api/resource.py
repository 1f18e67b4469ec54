"""resource.k8s.io objects for Dynamic Resource Allocation with structured parameters.

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate are parsed once from their manifests into
frozen, slotted classes, in the ``resource.k8s.io/v1`` shape. ``v1beta2`` manifests have that shape already;
``v1beta1`` ones differ mechanically (request fields sit on the request instead of under ``exactly``, device
fields under ``basic``) and are read in place, so error paths point at the field as written. Older versions
are refused with an "unsupported apiVersion" error.

``to_dict()`` returns the manifest as given, with ``status`` rewritten from the typed status when the object
was changed through ``with_allocation`` / ``with_reserved_for`` (what the scheduler writes at PreBind).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

import attrs

from scheduling_framework.api._parse import (
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
    as_time,
    str_tuple,
)
from scheduling_framework.api.celcost import admission_error
from scheduling_framework.api.clients import as_manifest
from scheduling_framework.api.fields import check_unknown_fields
from scheduling_framework.api.meta import MetadataAccessors, ObjectMeta, object_ref, reraise_for
from scheduling_framework.api.names import is_qualified_name
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resources import is_extended_resource_name
from scheduling_framework.api.selectors import NodeSelector
from scheduling_framework.api.taints import toleration_dict, toleration_fields
from scheduling_framework.errors import ManifestError, ValidationError, brief_str

GROUP = "resource.k8s.io"
API_VERSION = "resource.k8s.io/v1"
SUPPORTED_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
ALLOCATION_MODES = (ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_MODE_ALL)

# Upstream API validation limits the allocator relies on.
RESOURCE_SLICE_MAX_DEVICES = 128
ALLOCATION_RESULTS_MAX_SIZE = 32
DEVICE_TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
DEVICE_TOLERATION_OPERATORS = ("Exists", "Equal")

AttributeValue = bool | int | str


def _check_api_version(manifest: Any, kind: str, strict: bool | None) -> tuple[Mapping[str, Any], str]:
    """Kind and apiVersion checks shared by the four kinds (and the unknown-field check, ``strict`` as for
    ``Pod.from_dict``); returns the manifest (a client object read as one) and its version."""
    manifest = as_manifest(manifest, kind)
    got = manifest.get("kind")
    if got not in (None, kind):
        raise ManifestError(object_ref(kind, manifest), f'expected kind "{kind}", got "{got}"', "kind")
    av = manifest.get("apiVersion")
    if av is None:
        check_unknown_fields(manifest, kind, object_ref(kind, manifest), strict, stacklevel=4)
        return manifest, API_VERSION
    if av not in SUPPORTED_API_VERSIONS:
        raise ManifestError(object_ref(kind, manifest),
                            f'unsupported apiVersion "{av}" for {kind}: supported versions: '
                            + ", ".join(f'"{v}"' for v in SUPPORTED_API_VERSIONS), "apiVersion")
    check_unknown_fields(manifest, kind, object_ref(kind, manifest), strict, stacklevel=4)
    return manifest, str(av)


def _meta(m: Mapping[str, Any], namespaced: bool) -> ObjectMeta:
    meta = ObjectMeta.from_dict(m.get("metadata"), "metadata", namespaced=namespaced)
    if not meta.name:
        raise ValidationError("Required value: name is required", "metadata.name")
    return meta


def _opt_str(value: Any, path: str) -> str | None:
    return None if value is None else as_str(value, path)


def _opt_bool(value: Any, path: str) -> bool | None:
    return None if value is None else as_bool(value, path)


def _quantity(value: Any, path: str) -> Quantity:
    if value is None:
        raise ValidationError("Required value", path)
    return Quantity.parse(value, path)


# --- shared pieces ------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class DeviceSelector:
    """A CEL selector (``cel.expression``); the only selector kind the API defines."""

    expression: str

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceSelector:
        m = as_map(d, path)
        cel = m.get("cel")
        if cel is None:
            raise ValidationError("Required value: exactly one selector type must be set", f"{path}.cel")
        cm = as_map(cel, f"{path}.cel")
        expr = as_str(cm.get("expression"), f"{path}.cel.expression")
        if not expr:
            raise ValidationError("Required value", f"{path}.cel.expression")
        problem = admission_error(expr)
        if problem is not None:
            # the API server's admission check: an estimated cost above CELSelectorExpressionMaxCost, or an expression
            # past the CEL parser's limits (its cost cannot be estimated); other compile errors surface when scheduling
            raise ValidationError(problem, f"{path}.cel.expression")
        return cls(expr)

    def to_dict(self) -> dict[str, Any]:
        return {"cel": {"expression": self.expression}}


def _selectors(value: Any, path: str) -> tuple[DeviceSelector, ...]:
    return tuple(DeviceSelector.from_dict(s, f"{path}[{i}]") for i, s in enumerate(as_list(value, path)))


@attrs.frozen(slots=True)
class OpaqueDeviceConfiguration:
    driver: str
    parameters: Any = attrs.field(factory=dict, eq=False)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> OpaqueDeviceConfiguration:
        m = as_map(d, path)
        return cls(as_str(m.get("driver"), f"{path}.driver"), copy.deepcopy(m.get("parameters")))

    def to_dict(self) -> dict[str, Any]:
        return {"driver": self.driver, "parameters": copy.deepcopy(self.parameters)}


@attrs.frozen(slots=True)
class DeviceConfiguration:
    """One entry of DeviceClass spec.config or ResourceClaim spec.devices.config (``requests`` empty = all)."""

    opaque: OpaqueDeviceConfiguration | None = None
    requests: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceConfiguration:
        m = as_map(d, path)
        op = m.get("opaque")
        return cls(None if op is None else OpaqueDeviceConfiguration.from_dict(op, f"{path}.opaque"),
                   str_tuple(m.get("requests"), f"{path}.requests"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.requests:
            d["requests"] = list(self.requests)
        if self.opaque is not None:
            d["opaque"] = self.opaque.to_dict()
        return d


@attrs.frozen(slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceToleration:
        return cls(*toleration_fields(d, path, DEVICE_TOLERATION_OPERATORS, '"Equal", "Exists"'))

    def to_dict(self) -> dict[str, Any]:
        return toleration_dict(self)

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceapi ToleratesTaint: empty key with Exists matches all keys, empty effect all effects."""
        if self.key and self.key != taint.key:
            return False
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False


def _tolerations(value: Any, path: str) -> tuple[DeviceToleration, ...]:
    return tuple(DeviceToleration.from_dict(t, f"{path}[{i}]") for i, t in enumerate(as_list(value, path)))


@attrs.frozen(slots=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str = ""
    time_added: datetime | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceTaint:
        m = as_map(d, path)
        effect = as_str(m.get("effect"), f"{path}.effect")
        if effect not in DEVICE_TAINT_EFFECTS:
            raise ValidationError(f'Unsupported value: "{brief_str(effect)}": supported values: "NoExecute", '
                                  '"NoSchedule", "None"',
                                  f"{path}.effect")
        return cls(as_str(m.get("key"), f"{path}.key"), as_str(m.get("value"), f"{path}.value"), effect,
                   as_time(m.get("timeAdded"), f"{path}.timeAdded"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "effect": self.effect}
        if self.value:
            d["value"] = self.value
        if self.time_added is not None:
            d["timeAdded"] = self.time_added.isoformat()
        return d


# --- DeviceClass ---------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class DeviceClassSpec:
    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()
    extended_resource_name: str | None = None


@attrs.frozen(slots=True, eq=False)
class DeviceClass(MetadataAccessors):
    """A cluster-scoped DeviceClass: selectors every device of the class must pass, and class config."""

    metadata: ObjectMeta
    spec: DeviceClassSpec
    api_version: str = API_VERSION
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> DeviceClass:
        """A DeviceClass from its manifest (a dict or a client object); ``strict`` as for ``Pod.from_dict``."""
        m, av = _check_api_version(manifest, "DeviceClass", strict)
        manifest = m
        try:
            meta = _meta(m, namespaced=False)
            s = as_map(m.get("spec"), "spec")
            spec = DeviceClassSpec(
                _selectors(s.get("selectors"), "spec.selectors"),
                tuple(DeviceConfiguration.from_dict(c, f"spec.config[{i}]")
                      for i, c in enumerate(as_list(s.get("config"), "spec.config"))),
                _opt_str(s.get("extendedResourceName"), "spec.extendedResourceName"))
            ext = spec.extended_resource_name
            if ext is not None and not is_extended_resource_name(ext):
                raise ValidationError(f'Invalid value: "{brief_str(ext)}": must be a valid extended resource name',
                                      "spec.extendedResourceName")
        except ValidationError as e:
            raise reraise_for("DeviceClass", manifest, e) from None
        return cls(meta, spec, av, m)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._raw))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceClass):
            return NotImplemented
        return (self.metadata, self.spec) == (other.metadata, other.spec)

    def __hash__(self) -> int:
        return hash(self.metadata.name)

    def __repr__(self) -> str:
        return f"DeviceClass({self.name})"


# --- ResourceSlice -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class DeviceAttribute:
    """One typed attribute value; ``kind`` is "int", "bool", "string" or "version" (a semver string)."""

    kind: Literal["int", "bool", "string", "version"]
    value: AttributeValue

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceAttribute:
        m = as_map(d, path)
        found: list[DeviceAttribute] = []
        if m.get("int") is not None:
            found.append(cls("int", as_int(m.get("int"), f"{path}.int")))
        if m.get("bool") is not None:
            found.append(cls("bool", as_bool(m.get("bool"), f"{path}.bool")))
        if m.get("string") is not None:
            found.append(cls("string", as_str(m.get("string"), f"{path}.string")))
        if m.get("version") is not None:
            found.append(cls("version", as_str(m.get("version"), f"{path}.version")))
        if len(found) != 1:
            lists = [k for k in ("ints", "bools", "strings", "versions") if m.get(k) is not None]
            if lists and not found:
                # DRAListTypeAttributes (alpha from 1.36) is not implemented: refuse rather than drop the device
                raise ValidationError("Unsupported value: list-type attributes (DRAListTypeAttributes) are not "
                                      "supported here", f"{path}.{lists[0]}")
            raise ValidationError("Invalid value: exactly one value must be specified", path)
        return found[0]

    def to_dict(self) -> dict[str, Any]:
        return {self.kind: self.value}


@attrs.frozen(slots=True)
class CapacityRequestPolicyRange:
    min: Quantity
    max: Quantity | None = None
    step: Quantity | None = None


@attrs.frozen(slots=True)
class CapacityRequestPolicy:
    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range: CapacityRequestPolicyRange | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> CapacityRequestPolicy:
        m = as_map(d, path)
        vr = m.get("validRange")
        rng = None
        if vr is not None:
            rm = as_map(vr, f"{path}.validRange")
            mx, st = rm.get("max"), rm.get("step")
            rng = CapacityRequestPolicyRange(
                _quantity(rm.get("min"), f"{path}.validRange.min"),
                None if mx is None else Quantity.parse(mx, f"{path}.validRange.max"),
                None if st is None else Quantity.parse(st, f"{path}.validRange.step"))
        df = m.get("default")
        return cls(None if df is None else Quantity.parse(df, f"{path}.default"),
                   tuple(Quantity.parse(v, f"{path}.validValues[{i}]")
                         for i, v in enumerate(as_list(m.get("validValues"), f"{path}.validValues"))),
                   rng)


@attrs.frozen(slots=True)
class DeviceCapacity:
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceCapacity:
        m = as_map(d, path)
        rp = m.get("requestPolicy")
        return cls(_quantity(m.get("value"), f"{path}.value"),
                   None if rp is None else CapacityRequestPolicy.from_dict(rp, f"{path}.requestPolicy"))


def _counters(value: Any, path: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for k, c in as_map(value, path).items():
        cm = as_map(c, f"{path}.{k}")
        out[str(k)] = _quantity(cm.get("value"), f"{path}.{k}.value")
    return out


@attrs.frozen(slots=True)
class CounterSet:
    """A named set of counters in ResourceSlice spec.sharedCounters."""

    name: str
    counters: Mapping[str, Quantity] = attrs.field(factory=dict)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> CounterSet:
        m = as_map(d, path)
        return cls(as_str(m.get("name"), f"{path}.name"), _counters(m.get("counters"), f"{path}.counters"))


@attrs.frozen(slots=True)
class DeviceCounterConsumption:
    counter_set: str
    counters: Mapping[str, Quantity] = attrs.field(factory=dict)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceCounterConsumption:
        m = as_map(d, path)
        return cls(as_str(m.get("counterSet"), f"{path}.counterSet"),
                   _counters(m.get("counters"), f"{path}.counters"))


@attrs.frozen(slots=True, eq=False)
class Device:
    """One device of a ResourceSlice. Attribute and capacity keys are as written (qualified or not)."""

    name: str
    attributes: Mapping[str, DeviceAttribute] = attrs.field(factory=dict)
    capacity: Mapping[str, DeviceCapacity] = attrs.field(factory=dict)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str, beta1: bool = False) -> Device:
        m = as_map(d, path)
        name = as_str(m.get("name"), f"{path}.name")
        if beta1:
            # v1beta1 wraps everything but the name in "basic".
            path = f"{path}.basic"
            m = as_map(m.get("basic"), path)
        attrs_m = as_map(m.get("attributes"), f"{path}.attributes")
        cap_m = as_map(m.get("capacity"), f"{path}.capacity")
        ns = m.get("nodeSelector")
        return cls(
            name=name,
            attributes={str(k): DeviceAttribute.from_dict(v, f"{path}.attributes.{k}") for k, v in attrs_m.items()},
            capacity={str(k): DeviceCapacity.from_dict(v, f"{path}.capacity.{k}") for k, v in cap_m.items()},
            consumes_counters=tuple(
                DeviceCounterConsumption.from_dict(c, f"{path}.consumesCounters[{i}]")
                for i, c in enumerate(as_list(m.get("consumesCounters"), f"{path}.consumesCounters"))),
            node_name=_opt_str(m.get("nodeName"), f"{path}.nodeName"),
            node_selector=None if ns is None else NodeSelector.from_dict(ns, f"{path}.nodeSelector"),
            all_nodes=_opt_bool(m.get("allNodes"), f"{path}.allNodes"),
            taints=tuple(DeviceTaint.from_dict(t, f"{path}.taints[{i}]")
                         for i, t in enumerate(as_list(m.get("taints"), f"{path}.taints"))),
            binds_to_node=_opt_bool(m.get("bindsToNode"), f"{path}.bindsToNode"),
            binding_conditions=str_tuple(m.get("bindingConditions"), f"{path}.bindingConditions"),
            binding_failure_conditions=str_tuple(m.get("bindingFailureConditions"),
                                                 f"{path}.bindingFailureConditions"),
            allow_multiple_allocations=_opt_bool(m.get("allowMultipleAllocations"),
                                                 f"{path}.allowMultipleAllocations"),
        )


@attrs.frozen(slots=True)
class ResourcePool:
    name: str
    generation: int = 0
    resource_slice_count: int = 0


@attrs.frozen(slots=True)
class ResourceSliceSpec:
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()


@attrs.frozen(slots=True, eq=False)
class ResourceSlice(MetadataAccessors):
    """A cluster-scoped ResourceSlice: part of one driver's pool of devices."""

    metadata: ObjectMeta
    spec: ResourceSliceSpec
    api_version: str = API_VERSION
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> ResourceSlice:
        """A ResourceSlice from its manifest (a dict or a client object); ``strict`` as for ``Pod.from_dict``."""
        m, av = _check_api_version(manifest, "ResourceSlice", strict)
        manifest = m
        beta1 = av.endswith("/v1beta1")
        try:
            meta = _meta(m, namespaced=False)
            s = as_map(m.get("spec"), "spec")
            driver = as_str(s.get("driver"), "spec.driver")
            if not driver:
                raise ValidationError("Required value", "spec.driver")
            pm = as_map(s.get("pool"), "spec.pool")
            pool = ResourcePool(as_str(pm.get("name"), "spec.pool.name"),
                                as_int(pm.get("generation"), "spec.pool.generation"),
                                as_int(pm.get("resourceSliceCount"), "spec.pool.resourceSliceCount"))
            if not pool.name:
                raise ValidationError("Required value", "spec.pool.name")
            ns = s.get("nodeSelector")
            spec = ResourceSliceSpec(
                driver=driver,
                pool=pool,
                node_name=_opt_str(s.get("nodeName"), "spec.nodeName"),
                node_selector=None if ns is None else NodeSelector.from_dict(ns, "spec.nodeSelector"),
                all_nodes=_opt_bool(s.get("allNodes"), "spec.allNodes"),
                per_device_node_selection=_opt_bool(s.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection"),
                devices=tuple(Device.from_dict(d, f"spec.devices[{i}]", beta1)
                              for i, d in enumerate(as_list(s.get("devices"), "spec.devices"))),
                shared_counters=tuple(CounterSet.from_dict(c, f"spec.sharedCounters[{i}]")
                                      for i, c in enumerate(as_list(s.get("sharedCounters"),
                                                                    "spec.sharedCounters"))),
            )
        except ValidationError as e:
            raise reraise_for("ResourceSlice", manifest, e) from None
        return cls(meta, spec, av, m)

    def with_node_name(self, name: str, node_name: str) -> ResourceSlice:
        """A copy renamed to ``name`` and bound to ``node_name`` (a slice cloned with its template node)."""
        raw = copy.deepcopy(dict(self._raw))
        raw.setdefault("metadata", {})["name"] = name
        raw.setdefault("spec", {})["nodeName"] = node_name
        raw["spec"]["pool"] = {**raw["spec"].get("pool", {}), "name": node_name}
        return ResourceSlice.from_dict(raw, strict=None)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._raw))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceSlice):
            return NotImplemented
        return self._raw == other._raw

    def __hash__(self) -> int:
        return hash(self.metadata.name)

    def __repr__(self) -> str:
        return f"ResourceSlice({self.name})"


# --- ResourceClaim -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class CapacityRequirements:
    requests: Mapping[str, Quantity] = attrs.field(factory=dict)

    @classmethod
    def from_opt(cls, d: Any, path: str) -> CapacityRequirements | None:
        if d is None:
            return None
        m = as_map(d, path)
        return cls({str(k): Quantity.parse(v, f"{path}.requests.{k}")
                    for k, v in as_map(m.get("requests"), f"{path}.requests").items()})


@attrs.frozen(slots=True)
class ExactDeviceRequest:
    """``exactly`` (and, with a ``name``, one ``firstAvailable`` subrequest): which devices, how many."""

    device_class_name: str
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityRequirements | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str, subrequest: bool = False) -> ExactDeviceRequest:
        m = as_map(d, path)
        mode = as_str(m.get("allocationMode"), f"{path}.allocationMode") or ALLOCATION_MODE_EXACT_COUNT
        if mode not in ALLOCATION_MODES:
            raise ValidationError(f'Unsupported value: "{brief_str(mode)}": supported values: "All", "ExactCount"',
                                  f"{path}.allocationMode")
        count_raw = m.get("count")
        count = as_int(count_raw, f"{path}.count", 1 if mode == ALLOCATION_MODE_EXACT_COUNT else 0)
        if mode == ALLOCATION_MODE_EXACT_COUNT and count <= 0:
            raise ValidationError(f"Invalid value: {count}: must be greater than zero", f"{path}.count")
        return cls(
            device_class_name=as_str(m.get("deviceClassName"), f"{path}.deviceClassName"),
            selectors=_selectors(m.get("selectors"), f"{path}.selectors"),
            allocation_mode=mode,
            count=count,
            admin_access=None if subrequest else _opt_bool(m.get("adminAccess"), f"{path}.adminAccess"),
            tolerations=_tolerations(m.get("tolerations"), f"{path}.tolerations"),
            capacity=CapacityRequirements.from_opt(m.get("capacity"), f"{path}.capacity"),
        )


@attrs.frozen(slots=True)
class DeviceSubRequest:
    name: str
    request: ExactDeviceRequest


@attrs.frozen(slots=True)
class DeviceRequest:
    """A named request: exactly one of ``exactly`` and ``first_available`` is set."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str, beta1: bool = False) -> DeviceRequest:
        m = as_map(d, path)
        name = as_str(m.get("name"), f"{path}.name")
        if not name:
            raise ValidationError("Required value", f"{path}.name")
        fa_path = f"{path}.firstAvailable"
        subs = []
        for i, s in enumerate(as_list(m.get("firstAvailable"), fa_path)):
            sm = as_map(s, f"{fa_path}[{i}]")
            sname = as_str(sm.get("name"), f"{fa_path}[{i}].name")
            if not sname:
                raise ValidationError("Required value", f"{fa_path}[{i}].name")
            subs.append(DeviceSubRequest(sname, ExactDeviceRequest.from_dict(sm, f"{fa_path}[{i}]", True)))
        if beta1:
            exact = None if subs else ExactDeviceRequest.from_dict(m, path)
        else:
            ex = m.get("exactly")
            exact = None if ex is None else ExactDeviceRequest.from_dict(ex, f"{path}.exactly")
        if (exact is None) == (not subs):
            raise ValidationError("Invalid value: exactly one of `exactly` or `firstAvailable` is required",
                                  path)
        return cls(name, exact, tuple(subs))


@attrs.frozen(slots=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceConstraint:
        m = as_map(d, path)
        return cls(str_tuple(m.get("requests"), f"{path}.requests"),
                   _opt_str(m.get("matchAttribute"), f"{path}.matchAttribute"),
                   _opt_str(m.get("distinctAttribute"), f"{path}.distinctAttribute"))


@attrs.frozen(slots=True)
class DeviceClaim:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()


@attrs.frozen(slots=True)
class ResourceClaimSpec:
    devices: DeviceClaim = attrs.field(factory=DeviceClaim)

    @classmethod
    def from_dict(cls, d: Any, path: str, beta1: bool = False) -> ResourceClaimSpec:
        m = as_map(d, path)
        dm = as_map(m.get("devices"), f"{path}.devices")
        p = f"{path}.devices"
        requests = tuple(DeviceRequest.from_dict(r, f"{p}.requests[{i}]", beta1)
                         for i, r in enumerate(as_list(dm.get("requests"), f"{p}.requests")))
        seen: set[str] = set()
        for i, r in enumerate(requests):
            if r.name in seen:
                raise ValidationError(f'Duplicate value: "{r.name}"', f"{p}.requests[{i}].name")
            seen.add(r.name)
        return cls(DeviceClaim(
            requests,
            tuple(DeviceConstraint.from_dict(c, f"{p}.constraints[{i}]")
                  for i, c in enumerate(as_list(dm.get("constraints"), f"{p}.constraints"))),
            tuple(DeviceConfiguration.from_dict(c, f"{p}.config[{i}]")
                  for i, c in enumerate(as_list(dm.get("config"), f"{p}.config")))))


@attrs.frozen(slots=True)
class DeviceRequestAllocationResult:
    """One allocated device: which request (``req`` or ``req/subreq``) got which driver/pool/device."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: Mapping[str, Quantity] = attrs.field(factory=dict)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceRequestAllocationResult:
        m = as_map(d, path)
        cc = as_map(m.get("consumedCapacity"), f"{path}.consumedCapacity")
        return cls(as_str(m.get("request"), f"{path}.request"), as_str(m.get("driver"), f"{path}.driver"),
                   as_str(m.get("pool"), f"{path}.pool"), as_str(m.get("device"), f"{path}.device"),
                   _opt_bool(m.get("adminAccess"), f"{path}.adminAccess"),
                   _tolerations(m.get("tolerations"), f"{path}.tolerations"),
                   str_tuple(m.get("bindingConditions"), f"{path}.bindingConditions"),
                   str_tuple(m.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"),
                   _opt_str(m.get("shareID"), f"{path}.shareID"),
                   {str(k): Quantity.parse(v, f"{path}.consumedCapacity.{k}") for k, v in cc.items()})

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool,
                             "device": self.device}
        if self.admin_access is not None:
            d["adminAccess"] = self.admin_access
        if self.tolerations:
            d["tolerations"] = [t.to_dict() for t in self.tolerations]
        if self.binding_conditions:
            d["bindingConditions"] = list(self.binding_conditions)
        if self.binding_failure_conditions:
            d["bindingFailureConditions"] = list(self.binding_failure_conditions)
        if self.share_id is not None:
            d["shareID"] = self.share_id
        if self.consumed_capacity:
            d["consumedCapacity"] = {k: str(v) for k, v in self.consumed_capacity.items()}
        return d


@attrs.frozen(slots=True)
class DeviceAllocationConfiguration:
    """Config copied into the allocation; ``source`` is "FromClass" or "FromClaim"."""

    source: str
    opaque: OpaqueDeviceConfiguration | None = None
    requests: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DeviceAllocationConfiguration:
        m = as_map(d, path)
        c = DeviceConfiguration.from_dict(m, path)
        return cls(as_str(m.get("source"), f"{path}.source"), c.opaque, c.requests)

    def to_dict(self) -> dict[str, Any]:
        d = DeviceConfiguration(self.opaque, self.requests).to_dict()
        d["source"] = self.source
        return d


@attrs.frozen(slots=True)
class AllocationResult:
    """ResourceClaim status.allocation: the devices and the nodes that can reach them (None = all nodes)."""

    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[DeviceAllocationConfiguration, ...] = ()
    node_selector: NodeSelector | None = None
    allocation_timestamp: datetime | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str) -> AllocationResult:
        m = as_map(d, path)
        dm = as_map(m.get("devices"), f"{path}.devices")
        rp, cp = f"{path}.devices.results", f"{path}.devices.config"
        ns = m.get("nodeSelector")
        return cls(tuple(DeviceRequestAllocationResult.from_dict(r, f"{rp}[{i}]")
                         for i, r in enumerate(as_list(dm.get("results"), rp))),
                   tuple(DeviceAllocationConfiguration.from_dict(c, f"{cp}[{i}]")
                         for i, c in enumerate(as_list(dm.get("config"), cp))),
                   None if ns is None else NodeSelector.from_dict(ns, f"{path}.nodeSelector"),
                   as_time(m.get("allocationTimestamp"), f"{path}.allocationTimestamp"))

    def to_dict(self) -> dict[str, Any]:
        devices: dict[str, Any] = {"results": [r.to_dict() for r in self.results]}
        if self.config:
            devices["config"] = [c.to_dict() for c in self.config]
        d: dict[str, Any] = {"devices": devices}
        if self.node_selector is not None:
            d["nodeSelector"] = self.node_selector.to_dict()
        if self.allocation_timestamp is not None:
            d["allocationTimestamp"] = self.allocation_timestamp.isoformat()
        return d


@attrs.frozen(slots=True)
class ResourceClaimConsumerReference:
    """An entry of status.reservedFor (for pods: resource "pods", apiGroup "")."""

    resource: str
    name: str
    uid: str
    api_group: str = ""

    @classmethod
    def from_dict(cls, d: Any, path: str) -> ResourceClaimConsumerReference:
        m = as_map(d, path)
        return cls(as_str(m.get("resource"), f"{path}.resource"), as_str(m.get("name"), f"{path}.name"),
                   as_str(m.get("uid"), f"{path}.uid"), as_str(m.get("apiGroup"), f"{path}.apiGroup"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"resource": self.resource, "name": self.name, "uid": self.uid}
        if self.api_group:
            d["apiGroup"] = self.api_group
        return d


@attrs.frozen(slots=True)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[Mapping[str, Any], ...] = attrs.field(default=(), eq=False)  # kept as written

    @classmethod
    def from_dict(cls, d: Any, path: str = "status") -> ResourceClaimStatus:
        m = as_map(d, path)
        al = m.get("allocation")
        return cls(None if al is None else AllocationResult.from_dict(al, f"{path}.allocation"),
                   tuple(ResourceClaimConsumerReference.from_dict(r, f"{path}.reservedFor[{i}]")
                         for i, r in enumerate(as_list(m.get("reservedFor"), f"{path}.reservedFor"))),
                   tuple(as_map(x, f"{path}.devices[{i}]")
                         for i, x in enumerate(as_list(m.get("devices"), f"{path}.devices"))))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.allocation is not None:
            d["allocation"] = self.allocation.to_dict()
        if self.reserved_for:
            d["reservedFor"] = [r.to_dict() for r in self.reserved_for]
        if self.devices:
            d["devices"] = copy.deepcopy([dict(x) for x in self.devices])
        return d


@attrs.frozen(slots=True, eq=False)
class ResourceClaim(MetadataAccessors):
    """A namespaced ResourceClaim. Immutable: ``with_allocation`` / ``with_reserved_for`` return copies."""

    metadata: ObjectMeta
    spec: ResourceClaimSpec
    status: ResourceClaimStatus = attrs.field(factory=ResourceClaimStatus)
    api_version: str = API_VERSION
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)
    _status_changed: bool = attrs.field(default=False, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> ResourceClaim:
        """A ResourceClaim from its manifest (a dict or a client object); ``strict`` as for ``Pod.from_dict``."""
        m, av = _check_api_version(manifest, "ResourceClaim", strict)
        manifest = m
        try:
            meta = _meta(m, namespaced=True)
            spec = ResourceClaimSpec.from_dict(m.get("spec"), "spec", av.endswith("/v1beta1"))
            status = ResourceClaimStatus.from_dict(m.get("status"), "status")
        except ValidationError as e:
            raise reraise_for("ResourceClaim", manifest, e) from None
        if not meta.uid:
            meta = attrs.evolve(meta, uid=f"{meta.namespace}/{meta.name}")
        return cls(meta, spec, status, av, m)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def allocation(self) -> AllocationResult | None:
        return self.status.allocation

    @property
    def reserved_for(self) -> tuple[ResourceClaimConsumerReference, ...]:
        return self.status.reserved_for

    def with_allocation(self, allocation: AllocationResult | None) -> ResourceClaim:
        return attrs.evolve(self, status=attrs.evolve(self.status, allocation=allocation), status_changed=True)

    def with_reserved_for(self, reserved_for: tuple[ResourceClaimConsumerReference, ...]) -> ResourceClaim:
        return attrs.evolve(self, status=attrs.evolve(self.status, reserved_for=tuple(reserved_for)),
                            status_changed=True)

    def to_dict(self) -> dict[str, Any]:
        d = copy.deepcopy(dict(self._raw))
        if self._status_changed:
            st = self.status.to_dict()
            if st:
                d["status"] = st
            else:
                d.pop("status", None)
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceClaim):
            return NotImplemented
        return (self.metadata, self.spec, self.status) == (other.metadata, other.spec, other.status)

    def __hash__(self) -> int:
        return hash(self.metadata.uid)

    def __repr__(self) -> str:
        return f"ResourceClaim({self.key})"


@attrs.frozen(slots=True, eq=False)
class ResourceClaimTemplate(MetadataAccessors):
    """A namespaced ResourceClaimTemplate: the metadata and spec of the claims generated from it."""

    metadata: ObjectMeta
    claim_metadata: Mapping[str, Any]  # spec.metadata as written (labels, annotations for generated claims)
    spec: ResourceClaimSpec
    api_version: str = API_VERSION
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> ResourceClaimTemplate:
        """A ResourceClaimTemplate from its manifest (a dict or a client object); ``strict`` as for Pod.from_dict."""
        m, av = _check_api_version(manifest, "ResourceClaimTemplate", strict)
        manifest = m
        try:
            meta = _meta(m, namespaced=True)
            s = as_map(m.get("spec"), "spec")
            cm = as_map(s.get("metadata"), "spec.metadata")
            ObjectMeta.from_dict(cm, "spec.metadata")  # validate the shape
            spec = ResourceClaimSpec.from_dict(s.get("spec"), "spec.spec", av.endswith("/v1beta1"))
        except ValidationError as e:
            raise reraise_for("ResourceClaimTemplate", manifest, e) from None
        return cls(meta, dict(cm), spec, av, m)

    def claim_spec_dict(self) -> dict[str, Any]:
        """spec.spec as written (to copy into a generated claim of the same apiVersion)."""
        s = self._raw.get("spec")
        inner = s.get("spec") if isinstance(s, Mapping) else None
        return copy.deepcopy(dict(inner)) if isinstance(inner, Mapping) else {}

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._raw))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceClaimTemplate):
            return NotImplemented
        return (self.metadata, self.spec) == (other.metadata, other.spec)

    def __hash__(self) -> int:
        return hash(self.metadata.uid or self.metadata.name)

    def __repr__(self) -> str:
        return f"ResourceClaimTemplate({self.metadata.namespace}/{self.metadata.name})"


# --- DeviceTaintRule -----------------------------------------------------------------------------

#: the API versions a DeviceTaintRule is served in: v1alpha3 (1.33 on), v1beta2 (1.36 on), v1 (1.37 on)
DEVICE_TAINT_RULE_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3")


@attrs.frozen(slots=True)
class DeviceTaintSelector:
    """Which devices a DeviceTaintRule taints: every field that is set must match (an empty selector matches
    every device). ``device_class_name`` (the class's CEL selectors) and ``selectors`` (CEL) are evaluated by
    the caller that has the classes and a CEL evaluator."""

    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    device_class_name: str | None = None
    selectors: tuple[DeviceSelector, ...] = ()

    def matches(self, driver: str, pool: str, device: str) -> bool:
        return ((self.driver is None or self.driver == driver) and (self.pool is None or self.pool == pool)
                and (self.device is None or self.device == device))


@attrs.frozen(slots=True, eq=False)
class DeviceTaintRule(MetadataAccessors):
    """A cluster-scoped DeviceTaintRule: one taint for the devices its selector picks. A rule without a selector
    taints every device, as upstream's ResourceSlice tracker applies it."""

    metadata: ObjectMeta
    selector: DeviceTaintSelector | None
    taint: DeviceTaint
    api_version: str = API_VERSION
    _raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_dict(cls, manifest: Any, *, strict: bool | None = False) -> DeviceTaintRule:
        """A DeviceTaintRule from its manifest (a dict or a client object). ``strict`` is accepted as by the other
        kinds' parsers; DeviceTaintRule is outside the field schema the package knows, so its fields are not
        checked."""
        manifest = as_manifest(manifest, "DeviceTaintRule")
        got = manifest.get("kind")
        if got not in (None, "DeviceTaintRule"):
            raise ManifestError(object_ref("DeviceTaintRule", manifest), f'expected kind "DeviceTaintRule", '
                                f'got "{got}"', "kind")
        av = manifest.get("apiVersion") or "resource.k8s.io/v1"
        if av not in DEVICE_TAINT_RULE_API_VERSIONS:
            raise ManifestError(object_ref("DeviceTaintRule", manifest),
                                f'unsupported apiVersion "{av}" for DeviceTaintRule: supported versions: '
                                + ", ".join(f'"{v}"' for v in DEVICE_TAINT_RULE_API_VERSIONS), "apiVersion")
        try:
            meta = _meta(manifest, namespaced=False)
            s = as_map(manifest.get("spec"), "spec")
            selector: DeviceTaintSelector | None = None
            if s.get("deviceSelector") is not None:
                ds = as_map(s.get("deviceSelector"), "spec.deviceSelector")
                selector = DeviceTaintSelector(
                    _opt_str(ds.get("driver"), "spec.deviceSelector.driver"),
                    _opt_str(ds.get("pool"), "spec.deviceSelector.pool"),
                    _opt_str(ds.get("device"), "spec.deviceSelector.device"),
                    _opt_str(ds.get("deviceClassName"), "spec.deviceSelector.deviceClassName"),
                    _selectors(ds.get("selectors"), "spec.deviceSelector.selectors"))
            if s.get("taint") is None:
                raise ValidationError("Required value", "spec.taint")
            taint = DeviceTaint.from_dict(s.get("taint"), "spec.taint")
            if not taint.key:
                raise ValidationError("Required value", "spec.taint.key")
            problems = is_qualified_name(taint.key)
            if problems:
                raise ValidationError(f'Invalid value: "{brief_str(taint.key)}": {problems[0]}', "spec.taint.key")
        except ValidationError as e:
            raise reraise_for("DeviceTaintRule", manifest, e) from None
        return cls(meta, selector, taint, str(av), manifest)

    def matches(self, driver: str, pool: str, device: str) -> bool:
        """Whether the rule's driver / pool / device criteria select this device (no selector: every device)."""
        return self.selector is None or self.selector.matches(driver, pool, device)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._raw))

    def __repr__(self) -> str:
        return f"DeviceTaintRule({self.name})"


# --- fields read by upstream's scheduler that are not modelled -------------------------------------

#: (field path with ``[]`` for list items, the feature gate behind it) per kind, for fields of the 1.36 / 1.37 API
#: that upstream's scheduler reads (the allocator, or NodeResourcesFit for node-allocatable resources) and the
#: parsers above do not: ``unmodelled_fields`` finds them in a manifest so that the caller can warn.
UNMODELLED_FIELDS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "ResourceSlice": (
        ("spec.devices[].nodeAllocatableResources", "DRANodeAllocatableResources"),
        ("spec.devices[].nodeAllocatableResourceMappings", "DRANodeAllocatableResources"),
        ("spec.devices[].consumesCounters[].compatibilityGroups", "DRADeviceCompatibilityGroups"),
        ("spec.skipNodeOperations", "DRAOptionalNodeOperations"),
    ),
    "ResourceClaim": (
        ("spec.devices.requests[].exactly.derivedAttributes", "DRADerivedAttributes"),
        ("spec.devices.requests[].firstAvailable[].derivedAttributes", "DRADerivedAttributes"),
    ),
    "ResourceClaimTemplate": (
        ("spec.spec.devices.requests[].exactly.derivedAttributes", "DRADerivedAttributes"),
        ("spec.spec.devices.requests[].firstAvailable[].derivedAttributes", "DRADerivedAttributes"),
    ),
}


def _present(value: Any, steps: list[str]) -> bool:
    """Whether the field at ``steps`` (``name`` or ``name[]``) is set somewhere under ``value``."""
    if not steps:
        return value is not None and value != [] and value != {}
    if not isinstance(value, Mapping):
        return False
    step, rest = steps[0], steps[1:]
    if step.endswith("[]"):
        items = value.get(step[:-2])
        return isinstance(items, list) and any(_present(i, rest) for i in items)
    return _present(value.get(step), rest)


def unmodelled_fields(kind: str, manifest: Any) -> tuple[tuple[str, str], ...]:
    """The (field path, feature gate) entries of ``UNMODELLED_FIELDS`` set in ``manifest`` (v1beta1 shapes
    included: device fields under ``basic``, request fields on the request)."""
    out = []
    beta1 = isinstance(manifest, Mapping) and manifest.get("apiVersion") == "resource.k8s.io/v1beta1"
    for path, gate in UNMODELLED_FIELDS.get(kind, ()):
        steps = path.split(".")
        if beta1:
            steps = [x for x in steps if x != "exactly"]
            if "devices[]" in steps and kind == "ResourceSlice":
                i = steps.index("devices[]") + 1
                steps = [*steps[:i], "basic", *steps[i:]]
        if _present(manifest, steps):
            out.append((path, gate))
    return tuple(out)


def has_device_taints(manifest: Any) -> bool:
    """Whether a ResourceSlice manifest has a device with ``taints`` (under ``basic`` in v1beta1)."""
    beta1 = isinstance(manifest, Mapping) and manifest.get("apiVersion") == "resource.k8s.io/v1beta1"
    return _present(manifest, ["spec", "devices[]", "basic", "taints"] if beta1 else ["spec", "devices[]", "taints"])



#: The DRA kinds' parsers by kind: loading a cluster (and coercing an object) parses each such object strictly once,
#: so that a malformed one is refused at load, naming the field.
PARSERS: dict[str, Any] = {"DeviceClass": DeviceClass.from_dict, "ResourceSlice": ResourceSlice.from_dict,
                           "ResourceClaim": ResourceClaim.from_dict,
                           "ResourceClaimTemplate": ResourceClaimTemplate.from_dict,
                           "DeviceTaintRule": DeviceTaintRule.from_dict}

__all__ = [
    "PARSERS",
    "ALLOCATION_MODE_ALL", "ALLOCATION_MODE_EXACT_COUNT", "API_VERSION", "AllocationResult", "CapacityRequirements",
    "CounterSet", "Device", "DeviceAllocationConfiguration", "DeviceAttribute", "DeviceCapacity", "DeviceClaim",
    "DeviceClass", "DeviceClassSpec", "DeviceConfiguration", "DeviceConstraint", "DeviceCounterConsumption",
    "DeviceRequest", "DeviceRequestAllocationResult", "DeviceSelector", "DeviceSubRequest", "DeviceTaint",
    "DeviceTaintRule", "DeviceTaintSelector",
    "DeviceToleration", "ExactDeviceRequest", "OpaqueDeviceConfiguration", "ResourceClaim",
    "ResourceClaimConsumerReference", "ResourceClaimSpec", "ResourceClaimStatus", "ResourceClaimTemplate",
    "ResourcePool", "ResourceSlice", "ResourceSliceSpec", "UNMODELLED_FIELDS", "has_device_taints",
    "unmodelled_fields",
]
