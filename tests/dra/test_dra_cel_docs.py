"""The worked example of docs/dra-cel.md runs as written and prints what the page says."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "dra-cel.md"


def test_worked_example_prints_the_documented_output() -> None:
    section = DOC.read_text(encoding="utf-8").split("## Worked example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and out is not None, "the worked example lost its code or output block"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code.group(1), str(DOC), "exec"), {"__name__": "dra_cel_example"})
    assert buf.getvalue() == out.group(1)
