"""docs/scenarios.md runs: every console block's output and every python block's printed output match."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from scheduling_framework.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, flags=re.S)


def _console_blocks() -> list[tuple[str, str]]:
    out = []
    for lang, body in BLOCKS:
        if lang == "console":
            first, _, rest = body.partition("\n")
            out.append((first.removeprefix("$ "), rest))
    return out


@pytest.mark.parametrize(("command", "expected"), _console_blocks(), ids=lambda v: str(v)[:40])
def test_console_blocks(command: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)
    assert argv[0] == "scheduling-framework"
    out, err = io.StringIO(), io.StringIO()
    assert main(argv[1:], out, err) == 0, err.getvalue()
    assert out.getvalue().rstrip() == expected.rstrip()


def test_python_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    pairs = [(BLOCKS[i][1], BLOCKS[i + 1][1]) for i in range(len(BLOCKS) - 1)
             if BLOCKS[i][0] == "python" and BLOCKS[i + 1][0] == "text"]
    assert len(pairs) == 6
    for code, expected in pairs:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "docs/scenarios.md", "exec"), {})
        assert buf.getvalue().strip() == expected.strip()
