"""SchedulingGates: upstream TestPreEnqueue as a table (PreEnqueue has no fixture point)."""

from __future__ import annotations

from typing import Any

import pytest

from plugins_intree.schedulinggates import SchedulingGates
from scheduling_framework.api import Pod
from scheduling_framework.interfaces import points_of_class
from scheduling_framework.status import Code


def _pod(gates: list[str]) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": spec})


@pytest.mark.parametrize(("gates", "want"), [
    pytest.param([], None, id="pod does not carry scheduling gates"),
    pytest.param(["foo", "bar"], "waiting for scheduling gates: [foo bar]", id="pod carries scheduling gates"),
])
def test_pre_enqueue(gates: list[str], want: str | None) -> None:
    got = SchedulingGates(None, None).pre_enqueue(_pod(gates))
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [want])


def test_points() -> None:
    assert points_of_class(SchedulingGates) == {"preEnqueue"}
