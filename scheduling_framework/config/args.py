"""Typed arguments of the in-tree plugins (the ``*Args`` kinds of ``kubescheduler.config.k8s.io/v1``).

Each class is frozen and slotted.  ``from_dict(mapping, path)`` decodes the ``args`` of a
``pluginConfig`` entry strictly (unknown fields are errors; ``apiVersion``/``kind`` are checked and
dropped), applies upstream's defaults, validates with upstream's messages and field paths and
raises one :class:`~scheduling_framework.errors.ConfigError` listing every problem.
``validate(path)`` runs only the validation (the ``Validate*Args`` functions upstream) on an
instance built directly, and ``to_dict()`` gives the camelCase form ``config view`` prints.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import attrs

from scheduling_framework.api import _field as f
from scheduling_framework.api.names import is_qualified_name, is_valid_label_value
from scheduling_framework.config.types import API_VERSION
from scheduling_framework.errors import ConfigError
from scheduling_framework.features import FeatureGates

_GROUP = API_VERSION.split("/")[0]

#: the feature gate (beta and on by default since v1.37) that gives VolumeBindingArgs a default
#: ``shape`` and makes ``shape`` valid; off in older releases.
STORAGE_CAPACITY_SCORING_GATE = "StorageCapacityScoring"

MAX_CUSTOM_PRIORITY_SCORE = 10

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


# --------------------------------------------------------------------------- shared pieces


@attrs.frozen
class ResourceSpec:
    """A resource considered by a scoring strategy and its weight."""

    name: str
    weight: int = 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.weight:
            out["weight"] = self.weight
        return out


@attrs.frozen
class UtilizationShapePoint:
    """One point of a piecewise-linear scoring function: utilization (0-100) -> score (0-10)."""

    utilization: int
    score: int

    def to_dict(self) -> dict[str, Any]:
        return {"utilization": self.utilization, "score": self.score}


@attrs.frozen
class RequestedToCapacityRatioParam:
    """Parameters of the RequestedToCapacityRatio scoring strategy."""

    shape: tuple[UtilizationShapePoint, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"shape": [p.to_dict() for p in self.shape]} if self.shape else {}


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@attrs.frozen
class ScoringStrategy:
    """How NodeResourcesFit scores nodes."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.type:
            out["type"] = self.type
        if self.resources:
            out["resources"] = [r.to_dict() for r in self.resources]
        if self.requested_to_capacity_ratio is not None:
            out["requestedToCapacityRatio"] = self.requested_to_capacity_ratio.to_dict()
        return out


def _decode_resources(r: f.Reader, value: Any, path: str) -> tuple[ResourceSpec, ...]:
    out: list[ResourceSpec] = []
    for i, item in enumerate(r.seq(value, path) or ()):
        p = f.index(path, i)
        m = r.obj(item, p, ("name", "weight"))
        if m is None:
            continue
        name = r.string(m.get("name"), f.child(p, "name")) or ""
        weight = r.integer(m.get("weight"), f.child(p, "weight"), bits=64)
        out.append(ResourceSpec(name, weight or 0))
    return tuple(out)


def _decode_shape(r: f.Reader, value: Any, path: str) -> tuple[UtilizationShapePoint, ...]:
    out: list[UtilizationShapePoint] = []
    for i, item in enumerate(r.seq(value, path) or ()):
        p = f.index(path, i)
        m = r.obj(item, p, ("utilization", "score"))
        if m is None:
            continue
        u = r.integer(m.get("utilization"), f.child(p, "utilization"))
        s = r.integer(m.get("score"), f.child(p, "score"))
        out.append(UtilizationShapePoint(u or 0, s or 0))
    return tuple(out)


