"""Issue 14 item 7: plugin faults that used to escape run() become Error statuses naming the plugin, and
whatever the cycle had reserved is rolled back (Unreserve runs, the assumed pod is forgotten, no pod is left
waiting at Permit)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import PluginError
from scheduling_framework.interfaces import NodeScore, PostFilterResult
from scheduling_framework.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, PodResult, Scheduler
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import Journal, ReservePlugin, make_node, make_pod, scheduler


def _assert_rolled_back(s: Scheduler, journal: Journal | None = None, attempts: int | None = None) -> None:
    for p in s.cache.pods():
        assert not s.cache.is_assumed(p.uid), f"{p.key} left assumed"
    assert len(s.profile().waiting_pods) == 0
    if journal is not None and attempts is not None:
        assert journal.of("Reserve") == ["r"] * attempts
        assert journal.of("Unreserve") == ["r"] * attempts


def _run(s: Scheduler, pods: list[Any], nodes: tuple[str, ...] = ("n1", "n2")) -> dict[str, PodResult]:
    s.load([make_node(n, cpu="4") for n in nodes], pods)
    return {r.pod: r for r in s.run()}


# --- Permit timeouts --------------------------------------------------------------------------------------


class TimedPermit:
    name = "TimedPermit"

    def __init__(self, timeout: Any) -> None:
        self.timeout = timeout

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status, Any]:
        return Status(Code.WAIT), self.timeout


@pytest.mark.parametrize("timeout", [math.nan, "10s", [1], True], ids=["nan", "str", "list", "bool"])
def test_permit_wait_with_an_invalid_timeout_is_an_error_naming_the_plugin(timeout: Any) -> None:
    journal = Journal()
    s = scheduler({"permit": [TimedPermit(timeout)], "reserve": [ReservePlugin("r", journal)]})
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "TimedPermit")
    assert 'plugin \'TimedPermit\': Permit returned' in r.message and "timeout seconds" in r.message
    _assert_rolled_back(s, journal, r.attempts)


@pytest.mark.parametrize("timeout, shown", [(10**400, "15m0s"), (math.inf, "15m0s"), (1e300, "15m0s"),
                                            (-5, "0ms"), (-math.inf, "0ms")],
                         ids=["huge-int", "inf", "huge-float", "negative", "minus-inf"])
def test_permit_timeouts_beyond_the_range_are_capped_as_upstream(timeout: Any, shown: str) -> None:
    journal = Journal()
    s = scheduler({"permit": [TimedPermit(timeout)], "reserve": [ReservePlugin("r", journal)]})
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin) == (UNSCHEDULABLE, "TimedPermit")
    assert r.message == ("0/1 nodes are available: 1 rejected due to timeout after waiting "
                         f"{shown} at plugin TimedPermit.")
    _assert_rolled_back(s, journal, r.attempts)


# --- NormalizeScore ---------------------------------------------------------------------------------------


class Normalizer:
    """A Score plugin whose NormalizeScore damages the list in the way ``how`` says."""

    name = "Normalizer"

    def __init__(self, how: str) -> None:
        self.how = how

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, None]:
        return 10, None

    def score_extensions(self) -> Normalizer:
        return self

    def normalize_score(self, state: CycleState, pod: Any, scores: list[NodeScore]) -> None:
        if self.how == "shrink":
            del scores[0]
        elif self.how == "grow":
            scores.append(NodeScore("ghost", 1))
        elif self.how == "clear":
            scores.clear()
        elif self.how == "junk-entry":
            scores[0] = 7  # type: ignore[call-overload]
        elif self.how == "float-score":
            scores[0].score = 1.5  # type: ignore[assignment]
        elif self.how == "nan-score":
            scores[0].score = math.nan  # type: ignore[assignment]
        elif self.how == "out-of-range":
            scores[0].score = 101


@pytest.mark.parametrize("how, words", [
    ("shrink", "changed the score list to 1 entries for 2 nodes"),
    ("grow", "changed the score list to 3 entries for 2 nodes"),
    ("clear", "changed the score list to 0 entries for 2 nodes"),
    ("junk-entry", "NormalizeScore returned int (7), expected NodeScore entries"),
    ("float-score", "expected integer scores"),
    ("nan-score", "expected integer scores"),
    ("out-of-range", 'plugin "Normalizer" returns an invalid score 101, it should in the range of [0, 100] after '
                     "normalizing"),
], ids=["shrink", "grow", "clear", "junk-entry", "float-score", "nan-score", "out-of-range"])
def test_normalize_score_damaging_its_list_is_an_error_naming_the_plugin(how: str, words: str) -> None:
    journal = Journal()
    s = scheduler({"score": [Normalizer(how)], "reserve": [ReservePlugin("r", journal)]})
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "Normalizer"), r.message
    assert words in r.message and "Normalizer" in r.message
    assert journal.of("Reserve") == []  # the cycle failed before Reserve
    _assert_rolled_back(s)


# --- Score ------------------------------------------------------------------------------------------------


class BadScore:
    name = "BadScore"

    def __init__(self, value: Any) -> None:
        self.value = value

    def score(self, state: CycleState, pod: Any, node_info: Any) -> Any:
        return self.value, None


@pytest.mark.parametrize("value, words", [
    (math.nan, "Score returned tuple"), (2.5, "Score returned tuple"), ("7", "Score returned tuple"),
    (True, "Score returned tuple"), (None, "Score returned tuple"),
    (1000, 'plugin "BadScore" returns an invalid score 1000, it should in the range of [0, 100]'),
    (-1, 'plugin "BadScore" returns an invalid score -1'),
], ids=["nan", "float", "str", "bool", "none", "above-max", "negative"])
def test_score_returning_an_invalid_score_is_an_error_naming_the_plugin(value: Any, words: str) -> None:
    s = scheduler({"score": [BadScore(value)]})
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "BadScore")
    assert words in r.message
    _assert_rolled_back(s)


class SignedBadScore(BadScore):
    """A scorer that signs every pod: its kept raw scores must still be checked (issue 30's check at keep time)."""

    name = "SignedBadScore"

    def score(self, state: CycleState, pod: Any, node_info: Any) -> Any:
        return self.value, None

    def score_signature(self, state: CycleState, pod: Any) -> str:
        return "any pod"


@pytest.mark.parametrize("value", [1000, -1, 101], ids=["above-max", "negative", "just-above"])
def test_a_signing_scorer_out_of_range_is_reported_as_the_plain_path_does(value: int) -> None:
    """Raw scores of a scorer without NormalizeScore are range-checked when they are kept (runtime/columns.py);
    an out-of-range one is kept nowhere, so the plain pass reports it with the same words, cycle after cycle."""
    s = scheduler({"score": [SignedBadScore(value)]})
    results = _run(s, [make_pod("a"), make_pod("b")])
    for r in results.values():
        assert (r.outcome, r.plugin) == (ERROR, "SignedBadScore")
        assert f'plugin "SignedBadScore" returns an invalid score {value}, it should in the range of [0, 100]' \
            in r.message
    fwk = s.profile()
    assert "SignedBadScore" in fwk._score_signers
    assert len(fwk.node_columns) == 0
    _assert_rolled_back(s)


# --- QueueSort --------------------------------------------------------------------------------------------


class BadSort:
    name = "BadSort"

    def less(self, a: Any, b: Any) -> bool:
        raise RuntimeError("sort boom")


class NotABool:
    def __bool__(self) -> bool:
        raise ValueError("ambiguous truth value")


class WeirdSort:
    name = "WeirdSort"

    def less(self, a: Any, b: Any) -> Any:
        return NotABool()


@pytest.mark.parametrize("plugin", [BadSort(), WeirdSort()], ids=["raises", "unusable-bool"])
def test_queue_sort_failure_is_an_error_for_the_pods_it_compared(plugin: Any) -> None:
    journal = Journal()
    s = scheduler({"queueSort": [plugin], "reserve": [ReservePlugin("r", journal)]})
    results = _run(s, [make_pod("a"), make_pod("b")])
    for r in results.values():
        assert (r.outcome, r.plugin) == (ERROR, plugin.name)
        assert f"plugin '{plugin.name}': QueueSort less() raised" in r.message
        assert r.message.startswith("ordering the scheduling queue: ")
    assert journal.of("Reserve") == []
    _assert_rolled_back(s)


def test_a_lone_pod_is_scheduled_with_a_raising_queue_sort() -> None:
    """less() is never called for one pod (as upstream): nothing to fail."""
    s = scheduler({"queueSort": [BadSort()]})
    assert _run(s, [make_pod("a")])["default/a"].outcome == SCHEDULED


# --- extensions returning junk ----------------------------------------------------------------------------


class JunkExtensions:
    name = "JunkExt"

    def __init__(self, point: str, ext: Any) -> None:
        self.point = point
        self.ext = ext

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> Any:
        return self.ext if self.point == "preFilter" else None

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, None]:
        return 0, None

    def score_extensions(self) -> Any:
        return self.ext if self.point == "score" else None


