"""Building a Framework from a config and a registry: upstream framework_test.go TestInitFrameworkWithScorePlugins
and TestNewFrameworkErrors, plus the plugin contract errors (missing ``name``, factory with the wrong signature,
a plugin enabled at a point it does not implement, no queue sort, no bind plugin)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_framework.errors import ConfigError, PluginError, SchedulingFrameworkError
from scheduling_framework.runtime.framework import Framework
from scheduling_framework.scheduler import Scheduler
from tests.runtime.runtime_fakes import InjPlugin, base_registry, build, config, registry_for


class ScoreOnly:
    name = "score-plugin-1"

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args
        self.handle = handle

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, None]:
        return 1, None


class NotImplementingScore:
    name = "plugin-not-implementing-score"

    def __init__(self, args: Any, handle: Any) -> None:
        pass


def _registry() -> Any:
    reg = base_registry()
    reg.register("score-plugin-1", ScoreOnly)
    reg.register("plugin-not-implementing-score", NotImplementingScore)
    return reg


@pytest.mark.parametrize(("score", "init_err"), [
    pytest.param(["notExist"], True, id="enabled Score plugin doesn't exist in registry"),
    pytest.param(["plugin-not-implementing-score"], True,
                 id="enabled Score plugin doesn't extend the ScorePlugin interface"),
    pytest.param(None, False, id="Score plugins are nil"),
    pytest.param([], False, id="enabled Score plugin list is empty"),
    pytest.param(["score-plugin-1"], False, id="enabled plugin only implements ScorePlugin interface"),
])
def test_init_framework_with_score_plugins(score: list[str] | None, init_err: bool) -> None:
    cfg = config({} if score is None else {"score": score})
    if init_err:
        with pytest.raises(ConfigError) as ei:
            Framework.from_config(cfg, _registry())
        assert score is not None and score[0] in str(ei.value)
    else:
        Framework.from_config(cfg, _registry())


def test_unknown_plugin_message() -> None:
    with pytest.raises(ConfigError, match='ScorePlugin "notExist" does not exist'):
        Framework.from_config(config({"score": ["notExist"]}), _registry())


def test_plugin_enabled_at_a_point_it_does_not_implement() -> None:
    with pytest.raises(ConfigError, match='plugin "plugin-not-implementing-score" does not extend ScorePlugin plugin'):
        Framework.from_config(config({"score": ["plugin-not-implementing-score"]}), _registry())


def test_declared_point_missing_on_the_instance_is_caught_by_the_framework() -> None:
    """A factory may declare its points; the framework still checks the plugin it built."""

    def factory(args: Any, handle: Any) -> Any:
        return NotImplementingScore(args, handle)

    factory.extension_points = frozenset({"filter"})  # type: ignore[attr-defined]
    reg = base_registry()
    reg.register("plugin-not-implementing-score", factory)
    with pytest.raises(ConfigError, match='plugin "plugin-not-implementing-score" does not extend FilterPlugin plugin'):
        Framework.from_config(config({"filter": ["plugin-not-implementing-score"]}), reg)


def test_duplicate_plugin_name_at_one_point() -> None:
    """upstream TestNewFrameworkErrors "duplicate plugin name"."""
    pl = InjPlugin("duplicate-plugin")
    with pytest.raises(ConfigError, match="already registered"):
        build({"preFilter": [pl, pl]})


def test_duplicate_plugin_config() -> None:
    """upstream TestNewFrameworkErrors "duplicate plugin config"; config validation reports it first, with
    upstream's validation wording."""
    pl = InjPlugin("duplicate-plugin")
    with pytest.raises(ConfigError, match=r'pluginConfig\[1\]: Duplicate value: "duplicate-plugin"'):
        build({"preFilter": [pl]}, plugin_config=[{"name": "duplicate-plugin"}, {"name": "duplicate-plugin"}])


def test_no_queue_sort_plugin() -> None:
    with pytest.raises(ConfigError, match="queue sort"):
        Framework.from_config(config({}, queue_sort=False), base_registry())


def test_two_queue_sort_plugins() -> None:
    with pytest.raises(ConfigError, match="queue sort"):
        build({"queueSort": [InjPlugin("qs1"), InjPlugin("qs2")]})


def test_no_bind_plugin() -> None:
    with pytest.raises(ConfigError, match="bind plugin"):
        Framework.from_config(config({}, bind=False), base_registry())


