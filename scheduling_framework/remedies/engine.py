"""What would make a pending pod fit: candidate changes drawn from what rejects it, each verified.

For one pod, on a :class:`~scheduling_framework.simulation.Simulator` holding the cluster as the run left it:

1. *Examine* the nodes: every Filter plugin is run on each examined node (not only up to the first rejection,
   as a cycle does), giving each node the set of plugins that reject it. On a big cluster the nodes examined
   are a sample of as many nodes as upstream's adaptive percentageOfNodesToScore would look for, drawn from
   every group of nodes a cycle rejects for the same reason (so six GPU nodes among 5,000 are examined too).
2. *Facts*: what no node offers, in plain words, from the whole cluster (labels, allocatable, taints).
3. *Candidates*: for each plugin that rejects the pod, the pod or cluster changes that answer it (a
   toleration, a nodeSelector key dropped, a spread constraint relaxed, a term dropped, requests lowered to a
   node's free room, a node uncordoned); a plugin with none is named in ``not_computed``.
4. *Verification*: each candidate is applied on a fork of the snapshot (the pod rewritten, or the cluster
   changed), PreFilter and every Filter plugin are run again on the examined nodes it should open, and a full
   scheduling cycle says where the pod would land. Only candidates that make the pod fit are listed.
5. When none alone does, the smallest *combination*: the examined node with the fewest rejecting plugins,
   every one of them answered, all changes applied together and verified on it.
6. With node templates, whether a new node of each shape would take the pod, the smallest one first.

Nothing is guessed from messages: a remedy is listed only when the plugins, re-run with it, let the pod in.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resources import pod_requests
from scheduling_framework.api.taints import Taint, does_not_schedule_or_execute, tolerations_tolerate_taint
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.remedies import patch
from scheduling_framework.remedies.model import (
    COMBINATION,
    DROP_HOST_PORT,
    DROP_NODE_AFFINITY,
    DROP_NODE_SELECTOR,
    DROP_POD_AFFINITY,
    DROP_POD_ANTI_AFFINITY,
    LOWER_REQUESTS,
    NEW_NODE,
    PREEMPT,
    RELAX_SPREAD,
    TOLERATE_TAINT,
    UNCORDON,
    NodeShortfall,
    PodRemedies,
    Remedy,
)
from scheduling_framework.remedies.patch import escape
from scheduling_framework.runtime.algorithm import num_feasible_nodes_to_find
from scheduling_framework.simulation.core import SimulatorCore
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

#: Nodes verified per candidate (nodesOpened counts at most this many).
MAX_VERIFIED = 100
#: Nodes named per remedy.
NAMED = 5
#: Candidates tried per pod; combinations tried when no single change is enough.
MAX_CANDIDATES = 16
MAX_COMBINATIONS = 5
#: How far a spread's maxSkew is raised at most before ScheduleAnyway is proposed instead.
MAX_SKEW_RAISE = 1024
#: Higher PriorityClasses tried for a preemption remedy, lowest first.
MAX_PRIORITY_CLASSES = 5
#: Nodes with the smallest resource shortfall reported.
SHORTFALLS = 5
#: At least this many nodes examined from each group of nodes rejected for the same reason.
PER_GROUP = 20

TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_UNSCHEDULABLE = "NodeUnschedulable"
FIT = "NodeResourcesFit"
SPREAD = "PodTopologySpread"
POD_AFFINITY = "InterPodAffinity"
NODE_PORTS = "NodePorts"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


@attrs.frozen
class _Candidate:
    kind: str
    change: str
    plugins: frozenset[str]
    #: JSON Patch operations on the pod's manifest (as given in the input)
    pod_ops: tuple[dict[str, Any], ...] = ()
    #: node name -> JSON Patch operations on that Node
    node_ops: tuple[tuple[str, tuple[dict[str, Any], ...]], ...] = ()
    #: the nodes the change concerns (None: any examined node)
    scope: frozenset[str] | None = None

    def patches(self, pod: Pod) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.pod_ops:
            out.append({"target": {"kind": "Pod", "namespace": pod.namespace, "name": pod.name},
                        "patch": list(self.pod_ops)})
        out += [{"target": {"kind": "Node", "name": n}, "patch": list(ops)} for n, ops in self.node_ops]
        return out


def _combined(parts: Sequence[_Candidate]) -> _Candidate:
    scopes = [p.scope for p in parts if p.scope is not None]
    scope = frozenset.intersection(*scopes) if scopes else None
    nodes: dict[str, list[dict[str, Any]]] = {}
    for p in parts:
        for n, ops in p.node_ops:
            nodes.setdefault(n, []).extend(ops)
    return _Candidate(COMBINATION, "; ".join(p.change for p in parts), frozenset().union(*(p.plugins for p in parts)),
                      tuple(op for p in parts for op in p.pod_ops),
                      tuple((n, tuple(ops)) for n, ops in nodes.items()), scope)


# --- quantities in words -----------------------------------------------------------------------------------


def fmt_amount(resource: str, amount: int) -> str:
    """``350m`` / ``2`` for cpu (millicores), ``61.8Gi`` for bytes, the count for the rest."""
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if amount >= size:
                v = amount / size
                return f"{v:.0f}{unit}" if v == int(v) else f"{math.floor(v * 10) / 10:.1f}{unit}"
        return str(amount)
    return str(amount)


def _amount(resource: str, q: Any) -> int:
    return int(q.milli_value()) if resource == "cpu" else int(q.value())


# --- examining the nodes -------------------------------------------------------------------------------------


class _Examination:
    """Every Filter plugin's verdict on each examined node (``failing``: node -> plugin -> status)."""

    def __init__(self) -> None:
        self.failing: dict[str, dict[str, Status]] = {}
        self.order: list[str] = []
        self.prefilter: Status | None = None
        self.total = 0


