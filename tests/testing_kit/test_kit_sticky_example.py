"""The worked third-party plugin in examples/sticky-node: its own test suite passes, and its README
walk-through prints what the README says, through the real entry point machinery."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixture_runner import ROOT

EXAMPLE = ROOT / "examples" / "sticky-node"
README = EXAMPLE / "README.md"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **extra)
    env.pop("PYTEST_ADDOPTS", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def test_the_example_test_suite_passes() -> None:
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark"],
                       cwd=EXAMPLE, capture_output=True, text=True, timeout=300, env=_env())
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", p.stdout) and "failed" not in p.stdout


def _console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """Each ```console block as (command, expected output lines) pairs."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", text, re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def _normalized(lines: list[str]) -> list[str]:
    out = [re.sub(r"in \d+\.\d+s$", "in <seconds>s", " ".join(line.split())) for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


@pytest.fixture
def installed_example(tmp_path: Path) -> dict[str, str]:
    """An environment where the example is 'installed': its source on the path and a dist-info declaring the
    same entry point as its pyproject.toml, which is all importlib.metadata reads."""
    site = tmp_path / "site"
    info = site / "scheduling_framework_sticky_node-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scheduling-framework-sticky-node\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[scheduling_framework]\nsticky-node = sticky_node\n")
    pyproject = (EXAMPLE / "pyproject.toml").read_text()
    assert '[project.entry-points.scheduling_framework]\nsticky-node = "sticky_node"' in pyproject
    return _env(PYTHONPATH=os.pathsep.join([str(site), str(EXAMPLE / "src")]))


def test_the_readme_walk_through_prints_what_it_shows(tmp_path: Path, installed_example: dict[str, str]) -> None:
    if shutil.which("scheduling-framework", path=installed_example["PATH"]) is None:
        pytest.fail("the scheduling-framework console script is not installed (pip install -e .)")
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE / "demo", work / "demo")
    ran = 0
    for steps in _console_blocks(README.read_text()):
        for command, expected in steps:
            if not command.startswith(("scheduling-framework", "cat ")):
                continue  # installing, changing directory, running pytest: covered elsewhere
            assert expected, f"README.md shows no output for `{command}`"
            p = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True, timeout=300,
                               env=installed_example)
            assert p.returncode == 0, f"$ {command}\n{p.stdout}{p.stderr}"
            assert _normalized(p.stdout.splitlines()) == _normalized(expected), (
                f"README.md shows a different output for `{command}`: update examples/sticky-node/README.md\n"
                f"actual output:\n{p.stdout}")
            ran += 1
    assert ran == 6  # plugins, three schedules, two looks at the store