def test_scheduler_construction_raises_the_same_errors() -> None:
    with pytest.raises(ConfigError, match="bind plugin"):
        Scheduler(config({}, bind=False), base_registry())


class NoName:
    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class EmptyName(NoName):
    name = ""


class NonStrName(NoName):
    name = 42


@pytest.mark.parametrize("cls", [NoName, EmptyName, NonStrName], ids=["missing", "empty", "not a str"])
def test_plugin_without_a_name(cls: type) -> None:
    reg = base_registry()
    reg.register("Nameless", cls)
    with pytest.raises(PluginError) as ei:
        Framework.from_config(config({"filter": ["Nameless"]}), reg)
    assert ei.value.plugin == "Nameless"
    assert "Nameless" in str(ei.value) and "name" in str(ei.value)


class NoArgsInit:
    name = "NoArgsInit"

    def __init__(self) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


def test_plugin_class_with_wrong_init_signature() -> None:
    reg = base_registry()
    reg.register("NoArgsInit", NoArgsInit)  # type: ignore[arg-type]
    with pytest.raises(PluginError) as ei:
        Framework.from_config(config({"filter": ["NoArgsInit"]}), reg)
    assert ei.value.plugin == "NoArgsInit"
    assert "factory(args, handle)" in str(ei.value)


def test_factory_function_with_wrong_signature() -> None:
    def factory(only_args: Any) -> Any:
        return InjPlugin("WrongFactory")

    reg = base_registry()
    reg.register("WrongFactory", factory)  # type: ignore[arg-type]
    with pytest.raises(PluginError) as ei:
        Framework.from_config(config({"filter": ["WrongFactory"]}), reg)
    assert ei.value.plugin == "WrongFactory"


def test_factory_that_raises() -> None:
    class Exploding:
        name = "Exploding"

        def __init__(self, args: Any, handle: Any) -> None:
            raise ValueError("bad args")

        def filter(self, state: Any, pod: Any, node_info: Any) -> None:
            return None

    reg = base_registry()
    reg.register("Exploding", Exploding)
    with pytest.raises(PluginError) as ei:
        Framework.from_config(config({"filter": ["Exploding"]}), reg)
    assert ei.value.plugin == "Exploding"
    assert "ValueError" in str(ei.value) and "bad args" in str(ei.value)


def test_construction_errors_share_the_root_exception() -> None:
    assert issubclass(PluginError, SchedulingFrameworkError)
    assert issubclass(ConfigError, SchedulingFrameworkError)


def test_factory_receives_plugin_args_and_the_framework_as_handle() -> None:
    reg = _registry()
    fwk = Framework.from_config(config({"score": ["score-plugin-1"]},
                                       plugin_config=[{"name": "score-plugin-1", "args": {"x": 1}}]), reg)
    pl = fwk.plugins["score-plugin-1"]
    assert pl.args == {"x": 1}
    assert pl.handle is fwk


def test_plugin_args_are_none_without_plugin_config() -> None:
    fwk = Framework.from_config(config({"score": ["score-plugin-1"]}), _registry())
    assert fwk.plugins["score-plugin-1"].args is None


def test_one_instance_per_plugin_across_points() -> None:
    made: list[InjPlugin] = []

    def factory(args: Any, handle: Any) -> InjPlugin:
        made.append(InjPlugin("Multi"))
        return made[-1]

    reg = registry_for({}, [("Multi", factory)])
    fwk = Framework.from_config(config({"filter": ["Multi"], "reserve": ["Multi"], "score": ["Multi"]}), reg)
    assert fwk.plugins_at("filter")[0] is fwk.plugins_at("reserve")[0] is fwk.plugins_at("score")[0]


def test_list_plugins_reports_points_in_order_with_weights() -> None:
    a, b = InjPlugin("a"), InjPlugin("b")
    fwk = build({"filter": [b, a], "score": [(a, 3), b]})
    listed = fwk.list_plugins()
    assert listed["filter"] == [{"name": "b"}, {"name": "a"}]
    assert listed["score"] == [{"name": "a", "weight": 3}, {"name": "b", "weight": 1}]
    assert listed["queueSort"] == [{"name": "PrioritySort"}]
    assert listed["bind"] == [{"name": "DefaultBinder"}]
