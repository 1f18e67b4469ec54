"""Parallelizer: upstream runs Filter/Score over nodes on goroutines; CPython threads would not speed up
pure-Python plugins (the GIL) and would make results depend on timing, so work runs in index order.
``parallelism`` is kept for configuration fidelity and for plugins that ask for it."""

from __future__ import annotations

from collections.abc import Callable


class Parallelizer:
    def __init__(self, parallelism: int = 16) -> None:
        self.parallelism = parallelism

    def until(self, pieces: int, fn: Callable[[int], None]) -> None:
        for i in range(pieces):
            fn(i)
