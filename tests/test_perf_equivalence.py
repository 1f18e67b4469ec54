"""The hot-path shortcuts give exactly what the plain paths give.

* the batch forms (``score_nodes``, ``normalize_values``) equal ``score`` / ``normalize_score`` node by node;
* the specialised cpu/memory resource scorers equal the vector scorers they stand for;
* results remembered on NodeInfos (``NodeInfo.memo``) never outlive a change: scheduling with memos equals
  scheduling with every memo dropped before each cycle;
* the snapshot's lists of nodes with (anti-)affinity pods, patched in place, equal the lists rebuilt.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from plugins_intree.noderesources.balanced_allocation import balanced_nodes_scorer, balanced_resource_scorer
from plugins_intree.noderesources.least_allocated import least_nodes_scorer, least_resource_scorer
from plugins_intree.noderesources.most_allocated import most_nodes_scorer, most_resource_scorer
from plugins_intree.noderesources.resource_allocation import ResourceAllocationScorer
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import ResourceSpec
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.runtime.framework import batch_normalizer, batch_scorer
from scheduling_framework.scheduler import Scheduler
from scheduling_framework.state.node_info import ImageStateSummary, NodeInfo, PodInfo, Resource
from scheduling_framework.state.snapshot import Snapshot

ZONES = ("z1", "z2", "z3")
APPS = ("a", "b", "c")


# --- a random cluster exercising every in-tree score plugin ----------------------------------------------


def _node(rng: random.Random, i: int) -> Node:
    name = f"n{i}"
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": rng.choice(ZONES)}
    if rng.random() < 0.3:
        labels["disk"] = rng.choice(("ssd", "hdd"))
    taints = [{"key": "t", "value": rng.choice(("x", "y")), "effect": "PreferNoSchedule"}] if rng.random() < 0.3 else []
    images = [{"names": [f"img{j}:latest"], "sizeBytes": rng.choice((10, 300, 900)) * 1024 * 1024}
              for j in range(3) if rng.random() < 0.4]
    return Node.from_dict({
        "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"taints": taints},
        "status": {"capacity": {"cpu": rng.choice(("2", "4", "8")), "memory": rng.choice(("4Gi", "16Gi")),
                                "pods": "20"}, "images": images}})


def _term(rng: random.Random, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": rng.choice(APPS)}}, "topologyKey": key}


def _pod(rng: random.Random, i: int, node: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{
        "name": "c", "image": f"img{rng.randrange(4)}",
        "resources": {"requests": {"cpu": rng.choice(("100m", "250m", "1")), "memory": rng.choice(("128Mi", "1Gi"))}}
        if rng.random() < 0.8 else {}}]}
    if node:
        spec["nodeName"] = node
    aff: dict[str, Any] = {}
    if rng.random() < 0.3:
        aff["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng, "topology.kubernetes.io/zone")}]}
    if rng.random() < 0.3:
        aff["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng, "kubernetes.io/hostname")}]}
        if rng.random() < 0.3:
            aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _term(rng, "kubernetes.io/hostname")]
    if rng.random() < 0.2:
        required = [_term(rng, "topology.kubernetes.io/zone")]
        aff["podAffinity"] = {**aff.get("podAffinity", {}), "requiredDuringSchedulingIgnoredDuringExecution": required}
    if rng.random() < 0.3:
        aff["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 50), "preference": {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}
    if aff:
        spec["affinity"] = aff
    if rng.random() < 0.4:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.randint(1, 3), "topologyKey": rng.choice(("topology.kubernetes.io/zone",
                                                                     "kubernetes.io/hostname")),
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}}}]
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "t", "operator": "Equal", "value": "x", "effect": "PreferNoSchedule"}]
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": rng.choice(("default", "other")),
                                                      "labels": {"app": rng.choice(APPS)}}, "spec": spec})


def _cluster(seed: int, nodes: int = 12, bound: int = 25, pending: int = 30
             ) -> tuple[list[Node], list[Pod], list[Pod]]:
    rng = random.Random(seed)
    ns = [_node(rng, i) for i in range(nodes)]
    running = [_pod(rng, i, rng.choice(ns).name) for i in range(bound)]
    waiting = [_pod(rng, bound + i) for i in range(pending)]
    return ns, running, waiting


def _scheduler(nodes: list[Node], pods: list[Pod]) -> Scheduler:
    sched = Scheduler(seed=7)
    for name in ("default", "other"):
        sched.add_object(KubeObject.from_dict({"kind": "Namespace", "metadata": {"name": name}}))
    sched.load(nodes, pods)
    return sched


# --- batch forms ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_batch_scores_equal_node_by_node_scores(seed: int) -> None:
    nodes, running, waiting = _cluster(seed)
    sched = _scheduler(nodes, running)
    fwk = sched.profile()
    sched.cache.update_snapshot(sched.snapshot)
    infos = sched.snapshot.list()
    checked = 0
    for pod in waiting:
        state = CycleState()
        fwk.run_pre_filter_plugins(state, pod, infos)
        fwk.run_pre_score_plugins(state, pod, infos)
        for pl in fwk.plugins_at("score"):
            if pl.name in state.skip_score_plugins:
                continue
            one_by_one = [pl.score(state, pod, ni) for ni in infos]
            batch = batch_scorer(pl)
            if batch is not None:
                got = batch(state, pod, infos)
                if got is not None:
                    assert got == [s for s, _ in one_by_one], pl.name
                    assert set(map(type, got)) <= {int}, pl.name  # the framework does not check ours (_ours)
                    checked += 1
            ext = pl.score_extensions()
            normalize = batch_normalizer(ext) if ext is not None else None
            if normalize is not None:
                raw = [s for s, _ in one_by_one]
                scores = [NodeScore(ni.name, s) for ni, s in zip(infos, raw, strict=True)]
                ext.normalize_score(state, pod, scores)
                got = normalize(state, pod, [ni.name for ni in infos], list(raw))
                if got is not None:
                    assert got == [ns.score for ns in scores], pl.name
                    assert set(map(type, got)) <= {int}, pl.name
                    checked += 1
    assert checked > 0


@pytest.mark.parametrize("read_only", [False, True], ids=["dict", "mapping-proxy"])
def test_imagelocality_batch_equals_score_for_one_image(read_only: bool) -> None:
    """ImageLocality's one-image batch (a score per distinct image summary) equals Score per node, with image
    states in a dict or in another mapping (set by hand)."""
    import types

    from plugins_intree.imagelocality.plugin import ImageLocality
    from scheduling_framework.state.node_info import ImageStateSummary

    pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}})
    shared = ImageStateSummary(300 * 1024 * 1024, 2)
    infos = []
    for i, states in enumerate([{"nginx:1.25": shared}, {}, {"nginx:1.25": ImageStateSummary(900 * 1024 * 1024, 3)},
                                {"other:1": shared}, {"nginx:1.25": shared}]):
        ni = NodeInfo(Node.from_dict({"kind": "Node", "metadata": {"name": f"n{i}"}}))
        ni.image_states = types.MappingProxyType(states) if read_only else states  # type: ignore[assignment]
        infos.append(ni)
    state = CycleState()
    pl = ImageLocality(None, types.SimpleNamespace(snapshot=Snapshot({ni.name: ni for ni in infos})))
    want = [pl.score(state, pod, ni)[0] for ni in infos]
    assert pl.score_nodes(state, pod, infos) == want
    assert len(set(want)) == 3


def test_batch_form_is_ignored_when_a_subclass_overrides_score() -> None:
    from plugins_intree.noderesources.fit import Fit

    class Custom(Fit):
        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, None]:
            return 42, None

    assert batch_scorer(Fit(None, None)) is not None
    assert batch_scorer(Custom(None, None)) is None


# --- specialised resource scorers ---------------------------------------------------------------------


def _value(rng: random.Random) -> int:
    return rng.choice((0, 0, rng.randint(0, 10), rng.randint(0, 5000), rng.randint(0, 1 << 40), -rng.randint(0, 9)))


@pytest.mark.parametrize("seed", range(4))
def test_cpu_memory_scorers_equal_the_vector_scorers(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3000):
        resources = (ResourceSpec("cpu", rng.choice((0, 1, 2, 5))), ResourceSpec("memory", rng.choice((0, 1, 3))))
        ni = NodeInfo()
        ni.allocatable = Resource(_value(rng), _value(rng))
        ni.requested = Resource(_value(rng), _value(rng))
        ni.non_zero_requested = Resource(_value(rng), _value(rng))
        requests = (_value(rng), _value(rng))
        for vector, nodes_scorer, use_requested in (
                (least_resource_scorer(resources), least_nodes_scorer(resources), False),
                (most_resource_scorer(resources), most_nodes_scorer(resources), False),
                (balanced_resource_scorer, balanced_nodes_scorer(resources), True)):
            plain = ResourceAllocationScorer("x", resources, vector, use_requested=use_requested)
            assert nodes_scorer is not None
            assert plain.score(ni, requests) == (nodes_scorer((ni,), requests)[0], None)


def test_specialised_scorers_only_for_cpu_then_memory() -> None:
    assert least_nodes_scorer((ResourceSpec("memory"), ResourceSpec("cpu"))) is None
    assert balanced_nodes_scorer((ResourceSpec("cpu"),)) is None


# --- memos ----------------------------------------------------------------------------------------------


def _run(seed: int, drop_memos: bool) -> list[tuple[str, str, str | None, str]]:
    nodes, running, waiting = _cluster(seed, nodes=10, bound=20, pending=40)
    sched = _scheduler(nodes, [*running, *waiting])
    out = []
    while True:
        if drop_memos:
            for ni in sched.snapshot.list():
                ni.forget()
        r = sched.schedule_one()
        if r is None:
            break
        out.append((r.pod, r.outcome, r.node, r.message))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_memos_do_not_change_decisions(seed: int) -> None:
    assert _run(seed, drop_memos=False) == _run(seed, drop_memos=True)


def test_memo_is_emptied_by_every_change() -> None:
    nodes, running, _ = _cluster(1, nodes=1, bound=2, pending=0)
    ni = NodeInfo(nodes[0], running)
    ni.memo["k"] = 1
    extra = _pod(random.Random(3), 99, nodes[0].name)
    ni.add_pod(extra)
    assert not ni.memo
    ni.memo["k"] = 1
    ni.remove_pod(extra)
    assert not ni.memo
    ni.memo["k"] = 1
    ni.set_node(nodes[0])
    assert not ni.memo
    ni.memo["k"] = 1
    assert not ni.clone().memo
    for change in (lambda: ni.add_pod(extra), lambda: ni.remove_pod(extra), lambda: ni.set_node(nodes[0]),
                   ni.forget):
        ni.memo["k"] = 1
        generation = ni.generation
        change()
        assert not ni.memo and ni.generation != generation


# --- derived snapshot lists -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_patched_affinity_lists_equal_rebuilt_lists(seed: int) -> None:
    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=10, bound=15, pending=40)
    sched = _scheduler(nodes, running)
    cache, snapshot = sched.cache, sched.snapshot
    cache.update_snapshot(snapshot)
    placed: list[Pod] = []
    for pod in waiting:
        snapshot.have_pods_with_affinity_list()
        snapshot.have_pods_with_required_anti_affinity_list()
        if placed and rng.random() < 0.3:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            bound = pod.with_node_name(rng.choice(nodes).name)
            cache.add_pod(bound)
            placed.append(bound)
        cache.update_snapshot(snapshot)
        fresh = Snapshot(snapshot.node_info_map, [ni.name for ni in snapshot.list()])
        assert snapshot.have_pods_with_affinity_list() == fresh.have_pods_with_affinity_list()
        assert (snapshot.have_pods_with_required_anti_affinity_list()
                == fresh.have_pods_with_required_anti_affinity_list())


# --- PodTopologySpread domain counts kept across cycles ----------------------------------------------------


def _full_counts(nodes: list[NodeInfo], keys: list[str], cks: list[Any], required: list[str]) -> list[dict[str, int]]:
    """The counts computed plainly: every eligible node, every pod."""
    from plugins_intree.podtopologyspread.common import count_pods_match_selector

    out: list[dict[str, int]] = [{} for _ in keys]
    for ni in nodes:
        if ni.node is None:
            continue
        labels = ni.node.metadata.labels
        if any(k not in labels for k in required):
            continue
        for m, key, ck in zip(out, keys, cks, strict=True):
            value = labels.get(key, "")
            m[value] = m.get(value, 0) + count_pods_match_selector(ni.pods, ck.selector, ck.namespace)
    return out


@pytest.mark.parametrize("seed", range(8))
def test_domain_counts_kept_across_changes_equal_a_fresh_count(seed: int) -> None:
    from plugins_intree.podtopologyspread.common import CountKey
    from plugins_intree.podtopologyspread.domains import DomainCounts
    from scheduling_framework.api.selectors import LabelSelector

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=30, bound=40, pending=60)
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in running:
        infos[p.spec.node_name].add_pod(p)
    order = [n.name for n in nodes]
    cks = [CountKey(LabelSelector({"app": rng.choice(APPS)}), ns) for ns in ("default", "other")]
    keys = ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    for required in (keys, []):
        kept = DomainCounts(keys, cks, required, "")
        current = [infos[n] for n in order]
        for step, pod in enumerate(waiting):
            name = rng.choice(order)
            action = rng.random()
            if action < 0.4:  # a new snapshot clone with the pod (what the cache does)
                c = infos[name].clone()
                c.add_pod(pod.with_node_name(name))
                infos[name] = c
            elif action < 0.6:  # the same NodeInfo changed in place
                infos[name].add_pod(pod.with_node_name(name))
            elif action < 0.7 and infos[name].pods:  # a pod leaves
                infos[name].remove_pod(infos[name].pods[0])
            elif action < 0.8:  # the node relabelled (another node object)
                old = infos[name].node
                assert old is not None
                manifest = old.to_dict()
                manifest["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(ZONES)
                infos[name].set_node(Node.from_dict(manifest))
            elif action < 0.85:  # node order changes
                rng.shuffle(order)
            current = [infos[n] for n in order]
            got = kept.counts(current)
            want = _full_counts(current, keys, cks, required)
            assert got == want, step
            assert [list(m) for m in got] == [list(m) for m in want], step  # same key order


@pytest.mark.parametrize("seed", range(6))
def test_prefilter_result_lookup(seed: int) -> None:
    """The by-name lookup of a PreFilterResult's nodes equals filtering the whole node list, in order,
    also after nodes are added and removed (stale position index)."""
    from scheduling_framework.runtime.algorithm import _allowed_in_order

    rng = random.Random(seed)
    names = [f"n{i:03d}" for i in range(rng.randint(20, 120))]
    snap = Snapshot.from_objects([Node.from_dict({"metadata": {"name": n}}) for n in names])
    for _round in range(5):
        allowed = set(rng.sample(names, rng.randint(0, max(1, len(names) // 10)))) | {"missing-node"}
        expected = [ni for ni in snap.list() if ni.name in allowed]
        assert [ni.name for ni in _allowed_in_order(snap, allowed)] == [ni.name for ni in expected]
        # Reorder the list behind the index's back: the identity check must notice and rebuild.
        rng.shuffle(snap.node_info_list)


# --- constant score columns -------------------------------------------------------------------------------


def _totals(seed: int, plain: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str | None, Any]]:
    from plugins_intree.volumebinding import plugin as vb

    if plain:
        original = vb.VolumeBinding.pre_score

        def no_skip(self: Any, state: CycleState, pod: Pod, nodes: Any) -> Any:
            st = original(self, state, pod, nodes)
            return None if st is not None and st.code.name == "SKIP" and self.scorer is not None else st

        monkeypatch.setattr(vb.VolumeBinding, "pre_score", no_skip)
    nodes, running, waiting = _cluster(seed, nodes=8, bound=10, pending=25)
    sched = _scheduler(nodes, [*running, *waiting])
    sched.explain = True
    out = []
    for r in sched.run():
        d = r.to_dict(explain=True)
        out.append((r.pod, r.outcome, r.node, d.get("totalScores")))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("seed", range(4))
def test_volumebinding_skip_keeps_totals(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """VolumeBinding skips PreScore for pods without claims (an all-zero column): totals and decisions
    equal those of scoring every node with 0."""
    assert _totals(seed, False, monkeypatch) == _totals(seed, True, monkeypatch)


# --- PodTopologySpread per-domain evaluation, InterPodAffinity Filter (issue #17, lead 4) ------------------
# Filter verdicts and Score values are computed once per topology domain (or per distinct score input) per
# cycle, the domain counts follow the NodeInfo change journal; each equals the node-by-node plain path.

_SPREAD_KEYS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region", "kubernetes.io/hostname")


def _spread_node(rng: random.Random, i: int) -> Node:
    name = f"s{i}"
    # a few nodes share a hostname label: hostname spreading still counts each node's own pods
    labels = {"kubernetes.io/hostname": name if rng.random() < 0.85 else "shared"}
    if rng.random() < 0.9:
        labels["topology.kubernetes.io/zone"] = rng.choice(("z1", "z2", "z3", "z4"))
    if rng.random() < 0.8:
        labels["topology.kubernetes.io/region"] = rng.choice(("r1", "r2"))
    if rng.random() < 0.3:
        labels["disk"] = "ssd"
    taints = [{"key": "t", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.15 else []
    return Node.from_dict({"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"taints": taints},
                           "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "30"}}})


def _spread_pod(rng: random.Random, i: int, node: str = "") -> Pod:
    app = rng.choice(APPS)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img",
                                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
    if node:
        spec["nodeName"] = node
    constraints = []
    for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
        c: dict[str, Any] = {
            "maxSkew": rng.randint(1, 3), "topologyKey": rng.choice(_SPREAD_KEYS),
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
            "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}}}
        if rng.random() < 0.2:
            c["minDomains"] = rng.randint(1, 5)
            c["whenUnsatisfiable"] = "DoNotSchedule"
        if rng.random() < 0.2:
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.15:
            c["matchLabelKeys"] = ["tier"]
        constraints.append(c)
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": "ssd"}
    if rng.random() < 0.2:
        spec["tolerations"] = [{"key": "t", "operator": "Exists", "effect": "NoSchedule"}]
    labels = {"app": app}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(("web", "db"))
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": f"q{i}", "namespace": rng.choice(("default", "other")),
                                                      "labels": labels}, "spec": spec})


def _spread_infos(rng: random.Random, n: int, bound: int) -> list[NodeInfo]:
    nodes = [_spread_node(rng, i) for i in range(n)]
    infos = [NodeInfo(node) for node in nodes]
    for j in range(bound):
        ni = rng.choice(infos)
        ni.add_pod(_spread_pod(rng, 1000 + j, ni.name))
    return infos


def _spread_plugin(infos: list[NodeInfo], defaulting: str = "System") -> Any:
    from plugins_intree.podtopologyspread import PodTopologySpread

    class _Handle:
        snapshot = Snapshot({ni.name: ni for ni in infos}, [ni.name for ni in infos])
        objects = None

    return PodTopologySpread({"defaultingType": defaulting}, _Handle())


def _status_tuple(st: Any) -> Any:
    return None if st is None else (st.code, list(st.reasons))


@pytest.mark.parametrize("seed", range(10))
def test_spread_filter_per_domain_equals_per_node(seed: int) -> None:
    """Filter through the per-domain verdicts equals filter_node on each node, also after AddPod / RemovePod
    (what preemption does to a cloned state)."""
    from plugins_intree.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, filter_node

    rng = random.Random(seed)
    infos = _spread_infos(rng, rng.randint(5, 40), rng.randint(0, 80))
    plugin = _spread_plugin(infos)
    for k in range(15):
        pod = _spread_pod(rng, k)
        state = CycleState()
        _, st = plugin.pre_filter(state, pod, infos)
        if st is not None:
            continue
        for _round in range(3):
            s = state.read(PRE_FILTER_STATE_KEY)
            for ni in infos:
                assert ni.node is not None
                want = filter_node(s, ni.node) if s.constraints else None
                assert _status_tuple(plugin.filter(state, pod, ni)) == _status_tuple(want), (k, ni.name)
            # preemption's view: a cloned state with one pod added or removed on some node
            state = state.clone()
            ni = rng.choice(infos)
            if ni.pods and rng.random() < 0.5:
                plugin.remove_pod(state, pod, ni.pods[0], ni)
            else:
                plugin.add_pod(state, pod, PodInfo(_spread_pod(rng, 5000 + k, ni.name)), ni)


def _plain_domains(constraints: Any, filtered: list[NodeInfo], require_all: bool) -> tuple[set[str], list[list[str]]]:
    """The node-by-node domain pass calc_pre_score_state replaced: ignored nodes and domains in first-seen order."""
    from plugins_intree.podtopologyspread.common import LABEL_HOSTNAME, node_has_all_keys

    ignored: set[str] = set()
    domains: list[dict[str, int]] = [{} for _ in constraints]
    for ni in filtered:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all and not node_has_all_keys(labels, constraints):
            ignored.add(node.metadata.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:
                domains[i].setdefault(labels.get(c.topology_key, ""), 0)
    return ignored, [list(m) for m in domains]


@pytest.mark.parametrize("seed", range(10))
def test_spread_score_per_domain_equals_per_node(seed: int) -> None:
    """score_nodes (per distinct score input) equals score_node per node; normalize_values equals
    normalize_scores; PreScore's domains and ignored nodes equal the node-by-node pass."""
    from plugins_intree.podtopologyspread.common import SCHEDULE_ANYWAY
    from plugins_intree.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, normalize_scores, score_node

    rng = random.Random(seed)
    infos = _spread_infos(rng, rng.randint(5, 40), rng.randint(0, 80))
    for defaulting in ("System", "List"):
        plugin = _spread_plugin(infos, defaulting)
        for k in range(12):
            pod = _spread_pod(rng, k)
            if rng.random() < 0.3:
                pod = Pod.from_dict({**pod.to_dict(), "spec": {**pod.to_dict()["spec"],
                                                               "topologySpreadConstraints": []}})
            filtered = [ni for ni in infos if rng.random() < 0.7]
            state = CycleState()
            st = plugin.pre_score(state, pod, filtered)
            if st is not None:
                continue
            s = state.read(PRE_SCORE_STATE_KEY)
            constraints = plugin.constraints_for(pod, SCHEDULE_ANYWAY)
            require_all = bool(pod.spec.topology_spread_constraints) or not plugin.system_defaulted
            ignored, domains = _plain_domains(constraints, filtered, require_all)
            assert s.ignored_nodes == ignored
            assert [list(m) for m in s.topology_value_to_pod_counts] == domains
            want = [score_node(s, ni) for ni in filtered]
            got = plugin.score_nodes(state, pod, filtered)
            assert got == want, k
            names = [ni.name for ni in filtered]
            plain = [NodeScore(n, v) for n, v in zip(names, want, strict=True)]
            normalize_scores(s, plain)
            assert plugin.normalize_values(state, pod, names, list(want)) == [ns.score for ns in plain]


