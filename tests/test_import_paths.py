"""Every import path the documentation has shown stays importable, and a moved module's old path is the module itself.

The layout moved the ingest pipeline's later stages into ``scheduling_framework.ingest``, the scheduler's state
into ``scheduling_framework.state`` and the claim logic into ``scheduling_framework.dra`` (docs/architecture.md);
users' and third-party plugins' imports of the old paths must keep working, patching included.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from tests.fixture_runner import ROOT

#: old path -> new home
MOVED = {
    "scheduling_framework._input": "scheduling_framework.ingest.untrusted",
    "scheduling_framework.cluster": "scheduling_framework.ingest.cluster",
    "scheduling_framework.admission": "scheduling_framework.ingest.admission",
    "scheduling_framework.workloads": "scheduling_framework.ingest.workloads",
    "scheduling_framework.overcommit": "scheduling_framework.ingest.overcommit",
    "scheduling_framework.resource_claims": "scheduling_framework.dra.claims",
    "scheduling_framework.podgroups": "scheduling_framework.state.podgroups",
    "scheduling_framework.cache": "scheduling_framework.state.cache",
    "scheduling_framework.queue": "scheduling_framework.state.queue",
    "scheduling_framework.pod_index": "scheduling_framework.state.pod_index",
    "scheduling_framework.node_info": "scheduling_framework.state.node_info",
    "scheduling_framework.snapshot": "scheduling_framework.state.snapshot",
}

#: Every ``from X import names`` the docs, the README and the examples showed before the move (and since).
DOCUMENTED = [
    ("scheduling_framework", "Code CycleState NodeInfo PluginError PreFilterResult Status Framework Snapshot Registry "
                             "Scheduler load_config"),
    ("scheduling_framework.api", "Node Pod"),
    ("scheduling_framework.api.fields", "UnknownFieldWarning"),
    ("scheduling_framework.api.objects", "KubeObject"),
    ("scheduling_framework.api.pod", "Pod"),
    ("scheduling_framework.api.resource", "DeviceClass ResourceClaim ResourceSlice"),
    ("scheduling_framework.api.selectors", "LabelSelector LabelSelectorRequirement"),
    ("scheduling_framework.autoscaler.groups", "load_node_groups"),
    ("scheduling_framework.autoscaler.plan", "autoscale"),
    ("scheduling_framework.autoscaler.report", "report_data write_report"),
    ("scheduling_framework.cluster", "load_cluster register_object_kinds"),
    ("scheduling_framework.comparison", "Side compare"),
    ("scheduling_framework.config.view", "config_view"),
    ("scheduling_framework.cycle_state", "CycleState"),
    ("scheduling_framework.dra", "AllocatedState Allocator AllocatorError CELCache Features"),
    ("scheduling_framework.errors", "ManifestValidationError"),
    ("scheduling_framework.extender", "ExtenderServer"),
    ("scheduling_framework.features", "gang_scheduling_gates"),
    ("scheduling_framework.ingest.model", "Cluster"),
    ("scheduling_framework.interfaces", "PostFilterResult QueuedPodInfo"),
    ("scheduling_framework.registry", "default_registry discover"),
    ("scheduling_framework.runtime", "Algorithm"),
    ("scheduling_framework.runtime.waiting_pods", "WaitingPod WaitingPodsMap"),
    ("scheduling_framework.scenario", "ScenarioError run_scenario scenario_from_dict load_scenario"),
    ("scheduling_framework.scenario.sweep", "load_sweep run_sweep summary sweep_from_dict"),
    ("scheduling_framework.simulation", "ClusterSnapshot Simulator"),
    ("scheduling_framework.simulation.simulator", "Simulator DrainResult ScheduleOutcome"),
    ("scheduling_framework.snapshot", "ObjectStore Snapshot"),
    ("scheduling_framework.status", "Code Status"),
    ("scheduling_framework.testing", "FakeCluster make_node make_pod framework_for make_label_selector node_info"),
    ("scheduling_framework.warning_list", "merged"),
    ("scheduling_framework.node_info", "NodeInfo PodInfo Resource"),
    ("scheduling_framework.workloads", "expand_workloads"),
    ("scheduling_framework.admission", "Admission PriorityAdmission"),
    ("scheduling_framework.resource_claims", "RESOURCE_CLAIM"),
]


@pytest.mark.parametrize(("module", "names"), DOCUMENTED, ids=[m for m, _ in DOCUMENTED])
def test_documented_imports_work(module: str, names: str) -> None:
    mod = importlib.import_module(module)
    for name in names.split():
        assert getattr(mod, name) is not None, f"from {module} import {name}"


@pytest.mark.parametrize(("old", "new"), MOVED.items(), ids=list(MOVED))
def test_a_moved_module_is_its_old_path(old: str, new: str, monkeypatch: pytest.MonkeyPatch) -> None:
    old_mod, new_mod = importlib.import_module(old), importlib.import_module(new)
    assert old_mod is new_mod
    public = [n for n in vars(new_mod) if not n.startswith("_")]
    assert public
    monkeypatch.setattr(old_mod, "_patched_through_the_old_path", 1, raising=False)
    assert new_mod._patched_through_the_old_path == 1  # type: ignore[attr-defined]


def test_old_paths_import_first_in_a_fresh_interpreter() -> None:
    """Each old path as the first import of a process (the order a user's script has): no half-initialized
    module on the way."""
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    for old in MOVED:
        done = subprocess.run([sys.executable, "-c", code, old], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, (old, done.stderr[-2000:])
