"""Invariants of loading: defaulting is idempotent, ``raw`` reloads to the same configuration,
Go durations parse, and typed args can be given directly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_framework.api._field import parse_duration
from scheduling_framework.config import DefaultPreemptionArgs, load_config
from scheduling_framework.errors import ConfigError

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

DOCS: list[Any] = [
    pytest.param(V1, id="empty"),
    pytest.param(
        {
            **V1,
            "percentageOfNodesToScore": 30,
            "profiles": [
                {
                    "schedulerName": "a",
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": "Custom", "weight": 4}],
                            "disabled": [{"name": "ImageLocality"}],
                        },
                        "score": {"enabled": [{"name": "NodeAffinity", "weight": 5}], "disabled": [{"name": "*"}]},
                    },
                    "pluginConfig": [
                        {"name": "Custom", "args": {"x": [1, 2]}},
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                    ],
                },
                {"schedulerName": "b", "percentageOfNodesToScore": 10},
            ],
            "extenders": [{"urlPrefix": "http://127.0.0.1", "prioritizeVerb": "p", "weight": 2}],
        },
        id="customized",
    ),
]


@pytest.mark.parametrize("doc", DOCS)
def test_raw_reloads_to_the_same_configuration(doc: dict[str, Any]) -> None:
    cfg = load_config(doc)
    again = load_config(cfg.raw)
    assert again == cfg
    assert again.raw == cfg.raw


def test_typed_args_in_a_python_document() -> None:
    doc = {**V1, "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": DefaultPreemptionArgs(5, 7)}]}]}
    assert load_config(doc).profiles[0].args_for("DefaultPreemption") == DefaultPreemptionArgs(5, 7)
    doc["profiles"][0]["pluginConfig"][0]["args"] = DefaultPreemptionArgs(500, 7)
    with pytest.raises(ConfigError, match=r"minCandidateNodesPercentage: Invalid value: 500"):
        load_config(doc)


@given(st.integers(0, 10**6), st.integers(0, 59), st.integers(0, 999))
def test_parse_duration_compound(hours: int, minutes: int, millis: int) -> None:
    text = f"{hours}h{minutes}m{millis}ms"
    got = parse_duration(text)
    assert got is not None
    assert got == pytest.approx(hours * 3600 + minutes * 60 + millis / 1000)
    assert parse_duration("-" + text) == pytest.approx(-got)


@pytest.mark.parametrize("text", ["", "1", "s", "1x", "1.2.3s", "--1s", "1s2"])
def test_parse_duration_rejects(text: str) -> None:
    assert parse_duration(text) is None
