"""Issue 36 item 14: a configuration naming a plugin that is not installed.

Upstream's words come first (``creating profile for scheduler name S: PreFilterPlugin "X" does not exist``);
then, in parentheses, the configuration file and the field path naming the plugin, and the installed plugins
whose names are closest.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.config import KubeSchedulerConfiguration, expand_profile, load_config
from scheduling_framework.config.intree import intree_points_of
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.simulation import Simulator

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
PREFIX = "creating profile for scheduler name "


class TeamNodes:
    """A third-party Filter plugin, installed under the name the configuration misspells."""

    name = "TeamNodes"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> None:
        return None


def registry() -> Registry:
    reg = Registry()
    reg.merge(default_registry())
    reg.register("TeamNodes", TeamNodes)
    return reg


def multi_point_doc(name: str) -> dict[str, Any]:
    enabled = [{"name": n} for n in ("NodeAffinity", "TaintToleration", "NodeResourcesFit", name)]
    profile = {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": enabled}}}
    return {**API, "profiles": [profile]}


def write(tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "sched.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_the_issue_teamnode_for_teamnodes_names_file_path_and_the_installed_plugin(tmp_path: Path) -> None:
    path = write(tmp_path, multi_point_doc("TeamNode"))
    with pytest.raises(ConfigError) as exc:
        Scheduler(path, registry())
    assert str(exc.value) == (f'{PREFIX}default-scheduler: PreFilterPlugin "TeamNode" does not exist '
                              f'({path}, profiles[0].plugins.multiPoint.enabled[3]; closest installed plugins: '
                              '"TeamNodes")')


def test_the_simulator_says_the_same(tmp_path: Path) -> None:
    path = write(tmp_path, multi_point_doc("TeamNode"))
    with pytest.raises(ConfigError, match=r'does not exist \(.*sched\.yaml, profiles\[0\]\.plugins\.multiPoint\.'
                                          r'enabled\[3\]; closest installed plugins: "TeamNodes"\)$'):
        Simulator(path, registry())


@pytest.mark.parametrize(("name", "hint"), [
    ("nodeaffinity", 'closest installed plugins: "NodeAffinity", "InterPodAffinity"'),
    ("TaintTolerations", 'closest installed plugins: "TaintToleration"'),
    ("Zzzz", "no installed plugin has a close name"),
], ids=["case aside", "one letter too many", "nothing close"])
def test_closest_installed_names(name: str, hint: str) -> None:
    with pytest.raises(ConfigError) as exc:
        Scheduler(multi_point_doc(name))
    assert str(exc.value) == (f'{PREFIX}default-scheduler: PreFilterPlugin "{name}" does not exist '
                              f"(profiles[0].plugins.multiPoint.enabled[3]; {hint})")


def test_a_point_list_of_a_second_profile() -> None:
    doc = {**API, "profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "team", "plugins": {"filter": {"enabled": [{"name": "NodeAffinity"}, {"name": "TeamNode"}]}}},
    ]}
    with pytest.raises(ConfigError) as exc:
        Scheduler(doc, registry())
    assert str(exc.value) == (f'{PREFIX}team: FilterPlugin "TeamNode" does not exist '
                              '(profiles[1].plugins.filter.enabled[1]; closest installed plugins: "TeamNodes")')


def test_a_default_plugin_the_registry_lacks_is_named_as_such() -> None:
    reg = Registry()
    reg.merge(default_registry())
    reg.unregister("PrioritySort")
    cfg = load_config(None)
    with pytest.raises(ConfigError) as exc:
        Scheduler(cfg, reg)
    assert str(exc.value) == (f'{PREFIX}default-scheduler: PreFilterPlugin "PrioritySort" does not exist '
                              f"(profiles[0]: a default plugin of Kubernetes {cfg.kubernetes_version}; "
                              "no installed plugin has a close name)")


def test_the_file_is_kept_when_the_configuration_is_loaded_again_for_another_release(tmp_path: Path) -> None:
    path = write(tmp_path, multi_point_doc("TeamNode"))
    cfg = load_config(path)
    assert cfg.file == path and load_config(None).file is None
    with pytest.raises(ConfigError, match=r"\(.*sched\.yaml, profiles\[0\]"):
        Scheduler(cfg, registry(), kubernetes_version="1.34")


def test_without_the_configuration_or_names_upstreams_words_stand_alone() -> None:
    cfg: KubeSchedulerConfiguration = load_config(multi_point_doc("TeamNode"))
    with pytest.raises(ConfigError) as exc:
        expand_profile(cfg.profiles[0], lambda n: intree_points_of(n))
    assert str(exc.value) == f'{PREFIX}default-scheduler: PreFilterPlugin "TeamNode" does not exist'
    with pytest.raises(ConfigError) as exc:
        expand_profile(cfg.profiles[0], intree_points_of)  # names known, none close, no location: nothing to add
    assert str(exc.value) == f'{PREFIX}default-scheduler: PreFilterPlugin "TeamNode" does not exist'
    close = load_config(multi_point_doc("NodeAfinity"))
    with pytest.raises(ConfigError) as exc:
        expand_profile(close.profiles[0], intree_points_of)
    assert str(exc.value) == (f'{PREFIX}default-scheduler: PreFilterPlugin "NodeAfinity" does not exist '
                              '(closest installed plugins: "NodeAffinity", "InterPodAffinity")')


def test_a_scenarios_config_file_is_named_when_the_scenario_is_read(tmp_path: Path) -> None:
    """``replay`` of a scenario whose ``config:`` file misspells a plugin: refused when the scenario is read, naming
    the scenario, the configuration file, the field path and the closest plugin (not, when the replay starts,
    without the file)."""
    from scheduling_framework.cli import main
    from scheduling_framework.scenario import ScenarioError, load_scenario

    config = write(tmp_path, multi_point_doc("TaintTolerations"))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump({"kind": "Scenario", "config": "sched.yaml", "steps": [{"op": "wait",
                                                                                                "seconds": 1}]}))
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario)
    assert exc.value.problems == [f'config: {PREFIX}default-scheduler: PreFilterPlugin "TaintTolerations" does not '
                                  f"exist ({config}, profiles[0].plugins.multiPoint.enabled[3]; closest installed "
                                  'plugins: "TaintToleration")']
    err = io.StringIO()
    assert main(["replay", str(scenario)], io.StringIO(), err) == 2
    assert err.getvalue() == f"error: {scenario}: {exc.value.problems[0]}\n"