@pytest.mark.parametrize("seed", range(6))
def test_domain_counts_journal_equals_generation_scan(seed: int) -> None:
    """The journal-driven update of DomainCounts equals a fresh count when the same list is changed in place:
    clones swapped in, NodeInfos changed in place, old NodeInfos put back without a journal note (a fork
    reverted), the journal overflowing, and a NodeInfo listed twice."""
    from plugins_intree.podtopologyspread.common import CountKey
    from plugins_intree.podtopologyspread.domains import DomainCounts
    from scheduling_framework.api.selectors import LabelSelector
    from scheduling_framework.state.node_info import CHANGES

    rng = random.Random(seed)
    infos = _spread_infos(rng, 25, 40)
    cks = [CountKey(LabelSelector({"app": rng.choice(APPS)}), ns) for ns in ("default", "other")]
    keys = ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    for required in (keys, []):
        kept = DomainCounts(keys, cks, required, "")
        lst = list(infos)
        saved: list[tuple[int, NodeInfo]] = []
        for step in range(120):
            i = rng.randrange(len(lst))
            action = rng.random()
            if action < 0.3:  # a clone with one more pod, swapped into the same list (the cache's update)
                saved.append((i, lst[i]))
                c = lst[i].clone()
                c.add_pod(_spread_pod(rng, 3000 + step, c.name))
                lst[i] = c
            elif action < 0.5:  # changed in place
                lst[i].add_pod(_spread_pod(rng, 3000 + step, lst[i].name))
            elif action < 0.6 and lst[i].pods:
                lst[i].remove_pod(lst[i].pods[-1])
            elif action < 0.75 and saved:  # an older NodeInfo put back: nothing noted in the journal
                j, old = saved.pop()
                lst[j] = old
            elif action < 0.8:  # many notes: the journal forgets the oldest
                scratch = NodeInfo()
                for _ in range(CHANGES.limit + 1):
                    scratch.clone()
            elif action < 0.86:  # relabelled in place, sometimes renamed too
                node = lst[i].node
                assert node is not None
                manifest = node.to_dict()
                manifest["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(("z1", "z2", "z9"))
                if rng.random() < 0.5:
                    manifest["metadata"]["name"] = f"renamed{step}"
                lst[i].set_node(Node.from_dict(manifest))
            elif action < 0.89:  # one NodeInfo at two places, for a while
                j = rng.randrange(len(lst))
                saved.append((j, lst[j]))
                lst[j] = lst[i]
            got = kept.counts(lst)
            want = _full_counts(lst, keys, cks, required)
            assert got == want, step
            assert [list(m) for m in got] == [list(m) for m in want], step


def _spread_run(seed: int, plain: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    from plugins_intree.podtopologyspread import plugin as pts
    from plugins_intree.podtopologyspread.scoring import normalize_scores, score_node
    from scheduling_framework.state.node_info import ChangedNodes

    if plain:
        def plain_filter(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
            s = self._pre_filter_state(state)
            assert node_info.node is not None
            return pts.filter_node(s, node_info.node) if s.constraints else None

        def plain_normalize(s: Any, names: list[str], scores: list[int]) -> list[int]:
            out = [NodeScore(n, v) for n, v in zip(names, scores, strict=True)]
            normalize_scores(s, out)
            return [ns.score for ns in out]

        monkeypatch.setattr(pts.PodTopologySpread, "filter", plain_filter)
        monkeypatch.setattr(pts, "score_domains", lambda s, nodes: [score_node(s, ni) for ni in nodes])
        monkeypatch.setattr(pts, "normalize_values", plain_normalize)
        monkeypatch.setattr(ChangedNodes, "_from_journal", lambda self, nodes: None)
    rng = random.Random(seed)
    nodes = [_spread_node(rng, i) for i in range(rng.randint(6, 25))]
    running = [_spread_pod(rng, 1000 + j, rng.choice(nodes).name) for j in range(rng.randint(0, 30))]
    waiting = [_spread_pod(rng, j) for j in range(40)]
    sched = _scheduler(nodes, [*running, *waiting])
    sched.explain = seed % 2 == 0
    out = []
    for r in sched.run():
        d = r.to_dict(explain=True) if sched.explain else {}
        out.append((r.pod, r.outcome, r.node, r.message, d.get("filter"), d.get("totalScores")))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("seed", range(6))
def test_spread_fast_paths_keep_decisions(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole scheduling runs: decisions, messages, per-node filter verdicts and totals equal those of the plain
    PodTopologySpread paths (per-node Filter / Score / NormalizeScore, generation-scanned domain counts)."""
    assert _spread_run(seed, False, monkeypatch) == _spread_run(seed, True, monkeypatch)


@pytest.mark.parametrize("seed", range(20))
def test_critical_paths_of_equals_updates(seed: int) -> None:
    """The two least domains found by ``min`` equal updating CriticalPaths with each domain in order (ties,
    one domain, none, the unset sentinel among the counts)."""
    from plugins_intree.podtopologyspread.filtering import _UNSET, CriticalPaths, critical_paths_of

    rng = random.Random(seed)
    for _ in range(50):
        m = {f"d{i}": rng.choice((0, 1, 1, 2, 3, rng.randint(0, 50), _UNSET)) for i in range(rng.randint(0, 12))}
        p = CriticalPaths()
        for value, num in m.items():
            p.update(value, num)
        assert critical_paths_of(m).as_tuple() == p.as_tuple(), m


def _pod_lands_or_leaves(infos: list[NodeInfo], i: int, rng: random.Random, step: int) -> None:
    """The cluster changes as the cache changes it: position ``i`` gets a clone with a pod more or one less."""
    c = infos[i].clone()
    if c.pods and rng.random() < 0.3:
        c.remove_pod(c.pods[0])
    else:
        c.add_pod(_spread_pod(rng, 7000 + step, c.name))
    infos[i] = c


@pytest.mark.parametrize("seed", range(8))
def test_spread_kept_counts_equal_plain_passes(seed: int) -> None:
    """PreFilter / PreScore states built from the counts kept across cycles (with node-inclusion policies:
    node affinity, taints) equal the states of the plain passes over every node, while the cluster changes."""
    from plugins_intree.podtopologyspread.common import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
    from plugins_intree.podtopologyspread.domains import DomainCountsCache
    from plugins_intree.podtopologyspread.filtering import calc_pre_filter_state
    from plugins_intree.podtopologyspread.scoring import calc_pre_score_state

    rng = random.Random(seed)
    infos = _spread_infos(rng, rng.randint(5, 40), rng.randint(0, 80))
    plugin = _spread_plugin(infos)
    cache = DomainCountsCache(limit=4)
    templates = [_spread_pod(rng, k) for k in range(6)]
    for step in range(40):
        pod = rng.choice(templates)
        hard = plugin.constraints_for(pod, DO_NOT_SCHEDULE)
        if hard:
            kept = calc_pre_filter_state(pod, hard, infos, cache)
            plain = calc_pre_filter_state(pod, hard, infos, None)
            assert repr(kept) == repr(plain), step
            assert [list(m) for m in kept.tp_value_to_match_num] == [list(m) for m in plain.tp_value_to_match_num]
        soft = plugin.constraints_for(pod, SCHEDULE_ANYWAY)
        if soft:
            filtered = [ni for ni in infos if rng.random() < 0.7]
            require_all = bool(pod.spec.topology_spread_constraints)
            kept_s = calc_pre_score_state(pod, soft, filtered, infos, require_all, cache)
            plain_s = calc_pre_score_state(pod, soft, filtered, infos, require_all, None)
            assert repr(kept_s) == repr(plain_s), step
        # the cluster changes: a pod lands (a clone swapped in, as the cache does) or leaves
        i = rng.randrange(len(infos))
        _pod_lands_or_leaves(infos, i, rng, step)


def _ipa_plain_filter(s: Any, labels: Any) -> Any:
    """InterPodAffinity's Filter checks as the plain path makes them (a new Status per node)."""
    from plugins_intree.interpodaffinity import filtering as f
    from scheduling_framework.status import Code, Status

    if s.affinity_terms and not f.satisfy_pod_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f.ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if s.anti_affinity_counts and not f.satisfy_pod_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, f.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if s.existing_anti_affinity_counts and not f.satisfy_existing_pods_anti_affinity(s, labels):
        return Status(Code.UNSCHEDULABLE, f.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return None


@pytest.mark.parametrize("seed", range(10))
def test_interpodaffinity_filter_fast_equals_plain(seed: int) -> None:
    """InterPodAffinity's Filter fast path (keys of the positive existing pairs, shared statuses) and its batch
    form (filter_nodes: a verdict per value when every pair is on one key) equal the plain checks on every node,
    also on cloned states after AddPod / RemovePod (preemption); incoming pods with required anti-affinity by
    hostname, by zone, or both."""
    from plugins_intree.interpodaffinity.filtering import PRE_FILTER_STATE_KEY

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 60), pending=25)
    for j in range(rng.randint(0, 15)):  # more existing pods with required anti-affinity, by zone and hostname
        running.append(Pod.from_dict({
            "kind": "Pod", "metadata": {"name": f"anti{j}", "namespace": rng.choice(("default", "other")),
                                        "labels": {"app": rng.choice(APPS)}},
            "spec": {"nodeName": rng.choice(nodes).name, "containers": [{"name": "c", "image": "i"}],
                     "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                         _term(rng, rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone")))]}}}}))
    for j in range(10):  # incoming pods with required anti-affinity of their own
        keys = rng.choice((["kubernetes.io/hostname"], ["topology.kubernetes.io/zone"],
                           ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]))
        waiting.append(Pod.from_dict({
            "kind": "Pod", "metadata": {"name": f"new-anti{j}", "namespace": "default",
                                        "labels": {"app": rng.choice(APPS)}},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                     "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                         _term(rng, key) for key in keys]}}}}))
    sched = _scheduler(nodes, running)
    sched.cache.update_snapshot(sched.snapshot)
    plugin = next(iter(sched.profiles.values())).plugins["InterPodAffinity"]
    infos = sched.snapshot.list()
    batched = 0
    for k, pod in enumerate(waiting):
        state = CycleState()
        _, st = plugin.pre_filter(state, pod, infos)
        if st is not None:
            continue
        for _round in range(3):
            s = state.read(PRE_FILTER_STATE_KEY)
            wants = []
            for ni in infos:
                assert ni.node is not None
                got = plugin.filter(state, pod, ni)
                want = _ipa_plain_filter(s, ni.node.metadata.labels)
                assert _status_tuple(got) == _status_tuple(want), (k, ni.name)
                wants.append(_status_tuple(want))
            many = plugin.filter_nodes(state, pod, infos)
            assert many is not None and [_status_tuple(st) for st in many] == wants, k
            batched += any(st is not None for st in many)
            state = state.clone()
            ni = rng.choice(infos)
            if ni.pods and rng.random() < 0.5:
                plugin.remove_pod(state, pod, ni.pods[0], ni)
            else:
                plugin.add_pod(state, pod, PodInfo(rng.choice(running).with_node_name(ni.name)), ni)
    assert batched


def _change_node_list(rng: random.Random, lst: list[NodeInfo], saved: list[tuple[int, NodeInfo]], step: int,
                      images: bool = False) -> None:
    """One random change of a node list as the cache and the simulator make them: a node cloned with a pod
    more (the old NodeInfo kept in ``saved``), a pod added or removed in place, a saved NodeInfo put back, a
    journal flooded past its limit, a node renamed, a NodeInfo listed twice, the list grown; with ``images``,
    also a node's image states replaced."""
    from scheduling_framework.state.node_info import CHANGES

    i = rng.randrange(len(lst))
    action = rng.random()
    if images and action < 0.1:
        lst[i].image_states = {f"img{step}": ImageStateSummary(1, 1)}
    elif action < 0.3:
        saved.append((i, lst[i]))
        c = lst[i].clone()
        c.add_pod(_spread_pod(rng, 3000 + step, c.name))
        lst[i] = c
    elif action < 0.45:
        lst[i].add_pod(_spread_pod(rng, 3000 + step, lst[i].name))
    elif action < 0.5 and lst[i].pods:
        lst[i].remove_pod(lst[i].pods[-1])
    elif action < 0.6 and saved:
        j, old = saved.pop()
        lst[j] = old
    elif action < 0.63:
        scratch = NodeInfo()
        for _ in range(CHANGES.limit + 1):
            scratch.clone()
    elif action < 0.66:
        node = lst[i].node
        assert node is not None
        manifest = node.to_dict()
        manifest["metadata"]["name"] = f"renamed{step}"
        lst[i].set_node(Node.from_dict(manifest))
    elif action < 0.69:
        j = rng.randrange(len(lst))
        saved.append((j, lst[j]))
        lst[j] = lst[i]
    elif action < 0.7:
        lst.append(lst[i].clone())


@pytest.mark.parametrize("seed", range(6))
def test_changed_nodes_equal_a_generation_scan(seed: int) -> None:
    """ChangedNodes names exactly the positions holding another NodeInfo or a changed one since the previous
    call (or asks for all of them), whatever happens to the list in between."""
    from scheduling_framework.state.node_info import ChangedNodes

    rng = random.Random(seed)
    lst = _spread_infos(rng, 25, 40)
    tracker = ChangedNodes()
    assert tracker.changed(lst) is None
    seen = [(ni, ni.generation) for ni in lst]
    saved: list[tuple[int, NodeInfo]] = []
    answered = 0
    for step in range(150):
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            _change_node_list(rng, lst, saved, step)
        got = tracker.changed(lst)
        if got is not None:
            answered += 1
            want = [i for i, ni in enumerate(lst) if (ni, ni.generation) != seen[i]]
            assert sorted(got) == want, step
        seen = [(ni, ni.generation) for ni in lst]
    assert answered > 50


@pytest.mark.parametrize("seed", range(8))
def test_node_columns_follow_every_change(seed: int) -> None:
    """NodeColumns (runtime/columns.py) hands back a kept answer only for the very NodeInfo content it was
    computed on, whatever happens to the node list in between: clones, changes in place, image states replaced,
    NodeInfos put back, renamed, listed twice, the list grown, nodes from outside the list (new, or once listed:
    their position hints are stale), hints moved by columns following another list, forgotten journals, columns
    forgotten for room."""
    from scheduling_framework.runtime.columns import NodeColumns

    def answer(ni: NodeInfo) -> tuple[Any, ...]:
        return ni.name, tuple(pi.pod.metadata.name for pi in ni.pods), tuple(sorted(ni.image_states))

    rng = random.Random(seed)
    lst = _spread_infos(rng, 25, 40)
    cols = NodeColumns(max_cells=rng.choice((10**6, 120)), max_log=rng.choice((256, 2)))
    other = NodeColumns()  # follows another list of the same NodeInfos: moves their position hints
    saved: list[tuple[int, NodeInfo]] = []
    reused = stored = 0
    for step in range(250):
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            _change_node_list(rng, lst, saved, step, images=True)
        if rng.random() < 0.15:
            shuffled = rng.sample(lst, len(lst))
            other.positions(shuffled[:2], shuffled)
        nodes = rng.sample(lst, rng.randint(1, len(lst)))
        if rng.random() < 0.3:
            nodes.insert(rng.randrange(len(nodes) + 1), lst[rng.randrange(len(lst))].clone())
        if saved and rng.random() < 0.3:
            nodes.insert(rng.randrange(len(nodes) + 1), rng.choice(saved)[1])
        positions = cols.positions(nodes, lst)
        for ni, p in zip(nodes, positions, strict=True):
            assert p == cols.spare or lst[p] is ni
        key = rng.randrange(6)
        col = cols.column(key)
        if col is None:
            col = cols.new_column(key)
        assert len(col) == cols.spare + 1 and col[cols.spare] is None
        for ni, p in zip(nodes, positions, strict=True):
            if col[p] is not None:
                assert col[p] == answer(ni), step
                reused += 1
            elif p != cols.spare:
                col[p] = answer(ni)
                stored += 1
    assert reused > 5 and stored > 100  # (10 and 127 on the seed with a 2-entry log and 120 cells; others 160+)


def _node_infos(nodes: list[Node], running: list[Pod]) -> list[NodeInfo]:
    """A NodeInfo per node, in order, holding the running pods bound to it."""
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in running:
        infos[p.spec.node_name].add_pod(p)
    return [infos[n.name] for n in nodes]


def _change_one_node(lst: list[NodeInfo], rng: random.Random, waiting: list[Pod], *, any_pod: bool = False) -> None:
    """As the snapshot changes between cycles: one position gets a clone with a pod removed (the first, or
    any one) or a waiting pod added."""
    i = rng.randrange(len(lst))
    c = lst[i].clone()
    if c.pods and rng.random() < 0.4:
        c.remove_pod(c.pods[rng.randrange(len(c.pods))] if any_pod else c.pods[0])
    else:
        c.add_pod(rng.choice(waiting).with_node_name(c.name))
    lst[i] = c


def _per_pod_topology_scores(pod: Pod, affinity: Any, anti: Any, ns_labels: Any, nodes: Any, all_pods: bool,
                             hard_weight: int) -> dict[str, dict[str, int]] | None:
    """Upstream's scoring loop as written: one addition per (existing pod, term) that matches."""
    from plugins_intree.interpodaffinity._terms import NO_LABELS

    scores: dict[str, dict[str, int]] = {}

    def add(key: str, value: str, amount: int) -> None:
        scores.setdefault(key, {})
        scores[key][value] = scores[key].get(value, 0) + amount

    for ni in nodes:
        labels = ni.node.metadata.labels if ni.node is not None else {}
        if not labels:
            continue
        for existing in (ni.pods if all_pods else ni.pods_with_affinity):
            for terms, target, ns, sign in ((affinity, existing.pod, NO_LABELS, 1), (anti, existing.pod, NO_LABELS, -1),
                                            (existing.preferred_affinity_terms, pod, ns_labels, 1),
                                            (existing.preferred_anti_affinity_terms, pod, ns_labels, -1)):
                for w in terms:
                    if w.term.matches(target, ns) and w.term.topology_key in labels:
                        add(w.term.topology_key, labels[w.term.topology_key], sign * w.weight)
            if hard_weight > 0:
                for t in existing.required_affinity_terms:
                    if t.matches(pod, ns_labels) and t.topology_key in labels:
                        add(t.topology_key, labels[t.topology_key], hard_weight)
    return scores or None


@pytest.mark.parametrize("seed", range(8))
def test_interpodaffinity_grouped_terms_equal_per_pod_additions(seed: int) -> None:
    """The scoring pass that counts matches per node and groups existing terms by canonical key gives the
    map of the per-(existing pod, term) loop, as the node list changes from cycle to cycle."""
    from plugins_intree.interpodaffinity import _terms
    from plugins_intree.interpodaffinity.scoring import topology_scores

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 80), pending=30)
    lst = _node_infos(nodes, running)
    for step in range(60):
        pod = rng.choice(waiting)
        pi = PodInfo(pod)
        for all_pods in (True, False):
            args = (pod, pi.preferred_affinity_terms, pi.preferred_anti_affinity_terms, _terms.NO_LABELS, lst,
                    all_pods, rng.choice((0, 1, 5)))
            assert topology_scores(*args) == _per_pod_topology_scores(*args), step
        _change_one_node(lst, rng, waiting)


@pytest.mark.parametrize("always_per_term", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_interpodaffinity_term_sums_equal_plain(seed: int, always_per_term: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """PreScore's sums kept per term across cycles (TermSums) equal the per-node pass, while nodes change,
    pods come with and without terms of their own, and the hard affinity weight varies; with repeated
    signatures sent to the per-signature sums (the default) or every pod summed per term."""
    from plugins_intree.interpodaffinity import _terms
    from plugins_intree.interpodaffinity._sums import KeptSumsCache
    from plugins_intree.interpodaffinity.scoring import TermSums, topology_scores

    if always_per_term:
        monkeypatch.setattr(TermSums, "seen_before", lambda self, signature: False)
    kept = KeptSumsCache(limit=3)

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 80), pending=30)
    lst = _node_infos(nodes, running)
    sums = TermSums()
    for step in range(80):
        pod = rng.choice(waiting)
        pi = PodInfo(pod)
        all_pods = bool(pi.preferred_affinity_terms or pi.preferred_anti_affinity_terms)
        with_affinity = [ni for ni in lst if ni.pods_with_affinity]
        listed = lst if all_pods else with_affinity
        args = (pod, pi.preferred_affinity_terms, pi.preferred_anti_affinity_terms, _terms.NO_LABELS, listed,
                all_pods, rng.choice((0, 1, 5)))
        assert topology_scores(*args, kept, sums, lst) == _per_pod_topology_scores(*args), step
        lst = list(lst)
        _change_one_node(lst, rng, waiting, any_pod=True)


@pytest.mark.parametrize("seed", range(8))
def test_interpodaffinity_kept_sums_equal_plain(seed: int) -> None:
    """InterPodAffinity's existing anti-affinity counts and topology scores kept across cycles equal a plain
    pass over every node, while the node list changes as the snapshot's does."""
    from plugins_intree.interpodaffinity import _terms
    from plugins_intree.interpodaffinity._sums import KeptSumsCache
    from plugins_intree.interpodaffinity.filtering import existing_anti_affinity_counts
    from plugins_intree.interpodaffinity.scoring import topology_scores

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 60), pending=30)
    lst = _node_infos(nodes, running)
    kept_existing, kept_scores = KeptSumsCache(limit=3), KeptSumsCache(limit=3)
    for step in range(60):
        pod = rng.choice(waiting[:6])
        ns_labels = _terms.NO_LABELS
        with_anti = [ni for ni in lst if ni.pods_with_required_anti_affinity] if rng.random() < 0.5 else lst
        assert (existing_anti_affinity_counts(pod, ns_labels, with_anti, kept_existing)
                == existing_anti_affinity_counts(pod, ns_labels, with_anti))
        pi = PodInfo(pod)
        for all_pods in (True, False):
            args = (pod, pi.preferred_affinity_terms, pi.preferred_anti_affinity_terms, ns_labels, lst, all_pods,
                    rng.choice((0, 1, 5)))
            assert topology_scores(*args, kept_scores) == topology_scores(*args), step
        # the cluster changes as the snapshot does: clones with a pod more or less swapped into the list
        _change_one_node(lst, rng, waiting)