def _first_failures(sim: SimulatorCore, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                    allowed: set[str] | None) -> dict[tuple[str, str], list[NodeInfo]]:
    fwk = sim.framework
    plan = fwk.filter_plugins_for(state)
    groups: dict[tuple[str, str], list[NodeInfo]] = defaultdict(list)
    for ni in nodes:
        if allowed is not None and ni.name not in allowed:
            groups[("PreFilter", "")].append(ni)
            continue
        st = fwk.run_filter_plan(plan, state, pod, ni)
        if st is None or st.is_success():
            groups[("", "")].append(ni)
        else:
            groups[(st.plugin or "", "; ".join(st.reasons))].append(ni)
    return groups


def examine(sim: SimulatorCore, pod: Pod) -> _Examination:
    """Run PreFilter, then every Filter plugin on the examined nodes (see the module's step 1)."""
    fwk = sim.framework
    nodes = fwk.snapshot.list()
    ex = _Examination()
    ex.total = len(nodes)
    state = CycleState()
    pre_res, st, with_nodes = fwk.run_pre_filter_plugins(state, pod, nodes)
    if st is not None and not st.is_success():
        ex.prefilter = st
        return ex
    allowed = set(pre_res.node_names) if pre_res is not None and pre_res.node_names is not None else None
    budget = num_feasible_nodes_to_find(None, len(nodes), sim.config.percentage_of_nodes_to_score)
    if budget >= len(nodes):
        chosen = list(nodes)
    else:
        chosen = []
        for members in _first_failures(sim, state, pod, nodes, allowed).values():
            share = max(PER_GROUP, math.ceil(budget * len(members) / len(nodes)))
            step = max(1, len(members) // share)
            chosen += members[::step][:share]
    plan = fwk.filter_plugins_for(state)
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"node(s) didn't satisfy plugin(s) {sorted(with_nodes)}" if with_nodes else "not a candidate")
    for ni in chosen:
        fails: dict[str, Status] = {}
        if allowed is not None and ni.name not in allowed:
            for name in sorted(with_nodes) or ["PreFilter"]:
                fails[name] = absent
        else:
            for name, fn in plan:
                try:
                    res = fn(state, pod, ni)
                except Exception as e:  # a plugin that raises: its own rejection, named
                    res = Status(Code.ERROR, f"{type(e).__name__}: {e}")
                if res is None or (isinstance(res, Status) and res.is_success()):
                    continue
                fails[name] = res if isinstance(res, Status) else Status(Code.ERROR, str(res))
        ex.failing[ni.name] = fails
        ex.order.append(ni.name)
    return ex


# --- facts -------------------------------------------------------------------------------------------------------


def _untolerated(node: Node, pod: Pod) -> list[Taint]:
    return [t for t in node.spec.taints
            if does_not_schedule_or_execute(t) and not tolerations_tolerate_taint(pod.spec.tolerations, t)]


