"""The shared conformance samples (copied to tests/fixtures/samples), run in-process like the CLI."""

from __future__ import annotations

import pathlib

import pytest

from tests.fixture_runner import ROOT, fixture_cases, run_case
from tests.plugins.dra_standin import real_allocator_available

SAMPLES = sorted(p for p in (ROOT / "tests/fixtures/samples").glob("*.yaml") if not p.name.startswith("config-"))
CASES = [(f.name, plugin, case) for f in SAMPLES for plugin, case in fixture_cases(f)]


@pytest.mark.parametrize(("fixture", "plugin", "case"), CASES,
                         ids=[f"{f}::{c['name']}" for f, _, c in CASES])
def test_sample(fixture: str, plugin: str, case: dict) -> None:
    if fixture == "dynamicresources.yaml" and not real_allocator_available():
        pytest.skip("the structured allocator (scheduling_framework.dra.allocator) is not installed")
    assert run_case(plugin, case) == []


def test_samples_present() -> None:
    assert len(CASES) >= 80, pathlib.Path(ROOT / "tests/fixtures/samples")
