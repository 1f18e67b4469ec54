"""VolumeBinding fixtures (ported upstream tables) through the in-process runner, as the CLI would run them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

CASES = fixture_cases(
    "tests/fixtures/upstream/volumebinding.yaml",
    "tests/fixtures/upstream/volumebinding-binder-without-provisioning.yaml",
    "tests/fixtures/upstream/volumebinding-binder-with-provisioning.yaml",
    "tests/fixtures/upstream/volumebinding-binder-csi-migration.yaml",
    "tests/fixtures/upstream/volumebinding-binder-capacity.yaml",
    "tests/fixtures/upstream/volumebinding-wffc.yaml",
)


@pytest.mark.parametrize(("plugin", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
