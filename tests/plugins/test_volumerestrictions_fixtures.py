"""VolumeRestrictions fixtures (ported upstream tables) through the in-process runner, as the CLI would run them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

CASES = fixture_cases(
    "tests/fixtures/upstream/volumerestrictions-gce.yaml",
    "tests/fixtures/upstream/volumerestrictions-aws.yaml",
    "tests/fixtures/upstream/volumerestrictions-rbd.yaml",
    "tests/fixtures/upstream/volumerestrictions-iscsi.yaml",
    "tests/fixtures/upstream/volumerestrictions-access-modes.yaml",
)


@pytest.mark.parametrize(("plugin", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
