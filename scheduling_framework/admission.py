"""Moved to :mod:`scheduling_framework.ingest.admission`.

This path stays importable and is that very module: ``sys.modules`` holds the one module object under
both names, so patching either patches both."""

import sys

from scheduling_framework.ingest import admission as _module
from scheduling_framework.ingest.admission import *  # noqa: F403  (the public names, for readers and type checkers)

sys.modules[__name__] = _module
