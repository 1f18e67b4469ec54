"""The Framework runtime: builds a profile and runs every extension point with upstream semantics."""

from scheduling_framework.runtime.algorithm import (
    Algorithm,
    CycleError,
    Diagnosis,
    FitError,
    ScheduleResult,
    num_feasible_nodes_to_find,
)
from scheduling_framework.runtime.framework import Binder, Framework, NodePluginScores, Nominator, ScoreDetail
from scheduling_framework.runtime.parallelize import Parallelizer
from scheduling_framework.runtime.waiting_pods import WaitingPod

__all__ = [
    "Algorithm", "Binder", "CycleError", "Diagnosis", "FitError", "Framework", "NodePluginScores", "Nominator",
    "Parallelizer", "ScheduleResult", "ScoreDetail", "WaitingPod", "num_feasible_nodes_to_find",
]
