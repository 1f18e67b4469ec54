"""NodeAffinity fixtures (ported upstream tables and the shared sample) run through the in-process
fixture runner, i.e. through configuration, the Framework runtime and the scheduling loop."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

FILES = ("tests/fixtures/upstream/nodeaffinity.yaml", "tests/fixtures/samples/nodeaffinity.yaml")
CASES = [(p, c) for p, c in fixture_cases(*FILES) if p == "NodeAffinity"]


@pytest.mark.parametrize(("plugin", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