class HalfExtensions:
    def add_pod(self, *args: Any) -> None:
        return None


@pytest.mark.parametrize("point, ext, words", [
    ("preFilter", 42, "pre_filter_extensions() returned int (42), expected None or an object with add_pod() and "
                      "remove_pod()"),
    ("preFilter", HalfExtensions(), "pre_filter_extensions() returned HalfExtensions"),
    ("score", "normalize", "score_extensions() returned str ('normalize'), expected None or an object with "
                           "normalize_score()"),
], ids=["prefilter-int", "prefilter-half", "score-str"])
def test_extensions_of_the_wrong_shape_fail_construction_naming_the_plugin(point: str, ext: Any, words: str) -> None:
    with pytest.raises(PluginError) as ei:
        scheduler({point: [JunkExtensions(point, ext)]})
    assert "JunkExt" in str(ei.value) and words in str(ei.value)


# --- PostFilter and Status shapes -------------------------------------------------------------------------


class BadPostFilter:
    name = "BadPostFilter"

    def __init__(self, result: Any) -> None:
        self.result = result

    def post_filter(self, state: CycleState, pod: Any, m: Any) -> tuple[Any, Status]:
        return self.result, Status(Code.SUCCESS)


class RejectAll:
    name = "RejectAll"

    def __init__(self, *reasons: Any) -> None:
        self.reasons = reasons

    def filter(self, state: CycleState, pod: Any, ni: Any) -> Status:
        return Status(Code.UNSCHEDULABLE, *self.reasons)


