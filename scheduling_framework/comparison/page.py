"""``compare --report cmp.html``: one self-contained page with both sides (inline CSS and JavaScript, no
network fetch): the configuration differences, every pod on both sides with the verdicts and score columns
that explain a difference, the plugins responsible, and the nodes whose pods changed (requests on each
side). The comparison's JSON document (``Comparison.to_dict()``) is embedded as is and rendered with
``textContent`` only, so names from the cluster file never become markup."""

from __future__ import annotations

import json
from importlib import resources

from scheduling_framework.comparison.model import Comparison
from scheduling_framework.errors import InputError


def render(result: Comparison) -> str:
    template = resources.files("scheduling_framework.comparison").joinpath("compare.html").read_text(encoding="utf-8")
    doc = result.to_dict()
    payload = json.dumps(doc, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")
    title = f"compare: {doc['a']['description']} (A) vs {doc['b']['description']} (B)"
    return template.replace("%%TITLE%%", _escape(title)).replace("%%DATA%%", payload)


def write_report(path: str, result: Comparison) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(render(result))
    except OSError as e:
        raise InputError(path, f"cannot write report {path}: {e.strerror or e}") from None


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


__all__ = ["render", "write_report"]
