"""``config view --output config``: the effective configuration as a document that loads back to the
same effective profiles, on every valid configuration sample and the example config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework.config import INTREE_POINTS, config_document, config_view, load_config
from scheduling_framework.errors import ConfigError
from tests import yamlio

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "fixtures" / "samples"
FILES = ("config-defaults.yaml", "config-multipoint.yaml", "config-validation.yaml")


def _points_of(fakes: dict[str, frozenset[str]]) -> Any:
    def points_of(name: str) -> frozenset[str] | None:
        return fakes.get(name, INTREE_POINTS.get(name))

    return points_of


def _valid_cases() -> list[Any]:
    params = []
    for file in FILES:
        doc = yamlio.load((SAMPLES / file).read_text())
        fakes = {name: frozenset(points or ()) for name, points in (doc.get("fakePlugins") or {}).items()}
        for case in doc["cases"]:
            if "error" not in case["expect"]:
                params.append(pytest.param(fakes, case["config"], id=f"{file}::{case['name']}"))
    params.append(pytest.param({}, str(ROOT / "examples" / "config.yaml"), id="examples/config.yaml"))
    params.append(pytest.param({}, None, id="default"))
    return params


@pytest.mark.parametrize(("fakes", "config"), _valid_cases())
def test_document_round_trips_to_the_same_effective_profiles(fakes: dict[str, frozenset[str]], config: Any) -> None:
    points_of = _points_of(fakes)
    cfg = load_config(config)
    doc = config_document(cfg, points_of)
    assert doc["apiVersion"] == "kubescheduler.config.k8s.io/v1" and doc["kind"] == "KubeSchedulerConfiguration"
    # through YAML text, as a user pipes it into a file
    again = load_config(yamlio.load(yaml.safe_dump(doc, sort_keys=False)))
    assert config_view(again, points_of) == config_view(cfg, points_of)
    assert config_document(again, points_of) == doc  # a fixed point: writing it out again changes nothing


def test_every_point_is_explicit_and_args_defaulted() -> None:
    doc = config_document(load_config(None), INTREE_POINTS.get)
    plugins = doc["profiles"][0]["plugins"]
    assert plugins["multiPoint"] == {"disabled": [{"name": "*"}]}  # no default comes back through it
    assert all(plugins[p]["disabled"] == [{"name": "*"}] for p in plugins)
    assert plugins["score"]["enabled"][0] == {"name": "TaintToleration", "weight": 3}
    fit = next(pc for pc in doc["profiles"][0]["pluginConfig"] if pc["name"] == "NodeResourcesFit")
    assert fit["args"]["kind"] == "NodeResourcesFitArgs"
    assert fit["args"]["scoringStrategy"]["type"] == "LeastAllocated"


def test_unbuildable_profile_is_a_config_error() -> None:
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "x", "plugins": {"filter": {"enabled": [{"name": "NoSuch"}]}}}]})
    with pytest.raises(ConfigError, match="NoSuch"):
        config_document(cfg, INTREE_POINTS.get)
