"""``python -m scheduling_framework`` runs the CLI."""

import sys

from scheduling_framework.cli import main

sys.exit(main())
