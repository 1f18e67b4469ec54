"""NodeInfo, PodInfo and Resource: the per-node aggregates plugins read, kept incrementally.

Adding or removing a pod updates requested / non-zero requested resources, used host ports, PVC
reference counts and the lists of pods with (anti-)affinity, and bumps ``generation``.
"""

from __future__ import annotations

import itertools
import operator
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod, PodAffinityTerm
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resize import DEFAULT_RULES, RequestRules
from scheduling_framework.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_scalar_resource_name,
    non_zero_requests,
    pod_requests,
)
from scheduling_framework.api.selectors import LabelSelector

_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


class ChangeJournal:
    """The NodeInfos changed or cloned lately, so that who remembers results per NodeInfo of a long node list
    can find the few that differ from the last time without visiting every node.

    Every change of a NodeInfo (node set or removed, pod added or removed: wherever ``generation`` moves) notes
    (id of the NodeInfo, its name); so does every clone, under the clone's id. A reader keeps ``position()``
    and later asks ``since(position)``: what was noted in between, or None when more than ``limit`` notes
    came in between (the oldest are forgotten). A NodeInfo put back into a list without being changed or
    cloned is not noted, so readers must check that the list holds what they think (see
    plugins_intree/podtopologyspread/domains.py).
    """

    __slots__ = ("_lock", "_notes", "_seq", "limit")

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._notes: deque[tuple[int, str]] = deque(maxlen=limit)
        self._seq = 0
        self._lock = threading.Lock()

    def note(self, ni: NodeInfo) -> None:
        with self._lock:
            self._seq += 1
            self._notes.append((id(ni), ni.name))

    def position(self) -> int:
        return self._seq

    def since(self, position: int) -> tuple[int, list[tuple[int, str]] | None]:
        """(current position, the notes after ``position``, newest first, or None when some are forgotten)."""
        with self._lock:
            seq = self._seq
            n = seq - position
            if n < 0 or n > len(self._notes):
                return seq, None
            if n == 0:
                return seq, []
            return seq, list(itertools.islice(reversed(self._notes), n))  # newest first


#: The journal of every NodeInfo of this process.
CHANGES = ChangeJournal()


def node_labels(nodes: Iterable[NodeInfo]) -> list[Mapping[str, str]] | None:
    """The labels of each NodeInfo's node, in order, for a plugin's batch form (``filter_nodes``,
    ``score_nodes``); None when a NodeInfo has no node (its per-node method reports that)."""
    try:
        return [ni.node.metadata.labels for ni in nodes]  # type: ignore[union-attr]
    except AttributeError:
        return None


