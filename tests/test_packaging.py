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
    # DRA CEL selectors are evaluated by our own interpreter: no CEL package, only RE2 for its regular expressions
    # (docs/dra-cel.md).
    assert sorted(runtime) == ["attrs", "google-re2", "pluggy", "pyyaml", "typing-extensions"]
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


def test_wheel_carries_license_demo_and_metadata(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "scheduling_framework/demo/cluster.yaml" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(n for n in names if "dist-info" in n)
    text = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in text
    assert "License-File: LICENSE" in text
    assert "License :: " not in text  # the SPDX expression replaces the license classifiers
    for minor in (11, 12, 13):
        assert f"Classifier: Programming Language :: Python :: 3.{minor}" in text
    assert "Requires-Python: >=3.11" in text
    assert "Project-URL: " in text


def test_packaged_demo_cluster_is_the_readme_example() -> None:
    packaged = (ROOT / "scheduling_framework" / "demo" / "cluster.yaml").read_bytes()
    assert packaged == (ROOT / "examples" / "cluster.yaml").read_bytes(), \
        "copy examples/cluster.yaml to scheduling_framework/demo/cluster.yaml"


def test_demo_runs_from_the_wheel_alone(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    """A user with only the wheel installed (no repository, no examples/) runs the README demo."""
    site = tmp_path / "site"
    wheel.extractall(site)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import scheduling_framework as sf; "
            "assert sf.__file__.startswith(sys.argv[1]), sf.__file__; "
            "from scheduling_framework.cli import main; sys.exit(main(['demo', '--seed', '1']))")
    p = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "shop/checkout-1" in p.stdout and "victims: default/batch-0" in p.stdout
    assert "warning" not in p.stderr


def test_sdist_carries_tests_docs_and_examples(tmp_path: Path) -> None:
    build = pytest.importorskip("build", reason="the 'build' package makes the sdist")
    del build
    p = subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(ROOT)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        pytest.skip(f"cannot build an sdist here: {p.stderr[-300:]}")
    import tarfile

    sdist = next(tmp_path.glob("scheduling_framework-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for expected in ("LICENSE", "README.md", "CHANGELOG.md", "constraints/ci.txt", "examples/cluster.yaml",
                     "docs/index.md", "tests/test_packaging.py", "scheduling_framework/demo/cluster.yaml",
                     "tools/gen_known_fields.py"):
        assert expected in names, expected
    assert not any("__pycache__" in n for n in names)


def test_ci_runs_the_readme_test_command_with_the_pinned_set() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "python3 -m venv .venv && . .venv/bin/activate && pip install -c constraints/ci.txt -e '.[test]' " \
              "&& python -m pytest"
    assert f"```sh\n{command}\n```" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command.replace(" && python -m pytest", "") in ci.replace(" \\\n  ", " ").replace(
        'PIP_CONSTRAINT="$PWD/constraints/ci.txt" ', "")
    pins = [line for line in (ROOT / "constraints" / "ci.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    assert all("==" in line for line in pins)
    names = {re.split(r"[=;]", line)[0].lower().replace("_", "-") for line in pins}
    for dep in ("attrs", "typing-extensions", "pluggy", "pyyaml", "pytest",
                "hypothesis", "mypy", "ruff", "setuptools"):
        assert dep in names, dep


def test_minimum_constraints_match_pyproject_lower_bounds() -> None:
    """The lower bounds pyproject.toml states are the versions constraints/minimum.txt installs."""
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lower = {}
    for dep in deps:
        m = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)", dep)
        assert m, f"{dep}: every run-time dependency states a lower bound"
        lower[m.group(1).lower()] = m.group(2)
    frozen = {}
    for line in (ROOT / "constraints" / "minimum.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            frozen[name.lower().replace("_", "-")] = version.strip()
    for name, version in lower.items():
        key = name.replace("_", "-")
        assert key in frozen, name
        assert _padded(frozen[key]) == _padded(version), (name, version, frozen[key])


def _padded(version: str) -> tuple[int, ...]:
    parts = [int(x) for x in version.split(".")]
    return tuple(parts + [0] * (4 - len(parts)))
