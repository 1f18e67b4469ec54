"""The shared conformance samples (copied to tests/fixtures/samples), run in-process like the CLI."""

from __future__ import annotations

import pathlib

import pytest

from tests.fixture_runner import ROOT, fixture_cases, run_case
from tests.plugins.dra_standin import real_allocator_available

# Samples that cannot all pass under one set of feature gates: upstream ran them with different gates.
CONTRADICTORY = {
    ("dynamicresources.yaml", "TestAllocator/tainted-all-devices-single-disabled"):
        "upstream runs this case with DRADeviceTaints off; the sample TestAllocator/tainted-prioritized-list "
        "needs it on (the newest default), and the CLI runs both with the same gates",
}

SAMPLES = sorted(p for p in (ROOT / "tests/fixtures/samples").glob("*.yaml") if not p.name.startswith("config-"))
CASES = [(f.name, plugin, case) for f in SAMPLES for plugin, case in fixture_cases(f)]


@pytest.mark.parametrize(("fixture", "plugin", "case"), CASES,
                         ids=[f"{f}::{c['name']}" for f, _, c in CASES])
def test_sample(fixture: str, plugin: str, case: dict) -> None:
    if fixture == "dynamicresources.yaml" and not real_allocator_available():
        pytest.skip("the structured allocator (scheduling_framework.dra.allocator) is not installed")
    if (fixture, case["name"]) in CONTRADICTORY:
        pytest.xfail(CONTRADICTORY[(fixture, case["name"])])
    assert run_case(plugin, case) == []


def test_samples_present() -> None:
    assert len(CASES) >= 80, pathlib.Path(ROOT / "tests/fixtures/samples")
