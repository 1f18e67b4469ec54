"""The plugin author's guide: its complete examples run, its snippets parse, and mkdocs lists every page."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fixture_runner import ROOT

DOCS = ROOT / "docs"
GUIDE = ["writing-plugins.md", "testing-plugins.md", "packaging-plugins.md"]


def _python_blocks(page: str) -> list[tuple[str | None, str]]:
    """(title or None, code) of each ```python block."""
    text = (DOCS / page).read_text()
    return [(m.group(1), m.group(2)) for m in re.finditer(r'```python(?: title="([^"]+)")?\n(.*?)```', text, re.S)]


@pytest.mark.parametrize("page", GUIDE)
def test_every_python_snippet_parses(page: str) -> None:
    blocks = _python_blocks(page)
    assert blocks, f"{page} has no python examples"
    for title, code in blocks:
        try:
            ast.parse(code)
        except SyntaxError as e:  # pragma: no cover - the message is the point
            pytest.fail(f"{page}: python block {title or code[:60]!r} does not parse: {e}")


def test_the_guides_plugin_and_its_tests_run(tmp_path: Path) -> None:
    files = {title: code for page in GUIDE for title, code in _python_blocks(page) if title}
    assert set(files) == {"team_nodes.py", "test_team_nodes.py"}
    for name, code in files.items():
        (tmp_path / name).write_text(code)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_team_nodes.py"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "5 passed" in p.stdout


def _nav_pages(nav: list[object]) -> list[str]:
    out: list[str] = []
    for item in nav:
        if isinstance(item, dict):
            for value in item.values():
                out.extend(_nav_pages(value) if isinstance(value, list) else [str(value)])
        else:
            out.append(str(item))
    return out


def test_mkdocs_nav_covers_every_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["docs_dir"] == "docs"
    assert sorted(_nav_pages(config["nav"])) == sorted(p.name for p in DOCS.glob("*.md")), (
        "mkdocs.yml's nav must list every page in docs/")


@pytest.mark.parametrize("page", GUIDE)
def test_relative_links_point_at_existing_pages(page: str) -> None:
    for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", (DOCS / page).read_text()):
        assert (DOCS / target).is_file(), f"{page} links to missing {target}"
