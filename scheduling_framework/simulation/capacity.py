"""How many more copies of a pod fit: cluster-capacity's question, answered with the real profile.

Copies of the pod are scheduled one after another, each placement visible to the next, until a copy no
longer fits or the requested number is reached. Each copy gets a full scheduling cycle's answer (Filter,
Score and host selection decide where it goes); the answer's per-node statuses when the last copy failed
say what limits each node, in upstream's words.

A full cycle per copy is slow at thousands of nodes, and for most pods it recomputes what cannot have
changed: placing a copy on node X changes X and nothing else, so when every plugin that runs for the pod
judges a node by that node alone (see :data:`NODE_LOCAL_PLUGINS`), the Filter verdicts and raw scores of
every other node are the same as for the previous copy. :func:`capacity` then keeps them, re-evaluates
only the node that received the copy, and redoes the cheap cross-node steps (which nodes the round-robin
search reaches, score normalization, host selection with the same random draws) exactly as a cycle does.
The decisions are the plain loop's (tests/simulation/test_capacity.py checks them against it); the final
failure always comes from a real cycle, so its message is authoritative.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.workload import POD_GROUP, SCHEDULING_GROUP
from scheduling_framework.config.defaults import GANG_SCHEDULING
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ValidationError
from scheduling_framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from scheduling_framework.runtime.algorithm import num_feasible_nodes_to_find
from scheduling_framework.runtime.framework import batch_normalizer
from scheduling_framework.simulation.core import SimulatorCore
from scheduling_framework.simulation.placement import Placement
from scheduling_framework.state.podgroups import group_name, is_member, lookup_policy, uses_pod_group_api
from scheduling_framework.status import Code

#: Copies placed at most when no ``max`` is given (a profile without resource or pod-count checks would
#: otherwise place copies forever).
SAFETY_LIMIT = 100_000

#: Why the loop stopped.
STOP_UNSCHEDULABLE = "Unschedulable"  # a copy no longer fits: ``reasons`` say why, per node
STOP_LIMIT = "LimitReached"           # ``max`` copies (or SAFETY_LIMIT) were placed
STOP_ERROR = "Error"                  # a plugin failed; ``message`` says which

#: In-tree plugins whose PreFilter / Filter / PreScore / Score results for a node depend only on the pod
#: and that node (plus data that adding copies of the pod does not change: node count, image spread):
#: placing a copy on another node cannot change them. NodeAffinity's and TaintToleration's score
#: normalization does look across nodes; it is redone for every copy.
NODE_LOCAL_PLUGINS = frozenset({
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultPreemption",
    "DefaultBinder",
})
#: Node-local for a pod without pod affinity or anti-affinity terms of its own: its Filter then reads only
#: existing pods' required anti-affinity and its Score only existing pods' affinity terms, and copies of
#: such a pod carry neither.
INTER_POD_AFFINITY = "InterPodAffinity"
#: Score plugins without PreScore that score every node 0 for a pod their PreFilter skipped (DynamicResources
#: for a pod without claims): node-local for such a pod.
ZERO_SCORE_WHEN_FILTER_SKIPPED = frozenset({"DynamicResources"})


@attrs.frozen
class CapacityResult:
    """The answer of :func:`capacity`.

    ``count`` copies were placed, ``per_node[node]`` of them on each node that received any (in the order
    nodes first received one). ``stop_reason`` is one of ``Unschedulable`` (the next copy did not fit:
    ``message`` is upstream's "0/N nodes are available: ..." and ``reasons`` maps every node to what
    rejected it), ``LimitReached`` or ``Error``. ``placements`` is the node of each copy in order.
    """

    pod: str
    count: int
    per_node: Mapping[str, int]
    reasons: Mapping[str, str]
    stop_reason: str
    message: str = ""
    placements: tuple[str, ...] = attrs.field(default=(), repr=False)
    #: pods in one copy: 1, or a gang's minCount (``count`` then counts whole gangs, ``per_node`` pods)
    pods_per_copy: int = 1

    def to_dict(self) -> dict[str, Any]:
        d = {"pod": self.pod, "count": self.count, "perNode": dict(self.per_node),
             "reasons": dict(self.reasons), "stopReason": self.stop_reason, "message": self.message}
        if self.pods_per_copy != 1:
            d["podsPerCopy"] = self.pods_per_copy
        return d


def pod_copy(template: Pod, index: int) -> Pod:
    """Copy ``index`` of the pod: name ``<name>-<index>``, its own uid, no node, no nomination."""
    raw = dict(template._raw)  # shallow: the copy's manifest shares what it does not change
    meta = dict(raw.get("metadata") or {})
    meta["name"] = f"{template.name}-{index}"
    uid = f"{template.uid}-copy-{index}"
    meta["uid"] = uid
    raw["metadata"] = meta
    spec = dict(raw.get("spec") or {})
    spec.pop("nodeName", None)
    raw["spec"] = spec
    status = dict(raw.get("status") or {})
    status.pop("nominatedNodeName", None)
    raw["status"] = status
    return Pod(attrs.evolve(template.metadata, name=meta["name"], uid=uid),
               attrs.evolve(template.spec, node_name=""),
               attrs.evolve(template.status, nominated_node_name=""), raw)


def capacity(sim: SimulatorCore, pod: Pod, max: int | None = None, *, fast: bool = True) -> CapacityResult:
    """How many copies of ``pod`` fit in ``sim``'s cluster, where, and what then limits each node.

    Copies go through priority admission and PreEnqueue like any pod (a gated pod fits zero times), then
    are placed one by one as :meth:`Simulator.schedule_pods` places pods (no preemption). The cluster is
    left as it was (the copies are placed in a fork that is reverted). ``fast=False`` runs a full cycle
    per copy; the answer is the same. Raises ValidationError for a negative ``max``.
    """
    if max is not None and (isinstance(max, bool) or not isinstance(max, int) or max < 0):
        raise ValidationError(f"capacity: max must be a non-negative integer, got {max!r}")
    limit = SAFETY_LIMIT if max is None else max
    template, refusal = sim.admit(pod)
    if refusal:
        return CapacityResult(pod.key, 0, {}, {}, STOP_ERROR, refusal)
    if sim.gang_scheduling and is_member(template, uses_pod_group_api(sim.config.feature_gates.release)):
        return _gang_capacity(sim, template, max)
    st = sim.framework.run_pre_enqueue_plugins(template)
    if st is not None and not st.is_success():
        return CapacityResult(pod.key, 0, {}, {}, STOP_UNSCHEDULABLE if st.is_rejected() else STOP_ERROR,
                              st.message())
    placements: list[str] = []
    fork = sim.fork()
    try:
        final = _run(sim, template, limit, placements, fast)
    finally:
        fork.revert()
    per_node: dict[str, int] = {}
    for n in placements:
        per_node[n] = per_node.get(n, 0) + 1
    if final is None:
        return CapacityResult(pod.key, len(placements), per_node, {}, STOP_LIMIT, "", tuple(placements))
    reasons: dict[str, str] = {}
    if final.diagnosis is not None:
        names = [ni.name for ni in sim.cluster.snapshot.list()]
        reasons = {n: s.message() for n, s in final.diagnosis.full_map(names).items()}
    stop = STOP_ERROR if final.status is not None and not final.status.is_rejected() else STOP_UNSCHEDULABLE
    return CapacityResult(pod.key, len(placements), per_node, reasons, stop, final.message, tuple(placements))


def _gang_capacity(sim: SimulatorCore, template: Pod, max: int | None) -> CapacityResult:
    """How many more copies of the pod's gang fit: each copy is ``minCount`` pods of the template in a group
    of its own — a pod group replica (``spec.workloadRef.podGroupReplicaKey: copy-N``, 1.35) or a PodGroup
    ``<name>-copy-N`` made from the template's (1.36+) — placed whole or not at all by
    :meth:`Simulator.schedule_pods`; a basic group's copy is one pod."""
    v2 = uses_pod_group_api(sim.config.feature_gates.release)
    policy, missing = lookup_policy(template, sim.objects, v2)
    if policy is None:
        return CapacityResult(template.key, 0, {}, {}, STOP_UNSCHEDULABLE, missing)
    size = policy.min_count if policy.is_gang else 1
    limit = SAFETY_LIMIT // size if max is None else max
    placements: list[str] = []
    count = 0
    stop, message, reasons = STOP_LIMIT, "", {}
    names = [ni.name for ni in sim.cluster.snapshot.list()]
    fork = sim.fork()
    try:
        while count < limit:
            if v2:
                _add_pod_group_copy(sim, template, count)
            members = [_gang_member(template, count, i, size, v2) for i in range(size)]
            out = sim.schedule_pods(members)
            if not out.all_scheduled:
                by_key = {r.pod: r for r in out.results}
                missed = [by_key[p.key] for p in members if by_key[p.key].node is None]
                # the members that found no node themselves (the others were placed, then taken back)
                own = [r for r in missed if r.status is None or r.status.plugin != GANG_SCHEDULING] or missed
                first = next((r for r in own if r.diagnosis is not None), own[0])
                err = any(r.status is not None and not r.status.is_rejected() for r in own)
                stop = STOP_ERROR if err else STOP_UNSCHEDULABLE
                message = own[0].message
                if size > 1:
                    name = group_name(members[0])
                    message = (f"pod group {name} (gang, minCount {size}) was not placed: only {size - len(own)} "
                               f"of its pods found a node; {own[0].pod} found no node: {own[0].message}")
                if first.diagnosis is not None:
                    reasons = {n: st.message() for n, st in first.diagnosis.full_map(names).items()}
                break
            placements.extend(out.placements[p.key] for p in members)
            count += 1
    finally:
        fork.revert()
    per_node: dict[str, int] = {}
    for n in placements:
        per_node[n] = per_node.get(n, 0) + 1
    return CapacityResult(template.key, count, per_node, reasons, stop, message, tuple(placements), size)


