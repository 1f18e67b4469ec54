"""The shared conformance samples for configuration, checked in-process against the config API.

Each case is a full KubeSchedulerConfiguration with either the effective plugins expected per
profile and point (after defaults, merge and multiPoint expansion) or a substring of the error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.config import INTREE_POINTS, expand_profile, load_config
from scheduling_framework.errors import ConfigError
from tests import yamlio

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"
FILES = ("config-defaults.yaml", "config-multipoint.yaml", "config-validation.yaml")


def _cases() -> list[Any]:
    params = []
    for file in FILES:
        doc = yamlio.load((SAMPLES / file).read_text())
        fakes = {name: frozenset(points or ()) for name, points in (doc.get("fakePlugins") or {}).items()}
        for case in doc["cases"]:
            params.append(pytest.param(fakes, case, id=f"{file}::{case['name']}"))
    return params


def _points_of(fakes: dict[str, frozenset[str]]) -> Any:
    def points_of(name: str) -> frozenset[str] | None:
        return fakes.get(name, INTREE_POINTS.get(name))

    return points_of


def _effective(config: dict[str, Any], fakes: dict[str, frozenset[str]]) -> dict[str, dict[str, list[Any]]]:
    cfg = load_config(config)
    out: dict[str, dict[str, list[Any]]] = {}
    for profile in cfg.profiles:
        eff = expand_profile(profile, _points_of(fakes))
        out[profile.scheduler_name] = {
            point: [{"name": p.name, "weight": p.weight} if point == "score" else p.name for p in plugins]
            for point, plugins in eff.points.items()
        }
    return out


@pytest.mark.parametrize(("fakes", "case"), _cases())
def test_sample(fakes: dict[str, frozenset[str]], case: dict[str, Any]) -> None:
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(ConfigError) as exc:
            _effective(case["config"], fakes)
        assert expect["error"] in str(exc.value)
        return
    got = _effective(case["config"], fakes)
    for name, points in expect["profiles"].items():
        assert name in got
        for point, want in points.items():
            assert got[name][point] == want, point


def test_every_sample_file_has_cases() -> None:
    assert sum(len(yamlio.load((SAMPLES / f).read_text())["cases"]) for f in FILES) >= 15
