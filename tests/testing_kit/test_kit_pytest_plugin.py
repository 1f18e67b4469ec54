"""The pytest plugin: installed through the ``pytest11`` entry point, its fixtures need no conftest."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from scheduling_framework import CycleState
from scheduling_framework.testing import FakeCluster, make_node, make_pod
from scheduling_framework.testing.pytest_plugin import FrameworkFactory

# What a plugin author writes: a plugin and a ~10-line test, nothing else (no conftest, no imports of fixtures).
AUTHOR_TEST = '''
from scheduling_framework import Code, Status
from scheduling_framework.testing import make_node, make_pod


class GpuOnly:
    name = "GpuOnly"

    def __init__(self, args, handle):
        self.label = (args or {}).get("label", "gpu")

    def filter(self, state, pod, node_info):
        if node_info.node.labels.get(self.label) == "true":
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) have no GPU")


def test_gpu_pods_land_on_gpu_nodes(fake_cluster, framework_factory):
    fake_cluster.add_nodes(2).add_node(make_node().name("gpu-1").label("accel", "true"))
    fw = framework_factory([GpuOnly], args={"GpuOnly": {"label": "accel"}})
    result = fw.schedule(make_pod().name("train"))
    assert result["node"] == "gpu-1"
    assert fw.filter(make_pod().name("x"))["node-1"]["reasons"] == ["node(s) have no GPU"]


def test_cycle_state_fixture(cycle_state):
    cycle_state.write("k", 1)
    assert cycle_state.read("k") == 1
'''


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_author.py").write_text(AUTHOR_TEST)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_author.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_the_entry_point_is_declared() -> None:
    eps = [ep for ep in importlib.metadata.entry_points(group="pytest11") if ep.name == "scheduling_framework"]
    assert [ep.value for ep in eps] == ["scheduling_framework.testing.pytest_plugin"], (
        "the pytest11 entry point is missing: reinstall the package (pip install -e .)")


def test_an_authors_test_runs_with_no_conftest(tmp_path: Path) -> None:
    p = _pytest(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 passed" in p.stdout


def test_the_fixtures_come_from_the_plugin(tmp_path: Path) -> None:
    p = _pytest(tmp_path, "-p", "no:scheduling_framework")
    assert p.returncode != 0
    assert "fixture 'fake_cluster' not found" in p.stdout


def test_fixtures_in_process(fake_cluster: FakeCluster, framework_factory: FrameworkFactory,
                             cycle_state: CycleState) -> None:
    assert isinstance(fake_cluster, FakeCluster) and fake_cluster.nodes == []
    fake_cluster.add_node(make_node().name("n1").capacity(cpu="1"))
    fw = framework_factory(["NodeResourcesFit"])
    assert fw.schedule(make_pod().name("p").req(cpu="2"))["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert cycle_state.keys() == []


def test_the_factory_sees_the_cluster_at_call_time(fake_cluster: FakeCluster,
                                                   framework_factory: FrameworkFactory) -> None:
    before = framework_factory()
    fake_cluster.add_nodes(2)
    assert before.node_names() == []
    assert framework_factory().node_names() == ["node-1", "node-2"]
