"""TaintToleration fixtures (ported upstream tables and the shared sample) run through the in-process
fixture runner, i.e. through configuration, the Framework runtime and the scheduling loop."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixture_runner import fixture_cases, run_case

FILES = ("tests/fixtures/upstream/tainttoleration.yaml", "tests/fixtures/samples/tainttoleration.yaml")
CASES = [(p, c) for p, c in fixture_cases(*FILES) if p == "TaintToleration"]

# Upstream's scheduler accepts pods with Lt/Gt tolerations and, with the TaintTolerationComparisonOperators
# gate off, treats them as matching nothing; the core Pod model still rejects those operators when parsing.
NUMERIC_OPERATOR_PARSING = pytest.mark.xfail(
    reason="core Toleration.from_dict rejects the Lt/Gt operators", strict=False)


def _uses_numeric_operator(case: dict[str, Any]) -> bool:
    return any(t.get("operator") in ("Lt", "Gt") for t in case["pod"].get("spec", {}).get("tolerations") or [])


@pytest.mark.parametrize(("plugin", "case"), [
    pytest.param(p, c, id=c["name"], marks=[NUMERIC_OPERATOR_PARSING] if _uses_numeric_operator(c) else [])
    for p, c in CASES])
def test_fixture(plugin: str, case: dict[str, Any]) -> None:
    assert run_case(plugin, case) == []
