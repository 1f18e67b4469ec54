"""The Coscheduling package in examples/coscheduling: its own test suite (scheduler-plugins' tables) passes, and
its README walk-through prints what the README shows, through the real entry point machinery."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixture_runner import ROOT

EXAMPLE = ROOT / "examples" / "coscheduling"
README = EXAMPLE / "README.md"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **extra)
    env.pop("PYTEST_ADDOPTS", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def test_the_package_test_suite_passes() -> None:
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark"],
                       cwd=EXAMPLE, capture_output=True, text=True, timeout=300, env=_env())
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", p.stdout) and "failed" not in p.stdout


def _steps(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for body in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def _normalized(lines: list[str]) -> list[str]:
    out = [re.sub(r"in \d+\.\d+s$", "in <seconds>s", " ".join(line.split())) for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def test_the_readme_walk_through_prints_what_it_shows(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "scheduling_framework_coscheduling-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scheduling-framework-coscheduling\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[scheduling_framework]\ncoscheduling = coscheduling\n")
    assert '[project.entry-points.scheduling_framework]\ncoscheduling = "coscheduling"' in (
        EXAMPLE / "pyproject.toml").read_text()
    env = _env(PYTHONPATH=os.pathsep.join([str(site), str(EXAMPLE / "src")]))
    if shutil.which("scheduling-framework", path=env["PATH"]) is None:
        pytest.fail("the scheduling-framework console script is not installed (pip install -e .)")
    ran = 0
    for command, expected in _steps(README.read_text()):
        if not command.startswith("scheduling-framework"):
            continue  # installing: covered elsewhere
        p = subprocess.run(["bash", "-c", command], cwd=EXAMPLE / "demo", capture_output=True, text=True,
                           timeout=300, env=env)
        assert p.returncode == 0, f"$ {command}\n{p.stdout}{p.stderr}"
        assert not p.stderr, p.stderr  # no warning: the PodGroup kind is declared as read
        assert _normalized(p.stdout.splitlines()) == _normalized(expected), (
            f"README.md shows a different output for `{command}`:\n{p.stdout}")
        ran += 1
    assert ran == 3
