"""NodeResourcesFit / NodeResourcesBalancedAllocation fixtures (ported upstream tables and the shared samples)
run through the in-process fixture runner, i.e. through configuration, the Framework runtime and the
scheduling loop, as the CLI would."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import ROOT, fixture_cases, run_case

FILES = sorted(str(p.relative_to(ROOT)) for pattern in ("tests/fixtures/upstream/noderesources-*.yaml",
                                                        "tests/fixtures/samples/noderesources-*.yaml")
               for p in ROOT.glob(pattern))
PLUGINS = ("NodeResourcesFit", "NodeResourcesBalancedAllocation")
CASES = [(p, c) for p, c in fixture_cases(*FILES) if p in PLUGINS]


def test_fixtures_were_found() -> None:
    assert len(CASES) >= 130


@pytest.mark.parametrize(("plugin", "case"), [pytest.param(p, c, id=c["name"]) for p, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
