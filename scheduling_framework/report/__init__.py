"""What a scheduling run looks like to people and tools: the resulting cluster as a manifest list,
terminal tables, the progress bar, and the self-contained HTML report.

The CLI is a thin layer over these modules; embedders can call them on a :class:`~scheduling_framework.Scheduler`
of their own.
"""

from scheduling_framework.report.export import resulting_cluster

__all__ = ["resulting_cluster"]