def _taint_text(t: Taint) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def facts(sim: SimulatorCore, pod: Pod) -> list[str]:
    """Plain-language facts about the whole cluster that explain the pod's rejection."""
    infos = [ni for ni in sim.framework.snapshot.list() if ni.node is not None]
    out: list[str] = []
    if not infos:
        return ["the cluster has no nodes"]
    reqs = pod_requests(pod)
    for res, q in sorted(reqs.items()):
        want = _amount(res, q)
        if want <= 0 or res == "pods":
            continue
        alloc = [(ni.allocatable.get(res), ni) for ni in infos]
        best, best_ni = max(alloc, key=lambda a: a[0])
        if best <= 0:
            out.append(f"no node offers {res}")
        elif want > best:
            out.append(f"the largest node's allocatable {res} is {fmt_amount(res, best)} ({best_ni.name}); the pod "
                       f"requests {fmt_amount(res, want)}")
        else:
            free = max(((ni.allocatable.get(res) - ni.requested.get(res)), ni.name) for ni in infos)
            if want > free[0]:
                out.append(f"no node has {fmt_amount(res, want)} of {res} free; the most is "
                           f"{fmt_amount(res, max(free[0], 0))} on {free[1]}")
    for key, value in sorted(pod.spec.node_selector.items()):
        values = sorted({ni.node.metadata.labels[key] for ni in infos  # type: ignore[union-attr]
                         if key in ni.node.metadata.labels})  # type: ignore[union-attr]
        if not values:
            out.append(f"no node has the label {key} (nodeSelector {key}={value})")
        elif value not in values:
            shown = ", ".join(values[:5]) + (f" and {len(values) - 5} more" if len(values) > 5 else "")
            out.append(f"no node has {key}={value} (nodes have {shown})")
    tainted: Counter[str] = Counter()
    blocked = 0
    for ni in infos:
        bad = _untolerated(ni.node, pod)  # type: ignore[arg-type]
        if bad:
            blocked += 1
            tainted[_taint_text(bad[0])] += 1
    if blocked == len(infos):
        shown = ", ".join(f"{t} ({n} node{'s' if n > 1 else ''})" for t, n in tainted.most_common(4))
        out.append(f"every node has a taint the pod does not tolerate: {shown}")
    cordoned = sum(1 for ni in infos if ni.node is not None and ni.node.spec.unschedulable)
    if cordoned == len(infos):
        out.append("every node is cordoned (spec.unschedulable)")
    from scheduling_framework.remedies.dra_facts import dra_facts

    return out + dra_facts(sim, pod)


# --- candidates ------------------------------------------------------------------------------------------------


def _spec(m: Any) -> dict[str, Any]:
    spec = m.get("spec") if isinstance(m, dict) else None
    return spec if isinstance(spec, dict) else {}


def _tolerate(m: Any, taints: Sequence[Taint]) -> _Candidate:
    """Tolerations for ``taints``, appended to the pod's own (``m``: its manifest)."""
    tols = []
    for t in taints:
        tol: dict[str, Any] = {"key": t.key, "operator": "Equal" if t.value else "Exists", "effect": t.effect}
        if t.value:
            tol["value"] = t.value
        tols.append(tol)
    ops: tuple[dict[str, Any], ...]
    if isinstance(_spec(m).get("tolerations"), list):
        ops = tuple({"op": "add", "path": "/spec/tolerations/-", "value": tol} for tol in tols)
    else:
        ops = ({"op": "add", "path": "/spec/tolerations", "value": tols},)
    words = ", ".join(_taint_text(t) for t in taints)
    return _Candidate(TOLERATE_TAINT, f"add the toleration{'s' if len(taints) > 1 else ''} {words}",
                      frozenset({TAINT_TOLERATION}), ops)


def _taint_candidates(sim: SimulatorCore, m: Any, pod: Pod, ex: _Examination) -> list[_Candidate]:
    counts: Counter[Taint] = Counter()
    for name in ex.order:
        if TAINT_TOLERATION in ex.failing[name]:
            node = sim.cluster.get(name).node
            if node is not None:
                for t in _untolerated(node, pod):
                    if t.key != UNSCHEDULABLE_TAINT:  # the cordon's own taint: uncordonNode answers it
                        counts[attrs.evolve(t, time_added=None)] += 1
    return [_tolerate(m, [t]) for t, _ in counts.most_common(5)]


def _drop_selector_key(key: str, value: str) -> _Candidate:
    return _Candidate(DROP_NODE_SELECTOR, f"drop nodeSelector {key}={value}", frozenset({NODE_AFFINITY}),
                      ({"op": "remove", "path": f"/spec/nodeSelector/{escape(key)}"},))


def _drop_required_affinity() -> _Candidate:
    path = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
    return _Candidate(DROP_NODE_AFFINITY, "drop the required node affinity", frozenset({NODE_AFFINITY}),
                      ({"op": "remove", "path": path},))


def _affinity_candidates(pod: Pod) -> list[_Candidate]:
    out = [_drop_selector_key(k, v) for k, v in sorted(pod.spec.node_selector.items())]
    if _required_node_affinity(pod):
        out.append(_drop_required_affinity())
    return out


def _required_node_affinity(pod: Pod) -> bool:
    na = pod.spec.affinity.node_affinity if pod.spec.affinity is not None else None
    return na is not None and na.required_during_scheduling_ignored_during_execution is not None