@pytest.mark.parametrize("result", [PostFilterResult(5), PostFilterResult("n1", victims=[1]),  # type: ignore[arg-type]
                                    PostFilterResult("n1", victims="abc")],  # type: ignore[arg-type]
                         ids=["int-node", "int-victim", "str-victims"])
def test_post_filter_result_of_the_wrong_shape_names_the_plugin(result: Any) -> None:
    s = scheduler({"filter": [RejectAll("no")], "postFilter": [BadPostFilter(result)]})
    r = _run(s, [make_pod("a")])["default/a"]
    assert r.outcome == UNSCHEDULABLE and r.nominated_node is None
    assert "BadPostFilter" in r.message
    _assert_rolled_back(s)


def test_filter_reasons_that_are_not_strings_still_give_a_message() -> None:
    s = scheduler({"filter": [RejectAll(42)]})
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.message) == (UNSCHEDULABLE, "0/2 nodes are available: 2 42.")


# --- the last line of defence -----------------------------------------------------------------------------


def test_an_exception_escaping_the_runners_rolls_back_and_is_an_error() -> None:
    """Whatever escapes an extension point runner (a bug of ours or an exotic plugin) after Reserve: Unreserve
    runs, the assumed pod is forgotten, the pod reads Error with the exception."""
    journal = Journal()
    s = scheduler({"reserve": [ReservePlugin("r", journal)]})
    fwk = s.profile()

    def broken(*args: Any) -> Any:
        raise PluginError("Exotic", "permit runner broke")

    fwk.run_permit_plugins = broken  # type: ignore[method-assign]
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.plugin) == (ERROR, "Exotic")
    assert r.message == "scheduling cycle of pod default/a failed: PluginError: plugin 'Exotic': permit runner broke"
    _assert_rolled_back(s, journal, r.attempts)
    assert s.cache.get_pod("a") is None


@pytest.mark.parametrize("reason", [["a", "list"], {"k": 1}, ValueError("boom")], ids=["list", "dict", "exception"])
def test_unhashable_or_odd_reasons_give_a_message_and_json(reason: Any) -> None:
    """Reasons are counted per node for the FitError message and go into the JSON explanation."""
    import json

    s = scheduler({"filter": [RejectAll(reason)]}, explain=True)
    r = _run(s, [make_pod("a")])["default/a"]
    assert (r.outcome, r.message) == (UNSCHEDULABLE, f"0/2 nodes are available: 2 {reason}.")
    json.dumps(r.to_dict(explain=True))
