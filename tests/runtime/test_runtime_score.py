"""PreScore and Score: upstream framework_test.go TestRunPreScorePlugins and TestRunScorePlugins (weights,
NormalizeScore, out-of-range scores), plus the rule that a PreScore SKIP removes that plugin from Score."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from scheduling_framework.runtime.framework import Framework, ScoreDetail
from scheduling_framework.status import Code, Status
from tests.runtime.runtime_fakes import (
    INJECT_REASON,
    SCORE_FAILURE_REASON,
    InjPlugin,
    build,
    config,
    make_pod,
    node_infos,
    registry_for,
)

POD = make_pod("p")
NODES = node_infos("node1", "node2")

SCORE_WITH_NORMALIZE_1 = "score-with-normalize-plugin-1"
SCORE_WITH_NORMALIZE_2 = "score-with-normalize-plugin-2"
SCORE_PLUGIN_1 = "score-plugin-1"
DEFAULT_WEIGHTS = {SCORE_WITH_NORMALIZE_1: 1, SCORE_WITH_NORMALIZE_2: 2, SCORE_PLUGIN_1: 1}

BUG_PRESCORE_SKIP_ON_EARLY_RETURN = (
    "BUG: Framework.run_pre_score_plugins only records state.skip_score_plugins when every plugin ran; upstream "
    "RunPreScorePlugins stores the SKIP set in a defer, so it is recorded even when a later plugin errs "
    "(framework_test.go TestRunPreScorePlugins)")


class ScoreOnly:
    """upstream TestScorePlugin / TestScoreWithNormalizePlugin: PreScore + Score (+ NormalizeScore).

    Configured through its pluginConfig args like upstream's injectedResult (scoreRes, normalizeRes,
    scoreStatus, normalizeStatus, preScoreStatus).
    """

    def __init__(self, name: str, normalize: bool, args: dict[str, Any] | None) -> None:
        self.name = name
        self.normalize = normalize
        self.args = dict(args or {})
        self.score_calls = 0

    def pre_score(self, state: CycleState, pod: Any, nodes: Any) -> Status:
        return Status(Code(self.args.get("preScoreStatus", 0)), INJECT_REASON)

    def score(self, state: CycleState, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        self.score_calls += 1
        code = Code(self.args.get("scoreStatus", 0))
        if code != Code.SUCCESS:
            return 0, Status(code, SCORE_FAILURE_REASON)
        return int(self.args.get("scoreRes", 0)), None

    def score_extensions(self) -> ScoreOnly | None:
        return self if self.normalize else None

    def normalize_score(self, state: CycleState, pod: Any, scores: list[NodeScore]) -> Status | None:
        code = Code(self.args.get("normalizeStatus", 0))
        if code != Code.SUCCESS:
            return Status(code, SCORE_FAILURE_REASON)
        for ns in scores:
            ns.score = int(self.args.get("normalizeRes", 0))
        return None


def _factory(name: str, normalize: bool) -> Any:
    def factory(args: Any, handle: Any) -> ScoreOnly:
        return ScoreOnly(name, normalize, args)

    return factory


SCORE_FACTORIES = [(SCORE_WITH_NORMALIZE_1, _factory(SCORE_WITH_NORMALIZE_1, True)),
                   (SCORE_WITH_NORMALIZE_2, _factory(SCORE_WITH_NORMALIZE_2, True)),
                   (SCORE_PLUGIN_1, _factory(SCORE_PLUGIN_1, False))]


def _score_framework(names: list[str], args: dict[str, dict[str, Any]], multi_point: list[str] | None = None,
                     weights: dict[str, int] | None = None) -> Framework:
    w = DEFAULT_WEIGHTS if weights is None else weights
    cfg = config({"score": [(n, w[n]) for n in names]},
                 plugin_config=[{"name": n, "args": a} for n, a in args.items()])
    if multi_point:
        cfg["profiles"][0]["plugins"]["multiPoint"]["enabled"] = [{"name": n} for n in multi_point]
    return Framework.from_config(cfg, registry_for({}, SCORE_FACTORIES))


def _plain(scores: list[Any]) -> list[tuple[str, list[tuple[str, int]], int]]:
    return [(s.name, list(s.scores), s.total_score) for s in scores]


def _both(plugin_scores: list[tuple[str, int]]) -> list[tuple[str, list[tuple[str, int]], int]]:
    total = sum(s for _, s in plugin_scores)
    return [("node1", plugin_scores, total), ("node2", plugin_scores, total)]


# upstream TestRunScorePlugins (successful cases): enabled plugins, args, skipped plugins, want
SCORE_CASES = [
    pytest.param([], {}, set(), _both([]), id="no Score plugins"),
    pytest.param([SCORE_PLUGIN_1], {SCORE_PLUGIN_1: {"scoreRes": 1}}, set(), _both([(SCORE_PLUGIN_1, 1)]),
                 id="single Score plugin"),
    pytest.param([SCORE_WITH_NORMALIZE_1], {SCORE_WITH_NORMALIZE_1: {"scoreRes": 10, "normalizeRes": 5}}, set(),
                 _both([(SCORE_WITH_NORMALIZE_1, 5)]), id="single ScoreWithNormalize plugin"),
    pytest.param([SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1, SCORE_WITH_NORMALIZE_2],
                 {SCORE_PLUGIN_1: {"scoreRes": 1}, SCORE_WITH_NORMALIZE_1: {"scoreRes": 3, "normalizeRes": 4},
                  SCORE_WITH_NORMALIZE_2: {"scoreRes": 4, "normalizeRes": 5}}, set(),
                 _both([(SCORE_PLUGIN_1, 1), (SCORE_WITH_NORMALIZE_1, 4), (SCORE_WITH_NORMALIZE_2, 10)]),
                 id="3 Score plugins, 2 NormalizeScore plugins"),
    pytest.param([SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1],
                 {SCORE_PLUGIN_1: {"scoreRes": 1}, SCORE_WITH_NORMALIZE_1: {"scoreStatus": 1}},
                 {SCORE_WITH_NORMALIZE_1}, _both([(SCORE_PLUGIN_1, 1)]), id="one success plugin, one skip plugin"),
    pytest.param([SCORE_PLUGIN_1], {SCORE_PLUGIN_1: {"scoreStatus": 1}}, {SCORE_PLUGIN_1}, _both([]),
                 id="all plugins are skipped in prescore"),
    pytest.param([SCORE_PLUGIN_1], {}, {SCORE_PLUGIN_1, "score-plugin-unknown"}, _both([]),
                 id="skipped prescore plugin number greater than the number of score plugins"),
]


@pytest.mark.parametrize(("names", "args", "skipped", "want"), SCORE_CASES)
def test_run_score_plugins(names: list[str], args: dict[str, dict[str, Any]], skipped: set[str],
                           want: Any) -> None:
    fwk = _score_framework(names, args)
    state = CycleState()
    state.skip_score_plugins = set(skipped)
    scores, st = fwk.run_score_plugins(state, POD, NODES)
    assert st is None
    assert _plain(scores) == want


def test_single_score_plugin_with_multi_point_expansion() -> None:
    """upstream "single Score plugin with MultiPointExpansion": the score point's weight 3 wins."""
    fwk = _score_framework([SCORE_PLUGIN_1], {SCORE_PLUGIN_1: {"scoreRes": 1}}, multi_point=[SCORE_PLUGIN_1],
                           weights={SCORE_PLUGIN_1: 3})
    scores, st = fwk.run_score_plugins(CycleState(), POD, NODES)
    assert st is None
    assert _plain(scores) == _both([(SCORE_PLUGIN_1, 3)])


