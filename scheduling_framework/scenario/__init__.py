"""Scenarios over time (``replay``) and sweeps of many what-ifs (``sweep``)."""

from scheduling_framework.scenario.model import Scenario, ScenarioError, Step, load_scenario, scenario_from_dict
from scheduling_framework.scenario.replay import ReplayResult, StepReport, run_scenario

__all__ = ["ReplayResult", "Scenario", "ScenarioError", "Step", "StepReport", "load_scenario", "run_scenario",
           "scenario_from_dict"]
