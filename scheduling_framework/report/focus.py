"""Choosing what to show: ``--pod`` glob patterns, and the single pod ``capacity --pod`` reads."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence

from scheduling_framework.api.pod import Pod
from scheduling_framework.errors import InputError
from scheduling_framework.warning_list import Warnings


class PodMatcher:
    """Matches ``namespace/name`` keys against shell-style globs (``shop/web-*``, ``*/api-?``).

    A pattern without ``/`` matches the name in any namespace. No pattern at all matches every pod.
    Calling the matcher with a key says whether any pattern matches it.
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = list(patterns)
        self._regex = [(p, re.compile(fnmatch.translate(p if "/" in p else f"*/{p}"))) for p in self.patterns]

    def __call__(self, key: str) -> bool:
        if not self._regex:
            return True
        return any(rx.match(key) for _, rx in self._regex)

    def as_pod_predicate(self) -> Callable[[Pod], bool]:
        return lambda pod: self(pod.key)

    def unmatched(self, keys: Iterable[str]) -> list[str]:
        """The patterns that match none of ``keys`` (a typo shows nothing: say so)."""
        left = dict(self._regex)
        for k in keys:
            for p in [p for p, rx in left.items() if rx.match(k)]:
                del left[p]
            if not left:
                break
        return list(left)


def pod_matcher(patterns: Sequence[str]) -> PodMatcher:
    return PodMatcher(patterns)


def load_single_pod(path: str | os.PathLike[str], *, max_input_bytes: int | None = None, strict: bool = False,
                    warnings: Warnings | None = None) -> Pod:
    """The one Pod in a YAML file (a Pod manifest, or a stream / ``kind: List`` holding exactly one Pod).
    Raises InputError when the file holds no Pod or several. Reading the file warns into ``warnings``
    (unknown fields: errors with ``strict``)."""
    from scheduling_framework.ingest.cluster import load_cluster

    c = load_cluster(path, max_input_bytes=max_input_bytes, strict=strict)
    if warnings is not None:
        warnings.extend(c.warnings)
    name = "standard input" if os.fspath(path) == "-" else os.fspath(path)
    if len(c.pods) != 1:
        found = ", ".join(p.key for p in c.pods[:5]) or "none"
        raise InputError(name, f"--pod: expected exactly one Pod in {name}, found {len(c.pods)} ({found})")
    return c.pods[0]
