"""Shared by the benchmarks that time whole ``scheduling-framework`` processes (compare, why, autoscale)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

CLI = [sys.executable, "-m", "scheduling_framework"]


def child_cpu() -> float:
    """User + system CPU seconds of the finished children: the other work of a shared machine moves it far less
    than wall time."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: Sequence[str], ok: Sequence[int] = (0,)) -> tuple[float, dict[str, Any]]:
    """CPU seconds of one CLI process and its JSON output; SystemExit when it exits with a code not in ``ok``."""
    before = child_cpu()
    p = subprocess.run([*CLI, *argv], capture_output=True, text=True, check=False)
    cpu = child_cpu() - before
    if p.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(p.stdout)
    return cpu, out


def with_items(text: str, items: Iterable[dict[str, Any]], source: str) -> str:
    """The JSON ``kind: List`` ``text`` with ``items`` appended to its items (written out, not re-parsed: the
    dumps are hundreds of MB)."""
    end = text.rstrip()
    close = end.rfind("]")
    if not end.endswith("}") or close < 0:
        raise SystemExit(f"{source}: expected a JSON kind: List")
    return end[:close] + "".join("," + json.dumps(i) for i in items) + end[close:]