MAX, MIN = MAX_NODE_SCORE, MIN_NODE_SCORE

# upstream TestRunScorePlugins (error cases): enabled plugins, args, failing plugin, upstream message
SCORE_ERROR_CASES = [
    ([SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1], {SCORE_WITH_NORMALIZE_1: {"scoreStatus": 1}}, SCORE_WITH_NORMALIZE_1,
     f'running Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" failed with: {SCORE_FAILURE_REASON}', "score fails"),
    ([SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1], {SCORE_WITH_NORMALIZE_1: {"normalizeStatus": 1}},
     SCORE_WITH_NORMALIZE_1,
     f'running Normalize on Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" failed with: {SCORE_FAILURE_REASON}',
     "normalize fails"),
    ([SCORE_PLUGIN_1], {SCORE_PLUGIN_1: {"scoreRes": MAX + 1}}, SCORE_PLUGIN_1,
     f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an invalid score {MAX + 1}, '
     f"it should in the range of [{MIN}, {MAX}] after normalizing",
     "Score plugin return score greater than MaxNodeScore"),
    ([SCORE_PLUGIN_1], {SCORE_PLUGIN_1: {"scoreRes": MIN - 1}}, SCORE_PLUGIN_1,
     f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an invalid score {MIN - 1}, '
     f"it should in the range of [{MIN}, {MAX}] after normalizing",
     "Score plugin return score less than MinNodeScore"),
    ([SCORE_WITH_NORMALIZE_1], {SCORE_WITH_NORMALIZE_1: {"normalizeRes": MAX + 1}}, SCORE_WITH_NORMALIZE_1,
     f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" returns an invalid score '
     f"{MAX + 1}, it should in the range of [{MIN}, {MAX}] after normalizing",
     "ScoreWithNormalize plugin return score greater than MaxNodeScore"),
    ([SCORE_WITH_NORMALIZE_1], {SCORE_WITH_NORMALIZE_1: {"normalizeRes": MIN - 1}}, SCORE_WITH_NORMALIZE_1,
     f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" returns an invalid score '
     f"{MIN - 1}, it should in the range of [{MIN}, {MAX}] after normalizing",
     "ScoreWithNormalize plugin return score less than MinNodeScore"),
]