@pytest.mark.parametrize("seed", range(8))
def test_interpodaffinity_kept_incoming_counts_equal_plain(seed: int) -> None:
    """InterPodAffinity's counts of existing pods matching the incoming pod's required (anti-)affinity terms,
    kept across cycles, equal a plain pass over every node while the node list changes as the snapshot's
    does (and when it changes length)."""
    from plugins_intree.interpodaffinity._sums import KeptSumsCache
    from plugins_intree.interpodaffinity.filtering import incoming_affinity_anti_affinity_counts

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 60), pending=30)
    lst = _node_infos(nodes, running)
    kept = KeptSumsCache(limit=3)
    compared = 0
    for step in range(60):
        pi = PodInfo(rng.choice(waiting[:6]))
        some = lst if rng.random() < 0.8 else lst[:-1]
        args = (pi.required_affinity_terms, pi.required_anti_affinity_terms, some)
        got = incoming_affinity_anti_affinity_counts(*args, kept)
        assert got == incoming_affinity_anti_affinity_counts(*args), step
        compared += bool(got[0] or got[1])
        _change_one_node(lst, rng, waiting)
    assert compared  # some steps had pods matching the terms


# --- pod signatures (runtime/signatures.py) ---------------------------------------------------------------
# Replicas of a few templates on nodes that differ in every way a node-local plugin looks at (room, taints,
# cordons, labels, host ports, extended resources), so verdicts flip as nodes fill up. The signed run reuses
# Filter verdicts and raw Scores from NodeInfo memos; the plain run has no signers at all.


def _sig_node(rng: random.Random, i: int) -> Node:
    name = f"s{i}"
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": rng.choice(ZONES)}
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(("ssd", "hdd"))
    taints = []
    if rng.random() < 0.2:
        taints.append({"key": "dedicated", "value": rng.choice(("x", "y")), "effect": "NoSchedule"})
    if rng.random() < 0.3:
        taints.append({"key": "t", "value": "x", "effect": "PreferNoSchedule"})
    capacity = {"cpu": rng.choice(("1", "2", "4")), "memory": rng.choice(("2Gi", "8Gi")),
                "pods": rng.choice(("4", "10"))}
    if rng.random() < 0.3:
        capacity["example.com/gpu"] = str(rng.randint(1, 2))
    return Node.from_dict({
        "kind": "Node", "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints, "unschedulable": rng.random() < 0.1},
        "status": {"capacity": capacity}})


def _sig_template(rng: random.Random) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice(("100m", "500m", "1"))
    if rng.random() < 0.7:
        requests["memory"] = rng.choice(("256Mi", "1Gi"))
    container: dict[str, Any] = {"name": "c", "image": "img0", "resources": {"requests": requests}}
    if rng.random() < 0.2:
        container["resources"] = {"requests": {**requests, "example.com/gpu": "1"},
                                  "limits": {"example.com/gpu": "1"}}
    if rng.random() < 0.3:
        container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec: dict[str, Any] = {"containers": [container]}
    if rng.random() < 0.4:
        spec["tolerations"] = [rng.choice((
            {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
            {"key": "t", "operator": "Exists", "effect": "PreferNoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
            {"operator": "Exists"}))]
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
    if rng.random() < 0.3:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randint(1, 50), "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]}]}}]}}
    return spec


def _sig_variant(rng: random.Random, spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with one thing a signature must tell apart changed (a wrong signature shows as a wrong verdict)."""
    out = {**spec, "containers": [dict(spec["containers"][0])]}
    c = out["containers"][0]
    reqs = dict(c["resources"].get("requests", {}))
    what = rng.randrange(5)
    if what == 0:
        c["resources"] = {"requests": {**reqs, "example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}
    elif what == 1:
        c["resources"] = {"requests": {**reqs, "cpu": rng.choice(("900m", "1500m"))}}
    elif what == 2:
        out["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
                              {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    elif what == 3:
        c["ports"] = [{"containerPort": 80, "hostPort": rng.choice((8080, 9090))}]
    else:
        out["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
    return out


def _without_signatures(sched: Scheduler) -> None:
    """The plain path: no plugin signs a pod, so nothing is kept on the NodeInfos."""
    for fwk in sched.profiles.values():
        fwk._filter_signers = {}
        fwk._score_signers = {}


def _run_results(sched: Scheduler, explain: bool = True) -> list[dict[str, Any]]:
    """Every result of ``sched.run()`` as a dict (with the explanation when ``explain``), timings left out."""
    out = []
    for r in sched.run():
        d = r.to_dict(explain=explain)
        d.pop("timings", None)
        out.append(d)
    return out


def _sig_run(seed: int, signed: bool) -> list[Any]:
    rng = random.Random(seed)
    nodes = [_sig_node(rng, i) for i in range(rng.randint(8, 20))]
    templates = [_sig_template(rng) for _ in range(rng.randint(2, 3))]
    templates += [_sig_variant(rng, rng.choice(templates)) for _ in range(3)]
    pods = [Pod.from_dict({"kind": "Pod", "metadata": {"name": f"r{i}", "namespace": "default"},
                           "spec": rng.choice(templates)}) for i in range(rng.randint(20, 60))]
    sched = _scheduler(nodes, pods)
    sched.explain = True
    if not signed:
        _without_signatures(sched)
    return _run_results(sched)


@pytest.mark.parametrize("seed", range(24))
def test_signature_filter_verdicts_are_reused_exactly(seed: int) -> None:
    """Every decision, failure message, per-node status and explanation equals the run without signatures."""
    assert _sig_run(seed, signed=True) == _sig_run(seed, signed=False)


@pytest.mark.parametrize("seed", range(8))
def test_signature_scores_are_reused_exactly(seed: int) -> None:
    """Raw, normalized and total scores of the replicas equal those computed afresh (explain output)."""
    signed, plain = _sig_run(100 + seed, signed=True), _sig_run(100 + seed, signed=False)
    assert [d.get("scores") for d in signed] == [d.get("scores") for d in plain]
    assert [d.get("totalScores") for d in signed] == [d.get("totalScores") for d in plain]


def _placements(seed: int, signed: bool, explain: bool) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    nodes = [_sig_node(rng, i) for i in range(rng.randint(8, 20))]
    templates = [_sig_template(rng) for _ in range(rng.randint(2, 3))]
    pods = [Pod.from_dict({"kind": "Pod", "metadata": {"name": f"r{i}", "namespace": "default"},
                           "spec": rng.choice(templates)}) for i in range(rng.randint(20, 60))]
    sched = _scheduler(nodes, pods)
    sched.explain = explain
    if not signed:
        _without_signatures(sched)
    return [(r.pod, r.outcome, r.node or r.message) for r in sched.run()]


@pytest.mark.parametrize("seed", range(8))
def test_score_columns_without_explain_equal_the_plain_path(seed: int) -> None:
    """The gather of kept rows (one shared tuple per distinct row, one C-level pass per column), the range check
    done when a row is kept, and the constant columns folded into the totals: the same placements and seeded
    tie-breaks as the plain path, with and without explain."""
    plain = _placements(200 + seed, signed=False, explain=True)
    assert _placements(200 + seed, signed=True, explain=False) == plain
    assert _placements(200 + seed, signed=False, explain=False) == plain


@pytest.mark.parametrize("seed", range(6))
def test_score_columns_totals_are_the_weighted_sums(seed: int) -> None:
    """Each total is the sum of its node's weighted column scores, constant columns included."""
    from scheduling_framework.runtime.algorithm import Algorithm

    rng = random.Random(300 + seed)
    nodes = [_sig_node(rng, i) for i in range(rng.randint(8, 20))]
    sched = _scheduler(nodes, [])
    fwk = next(iter(sched.profiles.values()))
    algo = Algorithm(fwk, rng=random.Random(1))
    for i in range(6):
        pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": f"q{i}", "namespace": "default"},
                             "spec": _sig_template(rng)})
        state = CycleState()
        sched.cache.update_snapshot(sched.snapshot)
        try:
            feasible, _ = algo.find_nodes_that_fit_pod(state, pod)
        except Exception:
            continue
        if len(feasible) < 2:
            continue
        for _ in range(2):  # fresh rows, then kept rows
            names, totals, columns = algo._prioritize(state, pod, feasible)
            assert names == [ni.name for ni in feasible]
            assert totals == [sum(vals[k] * w for _, vals, w in columns) for k in range(len(names))]


def _image_run(seed: int, signed: bool) -> list[Any]:
    """Replicas whose images some nodes hold, scheduled in three waves; between them nodes with images join,
    which changes how widely each image has spread (every node's image states are replaced)."""
    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=rng.randint(6, 14), bound=rng.randint(3, 12), pending=0)
    sched = _scheduler(nodes, running)
    sched.explain = True
    if not signed:
        _without_signatures(sched)
    fwk = next(iter(sched.profiles.values()))
    assert signed == ("ImageLocality" in fwk._score_signers)
    out: list[Any] = []
    for wave in range(3):
        for t in range(2):
            image = f"img{rng.randrange(3)}:latest"
            for j in range(rng.randint(2, 5)):
                sched.add_pod(Pod.from_dict({"kind": "Pod", "metadata": {"name": f"w{wave}-{t}-{j}",
                                                                         "namespace": "default"},
                                             "spec": {"containers": [{"name": "c", "image": image}]}}))
        out.extend(_run_results(sched))
        sched.add_node(_node(rng, 100 + wave))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_imagelocality_kept_scores_follow_image_changes(seed: int) -> None:
    """ImageLocality signs a pod by its images and the node count, and its kept scores are dropped when a node's
    image states are replaced: explain output equals the run where nothing is kept."""
    assert _image_run(400 + seed, signed=True) == _image_run(400 + seed, signed=False)


