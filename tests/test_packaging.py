"""The distribution: what a wheel ships, its entry points, and the public names DESIGN.md promises."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixture_runner import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                        "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {p.stderr[-300:]}")
    whl = next(Path(out).glob("scheduling_framework-*.whl"))
    return zipfile.ZipFile(whl)


def test_wheel_ships_both_packages_and_py_typed(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "scheduling_framework/__init__.py" in names
    assert "scheduling_framework/py.typed" in names
    assert "plugins_intree/__init__.py" in names
    assert any(n.startswith("plugins_intree/noderesources/") for n in names)
    assert not any(n.startswith("tests/") for n in names)


def test_wheel_metadata_deps_and_entry_points(wheel: zipfile.ZipFile) -> None:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    text = wheel.read(meta).decode()
    runtime = [re.split(r"[<>=!~;\s]", line.removeprefix("Requires-Dist:").strip())[0].lower()
               for line in text.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    # common-expression-language: DRA CEL selectors, chosen by measurement (docs/dra-cel.md).
    assert sorted(runtime) == ["attrs", "common-expression-language", "pluggy", "pyyaml", "typing-extensions"]
    eps = wheel.read(next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))).decode()
    assert "[scheduling_framework]" in eps and "plugins_intree" in eps
    assert "scheduling-framework = scheduling_framework.cli:main" in eps


def test_public_names_import() -> None:
    from scheduling_framework import (  # noqa: F401
        MAX_NODE_SCORE,
        MIN_NODE_SCORE,
        Code,
        CycleState,
        Framework,
        NodeInfo,
        NodeScore,
        PostFilterResult,
        PreFilterResult,
        Registry,
        Scheduler,
        Status,
        hookimpl,
        load_config,
    )
    from scheduling_framework.api import Node, Pod  # noqa: F401

    assert (MAX_NODE_SCORE, MIN_NODE_SCORE) == (100, 0)
    assert str(Code.UNSCHEDULABLE_AND_UNRESOLVABLE) == "UnschedulableAndUnresolvable"


def test_python_dash_m_runs_the_cli() -> None:
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert p.returncode == 0 and "schedule" in p.stdout
