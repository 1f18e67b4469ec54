"""Moved to :mod:`scheduling_framework.ingest.overcommit`.

This path stays importable and is that very module: ``sys.modules`` holds the one module object under
both names, so patching either patches both."""

import sys

from scheduling_framework.ingest import overcommit as _module
from scheduling_framework.ingest.overcommit import *  # noqa: F403  (the public names, for readers and type checkers)

sys.modules[__name__] = _module