def _image_sim_run(seed: int, signed: bool) -> list[Any]:
    """The simulation keeps unchanged NodeInfos (and their image states) when a node joins, so only the node
    count in ImageLocality's signature tells the kept scores apart; refresh_image_states then replaces states."""
    from scheduling_framework.simulation import ClusterSnapshot, Simulator

    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=rng.randint(5, 10), bound=rng.randint(3, 10), pending=0)
    sim = Simulator(seed=3, cluster=ClusterSnapshot(nodes, running), objects=_whatif_objects())
    sim._fast = False
    if not signed:
        sim.framework._score_signers = {}
    pods = _copies(Pod.from_dict({"kind": "Pod", "metadata": {"name": "r", "namespace": "default"},
                                  "spec": {"containers": [{"name": "c", "image": "img1:latest"},
                                                          {"name": "d", "image": "img2:latest"}]}}), 4, "r")
    out: list[Any] = []
    for step in range(4):
        with sim.fork():
            sim.add_node_from_template(_node(rng, 200 + step), count=rng.randint(1, 3), name_prefix="new")
            with sim.fork():
                out.append(_placement_sig(sim.schedule_pods(pods)))
            if step % 2:
                sim.cluster.refresh_image_states()
                with sim.fork():
                    out.append(_placement_sig(sim.schedule_pods(pods)))
        with sim.fork():
            out.append(_placement_sig(sim.schedule_pods(pods)))
        sim.add_node(_node(rng, 300 + step))
        if step == 2:
            sim.cluster.refresh_image_states()  # outside a fork: image states replaced in place
    return out


@pytest.mark.parametrize("seed", range(6))
def test_imagelocality_kept_scores_follow_node_count_in_simulation(seed: int) -> None:
    assert _image_sim_run(500 + seed, signed=True) == _image_sim_run(500 + seed, signed=False)


def test_replacing_image_states_empties_the_memo() -> None:
    """ClusterSnapshot.refresh_image_states replaces image states in place outside a fork: kept answers go."""
    ni = NodeInfo()
    ni.memo["x"] = 1
    generation = ni.generation
    ni.image_states = {}
    assert not ni.memo and ni.generation != generation


def test_signatures_are_used_and_emptied_by_changes() -> None:
    """The in-tree node-local plugins sign a plain pod, and a node that changes loses its kept verdicts."""
    rng = random.Random(5)
    nodes = [_sig_node(rng, i) for i in range(6)]
    pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "i",
                                                  "resources": {"requests": {"cpu": "100m"}}}]}})
    sched = _scheduler(nodes, [pod])
    fwk = next(iter(sched.profiles.values()))
    assert {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit"} <= set(fwk._filter_signers)
    assert {"TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
            "ImageLocality"} <= set(fwk._score_signers)
    [r] = sched.run()
    assert r.outcome == "Scheduled"
    cols = fwk.node_columns
    before = {key: (list(col), empty) for key, (_read, col, empty) in cols._columns.items()}
    assert before and all(any(v is not empty for v in col) for col, empty in before.values())
    sched.cache.update_snapshot(sched.snapshot)  # as the next cycle starts
    chosen = cols.positions([sched.snapshot.get(r.node)], sched.snapshot.list())[0]
    for key, (col_before, empty) in before.items():
        col = cols.column(key)
        assert col is not None
        assert col[chosen] is empty  # the chosen node changed: its kept answers are gone, the others stay
        assert [v for i, v in enumerate(col) if i != chosen] == [v for i, v in enumerate(col_before) if i != chosen]


def test_signature_is_ignored_when_a_subclass_overrides_filter() -> None:
    from plugins_intree.noderesources.fit import Fit
    from scheduling_framework.runtime.signatures import signer

    class Stricter(Fit):
        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
            return None

    assert signer(Fit(), "filter_signature", "filter") is not None
    assert signer(Stricter(), "filter_signature", "filter") is None
    assert signer(Stricter(), "score_signature", "score") is not None  # score is still Fit's own


# --- what-if loops of the embedding API (scheduling_framework.simulation) -----------------------------------
#
# Simulator.schedule_pods prepares a batch of pods once per list of pod objects, replays failures by
# equivalence class, and remembers cycles among candidate nodes under the ClusterSnapshot's content token;
# ClusterSnapshot remembers template copies. Each must decide exactly as the plain path (Simulator._fast False).


def _whatif_objects() -> list[KubeObject]:
    return [KubeObject.from_dict({"kind": "Namespace", "metadata": {"name": n}}) for n in ("default", "other")]


def _copies(pod: Pod, count: int, prefix: str) -> list[Pod]:
    """Replicas of ``pod``: equal but for name and uid (what reuse_failures calls equivalent)."""
    out = []
    for j in range(count):
        d = pod.to_dict()
        d["metadata"]["name"] = f"{prefix}-{j}"
        d["metadata"].pop("uid", None)
        out.append(Pod.from_dict(d))
    return out


def _pending(rng: random.Random, seed: int) -> list[Pod]:
    pods: list[Pod] = []
    for t in range(rng.randint(2, 4)):
        pods.extend(_copies(_pod(rng, 500 + t), rng.randint(1, 8), f"rs{seed}-{t}"))
    pods.extend(_pod(rng, 600 + i) for i in range(rng.randint(0, 4)))
    # volumes: a configMap (cycles remembered) and a claim nobody created (never remembered, fails)
    for kind, source in (("configMap", {"name": "cfg"}), ("persistentVolumeClaim", {"claimName": "missing"})):
        d = _pod(rng, 650).to_dict()
        d["spec"]["volumes"] = [{"name": "v", kind: source}]
        pods.extend(_copies(Pod.from_dict(d), rng.randint(1, 3), f"vol{seed}-{kind}"))
    if rng.random() < 0.5:  # else replicas come in runs, as a controller's pods do
        rng.shuffle(pods)
    return pods


def _placement_sig(out: Any) -> list[Any]:
    sig = []
    for r in out.results:
        st = r.status
        d = r.diagnosis
        sig.append((r.pod, r.node, r.message, r.skipped, dict(r.total_scores),
                    None if st is None else (st.code, st.message(), st.plugin),
                    None if d is None else ([(n, s.code, s.message(), s.plugin) for n, s in d.node_to_status.items()],
                                            sorted(d.unschedulable_plugins), d.pre_filter_msg,
                                            (d.absent_nodes_status.code, d.absent_nodes_status.message()))))
    return sig


def _whatif_run(seed: int, fast: bool) -> list[Any]:
    from scheduling_framework.simulation import ClusterSnapshot, Simulator

    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=rng.randint(4, 12), bound=rng.randint(5, 25), pending=0)
    sim = Simulator(seed=3, cluster=ClusterSnapshot(nodes, running), objects=_whatif_objects())
    sim._fast = fast
    templates = [_node(rng, 900 + j) for j in range(2)]
    batches = [_pending(rng, seed * 10 + b) for b in range(2)]
    extra = [_pod(rng, 700 + i) for i in range(3)]
    # A few scenarios, each a fixed list of changes, picked at random: an autoscaler asks the same questions
    # again and again, which is what the remembered answers are for.
    scenarios = [(rng.randrange(2), rng.choice((1, 1, 2)), rng.randrange(len(extra)) if rng.random() < 0.4 else None,
                  rng.choice(nodes).name, rng.randrange(len(running)) if rng.random() < 0.3 and running else None,
                  rng.choice((None, None, True, False)), rng.randrange(2), rng.random() < 0.15) for _ in range(4)]
    out: list[Any] = []
    for it in range(20):
        tpl, count, add, where, remove, inner_commit, b, full = scenarios[rng.randrange(len(scenarios))]
        pods = batches[b] if rng.random() < 0.9 else list(batches[0][:rng.randint(1, 5)])
        with sim.fork():
            new = sim.add_node_from_template(templates[tpl], count=count, name_prefix="new")
            if add is not None:
                sim.add_pod(extra[add], where)
            if remove is not None:
                sim.remove_pod(running[remove])
            if inner_commit is not None:
                inner = sim.fork()
                sim.add_node_from_template(templates[0], name_prefix="inner")
                if inner_commit:
                    inner.commit()
                else:
                    inner.revert()
            outcome = sim.schedule_pods(pods, nodes=None if full else new)
            out.append((it, _placement_sig(outcome), sim.cluster.snapshot.describe()))
        out.append((it, sim.algorithm.next_start_node_index, sim.cluster.snapshot.describe()))
    out.append(sim.rng.getstate())
    return out


@pytest.mark.parametrize("seed", range(8))
def test_whatif_loop_fast_path_equals_plain_path(seed: int) -> None:
    """Forks adding template nodes, pods bound and removed, nested forks, batches of replicas scheduled on
    the new nodes (sometimes on the whole cluster): identical placements, messages, statuses, scores and
    diagnoses, snapshots and random draws with and without the fast paths."""
    assert _whatif_run(seed, fast=True) == _whatif_run(seed, fast=False)


def _batch_with_oddities(rng: random.Random, nodes: list[Node]) -> list[Pod]:
    pods = _pending(rng, rng.randrange(1000))
    d = pods[0].to_dict()
    d["metadata"].update(name="leaving", uid="leaving", deletionTimestamp="2024-01-01T00:00:00Z")
    pods.append(Pod.from_dict(d))
    d = pods[1].to_dict()
    d["metadata"].update(name="unknown-class", uid="unknown-class")
    d["spec"]["priorityClassName"] = "missing"
    pods.append(Pod.from_dict(d))
    d = pods[2].to_dict()
    d["metadata"].update(name="nominated", uid="nominated")
    d["status"] = {"nominatedNodeName": rng.choice(nodes).name}
    pods.append(Pod.from_dict(d))
    return pods


@pytest.mark.parametrize("seed", range(4))
def test_schedule_pods_fast_path_equals_plain_path(seed: int) -> None:
    """The prepared batch (admission, skipped pods, queue order, equivalence classes) gives the plain path's
    outcome, warnings and errors, call after call, with nominated, terminating and refused pods."""
    from scheduling_framework.errors import SnapshotError
    from scheduling_framework.simulation import ClusterSnapshot, Simulator

    runs = []
    for fast in (True, False):
        rng = random.Random(seed)
        nodes, running, _ = _cluster(seed, nodes=6, bound=8, pending=0)
        sim = Simulator(seed=5, cluster=ClusterSnapshot(nodes, running), objects=_whatif_objects())
        sim._fast = fast
        pods = _batch_with_oddities(rng, nodes)
        got: list[Any] = []
        for _ in range(3):
            with sim.fork():
                got.append(_placement_sig(sim.schedule_pods(pods, nodes=[n.name for n in nodes[:3]])))
        with sim.fork():
            got.append(_placement_sig(sim.schedule_pods(pods)))
            for bad, where in (([*pods, pods[0]], None), (pods, ["nowhere"]), ([*pods, running[0]], None)):
                with pytest.raises(SnapshotError) as e:
                    sim.schedule_pods(bad, nodes=where)
                got.append(str(e.value))
        got.append(sim.warnings.items_of(next(iter(sim.warnings._groups), "")))
        runs.append(got)
    assert runs[0] == runs[1]


def _random_snapshot_change(rng: random.Random, cs: Any, templates: list[Any], extra: list[Pod],
                            bounds: tuple[float, float, float, float, float]) -> None:
    """One random change of a ClusterSnapshot: fork, revert, commit, add a node from a template, add or remove one
    of ``extra``'s pods, remove a node; ``bounds`` are the cumulative odds of the first five."""
    fork, revert, commit, add_node, pod = bounds
    action = rng.random()
    if action < fork:
        cs.fork()
    elif action < revert and cs.depth:
        cs.revert()
    elif action < commit and cs.depth:
        cs.commit()
    elif action < add_node:
        cs.add_node_from_template(templates[rng.randrange(2)], name_prefix=rng.choice(("a", "b")))
    elif action < pod:
        p = extra[rng.randrange(len(extra))]
        if cs.has_pod(p):
            cs.remove_pod(p)
        else:
            cs.add_pod(p, rng.choice(cs.node_names()))
    elif len(cs) > 1:
        cs.remove_node(rng.choice(cs.node_names()))


@pytest.mark.parametrize("seed", range(4))
def test_content_token_names_the_content(seed: int) -> None:
    """ClusterSnapshot.content: whenever a token comes back, the snapshot holds what it held under it
    before (nodes, pods, order), through forks, reverts, commits and repeated changes."""
    import pickle

    from scheduling_framework.simulation import ClusterSnapshot

    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=6, bound=10, pending=0)
    cs = ClusterSnapshot(nodes, running)
    templates = [_node(rng, 900 + j) for j in range(2)]
    extra = [_pod(rng, 700 + i) for i in range(4)]
    seen: dict[int, tuple[Any, Any]] = {}
    hits = 0
    copied = False

    def check() -> None:
        nonlocal hits
        state = (cs.snapshot.describe(), [ni.name for ni in cs.snapshot.list()])
        old = seen.get(id(cs.content))
        if old is not None:
            assert old[1] == state
            hits += 1
        seen[id(cs.content)] = (cs.content, state)

    for step in range(150):
        if step == 75:
            # a copy (pickled, say) carries its tokens and transitions over: they stay right
            while cs.depth:
                cs.commit()
            copied = True
            cs = pickle.loads(pickle.dumps(cs))
            templates, extra = [pickle.loads(pickle.dumps(t)) for t in templates], [
                pickle.loads(pickle.dumps(p)) for p in extra]
            seen = {}
        check()
        _random_snapshot_change(rng, cs, templates, extra, (0.25, 0.4, 0.45, 0.65, 0.85))
    assert hits > 10 and copied


def test_template_copies_equal_fresh_copies() -> None:
    """ClusterSnapshot._node_copy gives back what node_from_template makes, also for a template equal to but
    not the same object as an earlier one."""
    from scheduling_framework.simulation import ClusterSnapshot
    from scheduling_framework.simulation.templates import node_from_template

    rng = random.Random(1)
    cs = ClusterSnapshot()
    for _ in range(30):
        tpl = _node(rng, rng.randrange(3))
        name = f"copy-{rng.randrange(3)}"
        assert cs._node_copy(tpl, name).to_dict() == node_from_template(tpl, name).to_dict()
        assert cs._node_copy(tpl, name) is cs._node_copy(tpl, name)


@pytest.mark.parametrize("seed", range(6))
def test_interpodaffinity_prefilter_skip_equals_plain_path(seed: int) -> None:
    """InterPodAffinity PreFilter skips at once a pod without required terms when no existing pod has required
    anti-affinity: the plain path (namespaces merged, namespace labels read, counts built over every node)
    finds exactly then that every count is empty and skips too; otherwise both write the same counts."""
    from plugins_intree.interpodaffinity import _terms
    from plugins_intree.interpodaffinity.filtering import (
        PRE_FILTER_STATE_KEY,
        existing_anti_affinity_counts,
        incoming_affinity_anti_affinity_counts,
    )
    from plugins_intree.interpodaffinity.plugin import _required_terms

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=8, bound=rng.choice((0, 4, 12)), pending=40)
    sched = _scheduler(nodes, running)
    fwk = sched.profile()
    sched.cache.update_snapshot(sched.snapshot)
    pl = fwk.plugins["InterPodAffinity"]
    infos = sched.snapshot.list()
    with_anti = sched.snapshot.have_pods_with_required_anti_affinity_list()
    skipped = 0
    for pod in waiting:
        state = CycleState()
        _, st = pl.pre_filter(state, pod, infos)
        # the plain path
        affinity, anti = _required_terms(pod)
        if _terms.needs_namespaces(affinity) or _terms.needs_namespaces(anti):
            namespaces = pl._namespaces()
            affinity = _terms.merge_all(affinity, namespaces)
            anti = _terms.merge_all(anti, namespaces)
        ns_labels = pl._namespace_labels(pod.metadata.namespace)
        existing = existing_anti_affinity_counts(pod, ns_labels, with_anti)
        if not existing and not affinity and not anti:
            assert st is not None and st.code.name == "SKIP"
            skipped += 1
            continue
        assert st is None
        kept = state.read(PRE_FILTER_STATE_KEY)
        assert kept.existing_anti_affinity_counts == existing
        assert (kept.affinity_counts, kept.anti_affinity_counts) == incoming_affinity_anti_affinity_counts(
            affinity, anti, infos)
    assert skipped > 0


@pytest.mark.parametrize("seed", range(4))
def test_fit_prefilter_state_kept_per_pod_equals_a_fresh_one(seed: int) -> None:
    """NodeResourcesFit keeps its PreFilter state per Pod object: scheduling the same pod again gets the same
    requests and scalar checks as a state computed afresh (ignored resources included)."""
    from plugins_intree.noderesources.fit import (
        PRE_FILTER_STATE_KEY,
        Fit,
        _PreFilterState,
        compute_pod_resource_request,
    )

    rng = random.Random(seed)
    pl = Fit({"ignoredResources": ["example.com/ignored"], "ignoredResourceGroups": ["group.io"]}, None)
    pods = [_pod(rng, i) for i in range(30)]
    for i, p in enumerate(pods[:10]):
        d = p.to_dict()
        d["spec"]["containers"][0].setdefault("resources", {}).setdefault("requests", {}).update(
            {"example.com/ignored": "1", "group.io/gpu": "2", "example.com/counted": str(i % 3)})
        pods[i] = Pod.from_dict(d)
    for _ in range(3):
        for p in rng.sample(pods, len(pods)):
            state = CycleState()
            pl.pre_filter(state, p, [])
            got = state.read(PRE_FILTER_STATE_KEY)
            fresh = _PreFilterState(compute_pod_resource_request(p), pl.ignored_resources, pl.ignored_resource_groups)
            assert (got.milli_cpu, got.memory, got.ephemeral_storage, got.scalars) == (
                fresh.milli_cpu, fresh.memory, fresh.ephemeral_storage, fresh.scalars)


def test_rotated_slices_equal_the_rotated_copy() -> None:
    """The filter loop reads the round-robin order as slices (algorithm._rotated) instead of copying it."""
    from scheduling_framework.runtime.algorithm import _rotated

    rng = random.Random(11)
    for _ in range(300):
        n = rng.randint(1, 12)
        items: list[Any] = list(range(n))
        start = rng.randrange(n)
        a = rng.randint(0, n)
        b = rng.randint(a, n)
        assert _rotated(items, start, a, b) == [*items[start:], *items[:start]][a:b]


