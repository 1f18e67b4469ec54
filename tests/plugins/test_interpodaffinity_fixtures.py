"""InterPodAffinity fixtures (ported upstream tables and the shared samples) run through the in-process
fixture runner, i.e. through configuration, the Framework runtime and the scheduling loop."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import ROOT, fixture_cases, run_case

FILES = sorted(str(p) for p in (ROOT / "tests/fixtures/upstream").glob("interpodaffinity-*.yaml")) + sorted(
    str(p) for p in (ROOT / "tests/fixtures/samples").glob("interpodaffinity-*.yaml"))
CASES = [(p, c) for p, c in fixture_cases(*FILES) if p == "InterPodAffinity"]


@pytest.mark.parametrize(("plugin", "case"), [
    pytest.param(p, c, id=f"{i}:{c['name']}") for i, (p, c) in enumerate(CASES)])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []


def test_all_cases_collected() -> None:
    assert len(CASES) >= 89