def _spread_candidate(i: int, c: Any, skew: int | None) -> _Candidate:
    path = f"/spec/topologySpreadConstraints/{i}"
    if skew is None:
        return _Candidate(RELAX_SPREAD, f"make the spread over {c.topology_key} (maxSkew {c.max_skew}) "
                                        "whenUnsatisfiable: ScheduleAnyway", frozenset({SPREAD}),
                          ({"op": "replace", "path": f"{path}/whenUnsatisfiable", "value": "ScheduleAnyway"},))
    return _Candidate(RELAX_SPREAD, f"raise the spread over {c.topology_key} from maxSkew {c.max_skew} to {skew}",
                      frozenset({SPREAD}), ({"op": "replace", "path": f"{path}/maxSkew", "value": skew},))


def _pod_affinity_terms(pod: Pod) -> list[tuple[str, str, int, Any]]:
    out: list[tuple[str, str, int, Any]] = []
    aff = pod.spec.affinity
    if aff is None:
        return out
    for field, kind, terms in (("podAffinity", DROP_POD_AFFINITY, aff.pod_affinity),
                               ("podAntiAffinity", DROP_POD_ANTI_AFFINITY, aff.pod_anti_affinity)):
        required = terms.required_during_scheduling_ignored_during_execution if terms is not None else ()
        out += [(field, kind, i, term) for i, term in enumerate(required)]
    return out


def _drop_terms(terms: Sequence[tuple[str, str, int, Any]]) -> _Candidate:
    """Required pod (anti-)affinity terms removed (the highest index first, so each path stays right)."""
    ops = tuple({"op": "remove", "path": f"/spec/affinity/{field}/requiredDuringSchedulingIgnoredDuringExecution/{i}"}
                for field, _kind, i, _term in sorted(terms, key=lambda t: (t[0], -t[2])))
    words = "; ".join(f"drop the pod {'affinity' if field == 'podAffinity' else 'anti-affinity'} term {i} "
                      f"(topologyKey {term.topology_key})" for field, _kind, i, term in terms)
    return _Candidate(terms[0][1] if len(terms) == 1 else COMBINATION, words, frozenset({POD_AFFINITY}), ops)


def _port_candidates(pod: Pod) -> list[_Candidate]:
    out = []
    for ci, c in enumerate(pod.spec.containers):
        for pi, port in enumerate(c.ports):
            if port.host_port:
                out.append(_Candidate(DROP_HOST_PORT, f"drop hostPort {port.host_port} of container {c.name}",
                                      frozenset({NODE_PORTS}),
                                      ({"op": "remove", "path": f"/spec/containers/{ci}/ports/{pi}/hostPort"},)))
    return out


def _uncordon(sim: SimulatorCore, names: Sequence[str]) -> _Candidate:
    node_ops = []
    for name in names:
        node = sim.cluster.get(name).node
        m = node.to_dict() if node is not None else {}
        ops: list[dict[str, Any]] = [{"op": "add", "path": "/spec/unschedulable", "value": False}]
        taints = _spec(m).get("taints")
        if isinstance(taints, list):
            ops += [{"op": "remove", "path": f"/spec/taints/{j}"} for j in reversed(range(len(taints)))
                    if isinstance(taints[j], dict) and taints[j].get("key") == UNSCHEDULABLE_TAINT]
        node_ops.append((name, tuple(ops)))
    shown = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
    return _Candidate(UNCORDON, f"uncordon {shown}", frozenset({NODE_UNSCHEDULABLE, TAINT_TOLERATION}), (),
                      tuple(node_ops), frozenset(names))


def _only_cordoned(sim: SimulatorCore, pod: Pod, ex: _Examination, name: str) -> bool:
    """Node ``name`` rejects the pod for being cordoned alone (its cordon taint included)."""
    fails = set(ex.failing[name])
    if NODE_UNSCHEDULABLE not in fails or not fails <= {NODE_UNSCHEDULABLE, TAINT_TOLERATION}:
        return False
    node = sim.cluster.get(name).node
    return node is not None and all(t.key == UNSCHEDULABLE_TAINT for t in _untolerated(node, pod))