class ChangedNodes:
    """For someone who keeps a result per position of a node list across calls: which positions hold another
    NodeInfo, or a changed one, than at the previous call.

    The NodeInfos the journal names are checked first; the list must then hold, everywhere else, the very
    NodeInfos of the previous call (one identity comparison of the two lists: NodeInfo has no __eq__). When
    that fails, or the journal forgot some notes, every position's NodeInfo and ``generation`` is compared.
    Pinned by tests/test_perf_equivalence.py::test_changed_nodes_equal_a_generation_scan.
    """

    __slots__ = ("_by_id", "_by_name", "_generations", "_nodes", "_position")

    def __init__(self) -> None:
        self._nodes: list[NodeInfo] | None = None
        self._generations: list[int] = []
        self._position = 0
        self._by_id: dict[int, int] | None = None
        self._by_name: dict[str, int] = {}

    def changed(self, nodes: list[NodeInfo]) -> list[int] | None:
        """The positions to evaluate again, or None to evaluate every position (first call, other length)."""
        position = CHANGES.position()
        recorded = self._nodes
        if recorded is None or len(recorded) != len(nodes):
            self._remember(nodes, position)
            return None
        out = self._from_journal(nodes)
        if out is _ALL:
            self._remember(nodes, position)
            return None
        if out is None:
            out = [i for i, (a, b, g) in enumerate(zip(recorded, nodes, self._generations, strict=True))
                   if a is not b or b.generation != g]
            self._remember(nodes, position)
        return out

    def _remember(self, nodes: list[NodeInfo], position: int) -> None:
        self._nodes = list(nodes)
        self._generations = [ni.generation for ni in nodes]
        self._position = position
        by_id = {id(ni): i for i, ni in enumerate(nodes)}
        by_name = {ni.name: i for i, ni in enumerate(nodes)}
        usable = len(by_id) == len(nodes) == len(by_name) and all(type(ni) is NodeInfo for ni in nodes)
        self._by_id = by_id if usable else None
        self._by_name = by_name if usable else {}

    def _from_journal(self, nodes: list[NodeInfo]) -> list[int] | None:
        """The changed positions from the journal; None: scan the generations; _ALL: evaluate every position."""
        by_id = self._by_id
        recorded = self._nodes
        if by_id is None or recorded is None or type(nodes) is not list:
            return None
        position, notes = CHANGES.since(self._position)
        if notes is None:
            return None
        by_name = self._by_name
        candidates: set[int] = set()
        for obj_id, name in notes:
            i = by_id.get(obj_id)
            if i is not None:
                candidates.add(i)
            i = by_name.get(name)
            if i is not None:
                candidates.add(i)
        before = [(i, recorded[i]) for i in candidates]
        for i, _ in before:
            recorded[i] = nodes[i]
        if recorded != nodes:
            for i, ni in before:
                recorded[i] = ni
            return None
        for i, old in before:
            ni = nodes[i]
            # a foreign object, a NodeInfo listed twice or renamed: the maps cannot follow it
            if ni is not old and (type(ni) is not NodeInfo or id(ni) in by_id):
                return _ALL
            if by_name.get(ni.name) != i:
                return _ALL
        generations = self._generations
        out: list[int] = []
        for i, old in before:
            ni = nodes[i]
            if ni is old and ni.generation == generations[i]:
                continue
            if ni is not old:
                del by_id[id(old)]
                by_id[id(ni)] = i
            generations[i] = ni.generation
            out.append(i)
        self._position = position
        return out


#: NodeInfo.list_position before any NodeColumns has seen the NodeInfo (past the end of any list)
NO_POSITION = 1 << 62

#: ChangedNodes._from_journal's answer "evaluate every position"
_ALL: list[int] = []


class Resource:
    """Compute resources in integer units: milli-CPU, bytes, pod count, and scalar resources by name."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar_resources")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0,
                 allowed_pod_number: int = 0, scalar_resources: dict[str, int] | None = None) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar_resources: dict[str, int] = scalar_resources if scalar_resources is not None else {}

    @classmethod
    def from_list(cls, rl: Mapping[str, Quantity]) -> Resource:
        r = cls()
        r.add_list(rl)
        return r

    def add_list(self, rl: Mapping[str, Quantity]) -> None:
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu += q.milli_value()
            elif name == MEMORY:
                self.memory += q.value()
            elif name == PODS:
                self.allowed_pod_number += q.value()
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += q.value()
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + q.value()

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        if other.scalar_resources:
            sr = self.scalar_resources
            for k, v in other.scalar_resources.items():
                sr[k] = sr.get(k, 0) + sign * v

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar_resources))

    def get(self, name: str) -> int:
        """The amount of the named resource in its integer unit (cpu in milli)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def set_max(self, rl: Mapping[str, Quantity]) -> None:
        """Raise each field to at least the given list's value (upstream SetMaxResource)."""
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu = max(self.milli_cpu, q.milli_value())
            elif name == MEMORY:
                self.memory = max(self.memory, q.value())
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage = max(self.ephemeral_storage, q.value())
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = max(self.scalar_resources.get(name, 0), q.value())

    def is_zero(self) -> bool:
        return (self.milli_cpu == 0 and self.memory == 0 and self.ephemeral_storage == 0
                and self.allowed_pod_number == 0 and not any(self.scalar_resources.values()))

    def as_dict(self) -> dict[str, int]:
        d = {"milliCPU": self.milli_cpu, "memory": self.memory, "ephemeralStorage": self.ephemeral_storage,
             "allowedPodNumber": self.allowed_pod_number}
        d.update(self.scalar_resources)
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                {k: v for k, v in self.scalar_resources.items() if v}) == (
            other.milli_cpu, other.memory, other.ephemeral_storage, other.allowed_pod_number,
            {k: v for k, v in other.scalar_resources.items() if v})

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Resource({self.as_dict()})"


