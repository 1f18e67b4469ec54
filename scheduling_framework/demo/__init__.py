"""The README's demo cluster, shipped as package data so ``scheduling-framework demo`` runs from a bare wheel.

``cluster.yaml`` here is a copy of ``examples/cluster.yaml`` (a test keeps the two identical).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path


@contextlib.contextmanager
def demo_cluster_path() -> Iterator[Path]:
    """A filesystem path to the demo cluster for the duration of the ``with`` block (zip-safe)."""
    with resources.as_file(resources.files(__name__) / "cluster.yaml") as path:
        yield path