@pytest.mark.parametrize(("names", "args", "plugin"), [pytest.param(*c[:3], id=c[4]) for c in SCORE_ERROR_CASES])
def test_run_score_plugins_errors(names: list[str], args: dict[str, dict[str, Any]], plugin: str) -> None:
    scores, st = _score_framework(names, args).run_score_plugins(CycleState(), POD, NODES)
    assert st is not None and (st.code, st.plugin) == (Code.ERROR, plugin)
    assert scores == []


BUG_SCORE_MESSAGES = (
    "BUG: Framework.run_score_plugins words NormalizeScore failures and out-of-range scores as "
    "'running Score plugins: ...'; upstream RunScorePlugins wraps them as 'running Normalize on Score plugins: ...' "
    "and 'applying score defaultWeights on Score plugins: ...' (pkg/scheduler/framework/runtime/framework.go)")


@pytest.mark.parametrize(("names", "args", "message"), [
    pytest.param(c[0], c[1], c[3], id=c[4],
                 marks=())
    for c in SCORE_ERROR_CASES])
def test_run_score_plugins_error_messages(names: list[str], args: dict[str, dict[str, Any]], message: str) -> None:
    _, st = _score_framework(names, args).run_score_plugins(CycleState(), POD, NODES)
    assert st is not None and st.message() == message


def test_range_is_checked_after_normalizing() -> None:
    fwk = _score_framework([SCORE_WITH_NORMALIZE_1], {SCORE_WITH_NORMALIZE_1: {"scoreRes": 1000, "normalizeRes": 7}})
    scores, st = fwk.run_score_plugins(CycleState(), POD, NODES)
    assert st is None and _plain(scores) == _both([(SCORE_WITH_NORMALIZE_1, 7)])


def test_score_bounds_are_inclusive() -> None:
    for res in (MIN, MAX):
        scores, st = _score_framework([SCORE_PLUGIN_1], {SCORE_PLUGIN_1: {"scoreRes": res}}).run_score_plugins(
            CycleState(), POD, NODES)
        assert st is None and _plain(scores) == _both([(SCORE_PLUGIN_1, res)])


def test_weights_multiply_normalized_scores_per_node() -> None:
    a = InjPlugin("a", score_nodes={"node1": 10, "node2": 20})
    b = InjPlugin("b", score_nodes={"node1": 100, "node2": 0})
    fwk = build({"score": [(a, 3), (b, 2)]})
    scores, st = fwk.run_score_plugins(CycleState(), POD, NODES)
    assert st is None
    assert _plain(scores) == [("node1", [("a", 30), ("b", 200)], 230), ("node2", [("a", 60), ("b", 0)], 60)]