@pytest.mark.parametrize("seed", range(4))
def test_signature_runs_with_narrowed_node_lists(seed: int) -> None:
    """Pods whose PreFilterResult names a few nodes, between pods that advance the start index past them:
    the same decisions with and without signatures (the start index may exceed the narrowed list)."""
    def run(signed: bool) -> list[Any]:
        rng = random.Random(seed)
        nodes = [_sig_node(rng, i) for i in range(12)]
        pods = []
        for i in range(40):
            spec = _sig_template(rng)
            if rng.random() < 0.4:
                spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                            "values": rng.sample([n.name for n in nodes], 2)}]}]}}}
            pods.append(Pod.from_dict({"kind": "Pod", "metadata": {"name": f"q{i}", "namespace": "default"},
                                       "spec": spec}))
        sched = _scheduler(nodes, pods)
        if not signed:
            _without_signatures(sched)
        return [(r.pod, r.outcome, r.node, r.message) for r in sched.run()]

    assert run(True) == run(False)


@pytest.mark.parametrize("seed", range(4))
def test_signature_runs_at_scale_equal_plain(seed: int) -> None:
    """Hundreds of nodes, so a cycle looks for fewer feasible nodes than there are and reads several runs of kept
    verdicts from a moving start index; nodes fill up and reject, and each cycle changes one node (a verdict not
    kept inside a run). Same results (nodes, messages, counts) with and without signatures."""
    def run(signed: bool) -> list[Any]:
        rng = random.Random(700 + seed)
        nodes = [_sig_node(rng, i) for i in range(rng.randint(250, 420))]
        templates = [_sig_template(rng) for _ in range(3)]
        pods = [Pod.from_dict({"kind": "Pod", "metadata": {"name": f"r{i}", "namespace": "default"},
                               "spec": rng.choice(templates)}) for i in range(400)]
        sched = _scheduler(nodes, pods)
        if not signed:
            _without_signatures(sched)
        return _run_results(sched, explain=False)

    assert run(True) == run(False)


def _diagnosis(**changes: Any) -> Any:
    from scheduling_framework.runtime.algorithm import Diagnosis
    from scheduling_framework.status import Code, Status

    d = Diagnosis()
    d.node_to_status = {"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit")}
    d.unschedulable_plugins = {"NodeResourcesFit"}
    for k, v in changes.items():
        setattr(d, k, v)
    return d


@pytest.mark.parametrize("change", [
    {"node_to_status": {}},
    {"unschedulable_plugins": {"TaintToleration"}},
    {"pending_plugins": {"X"}},
    {"pre_filter_msg": "m"},
    {"post_filter_msg": "m"},
    {"pre_filter_allowed": {"n1"}},
    {"explained": {"n1": None}},
], ids=lambda c: next(iter(c)))
def test_same_answer_tells_every_diagnosis_field_apart(change: dict[str, Any]) -> None:
    """A failure is given back as the class's previous one only when every field says the same."""
    from scheduling_framework.simulation.simulator import Placement, _same_answer
    from scheduling_framework.status import Code, Status

    base = Placement("ns/p", None, "msg", None, {}, _diagnosis())
    assert _same_answer(base, Placement("ns/p", None, "msg", None, {}, _diagnosis()))
    assert not _same_answer(base, Placement("ns/p", None, "msg", None, {}, _diagnosis(**change)))
    other_reason = _diagnosis(node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Too many pods",
                                                            plugin="NodeResourcesFit")})
    assert not _same_answer(base, Placement("ns/p", None, "msg", None, {}, other_reason))
    assert not _same_answer(base, Placement("ns/p", None, "other", None, {}, _diagnosis()))
    assert not _same_answer(base, Placement("ns/p", None, "msg", Status(Code.ERROR, "x"), {}, _diagnosis()))


# --- DRA: allocation outcomes kept per node across cycles (issue #17, DRA workloads) --------------------------

_DRV = "d.example.com"
_RV1 = "resource.k8s.io/v1"
_ZONE_A = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}


def _dra_node(i: int, zone: str, rev: int = 0) -> Any:
    from scheduling_framework.api import Node

    return Node.from_dict({"kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": zone, "rev": str(rev)}}})


def _dra_device(rng: random.Random, name: str, i: int, counters: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "attributes": {"model": {"string": rng.choice("ab")}, "idx": {"int": i % 3}}}
    if rng.random() < 0.1:
        d["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
    if counters:
        d["consumesCounters"] = [{"counterSet": "cs", "counters": {f"c{i % 2}": {"value": "1"}}}]
    return d


def _dra_slices(rng: random.Random, nodes: int) -> list[Any]:
    """Per node one or two slices of its own pool; a pool shared by the zone-a nodes; a partitionable pool."""
    from scheduling_framework.api.resource import ResourceSlice

    out: list[dict[str, Any]] = []
    for n in range(nodes):
        count = rng.choice((1, 1, 2))
        for k in range(count):
            out.append({"apiVersion": _RV1, "kind": "ResourceSlice", "metadata": {"name": f"n{n}-{k}"},
                        "spec": {"driver": _DRV, "nodeName": f"n{n}",
                                 "pool": {"name": f"n{n}", "generation": 1,
                                          # now and then a pool still being published (incomplete)
                                          "resourceSliceCount": count + (rng.random() < 0.05)},
                                 "devices": [_dra_device(rng, f"dev-{k}-{i}", i) for i in range(rng.randint(1, 6))]}})
    out.append({"apiVersion": _RV1, "kind": "ResourceSlice", "metadata": {"name": "shared"},
                "spec": {"driver": _DRV, "nodeSelector": _ZONE_A, "pool": {"name": "shared", "resourceSliceCount": 1},
                         "devices": [_dra_device(rng, f"s-{i}", i) for i in range(3)]}})
    out.append({"apiVersion": _RV1, "kind": "ResourceSlice", "metadata": {"name": "part-counters"},
                "spec": {"driver": _DRV, "allNodes": True, "pool": {"name": "part", "resourceSliceCount": 2},
                         "sharedCounters": [{"name": "cs", "counters": {"c0": {"value": "1"},
                                                                         "c1": {"value": "2"}}}]}})
    out.append({"apiVersion": _RV1, "kind": "ResourceSlice", "metadata": {"name": "part-devices"},
                "spec": {"driver": _DRV, "allNodes": True, "pool": {"name": "part", "resourceSliceCount": 2},
                         "devices": [_dra_device(rng, f"p-{i}", i, counters=True) for i in range(3)]}})
    return [ResourceSlice.from_dict(s) for s in out]


def _dra_classes() -> dict[str, Any]:
    from scheduling_framework.api.resource import DeviceClass

    def cls(name: str, expr: str) -> Any:
        return DeviceClass.from_dict({"apiVersion": _RV1, "kind": "DeviceClass", "metadata": {"name": name},
                                      "spec": {"selectors": [{"cel": {"expression": expr}}]}})

    return {"any": cls("any", f'device.driver == "{_DRV}"'),
            "model-a": cls("model-a", f'device.attributes["{_DRV}"].model == "a"'),
            # a runtime error on every device without the attribute: the error names the claim
            "bad": cls("bad", f'device.attributes["{_DRV}"].missing == "x"')}


def _dra_request(rng: random.Random, name: str) -> dict[str, Any]:
    exact: dict[str, Any] = {"deviceClassName": rng.choice(("any", "any", "model-a", "bad") if rng.random() < 0.1
                                                           else ("any", "any", "model-a"))}
    if rng.random() < 0.15:
        exact["allocationMode"] = "All"
    else:
        exact["count"] = rng.choice((1, 1, 1, 2, 3))
    if rng.random() < 0.3:
        exact["selectors"] = [{"cel": {"expression": f'device.attributes["{_DRV}"].idx >= 1'}}]
    if rng.random() < 0.2:
        exact["tolerations"] = [{"key": "broken", "operator": "Exists"}]
    if rng.random() < 0.2:
        return {"name": name, "firstAvailable": [{"name": "big", **{**exact, "count": 3}},
                                                  {"name": "small", **exact}]}
    return {"name": name, "exactly": exact}


def _dra_claim_specs(rng: random.Random, n: int) -> list[dict[str, Any]]:
    specs = []
    for _ in range(n):
        reqs = [_dra_request(rng, f"r{i}") for i in range(rng.choice((1, 1, 2)))]
        devices: dict[str, Any] = {"requests": reqs}
        if rng.random() < 0.3:
            devices["constraints"] = [{rng.choice(("matchAttribute", "distinctAttribute")): f"{_DRV}/model"}]
        specs.append({"devices": devices})
    return specs


def _dra_outcome(alloc: Any, node: Any, claims: list[Any]) -> Any:
    from scheduling_framework.dra import AllocatorError

    try:
        return alloc.allocate(node, claims)
    except AllocatorError as e:
        return ("error", str(e), e.failed_on_node)


@pytest.mark.parametrize("seed", range(6), ids=lambda s: f"seed{s}")
def test_dra_allocation_memo_matches_plain_search(seed: int) -> None:
    """An Allocator with an AllocationMemo (kept across allocators, as across scheduling cycles) gives on every
    node what the plain search gives: the same results, the same None, the same error text, while the
    allocated devices, the slices, the nodes and the claims change between cycles."""
    from scheduling_framework.api.resource import ResourceClaim, ResourceSlice
    from scheduling_framework.dra import AllocatedState, Allocator, DeviceID, Features
    from scheduling_framework.dra.allocator import AllocationMemo
    from scheduling_framework.dra.cel import CELCache

    rng = random.Random(seed)
    nodes = [_dra_node(i, rng.choice("ab")) for i in range(5)]
    slices = _dra_slices(rng, len(nodes))
    classes = _dra_classes()
    specs = _dra_claim_specs(rng, 4)
    memo, cel = AllocationMemo(), CELCache()
    allocated: set[Any] = set()
    for cycle in range(25):
        all_ids = [DeviceID(s.spec.driver, s.spec.pool.name, d.name) for s in slices for d in s.spec.devices]
        for did in rng.sample(all_ids, min(3, len(all_ids))):
            allocated.symmetric_difference_update({did})
        if rng.random() < 0.15:  # a slice republished (new object, maybe new devices)
            i = rng.randrange(len(slices))
            raw = slices[i].to_dict() if hasattr(slices[i], "to_dict") else None
            if raw is None:
                slices = _dra_slices(rng, len(nodes))
            else:
                slices[i] = ResourceSlice.from_dict(raw)
        if rng.random() < 0.15:  # a node relabelled
            i = rng.randrange(len(nodes))
            nodes[i] = _dra_node(i, rng.choice("ab"), cycle)
        claims = [ResourceClaim.from_dict({"apiVersion": _RV1, "kind": "ResourceClaim",
                                           "metadata": {"name": f"c{cycle}-{k}", "namespace": "ns",
                                                        "uid": f"u{cycle}-{k}"},
                                           "spec": rng.choice(specs)}) for k in range(rng.randint(1, 2))]
        features = Features() if rng.random() < 0.9 else Features(partitionable_devices=False)
        state = AllocatedState(set(allocated))
        plain = Allocator(features, state, classes, slices, cel)
        fast = Allocator(features, state, classes, slices, cel, memo)
        for node in nodes:
            assert _dra_outcome(fast, node, claims) == _dra_outcome(plain, node, claims), (cycle, node.name)
            # asked again in the same cycle: the memo's hit
            assert _dra_outcome(fast, node, claims) == _dra_outcome(plain, node, claims), (cycle, node.name)
    assert memo.hits > 0 and memo.misses > 0


def _dra_cluster_docs(rng: random.Random) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for i in range(6):
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"n{i}", "labels": {"zone": rng.choice("ab"),
                                                              "kubernetes.io/hostname": f"n{i}"}},
                     "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})
        if rng.random() < 0.8:
            docs.append({"apiVersion": _RV1, "kind": "ResourceSlice", "metadata": {"name": f"n{i}"},
                         "spec": {"driver": _DRV, "nodeName": f"n{i}",
                                  "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                                  "devices": [_dra_device(rng, f"dev-{k}", k) for k in range(rng.randint(2, 8))]}})
    for name, expr in (("any", f'device.driver == "{_DRV}"'), ("model-a", f'device.attributes["{_DRV}"].model == "a"')):
        docs.append({"apiVersion": _RV1, "kind": "DeviceClass", "metadata": {"name": name},
                     "spec": {"selectors": [{"cel": {"expression": expr}}]}})
    specs = _dra_claim_specs(rng, 3)
    for t, spec in enumerate(specs):
        for r in spec["devices"]["requests"]:  # no "bad" class here: an error aborts the pod's cycle anyway
            for e in [r.get("exactly")] + [s for s in r.get("firstAvailable", [])]:
                if e is not None and e.get("deviceClassName") == "bad":
                    e["deviceClassName"] = "any"
        docs.append({"apiVersion": _RV1, "kind": "ResourceClaimTemplate",
                     "metadata": {"name": f"t{t}", "namespace": "default"}, "spec": {"spec": spec}})
    for p in range(20):
        claims = [{"name": f"x{k}", "resourceClaimTemplateName": f"t{rng.randrange(len(specs))}"}
                  for k in range(rng.choice((1, 1, 2)))]
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{p}", "namespace": "default",
                                                                   "uid": f"p{p}"},
                     "spec": {"containers": [{"name": "c", "image": "img", "resources": {
                         "claims": [{"name": c["name"]} for c in claims]}}], "resourceClaims": claims}})
    return docs