# --- affinity terms -----------------------------------------------------------------------


@attrs.frozen(slots=True)
class AffinityTerm:
    """A pod (anti-)affinity term ready to match: namespaces resolved, selectors parsed.

    ``selector`` None matches no pod; ``namespace_selector`` None matches no namespace (empty = all).
    """

    namespaces: frozenset[str]
    selector: LabelSelector | None
    topology_key: str
    namespace_selector: LabelSelector | None

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` is in the term's namespaces (or selected namespaces) and matches its selector."""
        if pod.metadata.namespace in self.namespaces or (
                self.namespace_selector is not None and ns_labels is not None
                and self.namespace_selector.matches(ns_labels)):
            return self.selector is not None and self.selector.matches(pod.metadata.labels)
        return False


@attrs.frozen(slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


#: AffinityTerms by (id of the PodAffinityTerm, the pod's namespace): pods that share a parsed term (replicas of
#: one template, see api/pod.py) share its AffinityTerm, and what plugins keep per term object is computed once.
#: The PodAffinityTerm is held beside it so that its id is not reused meanwhile. Cleared beyond the bound.
_TERMS: dict[tuple[int, str], tuple[PodAffinityTerm, AffinityTerm]] = {}
_TERMS_KEPT = 16384


def new_affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    namespace = pod.metadata.namespace
    hit = _TERMS.get((id(term), namespace))
    if hit is not None and hit[0] is term:
        return hit[1]
    namespaces = frozenset(term.namespaces)
    if not namespaces and term.namespace_selector is None:
        namespaces = frozenset((namespace,))
    out = AffinityTerm(namespaces, term.label_selector, term.topology_key, term.namespace_selector)
    if len(_TERMS) >= _TERMS_KEPT:
        _TERMS.clear()
    _TERMS[(id(term), namespace)] = (term, out)
    return out


class PodInfo:
    """A pod with what the scheduler derives from it once: requests and parsed affinity terms."""

    __slots__ = ("pod", "labels", "namespace", "requests", "non0_cpu", "non0_mem", "required_affinity_terms",
                 "required_anti_affinity_terms", "preferred_affinity_terms", "preferred_anti_affinity_terms",
                 "host_ports", "pvc_keys", "rules")

    def __init__(self, pod: Pod, rules: RequestRules = DEFAULT_RULES) -> None:
        # ``rules``: how an in-place resize in the pod's status counts (the run's release and gates); pods
        # without one (status.resize None) do not read them.
        self.pod = pod
        # the pod's labels and namespace, read straight from here by the label index (state/pod_index.py) and
        # the spread counts, which visit every pod of the cluster: one object less to reach per pod
        self.labels: Mapping[str, str] = pod.metadata.labels
        self.namespace: str = pod.metadata.namespace
        self.rules = rules
        reqs = pod_requests(pod, rules=rules)
        self.requests = Resource.from_list(reqs)
        self.non0_cpu, self.non0_mem = non_zero_requests(pod, reqs, rules)
        aff = pod.spec.affinity
        pa = aff.pod_affinity if aff is not None else None
        paa = aff.pod_anti_affinity if aff is not None else None
        self.required_affinity_terms: tuple[AffinityTerm, ...] = () if pa is None else tuple(
            new_affinity_term(pod, t) for t in pa.required_during_scheduling_ignored_during_execution)
        self.required_anti_affinity_terms: tuple[AffinityTerm, ...] = () if paa is None else tuple(
            new_affinity_term(pod, t) for t in paa.required_during_scheduling_ignored_during_execution)
        self.preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = () if pa is None else tuple(
            WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
            for w in pa.preferred_during_scheduling_ignored_during_execution)
        self.preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = () if paa is None else tuple(
            WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
            for w in paa.preferred_during_scheduling_ignored_during_execution)
        # Host ports of containers and of restartable (sidecar) init containers, which run all along.
        self.host_ports: tuple[tuple[str, str, int], ...] = tuple(
            (p.host_ip, p.protocol, p.host_port)
            for c in (*(ic for ic in pod.spec.init_containers if ic.is_restartable), *pod.spec.containers)
            for p in c.ports if p.host_port > 0)
        self.pvc_keys: tuple[str, ...] = tuple(
            f"{pod.metadata.namespace}/{v.claim_name}" for v in pod.spec.volumes if v.claim_name is not None)

    def placed(self, pod: Pod, rules: RequestRules) -> PodInfo:
        """The PodInfo of ``pod``, which is this one's pod placed: spec.nodeName set, status.nominatedNodeName
        maybe cleared. Nothing a PodInfo derives reads either, so this one's values are shared when ``rules`` count
        as its own did (the same rules, or no resize in the pod's status: then they are not read); otherwise the
        PodInfo is made afresh. Pinned by tests/test_perf_equivalence.py::test_placed_pod_info_equals_a_fresh_one."""
        if not (self.rules == rules or pod.status.resize is None):
            return PodInfo(pod, rules)
        c = PodInfo.__new__(PodInfo)
        c.pod = pod
        c.labels = self.labels
        c.namespace = self.namespace
        c.rules = rules
        c.requests = self.requests
        c.non0_cpu = self.non0_cpu
        c.non0_mem = self.non0_mem
        c.required_affinity_terms = self.required_affinity_terms
        c.required_anti_affinity_terms = self.required_anti_affinity_terms
        c.preferred_affinity_terms = self.preferred_affinity_terms
        c.preferred_anti_affinity_terms = self.preferred_anti_affinity_terms
        c.host_ports = self.host_ports
        c.pvc_keys = self.pvc_keys
        return c

    @property
    def has_affinity(self) -> bool:
        """Pods with any pod affinity or anti-affinity (upstream podsWithAffinity)."""
        aff = self.pod.spec.affinity
        return aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None)

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.required_anti_affinity_terms)

    def with_pod(self, pod: Pod) -> PodInfo:
        """A PodInfo for an updated copy of the same pod (recomputes everything)."""
        return PodInfo(pod, self.rules)

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"


# --- host ports ------------------------------------------------------------------------------

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


class HostPortInfo:
    """Used host ports per IP: {ip: {(protocol, port)}}. An empty IP means 0.0.0.0 (all addresses)."""

    __slots__ = ("_ports",)

    def __init__(self, ports: dict[str, set[tuple[str, int]]] | None = None) -> None:
        self._ports: dict[str, set[tuple[str, int]]] = ports if ports is not None else {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return (ip or DEFAULT_BIND_ALL_HOST_IP), (protocol or "TCP")

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self._ports.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        s = self._ports.get(ip)
        if s is not None:
            s.discard((protocol, port))
            if not s:
                del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in s for s in self._ports.values())
        for key in (ip, DEFAULT_BIND_ALL_HOST_IP):
            s = self._ports.get(key)
            if s is not None and pp in s:
                return True
        return False

    def __len__(self) -> int:
        return sum(len(s) for s in self._ports.values())

    def items(self) -> Iterable[tuple[str, set[tuple[str, int]]]]:
        return self._ports.items()

    def clone(self) -> HostPortInfo:
        return HostPortInfo({k: set(v) for k, v in self._ports.items()})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HostPortInfo):
            return NotImplemented
        return self._ports == other._ports

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HostPortInfo({self._ports})"


@attrs.frozen(slots=True)
class ImageStateSummary:
    """An image on a node: its size and on how many nodes of the cluster it is."""

    size: int
    num_nodes: int


class NodeInfo:
    """A node and the pods on it, with aggregates maintained on every add/remove.

    ``node`` may be None for a NodeInfo holding pods of a node that is not (yet) known.
    """

    __slots__ = ("node", "name", "pods", "pods_with_affinity", "pods_with_required_anti_affinity", "used_ports",
                 "requested", "non_zero_requested", "allocatable", "_image_states", "pvc_ref_counts",
                 "generation", "_pod_index", "memo", "_noted", "list_position")

    def __init__(self, node: Node | None = None, pods: Iterable[Pod | PodInfo] = ()) -> None:
        self.node: Node | None = None
        # The node's name ("" without a node): a plain attribute, read for every node of every cycle.
        self.name = ""
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self._image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        # Whether changes go into the journal (CHANGES): False only for a scratch copy (``clone(noted=False)``).
        self._noted = True
        # uid -> position in ``pods``; None until needed in a clone (built from ``pods`` on first use: copying it
        # with every clone costs O(pods) per cycle for a crowded node, and most clones never look a pod up).
        self._pod_index: dict[str, int] | None = {}
        # Scratch space for values plugins derive from this NodeInfo's node and pods (how many of its pods a
        # selector matches, ...), so a NodeInfo that did not change since the last cycle answers at once.
        # Every change (node set or removed, pod added or removed) empties it; a clone starts empty. Keys
        # should name the plugin that owns them.
        self.memo: dict[Any, Any] = {}
        # Where a NodeColumns (runtime/columns.py) last saw this NodeInfo in the node list it follows: a hint it
        # checks before use (another list may hold the NodeInfo elsewhere). Out of range until then.
        self.list_position = NO_POSITION
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod(p)

    @property
    def image_states(self) -> dict[str, ImageStateSummary]:
        """The node's images (normalized name -> size and how many nodes have it). Replaced wholesale, never
        changed in place: replacing it is a change of the NodeInfo (ImageLocality's kept scores read it)."""
        return self._image_states

    @image_states.setter
    def image_states(self, states: dict[str, ImageStateSummary]) -> None:
        self._image_states = states
        self.forget()

    # node ------------------------------------------------------------------------------------
    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.allocatable = Resource.from_list(node.status.allocatable)
        self._changed()

    def remove_node(self) -> None:
        self.node = None
        self.name = ""
        self._changed()

    def _changed(self) -> None:
        """After every change: the memo goes, a new generation, a journal note (answers kept by position in
        runtime/columns.py go with it)."""
        if self.memo:
            self.memo.clear()
        self.generation = next_generation()
        if self._noted:
            CHANGES.note(self)

    def forget(self) -> None:
        """Drop everything derived from this NodeInfo (``memo``, answers kept by position in runtime/columns.py):
        a change as far as every reader is concerned (a new generation, a journal note)."""
        self._changed()

    # pods ------------------------------------------------------------------------------------
    def add_pod(self, pod: Pod | PodInfo) -> PodInfo:
        pi = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        if self._pod_index is not None:  # else built from ``pods`` when first needed
            self._pod_index[pi.pod.metadata.uid] = len(self.pods)
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)
        return pi

    def remove_pod(self, pod: Pod | PodInfo) -> bool:
        """Remove the pod with this pod's uid; False when it is not here."""
        pi = self._detach((pod.pod if isinstance(pod, PodInfo) else pod).metadata.uid)
        if pi is None:
            return False
        self._update(pi, -1)
        return True

    def _detach(self, uid: str) -> PodInfo | None:
        """Take the pod ``uid`` out of the pod list (the last one takes its place), the index and the affinity
        lists, aggregates untouched; None when it is not here."""
        index = self._index()
        idx = index.pop(uid, None)
        if idx is None:
            return None
        plist = self.pods
        pi = plist[idx]
        last = plist.pop()
        if last is not pi:
            plist[idx] = last
            index[last.pod.metadata.uid] = idx
        if pi.has_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p is not pi]
        if pi.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity
                                                     if p is not pi]
        return pi

    def _index(self) -> dict[str, int]:
        index = self._pod_index
        if index is None:
            index = self._pod_index = {pi.pod.metadata.uid: i for i, pi in enumerate(self.pods)}
        return index

    def has_pod(self, uid: str) -> bool:
        return uid in self._index()

    def get_pod(self, uid: str) -> PodInfo | None:
        idx = self._index().get(uid)
        return None if idx is None else self.pods[idx]

    def remove_pods(self, pods: Iterable[PodInfo]) -> int:
        """Remove each of ``pods`` (by uid) as :meth:`remove_pod` would, one after another (the same pod
        order and aggregates), as one change: one new ``generation`` and one journal note at the end instead of
        one per pod (preemption's dry run removes every lower-priority pod of a node before it filters).
        Returns how many were here. Pinned by
        tests/test_perf_equivalence.py::test_remove_pods_equals_one_by_one_removal."""
        removed = 0
        for pod in pods:
            pi = self._detach(pod.pod.metadata.uid)
            if pi is None:
                continue
            self._aggregate(pi, -1)
            removed += 1
        if removed:
            self._changed()
        return removed

    def _update(self, pi: PodInfo, sign: int) -> None:
        self._aggregate(pi, sign)
        self._changed()

    def _aggregate(self, pi: PodInfo, sign: int) -> None:
        self.requested.add(pi.requests, sign)
        nz = self.non_zero_requested
        nz.milli_cpu += sign * pi.non0_cpu
        nz.memory += sign * pi.non0_mem
        if pi.host_ports:
            for ip, proto, port in pi.host_ports:
                if sign > 0:
                    self.used_ports.add(ip, proto, port)
                else:
                    self.used_ports.remove(ip, proto, port)
        if pi.pvc_keys:
            counts = self.pvc_ref_counts
            for k in pi.pvc_keys:
                n = counts.get(k, 0) + sign
                if n > 0:
                    counts[k] = n
                else:
                    counts.pop(k, None)

    # copies ----------------------------------------------------------------------------------
    def clone(self, noted: bool = True) -> NodeInfo:
        """A copy whose aggregates and pod list can change independently (PodInfos are shared).

        ``noted=False`` makes a scratch copy whose creation and changes stay out of the journal (CHANGES): for a
        copy that never enters a node list someone tracks (preemption's dry run, Filter with nominated pods),
        where thousands of notes per cycle would only push the journal's useful notes out. Pinned by
        tests/test_perf_equivalence.py::test_preemption_bulk_removal_equals_plain."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        # A scratch copy shares the allocatable amounts (only set_node replaces them; nothing changes them in place)
        c.allocatable = self.allocatable.clone() if noted else self.allocatable
        c._image_states = self._image_states  # replaced wholesale, never mutated in place
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        c._pod_index = None  # built on first use (see __init__)
        c.memo = {}
        c._noted = noted
        c.list_position = NO_POSITION
        if noted:
            CHANGES.note(c)
        return c

    def snapshot_state(self) -> dict[str, Any]:
        """Plain data describing the aggregates (for tests comparing incremental vs rebuilt)."""
        return {
            "node": self.name,
            "pods": sorted(p.pod.metadata.uid for p in self.pods),
            "with_affinity": sorted(p.pod.metadata.uid for p in self.pods_with_affinity),
            "with_required_anti_affinity": sorted(p.pod.metadata.uid for p in self.pods_with_required_anti_affinity),
            "requested": self.requested.as_dict(),
            "non_zero_requested": self.non_zero_requested.as_dict(),
            "allocatable": self.allocatable.as_dict(),
            "used_ports": {k: sorted(v) for k, v in self.used_ports.items()},
            "pvc_ref_counts": dict(self.pvc_ref_counts),
        }

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


#: ``ni.image_states`` of a NodeInfo as a C-level getter, for passes over many nodes (``map(image_states_of, nodes)``
#: costs no Python call per node, the property does).
image_states_of: Callable[[NodeInfo], dict[str, ImageStateSummary]] = operator.attrgetter("_image_states")
