"""Docs that run: every code block in docs/ is executed (see tests/docs/doctest_blocks.py for the rules)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from tests.docs.doctest_blocks import CODE_KINDS, DOCS, ROOT, blocks, normalized, run_cli, steps

PAGES = sorted(DOCS.glob("*.md"))


def _python_pages() -> list[Any]:
    return [pytest.param(p, id=p.name) for p in PAGES if any(b.kind == "python" for b in blocks(p))]


def _console_steps() -> list[Any]:
    params = []
    for p in PAGES:
        for b in blocks(p):
            if b.kind != "console" or b.marked:
                continue
            for i, st in enumerate(steps(b.body)):
                if st.command.startswith("scheduling-framework") and st.expected:
                    params.append(pytest.param(st.command, st.expected, id=f"{p.name}:{b.line}:{i}"))
    return params


@pytest.mark.parametrize("page", _python_pages())
def test_python_blocks_run(page: Path, tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for b in blocks(page):
        if b.kind != "python" or b.marked:
            continue
        code = compile(b.body, f"{page}:{b.line}", "exec")
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(io.StringIO()):
            exec(code, namespace)


@pytest.mark.parametrize(("command", "expected"), _console_steps())
def test_console_steps_print_what_the_docs_show(command: str, expected: list[str]) -> None:
    code, out = run_cli(command)
    assert code in (0, 3), out
    assert normalized(out.splitlines()) == normalized(expected), (
        f"the docs show a different output for `{command}`; regenerate with "
        f"python -m tests.docs.doctest_blocks --write docs/PAGE.md\nactual:\n{out}")


def test_every_code_block_is_run_or_marked() -> None:
    """A code block is a python block (run), a console block whose CLI steps show output (run), or marked."""
    unaccounted = []
    for p in PAGES:
        for b in blocks(p):
            if b.kind not in CODE_KINDS or b.marked or b.kind == "python":
                continue
            runnable = [s for s in steps(b.body) if s.command.startswith("scheduling-framework") and s.expected]
            if not runnable:
                unaccounted.append(f"{p.name}:{b.line} ({b.kind})")
    assert unaccounted == [], "mark these blocks <!-- doctest: skip (why) --> or show their output"
