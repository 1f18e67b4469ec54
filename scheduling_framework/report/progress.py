"""A progress bar on a terminal's stderr for long runs: pods done / total, pods/s and ETA.

It is drawn from a background thread that samples a counter a few times a second, so the scheduling
loop pays nothing for it (no callback per cycle). It draws only on a terminal (or when forced), only after
the run has lasted a moment (short runs never flicker), and it erases itself when the run ends, so that
whatever the command prints next starts on a clean line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

BAR_WIDTH = 30
#: seconds before the bar first appears (short runs never show one), and between redraws
DELAY = 0.5
INTERVAL = 0.25


def should_show(stream: TextIO, flag: bool | None) -> bool:
    """``--progress`` forces the bar, ``--no-progress`` hides it; by default only a terminal gets one."""
    if flag is not None:
        return flag
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


def render(done: int, total: int, elapsed: float, width: int = BAR_WIDTH, unit: str = "pods") -> str:
    """One status line: ``[#####.....]  1200/3000 pods  40%  480 pods/s  ETA 4s`` (or another unit)."""
    total = max(total, 0)
    done = min(max(done, 0), total) if total else max(done, 0)
    frac = done / total if total else 1.0
    filled = int(frac * width)
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = f"ETA {_duration((total - done) / rate)}" if rate > 0 and done < total else ""
    line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {unit} {frac:4.0%} {rate:,.0f} {unit}/s {eta}"
    return line.rstrip()


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """``with Progress(stream, total, count):`` draws ``count()`` / ``total`` every ``interval`` seconds
    (default :data:`INTERVAL`) after ``delay`` seconds (:data:`DELAY`), and erases the line at the end."""

    def __init__(self, stream: TextIO, total: int, count: Callable[[], int], *, interval: float | None = None,
                 delay: float | None = None, clock: Callable[[], float] = time.monotonic, unit: str = "pods") -> None:
        self.stream = stream
        self.unit = unit
        self.total = total
        self.count = count
        self.interval = INTERVAL if interval is None else interval
        self.delay = DELAY if delay is None else delay
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._drawn = 0  # length of the line on screen (0: nothing to erase)

    def __enter__(self) -> Progress:
        self._start = self.clock()
        self._thread = threading.Thread(target=self._loop, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.clear()

    def _loop(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            self.draw()
            if self._stop.wait(self.interval):
                return

    def draw(self) -> None:
        """Draw the current line now (the thread does this on its own)."""
        try:
            done = self.count()
        except Exception:  # the counter raced with the run: skip this frame
            return
        line = render(done, self.total, self.clock() - self._start, unit=self.unit)
        pad = " " * max(self._drawn - len(line), 0)
        self._write("\r" + line + pad)
        self._drawn = len(line)

    def clear(self) -> None:
        if self._drawn:
            self._write("\r" + " " * self._drawn + "\r")
            self._drawn = 0

    def _write(self, s: str) -> None:
        try:
            self.stream.write(s)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr never fails the run
            self._stop.set()