def test_score_detail_records_raw_normalized_and_weight() -> None:
    fwk = _score_framework([SCORE_WITH_NORMALIZE_2], {SCORE_WITH_NORMALIZE_2: {"scoreRes": 40, "normalizeRes": 5}})
    detail = ScoreDetail()
    fwk.run_score_plugins(CycleState(), POD, NODES, detail)
    assert detail.plugins == [SCORE_WITH_NORMALIZE_2]
    assert (detail.raw[SCORE_WITH_NORMALIZE_2], detail.normalized[SCORE_WITH_NORMALIZE_2],
            detail.weights[SCORE_WITH_NORMALIZE_2]) == ([40, 40], [5, 5], 2)


# --- PreScore ------------------------------------------------------------------------------------

# upstream TestRunPreScorePlugins: plugins, want skipped, want code
PRE_SCORE_CASES = [
    pytest.param([InjPlugin("success1"), InjPlugin("success2")], set(), Code.SUCCESS,
                 id="all PreScorePlugins returned success"),
    pytest.param([InjPlugin("success"), InjPlugin("error", pre_score=Code.ERROR)], set(), Code.ERROR,
                 id="one PreScore plugin returned success, but another PreScore plugin returned non-success"),
    pytest.param([InjPlugin("skip", pre_score=Code.SKIP), InjPlugin("error", pre_score=Code.ERROR)], {"skip"},
                 Code.ERROR, id="one PreScore plugin returned skip, but another PreScore plugin returned non-success"),
    pytest.param([InjPlugin("skip1", pre_score=Code.SKIP), InjPlugin("skip2", pre_score=Code.SKIP),
                  InjPlugin("skip3", pre_score=Code.SKIP)], {"skip1", "skip2", "skip3"}, Code.SUCCESS,
                 id="all PreScore plugins returned skip"),
    pytest.param([InjPlugin("skip1", pre_score=Code.SKIP), InjPlugin("success1"),
                  InjPlugin("skip2", pre_score=Code.SKIP), InjPlugin("success2")], {"skip1", "skip2"},
                 Code.SUCCESS, id="some PreScore plugins returned skip"),
]


@pytest.mark.parametrize(("plugins", "want_skipped", "want_code"), PRE_SCORE_CASES)
def test_run_pre_score_plugins(plugins: list[InjPlugin], want_skipped: set[str], want_code: Code) -> None:
    fwk = build({"preScore": plugins})
    state = CycleState()
    st = fwk.run_pre_score_plugins(state, POD, NODES)
    assert (Code.SUCCESS if st is None else st.code) == want_code
    assert state.skip_score_plugins == want_skipped


def test_pre_score_error_is_wrapped_and_names_plugin() -> None:
    fwk = build({"preScore": [InjPlugin("ok"), InjPlugin("bad", pre_score=Code.UNSCHEDULABLE), InjPlugin("after")]})
    st = fwk.run_pre_score_plugins(CycleState(), POD, NODES)
    assert st is not None
    assert (st.code, st.plugin, st.message()) == (Code.ERROR, "bad", f'running PreScore plugin "bad": {INJECT_REASON}')


def test_pre_score_skip_removes_that_plugin_from_score() -> None:
    skipper = InjPlugin("skipper", pre_score=Code.SKIP, score=Code.ERROR)
    scorer = InjPlugin("scorer", score_res=7)
    fwk = build({"preScore": [skipper, scorer], "score": [skipper, scorer]})
    state = CycleState()
    assert fwk.run_pre_score_plugins(state, POD, NODES) is None
    scores, st = fwk.run_score_plugins(state, POD, NODES)
    assert st is None
    assert _plain(scores) == _both([("scorer", 7)])
    assert "Score" not in skipper.points_called()


def test_pre_score_skip_lasts_one_cycle() -> None:
    skipper = InjPlugin("skipper", pre_score=Code.SKIP, score_res=4)
    fwk = build({"preScore": [skipper], "score": [skipper]})
    fwk.run_pre_score_plugins(CycleState(), POD, NODES)
    scores, _ = fwk.run_score_plugins(CycleState(), POD, NODES)
    assert _plain(scores) == _both([("skipper", 4)])
