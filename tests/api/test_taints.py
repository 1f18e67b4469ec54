"""Taints and tolerations (scheduling_framework.api.taints) against upstream's tables.

Ported from:
- api/core/v1/toleration_test.go                     TestTolerationToleratesTaint
- api/core/v1/taint_test.go                          TestTaintToString
- component-helpers/scheduling/corev1/helpers_test.go TestFindMatchingUntoleratedTaint

Upstream's newest tables include the ``Lt``/``Gt`` toleration operators, behind the alpha feature gate
TaintTolerationComparisonOperators (off by default). ``Toleration.tolerates`` implements the gate-off default,
where an ``Lt``/``Gt`` toleration tolerates nothing; the numeric comparison with the gate on lives in the
TaintToleration plugin. So the upstream rows for those operators are checked here with their gate-off outcome
(ids suffixed ``[gate off]``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_framework.api.taints import (
    Taint,
    Toleration,
    does_not_schedule_or_execute,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from scheduling_framework.errors import ValidationError

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
SLA = "node.kubernetes.io/sla"

GATE_OFF = " [gate off]"


def _xfail(reason: str) -> Any:
    return pytest.mark.xfail(strict=True, reason=reason)


# --- TestTolerationToleratesTaint ---------------------------------------------------------------------

TOLERATES = [
    pytest.param(Toleration("foo", "Exists", effect=NO_SCHEDULE), Taint("foo", effect=NO_SCHEDULE), True,
                 id="toleration and taint have the same key and effect, and operator is Exists, and taint has no "
                    "value, expect tolerated"),
    pytest.param(Toleration("foo", "Exists", effect=NO_SCHEDULE), Taint("foo", "bar", NO_SCHEDULE), True,
                 id="toleration and taint have the same key and effect, and operator is Exists, and taint has some "
                    "value, expect tolerated"),
    pytest.param(Toleration("", "Exists", effect=NO_SCHEDULE), Taint("foo", "bar", NO_SCHEDULE), True,
                 id="toleration and taint have the same effect, toleration has empty key and operator is Exists, "
                    "means match all taints, expect tolerated"),
    pytest.param(Toleration("foo", "Equal", "bar", NO_SCHEDULE), Taint("foo", "bar", NO_SCHEDULE), True,
                 id="toleration and taint have the same key, effect and value, and operator is Equal, expect "
                    "tolerated"),
    pytest.param(Toleration("foo", "Equal", "value1", NO_SCHEDULE), Taint("foo", "value2", NO_SCHEDULE), False,
                 id="toleration and taint have the same key and effect, but different values, and operator is "
                    "Equal, expect not tolerated"),
    pytest.param(Toleration("foo", "Equal", "bar", NO_SCHEDULE), Taint("foo", "bar", NO_EXECUTE), False,
                 id="toleration and taint have the same key and value, but different effects, and operator is "
                    "Equal, expect not tolerated"),
    pytest.param(Toleration(SLA, "Gt", "950", NO_SCHEDULE), Taint(SLA, "800", NO_SCHEDULE), False,
                 id="toleration with Gt operator - taint value less than toleration value, expect not tolerated"
                    + GATE_OFF),
    pytest.param(Toleration(SLA, "Gt", "750", NO_SCHEDULE), Taint(SLA, "950", NO_SCHEDULE), False,
                 id="toleration with Gt operator - taint value greater than toleration value, expect tolerated"
                    + GATE_OFF),
    pytest.param(Toleration(SLA, "Lt", "800", NO_SCHEDULE), Taint(SLA, "950", NO_SCHEDULE), False,
                 id="toleration with Lt operator - taint value greater than toleration value, expect not tolerated"
                    + GATE_OFF),
    pytest.param(Toleration(SLA, "Lt", "950", NO_SCHEDULE), Taint(SLA, "800", NO_SCHEDULE), False,
                 id="toleration with Lt operator - taint value less than toleration value, expect tolerated"
                    + GATE_OFF),
    pytest.param(Toleration(SLA, "Gt", "950", NO_SCHEDULE), Taint(SLA, "950", NO_SCHEDULE), False,
                 id="toleration with Gt operator and taint with equal numeric value, expect not tolerated" + GATE_OFF),
    pytest.param(Toleration(SLA, "Gt", "950", NO_SCHEDULE), Taint(SLA, "high", NO_SCHEDULE), False,
                 id="toleration with Gt operator and taint with non-numeric value, expect not tolerated" + GATE_OFF),
    pytest.param(Toleration("test-key", "Gt", "-100", NO_SCHEDULE), Taint("test-key", "-200", NO_SCHEDULE), False,
                 id="toleration with Gt operator and negative numeric values - taint value less than threshold, "
                    "expect not tolerated" + GATE_OFF),
    pytest.param(Toleration("test-key", "Gt", "9223372036854775806", NO_SCHEDULE),
                 Taint("test-key", "100", NO_SCHEDULE), False,
                 id="toleration with Gt operator and large int64 values - taint value less than threshold, expect "
                    "not tolerated" + GATE_OFF),
]


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), TOLERATES)
def test_toleration_tolerates_taint(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert toleration.tolerates(taint) is tolerated


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), [
    pytest.param(Toleration("foo", "", "bar"), Taint("foo", "bar", NO_SCHEDULE), True, id="empty-operator-is-Equal"),
    pytest.param(Toleration("foo", "", "bar"), Taint("foo", "baz", NO_SCHEDULE), False,
                 id="empty-operator-is-Equal-different-value"),
    pytest.param(Toleration("", "Exists"), Taint("anything", "v", NO_EXECUTE), True,
                 id="empty-key-empty-effect-Exists-tolerates-everything"),
    pytest.param(Toleration("foo", "Exists"), Taint("foo", "v", PREFER_NO_SCHEDULE), True,
                 id="empty-effect-tolerates-every-effect"),
    pytest.param(Toleration("foo", "Exists", effect=NO_SCHEDULE), Taint("bar", "", NO_SCHEDULE), False,
                 id="different-key"),
    pytest.param(Toleration("foo", "Equal", "", NO_SCHEDULE), Taint("foo", "", NO_SCHEDULE), True,
                 id="Equal-empty-values"),
    pytest.param(Toleration("foo", "Matches", "bar", NO_SCHEDULE), Taint("foo", "bar", NO_SCHEDULE), False,
                 id="unknown-operator-tolerates-nothing"),
])
def test_toleration_semantics(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert toleration.tolerates(taint) is tolerated


# --- TestTaintToString ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("taint", "text"), [
    pytest.param(Taint("foo", "bar", NO_SCHEDULE), "foo=bar:NoSchedule", id="key-value-effect"),
    pytest.param(Taint("foo", effect=NO_SCHEDULE), "foo:NoSchedule", id="key-effect"),
    pytest.param(Taint("foo"), "foo", id="key-only"),
    pytest.param(Taint("foo", "bar"), "foo=bar:", id="key-value"),
])
def test_taint_to_string(taint: Taint, text: str) -> None:
    assert str(taint) == text


# --- TestFindMatchingUntoleratedTaint -------------------------------------------------------------------

def _all(t: Taint) -> bool:
    return True


def _none(t: Taint) -> bool:
    return False


def _no_execute(t: Taint) -> bool:
    return t.effect == NO_EXECUTE


FOO_EXISTS_NS = Toleration("foo", "Exists", effect=NO_SCHEDULE)

FIND_UNTOLERATED = [
    pytest.param([], [], _all, True, id="empty tolerations tolerate empty taints"),
    pytest.param([FOO_EXISTS_NS], [], _all, True, id="non-empty tolerations tolerate empty taints"),
    pytest.param([FOO_EXISTS_NS], [Taint("foo", effect=NO_SCHEDULE)], _all, True,
                 id="tolerations match all taints, expect tolerated"),
    pytest.param([FOO_EXISTS_NS], [Taint("bar", effect=NO_SCHEDULE)], _none, True,
                 id="tolerations don't match taints, but no taints apply to the filter, expect tolerated"),
    pytest.param([FOO_EXISTS_NS], [Taint("bar", effect=NO_SCHEDULE)], None, False,
                 id="no filterFunc indicated, means all taints apply to the filter, tolerations don't match taints, "
                    "expect untolerated"),
    pytest.param([Toleration("foo", "Exists", effect=NO_EXECUTE)],
                 [Taint("foo", effect=NO_EXECUTE), Taint("bar", effect=NO_SCHEDULE)], _no_execute, True,
                 id="tolerations match taints, expect tolerated"),
    pytest.param([Toleration(SLA, "Gt", "950", NO_SCHEDULE)], [Taint(SLA, "800", NO_SCHEDULE)], _all, False,
                 id="numeric Gt operator with taint value below threshold, expect not tolerated" + GATE_OFF),
    pytest.param([Toleration(SLA, "Gt", "750", NO_SCHEDULE)], [Taint(SLA, "950", NO_SCHEDULE)], _all, False,
                 id="numeric Gt operator with taint value above threshold, expect tolerated" + GATE_OFF),
    pytest.param([Toleration(SLA, "Lt", "800", NO_SCHEDULE)], [Taint(SLA, "950", NO_SCHEDULE)], _all, False,
                 id="numeric Lt operator with taint value above threshold, expect not tolerated" + GATE_OFF),
    pytest.param([Toleration(SLA, "Gt", "950", NO_SCHEDULE)], [Taint(SLA, "high", NO_SCHEDULE)], _all, False,
                 id="numeric Gt operator with non-numeric taint value, expect not tolerated" + GATE_OFF),
    pytest.param([Toleration(SLA, "Gt", "950", NO_SCHEDULE), Toleration(SLA, "Exists", effect=NO_SCHEDULE)],
                 [Taint(SLA, "high", NO_SCHEDULE)], _all, True,
                 id="numeric Gt parse error is ignored when a later toleration matches the taint" + GATE_OFF),
]


@pytest.mark.parametrize(("tolerations", "taints", "taint_filter", "tolerated"), FIND_UNTOLERATED)
def test_find_matching_untolerated_taint(tolerations: list[Toleration], taints: list[Taint], taint_filter: Any,
                                         tolerated: bool) -> None:
    found = find_matching_untolerated_taint(taints, tolerations, taint_filter)
    assert (found is None) is tolerated
    if found is not None:
        assert found in taints


def test_find_matching_untolerated_taint_returns_the_first_untolerated() -> None:
    taints = [Taint("a", effect=NO_SCHEDULE), Taint("b", effect=NO_SCHEDULE), Taint("c", effect=NO_EXECUTE)]
    assert find_matching_untolerated_taint(taints, [Toleration("a", "Exists")]) == taints[1]
    assert find_matching_untolerated_taint(taints, [Toleration("a", "Exists")], _no_execute) == taints[2]
    assert find_matching_untolerated_taint(taints, [Toleration("", "Exists")]) is None


def test_tolerations_tolerate_taint_any_of() -> None:
    taint = Taint("k", "v", NO_SCHEDULE)
    assert tolerations_tolerate_taint([Toleration("x", "Exists"), Toleration("k", "Equal", "v")], taint)
    assert not tolerations_tolerate_taint([Toleration("x", "Exists"), Toleration("k", "Equal", "w")], taint)
    assert not tolerations_tolerate_taint([], taint)


@pytest.mark.parametrize(("effect", "want"), [(NO_SCHEDULE, True), (NO_EXECUTE, True), (PREFER_NO_SCHEDULE, False)])
def test_does_not_schedule_or_execute(effect: str, want: bool) -> None:
    assert does_not_schedule_or_execute(Taint("k", effect=effect)) is want


# --- parsing ------------------------------------------------------------------------------------------------

def test_taint_from_dict() -> None:
    t = Taint.from_dict({"key": "k", "value": "v", "effect": NO_EXECUTE, "timeAdded": "2024-01-02T03:04:05+00:00"},
                        "spec.taints[0]")
    assert (t.key, t.value, t.effect) == ("k", "v", NO_EXECUTE)
    assert t.time_added == datetime.fromisoformat("2024-01-02T03:04:05+00:00")
    assert t.to_dict() == {"key": "k", "value": "v", "effect": NO_EXECUTE}


@pytest.mark.parametrize(("raw", "path", "fragment"), [
    pytest.param({"key": "k", "effect": "NoWay"}, "spec.taints[3].effect", 'Unsupported value: "NoWay"',
                 id="bad-effect"),
    pytest.param({"key": "k"}, "spec.taints[3].effect", 'Unsupported value: ""', id="missing-effect"),
    pytest.param({"key": ["k"], "effect": NO_SCHEDULE}, "spec.taints[3].key", "expected a string", id="bad-key"),
    pytest.param({"key": "k", "effect": NO_SCHEDULE, "timeAdded": "yesterday"}, "spec.taints[3].timeAdded",
                 "RFC 3339", id="bad-time"),
    pytest.param("k=v:NoSchedule", "spec.taints[3]", "expected an object", id="not-an-object"),
])
def test_taint_parse_errors_name_the_field(raw: Any, path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as ei:
        Taint.from_dict(raw, "spec.taints[3]")
    assert ei.value.path == path
    assert fragment in str(ei.value)


def test_toleration_from_dict_accepts_comparison_operators() -> None:
    for op in ("Lt", "Gt"):
        t = Toleration.from_dict({"key": SLA, "operator": op, "value": "950", "effect": NO_SCHEDULE}, "t")
        assert t.operator == op and t.value == "950"
        assert t.to_dict() == {"key": SLA, "operator": op, "value": "950", "effect": NO_SCHEDULE}


def test_toleration_from_dict_defaults_and_round_trip() -> None:
    t = Toleration.from_dict({"key": "k", "value": "v"}, "t")
    assert t.operator == "Equal"
    assert t.toleration_seconds is None
    raw = {"key": "k", "operator": "Exists", "effect": NO_EXECUTE, "tolerationSeconds": 30}
    t2 = Toleration.from_dict(raw, "t")
    assert t2.toleration_seconds == 30
    assert t2.to_dict() == raw
    assert Toleration.from_dict({"operator": "Exists"}, "t").to_dict() == {"operator": "Exists"}


@pytest.mark.parametrize(("raw", "path", "fragment"), [
    pytest.param({"key": "k", "operator": "In"}, "spec.tolerations[1].operator", 'Unsupported value: "In"',
                 id="bad-operator"),
    pytest.param({"key": "k", "operator": "Exists", "tolerationSeconds": "soon"},
                 "spec.tolerations[1].tolerationSeconds", "expected an integer", id="bad-seconds"),
    pytest.param({"key": "k", "effect": {"x": 1}}, "spec.tolerations[1].effect", "expected a string",
                 id="bad-effect-type"),
])
def test_toleration_parse_errors_name_the_field(raw: Any, path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as ei:
        Toleration.from_dict(raw, "spec.tolerations[1]")
    assert ei.value.path == path
    assert fragment in str(ei.value)


# --- properties ---------------------------------------------------------------------------------------------

TAINT_KEYS = st.sampled_from(["a", "b", "example.com/c"])
TAINT_VALUES = st.sampled_from(["", "x", "y"])
EFFECTS = st.sampled_from([NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE])
taints_st = st.builds(Taint, TAINT_KEYS, TAINT_VALUES, EFFECTS)
tolerations_st = st.builds(Toleration, st.sampled_from(["", "a", "b"]), st.sampled_from(["Equal", "Exists"]),
                           TAINT_VALUES, st.sampled_from(["", NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE]))


@given(taints_st)
def test_wildcard_toleration_tolerates_every_taint(taint: Taint) -> None:
    assert Toleration("", "Exists").tolerates(taint)


@given(tolerations_st, taints_st)
def test_toleration_rules(toleration: Toleration, taint: Taint) -> None:
    want = ((not toleration.effect or toleration.effect == taint.effect)
            and (not toleration.key or toleration.key == taint.key)
            and (toleration.operator == "Exists" or toleration.value == taint.value))
    assert toleration.tolerates(taint) is want


@given(st.lists(tolerations_st, max_size=4), st.lists(taints_st, max_size=4))
def test_find_untolerated_agrees_with_tolerations_tolerate_taint(tolerations: list[Toleration],
                                                                 taints: list[Taint]) -> None:
    untolerated = [t for t in taints if not tolerations_tolerate_taint(tolerations, t)]
    found = find_matching_untolerated_taint(taints, tolerations)
    assert found == (untolerated[0] if untolerated else None)