def _add_pod_group_copy(sim: SimulatorCore, template: Pod, copy: int) -> None:
    """PodGroup ``<name>-copy-<copy>``: the template's PodGroup under another name (undone with the fork)."""
    name = template.spec.scheduling_group
    assert name is not None
    obj = sim.objects.get(POD_GROUP, template.namespace, name, group=SCHEDULING_GROUP)
    assert obj is not None
    raw = {**obj.raw, "metadata": {**(obj.raw.get("metadata") or {}), "name": f"{name}-copy-{copy}",
                                   "namespace": template.namespace}}
    sim.objects.add(KubeObject.from_dict(raw))


def _gang_member(template: Pod, copy: int, i: int, size: int, v2: bool) -> Pod:
    """Pod ``i`` of gang copy ``copy``: ``<name>-<copy>-<i>``, in pod group replica ``copy-<copy>`` (1.35) or
    PodGroup ``<group>-copy-<copy>`` (1.36+)."""
    p = pod_copy(template, copy * size + i)
    name = f"{template.name}-{copy}-{i}"
    raw = dict(p._raw)
    raw["metadata"] = {**raw["metadata"], "name": name}
    spec = dict(raw["spec"])
    if v2:
        group = f"{template.spec.scheduling_group}-copy-{copy}"
        spec["schedulingGroup"] = {"podGroupName": group}
        new_spec = attrs.evolve(p.spec, scheduling_group=group)
    else:
        ref = template.spec.workload_ref
        assert ref is not None
        replica = f"copy-{copy}"
        spec["workloadRef"] = {**(spec.get("workloadRef") or {}), "podGroupReplicaKey": replica}
        new_spec = attrs.evolve(p.spec, workload_ref=attrs.evolve(ref, pod_group_replica_key=replica))
    raw["spec"] = spec
    return Pod(attrs.evolve(p.metadata, name=name), new_spec, p.status, raw)


