"""Label selectors and node selectors, matched exactly as apimachinery / component-helpers do.

A ``None`` selector where the API allows nil matches nothing for pod selectors (affinity terms,
spread constraints); an empty selector matches everything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.api._parse import as_list, as_map, as_str, str_map, str_tuple
from scheduling_framework.api.names import is_qualified_name, is_valid_label_value
from scheduling_framework.errors import ValidationError, brief_str

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@attrs.frozen(slots=True)
class LabelSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        return False  # an unknown operator selects nothing

    @classmethod
    def from_dict(cls, d: Any, path: str) -> LabelSelectorRequirement:
        m = as_map(d, path)
        key = as_str(m.get("key"), f"{path}.key")
        op = as_str(m.get("operator"), f"{path}.operator")
        values = str_tuple(m.get("values"), f"{path}.values")
        if op not in LABEL_OPERATORS:
            raise ValidationError(f'Unsupported value: "{brief_str(op)}": supported values: '
                                  '"In", "NotIn", "Exists", "DoesNotExist"', f"{path}.operator")
        if op in ("In", "NotIn") and not values:
            raise ValidationError("Required value: must be specified when `operator` is 'In' or 'NotIn'",
                                  f"{path}.values")
        if op in ("Exists", "DoesNotExist") and values:
            raise ValidationError("Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                                  f"{path}.values")
        return cls(key, op, values)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            d["values"] = list(self.values)
        return d


@attrs.frozen(slots=True)
class LabelSelector:
    """metav1.LabelSelector. ``matches`` treats the selector as LabelSelectorAsSelector does (empty = everything)."""

    match_labels: Mapping[str, str] = attrs.field(factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        for k, v in self.match_labels.items():
            if labels.get(k) != v:
                return False
        for r in self.match_expressions:
            if not r.matches(labels):
                return False
        return True

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    @classmethod
    def from_dict(cls, d: Any, path: str) -> LabelSelector:
        m = as_map(d, path)
        exprs = tuple(LabelSelectorRequirement.from_dict(e, f"{path}.matchExpressions[{i}]")
                      for i, e in enumerate(as_list(m.get("matchExpressions"), f"{path}.matchExpressions")))
        return cls(str_map(m.get("matchLabels"), f"{path}.matchLabels"), exprs)

    @classmethod
    def from_opt(cls, d: Any, path: str) -> LabelSelector | None:
        return None if d is None else cls.from_dict(d, path)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.match_labels:
            d["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            d["matchExpressions"] = [e.to_dict() for e in self.match_expressions]
        return d


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Match with nil-selects-nothing semantics (as affinity terms and spread constraints use)."""
    return selector is not None and selector.matches(labels)


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """labels.SelectorFromSet: an equality selector; an empty set selects everything."""
    return LabelSelector(dict(labels), ())


# ---------------------------------------------------------------------------------------------
# Node selectors (component-helpers/scheduling/corev1/nodeaffinity)


@attrs.frozen(slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> NodeSelectorRequirement:
        m = as_map(d, path)
        return cls(as_str(m.get("key"), f"{path}.key"), as_str(m.get("operator"), f"{path}.operator"),
                   str_tuple(m.get("values"), f"{path}.values"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            d["values"] = list(self.values)
        return d

    def valid_for_labels(self) -> bool:
        """Whether the requirement parses as a label requirement (labels.NewRequirement); an invalid one
        makes its term match nothing."""
        if is_qualified_name(self.key):
            return False
        op, n = self.operator, len(self.values)
        if op in ("In", "NotIn"):
            return n > 0 and all(not is_valid_label_value(v) for v in self.values)
        if op in ("Exists", "DoesNotExist"):
            return n == 0
        if op in ("Gt", "Lt"):
            return n == 1 and parse_int64(self.values[0]) is not None
        return False

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels:
            return False
        have = parse_int64(labels[self.key])
        want = parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want


@attrs.frozen(slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()
    # False when a requirement does not parse: such a term never matches (upstream's lazy-error selector).
    valid: bool = attrs.field(default=True, eq=False)

    @classmethod
    def from_dict(cls, d: Any, path: str) -> NodeSelectorTerm:
        m = as_map(d, path)
        exprs = tuple(NodeSelectorRequirement.from_dict(e, f"{path}.matchExpressions[{i}]")
                      for i, e in enumerate(as_list(m.get("matchExpressions"), f"{path}.matchExpressions")))
        fields = tuple(NodeSelectorRequirement.from_dict(e, f"{path}.matchFields[{i}]")
                       for i, e in enumerate(as_list(m.get("matchFields"), f"{path}.matchFields")))
        valid = all(r.valid_for_labels() for r in exprs) and all(_valid_field(r) for r in fields)
        return cls(exprs, fields, valid)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.match_expressions:
            d["matchExpressions"] = [e.to_dict() for e in self.match_expressions]
        if self.match_fields:
            d["matchFields"] = [e.to_dict() for e in self.match_fields]
        return d

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """A term with no requirements matches nothing; otherwise every requirement must match."""
        if not self.valid or (not self.match_expressions and not self.match_fields):
            return False
        for r in self.match_expressions:
            if not r.matches_labels(labels):
                return False
        for r in self.match_fields:
            if not r.matches_labels({"metadata.name": node_name}):
                return False
        return True


_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): digits with an optional sign, within int64; else None."""
    if not _INT_RE.fullmatch(text):
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _valid_field(r: NodeSelectorRequirement) -> bool:
    # Only metadata.name is a supported field, with In/NotIn and exactly one value.
    return r.key == "metadata.name" and r.operator in ("In", "NotIn") and len(r.values) == 1


@attrs.frozen(slots=True)
class NodeSelector:
    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str) -> NodeSelector:
        m = as_map(d, path)
        terms = tuple(NodeSelectorTerm.from_dict(t, f"{path}.nodeSelectorTerms[{i}]")
                      for i, t in enumerate(as_list(m.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")))
        return cls(terms)

    def to_dict(self) -> dict[str, Any]:
        return {"nodeSelectorTerms": [t.to_dict() for t in self.node_selector_terms]}

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Terms are ORed."""
        for t in self.node_selector_terms:
            if t.matches(node_name, labels):
                return True
        return False


@attrs.frozen(slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


def match_node_selector_terms(terms: Sequence[NodeSelectorTerm], node_name: str, labels: Mapping[str, str]) -> bool:
    return any(t.matches(node_name, labels) for t in terms)