def _default_weights(resources: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
    # an unset (or explicit 0) weight means 1, as upstream's defaulting does
    return tuple(r if r.weight else ResourceSpec(r.name, 1) for r in resources)


def validate_function_shape(shape: tuple[UtilizationShapePoint, ...], path: str) -> list[str]:
    """Upstream's ``validateFunctionShape``: non-empty, strictly increasing, within range."""
    if not shape:
        return [f.required(path, "at least one point must be specified")]
    errs: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                f.invalid(
                    f.child(f.index(path, i), "utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(
                f.invalid(f.child(f.index(path, i), "utilization"), point.utilization, "not in valid range [0, 100]")
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                f.invalid(
                    f.child(f.index(path, i), "score"),
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def _validate_label_name(name: str, path: str) -> list[str]:
    return [f.invalid(path, name, msg) for msg in is_qualified_name(name)]


class _Args:
    """Decoding scaffolding shared by the args classes."""

    __slots__ = ()

    KIND: ClassVar[str]
    PLUGIN: ClassVar[str]
    FIELDS: ClassVar[tuple[str, ...]]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "") -> Self:
        """Decode, default and validate ``data``; ConfigError lists every problem."""
        errors: list[str] = []
        obj = cls.decode(data, path, errors)
        if errors:
            raise ConfigError(errors)
        return obj

    @classmethod
    def decode(cls, data: Any, path: str, errors: list[str], features: FeatureGates | None = None) -> Self:
        """Like :meth:`from_dict` but appends problems to ``errors`` and returns a best-effort value.

        ``features`` are the gates of the release being configured (default: the newest release's)."""
        r = f.Reader(errors)
        m = r.obj(data, path, (*cls.FIELDS, "apiVersion", "kind"))
        if m is None:
            m = {}
        kind = m.get("kind")
        if kind is not None and kind != cls.KIND:
            errors.append(
                f"{path + ': ' if path else ''}args for plugin {cls.PLUGIN} were not of type "
                f"{cls.KIND}.{_GROUP}, got {kind}.{_GROUP}"
            )
            m = {}
        version = m.get("apiVersion")
        if version is not None and version != API_VERSION:
            errors.append(f.not_supported(f.child(path, "apiVersion"), version, (API_VERSION,)))
        obj = cls._decode_fields(r, m, path).apply_gates(features)
        errors.extend(obj.validate_for(path, features))
        return obj

    def apply_gates(self, features: FeatureGates | None) -> Self:
        """The defaults that depend on feature gates (most kinds have none)."""
        return self

    def validate_for(self, path: str, features: FeatureGates | None) -> list[str]:
        """:meth:`validate` under the gates of a given release (most kinds do not depend on them)."""
        return self.validate(path)

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        raise NotImplementedError

    def validate(self, path: str = "") -> list[str]:
        raise NotImplementedError


# --------------------------------------------------------------------------- DefaultPreemption


@attrs.frozen
class DefaultPreemptionArgs(_Args):
    """How many candidate nodes DefaultPreemption dry-runs: max(percentage of nodes, absolute)."""

    KIND: ClassVar[str] = "DefaultPreemptionArgs"
    PLUGIN: ClassVar[str] = "DefaultPreemption"
    FIELDS: ClassVar[tuple[str, ...]] = ("minCandidateNodesPercentage", "minCandidateNodesAbsolute")

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        pct = r.integer(m.get("minCandidateNodesPercentage"), f.child(path, "minCandidateNodesPercentage"))
        absolute = r.integer(m.get("minCandidateNodesAbsolute"), f.child(path, "minCandidateNodesAbsolute"))
        return cls(10 if pct is None else pct, 100 if absolute is None else absolute)

    def validate(self, path: str = "") -> list[str]:
        errs: list[str] = []
        pct_path = f.child(path, "minCandidateNodesPercentage")
        abs_path = f.child(path, "minCandidateNodesAbsolute")
        if not 0 <= self.min_candidate_nodes_percentage <= 100:
            errs.append(f.invalid(pct_path, self.min_candidate_nodes_percentage, "not in valid range [0, 100]"))
        if self.min_candidate_nodes_absolute < 0:
            errs.append(f.invalid(abs_path, self.min_candidate_nodes_absolute, "not in valid range [0, inf)"))
        if self.min_candidate_nodes_percentage == 0 and self.min_candidate_nodes_absolute == 0:
            errs.append(f.invalid(pct_path, 0, "cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(f.invalid(abs_path, 0, "cannot be zero at the same time as minCandidateNodesPercentage"))
        return errs

    def to_dict(self) -> dict[str, Any]:
        return {
            "minCandidateNodesPercentage": self.min_candidate_nodes_percentage,
            "minCandidateNodesAbsolute": self.min_candidate_nodes_absolute,
        }


# --------------------------------------------------------------------------- InterPodAffinity


@attrs.frozen
class InterPodAffinityArgs(_Args):
    """Scoring knobs of InterPodAffinity."""

    KIND: ClassVar[str] = "InterPodAffinityArgs"
    PLUGIN: ClassVar[str] = "InterPodAffinity"
    FIELDS: ClassVar[tuple[str, ...]] = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        weight = r.integer(m.get("hardPodAffinityWeight"), f.child(path, "hardPodAffinityWeight"))
        ignore = r.boolean(
            m.get("ignorePreferredTermsOfExistingPods"), f.child(path, "ignorePreferredTermsOfExistingPods")
        )
        return cls(1 if weight is None else weight, bool(ignore))

    def validate(self, path: str = "") -> list[str]:
        w = self.hard_pod_affinity_weight
        if not 0 <= w <= 100:
            return [f.invalid(f.child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
        return []

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardPodAffinityWeight": self.hard_pod_affinity_weight,
            "ignorePreferredTermsOfExistingPods": self.ignore_preferred_terms_of_existing_pods,
        }


# --------------------------------------------------------------------------- NodeResourcesFit


@attrs.frozen
class NodeResourcesFitArgs(_Args):
    """Resources NodeResourcesFit ignores when filtering, and its scoring strategy."""

    KIND: ClassVar[str] = "NodeResourcesFitArgs"
    PLUGIN: ClassVar[str] = "NodeResourcesFit"
    FIELDS: ClassVar[tuple[str, ...]] = ("ignoredResources", "ignoredResourceGroups", "scoringStrategy")

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy | None = ScoringStrategy()

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        ignored = r.strings(m.get("ignoredResources"), f.child(path, "ignoredResources"))
        groups = r.strings(m.get("ignoredResourceGroups"), f.child(path, "ignoredResourceGroups"))
        sp = f.child(path, "scoringStrategy")
        raw = m.get("scoringStrategy")
        sm = r.obj(raw, sp, ("type", "resources", "requestedToCapacityRatio")) if raw is not None else None
        if sm is None:
            strategy = ScoringStrategy()
        else:
            stype = r.string(sm.get("type"), f.child(sp, "type")) or ""
            resources = _decode_resources(r, sm.get("resources"), f.child(sp, "resources")) or DEFAULT_RESOURCES
            rtcr: RequestedToCapacityRatioParam | None = None
            raw_rtcr = sm.get("requestedToCapacityRatio")
            if raw_rtcr is not None:
                rp = f.child(sp, "requestedToCapacityRatio")
                rm = r.obj(raw_rtcr, rp, ("shape",)) or {}
                rtcr = RequestedToCapacityRatioParam(_decode_shape(r, rm.get("shape"), f.child(rp, "shape")))
            strategy = ScoringStrategy(stype, _default_weights(resources), rtcr)
        return cls(ignored, groups, strategy)

    def validate(self, path: str = "") -> list[str]:
        errs: list[str] = []
        for i, ignored in enumerate(self.ignored_resources):
            errs.extend(_validate_label_name(ignored, f.index(f.child(path, "ignoredResources"), i)))
        for i, group in enumerate(self.ignored_resource_groups):
            p = f.index(f.child(path, "ignoredResourceGroups"), i)
            if "/" in group:
                errs.append(f.invalid(p, group, "resource group name can't contain '/'"))
            errs.extend(_validate_label_name(group, p))
        sp = f.child(path, "scoringStrategy")
        s = self.scoring_strategy
        if s is None:
            errs.append(f.required(sp, "ScoringStrategy field is required"))
            return errs
        if s.type not in SCORING_STRATEGY_TYPES:
            errs.append(f.not_supported(f.child(sp, "type"), s.type, SCORING_STRATEGY_TYPES))
        for i, res in enumerate(s.resources):
            if not 0 < res.weight <= 100:
                errs.append(
                    f.invalid(
                        f.child(f.index(f.child(sp, "resources"), i), "weight"),
                        res.weight,
                        f"resource weight of {res.name} not in valid range (0, 100]",
                    )
                )
        rp = f.child(sp, "requestedToCapacityRatio")
        if s.type == REQUESTED_TO_CAPACITY_RATIO:
            if s.requested_to_capacity_ratio is None:
                errs.append(f.required(rp, "must be specified when type is RequestedToCapacityRatio"))
            else:
                errs.extend(validate_function_shape(s.requested_to_capacity_ratio.shape, f.child(rp, "shape")))
        elif s.requested_to_capacity_ratio is not None:
            errs.append(f.forbidden(rp, "must be nil when type is not RequestedToCapacityRatio"))
        return errs

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.ignored_resources:
            out["ignoredResources"] = list(self.ignored_resources)
        if self.ignored_resource_groups:
            out["ignoredResourceGroups"] = list(self.ignored_resource_groups)
        if self.scoring_strategy is not None:
            out["scoringStrategy"] = self.scoring_strategy.to_dict()
        return out


# --------------------------------------------------------------------------- NodeResourcesBalancedAllocation


@attrs.frozen
class NodeResourcesBalancedAllocationArgs(_Args):
    """Resources whose utilization NodeResourcesBalancedAllocation balances."""

    KIND: ClassVar[str] = "NodeResourcesBalancedAllocationArgs"
    PLUGIN: ClassVar[str] = "NodeResourcesBalancedAllocation"
    FIELDS: ClassVar[tuple[str, ...]] = ("resources",)

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        resources = _decode_resources(r, m.get("resources"), f.child(path, "resources"))
        return cls(_default_weights(resources) if resources else DEFAULT_RESOURCES)

    def validate(self, path: str = "") -> list[str]:
        errs: list[str] = []
        seen: set[str] = set()
        for i, res in enumerate(self.resources):
            p = f.index(f.child(path, "resources"), i)
            if res.name in seen:
                errs.append(f.duplicate(f.child(p, "name"), res.name))
            seen.add(res.name)
            if res.weight != 1:
                errs.append(f.invalid(f.child(p, "weight"), res.weight, "must be 1"))
        return errs

    def to_dict(self) -> dict[str, Any]:
        return {"resources": [r.to_dict() for r in self.resources]} if self.resources else {}


# --------------------------------------------------------------------------- PodTopologySpread

_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)
_SELECTOR_FIELDS = ("matchLabels", "matchExpressions")
_SELECTOR_REQUIREMENT_FIELDS = ("key", "operator", "values")


def _decode_constraint(r: f.Reader, value: Any, path: str) -> dict[str, Any] | None:
    m = r.obj(value, path, _CONSTRAINT_FIELDS)
    if m is None:
        return None
    out: dict[str, Any] = {}
    for key in ("maxSkew", "minDomains"):
        if key in m:
            n = r.integer(m[key], f.child(path, key))
            if n is not None:
                out[key] = n
    for key in ("topologyKey", "whenUnsatisfiable", "nodeAffinityPolicy", "nodeTaintsPolicy"):
        if key in m:
            s = r.string(m[key], f.child(path, key))
            if s is not None:
                out[key] = s
    if "matchLabelKeys" in m:
        out["matchLabelKeys"] = list(r.strings(m["matchLabelKeys"], f.child(path, "matchLabelKeys")))
    if m.get("labelSelector") is not None:
        lp = f.child(path, "labelSelector")
        sel = r.obj(m["labelSelector"], lp, _SELECTOR_FIELDS)
        if sel is not None:
            for i, req in enumerate(r.seq(sel.get("matchExpressions"), f.child(lp, "matchExpressions")) or ()):
                r.obj(req, f.index(f.child(lp, "matchExpressions"), i), _SELECTOR_REQUIREMENT_FIELDS)
            out["labelSelector"] = copy.deepcopy(dict(sel))
    return out


@attrs.frozen
class PodTopologySpreadArgs(_Args):
    """Cluster-level default spreading constraints (``defaultConstraints`` are v1 TopologySpreadConstraint mappings)."""

    KIND: ClassVar[str] = "PodTopologySpreadArgs"
    PLUGIN: ClassVar[str] = "PodTopologySpread"
    FIELDS: ClassVar[tuple[str, ...]] = ("defaultConstraints", "defaultingType")

    default_constraints: tuple[dict[str, Any], ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        cp = f.child(path, "defaultConstraints")
        constraints: list[dict[str, Any]] = []
        for i, item in enumerate(r.seq(m.get("defaultConstraints"), cp) or ()):
            c = _decode_constraint(r, item, f.index(cp, i))
            if c is not None:
                constraints.append(c)
        dtype = r.string(m.get("defaultingType"), f.child(path, "defaultingType")) or SYSTEM_DEFAULTING
        return cls(tuple(constraints), dtype)

    def validate(self, path: str = "") -> list[str]:
        errs: list[str] = []
        tp = f.child(path, "defaultingType")
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(f.not_supported(tp, self.defaulting_type, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(f.invalid(tp, self.defaulting_type, "when .defaultConstraints are not empty"))
        cp = f.child(path, "defaultConstraints")
        seen: list[tuple[str, str]] = []
        for i, c in enumerate(self.default_constraints):
            p = f.index(cp, i)
            max_skew = c.get("maxSkew", 0)
            if max_skew <= 0:
                errs.append(f.invalid(f.child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
            key = c.get("topologyKey", "")
            if not key:
                errs.append(f.required(f.child(p, "topologyKey"), "can not be empty"))
            else:
                errs.extend(_validate_label_name(key, f.child(p, "topologyKey")))
            when = c.get("whenUnsatisfiable", "")
            wp = f.child(p, "whenUnsatisfiable")
            if not when:
                errs.append(f.required(wp, "can not be empty"))
            elif when not in ("DoNotSchedule", "ScheduleAnyway"):
                errs.append(f.not_supported(wp, when, ("DoNotSchedule", "ScheduleAnyway")))
            if c.get("labelSelector") is not None:
                errs.append(
                    f.forbidden(
                        f.child(p, "labelSelector"),
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            if (key, when) in seen:
                errs.append(f.duplicate(p, f"{{{key}, {when}}}"))
            seen.append((key, when))
        return errs

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.default_constraints:
            out["defaultConstraints"] = [copy.deepcopy(c) for c in self.default_constraints]
        out["defaultingType"] = self.defaulting_type
        return out


# --------------------------------------------------------------------------- NodeAffinity

_NODE_AFFINITY_FIELDS = (
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
)
_NODE_SELECTOR_TERM_FIELDS = ("matchExpressions", "matchFields")
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")


def _check_term(r: f.Reader, value: Any, path: str) -> None:
    m = r.obj(value, path, _NODE_SELECTOR_TERM_FIELDS)
    if m is None:
        return
    for key in _NODE_SELECTOR_TERM_FIELDS:
        kp = f.child(path, key)
        for i, req in enumerate(r.seq(m.get(key), kp) or ()):
            rp = f.index(kp, i)
            rm = r.obj(req, rp, _SELECTOR_REQUIREMENT_FIELDS)
            if rm is not None:
                r.string(rm.get("key"), f.child(rp, "key"))
                r.string(rm.get("operator"), f.child(rp, "operator"))
                r.strings(rm.get("values"), f.child(rp, "values"))


def _decode_node_affinity(r: f.Reader, value: Any, path: str) -> dict[str, Any] | None:
    m = r.obj(value, path, _NODE_AFFINITY_FIELDS)
    if m is None:
        return None
    req = m.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        rp = f.child(path, "requiredDuringSchedulingIgnoredDuringExecution")
        rm = r.obj(req, rp, ("nodeSelectorTerms",))
        if rm is not None:
            tp = f.child(rp, "nodeSelectorTerms")
            for i, term in enumerate(r.seq(rm.get("nodeSelectorTerms"), tp) or ()):
                _check_term(r, term, f.index(tp, i))
    pp = f.child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(r.seq(m.get("preferredDuringSchedulingIgnoredDuringExecution"), pp) or ()):
        ip = f.index(pp, i)
        pm = r.obj(pref, ip, ("weight", "preference"))
        if pm is not None:
            r.integer(pm.get("weight"), f.child(ip, "weight"))
            _check_term(r, pm.get("preference"), f.child(ip, "preference"))
    return copy.deepcopy(dict(m))


def _requirements(term: Any, key: str) -> list[Mapping[str, Any]]:
    if not isinstance(term, Mapping):
        return []
    reqs = term.get(key)
    return [q for q in reqs if isinstance(q, Mapping)] if isinstance(reqs, list) else []


def _validate_label_requirement(req: Mapping[str, Any], path: str) -> list[str]:
    # mirrors labels.NewRequirement: key, then the value count rules of the operator, then each value
    errs: list[str] = []
    op = req.get("operator")
    if op not in _LABEL_OPERATORS:
        return [f.not_supported(f.child(path, "operator"), op, _LABEL_OPERATORS)]
    key = req.get("key") or ""
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(f.invalid(f.child(path, "key"), key, "; ".join(key_errs)))
    values = [v for v in (req.get("values") or []) if isinstance(v, str)]
    vp = f.child(path, "values")
    if op in ("In", "NotIn") and not values:
        errs.append(f.invalid(vp, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(f.invalid(vp, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(f.invalid(vp, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            try:
                int(v, 10)
            except ValueError:
                errs.append(f.invalid(f.index(vp, i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(values):
        value_errs = is_valid_label_value(v)
        if value_errs:
            errs.append(f.invalid(f.index(vp, i), v, "; ".join(value_errs)))
    return errs


def _validate_term(term: Any, path: str) -> list[str]:
    errs: list[str] = []
    for i, req in enumerate(_requirements(term, "matchExpressions")):
        errs.extend(_validate_label_requirement(req, f.index(f.child(path, "matchExpressions"), i)))
    for i, req in enumerate(_requirements(term, "matchFields")):
        rp = f.index(f.child(path, "matchFields"), i)
        op = req.get("operator")
        if op not in _FIELD_OPERATORS:
            errs.append(f.not_supported(f.child(rp, "operator"), op, _FIELD_OPERATORS))
            continue
        values = req.get("values") or []
        if len(values) != 1:
            errs.append(f.invalid(f.child(rp, "values"), values, "must have one element"))
    return errs


@attrs.frozen
class NodeAffinityArgs(_Args):
    """Node affinity added to every pod (a v1 NodeAffinity mapping), parsed by the NodeAffinity plugin."""

    KIND: ClassVar[str] = "NodeAffinityArgs"
    PLUGIN: ClassVar[str] = "NodeAffinity"
    FIELDS: ClassVar[tuple[str, ...]] = ("addedAffinity",)

    added_affinity: dict[str, Any] | None = None

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        raw = m.get("addedAffinity")
        if raw is None:
            return cls(None)
        return cls(_decode_node_affinity(r, raw, f.child(path, "addedAffinity")))

    def validate(self, path: str = "") -> list[str]:
        a = self.added_affinity
        if a is None:
            return []
        ap = f.child(path, "addedAffinity")
        errs: list[str] = []
        req = a.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(req, Mapping):
            tp = f.child(f.child(ap, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
            terms = req.get("nodeSelectorTerms")
            for i, term in enumerate(terms if isinstance(terms, list) else []):
                errs.extend(_validate_term(term, f.index(tp, i)))
        prefs = a.get("preferredDuringSchedulingIgnoredDuringExecution")
        pp = f.child(ap, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, pref in enumerate(prefs if isinstance(prefs, list) else []):
            if isinstance(pref, Mapping):
                # upstream names the preferred term by its index, without ".preference"
                errs.extend(_validate_term(pref.get("preference"), f.index(pp, i)))
        return errs

    def to_dict(self) -> dict[str, Any]:
        return {"addedAffinity": copy.deepcopy(self.added_affinity)} if self.added_affinity is not None else {}


# --------------------------------------------------------------------------- VolumeBinding

DEFAULT_VOLUME_BINDING_SHAPE: tuple[UtilizationShapePoint, ...] = (
    UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE),
    UtilizationShapePoint(100, 0),
)


@attrs.frozen
class VolumeBindingArgs(_Args):
    """Bind timeout of VolumeBinding and its storage-capacity scoring shape."""

    KIND: ClassVar[str] = "VolumeBindingArgs"
    PLUGIN: ClassVar[str] = "VolumeBinding"
    FIELDS: ClassVar[tuple[str, ...]] = ("bindTimeoutSeconds", "shape")

    bind_timeout_seconds: int = 600
    shape: tuple[UtilizationShapePoint, ...] = DEFAULT_VOLUME_BINDING_SHAPE

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        timeout = r.integer(m.get("bindTimeoutSeconds"), f.child(path, "bindTimeoutSeconds"), bits=64)
        shape = _decode_shape(r, m.get("shape"), f.child(path, "shape"))
        return cls(600 if timeout is None else timeout, shape)

    def apply_gates(self, features: FeatureGates | None) -> Self:
        # upstream defaults the shape only while StorageCapacityScoring is on
        if not self.shape and _gate(features, STORAGE_CAPACITY_SCORING_GATE):
            return attrs.evolve(self, shape=DEFAULT_VOLUME_BINDING_SHAPE)
        return self

    def validate(self, path: str = "") -> list[str]:
        return self.validate_for(path, None)

    def validate_for(self, path: str, features: FeatureGates | None) -> list[str]:
        errs: list[str] = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                f.invalid(
                    f.child(path, "bindTimeoutSeconds"),
                    self.bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        sp = f.child(path, "shape")
        if _gate(features, STORAGE_CAPACITY_SCORING_GATE):
            errs.extend(validate_function_shape(self.shape, sp))
        elif self.shape:
            errs.append(
                f.invalid(
                    sp,
                    [p.to_dict() for p in self.shape],
                    "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
                )
            )
        return errs

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bindTimeoutSeconds": self.bind_timeout_seconds}
        if self.shape:
            out["shape"] = [p.to_dict() for p in self.shape]
        return out


# --------------------------------------------------------------------------- DynamicResources

#: The gate (beta, on by default) under which filterTimeout is defaulted, honoured and may be set.
DRA_SCHEDULER_FILTER_TIMEOUT_GATE = "DRASchedulerFilterTimeout"
#: upstream DynamicResourcesFilterTimeoutDefault (seconds)
DRA_FILTER_TIMEOUT_DEFAULT = 10.0
#: DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (both on by default in the newest release):
#: bindingTimeout may be set.
DRA_DEVICE_BINDING_CONDITIONS = True


def go_duration(seconds: float) -> str:
    """A duration the way Go's ``time.Duration.String`` prints it ("10s", "10m0s", "1h0m0s", "1.5s")."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    ns = round(abs(seconds) * 1e9)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns / size) + unit
    h, rest = divmod(ns, 3_600_000_000_000)
    m, rest = divmod(rest, 60_000_000_000)
    sec = _trim(rest / 1e9)
    if h:
        return f"{sign}{h}h{m}m{sec}s"
    if m:
        return f"{sign}{m}m{sec}s"
    return f"{sign}{sec}s"


def _trim(v: float) -> str:
    text = f"{v:.9f}".rstrip("0").rstrip(".")
    return text or "0"


def _decode_duration(r: f.Reader, value: Any, path: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, str):
        r.errors.append(f.invalid(path, value, 'expected a duration string such as "10s"'))
        return None
    seconds = f.parse_duration(value)
    if seconds is None:
        r.errors.append(f.invalid(path, value, f'time: invalid duration "{value}"'))
    return seconds


@attrs.frozen
class DynamicResourcesArgs(_Args):
    """How long DynamicResources may spend allocating devices per node (filterTimeout, 0 = no limit) and how
    long PreBind waits for device binding conditions (bindingTimeout), in seconds."""

    KIND: ClassVar[str] = "DynamicResourcesArgs"
    PLUGIN: ClassVar[str] = "DynamicResources"
    FIELDS: ClassVar[tuple[str, ...]] = ("filterTimeout", "bindingTimeout")

    filter_timeout: float | None = DRA_FILTER_TIMEOUT_DEFAULT
    binding_timeout: float | None = 600.0 if DRA_DEVICE_BINDING_CONDITIONS else None

    @classmethod
    def _decode_fields(cls, r: f.Reader, m: Mapping[str, Any], path: str) -> Self:
        ft = _decode_duration(r, m.get("filterTimeout"), f.child(path, "filterTimeout"))
        bt = _decode_duration(r, m.get("bindingTimeout"), f.child(path, "bindingTimeout"))
        if bt is None and DRA_DEVICE_BINDING_CONDITIONS:
            bt = 600.0
        return cls(ft, bt)

    def apply_gates(self, features: FeatureGates | None) -> Self:
        # upstream defaults filterTimeout only while DRASchedulerFilterTimeout is on
        if self.filter_timeout is None and _gate(features, DRA_SCHEDULER_FILTER_TIMEOUT_GATE):
            return attrs.evolve(self, filter_timeout=DRA_FILTER_TIMEOUT_DEFAULT)
        return self

    def validate(self, path: str = "") -> list[str]:
        return self.validate_for(path, None)

    def validate_for(self, path: str, features: FeatureGates | None) -> list[str]:
        errs: list[str] = []
        ft_path = f.child(path, "filterTimeout")
        bt_path = f.child(path, "bindingTimeout")
        if _gate(features, DRA_SCHEDULER_FILTER_TIMEOUT_GATE):
            if self.filter_timeout is not None and self.filter_timeout < 0:
                errs.append(f.invalid(ft_path, go_duration(self.filter_timeout), "must be zero or positive"))
        elif self.filter_timeout is not None:
            errs.append(f.forbidden(ft_path, "DRASchedulingFilterTimeout feature gate is disabled"))
        if DRA_DEVICE_BINDING_CONDITIONS:
            if self.binding_timeout is not None and self.binding_timeout < 1:
                errs.append(f.invalid(bt_path, go_duration(self.binding_timeout), "must be at least 1 second"))
        elif self.binding_timeout is not None:
            errs.append(f.forbidden(bt_path, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                                             "feature gate is disabled"))
        return errs

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.filter_timeout is not None:
            out["filterTimeout"] = go_duration(self.filter_timeout)
        if self.binding_timeout is not None:
            out["bindingTimeout"] = go_duration(self.binding_timeout)
        return out


# --------------------------------------------------------------------------- registry of args kinds

ArgsType = (
    DefaultPreemptionArgs
    | DynamicResourcesArgs
    | InterPodAffinityArgs
    | NodeResourcesFitArgs
    | NodeResourcesBalancedAllocationArgs
    | PodTopologySpreadArgs
    | NodeAffinityArgs
    | VolumeBindingArgs
)

#: plugin name -> its args class, for every in-tree plugin that takes arguments.
ARGS_TYPES: dict[str, type[Any]] = {
    cls.PLUGIN: cls
    for cls in (
        DefaultPreemptionArgs,
        DynamicResourcesArgs,
        InterPodAffinityArgs,
        NodeAffinityArgs,
        NodeResourcesBalancedAllocationArgs,
        NodeResourcesFitArgs,
        PodTopologySpreadArgs,
        VolumeBindingArgs,
    )
}


def _gate(features: FeatureGates | None, name: str) -> bool:
    return (features if features is not None else FeatureGates()).enabled(name)


def decode_args(plugin_name: str, raw: Any, path: str, errors: list[str], features: FeatureGates | None = None) -> Any:
    """Typed args for in-tree args kinds (problems appended to ``errors``); anything else unchanged.

    ``features``: the gates of the release being configured (default: the newest release's)."""
    cls = ARGS_TYPES.get(plugin_name)
    if cls is None:
        return copy.deepcopy(raw)
    if isinstance(raw, cls):
        # already typed (a document built in Python): validate it as it is
        errors.extend(raw.validate_for(path, features))
        return raw
    return cls.decode(raw, path, errors, features)


def parse_args(plugin_name: str, raw: Any, path: str = "", features: FeatureGates | None = None) -> Any:
    """The typed, defaulted, validated args of an in-tree plugin, or ``raw`` for any other plugin.

    Raises ConfigError listing every problem (field paths are prefixed with ``path``).
    """
    errors: list[str] = []
    args = decode_args(plugin_name, raw, path, errors, features)
    if errors:
        raise ConfigError(errors)
    return args


def args_to_dict(args: Any) -> Any:
    """The camelCase form of typed args; raw args are returned as a copy."""
    to_dict = getattr(args, "to_dict", None)
    if callable(to_dict) and isinstance(args, _Args):
        return to_dict()
    return copy.deepcopy(args)


def default_args(plugin_name: str, features: FeatureGates | None = None) -> Any:
    """The defaulted args object of an in-tree plugin that has an args kind (None otherwise)."""
    cls = ARGS_TYPES.get(plugin_name)
    return None if cls is None else cls.decode(None, "", [], features)