def _lower_requests(m: Any, pod: Pod, ni: NodeInfo, short: Mapping[str, int]) -> _Candidate | None:
    """Requests scaled down so that the pod fits in ``ni``'s free room (its containers in proportion)."""
    from scheduling_framework.api.quantity import Quantity

    reqs = pod_requests(pod)
    targets: dict[str, tuple[int, int]] = {}
    for res in short:
        if res == "pods" or res not in reqs:
            return None
        want = _amount(res, reqs[res])
        free = ni.allocatable.get(res) - ni.requested.get(res)
        if free <= 0:
            return None
        targets[res] = (want, free)
    ops: list[dict[str, Any]] = []
    for ci, c in enumerate(_spec(m).get("containers") or []):
        r = ((c.get("resources") or {}).get("requests")) if isinstance(c, dict) else None
        if not isinstance(r, dict):
            continue
        for res, (want, free) in targets.items():
            if res in r:
                try:
                    amount = _amount(res, Quantity.parse(str(r[res])))
                except Exception:
                    return None
                scaled = amount * free // want
                ops.append({"op": "replace", "path": f"/spec/containers/{ci}/resources/requests/{escape(res)}",
                            "value": f"{scaled}m" if res == "cpu" else str(scaled)})
    pod_level = (_spec(m).get("resources") or {}).get("requests")
    if isinstance(pod_level, dict):
        for res, (_want, free) in targets.items():
            if res in pod_level:
                ops.append({"op": "replace", "path": f"/spec/resources/requests/{escape(res)}",
                            "value": f"{free}m" if res == "cpu" else str(free)})
    if not ops:
        return None
    words = ", ".join(f"{res} from {fmt_amount(res, w)} to {fmt_amount(res, f)}" for res, (w, f) in targets.items())
    return _Candidate(LOWER_REQUESTS, f"lower the requests ({words}) to fit {ni.name}", frozenset({FIT}), tuple(ops))


def _shortfall(pod: Pod, ni: NodeInfo) -> dict[str, int]:
    out: dict[str, int] = {}
    for res, q in pod_requests(pod).items():
        want = _amount(res, q)
        if want <= 0:
            continue
        free = ni.allocatable.get(res) - ni.requested.get(res)
        if res == "pods":
            continue
        if want > free:
            out[res] = want - max(free, 0)
    if len(ni.pods) + 1 > ni.allocatable.allowed_pod_number:
        out["pods"] = 1
    return out


# --- the search --------------------------------------------------------------------------------------------------


class _Verifier:
    """Applies candidates on forks of the simulator and re-runs the plugins."""

    def __init__(self, sim: SimulatorCore, pod: Pod, ex: _Examination) -> None:
        self.sim, self.pod, self.ex = sim, pod, ex
        self.manifest = pod.to_dict()

    def mutated(self, cand: _Candidate) -> Pod:
        """The pod with the change's operations applied to its manifest (PatchError, ManifestError)."""
        if not cand.pod_ops:
            return self.pod
        return Pod.from_dict(patch.apply(self.manifest, cand.pod_ops))

    def _edit_nodes(self, cand: _Candidate) -> None:
        sim = self.sim
        for name, ops in cand.node_ops:
            node = sim.cluster.get(name).node
            if node is None:
                continue
            changed = Node.from_dict(patch.apply(node.to_dict(), ops))
            pods = sim.remove_node(name)
            sim.add_node(changed, pods)

    def predicted(self, cand: _Candidate) -> list[str]:
        """Examined nodes that only plugins the change answers reject (those it may open)."""
        names = self.ex.order if cand.scope is None else [n for n in self.ex.order if n in cand.scope]
        return [n for n in names if self.ex.failing[n] and set(self.ex.failing[n]) <= cand.plugins]

    def verify(self, cand: _Candidate, nodes: Sequence[str] | None = None) -> Remedy | None:
        sim = self.sim
        try:
            pod = self.mutated(cand)
        except (patch.PatchError, SchedulingFrameworkError):  # the change does not make a valid pod
            return None
        with sim.fork():
            if cand.node_ops:
                try:
                    self._edit_nodes(cand)
                except (patch.PatchError, SchedulingFrameworkError):
                    return None
            opened = self._opened(pod, nodes if nodes is not None else self.predicted(cand))
            placement = sim.best_node_for_pod(pod)
        if placement.node is None:
            return None
        return Remedy(cand.kind, cand.change, cand.patches(self.pod), tuple(sorted(cand.plugins)), len(opened),
                      tuple(opened[:NAMED]), placement.node, True)

    def opens(self, cand: _Candidate) -> bool:
        """Whether the change (a pod change) lets the pod pass PreFilter and Filter on an examined node it should
        open: the quick question of a search, before the value found is verified."""
        try:
            pod = self.mutated(cand)
        except (patch.PatchError, SchedulingFrameworkError):
            return False
        return bool(self._opened(pod, self.predicted(cand), first=True))

    def _opened(self, pod: Pod, names: Sequence[str], first: bool = False) -> list[str]:
        sim = self.sim
        admitted, refusal = sim.admit(pod)
        if refusal:
            return []
        fwk = sim.framework
        state = CycleState()
        pre_res, st, _ = fwk.run_pre_filter_plugins(state, admitted, fwk.snapshot.list())
        if st is not None and not st.is_success():
            return []
        allowed = pre_res.node_names if pre_res is not None else None
        out = []
        for name in names[:MAX_VERIFIED]:
            if allowed is not None and name not in allowed:
                continue
            if not sim.cluster.has_node(name):
                continue
            res = fwk.run_filter_plugins_with_nominated_pods(state, admitted, sim.cluster.get(name))
            if res is None or res.is_success():
                out.append(name)
                if first:
                    break
        return out


