"""Node selector terms compiled once per pod, matched as component-helpers' nodeaffinity package does.

Each requirement is parsed like apimachinery's ``labels.NewRequirement``: the key must be a qualified
name, values must be valid label values, ``Gt``/``Lt`` take exactly one base-10 int64. A term with a
requirement that does not parse never matches; for the required terms this error is ignored (upstream's
lazy-error selector), for preferred terms it is reported with upstream's field path and wording.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduling_framework.api import _field as f
from scheduling_framework.api.names import is_qualified_name, is_valid_label_value
from scheduling_framework.api.node import Node
from scheduling_framework.api.selectors import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)

NODE_NAME_FIELD = "metadata.name"
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

# operator codes of a compiled label requirement
_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST, _GT, _LT = range(6)
_OP_CODES = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DOES_NOT_EXIST, "Gt": _GT, "Lt": _LT}

#: (key, operator code, value set for In/NotIn, integer for Gt/Lt)
LabelReq = tuple[str, int, frozenset[str], int]
#: (field value wanted, whether equality is wanted) - only metadata.name exists as a node field
FieldReq = tuple[str, str, bool]


def go_parse_int(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64): an optional sign and ASCII digits, within int64; None otherwise."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not all("0" <= ch <= "9" for ch in body):
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def aggregate_message(errors: Sequence[str]) -> str:
    """An aggregate error's text: one message as is, several de-duplicated in brackets."""
    seen: list[str] = []
    for e in errors:
        if e not in seen:
            seen.append(e)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def _label_requirement(r: NodeSelectorRequirement, path: str, errs: list[str]) -> LabelReq | None:
    op = _OP_CODES.get(r.operator)
    if op is None:
        errs.append(f.not_supported(f.child(path, "operator"), r.operator, _SELECTOR_OPERATORS))
        return None
    n_before = len(errs)
    key_errs = is_qualified_name(r.key)
    if key_errs:
        errs.append(f.invalid(f.child(path, "key"), r.key, "; ".join(key_errs)))
    values = list(r.values)
    vpath = f.child(path, "values")
    number = 0
    if op in (_IN, _NOT_IN):
        if not values:
            errs.append(f.invalid(vpath, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in (_EXISTS, _DOES_NOT_EXIST):
        if values:
            errs.append(f.invalid(vpath, values, "values set must be empty for exists and does not exist"))
    else:
        if len(values) != 1:
            errs.append(f.invalid(vpath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            parsed = go_parse_int(v)
            if parsed is None:
                errs.append(f.invalid(f.index(vpath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
            elif i == 0:
                number = parsed
    for i, v in enumerate(values):
        value_errs = is_valid_label_value(v)
        if value_errs:
            errs.append(f.invalid(f"{f.index(vpath, i)}[{r.key}]", v, "; ".join(value_errs)))
    if len(errs) != n_before:
        return None
    return r.key, op, frozenset(values), number


def _field_requirement(r: NodeSelectorRequirement, path: str, errs: list[str]) -> FieldReq | None:
    if r.operator not in _FIELD_OPERATORS:
        errs.append(f.not_supported(f.child(path, "operator"), r.operator, _FIELD_OPERATORS))
        return None
    if len(r.values) != 1:
        errs.append(f.invalid(f.child(path, "values"), list(r.values), "must have one element"))
        return None
    return r.key, r.values[0], r.operator == "In"


def _labels_match(reqs: Sequence[LabelReq], labels: Mapping[str, str]) -> bool:
    for key, op, values, number in reqs:
        if op == _IN:
            v = labels.get(key)
            if v is None or v not in values:
                return False
        elif op == _NOT_IN:
            v = labels.get(key)
            if v is not None and v in values:
                return False
        elif op == _EXISTS:
            if key not in labels:
                return False
        elif op == _DOES_NOT_EXIST:
            if key in labels:
                return False
        else:
            v = labels.get(key)
            have = None if v is None else go_parse_int(v)
            if have is None or (have <= number if op == _GT else have >= number):
                return False
    return True


class CompiledTerm:
    """One NodeSelectorTerm: label requirements ANDed, then field requirements ANDed."""

    __slots__ = ("labels", "fields", "errors")

    def __init__(self, term: NodeSelectorTerm, path: str) -> None:
        self.errors: list[str] = []
        self.labels: tuple[LabelReq, ...] | None = None
        self.fields: tuple[FieldReq, ...] | None = None
        if term.match_expressions:
            lp = f.child(path, "matchExpressions")
            labels = [_label_requirement(r, f.index(lp, i), self.errors)
                      for i, r in enumerate(term.match_expressions)]
            self.labels = tuple(x for x in labels if x is not None)
        if term.match_fields:
            fp = f.child(path, "matchFields")
            fields = [_field_requirement(r, f.index(fp, i), self.errors) for i, r in enumerate(term.match_fields)]
            self.fields = tuple(x for x in fields if x is not None)

    def matches(self, node: Node) -> bool:
        if self.errors:
            return False
        if self.labels is not None and not _labels_match(self.labels, node.labels):
            return False
        name = node.name
        # Field requirements only apply to a node that has a name (it is its only field).
        if self.fields is not None and name:
            for key, want, equal in self.fields:
                have = name if key == NODE_NAME_FIELD else ""
                if (have == want) != equal:
                    return False
        return True


def _is_empty(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class CompiledNodeSelector:
    """A NodeSelector: terms ORed; an empty term, or none at all, matches nothing."""

    __slots__ = ("terms",)

    def __init__(self, selector: NodeSelector, path: str = "") -> None:
        tp = f.child(path, "nodeSelectorTerms")
        self.terms = tuple(CompiledTerm(t, f.index(tp, i))
                           for i, t in enumerate(selector.node_selector_terms) if not _is_empty(t))

    def errors(self) -> list[str]:
        return [e for t in self.terms for e in t.errors]

    def matches(self, node: Node) -> bool:
        return any(t.matches(node) for t in self.terms)


class CompiledPreferredTerms:
    """Weighted preferred terms; a node scores the sum of the weights of the terms it matches."""

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[tuple[CompiledTerm, int]]) -> None:
        self.terms = tuple(terms)

    def score(self, node: Node) -> int:
        total = 0
        for term, weight in self.terms:
            if term.matches(node):
                total += weight
        return total


def compile_preferred(terms: Sequence[PreferredSchedulingTerm],
                      path: str = "") -> tuple[CompiledPreferredTerms | None, str | None]:
    """Compile preferred terms, skipping zero-weight and empty ones; any parse error fails the whole set."""
    errs: list[str] = []
    compiled: list[tuple[CompiledTerm, int]] = []
    for i, t in enumerate(terms):
        if t.weight == 0 or _is_empty(t.preference):
            continue
        ct = CompiledTerm(t.preference, f.index(path, i))
        if ct.errors:
            errs.extend(ct.errors)
        else:
            compiled.append((ct, t.weight))
    if errs:
        return None, aggregate_message(errs)
    return CompiledPreferredTerms(compiled), None


class RequiredNodeAffinity:
    """A pod's ``spec.nodeSelector`` and required node affinity, both of which a node must satisfy."""

    __slots__ = ("node_selector", "affinity")

    def __init__(self, node_selector: Mapping[str, str], affinity: NodeSelector | None) -> None:
        self.node_selector = tuple(node_selector.items())
        # Parse errors in required terms only make their term unmatchable (upstream ignores them here).
        self.affinity = None if affinity is None else CompiledNodeSelector(affinity)

    def matches(self, node: Node) -> bool:
        if self.node_selector:
            labels = node.labels
            for k, v in self.node_selector:
                if labels.get(k) != v:
                    return False
        if self.affinity is not None:
            return self.affinity.matches(node)
        return True
