"""Profile expansion: upstream framework_test.go TestNewFrameworkMultiPointExpansion,
TestInitFrameworkWithScorePlugins, TestNewFrameworkErrors, on fakes described by their points."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.config import (
    INTREE_POINTS,
    POINTS,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    expand_profile,
    load_config,
)
from scheduling_framework.errors import ConfigError

ALL = frozenset(
    {
        "queueSort",
        "preFilter",
        "filter",
        "postFilter",
        "preScore",
        "score",
        "reserve",
        "permit",
        "preBind",
        "bind",
        "postBind",
    }
)
REGISTRY: dict[str, frozenset[str]] = {
    "score-with-normalize-plugin-1": frozenset({"score"}),
    "score-with-normalize-plugin-2": frozenset({"score"}),
    "score-plugin-1": frozenset({"preScore", "score"}),
    "score-plugin-2": frozenset({"preScore", "score"}),
    "plugin-not-implementing-score": frozenset(),
    "duplicate-plugin": frozenset({"preFilter"}),
    "test-plugin": ALL,
    "no-op-queue-sort-plugin": frozenset({"queueSort"}),
    "bind-plugin": frozenset({"bind"}),
    "test-close-error-plugin": frozenset(),
    "preEnqueue-plugin": frozenset({"preEnqueue"}),
}
TEST = "test-plugin"
SCORE1, SCORE2 = "score-plugin-1", "score-plugin-2"
NORM1 = "score-with-normalize-plugin-1"


def points_of(name: str) -> frozenset[str] | None:
    return REGISTRY.get(name)


def refs(*items: Any) -> tuple[PluginRef, ...]:
    return tuple(PluginRef(*i) if isinstance(i, tuple) else PluginRef(i) for i in items)


def plugins(**sets: tuple[Any, Any]) -> Plugins:
    """Point key -> (enabled, disabled)."""
    return Plugins().replace(**{k: PluginSet(refs(*e), refs(*d)) for k, (e, d) in sets.items()})


def expanded(p: Plugins, config: tuple[PluginConfig, ...] = ()) -> dict[str, list[Any]]:
    eff = expand_profile(Profile("default-scheduler", p, config), points_of)
    assert tuple(eff.points) == POINTS
    return {
        point: [(x.name, x.weight) if point == "score" else x.name for x in plugs]
        for point, plugs in eff.points.items()
        if plugs
    }


def everywhere(score: list[Any], pre_score: list[str] | None = None) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {point: [TEST] for point in POINTS if point in ALL}
    out["score"] = score
    out["preScore"] = pre_score if pre_score is not None else [TEST]
    return {k: v for k, v in out.items() if v}


MULTI_POINT_EXPANSION: list[Any] = [
    pytest.param(plugins(multiPoint=([(TEST, 5)], [])), everywhere([(TEST, 5)]), id="plugin expansion"),
    pytest.param(
        plugins(multiPoint=([TEST], []), preScore=([], [TEST]), score=([], [TEST])),
        everywhere([], []),
        id="disable MultiPoint plugin at some extension points",
    ),
    pytest.param(
        plugins(multiPoint=([TEST, SCORE1], [])),
        everywhere([(TEST, 1), (SCORE1, 1)], [TEST, SCORE1]),
        id="Multiple MultiPoint plugins",
    ),
    pytest.param(
        plugins(multiPoint=([TEST, SCORE1], []), preScore=([], ["*"])),
        everywhere([(TEST, 1), (SCORE1, 1)], []),
        id="disable MultiPoint extension",
    ),
    pytest.param(
        plugins(multiPoint=([NORM1, TEST, SCORE1], []), score=([SCORE1, TEST], [])),
        everywhere([(SCORE1, 1), (TEST, 1), (NORM1, 1)], [TEST, SCORE1]),
        id="Reorder MultiPoint plugins (specified extension takes precedence)",
    ),
    pytest.param(
        plugins(multiPoint=([TEST, SCORE1], []), score=([NORM1, SCORE1, TEST], [])),
        everywhere([(SCORE1, 1), (TEST, 1), (NORM1, 1)], [TEST, SCORE1]),
        id="Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
    ),
    pytest.param(
        plugins(multiPoint=([TEST, SCORE1], []), score=([(SCORE1, 5), (TEST, 3)], [])),
        everywhere([(SCORE1, 5), (TEST, 3)], [TEST, SCORE1]),
        id="Override MultiPoint plugins weights",
    ),
    pytest.param(
        plugins(multiPoint=(["no-op-queue-sort-plugin", "bind-plugin", SCORE1], ["*"])),
        {
            "queueSort": ["no-op-queue-sort-plugin"],
            "preScore": [SCORE1],
            "score": [(SCORE1, 1)],
            "bind": ["bind-plugin"],
        },
        id="disable and enable MultiPoint plugins with '*'",
    ),
    pytest.param(
        plugins(multiPoint=(["bind-plugin", "no-op-queue-sort-plugin", SCORE1], [SCORE1])),
        {
            "queueSort": ["no-op-queue-sort-plugin"],
            "preScore": [SCORE1],
            "score": [(SCORE1, 1)],
            "bind": ["bind-plugin"],
        },
        id="disable and enable MultiPoint plugin by name",
    ),
    pytest.param(
        plugins(multiPoint=([TEST, SCORE1], []), score=([(SCORE1, 5), (SCORE2, 5), (TEST, 3)], [])),
        everywhere([(SCORE1, 5), (TEST, 3), (SCORE2, 5)], [TEST, SCORE1]),
        id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
    ),
]


@pytest.mark.parametrize(("given", "want"), MULTI_POINT_EXPANSION)
def test_new_framework_multi_point_expansion(given: Plugins, want: dict[str, list[Any]]) -> None:
    assert expanded(given) == want


def test_multi_point_already_registered() -> None:
    # "Expect 'already registered' error"
    with pytest.raises(ConfigError) as exc:
        expanded(plugins(multiPoint=([TEST, TEST], [])))
    assert str(exc.value) == (
        "creating profile for scheduler name default-scheduler: "
        'plugin "test-plugin" already registered as "PreFilterPlugin"'
    )


def with_sort_and_bind(**sets: tuple[Any, Any]) -> Plugins:
    return plugins(queueSort=(["no-op-queue-sort-plugin"], []), bind=(["bind-plugin"], []), **sets)


def score_default_weights(*names: str) -> Plugins:
    weights = {NORM1: 1, "score-with-normalize-plugin-2": 2, SCORE1: 1}
    return with_sort_and_bind(score=([(n, weights.get(n, 0)) for n in names], []))


@pytest.mark.parametrize(
    ("given", "error"),
    [
        pytest.param(
            score_default_weights("notExist"),
            'ScorePlugin "notExist" does not exist',
            id="enabled Score plugin doesn't exist in registry",
        ),
        pytest.param(
            score_default_weights("plugin-not-implementing-score"),
            'plugin "plugin-not-implementing-score" does not extend ScorePlugin plugin',
            id="enabled Score plugin doesn't extend the ScorePlugin interface",
        ),
        pytest.param(with_sort_and_bind(), None, id="Score plugins are nil"),
        pytest.param(score_default_weights(), None, id="enabled Score plugin list is empty"),
        pytest.param(score_default_weights(SCORE1), None, id="enabled plugin only implements ScorePlugin interface"),
        pytest.param(
            score_default_weights(NORM1), None, id="enabled plugin implements ScoreWithNormalizePlugin interface"
        ),
    ],
)
def test_init_framework_with_score_plugins(given: Plugins, error: str | None) -> None:
    if error is None:
        expanded(given)
        return
    with pytest.raises(ConfigError) as exc:
        expanded(given)
    assert error in str(exc.value)


@pytest.mark.parametrize(
    ("given", "config", "error"),
    [
        pytest.param(
            plugins(preFilter=([("duplicate-plugin", 1), ("duplicate-plugin", 1)], [])),
            (PluginConfig("duplicate-plugin"),),
            "already registered",
            id="duplicate plugin name",
        ),
        pytest.param(
            plugins(preFilter=([("duplicate-plugin", 1)], [])),
            (PluginConfig("duplicate-plugin"), PluginConfig("duplicate-plugin")),
            "repeated config for plugin",
            id="duplicate plugin config",
        ),
    ],
)
def test_new_framework_errors(given: Plugins, config: tuple[PluginConfig, ...], error: str) -> None:
    with pytest.raises(ConfigError) as exc:
        expanded(given, config)
    assert error in str(exc.value)


@pytest.mark.skip(reason="more than one PlacementGeneratePlugin: workload (pod group) scheduling is not implemented")
def test_new_framework_errors_placement() -> None:
    pass


def test_pre_enqueue_plugins() -> None:
    # TestPreEnqueuePlugins
    assert "preEnqueue" not in expanded(with_sort_and_bind())
    assert expanded(with_sort_and_bind(preEnqueue=(["preEnqueue-plugin"], [])))["preEnqueue"] == ["preEnqueue-plugin"]


@pytest.mark.parametrize(
    ("given", "error"),
    [
        pytest.param(
            plugins(bind=(["bind-plugin"], [])),
            'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
            id="no queue sort",
        ),
        pytest.param(
            plugins(multiPoint=([TEST], []), queueSort=(["no-op-queue-sort-plugin"], [])),
            'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 2',
            id="two queue sorts",
        ),
        pytest.param(
            plugins(queueSort=(["no-op-queue-sort-plugin"], [])),
            'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
            id="no binder",
        ),
        pytest.param(
            with_sort_and_bind(multiPoint=(["Foo"], [])),
            'PreFilterPlugin "Foo" does not exist',
            id="unknown multiPoint plugin",
        ),
        pytest.param(
            with_sort_and_bind(filter=(["no-op-queue-sort-plugin"], [])),
            'plugin "no-op-queue-sort-plugin" does not extend FilterPlugin plugin',
            id="plugin at a point it does not implement",
        ),
        pytest.param(
            with_sort_and_bind(score=([(SCORE1, 2**62), (NORM1, 2**62)], [])),
            "total score of Score plugins could overflow",
            id="score weights overflow",
        ),
    ],
)
def test_construction_errors(given: Plugins, error: str) -> None:
    with pytest.raises(ConfigError) as exc:
        expanded(given)
    assert str(exc.value) == f"creating profile for scheduler name default-scheduler: {error}"


def test_loaded_profile_overrides_default_weight_and_adds_plugin() -> None:
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 7}, {"name": SCORE1}]},
                        "score": {"enabled": [{"name": "NodeAffinity", "weight": 9}]},
                        "filter": {"disabled": [{"name": "NodeName"}]},
                    }
                }
            ],
        }
    )
    eff = expand_profile(cfg.profiles[0], lambda n: REGISTRY.get(n, INTREE_POINTS.get(n)))
    score = {p.name: p.weight for p in eff.points["score"]}
    assert eff.names("score")[0] == "NodeAffinity"  # a point's own entry comes first
    assert score["NodeAffinity"] == 9 and score["ImageLocality"] == 7 and score[SCORE1] == 1
    assert eff.names("score")[-1] == SCORE1  # appended multiPoint plugin after the defaults
    assert "NodeName" not in eff.names("filter")
    assert eff.plugin_args["NodeResourcesFit"] is cfg.profiles[0].args_for("NodeResourcesFit")