def _spread(v: _Verifier, pod: Pod) -> list[Remedy]:
    """For each DoNotSchedule spread constraint: the smallest maxSkew that lets the pod in, else ScheduleAnyway.

    The search (doubling, then halving) asks only whether an examined node opens (PreFilter and Filter); the
    value found is then verified as every remedy is, with a full cycle."""
    out: list[Remedy] = []
    for i, c in enumerate(pod.spec.topology_spread_constraints):
        if c.when_unsatisfiable != "DoNotSchedule":
            continue
        lo, hi, ok = c.max_skew, c.max_skew + 1, False
        while hi <= c.max_skew + MAX_SKEW_RAISE:
            ok = v.opens(_spread_candidate(i, c, hi))
            if ok:
                break
            lo, hi = hi, c.max_skew + 2 * (hi - c.max_skew)
        found = None
        if ok:
            while hi - lo > 1:  # the smallest that works
                mid = (lo + hi) // 2
                if v.opens(_spread_candidate(i, c, mid)):
                    hi = mid
                else:
                    lo = mid
            found = v.verify(_spread_candidate(i, c, hi))
        if found is None:
            found = v.verify(_spread_candidate(i, c, None))
        if found is not None:
            out.append(found)
    return out


def _node_specific(sim: SimulatorCore, m: Any, pod: Pod, ex: _Examination, name: str) -> list[_Candidate] | None:
    """Changes that answer every plugin rejecting examined node ``name``; None when one has none."""
    parts: list[_Candidate] = []
    ni = sim.cluster.get(name)
    node = ni.node
    if node is None:
        return None
    for plugin in ex.failing[name]:
        if plugin == TAINT_TOLERATION:
            taints = [attrs.evolve(t, time_added=None) for t in _untolerated(node, pod) if t.key != UNSCHEDULABLE_TAINT]
            if taints:
                parts.append(_tolerate(m, taints))
            elif NODE_UNSCHEDULABLE not in ex.failing[name]:
                return None
        elif plugin == NODE_AFFINITY:
            labels = node.metadata.labels
            keys = [_drop_selector_key(k, val) for k, val in sorted(pod.spec.node_selector.items())
                    if labels.get(k) != val]
            parts += keys + ([_drop_required_affinity()] if _required_node_affinity(pod) else [])
        elif plugin == NODE_UNSCHEDULABLE:
            parts.append(_uncordon(sim, [name]))
        elif plugin == FIT:
            short = _shortfall(pod, ni)
            cand = _lower_requests(m, pod, ni, short) if "pods" not in short else None
            if cand is None:
                return None
            parts.append(cand)
        elif plugin == SPREAD:
            parts += [_spread_candidate(i, c, None) for i, c in enumerate(pod.spec.topology_spread_constraints)
                      if c.when_unsatisfiable == "DoNotSchedule"]
        elif plugin == POD_AFFINITY:
            terms = _pod_affinity_terms(pod)
            if not terms:
                return None
            parts.append(_drop_terms(terms))
        elif plugin == NODE_PORTS:
            parts += _port_candidates(pod)
        else:
            return None
    return parts or None


