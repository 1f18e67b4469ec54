"""PodTopologySpread fixtures (ported upstream tables and the shared samples) through the in-process runner."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

CASES = fixture_cases(
    "tests/fixtures/upstream/podtopologyspread-filter.yaml",
    "tests/fixtures/upstream/podtopologyspread-prefilter.yaml",
    "tests/fixtures/upstream/podtopologyspread-score.yaml",
    "tests/fixtures/upstream/podtopologyspread-prescore.yaml",
    "tests/fixtures/samples/podtopologyspread-filter.yaml",
    "tests/fixtures/samples/podtopologyspread-score.yaml",
)


@pytest.mark.parametrize(("plugin", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
