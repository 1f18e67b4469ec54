"""``schedule --why`` in the terminal: each pending pod's facts, remedies, shortfalls and what was not computed."""

from __future__ import annotations

import textwrap

from scheduling_framework.remedies.model import PodRemedies

WIDTH = 120


def _wrap(text: str, first: str, rest: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def why_lines(pr: PodRemedies, width: int = WIDTH) -> list[str]:
    lines = [f"{pr.pod}: what would make it fit"]
    for f in pr.facts:
        lines += _wrap(f, "  fact: ", "        ", width)
    for r in pr.remedies:
        where = f"lands on {r.lands_on}" if r.lands_on else "fits"
        opened = f"opens {r.nodes_opened} node{'s' if r.nodes_opened != 1 else ''}" if r.nodes_opened else ""
        tail = ", ".join(x for x in (opened, where) if x)
        lines += _wrap(f"{r.change}: {tail} (verified)", "  - ", "    ", width)
    if not pr.remedies:
        lines.append("  no single change or combination found that makes it fit")
    if pr.shortfalls:
        lines += _wrap("; ".join(s.text() for s in pr.shortfalls[:3]), "  closest nodes: ", "    ", width)
    for n in pr.not_computed:
        lines += _wrap(n, "  ", "    ", width)
    if pr.sampled:
        lines.append(f"  ({pr.examined} of {pr.nodes} nodes examined with every Filter plugin, as many as "
                     "upstream's percentageOfNodesToScore looks for, from every group of rejected nodes)")
    return lines


__all__ = ["why_lines"]