def remedies_for(sim: SimulatorCore, pod: Pod | Any, *, message: str = "",
                 templates: Iterable[Node] = ()) -> PodRemedies:
    """What would make ``pod`` fit on ``sim``'s cluster (see the module's docstring); ``message`` is upstream's
    message for it, kept in the result. The simulator is left as it was (every change is made on a fork)."""
    if not isinstance(pod, Pod):
        pod = Pod.from_dict(pod)
    key = pod.key
    admitted, refusal = sim.admit(pod)
    if refusal:
        return PodRemedies(key, message, not_computed=(f"no remedy computed: admission refused the pod: {refusal}",))
    ex = examine(sim, admitted)
    found_facts = facts(sim, admitted)
    not_computed: list[str] = []
    if ex.prefilter is not None:
        st = ex.prefilter
        found_facts.append(f"{st.plugin or 'PreFilter'} rejected the pod before any node was examined: "
                           f"{st.message()}")
    rejected: Counter[str] = Counter(p for n in ex.order for p in ex.failing[n])
    manifest = pod.to_dict()
    verifier = _Verifier(sim, pod, ex)
    cands: list[_Candidate] = []
    plugins = set(rejected)
    if ex.prefilter is not None and ex.prefilter.plugin:
        plugins.add(ex.prefilter.plugin)
    shortfalls: list[NodeShortfall] = []
    remedies: list[Remedy] = []
    for plugin in sorted(plugins, key=lambda p: -rejected[p]):
        if plugin == TAINT_TOLERATION:
            cands += _taint_candidates(sim, manifest, admitted, ex)
        elif plugin == NODE_AFFINITY:
            cands += _affinity_candidates(admitted)
        elif plugin == NODE_UNSCHEDULABLE:
            only = [n for n in ex.order if _only_cordoned(sim, admitted, ex, n)]
            if only:
                cands.append(_uncordon(sim, only))
        elif plugin == FIT:
            shortfalls = _shortfalls(sim, admitted, ex)
            for s in shortfalls:
                if not s.also and "pods" not in dict(s.short):
                    ni = sim.cluster.get(s.node)
                    cand = _lower_requests(manifest, admitted, ni, _shortfall(admitted, ni))
                    if cand is not None:
                        cands.append(cand)
                    break
        elif plugin == SPREAD:
            remedies += _spread(verifier, admitted)
        elif plugin == POD_AFFINITY:
            terms = _pod_affinity_terms(admitted)
            if terms:
                cands += [_drop_terms([t]) for t in terms]
            else:
                not_computed.append(f"no remedy computed for {POD_AFFINITY} ({rejected[plugin]} node(s)): the "
                                    "required anti-affinity of pods already running rejects it (change those "
                                    "pods)")
        elif plugin == NODE_PORTS:
            cands += _port_candidates(admitted)
        else:
            reason = _first_reason(ex, plugin)
            where = "at PreFilter, every node" if not rejected[plugin] else f"{rejected[plugin]} node(s)"
            not_computed.append(f"no remedy computed for {plugin} ({where})" + (f": {reason}" if reason else ""))
    for cand in cands[:MAX_CANDIDATES]:
        r = verifier.verify(cand)
        if r is not None:
            remedies.append(r)
    if FIT in rejected:
        pr = _preemption(sim, manifest, admitted, verifier)
        if pr is not None:
            remedies.append(pr)
    if not remedies and ex.order:
        remedies += _combinations(sim, manifest, admitted, ex, verifier)
    for t in _templates(sim, pod, templates):
        remedies.append(t)
        break
    remedies.sort(key=lambda r: (r.kind == COMBINATION, r.kind == NEW_NODE, -r.nodes_opened))
    return PodRemedies(key, message, tuple(found_facts), tuple(remedies), tuple(shortfalls), tuple(not_computed),
                       tuple(sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0]))), len(ex.order), ex.total)