def _dra_schedule(docs: list[dict[str, Any]], seed: int) -> list[Any]:
    from scheduling_framework.config import load_config
    from scheduling_framework.ingest.cluster import cluster_from_documents

    c = cluster_from_documents(docs)
    s = Scheduler(load_config(None), seed=seed, explain=True)
    s.load(c.nodes, c.pods, c.objects)
    s.run()
    return [(k, r.outcome, r.node, r.message, r.claims) for k, r in sorted(s.results.items())]


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_dra_plugin_memo_matches_plain_plugin(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduling DRA pods one after another (each allocation changes what the next pod sees) gives the same
    placements, messages and allocations with the DynamicResources plugin's AllocationMemo as without it
    (the plain search on every node; also the plain Score, as the memo run skips compute_score when no claim
    has firstAvailable requests)."""
    from plugins_intree.dynamicresources.plugin import DynamicResources

    docs = _dra_cluster_docs(random.Random(seed))
    fast = _dra_schedule(docs, seed)
    monkeypatch.setattr(DynamicResources, "fast_paths", False)
    plain = _dra_schedule(docs, seed)
    assert fast == plain
    assert any(outcome == "Scheduled" for _, outcome, *_ in fast)


def test_lazy_pod_index_of_clones() -> None:
    """A clone builds its uid -> position index only when asked (NodeInfo._index): lookups, removals and
    additions on clones of clones give what a NodeInfo built from the same pods gives."""
    rng = random.Random(21)
    nodes, running, _ = _cluster(4, nodes=1, bound=30, pending=0)
    ni = NodeInfo(nodes[0], running)
    pods = list(running)
    for step in range(200):
        ni = ni.clone() if rng.random() < 0.5 else ni
        if pods and rng.random() < 0.5:
            victim = pods.pop(rng.randrange(len(pods)))
            assert ni.remove_pod(victim)
            assert not ni.has_pod(victim.uid) and ni.get_pod(victim.uid) is None
        else:
            extra = _pod(rng, 1000 + step, nodes[0].name)
            ni.add_pod(extra)
            pods.append(extra)
        fresh = NodeInfo(nodes[0], pods)
        assert ni.snapshot_state() == fresh.snapshot_state()
        probe = rng.choice(pods) if pods else None
        if probe is not None:
            got = ni.get_pod(probe.uid)
            assert got is not None and got.pod is probe and ni.has_pod(probe.uid)


@pytest.mark.parametrize("seed", range(3))
def test_spec_with_node_name_equals_evolve(seed: int) -> None:
    """Pod.with_node_name copies the spec field by field: the same spec as attrs.evolve makes."""
    import attrs

    rng = random.Random(seed)
    for i in range(40):
        pod = _pod(rng, i, rng.choice(("", "n1")))
        got = pod.with_node_name(f"n{i}")
        want = attrs.evolve(pod.spec, node_name=f"n{i}")
        assert got.spec == want
        assert attrs.asdict(got.spec, recurse=False) == attrs.asdict(want, recurse=False)
        assert got.spec.node_name == f"n{i}" and got.to_dict()["spec"]["nodeName"] == f"n{i}"
        assert pod.spec.node_name != f"n{i}" or i == 1  # the original is untouched


@pytest.mark.parametrize("seed", range(3))
def test_renamed_pod_info_equals_a_fresh_one(seed: int) -> None:
    """ClusterSnapshot.add_pod of a pod without spec.nodeName derives its PodInfo from the one made when the
    same Pod object was added before: every field equals a PodInfo computed afresh for the stored pod."""
    from scheduling_framework.simulation import ClusterSnapshot
    from scheduling_framework.state.node_info import PodInfo

    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=5, bound=3, pending=0)
    cs = ClusterSnapshot(nodes, running)
    pods = [_pod(rng, 100 + i) for i in range(12)]
    for i in range(60):
        p = pods[rng.randrange(len(pods))]
        cs.fork()
        got = cs.add_pod(p, rng.choice(nodes).name)
        fresh = PodInfo(got.pod)
        for slot in PodInfo.__slots__:
            a, b = getattr(got, slot), getattr(fresh, slot)
            if slot == "requests":
                a, b = vars_of(a), vars_of(b)
            assert a == b, (i, slot)
        assert got.pod.spec.node_name in cs
        cs.revert()


@pytest.mark.parametrize("seed", range(3))
def test_placed_pod_info_equals_a_fresh_one(seed: int) -> None:
    """The PodInfo the scheduler assumes is its queued PodInfo placed (PodInfo.placed: values shared): every
    field equals a PodInfo made afresh for the placed pod, under every request rule, for random pods and for
    upstream's pods with an in-place resize in their status (whose requests the rules change)."""
    from pathlib import Path

    from scheduling_framework.api.resize import RequestRules
    from scheduling_framework.state.node_info import PodInfo
    from tests import yamlio

    fixture = Path(__file__).resolve().parent / "fixtures" / "upstream" / "resource-helpers-resize.yaml"
    resized = [Pod.from_dict(c["pod"]) for c in yamlio.load(fixture.read_text())["cases"]]
    assert any(p.status.resize is not None for p in resized)
    rng = random.Random(seed)
    pods = resized + [_pod(rng, i) for i in range(20)]
    rule_sets = [RequestRules(a, b, c) for a in (False, True) for b in (False, True) for c in (False, True)]
    for pod in pods:
        for before in (None, *rule_sets):
            queued = PodInfo(pod) if before is None else PodInfo(pod, before)
            for rules in rule_sets:
                placed = pod.with_node_name("n1")
                got = queued.placed(placed, rules)
                fresh = PodInfo(placed, rules)
                assert got.pod is placed
                for slot in PodInfo.__slots__:
                    a, b = getattr(got, slot), getattr(fresh, slot)
                    if slot == "requests":
                        a, b = vars_of(a), vars_of(b)
                    assert a == b, (pod.metadata.name, slot)


def vars_of(obj: Any) -> Any:
    return {s: getattr(obj, s) for s in type(obj).__slots__} if hasattr(type(obj), "__slots__") else vars(obj)


@pytest.mark.parametrize("seed", range(4))
def test_signature_runs_with_nominated_pods(seed: int) -> None:
    """Preemptors nominated to nodes while replicas keep coming (scheduler_perf's PreemptionAsync in small):
    nodes with nominated pods take the two-pass path, the runs of other nodes are taken whole; decisions,
    nominations and messages equal the run without signatures."""
    def run(signed: bool) -> list[Any]:
        rng = random.Random(seed)
        nodes = [Node.from_dict({"kind": "Node", "metadata": {"name": f"m{i}", "labels": {
            "kubernetes.io/hostname": f"m{i}"}}, "status": {"capacity": {"cpu": "4", "memory": "32Gi",
                                                                       "pods": "110"}}}) for i in range(40)]
        low = [Pod.from_dict({"kind": "Pod", "metadata": {"name": f"low{i}", "namespace": "default"},
                              "spec": {"nodeName": f"m{i // 4}", "containers": [
                                  {"name": "c", "image": "i", "resources": {"requests": {"cpu": "900m"}}}]}})
               for i in range(160)]
        pending = []
        for i in range(120):
            high = rng.random() < 0.1
            pending.append(Pod.from_dict({"kind": "Pod", "metadata": {"name": f"q{i}", "namespace": "default"},
                                          "spec": {"priority": 10 if high else 0, "containers": [
                                              {"name": "c", "image": "i", "resources": {"requests": {
                                                  "cpu": "3" if high else "100m"}}}]}}))
        sched = _scheduler(nodes, [*low, *pending])
        if not signed:
            _without_signatures(sched)
        return [(r.pod, r.outcome, r.node, r.nominated_node, r.message) for r in sched.run()]

    signed = run(True)
    assert signed == run(False)
    assert any(nominated for *_, nominated, _ in signed) or any(o == "Preempted" for _, o, *_ in signed)


def _dra_claim_obj(rng: random.Random, name: str) -> KubeObject:
    results = []
    for k in range(rng.randint(0, 3)):
        r: dict[str, Any] = {"request": "r", "driver": _DRV, "pool": f"n{rng.randrange(4)}",
                             "device": f"dev-{rng.randrange(4)}"}
        if rng.random() < 0.1:
            r["adminAccess"] = True
        if rng.random() < 0.05:
            r["shareID"] = f"s{k}"
            r["consumedCapacity"] = {"mem": "1"}
        results.append(r)
    status = {"allocation": {"devices": {"results": results}}} if results or rng.random() < 0.5 else {}
    return KubeObject.from_dict({"apiVersion": _RV1, "kind": "ResourceClaim",
                                 "metadata": {"name": name, "namespace": "ns", "uid": f"{name}-{rng.random()}"},
                                 "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                     "deviceClassName": "any"}}]}},
                                 "status": status})


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_dra_incremental_allocated_state_equals_rebuilt(seed: int) -> None:
    """DraManager.allocated_state, kept up to date from the claims changed since the previous call, equals the
    state rebuilt from every claim (devices, shares, consumed capacity), and its names per pool equal the
    allocator's own grouping of the allocated devices."""
    from plugins_intree.dynamicresources.state import DraManager
    from scheduling_framework.dra.allocator import _allocated_by_pool
    from scheduling_framework.state.snapshot import ObjectStore

    rng = random.Random(seed)
    store = ObjectStore()
    mgr = DraManager(store)
    names = [f"c{i}" for i in range(12)]
    for _ in range(60):
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(names)
            if rng.random() < 0.3:
                store.remove("ResourceClaim", "ns", name)
            else:
                store.add(_dra_claim_obj(rng, name))
        fast, plain = mgr.allocated_state(), mgr._allocated_state_rebuilt()
        assert fast.allocated_devices == plain.allocated_devices
        assert fast.allocated_shared_device_ids == plain.allocated_shared_device_ids
        assert fast.aggregated_capacity == plain.aggregated_capacity
        if fast.allocated_by_pool is not None:
            assert not fast.allocated_shared_device_ids
            assert fast.allocated_by_pool == _allocated_by_pool(fast)


@pytest.mark.parametrize("seed", range(6))
def test_dra_claims_changes_since_equal_a_full_diff(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """DraManager.allocated_state catches up from the store's change log (ObjectStore.changes_since): claims added,
    replaced, removed and restored by an undo journal, sometimes more changes than the log keeps (then it compares
    every claim), equal the state rebuilt from every claim and the manager that always compares every claim."""
    import scheduling_framework.state.snapshot as snapshot_mod
    from plugins_intree.dynamicresources.state import DraManager
    from scheduling_framework.state.snapshot import ObjectStore

    monkeypatch.setattr(snapshot_mod, "MAX_CHANGES_KEPT", 5)
    rng = random.Random(seed)
    store = ObjectStore()
    fast, plain = DraManager(store), DraManager(store)
    plain.incremental_claims = False
    undo: list[Any] = []
    names = [f"c{i}" for i in range(10)]
    for step in range(80):
        store.journal = undo.append if rng.random() < 0.3 else None
        for _ in range(rng.choice((1, 1, 2, 7))):
            name = rng.choice(names)
            if rng.random() < 0.3:
                store.remove("ResourceClaim", "ns", name)
            else:
                store.add(_dra_claim_obj(rng, name))
        store.journal = None
        if undo and rng.random() < 0.4:
            while undo:
                undo.pop()()
        got, want, rebuilt = fast.allocated_state(), plain.allocated_state(), fast._allocated_state_rebuilt()
        for other in (want, rebuilt):
            assert got.allocated_devices == other.allocated_devices, step
            assert got.allocated_shared_device_ids == other.allocated_shared_device_ids
            assert got.aggregated_capacity == other.aggregated_capacity
        assert got.allocated_by_pool == want.allocated_by_pool


def test_object_store_changes_since() -> None:
    from scheduling_framework.state.snapshot import MAX_CHANGES_KEPT, ObjectStore

    store = ObjectStore()
    mark = store.change_mark("ResourceClaim")
    store.add(_dra_claim_obj(random.Random(1), "a"))
    store.remove("ResourceClaim", "ns", "a")
    store.remove("ResourceClaim", "ns", "never-there")  # no change
    assert store.changes_since("ResourceClaim", mark) == [("ns", "a"), ("ns", "a")]
    assert store.changes_since("DeviceClass", 0) == []
    for i in range(MAX_CHANGES_KEPT):
        store.add(_dra_claim_obj(random.Random(i), f"b{i}"))
    assert store.changes_since("ResourceClaim", mark) is None
    late = store.change_mark("ResourceClaim")
    store.remove("ResourceClaim", "ns", "b0")
    assert store.changes_since("ResourceClaim", late) == [("ns", "b0")]


# --- preemption: victims sorted by importance (plugins_intree/defaultpreemption/preemption.py) ----------------


@pytest.mark.parametrize("seed", range(6))
def test_preemption_importance_key_sort_equals_cmp_sort(seed: int) -> None:
    """With the default more_important_pod, sort_by_importance's key sort gives the comparison sort's order
    (ties in priority and start time, pods not started yet, naive and aware start times)."""
    from plugins_intree.defaultpreemption.preemption import more_important_pod, sort_by_importance

    rng = random.Random(seed)
    pods = []
    for i in range(40):
        status: dict[str, Any] = {}
        if rng.random() < 0.8:
            zone = rng.choice(("Z", "+00:00", "+02:00"))
            status["startTime"] = f"2024-01-01T0{rng.randint(0, 2)}:00:0{rng.randint(0, 3)}{zone}"
        pods.append(Pod.from_dict({"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
                                   "spec": {"priority": rng.choice((0, 10, 100, -5)),
                                            "containers": [{"name": "c"}]},
                                   "status": status}))
    wrapped = [(i, p) for i, p in enumerate(pods)]
    fast, plain = list(wrapped), list(wrapped)
    sort_by_importance(fast, more_important_pod, lambda x: x[1])
    sort_by_importance(plain, lambda a, b: more_important_pod(a, b), lambda x: x[1])
    assert [i for i, _ in fast] == [i for i, _ in plain]
    assert [i for i, _ in fast] != list(range(40))  # the sort moved pods


# --- constant score columns (DynamicResources' Score for pods without claims) -------------------------------


def _explained_run(docs: list[dict[str, Any]], seed: int) -> list[Any]:
    from scheduling_framework.config import load_config
    from scheduling_framework.ingest.cluster import cluster_from_documents

    c = cluster_from_documents(docs)
    s = Scheduler(load_config(None), seed=seed, explain=True)
    s.load(c.nodes, c.pods, c.objects)
    s.run()
    return [(k, r.to_dict(explain=True)) for k, r in sorted(s.results.items())]


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_constant_score_column_equals_plain_scoring(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamicResources' ``score_constant`` (0 for pods without claims or without firstAvailable requests) gives
    the same placements, seeded tie-breaks and explain scores (raw, normalized, weighted per plugin) as calling
    Score on every node and NormalizeScore: pods with and without claims, one after another."""
    import scheduling_framework.runtime.framework as fw
    from plugins_intree.dynamicresources.plugin import DynamicResources

    rng = random.Random(seed)
    docs = _dra_cluster_docs(rng)
    for p in range(12):  # pods without claims, most of a real cluster
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"plain{p}", "namespace": "default",
                                                                   "uid": f"plain{p}"},
                     "spec": {"containers": [{"name": "c", "image": "img", "resources": {
                         "requests": {"cpu": f"{rng.randint(1, 3)}"}}}]}})
    used = []
    real = DynamicResources.score_constant

    def spy(self: Any, state: CycleState, pod: Pod) -> int | None:
        c = real(self, state, pod)
        used.append(c)
        return c

    monkeypatch.setattr(DynamicResources, "score_constant", spy)
    fast = _explained_run(docs, seed)
    assert 0 in used  # the constant path was taken
    monkeypatch.setattr(fw, "constant_scorer", lambda plugin: None)
    used.clear()
    plain = _explained_run(docs, seed)
    assert not used
    assert fast == plain
    assert any("DynamicResources" in node_scores for _, d in fast for node_scores in d.get("scores", {}).values())


def test_constant_score_is_ignored_when_a_subclass_overrides_score() -> None:
    from plugins_intree.dynamicresources.plugin import DynamicResources
    from scheduling_framework.runtime.framework import constant_scorer

    class Custom(DynamicResources):
        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, None]:
            return 42, None

    assert constant_scorer(object.__new__(DynamicResources)) is not None
    assert constant_scorer(object.__new__(Custom)) is None


# --- preemption's dry run: bulk removal and one shared CycleState copy (plugins_intree/defaultpreemption) ------


@pytest.mark.parametrize("seed", range(6))
def test_remove_pods_equals_one_by_one_removal(seed: int) -> None:
    """NodeInfo.remove_pods leaves the same pods in the same order, the same aggregates and index as remove_pod
    called for each, and moves the generation (one journal note instead of one per pod)."""
    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=1, bound=25, pending=0)
    base = NodeInfo(nodes[0], running)
    for _ in range(20):
        picks = rng.sample(base.pods, rng.randint(0, len(base.pods)))
        if rng.random() < 0.3:  # a pod that is not on the node is passed over
            picks.append(PodInfo(_pod(rng, 999, nodes[0].name)))
        one, bulk = base.clone(), base.clone()
        got = sum(one.remove_pod(pi) for pi in picks)
        gen = bulk.generation
        assert bulk.remove_pods(picks) == got
        assert [pi.pod.metadata.uid for pi in bulk.pods] == [pi.pod.metadata.uid for pi in one.pods]
        assert bulk.snapshot_state() == one.snapshot_state()
        assert all(bulk.get_pod(pi.pod.metadata.uid) is pi for pi in bulk.pods)
        assert (bulk.generation != gen) == (got > 0)


def _preemption_run(seed: int, fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    import plugins_intree.defaultpreemption.plugin as dp
    import plugins_intree.defaultpreemption.preemption as dpp
    import scheduling_framework.runtime.framework as fw

    monkeypatch.setattr(dp, "BULK_REMOVAL", fast)
    monkeypatch.setattr(dpp, "SCRATCH_COPIES", fast)
    monkeypatch.setattr(dp, "SHARED_DRY_RUN_STATE", fast)
    monkeypatch.setattr(dp, "FILTER_PLAN", fast)
    monkeypatch.setattr(fw, "SHARE_UNEXTENDED_STATE", fast)
    rng = random.Random(seed)
    nodes = [Node.from_dict({"kind": "Node", "metadata": {"name": f"m{i}", "labels": {
        "kubernetes.io/hostname": f"m{i}", "zone": f"z{i % 3}"}},
        "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}) for i in range(16)]
    objects = [KubeObject.from_dict({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                     "metadata": {"name": "pdb", "namespace": "default"},
                                     "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
                                     "status": {"disruptionsAllowed": 1}})]
    low = []
    for i in range(64):
        labels = {"app": rng.choice(("guarded", "web", "db"))}
        spec: dict[str, Any] = {"nodeName": f"m{i // 4}", "priority": rng.choice((0, 1, 5)), "containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": rng.choice(("500m", "900m", "1"))}}}]}
        low.append(Pod.from_dict({"kind": "Pod", "metadata": {"name": f"low{i}", "namespace": "default",
                                                              "labels": labels}, "spec": spec}))
    pending = []
    for i in range(40):
        spec = {"priority": rng.choice((3, 10, 10)), "containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": rng.choice(("1", "2", "3"))}}}]}
        if rng.random() < 0.3:  # anti-affinity: InterPodAffinity's AddPod / RemovePod run in the dry run
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]}}
        pending.append(Pod.from_dict({"kind": "Pod", "metadata": {"name": f"q{i}", "namespace": "default",
                                                                  "labels": {"app": "web"}}, "spec": spec}))
    sched = Scheduler(seed=seed)
    sched.add_object(KubeObject.from_dict({"kind": "Namespace", "metadata": {"name": "default"}}))
    for o in objects:
        sched.add_object(o)
    sched.load(nodes, [*low, *pending])
    return [(r.pod, r.outcome, r.node, r.nominated_node, tuple(r.victims), r.message) for r in sched.run()]


@pytest.mark.parametrize("seed", range(6))
def test_preemption_bulk_removal_equals_plain(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Preemption with the dry run's bulk removal and shared CycleState copy (when no PreFilter extension runs
    for the preemptor), its Filter plugins listed once per node, and its NodeInfo copies kept out of the
    change journal, gives the same placements,
    nominations, victims and messages as the plain dry run (one removal and one RemovePod at a time, a state
    copy per node, every copy noted); preemptors with anti-affinity take the plain path in both, PDBs and
    priorities vary."""
    fast = _preemption_run(seed, True, monkeypatch)
    plain = _preemption_run(seed, False, monkeypatch)
    assert fast == plain
    assert any(victims for *_, victims, _ in fast)


# --- host selection: the inline reservoir sampling (runtime/algorithm.py) ---------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_inline_reservoir_draws_exactly_as_randrange(seed: int) -> None:
    """_reservoir_inline picks the node the plain reservoir loop (Random.randrange per tie) picks and leaves the
    generator in the same state: ties before the maximum, many ties with it, none, one node."""
    from scheduling_framework.runtime.algorithm import _reservoir_inline

    def plain(totals: list[int], rng: random.Random) -> int:
        best, best_score, count = 0, totals[0], 1
        for i in range(1, len(totals)):
            if totals[i] > best_score:
                best, best_score, count = i, totals[i], 1
            elif totals[i] == best_score:
                count += 1
                if rng.randrange(count) == 0:
                    best = i
        return best

    rng = random.Random(seed)
    for trial in range(400):
        n = rng.choice((1, 2, 3, rng.randint(1, 40), rng.randint(200, 1200)))
        values = rng.choice(([5, 6, 7], [1, 2], [3], list(range(50)), [290, 291, 300, 300, 300]))
        totals = [rng.choice(values) for _ in range(n)]
        a, b = random.Random(trial), random.Random(trial)
        assert _reservoir_inline(totals, a.getrandbits) == plain(totals, b), (seed, trial)
        assert a.getstate() == b.getstate()


# --- the scheduling queue: PrioritySort's order as a key (scheduling_framework/state/queue.py) ------------------------


@pytest.mark.parametrize("seed", range(6))
def test_queue_sort_key_order_equals_less(seed: int) -> None:
    """A queue ordering by PrioritySort.sort_key pops the pods in the order of the queue asking PrioritySort.less:
    priorities and timestamps with ties, pods re-added after failures, interleaved pushes and pops."""
    from plugins_intree.queuesort.plugin import PrioritySort
    from scheduling_framework.state.queue import SchedulingQueue

    rng = random.Random(seed)
    sort = PrioritySort()
    now = [0.0]
    keyed = SchedulingQueue(sort.less, lambda: now[0], sort_key=sort.sort_key)
    plain = SchedulingQueue(sort.less, lambda: now[0])
    popped: tuple[list[str], list[str]] = ([], [])
    for step in range(300):
        if rng.random() < 0.6:
            pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": f"p{step}", "namespace": "default",
                                                             "uid": f"u{step}"},
                                 "spec": {"priority": rng.choice((0, 0, 10, -5, 1000)), "containers": []}})
            for q in (keyed, plain):
                q.add(q.new_info(pod))
        else:
            fails = rng.random() < 0.3  # fails and comes back through backoff
            for q, out in zip((keyed, plain), popped, strict=True):
                qpi = q.pop()
                if qpi is not None:
                    out.append(qpi.pod.uid)
                    if fails:
                        q.add_unschedulable(qpi, moved_during_cycle=True)
        if rng.random() < 0.5:
            now[0] += rng.choice((0.0, 0.5, 2.0))
    assert popped[0] == popped[1] and popped[0]


