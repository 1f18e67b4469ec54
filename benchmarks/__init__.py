"""scheduler_perf-style benchmarks: upstream's workloads run through the reference Scheduler.

Run ``python -m benchmarks.scheduler_perf --help``; see benchmarks/README.md for the figures.
"""

from __future__ import annotations

import platform


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (``platform.processor()`` where there is no such file)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return platform.processor()
    return ""