def _preemption(sim: SimulatorCore, m: Any, pod: Pod, v: _Verifier) -> Remedy | None:
    """A higher PriorityClass with which upstream's preemption (DefaultPreemption's dry run: its choice of node and
    of the fewest, least important victims, PodDisruptionBudgets counted) makes room, the lowest that does; the
    victims evicted on a fork, then a full cycle says where the pod lands."""
    from scheduling_framework.ingest.admission import PRIORITY_CLASS_KIND, PriorityAdmission

    fwk = sim.framework
    plugin = fwk.plugins.get("DefaultPreemption")
    evaluator = getattr(plugin, "evaluator", None)
    if evaluator is None:
        return None
    own = pod.spec.priority or 0
    classes = PriorityAdmission(sim.objects.list(PRIORITY_CLASS_KIND)).classes.values()
    higher = sorted((pc for pc in classes if pc.value > own and not pc.name.startswith("system-")),
                    key=lambda pc: (pc.value, pc.name))
    for pc in higher[:MAX_PRIORITY_CLASSES]:
        ops: list[dict[str, Any]] = [{"op": "add", "path": "/spec/priorityClassName", "value": pc.name},
                                     {"op": "add", "path": "/spec/priority", "value": pc.value}]
        if _spec(m).get("preemptionPolicy") == "Never":
            ops.append({"op": "remove", "path": "/spec/preemptionPolicy"})
        cand = _Candidate(PREEMPT, f"give the pod priorityClassName {pc.name} (priority {pc.value})",
                          frozenset({FIT}), tuple(ops))
        try:
            mutated = v.mutated(cand)
        except (patch.PatchError, SchedulingFrameworkError):
            return None
        admitted, refusal = sim.admit(mutated)
        if refusal:
            continue
        state = CycleState()
        nodes = fwk.snapshot.list()
        pre_res, st, _ = fwk.run_pre_filter_plugins(state, admitted, nodes)
        if st is not None and not st.is_success():
            return None
        allowed = pre_res.node_names if pre_res is not None else None
        statuses: dict[str, Status | None] = {}
        for ni in nodes:
            if allowed is not None and ni.name not in allowed:
                statuses[ni.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not a PreFilter candidate")
                continue
            res = fwk.run_filter_plugins_with_nominated_pods(state, admitted, ni)
            statuses[ni.name] = None if res is None or res.is_success() else res
        if any(st is None for st in statuses.values()):
            return None  # it fits without evicting anyone: the other remedies say how
        try:
            found, _statuses, _err = evaluator.find_candidates(state, nodes, admitted, statuses)
            best = evaluator.select_candidate(found) if found else None
        except Exception:  # the dry run of a replaced plugin: no remedy rather than a failed run
            return None
        if best is None or not best.name:
            continue
        victims = tuple(p.key for p in best.victims.pods)
        with sim.fork():
            for victim in best.victims.pods:
                sim.remove_pod(victim)
            placement = sim.best_node_for_pod(mutated)
        if placement.node is None:
            continue
        pdb = f", {best.victims.num_pdb_violations} of them past a PodDisruptionBudget" \
            if best.victims.num_pdb_violations else ""
        change = (f"{cand.change}: preemption would evict {', '.join(victims[:NAMED])}"
                  f"{f' and {len(victims) - NAMED} more' if len(victims) > NAMED else ''} on {best.name}{pdb}")
        return Remedy(PREEMPT, change, cand.patches(pod), (FIT,), 1, (best.name,), placement.node, True,
                      victims=victims)
    return None


def _first_reason(ex: _Examination, plugin: str) -> str:
    if ex.prefilter is not None and ex.prefilter.plugin == plugin:
        return ex.prefilter.message()
    for n in ex.order:
        st = ex.failing[n].get(plugin)
        if st is not None:
            return "; ".join(st.reasons) or st.message()
    return ""


def _shortfalls(sim: SimulatorCore, pod: Pod, ex: _Examination) -> list[NodeShortfall]:
    rows = []
    want = {res: _amount(res, q) for res, q in pod_requests(pod).items()}
    infos = sim.framework.snapshot.list()
    offered = {res for res in want if any(ni.allocatable.get(res) > 0 for ni in infos)} | {"pods"}
    for n in ex.order:
        fails = ex.failing[n]
        if FIT not in fails:
            continue
        ni = sim.cluster.get(n)
        short = {res: v for res, v in _shortfall(pod, ni).items() if res in offered}  # the facts say the rest
        if not short:
            continue
        also = tuple(sorted(p for p in fails if p != FIT))
        weight = sum(v / max(want.get(res, 1), 1) for res, v in short.items())
        rows.append((len(also), weight, n, short, also))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [NodeShortfall(n, tuple((res, "1 pod slot" if res == "pods" else fmt_amount(res, v))
                                   for res, v in sorted(short.items())), also)
            for _, _, n, short, also in rows[:SHORTFALLS]]


def _combinations(sim: SimulatorCore, m: Any, pod: Pod, ex: _Examination, v: _Verifier) -> list[Remedy]:
    order = sorted((n for n in ex.order if ex.failing[n]), key=lambda n: (len(ex.failing[n]), ex.order.index(n)))
    tried: set[tuple[str, ...]] = set()
    for name in order:
        parts = _node_specific(sim, m, pod, ex, name)
        if parts is None:
            continue
        sig = tuple(sorted(p.change for p in parts))
        if sig in tried:
            continue
        tried.add(sig)
        if len(tried) > MAX_COMBINATIONS:
            break
        cand = _combined(parts)
        r = v.verify(cand, nodes=[name, *v.predicted(cand)])
        if r is not None:
            return [attrs.evolve(r, parts=tuple(p.change for p in parts))]
    return []


def _templates(sim: SimulatorCore, pod: Pod, templates: Iterable[Node]) -> list[Remedy]:
    fits = []
    for i, t in enumerate(templates):
        with sim.fork():
            names = sim.add_node_from_template(t, 1, name_prefix=f"{t.name}-new")
            st = sim.check_pod_on_node(pod, names[0])
        if st is None:
            size = (t.status.allocatable.get("cpu"), t.status.allocatable.get("memory"))
            key = tuple(_amount(r, q) if q is not None else 0 for r, q in zip(("cpu", "memory"), size, strict=True))
            fits.append((key, i, t, names[0]))
    fits.sort(key=lambda f: (f[0], f[1]))
    return [Remedy(NEW_NODE, f"add a node like template {t.name}",
                   [{"target": {"kind": "Node", "name": name}, "create": {"fromTemplate": t.name}}], (), 1, (name,),
                   name, True)
            for _key, _i, t, name in fits]


__all__ = ["examine", "facts", "fmt_amount", "remedies_for"]