def test_queue_sort_key_is_ignored_when_a_subclass_overrides_less() -> None:
    from plugins_intree.queuesort.plugin import PrioritySort

    class Reverse(PrioritySort):
        def less(self, a: Any, b: Any) -> bool:
            return PrioritySort.less(self, b, a)

    sched = Scheduler(seed=1)
    fwk = next(iter(sched.profiles.values()))
    assert fwk.queue_sort_key() is not None
    fwk._points["queueSort"] = [Reverse()]
    assert fwk.queue_sort_key() is None


def test_kept_filter_plans_equal_the_plain_list() -> None:
    """Framework.filter_plugins_for keeps one plan per set of skipped plugins: the same (name, method) pairs, in
    order, as listing the profile's Filter plugins afresh; a replaced plugin list is listed afresh."""
    sched = Scheduler(seed=1)
    fwk = next(iter(sched.profiles.values()))
    names = [pl.name for pl in fwk._points["filter"]]
    rng = random.Random(3)
    for _ in range(30):
        state = CycleState()
        state.skip_filter_plugins = set(rng.sample(names, rng.randint(0, 3)))
        plain = [(pl.name, pl.filter) for pl in fwk._points["filter"] if pl.name not in state.skip_filter_plugins]
        assert list(fwk.filter_plugins_for(state)) == plain
    fwk._points["filter"] = fwk._points["filter"][:2]
    assert [n for n, _ in fwk.filter_plugins_for(CycleState())] == names[:2]


@pytest.mark.parametrize("seed", range(6))
def test_interpodaffinity_prescore_skip_without_terms_equals_plain(seed: int) -> None:
    """InterPodAffinity PreScore skips at once a pod without preferred terms when no node has a pod with
    (anti-)affinity; the plain pass (topology_scores over those nodes) finds no term anywhere then and skips too.
    Otherwise the plain pass runs: it skips exactly when its map is empty."""
    from plugins_intree.interpodaffinity.plugin import PRE_SCORE_STATE_KEY, _preferred_terms
    from plugins_intree.interpodaffinity.scoring import topology_scores

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=8, bound=rng.choice((0, 4, 12)), pending=40)
    if seed % 2:  # no existing pod with (anti-)affinity: the shortcut's case
        running = [p for p in running if p.spec.affinity is None]
    sched = _scheduler(nodes, running)
    fwk = sched.profile()
    sched.cache.update_snapshot(sched.snapshot)
    pl = fwk.plugins["InterPodAffinity"]
    shortcut = 0
    for pod in waiting:
        state = CycleState()
        st = pl.pre_score(state, pod, sched.snapshot.list())
        affinity, anti = _preferred_terms(pod)
        has = bool(affinity) or bool(anti)
        with_affinity = sched.snapshot.have_pods_with_affinity_list()
        plain = topology_scores(pod, affinity, anti, pl._namespace_labels(pod.metadata.namespace),
                                sched.snapshot.list() if has else with_affinity, has, pl.args.hard_pod_affinity_weight)
        if plain is None:
            assert st is not None and st.code.name == "SKIP"
            shortcut += not has and not with_affinity
        else:
            assert st is None and state.read(PRE_SCORE_STATE_KEY).topology_score == plain
    assert shortcut or seed % 2 == 0
# --- per-pod PreFilter work kept across cycles (what-if loops ask about the same Pod objects again) ----------


def _feature_pod(rng: random.Random, i: int) -> Pod:
    container: dict[str, Any] = {"name": "c", "image": "img"}
    if rng.random() < 0.3:
        container["restartPolicyRules"] = [{"action": "RestartAllContainers", "exitCodes": {
            "operator": "In", "values": [1]}}]
    if rng.random() < 0.3:
        container["volumeMounts"] = [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]
    spec: dict[str, Any] = {"containers": [container], "volumes": [{"name": "v", "emptyDir": {}}]}
    if rng.random() < 0.3:
        spec["hostUsers"] = False
        spec["hostNetwork"] = rng.random() < 0.5
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": f"f{i}", "namespace": "default"}, "spec": spec})


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
@pytest.mark.parametrize("release", ["1.35", "1.36", "1.37"])
def test_declared_features_kept_per_pod_equal_plain(seed: int, release: str) -> None:
    """NodeDeclaredFeatures keeps a pod's required features per Pod object: asked again and again, in any order,
    for pods with and without feature-bearing fields, PreFilter gives what the plain plugin infers afresh."""
    from types import SimpleNamespace

    from plugins_intree.nodedeclaredfeatures.plugin import PRE_FILTER_STATE_KEY, NodeDeclaredFeatures

    rng = random.Random(seed)
    handle = SimpleNamespace(kubernetes_version=release)
    fast, plain = NodeDeclaredFeatures(None, handle), NodeDeclaredFeatures(None, handle)
    plain.fast_paths = False
    pods = [_feature_pod(rng, i) for i in range(20)]
    needing = 0
    for _ in range(3):
        for p in rng.sample(pods, len(pods)):
            got = []
            for pl in (fast, plain):
                state = CycleState()
                r, st = pl.pre_filter(state, p, [])
                got.append((r, None if st is None else (st.code, st.reasons), state.get(PRE_FILTER_STATE_KEY)))
            assert got[0] == got[1]
            needing += bool(got[0][2])
    assert len(fast._required) == len(pods) and not plain._required
    if release != "1.35":
        assert needing > 0


def _dra_whatif(docs: list[dict[str, Any]], seed: int, fast: bool) -> list[Any]:
    from scheduling_framework.ingest.cluster import cluster_from_documents
    from scheduling_framework.simulation import Simulator

    c = cluster_from_documents(docs)
    sim = Simulator.from_cluster(c, seed=seed)
    sim._fast = fast
    rng = random.Random(seed)
    template = next(n for n in c.nodes if n.name == "n0")
    out: list[Any] = []
    for _ in range(6):
        with sim.fork():
            new = sim.add_node_from_template(template, name_prefix="new")
            pods = rng.sample(c.pending_pods, rng.randint(3, len(c.pending_pods)))
            outcome = sim.schedule_pods(pods, nodes=None if rng.random() < 0.5 else new)
            out.append((_placement_sig(outcome), [sim.pod_claims(p) for p in pods], sim.cluster.snapshot.describe()))
    out.append(sim.cluster.snapshot.describe())
    return out


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_dra_shared_no_claims_state_equals_plain(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamicResources gives every pod without claims (and without resources a DeviceClass could back) one
    shared, unchanging PreFilter state, and it and the Simulator keep per Pod object whether it requests such
    resources: what-if
    loops mixing claim pods, extended-resource pods and plain pods (forks, placements on template nodes, Reserve
    and Unreserve on revert) decide and allocate exactly as the plain plugin, and the shared state stays empty."""
    from plugins_intree.dynamicresources.plugin import _NO_CLAIMS, DynamicResources, _StateData

    rng = random.Random(seed)
    docs = _dra_cluster_docs(rng)
    for p in range(8):
        requests = {"cpu": "100m"}
        if rng.random() < 0.4:
            requests["deviceclass.resource.kubernetes.io/any"] = "1"
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"plain{p}", "namespace": "default"},
                     "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": requests}}]}})
    fast = _dra_whatif(docs, seed, fast=True)
    fresh = _StateData()
    assert all(getattr(_NO_CLAIMS, k) == getattr(fresh, k) for k in _StateData.__slots__ if k != "lock")
    monkeypatch.setattr(DynamicResources, "fast_paths", False)
    assert fast == _dra_whatif(docs, seed, fast=False)


@pytest.mark.parametrize("seed", range(4))
def test_node_content_token_names_the_node(seed: int) -> None:
    """ClusterSnapshot.node_content: whenever a node's token comes back, the node holds what it held under it
    before (its Node and its pods, in order), through forks, reverts, commits, repeated changes, pods bound
    and removed, nodes added from templates and removed."""
    from scheduling_framework.simulation import ClusterSnapshot

    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=5, bound=10, pending=0)
    cs = ClusterSnapshot(nodes, running)
    templates = [_node(rng, 900 + j) for j in range(2)]
    extra = [_pod(rng, 700 + i) for i in range(4)]
    seen: dict[int, tuple[Any, Any]] = {}
    hits = 0
    for _ in range(200):
        for name in cs.node_names():
            (token,) = cs.node_content([name])
            ni = cs.get(name)
            state = (ni.node.to_dict(), [pi.pod.to_dict() for pi in ni.pods])
            old = seen.get(id(token))
            if old is not None:
                assert old[1] == state
                hits += 1
            seen[id(token)] = (token, state)
        _random_snapshot_change(rng, cs, templates, extra, (0.25, 0.45, 0.5, 0.65, 0.9))
    assert hits > 100
    with pytest.raises(KeyError):
        cs.node_content(["nowhere"])


def _cold_whatif_run(seed: int, fast: bool) -> tuple[list[Any], int]:
    """The cold estimator loop on a random cluster: every question first binds a pod (with or without
    required anti-affinity and other terms) to an existing node, then asks which pending pods land on new
    template nodes; questions repeat, with the same or another binding."""
    from scheduling_framework.simulation import ClusterSnapshot, Simulator

    rng = random.Random(seed)
    nodes, running, _ = _cluster(seed, nodes=rng.randint(4, 10), bound=rng.randint(5, 20), pending=0)
    # (no running pod with required anti-affinity: the probes bring some in, sometimes)
    running = [p for p in running if not (p.spec.affinity and p.spec.affinity.pod_anti_affinity and p.spec.affinity
                                          .pod_anti_affinity.required_during_scheduling_ignored_during_execution)]
    sim = Simulator(seed=3, cluster=ClusterSnapshot(nodes, running), objects=_whatif_objects())
    sim._fast = fast
    templates = [_node(rng, 900 + j) for j in range(2)]
    plain = Pod.from_dict({"kind": "Pod", "metadata": {"name": "plain", "namespace": "default", "labels": {"app": "a"}},
                           "spec": {"containers": [{"name": "c", "image": "img1", "resources": {
                               "requests": {"cpu": rng.choice(("500m", "1", "2"))}}}]}})
    batches = [_pending(rng, seed * 10 + b) + _copies(plain, 4, f"plain{b}") for b in range(2)]
    # mostly pods without terms (the usual cold question), some with required anti-affinity against pending pods
    probes = [_pod(rng, 800 + i) for i in range(4)]
    for i in range(2):
        d = _pod(rng, 820 + i).to_dict()
        d["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term(rng, rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone")))]}}
        probes.append(Pod.from_dict(d))
    out: list[Any] = []
    for it in range(40):
        probe = probes[rng.randrange(len(probes))]
        where = rng.choice(nodes).name
        tpl, count, b = rng.randrange(2), rng.choice((1, 1, 2)), rng.randrange(2)
        with sim.fork():
            sim.add_pod(probe, where)
            new = sim.add_node_from_template(templates[tpl], count=count, name_prefix="new")
            outcome = sim.schedule_pods(batches[b], nodes=new)
            out.append((it, _placement_sig(outcome), sim.cluster.snapshot.describe()))
    out.append(sim.rng.getstate())
    return out, sim._scoped_hits


@pytest.mark.parametrize("seed", range(8))
def test_candidate_scoped_memo_equals_plain(seed: int) -> None:
    """Answers remembered under the candidate nodes' content (Simulator._cycle_memo, scoped): a cold what-if
    loop, where each question first changes another node (sometimes with a pod whose required anti-affinity
    reaches the pending pods), decides exactly as the plain path: placements, messages, statuses, diagnoses,
    snapshots and random draws."""
    fast, hits = _cold_whatif_run(seed, fast=True)
    plain, _ = _cold_whatif_run(seed, fast=False)
    assert fast == plain
    assert hits > 0


def test_filter_runs_read_each_run_once_when_no_verdict_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle that finds no kept verdict (another pod class wrote every node's last one) reads each run of nodes
    once and visits its nodes one by one: not one re-read of the run per node (what made Unschedulable, whose
    churn pods alternate with the measured ones, four times slower)."""
    import scheduling_framework.runtime.algorithm as algorithm_mod

    rng = random.Random(11)
    nodes = [_sig_node(rng, i) for i in range(400)]
    sched = _scheduler(nodes, [])
    fwk = next(iter(sched.profiles.values()))
    algo = algorithm_mod.Algorithm(fwk, rng=random.Random(1))
    sched.cache.update_snapshot(sched.snapshot)
    for ni in sched.snapshot.list():
        ni.forget()
    reads = [0]
    real = algorithm_mod._rotated

    def counting(*args: Any) -> Any:
        reads[0] += 1
        return real(*args)

    monkeypatch.setattr(algorithm_mod, "_rotated", counting)
    pod = Pod.from_dict({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}})
    feasible, _ = algo.find_nodes_that_fit_pod(CycleState(), pod)
    assert feasible
    # each run (no longer than _RUN nor than the nodes still to be found) reads its nodes and its kept verdicts
    # once: a few runs here (3), never one read per node (400)
    assert reads[0] <= 2 * (400 // algorithm_mod._RUN + 6)


# --- the snapshot's pods by label (scheduling_framework/state/pod_index.py) ------------------------------------

_IDX_KEYS = ("app", "tier", "team")


def _idx_pod(rng: random.Random, i: int, node: str) -> Pod:
    labels = {k: rng.choice(("x", "y", "z")) for k in _IDX_KEYS if rng.random() < 0.6}
    meta: dict[str, Any] = {"name": f"ix{i}", "namespace": rng.choice(("default", "other", "third")),
                            "labels": labels, "uid": f"ix-{i}"}
    if rng.random() < 0.1:
        meta["deletionTimestamp"] = "2026-11-01T00:00:00Z"
    return Pod.from_dict({"kind": "Pod", "metadata": meta,
                          "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}})


def _idx_selector(rng: random.Random) -> Any:
    from scheduling_framework.api.selectors import LabelSelector, LabelSelectorRequirement

    if rng.random() < 0.05:
        return None
    labels = {k: rng.choice(("x", "y", "z")) for k in _IDX_KEYS if rng.random() < 0.3}
    exprs = []
    for _ in range(rng.choice((0, 0, 1, 2))):
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        values: tuple[str, ...] = ()
        if op in ("In", "NotIn"):
            values = tuple(rng.choice(("x", "y", "z", "x")) for _ in range(rng.randint(1, 3)))
        exprs.append(LabelSelectorRequirement(rng.choice(_IDX_KEYS), op, values))
    return LabelSelector(labels, tuple(exprs))


def _idx_full_pass(nodes: list[NodeInfo], selector: Any, namespaces: Any, skip_terminating: bool) -> dict[int, int]:
    out: dict[int, int] = {}
    for i, ni in enumerate(nodes):
        n = 0
        for pi in ni.pods:
            meta = pi.pod.metadata
            if namespaces is not None and meta.namespace not in namespaces:
                continue
            if skip_terminating and meta.deletion_timestamp is not None:
                continue
            if selector is not None and selector.matches(meta.labels):
                n += 1
        if n:
            out[i] = n
    return out


@pytest.mark.parametrize("seed", range(10))
def test_pod_index_counts_equal_a_full_pass(seed: int) -> None:
    """PodIndex.match_counts equals counting every pod of the list (or answers None, never something else),
    while the list changes as snapshots do: clones swapped in, NodeInfos changed in place, old NodeInfos put
    back, nodes relabelled or renamed, the order shuffled, nodes added and removed; and ``position`` names
    exactly the NodeInfos of the list."""
    from scheduling_framework.state.pod_index import PodIndex

    rng = random.Random(seed)
    nodes = [_spread_node(rng, i) for i in range(rng.randint(1, 25))]
    lst = [NodeInfo(n) for n in nodes]
    k = 0
    for _ in range(rng.randint(0, 120)):
        ni = rng.choice(lst)
        ni.add_pod(_idx_pod(rng, k, ni.name))
        k += 1
    index = PodIndex()
    saved: list[tuple[int, NodeInfo]] = []
    answered = 0
    for step in range(120):
        for _ in range(rng.choice((1, 2, 3))):
            selector = _idx_selector(rng)
            namespaces = rng.choice((None, ("default",), ("other", "third"), ("default", "default"), ()))
            skip = rng.random() < 0.5
            got = index.match_counts(lst, selector, namespaces, skip)
            if got is not None:
                answered += 1
                assert got == _idx_full_pass(lst, selector, namespaces, skip), step
                lists = index.match_lists(lst, selector, namespaces, skip)
                assert lists is not None and {pos: len(pods) for pos, pods in lists.items()} == got
                assert all(selector.matches(pi.pod.metadata.labels) and pi in lst[pos].pods
                           for pos, pods in lists.items() for pi in pods)
            else:
                assert selector is not None
        for i, ni in enumerate(lst):
            assert index.position(ni) == i
        assert index.position(NodeInfo(nodes[0])) is None
        # the list changes
        for _ in range(rng.choice((0, 1, 1, 2))):
            i = rng.randrange(len(lst))
            action = rng.random()
            if action < 0.35:
                saved.append((i, lst[i]))
                c = lst[i].clone()
                if c.pods and rng.random() < 0.4:
                    c.remove_pod(c.pods[rng.randrange(len(c.pods))])
                else:
                    c.add_pod(_idx_pod(rng, k, c.name))
                    k += 1
                lst[i] = c
            elif action < 0.55:
                if lst[i].pods and rng.random() < 0.4:
                    lst[i].remove_pod(lst[i].pods[0])
                else:
                    lst[i].add_pod(_idx_pod(rng, k, lst[i].name))
                    k += 1
            elif action < 0.6:
                # a pod added in place, then the NodeInfo replaced by a clone with one more pod
                lst[i].add_pod(_idx_pod(rng, k, lst[i].name))
                c = lst[i].clone()
                c.add_pod(_idx_pod(rng, k + 1, c.name))
                k += 2
                lst[i] = c
            elif action < 0.65 and saved:
                j, old = saved.pop()
                if j < len(lst) and all(ni.name != old.name for ni in lst[:j] + lst[j + 1:]):
                    lst[j] = old
            elif action < 0.72:
                node = lst[i].node
                assert node is not None
                manifest = node.to_dict()
                manifest["metadata"]["labels"]["topology.kubernetes.io/zone"] = "z9"
                lst[i].set_node(Node.from_dict(manifest))
            elif action < 0.8:
                rng.shuffle(lst)
            elif action < 0.88:
                lst.append(NodeInfo(_spread_node(rng, 1000 + k)))
                k += 1
            elif action < 0.95 and len(lst) > 1:
                del lst[i]
            else:
                c = lst[i].clone()
                node = c.node
                assert node is not None
                manifest = node.to_dict()
                manifest["metadata"]["name"] = f"renamed{step}"
                c.set_node(Node.from_dict(manifest))
                if all(ni.name != c.name for ni in lst):
                    lst[i] = c
    assert answered > 100


@pytest.mark.parametrize("seed", range(8))
def test_spread_index_counts_equal_plain_passes(seed: int) -> None:
    """PreScore states counted from the snapshot's pod index (with node-inclusion policies, hostname
    constraints counted for Score) equal the plain passes', state and every node's score, while the cluster
    changes."""
    from plugins_intree.podtopologyspread.common import SCHEDULE_ANYWAY
    from plugins_intree.podtopologyspread.scoring import calc_pre_score_state, score_domains, score_node
    from scheduling_framework.state.pod_index import PodIndex

    rng = random.Random(seed)
    infos = _spread_infos(rng, rng.randint(5, 40), rng.randint(0, 80))
    plugin = _spread_plugin(infos)
    index = PodIndex()
    templates = [_spread_pod(rng, k) for k in range(8)]
    checked = 0
    for step in range(40):
        pod = rng.choice(templates)
        soft = plugin.constraints_for(pod, SCHEDULE_ANYWAY)
        if soft:
            filtered = [ni for ni in infos if rng.random() < 0.7]
            require_all = bool(pod.spec.topology_spread_constraints)
            fast = calc_pre_score_state(pod, soft, filtered, infos, require_all, None, index)
            plain = calc_pre_score_state(pod, soft, filtered, infos, require_all, None)
            assert repr(fast) == repr(plain), step
            assert [score_node(fast, ni) for ni in infos] == [score_node(plain, ni) for ni in infos], step
            assert score_domains(fast, filtered) == [score_node(plain, ni) for ni in filtered], step
            checked += 1
        i = rng.randrange(len(infos))
        _pod_lands_or_leaves(infos, i, rng, step)
    assert checked


@pytest.mark.parametrize("seed", range(8))
def test_interpodaffinity_index_scores_equal_plain(seed: int) -> None:
    """PreScore's map from the snapshot's pod index and the existing terms' kept sums equals upstream's
    per-(existing pod, term) loop, while nodes change, pods come with and without terms of their own, and the
    hard affinity weight varies."""
    from plugins_intree.interpodaffinity import _terms
    from plugins_intree.interpodaffinity.scoring import ExistingTermSums, topology_scores
    from scheduling_framework.state.pod_index import PodIndex

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 80), pending=30)
    # and pods whose terms select with In / Exists / NotIn / empty selectors, over other namespaces
    running += [_ipa_rich_pod(rng, 500 + i, rng.choice(nodes).name) for i in range(rng.randint(0, 30))]
    waiting += [_ipa_rich_pod(rng, 900 + i, "") for i in range(15)]
    lst = _node_infos(nodes, running)
    index, existing = PodIndex(), ExistingTermSums()
    for step in range(80):
        pod = rng.choice(waiting)
        pi = PodInfo(pod)
        all_pods = bool(pi.preferred_affinity_terms or pi.preferred_anti_affinity_terms)
        listed = lst if all_pods else [ni for ni in lst if ni.pods_with_affinity]
        args = (pod, pi.preferred_affinity_terms, pi.preferred_anti_affinity_terms, _terms.NO_LABELS, listed,
                all_pods, rng.choice((0, 1, 5)))
        assert topology_scores(*args, None, None, lst, index, existing) == _per_pod_topology_scores(*args), step
        lst = list(lst)
        _change_one_node(lst, rng, waiting, any_pod=True)
        _relabel_a_holder(rng, lst, step, lambda ni: bool(ni.pods_with_affinity))


def _relabel_a_holder(rng: random.Random, lst: list[NodeInfo], step: int, holds: Any) -> None:
    """Now and then, a node whose pods have terms (``holds``) relabelled in a clone: its zone moves, so its
    pods' terms count elsewhere (kept terms must read it again although its pods are the same)."""
    holders = [i for i, ni in enumerate(lst) if holds(ni)]
    if holders and rng.random() < 0.3:
        i = rng.choice(holders)
        c = lst[i].clone()
        manifest = c.node.to_dict()  # type: ignore[union-attr]
        manifest["metadata"].setdefault("labels", {})["topology.kubernetes.io/zone"] = f"zone-{step % 3}"
        c.set_node(Node.from_dict(manifest))
        lst[i] = c


def _ipa_rich_selector(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(("labels", "in", "exists", "notin", "empty"))
    if kind == "labels":
        return {"matchLabels": {"app": rng.choice(APPS)}}
    if kind == "in":
        return {"matchExpressions": [{"key": "app", "operator": "In", "values": rng.sample(APPS, rng.randint(1, 2))}]}
    if kind == "exists":
        return {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    if kind == "notin":
        return {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [rng.choice(APPS)]}]}
    return {}


def _ipa_rich_pod(rng: random.Random, i: int, node: str) -> Pod:
    def term() -> dict[str, Any]:
        t: dict[str, Any] = {"labelSelector": _ipa_rich_selector(rng),
                             "topologyKey": rng.choice(("topology.kubernetes.io/zone", "kubernetes.io/hostname"))}
        if rng.random() < 0.3:
            t["namespaces"] = rng.sample(["default", "other"], rng.randint(1, 2))
        if rng.random() < 0.15:
            t["namespaceSelector"] = {}
        return t

    aff: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            aff[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "podAffinityTerm": term()} for _ in range(rng.randint(1, 2))]}
            if kind == "podAffinity" and rng.random() < 0.3:
                aff[kind]["requiredDuringSchedulingIgnoredDuringExecution"] = [term()]
    labels = {"app": rng.choice(APPS)}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(("web", "db"))
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if aff:
        spec["affinity"] = aff
    if node:
        spec["nodeName"] = node
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": f"r{i}", "namespace": rng.choice(("default", "other")),
                                                      "labels": labels}, "spec": spec})


