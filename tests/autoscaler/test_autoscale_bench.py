"""benchmarks/autoscale.py runs (on a small dump of gen_dump.py's shape: each node's group label before its name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.autoscale import measure, prepare


def test_the_benchmark_measures_scale_up_and_scale_down(tmp_path: Path) -> None:
    nodes = []
    for i in range(4):
        name = f"ip-10-0-{i}-0.ec2.internal"
        nodes.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {"eks.amazonaws.com/nodegroup": f"ng-{i}",
                                                            "kubernetes.io/hostname": name}},
                      "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    src = tmp_path / "c.json"
    src.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}, indent=1), encoding="utf-8")
    dump, groups, n = prepare(str(src), 6, str(tmp_path))
    res = measure(dump, groups, 1)
    assert n == 4 and res["schedulableOnExisting"] == 4 and res["chosen"] is not None
    assert all(len(v) == 1 and v[0] > 0 for v in res["runs"].values())


GEN_DUMP = Path(__file__).resolve().parents[3] / "shared" / "upstream-go" / "gen_dump.py"


@pytest.mark.skipif(not GEN_DUMP.is_file(), reason=f"{GEN_DUMP} is not on this machine")
def test_a_realistic_dump_end_to_end(tmp_path: Path) -> None:
    """The real generator's 20-node dump (four node groups, DaemonSets, Deployments), 30 big pods added: every
    pending pod the current nodes take is placed there, the others go to the groups that help, and the scan
    finds candidates or says what blocks each node."""
    import subprocess
    import sys

    import yaml

    p = subprocess.run([sys.executable, str(GEN_DUMP), "--nodes", "20", "--format", "yaml", "--no-managed-fields"],
                       capture_output=True, text=True, check=True, timeout=120)
    src = tmp_path / "c20.json"
    src.write_text(json.dumps(yaml.load(p.stdout, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), indent=1))
    dump, groups, n = prepare(str(src), 30, str(tmp_path))
    from scheduling_framework.autoscaler.groups import load_node_groups
    from scheduling_framework.autoscaler.plan import autoscale
    from scheduling_framework.ingest.cluster import load_cluster

    cluster = load_cluster(dump)
    plan = autoscale(cluster, load_node_groups(yaml.safe_load(Path(groups).read_text()), cluster.nodes), seed=1,
                     expanders=["least-waste"])
    assert n == 20
    assert plan.chosen is not None and plan.chosen in plan.options
    assert len({k for o in plan.options for k in o.pods}) >= 30 and plan.unhelpable == ()
    assert plan.candidates or plan.blocked
