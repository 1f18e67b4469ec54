"""mypy --strict and ruff are part of the suite: a type or lint regression fails the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.fixture_runner import ROOT

TARGETS = ["scheduling_framework", "plugins_intree"]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None and not _run([sys.executable, "-m", "ruff", "--version"]).returncode == 0,
                    reason="ruff not installed")
def test_ruff_clean() -> None:
    p = _run([sys.executable, "-m", "ruff", "check", *TARGETS])
    assert p.returncode == 0, p.stdout + p.stderr


def test_mypy_strict_clean() -> None:
    pytest.importorskip("mypy")
    p = _run([sys.executable, "-m", "mypy", "--strict", *TARGETS])
    assert p.returncode == 0, p.stdout[-5000:] + p.stderr[-2000:]
