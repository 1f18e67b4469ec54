"""TaintToleration fixtures (ported upstream tables and the shared sample) run through the in-process
fixture runner, i.e. through configuration, the Framework runtime and the scheduling loop."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

FILES = ("tests/fixtures/upstream/tainttoleration.yaml", "tests/fixtures/samples/tainttoleration.yaml")
CASES = [(p, c) for p, c in fixture_cases(*FILES) if p == "TaintToleration"]


@pytest.mark.parametrize(("plugin", "case"), [pytest.param(p, c, id=c["name"]) for p, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