def _run(sim: SimulatorCore, template: Pod, limit: int, placements: list[str], fast: bool) -> Placement | None:
    """Place copies until one fails (its Placement is returned) or ``limit`` are placed (None)."""
    fastpath = _FastPath.try_build(sim, template) if fast and limit > 1 else None
    i = 0
    while i < limit:
        copy = pod_copy(template, i)
        if fastpath is not None:
            host = fastpath.next_host()
            if host is not None:
                r = fastpath.place(copy, host)
                if r.node is None:
                    return r
                placements.append(host)
                i += 1
                continue
            fastpath = None  # nothing fits any more (or the shortcut cannot tell): a real cycle says so
        r = sim._schedule_one(copy, None)
        if r.node is None:
            return r
        placements.append(r.node)
        i += 1
    return None


class _FastPath:
    """One PreFilter / PreScore for every copy; each node's Filter verdict and raw scores kept between
    copies and recomputed for the node that received the last copy only.

    The feasible nodes are kept as their sorted positions in the search order, so that finding the nodes
    a cycle's round-robin search would reach is a bisection and a slice rather than a walk."""

    def __init__(self, sim: SimulatorCore, template: Pod, state: CycleState, names: list[str],
                 num_all: int, score_plugins: list[Any]) -> None:
        self.sim = sim
        self.template = template
        self.state = state
        self.names = names                      # the nodes the search walks (PreFilterResult applied), in order
        self.num_all = num_all                  # every node of the snapshot (the start index wraps on it)
        fwk = sim.framework
        self.filters = fwk.filter_plugins_for(state)
        self.verdict_of = fwk.filter_verdict
        self.feasible: list[int] = []           # sorted positions (in ``names``) of the nodes that pass Filter
        self.rows: list[tuple[int, ...] | None] = [None] * len(names)  # position -> see _row
        self.dirty: int | None = None
        self.position = {name: i for i, name in enumerate(names)}
        to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, len(names),
                                             sim.algorithm.global_percentage)
        self.to_find = to_find if fwk.has_score_plugins() else 1
        # Plugins without NormalizeScore add a node-local weighted score, summed once per node; the others
        # are normalized over each copy's feasible nodes.
        self.score_plan: list[tuple[Any, bool, int]] = []
        self.normalizers: list[tuple[Any, Any, int]] = []
        weights = fwk.score_weights
        ext_of = getattr(fwk, "_score_ext", {})
        for pl in score_plugins:
            ext = ext_of.get(pl.name)
            self.score_plan.append((pl, ext is not None, weights[pl.name]))
            if ext is not None:
                self.normalizers.append((ext, batch_normalizer(ext), weights[pl.name]))

    @classmethod
    def try_build(cls, sim: SimulatorCore, template: Pod) -> _FastPath | None:
        """The shortcut when it provably decides as full cycles do for this pod and profile, else None."""
        fwk = sim.framework
        if len(fwk.nominator) or not fwk.has_filter_plugins():
            return None
        snapshot = fwk.snapshot
        all_nodes = snapshot.list()
        if not all_nodes:
            return None
        spec_aff = template.spec.affinity
        ipa_local = spec_aff is None or (spec_aff.pod_affinity is None and spec_aff.pod_anti_affinity is None)

        def local(name: str, skipped: set[str]) -> bool:
            return name in NODE_LOCAL_PLUGINS or name in skipped or (name == INTER_POD_AFFINITY and ipa_local)

        state = CycleState()
        pre_res, st, _ = fwk.run_pre_filter_plugins(state, template, all_nodes)
        if st is not None and st.code != Code.SUCCESS:
            return None  # rejected or failed for every copy: the real cycle reports it
        skip_f = state.skip_filter_plugins
        for point in ("preFilter", "filter"):
            if not all(local(pl.name, skip_f) for pl in fwk.plugins_at(point)):
                return None
        # Reserve runs for every placed copy: only plugins that skipped this pod (nothing to reserve)
        if not all(pl.name in skip_f for pl in fwk.plugins_at("reserve")):
            return None
        names = [ni.name for ni in all_nodes]
        if pre_res is not None and pre_res.node_names is not None:
            allowed = pre_res.node_names
            names = [n for n in names if n in allowed]
        score_plugins: list[Any] = []
        if fwk.has_score_plugins():
            # PreScore of node-local plugins reads the pod only, so any node list gives the same state
            st = fwk.run_pre_score_plugins(state, template, all_nodes)
            if st is not None and st.code != Code.SUCCESS:
                return None
            skip_s = state.skip_score_plugins
            if not all(local(pl.name, skip_s) for pl in fwk.plugins_at("preScore")):
                return None
            score_plugins = [pl for pl in fwk.plugins_at("score") if pl.name not in skip_s]
            zero = ZERO_SCORE_WHEN_FILTER_SKIPPED & skip_f
            if not all(local(pl.name, set()) or pl.name in zero for pl in score_plugins):
                return None
        fp = cls(sim, template, state, names, len(all_nodes), score_plugins)
        # Every node's verdict up front (Filter has no side effects; a cycle would only reach some of them).
        m = snapshot.node_info_map
        for i, name in enumerate(names):
            ok = fp._passes(m[name])
            if ok is None:
                return None  # a plugin failed on some node: leave the whole question to real cycles
            if ok:
                fp.feasible.append(i)
        return fp

    def _passes(self, ni: Any) -> bool | None:
        """Whether the node passes Filter; None when a plugin raised or erred."""
        state, pod = self.state, self.template
        try:
            for plugin, fn in self.filters:
                out = fn(state, pod, ni)
                if out is not None:
                    st = self.verdict_of(plugin, out)
                    if st is not None:
                        return None if st.code == Code.ERROR else False
        except Exception:
            return None
        return True

    def next_host(self) -> str | None:
        """Where a full cycle would put the next copy; None when no node passes (or a plugin failed):
        then a real cycle is run, which reports the failure in upstream's words."""
        names = self.names
        feasible = self.feasible
        m = self.sim.framework.snapshot.node_info_map
        if self.dirty is not None:
            i, self.dirty = self.dirty, None
            self.rows[i] = None
            ok = self._passes(m[names[i]])
            if ok is None:
                return None
            at = bisect.bisect_left(feasible, i)
            was = at < len(feasible) and feasible[at] == i
            if was and not ok:
                del feasible[at]
            elif ok and not was:
                feasible.insert(at, i)
        n = len(names)
        if not feasible or n == 0:
            return None
        algo = self.sim.algorithm
        start = algo.next_start_node_index
        # the Algorithm's rotation: a start past the end of a narrowed list walks it from the beginning
        s = start if start < n else 0
        j = bisect.bisect_left(feasible, s)
        k = self.to_find
        if len(feasible) < k:
            window = feasible[j:] + feasible[:j]
            processed = n  # the search went all the way round
        else:
            window = feasible[j:j + k]
            if len(window) < k:
                window += feasible[:k - len(window)]
            processed = (window[-1] - s) % n + 1  # it stopped at the k-th feasible node
        host = names[window[0]]
        if len(window) > 1:
            chosen = [names[i] for i in window]
            try:
                totals = self._totals(window, chosen, m)
            except Exception:
                totals = None
            if totals is None:
                return None  # a Score plugin failed: nothing was changed, the real cycle reports it
            host = algo._select(chosen, totals)
        # the cycle's one lasting side effect on the search: where the next one starts
        algo.next_start_node_index = (start + processed) % self.num_all
        self.dirty = self.position[host]
        return host

    def _row(self, ni: Any) -> tuple[int, ...] | None:
        """(weighted sum of the plugins that do not normalize, raw score of each plugin that does) for one
        node; None when a plugin fails or gives a score a cycle would reject (the real cycle reports it)."""
        state, pod = self.state, self.template
        static = 0
        raws: list[int] = []
        for pl, normalizes, weight in self.score_plan:
            s, st = pl.score(state, pod, ni)
            if (st is not None and st.code != Code.SUCCESS) or type(s) is not int:
                return None
            if normalizes:
                raws.append(s)
            elif 0 <= s <= MAX_NODE_SCORE:
                static += s * weight
            else:
                return None
        return (static, *raws)

    def _totals(self, window: list[int], feasible: list[str], m: Mapping[str, Any]) -> list[int] | None:
        """Each node's total score, as a cycle scoring ``feasible`` (at positions ``window``) computes it."""
        cache = self.rows
        rows = [cache[i] for i in window]
        if None in rows:
            for j, i in enumerate(window):
                if rows[j] is None:
                    row = self._row(m[feasible[j]])
                    if row is None:
                        return None
                    rows[j] = cache[i] = row
        totals = [r[0] for r in rows]  # type: ignore[index]
        state, pod = self.state, self.template
        for j, (ext, batch, weight) in enumerate(self.normalizers, start=1):
            col = [r[j] for r in rows]  # type: ignore[index]
            out = batch(state, pod, feasible, col) if batch is not None else None
            if out is None:
                scores = [NodeScore(nm, v) for nm, v in zip(feasible, col, strict=True)]
                st = ext.normalize_score(state, pod, scores)
                if st is not None and st.code != Code.SUCCESS:
                    return None
                out = [sc.score for sc in scores]
            if len(out) != len(col) or min(out) < MIN_NODE_SCORE or max(out) > MAX_NODE_SCORE:
                return None
            totals = [t + v * weight for t, v in zip(totals, out, strict=True)]
        return totals

    def place(self, copy: Pod, host: str) -> Placement:
        return self.sim._place(self.state, copy, host, Placement(copy.key, host))
