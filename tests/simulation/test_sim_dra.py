"""The embedding API with DRA: device allocations follow forks, drains and node templates."""

from __future__ import annotations

from typing import Any

from scheduling_framework.ingest.cluster import cluster_from_documents
from scheduling_framework.simulation import Simulator
from tests.plugins.test_dynamicresources import DEVICE_CLASS, TEMPLATE, gpu_slice, node, pod

GPU_CLAIM = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def sim(docs: list[dict[str, Any]]) -> Simulator:
    return Simulator.from_cluster(cluster_from_documents(docs), seed=1)


def base() -> list[dict[str, Any]]:
    return [node("cpu-1"), node("gpu-1"), node("gpu-2"), DEVICE_CLASS, TEMPLATE, gpu_slice("gpu-1", 1),
            gpu_slice("gpu-2", 1)]


def pending(n: int, prefix: str = "train") -> list[Any]:
    return cluster_from_documents([pod(f"{prefix}-{i}", GPU_CLAIM) for i in range(n)]).pods


def allocated(s: Simulator) -> list[str]:
    return sorted(c.status["allocation"]["devices"]["results"][0]["pool"]
                  for c in s.objects.list("ResourceClaim") if c.status.get("allocation"))


def test_schedule_pods_allocates_devices_one_pod_after_another() -> None:
    s = sim(base())
    out = s.schedule_pods(pending(3))
    assert sorted(n for n in out.placements.values()) == ["gpu-1", "gpu-2"]
    [msg] = out.unschedulable.values()
    assert msg.startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    assert allocated(s) == ["gpu-1", "gpu-2"]
    key, node_name = next(iter(out.placements.items()))
    [claim] = s.pod_claims(key)
    assert claim["allocation"]["devices"][0]["pool"] == node_name


def test_fork_revert_takes_allocations_and_generated_claims_back() -> None:
    s = sim(base())
    with s.fork():
        s.schedule_pods(pending(2))
        assert allocated(s) == ["gpu-1", "gpu-2"]
    assert allocated(s) == []
    assert s.objects.list("ResourceClaim") == []
    f = s.fork()
    s.schedule_pods(pending(1))
    f.commit()
    assert len(allocated(s)) == 1


def test_check_pod_on_node_sees_devices() -> None:
    s = sim(base())
    p = pending(1)[0]
    assert s.check_pod_on_node(p, "gpu-1") is None
    st = s.check_pod_on_node(p, "cpu-1")
    assert st is not None and st.reasons == ["cannot allocate all claims"]


def test_drain_moves_a_gpu_pod_to_the_other_gpu_node_only() -> None:
    s = sim(base())
    f = s.fork()
    s.schedule_pods(pending(1))
    f.commit()
    [(key, first)] = [(k, n) for k, n in s.cluster.pod_nodes().items()] if hasattr(s.cluster, "pod_nodes") else \
        [(p.key, s.cluster.pod_node(p)) for p in s.cluster.pods()]
    result = s.drain_node(first)
    other = "gpu-2" if first == "gpu-1" else "gpu-1"
    assert result.outcome.placements == {key: other}
    # reverted: the original allocation is back
    assert allocated(s) == [first]
    result = s.drain_node(other if False else first, commit=True)
    assert allocated(s) == [other]


def test_node_template_brings_its_resource_slices() -> None:
    c = cluster_from_documents(base())
    s = Simulator.from_cluster(c, seed=1)
    tmpl = next(n for n in c.nodes if n.name == "gpu-1")
    with s.fork():
        names = s.add_node_from_template(tmpl, 2, "gpu-new")
        assert names == ["gpu-new-0", "gpu-new-1"]
        slices = {o.name: (o.spec["nodeName"], o.spec["pool"]["name"]) for o in s.objects.list("ResourceSlice")}
        assert slices["gpu-new-0-gpus"] == ("gpu-new-0", "gpu-new-0")
        out = s.schedule_pods(pending(4))
        assert sorted(out.placements.values()) == ["gpu-1", "gpu-2", "gpu-new-0", "gpu-new-1"]
    assert len(s.objects.list("ResourceSlice")) == 2
    with s.fork():
        s.add_node_from_template(tmpl, 1, "bare", resource_slices=False)
        assert len(s.objects.list("ResourceSlice")) == 2
