"""Affinity-term helpers shared by filtering and scoring.

* ``pod_parse_error`` reproduces the error upstream's PodInfo construction reports when a pod's
  (anti-)affinity label selectors do not convert to selectors (a label key or value that is not valid),
  with apimachinery's wording, so PreFilter / PreScore can fail the way upstream does.
* ``merge_namespaces`` folds an incoming pod's namespaceSelector into the term's namespace set by
  listing the Namespace objects the selector picks (upstream ``mergeAffinityTermNamespacesIfNotEmpty``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Protocol

from scheduling_framework.api.names import is_qualified_name, is_valid_label_value
from scheduling_framework.api.pod import Pod, PodAffinity, PodAffinityTerm
from scheduling_framework.api.selectors import LabelSelector
from scheduling_framework.state.node_info import AffinityTerm, WeightedAffinityTerm

#: Namespace labels to pass when upstream passes nil: an empty selector still matches them.
NO_LABELS: Mapping[str, str] = MappingProxyType({})


class _Labelled(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


# --- selector validation (apimachinery LabelSelectorAsSelector / labels.NewRequirement) -------------


def _go_quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def aggregate(messages: Sequence[str]) -> str:
    """The text of an apimachinery error aggregate: one message as is, several de-duplicated in brackets."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def _requirement_errors(key: str, values: Iterable[str]) -> list[str]:
    errs: list[str] = []
    key_problems = is_qualified_name(key)
    if key_problems:
        errs.append(f"key: Invalid value: {_go_quote(key)}: {'; '.join(key_problems)}")
    for i, v in enumerate(values):
        problems = is_valid_label_value(v)
        if problems:
            errs.append(f"values[{i}][{key}]: Invalid value: {_go_quote(v)}: {'; '.join(problems)}")
    return errs


def selector_error(selector: LabelSelector | None) -> str | None:
    """Why ``selector`` does not convert to a labels.Selector, or None when it does."""
    if selector is None or selector.is_empty():
        return None
    for k in sorted(selector.match_labels):
        errs = _requirement_errors(k, (selector.match_labels[k],))
        if errs:
            return aggregate(errs)
    for r in selector.match_expressions:
        errs = _requirement_errors(r.key, r.values)
        if errs:
            return aggregate(errs)
    return None


def _term_error(term: PodAffinityTerm) -> str | None:
    return selector_error(term.label_selector) or selector_error(term.namespace_selector)


def _terms_error(terms: Iterable[PodAffinityTerm]) -> str | None:
    for t in terms:
        err = _term_error(t)
        if err is not None:
            return err
    return None


def pod_parse_error(pod: Pod) -> str | None:
    """The error upstream's NewPodInfo returns for ``pod``, or None when its terms all parse."""
    aff = pod.spec.affinity
    if aff is None:
        return None
    pa: PodAffinity | None = aff.pod_affinity
    paa: PodAffinity | None = aff.pod_anti_affinity
    errs: list[str] = []
    for label, group, preferred in (
        ("requiredAffinityTerms", pa, False),
        ("requiredAntiAffinityTerms", paa, False),
        ("preferredAffinityTerms", pa, True),
        ("preferredAntiAffinityTerms", paa, True),
    ):
        if group is None:
            continue
        if preferred:
            err = _terms_error(w.pod_affinity_term for w in group.preferred_during_scheduling_ignored_during_execution)
        else:
            err = _terms_error(group.required_during_scheduling_ignored_during_execution)
        if err is not None:
            errs.append(f"{label}: {err}")
    return aggregate(errs) if errs else None


# --- namespace selectors -----------------------------------------------------------------------------


def merge_namespaces(term: AffinityTerm, namespaces: Sequence[_Labelled]) -> AffinityTerm:
    """The term with the namespaces its namespaceSelector selects added to its namespace set.

    A nil selector selects nothing and an empty one selects every namespace; both are kept as they are
    (the empty one keeps matching any namespace). Any other selector is replaced by the names it picks.
    """
    sel = term.namespace_selector
    if sel is None or sel.is_empty():
        return term
    picked = {ns.name for ns in namespaces if sel.matches(ns.labels)}
    return AffinityTerm(term.namespaces | picked, term.selector, term.topology_key, None)


def merge_all(terms: Sequence[AffinityTerm], namespaces: Sequence[_Labelled]) -> tuple[AffinityTerm, ...]:
    return tuple(merge_namespaces(t, namespaces) for t in terms)


def merge_all_weighted(terms: Sequence[WeightedAffinityTerm],
                       namespaces: Sequence[_Labelled]) -> tuple[WeightedAffinityTerm, ...]:
    out: list[WeightedAffinityTerm] = []
    for w in terms:
        merged = merge_namespaces(w.term, namespaces)
        out.append(w if merged is w.term else WeightedAffinityTerm(merged, w.weight))
    return tuple(out)


def term_namespaces(term: AffinityTerm) -> frozenset[str] | None:
    """The namespaces whose pods ``term`` can match when matched with no namespace labels (as the incoming pod's
    terms are matched against existing pods); None for every namespace."""
    sel = term.namespace_selector
    if sel is not None and sel.matches(NO_LABELS):
        return None
    return term.namespaces


def needs_namespaces(terms: Iterable[AffinityTerm]) -> bool:
    """Whether any term has a non-empty namespaceSelector (so Namespace objects must be listed)."""
    return any(t.namespace_selector is not None and not t.namespace_selector.is_empty() for t in terms)


# --- memo keys ---------------------------------------------------------------------------------------

#: Bound on the per-NodeInfo memo entries this plugin keeps (distinct incoming pods seen since the node changed).
MEMO_LIMIT = 64


def selector_key(selector: LabelSelector | None) -> tuple[object, ...] | None:
    """A canonical value equal for selectors that select the same way (None for a nil selector)."""
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())), selector.match_expressions)


def term_key(term: AffinityTerm) -> tuple[object, ...]:
    """A canonical value equal for terms that match the same pods (the topology key aside)."""
    return (tuple(sorted(term.namespaces)), selector_key(term.selector), selector_key(term.namespace_selector))


#: Canonical keys of the terms met lately, by term object (terms are immutable; their PodInfos outlive many
#: cycles and clones): id -> (the term, its key), the term kept so that its id is not reused meanwhile.
_TERM_IDS: dict[int, tuple[AffinityTerm, str]] = {}
_TERM_IDS_KEPT = 65536


def term_id(term: AffinityTerm) -> str:
    """``term_key`` as a string (its hash is computed once, and it is looked up per node), kept per term."""
    hit = _TERM_IDS.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    tid = repr(term_key(term))
    if len(_TERM_IDS) >= _TERM_IDS_KEPT:
        _TERM_IDS.clear()
    _TERM_IDS[id(term)] = (term, tid)
    return tid


def weighted_terms_key(terms: Iterable[WeightedAffinityTerm]) -> tuple[object, ...]:
    return tuple((term_key(w.term), w.term.topology_key, w.weight) for w in terms)


def memo_key(*parts: object) -> str:
    """A NodeInfo memo key made of canonical parts. A string, because its hash is computed once: the key is
    looked up on every node of every cycle."""
    return repr(parts)
