"""DefaultPreemption fixtures (ported upstream tables and the shared sample) through the in-process runner."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

CASES = fixture_cases(
    "tests/fixtures/upstream/defaultpreemption-postfilter.yaml",
    "tests/fixtures/upstream/defaultpreemption-dryrun.yaml",
    "tests/fixtures/upstream/defaultpreemption-select.yaml",
    "tests/fixtures/upstream/defaultpreemption-preempt.yaml",
    "tests/fixtures/upstream/defaultpreemption-eligibility.yaml",
    "tests/fixtures/upstream/defaultpreemption-custom.yaml",
    "tests/fixtures/upstream/defaultpreemption-evaluator.yaml",
    "tests/fixtures/samples/defaultpreemption.yaml",
)


@pytest.mark.parametrize(("plugin", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []


def test_fixtures_cover_the_samples() -> None:
    ported = {c["name"] for _, c in CASES[:-5]}
    samples = [c["name"] for _, c in fixture_cases("tests/fixtures/samples/defaultpreemption.yaml")]
    assert len(samples) == 5
    assert set(samples) <= ported