def _required_anti_pod(rng: random.Random, i: int, node: str) -> Pod:
    """A running pod with a required anti-affinity term (zone or hostname) on the rich pods' labels."""
    term = {"labelSelector": _ipa_rich_selector(rng),
            "topologyKey": rng.choice(("topology.kubernetes.io/zone", "kubernetes.io/hostname"))}
    return Pod.from_dict({"kind": "Pod", "metadata": {"name": f"ra{i}", "namespace": "default",
                                                      "labels": {"app": rng.choice(APPS)}},
                          "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}],
                                   "affinity": {"podAntiAffinity": {
                                       "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}})


@pytest.mark.parametrize("seed", range(8))
def test_interpodaffinity_index_prefilter_equals_plain(seed: int) -> None:
    """PreFilter's counts from the snapshot's pod index (the incoming pod's required terms) and from the existing
    required anti-affinity terms kept by term equal the plain passes over every node, while nodes change."""
    from plugins_intree.interpodaffinity import _terms
    from plugins_intree.interpodaffinity._kept_terms import KeptTerms
    from plugins_intree.interpodaffinity.filtering import (
        anti_affinity_inputs,
        anti_affinity_terms_of,
        existing_anti_affinity_counts,
        incoming_affinity_anti_affinity_counts,
        incoming_counts_from_index,
    )
    from scheduling_framework.state.pod_index import PodIndex

    rng = random.Random(seed)
    nodes, running, waiting = _cluster(seed, nodes=rng.randint(4, 20), bound=rng.randint(5, 80), pending=30)
    running += [_ipa_rich_pod(rng, 500 + i, rng.choice(nodes).name) for i in range(rng.randint(0, 30))]
    running += [_required_anti_pod(rng, 700 + i, rng.choice(nodes).name) for i in range(rng.randint(3, 20))]
    waiting += [_ipa_rich_pod(rng, 900 + i, "") for i in range(15)]
    lst = _node_infos(nodes, running)
    # as the plugin keeps them: a changed node whose inputs (node, pods with required anti-affinity) are the
    # same is not read again
    index, kept = PodIndex(), KeptTerms(anti_affinity_terms_of, anti_affinity_inputs)
    answered = counted = 0
    for step in range(80):
        pod = rng.choice(waiting)
        pi = PodInfo(pod)
        with_anti = [ni for ni in lst if ni.pods_with_required_anti_affinity]
        ns_labels = rng.choice((_terms.NO_LABELS, {"team": "x"}))
        want = existing_anti_affinity_counts(pod, ns_labels, with_anti)
        assert existing_anti_affinity_counts(pod, ns_labels, with_anti, None, kept, lst) == want, step
        counted += bool(want)
        affinity, anti = pi.required_affinity_terms, pi.required_anti_affinity_terms
        got = incoming_counts_from_index(affinity, anti, lst, index)
        if got is not None:
            answered += 1
            assert got == incoming_affinity_anti_affinity_counts(affinity, anti, lst), step
        lst = list(lst)
        _change_one_node(lst, rng, waiting + running, any_pod=True)
        _relabel_a_holder(rng, lst, step, lambda ni: bool(ni.pods_with_required_anti_affinity))
    assert answered and counted


@pytest.mark.parametrize("seed", range(10))
def test_spread_index_prefilter_equals_plain(seed: int) -> None:
    """PreFilter states counted from the snapshot's pod index and the node objects' domain layout (with
    node-inclusion policies, minDomains, several constraints) equal the plain passes', counts in the same key
    order, while pods come and go, nodes are relabelled and the list is reordered."""
    from plugins_intree.podtopologyspread.common import DO_NOT_SCHEDULE
    from plugins_intree.podtopologyspread.domains import DomainLayoutCache
    from plugins_intree.podtopologyspread.filtering import calc_pre_filter_state
    from scheduling_framework.state.pod_index import PodIndex

    rng = random.Random(seed)
    infos = _spread_infos(rng, rng.randint(5, 40), rng.randint(0, 80))
    plugin = _spread_plugin(infos)
    index, layouts = PodIndex(), DomainLayoutCache(limit=3)
    templates = [_spread_pod(rng, k) for k in range(10)]
    checked = 0
    for step in range(50):
        pod = rng.choice(templates)
        hard = plugin.constraints_for(pod, DO_NOT_SCHEDULE)
        if hard:
            fast = calc_pre_filter_state(pod, hard, infos, None, index, layouts)
            plain = calc_pre_filter_state(pod, hard, infos, None)
            assert repr(fast) == repr(plain), step
            assert [list(m) for m in fast.tp_value_to_match_num] == [list(m) for m in plain.tp_value_to_match_num]
            checked += 1
        i = rng.randrange(len(infos))
        action = rng.random()
        if action < 0.7:
            _pod_lands_or_leaves(infos, i, rng, step)
        elif action < 0.85:
            node = infos[i].node
            assert node is not None
            manifest = node.to_dict()
            manifest["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(("z1", "z5"))
            infos[i].set_node(Node.from_dict(manifest))
        else:
            rng.shuffle(infos)
    assert checked


def _index_run(seed: int, mode: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A whole scheduling run with the pod index answering every selector ("index"), handing over to the kept
    counts after one candidate position ("switch"), or absent ("plain")."""
    import plugins_intree.interpodaffinity.filtering as ipa_filtering
    import plugins_intree.interpodaffinity.scoring as ipa_scoring
    import plugins_intree.podtopologyspread.filtering as pts_filtering
    import plugins_intree.podtopologyspread.scoring as pts_scoring

    if mode == "switch":
        for mod in (ipa_filtering, ipa_scoring, pts_filtering, pts_scoring):
            monkeypatch.setattr(mod, "KEPT_BEYOND", 1)
    elif mode == "plain":
        monkeypatch.delattr(Snapshot, "pod_index")
    rng = random.Random(seed)
    nodes = [_spread_node(rng, i) for i in range(rng.randint(6, 25))]
    running = [_spread_pod(rng, 1000 + j, rng.choice(nodes).name) for j in range(rng.randint(0, 30))]
    running += [_ipa_rich_pod(rng, 2000 + j, rng.choice(nodes).name) for j in range(rng.randint(0, 20))]
    waiting = [_spread_pod(rng, j) for j in range(25)] + [_ipa_rich_pod(rng, 3000 + j, "") for j in range(15)]
    rng.shuffle(waiting)
    sched = _scheduler(nodes, [*running, *waiting])
    sched.explain = True
    out = []
    for r in sched.run():
        d = r.to_dict(explain=True)
        out.append((r.pod, r.outcome, r.node, r.message, d.get("filter"), d.get("scores"), d.get("totalScores")))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("seed", range(6))
def test_index_and_kept_paths_keep_decisions(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole runs (spread constraints, pod (anti-)affinity of every selector kind): decisions, messages, filter
    verdicts and every plugin's scores are the same whether the pod index answers, hands over to the counts kept
    across cycles, or is not there."""
    plain = _index_run(seed, "plain", monkeypatch)
    assert _index_run(seed, "index", monkeypatch) == plain
    assert _index_run(seed, "switch", monkeypatch) == plain


# --- batch Filter (filter_nodes) after the signed filters ---------------------------------------------------


def _constrained_template(rng: random.Random, app: str) -> dict[str, Any]:
    """A pod spec with hard spread constraints and / or required pod (anti-)affinity on its own label."""
    spec = _sig_template(rng)
    sel = {"matchLabels": {"app": app}}
    constraints = []
    for key in rng.sample(("topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"), rng.randint(0, 2)):
        constraints.append({"maxSkew": rng.randint(1, 2), "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": sel})
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    affinity: dict[str, Any] = {}
    if rng.random() < 0.5:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel, "topologyKey": rng.choice(("kubernetes.io/hostname",
                                                              "topology.kubernetes.io/zone"))}]}
    if rng.random() < 0.3:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": rng.choice(("a0", "a1", "a2"))}},
             "topologyKey": "topology.kubernetes.io/zone"}]}
    if affinity:
        spec["affinity"] = {**spec.get("affinity", {}), **affinity}
    return spec


def _batch_filter_run(seed: int, batched: bool, explain: bool) -> list[Any]:
    rng = random.Random(seed)
    nodes = [_sig_node(rng, i) for i in range(rng.randint(10, 30))]
    apps = [f"a{i}" for i in range(3)]
    templates = {app: _constrained_template(rng, app) for app in apps}
    pods = []
    for i in range(rng.randint(30, 70)):
        app = rng.choice(apps)
        pods.append(Pod.from_dict({"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default",
                                                               "labels": {"app": app}},
                                   "spec": templates[app]}))
    sched = _scheduler(nodes, pods)
    sched.explain = explain
    if not batched:
        for fwk in sched.profiles.values():
            fwk._filter_batch = {}
    return _run_results(sched, explain)


@pytest.mark.parametrize("seed", range(16))
def test_batch_filters_equal_plain(seed: int) -> None:
    """PodTopologySpread's and InterPodAffinity's filter_nodes, run on a run of nodes after the signed filters:
    every decision, message, per-node status and explanation equals node-by-node Filter."""
    assert _batch_filter_run(seed, batched=True, explain=True) == _batch_filter_run(seed, batched=False, explain=True)
    assert ([(d["pod"], d["outcome"], d["node"], d["message"]) for d in _batch_filter_run(seed, True, False)]
            == [(d["pod"], d["outcome"], d["node"], d["message"]) for d in _batch_filter_run(seed, False, False)])


class _EvenNodes:
    """A third-party Filter: rejects nodes whose name ends in an even digit; raises on s7 when told to."""

    name = "EvenNodes"
    raise_on = ""

    def __init__(self, args: object = None, handle: object = None) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        from scheduling_framework.status import Code, Status
        if node_info.name == self.raise_on:
            raise RuntimeError("boom")
        if int(node_info.name[-1]) % 2 == 0:
            return Status(Code.UNSCHEDULABLE, "even node")
        return None


class _EvenBatch(_EvenNodes):
    mode = "ok"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        return super().filter(state, pod, node_info)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        if self.mode == "raise":
            raise RuntimeError("batch broke")
        if self.mode == "short":
            return [None]
        if self.mode == "decline":
            return None
        return [self.filter(state, pod, ni) for ni in nodes]


class _EvenBatchFilterOverridden(_EvenBatch):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        from scheduling_framework.status import Code, Status
        return Status(Code.UNSCHEDULABLE, "subclass says no") if node_info.name == "s1" else None


def _even_run(cls: type, mode: str, raise_on: str) -> list[dict[str, Any]]:
    from scheduling_framework.testing import framework_for
    cls.mode = mode  # type: ignore[attr-defined]
    cls.raise_on = raise_on  # type: ignore[attr-defined]
    nodes = [{"kind": "Node", "metadata": {"name": f"s{i}", "labels": {"kubernetes.io/hostname": f"s{i}"}},
              "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for i in range(10)]
    pods = [{"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "i",
                                      "resources": {"requests": {"cpu": "100m"}}}]}} for i in range(6)]
    h = framework_for([cls], with_defaults=True, nodes=nodes, pods=pods, seed=3)
    return h.schedule_all()


@pytest.mark.parametrize("mode", ["ok", "raise", "short", "decline"])
@pytest.mark.parametrize("raise_on", ["", "s7"])
def test_a_third_party_filter_nodes_equals_its_filter(mode: str, raise_on: str) -> None:
    """A plugin's filter_nodes is used after the signed filters; when it raises, declines or answers for
    another number of nodes, its filter runs node by node: the results equal the plugin without a batch."""
    _EvenBatch.name = _EvenNodes.name
    assert _even_run(_EvenBatch, mode, raise_on) == _even_run(_EvenNodes, mode, raise_on)


def test_filter_nodes_is_not_used_when_a_subclass_overrides_filter_alone() -> None:
    from scheduling_framework.runtime.framework import batch_filter
    assert batch_filter(_EvenBatch()) is not None
    assert batch_filter(_EvenBatchFilterOverridden()) is None
    results = _even_run(_EvenBatchFilterOverridden, "ok", "")
    assert all(r["node"] != "s1" for r in results)
    assert any(r["node"] in {"s0", "s2", "s4"} for r in results)  # the parent's rule does not apply
