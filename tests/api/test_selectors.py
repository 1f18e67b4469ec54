"""Label selectors and node selectors (scheduling_framework.api.selectors) against upstream's tables.

Ported from:
- apimachinery/pkg/apis/meta/v1/helpers_test.go      TestLabelSelectorAsSelector
- apimachinery/pkg/labels/selector_test.go           TestSelectorMatches, TestSetMatches, TestEverything,
                                                     TestRequirementSelectorMatching (In/NotIn/Exists/DoesNotExist)
- component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go
                                                     TestNodeSelectorMatch, TestPreferredSchedulingTermsScore,
                                                     TestPodMatchesNodeSelectorAndAffinityTerms
- component-helpers/scheduling/corev1/helpers_test.go TestMatchNodeSelectorTerms

Upstream builds ``labels.Selector`` values and compares their string forms; here each selector is matched
against label sets instead, which is what the scheduler relies on.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_framework.api import Pod
from scheduling_framework.api.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    match_node_selector_terms,
    selector_from_set,
    selector_matches,
)
from scheduling_framework.errors import ValidationError


def req(key: str, op: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key, op, tuple(values))


def sel(match_labels: Mapping[str, str] | None = None, *exprs: LabelSelectorRequirement) -> LabelSelector:
    return LabelSelector(dict(match_labels or {}), tuple(exprs))


# --- TestLabelSelectorAsSelector ------------------------------------------------------------------

MATCH_LABELS = {"foo": "bar"}
MATCH_EXPRESSIONS = [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]

LABEL_SETS: list[dict[str, str]] = [
    {},
    {"foo": "bar"},
    {"foo": "other"},
    {"baz": "qux"},
    {"baz": "norf"},
    {"baz": "other"},
    {"foo": "bar", "baz": "qux"},
    {"foo": "bar", "baz": "norf", "x": "y"},
    {"foo": "bar", "baz": "nope"},
]

# (id, selector manifest or None, predicate giving the expected match for a label set)
AS_SELECTOR_CASES: list[tuple[str, Any, Any]] = [
    ("nil-is-Nothing", None, lambda labels: False),
    ("empty-is-Everything", {}, lambda labels: True),
    ("foo=bar", {"matchLabels": MATCH_LABELS}, lambda labels: labels.get("foo") == "bar"),
    ("baz in (norf,qux)", {"matchExpressions": MATCH_EXPRESSIONS},
     lambda labels: labels.get("baz") in ("qux", "norf")),
    ("baz in (norf,qux),foo=bar", {"matchLabels": MATCH_LABELS, "matchExpressions": MATCH_EXPRESSIONS},
     lambda labels: labels.get("foo") == "bar" and labels.get("baz") in ("qux", "norf")),
]


@pytest.mark.parametrize(("manifest", "expected"), [pytest.param(m, e, id=i) for i, m, e in AS_SELECTOR_CASES])
@pytest.mark.parametrize("labels", LABEL_SETS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "none")
def test_label_selector_as_selector(manifest: Any, expected: Any, labels: dict[str, str]) -> None:
    selector = LabelSelector.from_opt(manifest, "labelSelector")
    assert selector_matches(selector, labels) is expected(labels)


def test_label_selector_as_selector_exists_with_values_is_an_error() -> None:
    manifest = {"matchExpressions": [{"key": "baz", "operator": "Exists", "values": ["qux", "norf"]}]}
    with pytest.raises(ValidationError) as ei:
        LabelSelector.from_dict(manifest, "spec.selector")
    assert ei.value.path == "spec.selector.matchExpressions[0].values"
    assert "Forbidden" in str(ei.value)


@pytest.mark.parametrize("manifest", [
    pytest.param(None, id="nil"),
    pytest.param({}, id="empty"),
    pytest.param({"matchLabels": MATCH_LABELS, "matchExpressions": MATCH_EXPRESSIONS}, id="full"),
])
def test_label_selector_parse_does_not_modify_input(manifest: Any) -> None:
    before = copy.deepcopy(manifest)
    LabelSelector.from_opt(manifest, "s")
    assert manifest == before


@pytest.mark.parametrize(("manifest", "path", "fragment"), [
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]}, "s.matchExpressions[0].values",
                 "Required value", id="In-without-values"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
                 "s.matchExpressions[0].values", "Required value", id="NotIn-with-empty-values"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]},
                 "s.matchExpressions[0].values", "Forbidden", id="DoesNotExist-with-values"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
                 "s.matchExpressions[0].operator", 'Unsupported value: "Gt"', id="Gt-not-a-label-operator"),
    pytest.param({"matchExpressions": [{"key": "b", "operator": "Exists"}, "oops"]},
                 "s.matchExpressions[1]", "expected an object", id="expression-not-an-object"),
    pytest.param({"matchLabels": ["a"]}, "s.matchLabels", "expected an object", id="matchLabels-not-a-map"),
    pytest.param({"matchExpressions": {"key": "a"}}, "s.matchExpressions", "expected a list",
                 id="matchExpressions-not-a-list"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In", "values": [["x"]]}]},
                 "s.matchExpressions[0].values[0]", "expected a string", id="value-not-a-string"),
])
def test_label_selector_parse_errors_name_the_field(manifest: Any, path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as ei:
        LabelSelector.from_dict(manifest, "s")
    assert ei.value.path == path
    assert fragment in str(ei.value)
    assert str(ei.value).startswith(f"{path}: ")


@pytest.mark.parametrize("manifest", [
    {"matchLabels": {"a": "b"}},
    {"matchExpressions": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "In", "values": ["x", "y"]}]},
    {"matchLabels": {"a": "b", "c": "d"}, "matchExpressions": [{"key": "e", "operator": "DoesNotExist"}]},
    {},
], ids=["labels", "expressions", "both", "empty"])
def test_label_selector_round_trip(manifest: dict[str, Any]) -> None:
    assert LabelSelector.from_dict(manifest, "s").to_dict() == manifest


def test_label_selector_unquoted_yaml_numbers_read_as_text() -> None:
    # YAML turns `version: 1` into an int; a selector written that way still means the string "1".
    s = LabelSelector.from_dict({"matchLabels": {"version": 1}}, "s")
    assert s.matches({"version": "1"})


# --- labels/selector_test.go: TestSelectorMatches (set-based and equality forms only) ---------------

# Each upstream string selector is spelled with our requirements: "x=y" is a matchLabel (equality),
# "x!=y" a NotIn with one value, "x" Exists and "!x" DoesNotExist. Gt/Lt are not label-selector operators.
def _parse_simple(s: str) -> LabelSelector:
    labels: dict[str, str] = {}
    exprs: list[LabelSelectorRequirement] = []
    for part in filter(None, s.split(",")):
        if "!=" in part:
            k, v = part.split("!=")
            exprs.append(req(k, "NotIn", v))
        elif "=" in part:
            k, v = part.split("=")
            labels[k] = v
        elif part.startswith("!"):
            exprs.append(req(part[1:], "DoesNotExist"))
        else:
            exprs.append(req(part, "Exists"))
    return sel(labels, *exprs)


LABELSET = {"foo": "bar", "baz": "blah"}
SELECTOR_MATCHES: list[tuple[str, dict[str, str], bool]] = [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True),
    ("x=z", {}, False),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False),
    ("!x", {"x": "z"}, False),
    ("foo=bar", LABELSET, True),
    ("baz=blah", LABELSET, True),
    ("foo=bar,baz=blah", LABELSET, True),
    ("foo=blah", LABELSET, False),
    ("baz=bar", LABELSET, False),
    ("foo=bar,foobar=bar,baz=blah", LABELSET, False),
]


@pytest.mark.parametrize(("selector", "labels", "match"),
                         [pytest.param(s, ls, m, id=f"{s or '<empty>'} vs {ls}") for s, ls, m in SELECTOR_MATCHES])
def test_selector_matches(selector: str, labels: dict[str, str], match: bool) -> None:
    assert _parse_simple(selector).matches(labels) is match


@pytest.mark.parametrize("selector", [{}, {"foo": "bar"}, {"baz": "blah"}, {"foo": "bar", "baz": "blah"}],
                         ids=str)
def test_set_matches(selector: dict[str, str]) -> None:
    assert selector_from_set(selector).matches(LABELSET)


def test_set_does_not_match_when_a_value_differs() -> None:
    assert not selector_from_set({"foo": "bar", "foobar": "bar"}).matches(LABELSET)


def test_everything() -> None:
    everything = LabelSelector()
    assert everything.matches({"x": "y"})
    assert everything.is_empty()
    assert selector_from_set({}).is_empty()
    assert not sel({"a": "b"}).is_empty()
    assert not sel(None, req("a", "Exists")).is_empty()


def test_nil_selector_matches_nothing_even_empty_labels() -> None:
    assert not selector_matches(None, {})
    assert selector_matches(LabelSelector(), {})


# --- labels/selector_test.go: TestRequirementSelectorMatching -------------------------------------

REQUIREMENT_MATCHING = [
    pytest.param({"x": "foo", "y": "baz"}, [req("", "")], False, id="zero-value-requirement"),
    pytest.param({"x": "foo", "y": "baz"}, [req("x", "In", "foo"), req("y", "NotIn", "alpha")], True,
                 id="x-in-foo,y-notin-alpha"),
    pytest.param({"x": "foo", "y": "baz"}, [req("x", "In", "foo"), req("y", "In", "alpha")], False,
                 id="x-in-foo,y-in-alpha"),
    pytest.param({"y": ""}, [req("x", "NotIn", ""), req("y", "Exists")], True, id="x-notin-empty,y-exists"),
    pytest.param({"y": ""}, [req("x", "DoesNotExist"), req("y", "Exists")], True, id="!x,y"),
    pytest.param({"y": ""}, [req("x", "NotIn", ""), req("y", "DoesNotExist")], False, id="x-notin-empty,!y"),
    pytest.param({"y": "baz"}, [req("x", "In", "")], False, id="x-in-empty"),
]


@pytest.mark.parametrize(("labels", "requirements", "match"), REQUIREMENT_MATCHING)
def test_requirement_selector_matching(labels: dict[str, str], requirements: list[LabelSelectorRequirement],
                                       match: bool) -> None:
    assert sel(None, *requirements).matches(labels) is match


# --- properties ------------------------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "example.com/d"])
VALUES = st.sampled_from(["", "1", "x", "y"])
LABEL_MAPS = st.dictionaries(KEYS, VALUES, max_size=4)


@st.composite
def requirements(draw: st.DrawFn) -> LabelSelectorRequirement:
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    values: tuple[str, ...] = ()
    if op in ("In", "NotIn"):
        values = tuple(draw(st.lists(VALUES, min_size=1, max_size=3)))
    return req(draw(KEYS), op, *values)


def _requirement_holds(r: LabelSelectorRequirement, labels: Mapping[str, str]) -> bool:
    present = r.key in labels
    return {
        "In": present and labels.get(r.key) in r.values,
        "NotIn": not present or labels.get(r.key) not in r.values,
        "Exists": present,
        "DoesNotExist": not present,
    }[r.operator]


@given(LABEL_MAPS, st.dictionaries(KEYS, VALUES, max_size=3), st.lists(requirements(), max_size=4))
def test_selector_is_the_conjunction_of_its_requirements(labels: dict[str, str], match_labels: dict[str, str],
                                                         exprs: list[LabelSelectorRequirement]) -> None:
    want = all(labels.get(k) == v for k, v in match_labels.items()) and all(
        _requirement_holds(r, labels) for r in exprs)
    assert sel(match_labels, *exprs).matches(labels) is want


@given(st.dictionaries(KEYS, VALUES, max_size=3), LABEL_MAPS)
def test_match_labels_equal_single_value_in_expressions(match_labels: dict[str, str],
                                                        labels: dict[str, str]) -> None:
    as_exprs = sel(None, *(req(k, "In", v) for k, v in match_labels.items()))
    assert selector_from_set(match_labels).matches(labels) is as_exprs.matches(labels)


@given(requirements(), LABEL_MAPS)
def test_node_and_label_requirements_agree_on_shared_operators(r: LabelSelectorRequirement,
                                                               labels: dict[str, str]) -> None:
    nr = NodeSelectorRequirement(r.key, r.operator, r.values)
    assert nr.valid_for_labels()
    assert nr.matches_labels(labels) is r.matches(labels)


# --- node selectors -----------------------------------------------------------------------------------


def term(expressions: list[dict[str, Any]] | None = None, fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if expressions is not None:
        d["matchExpressions"] = expressions
    if fields is not None:
        d["matchFields"] = fields
    return d


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def node_selector(*terms: dict[str, Any]) -> NodeSelector:
    return NodeSelector.from_dict({"nodeSelectorTerms": list(terms)}, "nodeSelector")


NAME_IN_HOST1 = expr("metadata.name", "In", "host_1")
LABEL1_IN = expr("label_1", "In", "label_1_val")


# TestNodeSelectorMatch (the "nil node" case has no equivalent: our matching takes a name and labels).
@pytest.mark.parametrize(("selector", "name", "labels", "want"), [
    pytest.param(node_selector(term([LABEL1_IN], [NAME_IN_HOST1])), "host_1", {}, False,
                 id="node matches field selector, but not labels"),
    pytest.param(node_selector(term([LABEL1_IN], [NAME_IN_HOST1])), "host_1", {"label_1": "label_1_val"}, True,
                 id="node matches field selector and label selector"),
    pytest.param(node_selector(term([LABEL1_IN]), term(None, [NAME_IN_HOST1])), "host_1", {}, True,
                 id="second term matches"),
])
def test_node_selector_match(selector: NodeSelector, name: str, labels: dict[str, str], want: bool) -> None:
    assert selector.matches(name, labels) is want


# TestNodeSelectorMatch "invalid field selector and label selector": upstream's strict constructor reports
# terms 0 and 2; the scheduler uses the lazy form where such a term never matches. Here: each term's validity.
INVALID_SELECTOR = node_selector(
    term(None, [expr("metadata.name", "In", "host_1", "host_2")]),
    term([LABEL1_IN], [NAME_IN_HOST1]),
    term([expr("invalid key", "In", "label_value")]),
)


@pytest.mark.parametrize(("index", "valid"), [
    pytest.param(0, False, id="nodeSelectorTerms[0].matchFields[0].values: must have one element"),
    pytest.param(1, True, id="nodeSelectorTerms[1] is valid"),
    pytest.param(2, False, id="nodeSelectorTerms[2].matchExpressions[0].key: name part must consist of ..."),
])
def test_node_selector_invalid_terms_are_flagged(index: int, valid: bool) -> None:
    assert INVALID_SELECTOR.node_selector_terms[index].valid is valid


def test_node_selector_invalid_terms_never_match_but_valid_ones_do() -> None:
    labels = {"label_1": "label_1_val"}
    assert not INVALID_SELECTOR.node_selector_terms[0].matches("host_1", labels)
    assert INVALID_SELECTOR.matches("host_1", labels)  # term 1 still matches
    assert not INVALID_SELECTOR.matches("host_2", labels)


# Requirements that do not parse as labels.NewRequirement / the field selector would: each makes its term
# match nothing, even for a node that would otherwise satisfy it.
INVALID_REQUIREMENTS = [
    pytest.param(term(None, [expr("metadata.name", "In", "n1", "n2")]), "n1", {}, id="field-two-values"),
    pytest.param(term(None, [expr("metadata.name", "In")]), "n1", {}, id="field-no-values"),
    pytest.param(term(None, [expr("metadata.name", "Exists")]), "n1", {}, id="field-Exists-operator"),
    pytest.param(term([expr("k", "In")]), "n1", {"k": "v"}, id="In-without-values"),
    pytest.param(term([expr("k", "NotIn")]), "n1", {}, id="NotIn-without-values"),
    pytest.param(term([expr("k", "Exists", "v")]), "n1", {"k": "v"}, id="Exists-with-values"),
    pytest.param(term([expr("k", "DoesNotExist", "v")]), "n1", {}, id="DoesNotExist-with-values"),
    pytest.param(term([expr("k", "Gt", "1", "2")]), "n1", {"k": "5"}, id="Gt-two-values"),
    pytest.param(term([expr("k", "Gt", "one")]), "n1", {"k": "5"}, id="Gt-non-integer"),
    pytest.param(term([expr("k", "Lt")]), "n1", {"k": "5"}, id="Lt-no-value"),
    pytest.param(term([expr("k", "Equals", "v")]), "n1", {"k": "v"}, id="unknown-operator"),
    pytest.param(term([expr("k", "Exists"), expr("k", "Gt", "x")]), "n1", {"k": "5"}, id="one-bad-of-two"),
    pytest.param(term([expr("foo", "NotIn", "invalid value: ___@#$%^")]), "n1", {"foo": "bar"},
                 id="invalid-label-value"),
    pytest.param(term([expr("invalid key", "In", "v")]), "n1", {"invalid key": "v"}, id="invalid-label-key"),
    pytest.param(term([expr("k", "Gt", "1_0")]), "n1", {"k": "50"}, id="Gt-value-with-underscore"),
    pytest.param(term([expr("k", "Gt", "99999999999999999999")]), "n1", {"k": "1" + "0" * 20},
                 id="Gt-value-overflows-int64"),
]


@pytest.mark.parametrize(("raw_term", "name", "labels"), INVALID_REQUIREMENTS)
def test_invalid_requirement_makes_its_term_match_nothing(raw_term: dict[str, Any], name: str,
                                                          labels: dict[str, str]) -> None:
    t = NodeSelectorTerm.from_dict(raw_term, "term")
    assert not t.matches(name, labels)
    assert not t.valid


@pytest.mark.parametrize(("raw_term", "labels", "want"), [
    pytest.param(term([expr("k", "Gt", "5")]), {"k": "6"}, True, id="Gt-above"),
    pytest.param(term([expr("k", "Gt", "5")]), {"k": "5"}, False, id="Gt-equal"),
    pytest.param(term([expr("k", "Lt", "5")]), {"k": "4"}, True, id="Lt-below"),
    pytest.param(term([expr("k", "Lt", "5")]), {"k": "5"}, False, id="Lt-equal"),
    pytest.param(term([expr("k", "Gt", "-3")]), {"k": "-2"}, True, id="Gt-negative"),
    pytest.param(term([expr("k", "Gt", "5")]), {}, False, id="Gt-label-missing"),
    pytest.param(term([expr("k", "Gt", "5")]), {"k": "v6"}, False, id="Gt-label-not-an-integer"),
    pytest.param(term([expr("k", "Gt", "0204")]), {"k": "0206"}, True, id="Gt-leading-zeros"),
    pytest.param(term([expr("k", "Gt", "5")]), {"k": "1_0"}, False, id="Gt-label-with-underscore"),
])
def test_gt_lt_matching(raw_term: dict[str, Any], labels: dict[str, str], want: bool) -> None:
    assert NodeSelectorTerm.from_dict(raw_term, "t").matches("n", labels) is want


# TestPreferredSchedulingTermsScore: a node's score is the sum of the weights of the terms it matches.
def _preferred(*weighted: tuple[int, dict[str, Any]]) -> list[PreferredSchedulingTerm]:
    return [PreferredSchedulingTerm(w, NodeSelectorTerm.from_dict(t, f"[{i}]")) for i, (w, t) in enumerate(weighted)]


def _score(terms: list[PreferredSchedulingTerm], name: str, labels: dict[str, str]) -> int:
    return sum(t.weight for t in terms if t.preference.matches(name, labels))


@pytest.mark.parametrize(("terms", "name", "labels", "want"), [
    pytest.param(_preferred((0, term(None, [expr("metadata.name", "In", "host_1", "host_2")]))), "host_1", {}, 0,
                 id="invalid field selector but no weight, error not reported"),
    pytest.param(_preferred((5, term(None, [NAME_IN_HOST1])),
                            (7, term([expr("unknown_label", "In", "unknown_label_val")])),
                            (11, term([LABEL1_IN]))),
                 "host_1", {"label_1": "label_1_val"}, 16, id="first and third term match"),
    # "invalid field selector and label selector": upstream reports an error; invalid terms score nothing.
    pytest.param(_preferred((1, term(None, [expr("metadata.name", "In", "host_1", "host_2")])),
                            (1, term([LABEL1_IN], [NAME_IN_HOST1]))),
                 "host_1", {"label_1": "label_1_val"}, 1, id="invalid field selector and label selector"),
])
def test_preferred_scheduling_terms_score(terms: list[PreferredSchedulingTerm], name: str, labels: dict[str, str],
                                          want: int) -> None:
    assert _score(terms, name, labels) == want


# TestPodMatchesNodeSelectorAndAffinityTerms: pods parsed from manifests; the required node affinity is
# spec.nodeSelector (an equality selector) AND the required node selector terms (ORed).
def _required_matches(pod: Pod, node_name: str, labels: dict[str, str]) -> bool:
    if not selector_from_set(pod.spec.node_selector).matches(labels):
        return False
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    return required is None or required.matches(node_name, labels)


def _pod(spec: dict[str, Any]) -> Pod:
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def _affinity(*terms: dict[str, Any], node_selector: dict[str, str] | None = None,
              raw_terms: Any = ...) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    required: dict[str, Any] = {"nodeSelectorTerms": list(terms) if raw_terms is ... else raw_terms}
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    return spec


POD_MATCHES = [
    ("no selector", {}, "", None, True),
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, "", None, False),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, "", {"foo": "bar"}, True),
    ("node labels are superset", {"nodeSelector": {"foo": "bar"}}, "", {"foo": "bar", "baz": "blah"}, True),
    ("node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, "", {"foo": "bar"}, False),
    ("Pod with matchExpressions using In operator that matches the existing node",
     _affinity(term([expr("foo", "In", "bar", "value2")])), "", {"foo": "bar"}, True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     _affinity(term([expr("kernel-version", "Gt", "0204")])), "", {"kernel-version": "0206"}, True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     _affinity(term([expr("mem-type", "NotIn", "DDR", "DDR2")])), "", {"mem-type": "DDR3"}, True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     _affinity(term([expr("GPU", "Exists")])), "", {"GPU": "NVIDIA-GRID-K1"}, True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     _affinity(term([expr("foo", "In", "value1", "value2")])), "", {"foo": "bar"}, False),
    ("Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the node",
     _affinity(raw_terms=None), "", {"foo": "bar"}, False),
    ("Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the "
     "node", _affinity(raw_terms=[]), "", {"foo": "bar"}, False),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     _affinity(term([])), "", {"foo": "bar"}, False),
    ("Pod with no Affinity will schedule onto a node", {}, "", {"foo": "bar"}, True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node",
     {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}, "", {"foo": "bar"},
     True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     _affinity(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")])), "", {"GPU": "NVIDIA-GRID-K1"},
     True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     _affinity(term([expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")])), "", {"GPU": "NVIDIA-GRID-K1"},
     False),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the "
     "node", _affinity(term([expr("foo", "In", "bar", "value2")]), term([expr("diffkey", "In", "wrong", "value2")])),
     "", {"foo": "bar"}, True),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, "
     "will schedule onto the node", _affinity(term([expr("foo", "Exists")]), node_selector={"foo": "bar"}), "",
     {"foo": "bar"}, True),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
     "deprecating) is not satisfied, won't schedule onto the node",
     _affinity(term([expr("foo", "Exists")]), node_selector={"foo": "bar"}), "", {"foo": "barrrrrr"}, False),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     _affinity(term([expr("foo", "NotIn", "invalid value: ___@#$%^")])), "", {"foo": "bar"}, False),
    ("Pod with matchFields using In operator that matches the existing node",
     _affinity(term(None, [expr("metadata.name", "In", "node_1")])), "node_1", None, True),
    ("Pod with matchFields using In operator that does not match the existing node",
     _affinity(term(None, [expr("metadata.name", "In", "node_1")])), "node_2", None, False),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     _affinity(term(None, [expr("metadata.name", "In", "node_1")]), term([expr("foo", "In", "bar")])), "node_2",
     {"foo": "bar"}, True),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     _affinity(term([expr("foo", "In", "bar")], [expr("metadata.name", "In", "node_1")])), "node_2", {"foo": "bar"},
     False),
    ("Pod with one term: both matchFields and matchExpressions match",
     _affinity(term([expr("foo", "In", "bar")], [expr("metadata.name", "In", "node_1")])), "node_1", {"foo": "bar"},
     True),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     _affinity(term(None, [expr("metadata.name", "In", "node_1")]), term([expr("foo", "In", "not-match-to-bar")])),
     "node_2", {"foo": "bar"}, False),
]
POD_MATCHES_XFAIL: dict[str, str] = {}


@pytest.mark.parametrize(("spec", "node_name", "labels", "want"), [
    pytest.param(spec, name, labels, want, id=case_id,
                 marks=[pytest.mark.xfail(strict=True, reason=POD_MATCHES_XFAIL[case_id])]
                 if case_id in POD_MATCHES_XFAIL else [])
    for case_id, spec, name, labels, want in POD_MATCHES
])
def test_pod_matches_node_selector_and_affinity_terms(spec: dict[str, Any], node_name: str,
                                                      labels: dict[str, str] | None, want: bool) -> None:
    assert _required_matches(_pod(spec), node_name, labels or {}) is want


# TestMatchNodeSelectorTerms (component-helpers/scheduling/corev1).
@pytest.mark.parametrize(("terms", "name", "labels", "want"), [
    pytest.param(None, "", {}, False, id="nil terms"),
    pytest.param([term([LABEL1_IN])], "", {"label_1": "label_1_val"}, True,
                 id="node label matches matchExpressions terms"),
    pytest.param([term(None, [NAME_IN_HOST1])], "host_1", {}, True, id="node field matches matchFields terms"),
    pytest.param([term(None, [expr("metadata.name", "In", "host_1", "host_2")])], "host_1", {}, False,
                 id="invalid node field requirement"),
    pytest.param([term(None, [NAME_IN_HOST1])], "not_host_1", {"metadata.name": "host_1"}, False,
                 id="fieldSelectorTerm with node labels"),
    pytest.param([term([expr("metadata.name", "In", "host_1")])], "host_1", {}, False,
                 id="labelSelectorTerm with node fields"),
    pytest.param([term([LABEL1_IN], [NAME_IN_HOST1])], "host_1", {}, False,
                 id="labelSelectorTerm and fieldSelectorTerm was set, but only node fields"),
    pytest.param([term([LABEL1_IN], [NAME_IN_HOST1])], "host_1", {"label_1": "label_1_val"}, True,
                 id="labelSelectorTerm and fieldSelectorTerm was set, both node fields and labels (both matched)"),
    pytest.param([term([LABEL1_IN], [NAME_IN_HOST1])], "host_1", {"label_1": "label_1_val-failed"}, False,
                 id="labelSelectorTerm and fieldSelectorTerm was set, both node fields and labels (one mismatched)"),
    pytest.param([term([LABEL1_IN]), term(None, [NAME_IN_HOST1])], "host_1", {"label_1": "label_1_val-failed"},
                 True, id="multi-selector was set, both node fields and labels (one mismatched)"),
])
def test_match_node_selector_terms(terms: list[dict[str, Any]] | None, name: str, labels: dict[str, str],
                                   want: bool) -> None:
    parsed = node_selector(*(terms or ()))
    assert parsed.matches(name, labels) is want
    assert match_node_selector_terms(parsed.node_selector_terms, name, labels) is want


def test_match_fields_not_in() -> None:
    t = NodeSelectorTerm.from_dict(term(None, [expr("metadata.name", "NotIn", "host_1")]), "t")
    assert not t.matches("host_1", {})
    assert t.matches("host_2", {})


# TestMatchNodeSelectorTermsStateless: matching must not reorder or otherwise touch the selector.
def test_match_node_selector_terms_stateless() -> None:
    raw = {"nodeSelectorTerms": [term([expr("label_1", "In", "label_2_val", "label_1_val")],
                                      [expr("metadata.name", "In", "host_2", "host_1")])]}
    before = copy.deepcopy(raw)
    parsed = NodeSelector.from_dict(raw, "s")
    parsed.matches("host_1", {"label_1": "label_1_val"})
    assert raw == before
    assert parsed.to_dict() == before


@pytest.mark.parametrize(("raw", "path"), [
    pytest.param({"nodeSelectorTerms": "x"}, "s.nodeSelectorTerms", id="terms-not-a-list"),
    pytest.param({"nodeSelectorTerms": [{"matchExpressions": [{"key": 3.5j}]}]},
                 "s.nodeSelectorTerms[0].matchExpressions[0].key", id="key-not-a-string"),
    pytest.param({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "values": "n1"}]}]},
                 "s.nodeSelectorTerms[0].matchFields[0].values", id="values-not-a-list"),
    pytest.param({"nodeSelectorTerms": [None, 7]}, "s.nodeSelectorTerms[1]", id="term-not-an-object"),
])
def test_node_selector_parse_errors_name_the_field(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as ei:
        NodeSelector.from_dict(raw, "s")
    assert ei.value.path == path


def test_node_selector_round_trip() -> None:
    raw = {"nodeSelectorTerms": [term([expr("a", "In", "x")], [expr("metadata.name", "NotIn", "n")]),
                                 term([expr("b", "Gt", "3"), expr("c", "DoesNotExist")])]}
    assert NodeSelector.from_dict(raw, "s").to_dict() == raw
