"""cluster-autoscaler's binpacking estimator: how many nodes of one node group the pending pods need.

:func:`estimate` answers, for one node-group template, what cluster-autoscaler's scale-up answers for it:

1. the pods are split into equivalence groups (same controller, labels and spec), as the scale-up
   orchestrator does; a group whose first pod does not pass Filter on an empty template node is left out,
   with that Filter message, and never reaches the binpacking;
2. the groups are ordered biggest first (the decreasing pod orderer: cpu and memory requests relative to
   the template's allocatable);
3. in a fork of the simulator that is reverted at the end, each pod tries the new nodes that already hold
   pods (the node added last first, then the others); a pod that fits none of them tries the last node
   added, then a fresh copy of the template — added only while the limiter allows it and while the last node
   added is not still empty. The first pod of a group that does not fit a fresh node ends that group: its
   other pods, equivalent to it, would not fit either.

Behaviour kept from upstream even where it surprises: a pod with a ``kubernetes.io/hostname`` topology
spread constraint that the last node rejects for the spread may be placed on *any* other node, an existing
one included, and that node then counts among the estimate's nodes (upstream's test
"hostname topology spreading with maxSkew=1 with a large scaleup handles scheduling pods retroactively"
expects it). With ``fastpath``, one group is packed on a single node and the rest counted arithmetically
on nodes that are never simulated (named ``<last node>-fake-<i>``).

The limiter is upstream's threshold-based one (:class:`ThresholdLimiter`): a node count and a duration, the
tightest of its thresholds; ``max_nodes`` is a static threshold of that many nodes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod, PodAffinityTerm
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.status import Code, Status

if TYPE_CHECKING:
    from scheduling_framework.simulation.simulator import Simulator
    from scheduling_framework.state.node_info import NodeInfo

HOSTNAME_LABEL = "kubernetes.io/hostname"
#: PodTopologySpread's Filter reason when a node would break a constraint (upstream's ErrReasonConstraintsNotMatch)
TOPOLOGY_SPREAD_REASON = "node(s) didn't match pod topology spread constraints"
#: upstream keeps at most this many equivalence groups per controller; further variants get a group each
MAX_GROUPS_PER_CONTROLLER = 10

_L = TypeVar("_L", int, float)


# ---- limiter -------------------------------------------------------------------------------------------------
class Threshold(Protocol):
    """A limit on one estimation, read when it starts: a node count and a duration in seconds (0: none,
    negative: no node at all)."""

    def node_limit(self) -> int: ...

    def duration_limit(self) -> float: ...


@attrs.frozen
class StaticThreshold:
    """The same limits for every estimation (upstream's static threshold, from its flags)."""

    nodes: int = 0
    seconds: float = 0.0

    def node_limit(self) -> int:
        return self.nodes

    def duration_limit(self) -> float:
        return self.seconds


def min_limit(base: _L, target: _L) -> _L:
    """The tighter of two limits where 0 means none and a negative one forbids everything (then -1)."""
    if base < 0 or target < 0:
        return -1
    if (base == 0 or base > target) and target > 0:
        return target
    return base


class ThresholdLimiter:
    """Upstream's threshold-based estimation limiter: allows new nodes until the tightest node limit of its
    thresholds is reached or the tightest duration has passed since :meth:`start`. Each permission granted
    counts one node; ``denied`` says whether a permission was refused (the estimate was capped)."""

    def __init__(self, thresholds: Iterable[Threshold] = (), clock: Callable[[], float] = time.monotonic) -> None:
        self.thresholds = tuple(thresholds)
        self.clock = clock
        self.max_nodes = 0
        self.max_seconds = 0.0
        self.nodes = 0
        self.started: float | None = None
        self.denied = False

    def start(self) -> None:
        """Reset the count and the clock, and read the thresholds' limits for this estimation."""
        self.started = self.clock()
        self.nodes = 0
        self.denied = False
        self.max_nodes = 0
        self.max_seconds = 0.0
        for t in self.thresholds:
            self.max_nodes = min_limit(self.max_nodes, t.node_limit())
            self.max_seconds = min_limit(self.max_seconds, t.duration_limit())

    def end(self) -> None:
        """The estimation is over (nothing to release; kept for symmetry with upstream's interface)."""

    def permission_to_add_node(self) -> bool:
        """Whether one more node may be added; a yes counts that node."""
        if self.max_nodes < 0 or (self.max_nodes > 0 and self.nodes >= self.max_nodes):
            self.denied = True
            return False
        timed = self.max_seconds > 0 and self.started is not None
        if self.max_seconds < 0 or (timed and self.clock() > (self.started or 0.0) + self.max_seconds):
            self.denied = True
            return False
        self.nodes += 1
        return True


# ---- pod groups and order ------------------------------------------------------------------------------------
def equivalence_groups(pods: Iterable[Pod]) -> list[list[Pod]]:
    """Pods grouped as the scale-up orchestrator groups them: pods of one controller with equal labels and
    spec share a group; pods without a controller, and DaemonSet pods, are alone. First-seen order."""
    groups: list[list[Pod]] = []
    by_controller: dict[tuple[str, ...], list[int]] = {}
    for pod in pods:
        ref = pod.metadata.controller_ref()
        if ref is None or ref.kind == "DaemonSet":
            groups.append([pod])
            continue
        owner = (ref.uid,) if ref.uid else (pod.namespace, ref.kind, ref.name)
        known = by_controller.setdefault(owner, [])
        for i in known:
            rep = groups[i][0]
            if rep.metadata.labels == pod.metadata.labels and rep.spec == pod.spec:
                groups[i].append(pod)
                break
        else:
            if len(known) < MAX_GROUPS_PER_CONTROLLER:
                known.append(len(groups))
            groups.append([pod])
    return groups


def _container_sum(pod: Pod, resource: str) -> Quantity:
    total = Quantity()
    for c in pod.spec.containers:
        q = c.resources.requests.get(resource)
        if q is not None:
            total = total + q
    return total


def pod_score(pod: Pod, template: Node) -> float:
    """The decreasing pod orderer's score: the containers' cpu and memory requests, each as a fraction of
    the template's allocatable (a resource the template does not have counts nothing)."""
    alloc = template.status.allocatable
    score = 0.0
    cpu, mem = alloc.get("cpu"), alloc.get("memory")
    if cpu is not None and cpu.milli_value() > 0:
        score += _container_sum(pod, "cpu").milli_value() / cpu.milli_value()
    if mem is not None and mem.value() > 0:
        score += _container_sum(pod, "memory").value() / mem.value()
    return score


def order_groups(groups: Sequence[Sequence[Pod]], template: Node) -> list[Sequence[Pod]]:
    """Groups by decreasing score of their first pod (empty groups score 0); equal scores keep their order."""
    return sorted(groups, key=lambda g: -pod_score(g[0], template) if g else 0.0)


def _anti_affinity_terms(pod: Pod) -> Sequence[PodAffinityTerm]:
    aff = pod.spec.affinity
    anti = aff.pod_anti_affinity if aff is not None else None
    return anti.required_during_scheduling_ignored_during_execution if anti is not None else ()


def fastpath_group(groups: Sequence[Sequence[Pod]], template: Node) -> int:
    """The index of the group fast-path binpacking saves most simulations on, or -1 when no group may use it.

    A group's node count is guessed from its first container's cpu and memory against the template's
    capacity (or one node per pod under hostname anti-affinity among its own pods); the simulations saved are
    ``pods - pods // nodes``; ties go to the later group. Groups with topology spread constraints or with
    required anti-affinity on another topology than the hostname cannot use it."""
    best, most = -1, 0
    cap = template.status.capacity
    for i, group in enumerate(groups):
        if not group:
            continue
        pod = group[0]
        by_anti = by_cpu = by_mem = 0
        for term in _anti_affinity_terms(pod):
            if (term.topology_key == HOSTNAME_LABEL and term.label_selector is not None
                    and term.label_selector.matches(pod.metadata.labels)):
                by_anti = len(group)
        if pod.spec.containers:
            req = pod.spec.containers[0].resources.requests
            by_cpu = _nodes_for(len(group), req.get("cpu"), cap.get("cpu"))
            by_mem = _nodes_for(len(group), req.get("memory"), cap.get("memory"))
        nodes = max(by_anti, by_cpu, by_mem)
        saved = len(group) - len(group) // nodes if nodes > 0 else 0
        if saved >= most and _may_fastpath(pod):
            best, most = i, saved
    return best


def _nodes_for(count: int, request: Quantity | None, capacity: Quantity | None) -> int:
    if request is None:
        return 0
    if capacity is None or capacity.as_float() <= 0:
        return 0 if request.is_zero() else 1 << 62  # upstream divides by zero: +Inf, a huge int
    return math.ceil(count * request.as_float() / capacity.as_float())


def _may_fastpath(pod: Pod) -> bool:
    if pod.spec.topology_spread_constraints:
        return False
    return all(t.topology_key == HOSTNAME_LABEL for t in _anti_affinity_terms(pod))


# ---- the estimate --------------------------------------------------------------------------------------------
@attrs.frozen
class Estimate:
    """What one node group's template would take.

    ``node_count`` is upstream's answer: the nodes that got a pod (see the module's note on existing nodes
    and fast-path nodes). ``nodes`` maps each of them to the pods placed there, in placement order;
    ``scheduled`` lists the placed pods in the order the estimator placed them; ``unplaced`` gives every
    other pod and why. ``capped`` is True when the limiter refused a node. ``added`` names the nodes the
    estimate simulated or counted (new nodes; existing nodes are absent). ``rejected`` holds the pods (also in
    ``unplaced``) whose equivalence group an empty template node refuses, with the Filter message: the
    scale-up orchestrator's scheduling errors for the group; every other pod is schedulable on the group in its
    sense, placed or not.
    """

    node_count: int
    nodes: Mapping[str, tuple[str, ...]]
    scheduled: tuple[Pod, ...]
    unplaced: Mapping[str, str]
    capped: bool = False
    added: tuple[str, ...] = ()
    rejected: Mapping[str, str] = attrs.field(factory=dict)

    def placed_pods(self) -> list[str]:
        """Keys of the pods placed, in placement order."""
        return [p.key for p in self.scheduled]

    def unplaced_reasons(self) -> dict[str, str]:
        """Pod key -> why it is not among the placed pods."""
        return dict(self.unplaced)

    def pod_requests(self) -> dict[str, Quantity]:
        """The placed pods' container requests, summed per resource (what least-waste weighs)."""
        total: dict[str, Quantity] = {}
        for pod in self.scheduled:
            for c in pod.spec.containers:
                for name, q in c.resources.requests.items():
                    total[name] = total.get(name, Quantity()) + q
        return total


class _EstimationError(Exception):
    """A plugin failed: upstream gives up on the whole estimate."""


class _Packing:
    """The estimator's working state inside the fork."""

    def __init__(self, sim: Simulator, template: Node, limiter: ThresholdLimiter, daemon_sets: bool) -> None:
        self.sim = sim
        self.template = template
        self.limiter = limiter
        self.daemon_sets = daemon_sets
        self.prefix = f"{template.name}-e"
        self.added: list[str] = []
        self.new: set[str] = set()
        self.last = ""
        self.used: dict[str, list[str]] = {}  # node -> pod keys, in first-use order (upstream's newNodesWithPods)
        self.scheduled: list[Pod] = []
        self.why: dict[str, str] = {}  # first pod key of a group stopped by a Filter failure -> the message

    def check(self, pod: Pod, node: str) -> Status | None:
        st = self.sim.check_pod_on_node(pod, node)
        if st is not None and st.code == Code.ERROR:
            raise _EstimationError(st.message())
        return st

    def find(self, pod: Pod, accept: Callable[[NodeInfo], bool]) -> str | None:
        try:
            return self.sim.find_node_for_pod(pod, accept)
        except Exception as e:  # a plugin failed (CycleError)
            raise _EstimationError(str(e)) from e

    def place(self, pod: Pod, node: str) -> None:
        self.sim.add_pod(pod, node)
        self.track(pod, node)

    def track(self, pod: Pod, node: str) -> None:
        self.used.setdefault(node, []).append(pod.key)
        self.scheduled.append(pod)

    def add_node(self) -> None:
        (name,) = self.sim.add_node_from_template(self.template, 1, self.prefix, daemon_sets=self.daemon_sets)
        self.added.append(name)
        self.new.add(name)
        self.last = name

    def on_nodes_with_pods(self, pods: Sequence[Pod]) -> int:
        """Place pods, in order, on new nodes that hold pods (the last node first); the count placed."""
        for i, pod in enumerate(pods):
            node: str | None = None
            if self.last in self.used and self.check(pod, self.last) is None:
                node = self.last
            if node is None:
                others = {n for n in self.used if n in self.new and n != self.last}
                node = self.find(pod, _named_in(others)) if others else None
            if node is None:
                return i
            self.place(pod, node)
        return len(pods)

    def on_new_nodes(self, pods: Sequence[Pod]) -> bool:
        """Place pods on the last node or on fresh nodes; False once the limiter refused a node."""
        for pod in pods:
            if self.last:
                st = self.check(pod, self.last)
                if st is None:
                    self.place(pod, self.last)
                    continue
                if _hostname_spread(pod) and TOPOLOGY_SPREAD_REASON in st.reasons:
                    node = self.find(pod, _not_named(self.last))
                    if node is not None:
                        self.place(pod, node)
                        continue
                if self.last not in self.used:
                    self.why.setdefault(pod.key, st.message())
                    return True  # an empty node did not take it: another one would not either
            if not self.limiter.permission_to_add_node():
                return False
            self.add_node()
            st = self.check(pod, self.last)
            if st is not None:
                self.why.setdefault(pod.key, st.message())
                return True
            self.place(pod, self.last)
        return True

    def fast_path(self, pods: Sequence[Pod]) -> bool:
        """Fill one node with the pods, then count the others on as many more nodes as that rate needs,
        without simulating them. An empty last node is filled instead of adding one."""
        if not pods:
            return True
        if not self.last or self.last in self.used:
            if not self.limiter.permission_to_add_node():
                return False
            self.add_node()
        i = 0
        for pod in pods:
            st = self.check(pod, self.last)
            if st is not None:
                self.why.setdefault(pod.key, st.message())
                break
            self.place(pod, self.last)
            i += 1
        per_node = i
        if per_node == 0:
            return True
        size = -(-len(pods) // per_node)
        for j in range(1, size):
            if not self.limiter.permission_to_add_node():
                return False
            fake = f"{self.last}-fake-{j}"
            self.added.append(fake)
            for pod in pods[i:i + per_node]:
                self.track(pod, fake)
            i += per_node
        return True


def _named_in(names: set[str]) -> Callable[[NodeInfo], bool]:
    return lambda ni: ni.name in names


def _not_named(name: str) -> Callable[[NodeInfo], bool]:
    return lambda ni: ni.name != name


def _hostname_spread(pod: Pod) -> bool:
    return any(c.topology_key == HOSTNAME_LABEL for c in pod.spec.topology_spread_constraints)


def estimate(sim: Simulator, pods: Sequence[Pod], template: Node, *, max_nodes: int | None = None,
             daemon_sets: bool = True, limiter: ThresholdLimiter | None = None, fastpath: bool = False,
             groups: Sequence[Sequence[Pod]] | None = None) -> Estimate:
    """How many copies of ``template`` the pods need and which pods they take (see the module docstring).

    ``max_nodes`` caps the nodes added (a static threshold; None: no cap); ``limiter`` replaces that with
    one of your own. ``daemon_sets`` puts the simulator's DaemonSet pods on each new node, as upstream's
    template NodeInfo carries them. ``fastpath`` turns on upstream's fast-path binpacking for one group
    (see :func:`fastpath_group`). ``groups`` gives the equivalence groups directly (default: built from
    ``pods`` with :func:`equivalence_groups`). The simulator is left as it was.
    """
    if limiter is None:
        limiter = ThresholdLimiter(() if max_nodes is None else [StaticThreshold(max_nodes if max_nodes > 0 else -1)])
    all_groups = [list(g) for g in (groups if groups is not None else equivalence_groups(pods))]
    unplaced: dict[str, str] = {}
    fitting = _fitting_groups(sim, all_groups, template, daemon_sets, unplaced)
    rejected = _in_order(all_groups, unplaced)
    resume = sim._last_index  # find_node_for_pod's round-robin start: restored, as the fork restores the rest
    limiter.start()
    try:
        with sim.fork():
            packing = _Packing(sim, template, limiter, daemon_sets)
            try:
                _pack(packing, order_groups(fitting, template), fastpath)
            except _EstimationError as e:
                for g in fitting:
                    for p in g:
                        unplaced[p.key] = f"estimation failed: {e}"
                return Estimate(0, {}, (), _in_order(all_groups, unplaced), limiter.denied, rejected=rejected)
    finally:
        limiter.end()
        sim._last_index = resume
    placed = {p.key for p in packing.scheduled}
    for g in fitting:
        reason = ""
        for p in g:
            reason = packing.why.get(p.key, reason)
            if p.key not in placed:
                unplaced[p.key] = reason or ("the node limit was reached" if limiter.denied
                                             else "not placed on the new nodes")
    nodes = {n: tuple(keys) for n, keys in packing.used.items()}
    return Estimate(len(nodes), nodes, tuple(packing.scheduled), _in_order(all_groups, unplaced), limiter.denied,
                    tuple(packing.added), rejected)


def template_rejections(sim: Simulator, pods: Sequence[Pod], template: Node, *, daemon_sets: bool = True,
                        groups: Sequence[Sequence[Pod]] | None = None) -> dict[str, str]:
    """The pods an empty copy of ``template`` refuses (their equivalence group's first pod fails Filter), with
    the Filter message: :attr:`Estimate.rejected` without the binpacking. The simulator is left as it was."""
    all_groups = [list(g) for g in (groups if groups is not None else equivalence_groups(pods))]
    out: dict[str, str] = {}
    _fitting_groups(sim, all_groups, template, daemon_sets, out)
    return _in_order(all_groups, out)


def _in_order(groups: Sequence[Sequence[Pod]], unplaced: Mapping[str, str]) -> dict[str, str]:
    return {p.key: unplaced[p.key] for g in groups for p in g if p.key in unplaced}


def _fitting_groups(sim: Simulator, groups: list[list[Pod]], template: Node, daemon_sets: bool,
                    unplaced: dict[str, str]) -> list[list[Pod]]:
    """The groups whose first pod passes Filter on one empty template node (the orchestrator's check before
    estimating); the others' pods go to ``unplaced`` with the Filter message."""
    fitting: list[list[Pod]] = []
    with sim.fork():
        (probe,) = sim.add_node_from_template(template, 1, f"{template.name}-probe", daemon_sets=daemon_sets)
        for g in groups:
            if not g:
                continue
            st = sim.check_pod_on_node(g[0], probe)
            if st is None:
                fitting.append(g)
            else:
                for p in g:
                    unplaced[p.key] = st.message()
    return fitting


def _pack(packing: _Packing, groups: list[Sequence[Pod]], fastpath: bool) -> None:
    fast_last = False
    if fastpath:
        i = fastpath_group(groups, packing.template)
        if i != -1:
            groups = groups[:i] + groups[i + 1:] + [groups[i]]
            fast_last = True
    more = True
    for n, group in enumerate(groups):
        done = packing.on_nodes_with_pods(group)
        if more:
            rest = group[done:]
            more = packing.fast_path(rest) if fast_last and n == len(groups) - 1 else packing.on_new_nodes(rest)


__all__ = ["MAX_GROUPS_PER_CONTROLLER", "Estimate", "StaticThreshold", "Threshold", "ThresholdLimiter",
           "equivalence_groups", "estimate", "fastpath_group", "min_limit", "order_groups", "pod_score",
           "template_rejections"]
