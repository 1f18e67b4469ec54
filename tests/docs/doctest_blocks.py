"""Every code block of docs/ is run by tests/docs/test_docs_run.py, unless marked (not a test module).

- ```python blocks run in order, one namespace per page, from the repository root;
- ```console blocks: each ``$ scheduling-framework ...`` step that shows output is run in-process and its
  output compared (whitespace at line ends and the timing figure ``in 0.012s`` aside);
- a block that must not run (a file of a plugin package, a command that needs a package installed) is marked
  on the line before its fence: ``<!-- doctest: skip (why) -->``; ``<!-- doctest: run by tests/... -->``
  marks a block another test executes;
- data blocks (yaml, json, toml, text, plain ```) are not code.

``python -m tests.docs.doctest_blocks --write docs/cli.md`` rewrites the output of the console steps of a
page with what the commands print now (docs/cli.md is generated that way and checked by the test).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
MARK = re.compile(r"<!--\s*doctest:\s*(skip|run by)\b[^>]*-->\s*$")
CODE_KINDS = ("python", "console", "sh", "bash", "shell")


@dataclass
class Block:
    page: str
    line: int
    kind: str
    body: str
    marked: str = ""  # the marker's text when the block is not run here
    start: int = 0
    end: int = 0


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        out.append(Block(path.name, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2),
                         mark.group(0) if mark else "", m.start(2), m.end(2)))
    return out


def steps(body: str) -> list[Step]:
    out: list[Step] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append(Step(line[2:]))
        elif out:
            out[-1].expected.append(line)
    return out


def normalized(lines: list[str]) -> list[str]:
    out = [re.sub(r'"seconds": ?[0-9.e-]+', '"seconds": <s>',
                  re.sub(r" in \d+\.\d+s$", " in <seconds>s", line.rstrip())) for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def run_cli(command: str) -> tuple[int, str]:
    """Run ``scheduling-framework ARGS`` in-process from the repository root; stdout and stderr as a terminal
    shows them would interleave, so stderr (warnings) is kept apart and not compared."""
    from scheduling_framework.cli import main

    argv = shlex.split(command, comments=True)
    assert argv[0] == "scheduling-framework", command
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT):
        code = main(argv[1:], stdout=out, stderr=err)
    return code, out.getvalue()


def rewrite(path: Path) -> None:
    """Replace the shown output of every runnable console step of ``path`` with the current output."""
    text = path.read_text(encoding="utf-8")
    for b in reversed(blocks(path)):
        if b.kind != "console" or b.marked:
            continue
        lines: list[str] = []
        for st in steps(b.body):
            lines.append("$ " + st.command)
            if st.command.startswith("scheduling-framework"):
                _, out = run_cli(st.command)
                lines += [ln.rstrip() for ln in out.rstrip("\n").splitlines()]
            else:
                lines += st.expected
        text = text[:b.start] + "\n".join(lines) + "\n" + text[b.end:]
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - a maintenance tool
    if len(sys.argv) < 3 or sys.argv[1] != "--write":
        sys.exit("usage: python -m tests.docs.doctest_blocks --write docs/PAGE.md ...")
    for p in sys.argv[2:]:
        rewrite(Path(p))
