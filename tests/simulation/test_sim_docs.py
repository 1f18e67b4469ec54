"""The worked example of docs/autoscaler-simulation.md runs as written and prints what the page says."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "autoscaler-simulation.md"


def worked_example() -> tuple[str, str]:
    """(the python block, the text block that follows it) of the "Worked example" section."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Worked example", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and out is not None, "the worked example lost its code or output block"
    return code.group(1), out.group(1)


def test_worked_example_runs_and_prints_the_documented_output() -> None:
    code, expected = worked_example()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, str(DOC), "exec"), {"__name__": "autoscaler_simulation_example"})
    assert buf.getvalue() == expected


def test_api_reference_names_exist() -> None:
    import scheduling_framework.simulation as sim

    text = DOC.read_text(encoding="utf-8")
    for name in ("ClusterSnapshot", "Simulator", "Fork", "Placement", "ScheduleOutcome", "DrainResult",
                 "node_from_template", "pod_for_node"):
        assert f"`{name}" in text and name in sim.__all__
    for method in re.findall(r"^\| `(\w+)\(", text, re.M):
        assert hasattr(sim.ClusterSnapshot, method) or hasattr(sim.Simulator, method), method
