"""Simulator: placement queries for autoscalers and what-if tools, on a Framework over a ClusterSnapshot.

Nothing here binds, waits or preempts: the queries run PreFilter + Filter (and Score, where they pick a
best node) through the same Framework and Algorithm the reference Scheduler uses, and ``schedule_pods``
adds each placed pod to the snapshot and runs Reserve, so that the next pod sees it. Wrap a question in
``fork()`` / ``revert()`` to leave the cluster as it was.
"""

from __future__ import annotations

import functools
import operator
import random
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self, TypeVar

import attrs

from scheduling_framework.api.coerce import coerce_node, coerce_object, coerce_pod, iter_objects
from scheduling_framework.api.meta import ObjectMeta
from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resize import RequestRules
from scheduling_framework.config import KubeSchedulerConfiguration, resolve_config
from scheduling_framework.config.defaults import GANG_SCHEDULING
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.dra.claims import (
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    claim_summaries,
    extended_claim_name,
    generate_claims,
    has_resource_claims,
    needs_generated_claims,
    release_pod_claims,
)
from scheduling_framework.dra.extended import requests_dra_candidate
from scheduling_framework.errors import SimulatorBusyError, SnapshotError
from scheduling_framework.features import UnreproducedInput
from scheduling_framework.ingest.admission import (
    ADMISSION_KINDS,
    WARN_BOUND_REFUSED,
    WARN_REFUSED,
    Admission,
    refused_item,
)
from scheduling_framework.ingest.cluster import Cluster, refuse_duplicates
from scheduling_framework.ingest.overcommit import report_overcommitted
from scheduling_framework.interfaces import QueuedPodInfo
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.report.notebook import ResultsMixin
from scheduling_framework.runtime.algorithm import Algorithm, CycleError, Diagnosis, FitError, absent_nodes_status
from scheduling_framework.runtime.framework import Framework, Nominator
from scheduling_framework.runtime.signatures import KeptPerPod
from scheduling_framework.simulation.cluster_snapshot import ClusterSnapshot, Fork
from scheduling_framework.simulation.placement import Placement as Placement
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.state.podgroups import (
    PodGroupManager,
    group_name,
    is_member,
    lookup_policy,
    uses_pod_group_api,
)
from scheduling_framework.state.snapshot import ObjectStore
from scheduling_framework.status import Code, Status
from scheduling_framework.warning_list import Warnings

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
_ASSUMED_SIZE = 8192  # placed copies of pods kept (see Simulator._assumed_pod)
_BATCHES = 16  # prepared batches kept (see Simulator._prepared_batch)
_MEMO_SIZE = 4096  # remembered cycles per batch of pods (see Simulator._cycle_memo)
_POD_INFO_CACHE_SIZE = 100_000
_T = TypeVar("_T")
_get_ident = threading.get_ident  # (a module global: the per-call thread check reads no attribute of threading)


def _busy_message(what: str, doing: str, other: int | None) -> str:
    name = next((t.name for t in threading.enumerate() if t.ident == other), str(other))
    return (f"Simulator used from two threads at once: {what}() called on thread "
            f"{threading.current_thread().name!r} while thread {name!r} {doing}. A Simulator is not thread-safe: "
            f"use one per thread, or hold a lock from fork() to revert()")


@attrs.frozen
class ScheduleOutcome(ResultsMixin):
    """The result of :meth:`Simulator.schedule_pods`: one Placement per pod, in scheduling order (an HTML
    table in Jupyter; ``to_records()`` / ``to_dataframe()`` for data tools)."""

    results: tuple[Placement, ...]

    def _result_items(self) -> tuple[Placement, ...]:
        return self.results

    @property
    def placements(self) -> dict[str, str]:
        """Pod key (``namespace/name``) -> node, for the pods placed."""
        return {r.pod: r.node for r in self.results if r.node is not None}

    @property
    def unschedulable(self) -> dict[str, str]:
        """Pod key -> why it was not placed, for the pods not placed."""
        return {r.pod: r.message for r in self.results if r.node is None}

    @property
    def all_scheduled(self) -> bool:
        return all(r.node is not None for r in self.results)


@attrs.frozen
class DrainResult:
    """Where the pods of a drained node would go.

    ``placements`` / ``unschedulable`` cover the pods that must move; ``not_moved`` lists the pods a drain
    leaves alone (DaemonSet and mirror pods). ``ok`` is True when every pod that must move found a node.
    """

    node: str
    outcome: ScheduleOutcome
    not_moved: tuple[str, ...] = ()

    @property
    def placements(self) -> dict[str, str]:
        return self.outcome.placements

    @property
    def unschedulable(self) -> dict[str, str]:
        return self.outcome.unschedulable

    @property
    def ok(self) -> bool:
        return self.outcome.all_scheduled


def _failed_gangs(outcome: ScheduleOutcome, batch: Sequence[Pod], groups: Mapping[str, tuple[int, int]]
                  ) -> dict[str, str]:
    """Pod key -> why it is not placed, for every pod of a gang that ended below its ``minCount``."""
    by_key = {r.pod: r for r in outcome.results}
    members: dict[str, list[Pod]] = {}
    for p in batch:
        name = group_name(p)
        if name is not None and name in groups:
            members.setdefault(name, []).append(p)
    failed: dict[str, str] = {}
    for name, ps in members.items():
        min_count, bound = groups[name]
        placed = sum(1 for p in ps if by_key[p.key].node is not None)
        if placed + bound >= min_count:
            continue
        misses = [by_key[p.key] for p in ps if by_key[p.key].node is None]
        first = misses[0] if misses else None
        detail = f"; {first.pod} found no node: {first.message}" if first is not None else ""
        why = (f"pod group {name} (gang, minCount {min_count}) was not placed: only {placed + bound} of its "
               f"pods found a node{detail}")
        for p in ps:
            failed[p.key] = why
    return failed


class SimulatorCore:
    """A Framework for one profile of a KubeSchedulerConfiguration, over a forkable ClusterSnapshot.

    ``config`` is what :func:`load_config` takes (None: the default profile); ``profile`` picks a
    profile by scheduler name (default: the first). ``seed`` makes tie-breaking among equal top scores
    reproducible, as the CLI's ``--seed`` does. ``objects`` are the other cluster objects plugins read
    (Namespaces, PVCs, ...); they are not part of forks. Two of them that are one object to the API server
    (same API group, kind, namespace and name) are refused (ManifestValidationError naming both by position,
    ``objects[1]`` and ``objects[0]``), as a cluster file's are; ``cluster`` refuses nodes of one name and
    pods of one uid (SnapshotError).

    State kept outside the snapshot follows forks too: nominations made with :meth:`nominate` and the
    Reserve of pods placed by :meth:`schedule_pods` are undone (Unreserve is called) when the fork in
    which they happened is reverted.

    Not thread-safe: use one Simulator per thread. A call from a second thread while another is inside a call,
    or has a fork open (from :meth:`fork` to its revert or commit), raises SimulatorBusyError instead of
    corrupting the cluster; calls one after another from several threads are fine.

    ``reuse_failures``: in :meth:`schedule_pods`, a pod identical to one that just failed to fit (same
    spec, status, labels, annotations and owners; only name, uid and creation time differ), met while the
    snapshot and the nominations are unchanged since that failure, gets the same answer without running
    the cycle again: a failed cycle changes nothing, so running it again would decide the same. Pods
    that are nominated are always evaluated. Set it to False for plugins that read a pod's name or uid.
    With it, cycles among candidate nodes are also remembered across calls, under the snapshot's content
    token (see :meth:`_cycle_memo` and docs/autoscaler-simulation.md).
    """

    def __init__(self, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None,
                 registry: Registry | None = None, seed: int | None = None, *, profile: str | None = None,
                 cluster: ClusterSnapshot | None = None, objects: Iterable[KubeObject | Any] | Any = (),
                 reuse_failures: bool = True, kubernetes_version: str | None = None,
                 feature_gates: str | Mapping[str, Any] | None = None, strict: bool = False) -> None:
        #: objects given as manifests or client objects: unknown fields are errors (else warnings)
        self.strict = strict
        #: what building this simulator ignored or assumed (see scheduling_framework.warning_list)
        self.warnings = Warnings()
        # kubernetes_version / feature_gates: the release whose behaviour to follow (default newest)
        self.config = resolve_config(config, kubernetes_version=kubernetes_version, feature_gates=feature_gates)
        self.registry = registry if registry is not None else default_registry()
        rules = RequestRules.for_gates(self.config.feature_gates)
        # before ``cluster`` is touched: one of two would silently replace the other in the store
        objs = [coerce_object(o, strict=strict, warnings=self.warnings) for o in iter_objects(objects)]
        refuse_duplicates(objects=objs)
        self.cluster = cluster if cluster is not None else ClusterSnapshot(rules=rules)
        if self.cluster.rules != rules:
            self.cluster.rebuild_pod_infos(rules)
        self.objects = ObjectStore(objs)
        self.rng = random.Random(seed)
        self.framework: Framework = Framework.from_config(
            self.config, self.registry, profile_name=profile, snapshot=self.cluster.snapshot,
            objects=self.objects, nominator=Nominator(), rng=self.rng)
        self.algorithm = Algorithm(self.framework, self.rng, self.config.percentage_of_nodes_to_score)
        self._has_reserve = bool(self.framework.plugins_at("reserve"))
        self._reserve_names = [pl.name for pl in self.framework.plugins_at("reserve")]
        # Cycles may be remembered across calls (see _cycle_memo) when every plugin is in-tree: their state
        # outside the CycleState is the snapshot's and the objects'. Extenders are other processes.
        self._memo_ok = not self.framework.extenders and all(
            type(pl).__module__.startswith("plugins_intree.") for pl in self.framework.plugins.values())
        # Cycles among candidate nodes may also be remembered under the candidates' content alone (see
        # _cycle_memo) when the profile's PreFilter and Filter plugins are all known to read nothing else.
        self._pre_filter_names = frozenset(pl.name for pl in self.framework.plugins_at("preFilter"))
        self._filter_names = frozenset(pl.name for pl in self.framework.plugins_at("filter"))
        self._scope_ok = self._memo_ok and self._pre_filter_names <= _POD_ONLY_PRE_FILTER | _SKIP_STABLE_PRE_FILTER
        self._anti_affinity_matters = "InterPodAffinity" in self._pre_filter_names
        self._scoped_hits = 0  # answers found under the candidates' content (the equivalence tests read it)
        self.reuse_failures = reuse_failures
        self._pod_infos: dict[str, PodInfo] = {}
        self._batches: dict[tuple[int, ...], _Batch] = {}  # see schedule_pods
        self._last_batch: _Batch | None = None  # the one used last (see _prepared_batch)
        #: False: every query takes its plain path (the equivalence tests compare both)
        self._fast = True
        self._assumed: dict[str, tuple[Pod, str, Pod, PodInfo]] = {}
        self._dra_candidates: KeptPerPod[bool] = KeptPerPod(_ASSUMED_SIZE)  # see _dra_candidate
        # find_node_for_pod resumes where the previous search stopped (cluster-autoscaler's lastIndex).
        self._last_index = 0
        for ext in self.framework.extenders:
            ext.warnings = self.warnings  # extender failures skipped as kube-scheduler skips them
        self.warnings.extend(self.config.feature_gates.warnings())  # gates set without effect here
        # input governed by gates that are on but not reproduced here earns a warning (features.GOVERNED_INPUT)
        self._unreproduced = UnreproducedInput(self.config.feature_gates, lambda m: self.warnings.add(m))
        self._unreproduced.scan(self.cluster.nodes(), self.cluster.pods(),
                                (o for k in self.objects.kinds() for o in self.objects.list(k)))
        self._admission: Admission | None = None
        self._admitted: dict[str, tuple[Pod, Pod, str]] = {}
        # DRA: claims generated from templates get seeded suffixes; changes to objects (claim allocations,
        # generated claims, cloned ResourceSlices) are undone with the fork that made them.
        self.claim_rng = random.Random(seed)
        self._journal_paused = 0
        self.objects.journal = self._journal
        # Concurrent use is refused (see _claim): the thread that used the simulator last.
        self._owner: int | None = None
        self._claim_lock = threading.Lock()

    @classmethod
    def from_cluster(cls, cluster: Cluster, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None = None,
                     registry: Registry | None = None, seed: int | None = None, *,
                     profile: str | None = None, kubernetes_version: str | None = None,
                     feature_gates: str | Mapping[str, Any] | None = None) -> Self:
        """A Simulator over a loaded cluster (``load_cluster(path)``): its nodes, bound pods and objects.

        Pending pods are not added: pass ``cluster.pending_pods`` to :meth:`schedule_pods`. Pods that
        have finished (phase Succeeded or Failed) hold no resources and are skipped, as the CLI does.
        Pods bound to a node the cluster does not have are skipped too, with a warning in
        ``warnings`` (which starts with the cluster's own loading warnings); nodes their bound pods
        over-commit are named there too.
        """
        from scheduling_framework.ingest import gc_paused

        with gc_paused():  # a big cluster is millions of objects and no cycles
            return cls._from_cluster(cluster, config, registry, seed, profile, kubernetes_version, feature_gates)

    @classmethod
    def _from_cluster(cls, cluster: Cluster, config: KubeSchedulerConfiguration | Mapping[str, Any] | str | None,
                      registry: Registry | None, seed: int | None, profile: str | None,
                      kubernetes_version: str | None, feature_gates: str | Mapping[str, Any] | None) -> Self:
        from scheduling_framework.scheduler import WARN_ORPHANS

        names = {n.name for n in cluster.nodes}
        warnings = Warnings()
        warnings.extend(cluster.warnings)
        adm = Admission(cluster.objects, warnings)
        bound = []
        for p in cluster.bound_pods:
            if p.status.phase in ("Succeeded", "Failed"):
                continue
            if p.spec.node_name not in names:
                warnings.add_item(WARN_ORPHANS, f'{p.key} (node "{p.spec.node_name}")')
                continue
            p, refusal = adm.admit(p)
            if refusal:
                warnings.add_item(WARN_BOUND_REFUSED, refused_item(p, refusal))
            bound.append(p)
        config = resolve_config(config, kubernetes_version=kubernetes_version, feature_gates=feature_gates)
        rules = RequestRules.for_gates(config.feature_gates)
        sim = cls(config, registry, seed, profile=profile, cluster=ClusterSnapshot(cluster.nodes, bound, rules),
                  objects=cluster.objects)
        warnings.extend(sim.warnings)
        report_overcommitted(sim.cluster.node_infos(), warnings)
        sim.warnings = warnings
        for ext in sim.framework.extenders:
            ext.warnings = warnings
        sim._admission = adm
        return sim

    def admit(self, pod: Pod) -> tuple[Pod, str]:
        """Priority admission with the simulator's PriorityClasses (see scheduling_framework.ingest.admission):
        the admitted pod and "", or the pod and why the API server would refuse it."""
        self._unreproduced.saw_pod(pod)
        if pod.spec.priority is not None and not pod.spec.priority_class_name:
            return pod, ""
        # what-if loops pass the same pods again and again: give back the same admitted Pod object, so
        # that the PodInfo cache keeps working
        hit = self._admitted.get(pod.uid)
        if hit is not None and hit[0] is pod:
            return hit[1], hit[2]
        adm = self._admission
        if adm is None:
            adm = self._admission = Admission([o for k in ADMISSION_KINDS for o in self.objects.list(k)], self.warnings)
        admitted, refusal = adm.admit(pod)
        if len(self._admitted) >= _POD_INFO_CACHE_SIZE:
            self._admitted.clear()
        self._admitted[pod.uid] = (pod, admitted, refusal)
        return admitted, refusal

    # one thread at a time ------------------------------------------------------------------------
    # Every public method that reads or changes the cluster starts with ``if self._owner != _get_ident():
    # self._claim(name)``: a call from the thread that used the simulator last costs that comparison only.
    def _claim(self, what: str) -> None:
        """Make the calling thread the simulator's user, or raise SimulatorBusyError (nothing changed) when the
        previous user left a fork open (not yet reverted or committed) or is inside a call of this simulator (one
        of its frames is a guarded method's on this simulator, or is closing a fork of its cluster).

        The new user is written before the previous one's frames are looked at (under the GIL), and a thread's
        frame exists before its own check: a call the previous user starts meanwhile either shows in its frames
        or finds that it is no longer the user and comes here too (after this claim, which it then sees)."""
        me = _get_ident()
        with self._claim_lock:
            owner = self._owner
            self._owner = me
            if owner is None or owner == me:
                return
            forks = self.cluster._forks
            busy = f"has fork #{forks[0].id} open" if forks else self._busy_doing(owner)
            if busy:
                self._owner = owner
                raise SimulatorBusyError(_busy_message(what, busy, owner))

    def _busy_doing(self, thread: int) -> str:
        """What ``thread`` is doing with this simulator ("is inside Simulator.schedule_pods()"), or "" when
        none of its frames is a guarded method's on this simulator or closes a fork of its cluster."""
        frame = sys._current_frames().get(thread)
        while frame is not None:
            code = frame.f_code
            if code in _GUARDED_CODES and frame.f_locals.get("self") is self:
                return f"is inside Simulator.{code.co_name}()"
            if code in _FORK_CLOSING_CODES and frame.f_locals.get("self") is self.cluster:
                return "is closing a fork (reverting or committing it)"
            frame = frame.f_back
        return ""

    # the cluster -------------------------------------------------------------------------------
    def fork(self) -> Fork:
        """Open a nested transaction on the cluster (see :meth:`ClusterSnapshot.fork`). Until the outermost
        fork is reverted or committed, the Simulator belongs to this thread (calls from others raise
        SimulatorBusyError)."""
        if self._owner != _get_ident():
            self._claim("fork")
        return self.cluster.fork()

    def revert(self) -> None:
        if self._owner != _get_ident():
            self._claim("revert")
        self.cluster.revert()

    def commit(self) -> None:
        if self._owner != _get_ident():
            self._claim("commit")
        self.cluster.commit()

    def add_node(self, node: Node | Any, pods: Iterable[Pod | Any] | Any = ()) -> NodeInfo:
        if self._owner != _get_ident():
            self._claim("add_node")
        node = coerce_node(node, strict=self.strict, warnings=self.warnings)
        return self.cluster.add_node(node, [self._as_pod(p) for p in iter_objects(pods)])

    def add_node_from_template(self, template: Node, count: int = 1, name_prefix: str | None = None,
                               pods: Iterable[Pod] = (), *, daemon_sets: bool = False,
                               resource_slices: bool = True) -> list[str]:
        """Add ``count`` copies of a node template (see :meth:`ClusterSnapshot.add_node_from_template`).

        With ``daemon_sets=True``, each new node also gets the pods of the DaemonSets among the simulator's
        objects that would run on it (node selector, required node affinity and taints checked as the
        DaemonSet controller does, with its default tolerations), named ``<daemonset>-<node>`` and going
        through priority admission — as cluster-autoscaler adds DaemonSet pods to node-group templates.

        With ``resource_slices`` (the default), the template node's ResourceSlices (those whose
        ``spec.nodeName`` is the template's name) are copied to each new node, so DRA devices come with it.
        """
        if self._owner != _get_ident():
            self._claim("add_node_from_template")
        template = coerce_node(template, strict=self.strict, warnings=self.warnings)
        pods = [self._as_pod(p) for p in iter_objects(pods)]
        if not daemon_sets or count <= 0:
            names = self.cluster.add_node_from_template(template, count, name_prefix, pods)
            self._clone_slices(template, names, resource_slices)
            return names
        from scheduling_framework.ingest.workloads import daemonset_pods_for_node
        from scheduling_framework.simulation.templates import node_from_template, pod_for_node, template_node_names

        prefix = name_prefix if name_prefix is not None else f"template-{template.name}"
        pod_list = list(pods)
        daemon_sets_ = self.objects.list("DaemonSet")
        names = template_node_names(prefix, count, self.cluster)
        copies = []
        for name in names:
            node = node_from_template(template, name)
            ds_pods = [self.admit(p)[0] for p in daemonset_pods_for_node(daemon_sets_, node, self.warnings)]
            copies.append((node, [pod_for_node(p, name) for p in pod_list] + ds_pods))
        for _, node_pods in copies:
            for p in node_pods:
                if self.cluster.has_pod(p):
                    raise SnapshotError(f'pod {p.key} (uid {p.uid}) is already in the snapshot, on node '
                                        f'"{self.cluster.pod_node(p)}"')
        for node, node_pods in copies:
            self.cluster.add_node(node, node_pods)
        self._clone_slices(template, names, resource_slices)
        return names

    def _clone_slices(self, template: Node, names: Sequence[str], enabled: bool) -> None:
        """Copies of the template node's ResourceSlices for each new node: ``spec.nodeName`` and the pool
        name become the new node's, the slice name has the template node's name replaced by the new one
        (or the new node's name appended)."""
        if not enabled or not names or not self.objects.has_any(RESOURCE_SLICE):
            return  # (no slice at all: the scan below would find none of the template's)
        from scheduling_framework.api.resource import ResourceSlice

        own = [o for o in self.objects.list(RESOURCE_SLICE) if o.spec.get("nodeName") == template.name]
        for name in names:
            for o in own:
                new_name = o.name.replace(template.name, name) if template.name in o.name else f"{o.name}-{name}"
                clone = ResourceSlice.from_dict(o.raw, strict=None).with_node_name(new_name, name)
                self.objects.add(KubeObject.from_dict(clone.to_dict(), strict=None))

    def remove_node(self, node_name: str) -> list[Pod]:
        if self._owner != _get_ident():
            self._claim("remove_node")
        return self.cluster.remove_node(node_name)

    def add_pod(self, pod: Pod | Any, node_name: str | None = None) -> PodInfo:
        if self._owner != _get_ident():
            self._claim("add_pod")
        return self.cluster.add_pod(self._as_pod(pod), node_name)

    def _as_pod(self, pod: Pod | Any) -> Pod:
        """``pod`` itself, or the Pod of a manifest or client object (see ``api.coerce``)."""
        return pod if isinstance(pod, Pod) else coerce_pod(pod, strict=self.strict, warnings=self.warnings)

    def remove_pod(self, pod: Pod | str) -> Pod:
        if self._owner != _get_ident():
            self._claim("remove_pod")
        return self.cluster.remove_pod(pod)

    def nominate(self, pod: Pod | Any, node_name: str) -> None:
        """Record ``pod`` as nominated to ``node_name`` (as preemption does): Filter then accounts for it
        on that node for pods of lower or equal priority. An empty ``node_name`` clears the nomination."""
        if self._owner != _get_ident():
            self._claim("nominate")
        pod = self._as_pod(pod)
        nom = self.framework.nominator
        uid = pod.uid
        old_node = nom.nominated_node_of(uid)
        old = next((pi for pi in nom.nominated_pods_for_node(old_node) if pi.pod.uid == uid), None) \
            if old_node else None
        if node_name:
            nom.add_nominated_pod(PodInfo(pod, self.cluster.rules), node_name)
        else:
            nom.delete_nominated_pod_if_exists(pod)
        self.cluster.snapshot.generation += 1  # Filter results may change: cached failures are stale
        if self.cluster.depth:
            def undo() -> None:
                if old is not None:
                    nom.add_nominated_pod(old, old_node)
                else:
                    nom.delete_nominated_pod_if_exists(pod)

            self.cluster.on_revert(undo)

    # queries -----------------------------------------------------------------------------------
    def check_pod_on_node(self, pod: Pod | Any, node_name: str) -> Status | None:
        """Whether ``pod`` passes PreFilter and Filter on ``node_name``: None when it does, else the status.

        Pods nominated to the node with higher or equal priority are accounted for (the pod must fit with
        and without them, as upstream's Filter does). When a PreFilter plugin narrows the candidate nodes
        and leaves this node out, the status is upstream's for such nodes:
        UnschedulableAndUnresolvable "node(s) didn't satisfy plugin(s) [...]". A plugin failure gives an
        ERROR status. Raises SnapshotError when the node is not in the snapshot.
        """
        if self._owner != _get_ident():
            self._claim("check_pod_on_node")
        if type(pod) is not Pod:
            pod = self._as_pod(pod)
        return self._asked_with_claims(pod, lambda p: self._check_pod_on_node(p, node_name))

    def _check_pod_on_node(self, pod: Pod, node_name: str) -> Status | None:
        ni = self.cluster.get(node_name)
        fwk = self.framework
        state = CycleState()
        pre_res, st, with_nodes = fwk.run_pre_filter_plugins(state, pod, fwk.snapshot.list())
        if st is not None and st.code != Code.SUCCESS:
            return st
        if pre_res is not None and pre_res.node_names is not None and node_name not in pre_res.node_names:
            return absent_nodes_status(with_nodes)
        st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
        if st is None or st.code == Code.SUCCESS:
            return None
        return st

    def find_node_for_pod(self, pod: Pod | Any,
                          node_filter: Callable[[NodeInfo], bool] | None = None) -> str | None:
        """The first node, in snapshot order from where the previous search stopped, that passes PreFilter
        and Filter for ``pod`` (cluster-autoscaler's RunFiltersUntilPassingNode); None when none does.

        ``node_filter`` restricts the nodes tried. The next search starts after the node found. Raises
        CycleError when a plugin fails.
        """
        if self._owner != _get_ident():
            self._claim("find_node_for_pod")
        if type(pod) is not Pod:
            pod = self._as_pod(pod)
        return self._asked_with_claims(pod, lambda p: self._find_node_for_pod(p, node_filter))

    def _find_node_for_pod(self, pod: Pod, node_filter: Callable[[NodeInfo], bool] | None = None) -> str | None:
        fwk = self.framework
        nodes = fwk.snapshot.list()
        n = len(nodes)
        if n == 0:
            return None
        state = CycleState()
        pre_res, st, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
        if st is not None and st.code != Code.SUCCESS:
            if st.is_rejected():
                return None
            raise CycleError(st)
        allowed = pre_res.node_names if pre_res is not None else None
        run = fwk.run_filter_plugins_with_nominated_pods
        start = self._last_index % n
        for i in range(n):
            idx = (start + i) % n
            ni = nodes[idx]
            if allowed is not None and ni.name not in allowed:
                continue
            if node_filter is not None and not node_filter(ni):
                continue
            st = run(state, pod, ni)
            if st is None or st.code == Code.SUCCESS:
                self._last_index = (idx + 1) % n
                return ni.name
            if st.code == Code.ERROR:
                raise CycleError(st)
        return None

    def best_node_for_pod(self, pod: Pod | Any) -> Placement:
        """The node a full scheduling cycle (Filter, Score, host selection) picks, with the total scores;
        or, when no node fits, ``node`` None and upstream's FitError message. The snapshot is unchanged."""
        if self._owner != _get_ident():
            self._claim("best_node_for_pod")
        pod = self._as_pod(pod)
        return self._asked_with_claims(pod, self._best_node_for_pod)

    def _best_node_for_pod(self, pod: Pod) -> Placement:
        return self._cycle(CycleState(), self.admit(pod)[0], None)[0]

    def schedule_pods(self, pods: Iterable[Pod | Any] | Any,
                      nodes: Iterable[str] | None = None) -> ScheduleOutcome:
        """Schedule pending pods one after another in queue-sort order, each placement visible to the next.

        Each pod goes through PreEnqueue and a full scheduling cycle; a placed pod is added to the snapshot
        (``spec.nodeName`` set) and Reserve runs for it. There is one pass and no retry, no PostFilter
        (preemption), Permit or binding. Pods carrying ``status.nominatedNodeName`` are nominated there
        first, as the scheduling queue does. Run it inside a fork to be able to take it back.

        ``nodes`` limits the nodes a pod may land on (all nodes still count for PreFilter, so topology
        spread and inter-pod affinity see the whole cluster); cluster-autoscaler's estimator does this to
        ask "which pending pods would go to the new nodes?". With it, every candidate is filtered and
        the messages count candidates only ("0/2 nodes are available: ...").

        Pods go through priority admission first (:meth:`admit`). Pods kube-scheduler would never
        attempt get a Placement with ``skipped`` set, after the others: pods being deleted
        (``metadata.deletionTimestamp``) and pods the API server would refuse (their PriorityClass does
        not exist).

        Raises SnapshotError, before changing anything, when two pods share a uid or a namespace/name, a pod is
        already in the snapshot, or a candidate node does not exist.
        """
        if self._owner != _get_ident():
            self._claim("schedule_pods")
        if (type(pods) is list or type(pods) is tuple) and set(map(type, pods)) == _POD_TYPE:
            pods = tuple(pods)  # (Pods already: what _as_pod would give back, without a call per pod)
        else:
            pods = tuple(self._as_pod(p) for p in iter_objects(pods))
        if self.gang_scheduling and any(is_member(p, self._v2) for p in pods):
            return self._schedule_gangs(pods, nodes)
        return self._schedule_batch(pods, nodes)

    @property
    def gang_scheduling(self) -> bool:
        """Whether the profile runs GangScheduling with the GenericWorkload gate on (gangs placed whole)."""
        return GANG_SCHEDULING in self.framework.plugins and self.config.feature_gates.enabled("GenericWorkload")

    @property
    def _v2(self) -> bool:
        return uses_pod_group_api(self.config.feature_gates.release)

    def _schedule_gangs(self, pods: tuple[Pod, ...], nodes: Iterable[str] | None) -> ScheduleOutcome:
        """:meth:`schedule_pods` with gangs (GangScheduling): all of a gang's pods are placed, or none.

        The batch runs inside a fork; when a gang ends with fewer than ``minCount`` of its pods placed (bound
        members of the cluster count), the fork is reverted, that gang's pods are taken out with the reason,
        and the rest runs again, until every gang left is whole. The reference Scheduler reaches the same
        end through Permit (members wait for the quorum, then the gang's timeout rejects them)."""
        out: list[Placement] = []
        remaining = list(pods)
        fast = self._fast
        self._fast = False  # GangScheduling's state lives outside the snapshot: no remembered cycles
        try:
            while True:
                groups = self._feed_pod_groups(remaining)
                fork = self.fork()
                try:
                    outcome = self._schedule_batch(tuple(remaining), nodes)
                except BaseException:
                    fork.revert()
                    raise
                failed = _failed_gangs(outcome, remaining, groups)
                if not failed:
                    fork.commit()
                    return ScheduleOutcome(outcome.results + tuple(out))
                fork.revert()
                for r in outcome.results:
                    why = failed.get(r.pod)
                    if why is not None:
                        out.append(r if r.node is None else Placement(r.pod, None, why, status=Status(
                            Code.UNSCHEDULABLE, why, plugin=GANG_SCHEDULING)))
                remaining = [p for p in remaining if p.key not in failed]
        finally:
            self._fast = fast

    def _feed_pod_groups(self, batch: Sequence[Pod]) -> dict[str, tuple[int, int]]:
        """A fresh pod-group state for GangScheduling: the cluster's bound gang members and ``batch``.
        Returns group name -> (minCount, bound members) for the batch's gang groups."""
        manager = PodGroupManager()
        self.framework.pod_groups = manager
        bound: dict[str, int] = {}
        for ni in self.cluster.snapshot.list():
            for pi in ni.pods:
                if is_member(pi.pod, self._v2):
                    manager.add_pod(pi.pod)
                    name = group_name(pi.pod)
                    assert name is not None
                    bound[name] = bound.get(name, 0) + 1
        groups: dict[str, tuple[int, int]] = {}
        for p in batch:
            if not is_member(p, self._v2):
                continue
            manager.add_pod(p)
            name = group_name(p)
            assert name is not None
            policy = lookup_policy(p, self.objects, self._v2)[0]
            if policy is not None and policy.is_gang:
                groups[name] = (policy.min_count, bound.get(name, 0))
        return groups

    def _schedule_batch(self, pods: tuple[Pod, ...], nodes: Iterable[str] | None) -> ScheduleOutcome:
        cluster = self.cluster

        def known_pods() -> list[Pod]:
            # what handle.list_pods() sees: the cluster's pods and the batch's pods not placed yet
            placed = [pi.pod for ni in cluster.snapshot.list() for pi in ni.pods]
            return placed + [p for p in pods if not cluster.has_pod(p)]

        self.framework.pod_lister = known_pods
        # Fast path: what-if loops pass the same pods call after call, and everything decided about them
        # before the first cycle (admission, queue order, which pods are equivalent) depends on the pod
        # objects only, so it is worked out once per list of pods. Pinned by
        # tests/test_perf_equivalence.py::test_schedule_pods_fast_path_equals_plain_path.
        prep = self._prepared_batch(pods) if self._fast else None
        if prep is not None:
            return self._schedule_prepared(prep, nodes)
        # Plain path.
        batch = []
        skipped: list[Placement] = []
        for p in pods:
            p, refusal = self.admit(p)
            if refusal:
                self.warnings.add_item(WARN_REFUSED, refused_item(p, refusal))
                skipped.append(Placement(p.key, None, refusal, skipped=True))
            elif p.is_terminating:
                skipped.append(Placement(p.key, None, "pod is being deleted (metadata.deletionTimestamp is set): "
                                                      "the scheduler skips it", skipped=True))
            else:
                batch.append(p)
        seen: set[str] = set()
        keys: set[str] = set()
        for p in batch:
            if p.uid in seen:
                raise SnapshotError(f"pod {p.key} (uid {p.uid}) appears twice in the pods to schedule")
            if p.key in keys:  # two uids, one namespace/name: the API server would answer AlreadyExists
                raise SnapshotError(f"pod {p.key} appears twice in the pods to schedule (uid {p.uid} and another)")
            keys.add(p.key)
            if self.cluster.has_pod(p):
                raise SnapshotError(f'pod {p.key} (uid {p.uid}) is already in the snapshot, on node '
                                    f'"{self.cluster.pod_node(p)}"')
            seen.add(p.uid)
        candidates = self._candidates(nodes)
        ordered = self.sort_pods(batch)
        for p in ordered:
            if p.status.nominated_node_name:
                self.nominate(p, p.status.nominated_node_name)
        snapshot = self.cluster.snapshot
        nominator = self.framework.nominator
        results: list[Placement] = []
        # Pods that failed to fit since the snapshot last changed, with their answers.
        failed: list[tuple[Pod, Placement]] = []
        generation = snapshot.generation
        for p in ordered:
            if snapshot.generation != generation:
                failed.clear()
                generation = snapshot.generation
            reusable = self.reuse_failures and not nominator.nominated_node_of(p.uid)
            if reusable:
                hit = next((r for rep, r in failed if _equivalent(rep, p)), None)
                if hit is not None:
                    results.append(self._replay_failure(p, hit, candidates))
                    continue
            r = self._schedule_one(p, candidates)
            if reusable and r.node is None and r.diagnosis is not None:
                failed.append((p, r))
            results.append(r)
        return ScheduleOutcome(tuple(results + skipped))

    def _batch_serves(self, prep: _Batch, pods: tuple[Pod, ...]) -> bool:
        """Whether ``prep`` was made for these very pod objects, under the current admission and reuse setting."""
        return (len(prep.pods) == len(pods) and prep.admission is self._admission
                and prep.reuse == self.reuse_failures and all(map(operator.is_, prep.pods, pods)))

    def _prepared_batch(self, pods: tuple[Pod, ...]) -> _Batch | None:
        """The :class:`_Batch` for these pod objects (the one made before, when the same objects come again),
        or None when the batch has a pod twice, by uid or by namespace/name (the plain path then raises, naming the
        first bad pod)."""
        prep = self._last_batch  # (the usual case: the same pods as the previous call)
        if prep is not None and self._batch_serves(prep, pods):
            return prep
        ids = tuple(map(id, pods))
        prep = self._batches.get(ids)
        if prep is not None and self._batch_serves(prep, pods):
            self._last_batch = prep
            return prep
        batch: list[Pod] = []
        refused: list[tuple[Pod, str]] = []
        skipped: list[Placement] = []
        for p in pods:
            p, refusal = self.admit(p)
            if refusal:
                refused.append((p, refusal))
                skipped.append(Placement(p.key, None, refusal, skipped=True))
            elif p.is_terminating:
                skipped.append(Placement(p.key, None, "pod is being deleted (metadata.deletionTimestamp is set): "
                                                      "the scheduler skips it", skipped=True))
            else:
                batch.append(p)
        uids = [p.uid for p in batch]
        if len(set(uids)) != len(uids) or len({p.key for p in batch}) != len(batch):
            return None
        ordered = self.sort_pods(batch)
        # Equivalence classes (see _equivalent), numbered in queue order.
        reps: list[Pod] = []
        classes: list[int] = []
        for p in ordered:
            k = next((i for i, rep in enumerate(reps) if _equivalent(rep, p)), -1)
            if k < 0:
                k = len(reps)
                reps.append(p)
            classes.append(k)
        prep = _Batch(pods, self._admission, self.reuse_failures, batch, frozenset(uids), refused, skipped,
                      ordered, classes)
        if len(self._batches) >= _BATCHES:
            self._batches.clear()
        # (the ids stay those of these pods while the batch holds them)
        self._batches[ids] = prep
        self._last_batch = prep
        return prep

    def _candidates(self, nodes: Iterable[str] | None) -> list[str] | None:
        if nodes is None:
            return None
        candidates = list(dict.fromkeys(nodes))
        for name in candidates:
            if name not in self.cluster:
                raise SnapshotError(f'candidate node "{name}" is not in the snapshot')
        return candidates

    def _schedule_prepared(self, prep: _Batch, nodes: Iterable[str] | None) -> ScheduleOutcome:
        """``schedule_pods`` for a prepared batch: the plain path's steps, in the same order, with the work
        that depends on the pods only taken from ``prep``."""
        for p, refusal in prep.refused:
            self.warnings.add_item(WARN_REFUSED, refused_item(p, refusal))
        cluster = self.cluster
        if cluster.has_any_pod(prep.uids):
            for p in prep.batch:
                if cluster.has_pod(p):
                    raise SnapshotError(f'pod {p.key} (uid {p.uid}) is already in the snapshot, on node '
                                        f'"{cluster.pod_node(p)}"')
        candidates = self._candidates(nodes)
        for p in prep.nominated:
            self.nominate(p, p.status.nominated_node_name)
        snapshot = cluster.snapshot
        nominator = self.framework.nominator
        results: list[Placement] = []
        # Failed answers by equivalence class, since the snapshot last changed (the plain path's list of
        # failures holds at most one pod per class: a pod equivalent to a listed one is replayed, not added).
        failed: dict[int, Placement] = {}
        generation = snapshot.generation
        reuse = prep.reuse
        # Cycles among candidate nodes are remembered across calls under the snapshot's content token (see
        # _cycle_memo): only for in-tree plugins without extenders, with no nominations.
        # Nominations are only taken away from here on (a placed pod's own): with none now, none later.
        nominations = bool(len(nominator))
        memo = candidates is not None and reuse and self._memo_ok and not nominations
        cand_key = tuple(candidates) if candidates is not None else ()
        scoped = memo and self._scope_ok
        objects = self.objects
        ordered, classes, n = prep.ordered, prep.classes, len(prep.ordered)
        i = 0
        while i < n:
            p, k = ordered[i], classes[i]
            if snapshot.generation != generation:
                failed.clear()
                generation = snapshot.generation
            reusable = reuse and not (nominations and nominator.nominated_node_of(p.uid))
            if reusable:
                hit = failed.get(k)
                if hit is not None:
                    if memo:
                        # Every pod up to the end of this run of the class replays the same answer: a replay
                        # changes nothing, and without nominations every pod is reusable. Their Placements
                        # are kept with the answer (see _Batch.replay_run). Pinned by
                        # tests/test_perf_equivalence.py::test_whatif_loop_fast_path_equals_plain_path.
                        end = prep.run_end[i]
                        results.extend(prep.replay_run(i, end, hit))
                        i = end
                        continue
                    results.append(self._replay_failure(p, hit, candidates))
                    i += 1
                    continue
            if memo and candidates is not None and prep.memoizable[k]:
                r = self._cycle_memo(prep, i, p, k, (cluster.content, k, cand_key, objects.generation), candidates,
                                     scoped)
            else:
                r = self._schedule_one(p, candidates)
            if reusable and r.node is None and r.diagnosis is not None:
                failed[k] = r
            results.append(r)
            i += 1
        return ScheduleOutcome(tuple(results + prep.skipped))

    def _cycle_memo(self, prep: _Batch, i: int, pod: Pod, k: int, key: tuple[Any, ...],
                    candidates: list[str], scoped: bool = False) -> Placement:
        """``_schedule_one`` for a pod among candidate nodes, remembered in ``prep`` under ``key``: the
        snapshot's content token, the pod's equivalence class, the candidates and the objects' generation.

        A cycle decides from the snapshot's content, the objects, the nominations (none here), the pod's
        content (equivalent pods give the same answer, as ``reuse_failures`` has it) and, when it scores,
        random tie-breaking. So a failed cycle, or a successful one with a single feasible node (no scoring,
        no random draw), decides the same under the same key: its answer is replayed, and a placement still
        goes through ``_place`` (snapshot change and Reserve, with a copy of what Reserve reads from the
        cycle's CycleState, see _reserve_state).
        Pinned by tests/test_perf_equivalence.py::test_whatif_loop_fast_path_equals_plain_path.

        ``scoped`` (the profile's PreFilter plugins are all in-tree ones whose PreFilter reads the pod and the
        objects only, or skips for reasons the pod and the objects decide): the answer is also remembered under
        the candidates' content tokens instead of the whole snapshot's, when the cycle proved it read nothing
        else: every PreFilter plugin that did not skip reads the pod only, every Filter plugin that ran reads
        the node only, and no pod in the cluster has required anti-affinity (InterPodAffinity then skips for a
        pod without terms of its own). A what-if loop that changes nodes other than the candidates before
        each question (the cold estimator loop) then still gets the remembered answer. Pinned by
        tests/test_perf_equivalence.py::test_candidate_scoped_memo_equals_plain.
        """
        hit = prep.memo.get(key)
        scoped_key: tuple[Any, ...] | None = None
        if hit is None and scoped and self._no_required_anti_affinity():
            scoped_key = (_SCOPED, self.cluster.node_content(candidates), *key[1:])
            hit = prep.memo.get(scoped_key)
            self._scoped_hits += hit is not None
        if hit is not None:
            host, answer, kept = hit
            if host is None or kept is None:
                return prep.replayed(i, pod, answer)
            return self._place(self._reserve_state_of(kept), pod, host, prep.replayed(i, pod, answer))
        fwk = self.framework
        st = fwk.run_pre_enqueue_plugins(pod)
        if st is not None and not st.is_success():
            return Placement(pod.key, None, st.message(), st)
        state = CycleState()
        placement, host = self._cycle(state, pod, candidates)
        if len(prep.memo) >= _MEMO_SIZE:
            prep.memo.clear()
        if host is None:
            if placement.diagnosis is not None:
                # The same answer as this class's previous failure (the usual case when a what-if loop
                # changed something else): give back that object, whose replays for the other pods of the
                # class are kept (see _Batch.replayed). Pinned by tests/test_perf_equivalence.py::
                # test_same_answer_tells_every_diagnosis_field_apart and test_whatif_loop_fast_path_equals_plain_path.
                prev = prep.last_failure.get(k)
                if prev is not None and prev.pod == placement.pod and _same_answer(prev, placement):
                    placement = prev
                prep.last_failure[k] = placement
                entry: tuple[str | None, Placement, tuple[Any, ...] | None] = (None, placement, None)
                prep.memo[key] = entry
                if scoped_key is not None and self._read_only_candidates(state):
                    prep.memo[scoped_key] = entry
            return placement
        if not placement.total_scores:
            entry = (host, placement, self._reserve_state(state))
            prep.memo[key] = entry
            if scoped_key is not None and self._read_only_candidates(state):
                prep.memo[scoped_key] = entry
        return self._place(state, pod, host, placement)

    def _no_required_anti_affinity(self) -> bool:
        """Whether no pod in the cluster has required anti-affinity terms (always, without InterPodAffinity)."""
        return not (self._anti_affinity_matters and self.cluster.snapshot.have_pods_with_required_anti_affinity_list())

    def _read_only_candidates(self, state: CycleState) -> bool:
        """Whether the cycle that left ``state`` read, besides the pod and the objects, only the candidate nodes:
        each PreFilter plugin that did not skip reads the pod only, each Filter plugin that was not skipped
        reads the node only. (PreFilter plugins that skip here skip for reasons the pod and the objects decide,
        see _SKIP_STABLE_PRE_FILTER; InterPodAffinity's also needs no pod with required anti-affinity, checked
        by the caller.)"""
        skip = state.skip_filter_plugins
        return (self._pre_filter_names - skip <= _POD_ONLY_PRE_FILTER
                and self._filter_names - skip <= _NODE_LOCAL_FILTER)

    def _replay_failure(self, pod: Pod, failure: Placement, candidates: list[str] | None) -> Placement:
        """The answer of an equivalent pod's failed cycle, with the cycle's one side effect: the
        round-robin start of the next cycle advances by the number of nodes the cycle evaluated."""
        d = failure.diagnosis
        if candidates is None and d is not None and not d.pre_filter_msg:
            n = self.cluster.snapshot.num_nodes()
            if n:
                self.algorithm.next_start_node_index = (self.algorithm.next_start_node_index
                                                        + len(d.node_to_status)) % n
        return Placement(pod.key, None, failure.message, failure.status, failure.total_scores, failure.diagnosis)

    def sort_pods(self, pods: Sequence[Pod]) -> list[Pod]:
        """Pods in the profile's queue-sort order (PrioritySort: priority, then the order given)."""
        less = self.framework.queue_sort_less
        infos = [QueuedPodInfo(self._pod_info(self.admit(p)[0]), 0.0) for p in pods]

        def cmp(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
            if less(a, b):
                return -1
            if less(b, a):
                return 1
            return 0

        return [q.pod for q in sorted(infos, key=functools.cmp_to_key(cmp))]

    def drain_node(self, node_name: str, commit: bool = False) -> DrainResult:
        """Where would the pods of ``node_name`` go if it were removed?

        In a fork: remove the node, then schedule its pods (all but DaemonSet and mirror pods, which a
        drain leaves alone) with :meth:`schedule_pods` on the remaining nodes. The fork is reverted,
        unless ``commit`` is true and every pod found a node: then the removal and the new placements
        are kept.
        """
        if self._owner != _get_ident():
            self._claim("drain_node")
        ni = self.cluster.get(node_name)
        movable: list[Pod] = []
        not_moved: list[str] = []
        for pi in ni.pods:
            p = pi.pod
            if _stays_on_drain(p):
                not_moved.append(p.key)
            else:
                movable.append(p)
        f = self.fork()
        try:
            self.cluster.remove_node(node_name)
            for p in movable:
                # an evicted pod no longer holds its claims (a claim nobody holds is deallocated); the claim
                # made for its extended resources goes with it
                ext = extended_claim_name(p, self.objects.pod_status)
                if ext is not None:
                    self.objects.remove(RESOURCE_CLAIM, p.namespace, ext)
                    self.objects.set_pod_status(p.uid, "extendedResourceClaimStatus", None)
                if has_resource_claims(p):
                    for c in release_pod_claims(p, self.objects.list(RESOURCE_CLAIM, p.namespace)):
                        self.objects.add(c)
            pending = [p.with_node_name("") for p in movable]
            outcome = self.schedule_pods([p.with_nominated_node_name("") if p.status.nominated_node_name else p
                                          for p in pending])
        except BaseException:
            f.revert()
            raise
        if commit and outcome.all_scheduled:
            f.commit()
        else:
            f.revert()
        return DrainResult(node_name, outcome, tuple(not_moved))

    # one pod -----------------------------------------------------------------------------------
    def _pod_info(self, pod: Pod) -> PodInfo:
        """The PodInfo of a pending pod, kept while the same Pod object comes back (what-if loops pass
        the same pending pods again and again; pods are immutable, so the derived data stays valid)."""
        cache = self._pod_infos
        pi = cache.get(pod.uid)
        if pi is None or pi.pod is not pod:
            if len(cache) >= _POD_INFO_CACHE_SIZE:
                cache.clear()
            pi = cache[pod.uid] = PodInfo(pod, self.cluster.rules)
        return pi

    # objects follow forks ---------------------------------------------------------------------------
    def _journal(self, undo: Callable[[], None]) -> None:
        if self.cluster.depth and not self._journal_paused:
            self.cluster.on_revert(undo)

    def _unjournaled(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` (an Unreserve replayed by a revert) without recording its object changes: the revert
        restores the objects itself."""
        self._journal_paused += 1
        try:
            fn()
        finally:
            self._journal_paused -= 1

    def pod_claims(self, pod: Pod | str) -> list[dict[str, Any]]:
        """The pod's ResourceClaims and the devices allocated to them (the CLI's per-pod ``claims``).

        ``pod`` is a Pod or a ``namespace/name`` key of a pod in the snapshot; a pod placed by
        :meth:`schedule_pods` is found with the claims generated for it from templates."""
        if self._owner != _get_ident():
            self._claim("pod_claims")
        p = self._placed_pod(pod)
        if p is None:
            return []
        return claim_summaries(p, self.objects.get, extended_claim_name(p, self.objects.pod_status))

    def _placed_pod(self, pod: Pod | str) -> Pod | None:
        key = pod if isinstance(pod, str) else pod.key
        for q in self.cluster.pods():
            if q.key == key:
                return q
        return pod if isinstance(pod, Pod) else None

    def _asked_with_claims(self, pod: Pod, ask: Callable[[Pod], _T]) -> _T:
        """``ask(pod)``, for the queries that leave the cluster as it was: a pod whose claims come from templates
        is asked with the claims the resourceclaim controller would make, which exist only for the question
        (made inside a fork, reverted after)."""
        if not needs_generated_claims(pod):
            return ask(pod)
        with self.fork():
            return ask(self._generate_claims(pod))

    def _generate_claims(self, pod: Pod) -> Pod:
        """What the resourceclaim controller does before the scheduler sees the pod: claims from templates."""
        pod, claims = generate_claims(pod, self.objects.get, self.claim_rng)
        for c in claims:
            self.objects.add(c)
        return pod

    def _schedule_one(self, pod: Pod, candidates: list[str] | None) -> Placement:
        fwk = self.framework
        if has_resource_claims(pod):
            pod = self._generate_claims(pod)
        st = fwk.run_pre_enqueue_plugins(pod)
        if st is not None and not st.is_success():
            return Placement(pod.key, None, st.message(), st)
        state = CycleState()
        placement, host = self._cycle(state, pod, candidates)
        if host is None:
            return placement
        return self._place(state, pod, host, placement)

    def _place(self, state: CycleState, pod: Pod, host: str, placement: Placement) -> Placement:
        """Add the pod a cycle placed on ``host`` to the snapshot and run Reserve (undone on revert);
        a Reserve rejection takes it back out and becomes the answer."""
        fwk = self.framework
        assumed, info = self._assumed_pod(pod, host)
        self.cluster.add_pod(assumed, info=info)
        if self._has_reserve:
            st = fwk.run_reserve_plugins_reserve(state, assumed, host)
            if st is not None and not st.is_success():
                fwk.run_reserve_plugins_unreserve(state, assumed, host)
                self.cluster.remove_pod(assumed)
                msg = f"0/1 nodes are available: 1 {st.message()}." if st.is_rejected() else st.message()
                return Placement(pod.key, None, msg, st)
            self.cluster.on_revert(functools.partial(
                self._unjournaled, functools.partial(fwk.run_reserve_plugins_unreserve, state, assumed, host)))
            dra = fwk.plugins.get("DynamicResources")
            if dra is not None and (has_resource_claims(assumed) or self._dra_candidate(assumed)):
                # The claim's reservation for the pod is what makes a shared claim usable by the next pod;
                # DynamicResources records it at PreBind, which a what-if placement otherwise skips.
                st = dra.pre_bind(state, assumed, host)
                if st is not None and not st.is_success():
                    self._unjournaled(functools.partial(fwk.run_reserve_plugins_unreserve, state, assumed, host))
                    self.cluster.remove_pod(assumed)
                    return Placement(pod.key, None, st.message(), st)
        if fwk.nominator.nominated_node_of(pod.uid):
            self.nominate(pod, "")
        return placement

    def _dra_candidate(self, pod: Pod) -> bool:
        """``requests_dra_candidate(pod)``, kept per Pod object on the fast path (placed pods come back as the same
        objects, see _assumed_pod)."""
        if not self._fast:
            return requests_dra_candidate(pod)
        return self._dra_candidates.get(pod, requests_dra_candidate)

    def _reserve_state(self, state: CycleState) -> tuple[Any, ...]:
        """A copy of what Reserve and Unreserve read from a cycle's state, to remember with the cycle: the
        in-tree Reserve plugins (VolumeBinding, DynamicResources) read the data they wrote under their own
        name, and nothing else (the rest, per-domain counts and such, can be big). Kept as (key, value) pairs,
        not a CycleState: a what-if loop asking new questions keeps thousands of them, every container one more
        object for the garbage collector to walk (see _reserve_state_of). Flat: key, value, key, value, ..."""
        kept: list[Any] = []
        for name in self._reserve_names:
            if name in state:
                value = state.read(name)
                clone = getattr(value, "clone", None)
                kept += (name, clone() if callable(clone) else value)
        return tuple(kept)

    @staticmethod
    def _reserve_state_of(kept: tuple[Any, ...]) -> CycleState:
        """A CycleState holding copies of what ``_reserve_state`` kept (what ``CycleState.clone()`` of a state
        holding just that gives)."""
        state = CycleState()
        for i in range(0, len(kept), 2):
            value = kept[i + 1]
            clone = getattr(value, "clone", None)
            state.write(kept[i], clone() if callable(clone) else value)
        return state

    def _assumed_pod(self, pod: Pod, host: str) -> tuple[Pod, PodInfo | None]:
        """The pod as placed on ``host`` (nodeName set, nomination cleared), and its PodInfo. The ones made
        last time for the same Pod object and host are the same (pods are immutable, PodInfos derived from
        them): giving them back saves the work and lets the snapshot's content token recognise the change
        (see ClusterSnapshot.content). Pinned by tests/test_perf_equivalence.py::
        test_whatif_loop_fast_path_equals_plain_path."""
        if self._fast:
            hit = self._assumed.get(pod.uid)
            if hit is not None and hit[0] is pod and hit[1] == host:
                return hit[2], hit[3]
        assumed = pod.with_node_name(host)
        if assumed.status.nominated_node_name:
            assumed = assumed.with_nominated_node_name("")
        if not self._fast:
            return assumed, None
        if len(self._assumed) >= _ASSUMED_SIZE:
            self._assumed.clear()
        info = PodInfo(assumed, self.cluster.rules)
        self._assumed[pod.uid] = (pod, host, assumed, info)
        return assumed, info

    def _cycle(self, state: CycleState, pod: Pod, candidates: list[str] | None) -> tuple[Placement, str | None]:
        try:
            if candidates is None:
                result = self.algorithm.schedule_pod(state, pod)
                host = result.suggested_host
                scores = {s.name: s.total_score for s in result.scores}
            else:
                host, scores = self._schedule_among(state, pod, candidates)
        except FitError as fe:
            return Placement(pod.key, None, fe.message(), None, {}, fe.diagnosis), None
        except CycleError as ce:
            return Placement(pod.key, None, ce.status.message(), ce.status), None
        return Placement(pod.key, host, "", None, scores), host

    def _schedule_among(self, state: CycleState, pod: Pod, candidates: list[str]) -> tuple[str, dict[str, int]]:
        """A scheduling cycle whose Filter and Score only consider ``candidates``."""
        fwk = self.framework
        if not candidates:
            raise CycleError(Status(Code.ERROR, "no nodes available to schedule pods"))
        snapshot = fwk.snapshot
        diagnosis = Diagnosis()
        pre_res, st, with_nodes = fwk.run_pre_filter_plugins(state, pod, snapshot.list())
        diagnosis.unschedulable_plugins.update(with_nodes)
        if st is not None and st.code != Code.SUCCESS:
            if not st.is_rejected():
                raise CycleError(st)
            diagnosis.absent_nodes_status = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            raise FitError(pod, len(candidates), diagnosis)
        m = snapshot.node_info_map
        nodes = [m[n] for n in candidates]
        if pre_res is not None and pre_res.node_names is not None:
            allowed = pre_res.node_names
            nodes = [ni for ni in nodes if ni.name in allowed]
            diagnosis.pre_filter_allowed = allowed
            diagnosis.absent_nodes_status = absent_nodes_status(diagnosis.unschedulable_plugins)
        run = fwk.run_filter_plugins_with_nominated_pods
        feasible: list[NodeInfo] = []
        nominated = pod.status.nominated_node_name
        if nominated and any(ni.name == nominated for ni in nodes):
            st = run(state, pod, m[nominated])
            if st is None or st.code == Code.SUCCESS:
                feasible.append(m[nominated])
            elif st.code == Code.ERROR:
                raise CycleError(st)
        if not feasible:
            for ni in nodes:
                st = run(state, pod, ni)
                if st is None or st.code == Code.SUCCESS:
                    feasible.append(ni)
                elif st.code == Code.ERROR:
                    raise CycleError(st)
                else:
                    diagnosis.node_to_status[ni.name] = st
                    diagnosis.add_plugin_status(st)
        if not feasible:
            raise FitError(pod, len(candidates), diagnosis)
        if len(feasible) == 1:
            return feasible[0].name, {}
        scores = self.algorithm.prioritize_nodes(state, pod, feasible)
        return self.algorithm.select_host(scores), {s.name: s.total_score for s in scores}


#: The methods that check the calling thread first (a frame of one, on a simulator, is a call in progress on
#: it: see Simulator._claim), and ClusterSnapshot's own fork closing (a ``with sim.fork():`` block ending).
_GUARDED_CODES: set[types.CodeType] = set()


def guard_methods(cls: type) -> None:
    """Note the methods of ``cls`` that check the calling thread first (see _GUARDED_CODES): a subclass adding
    such methods calls this once defined."""
    _GUARDED_CODES.update(f.__code__ for f in vars(cls).values()
                          if isinstance(f, types.FunctionType) and "_claim" in f.__code__.co_names)


guard_methods(SimulatorCore)
_FORK_CLOSING_CODES = frozenset((ClusterSnapshot._revert.__code__, ClusterSnapshot._commit.__code__))


class _Batch:
    """What ``schedule_pods`` works out from its pods alone, kept for the next call with the same pod objects:
    admission, the pods skipped, queue order and equivalence classes (depending on the pods, on priority
    admission and on the framework's queue sort, none of which a cycle changes)."""

    __slots__ = ("pods", "admission", "reuse", "batch", "uids", "refused", "skipped", "ordered", "classes",
                 "nominated", "memoizable", "memo", "keys", "replays", "last_failure", "run_end", "runs")

    def __init__(self, pods: tuple[Pod, ...], admission: Admission | None, reuse: bool, batch: list[Pod],
                 uids: frozenset[str], refused: list[tuple[Pod, str]], skipped: list[Placement], ordered: list[Pod],
                 classes: list[int]) -> None:
        self.pods = pods
        self.admission = admission
        self.reuse = reuse
        self.batch = batch
        self.uids = uids
        self.refused = refused
        self.skipped = skipped
        self.ordered = ordered
        self.classes = classes
        self.nominated = [p for p in ordered if p.status.nominated_node_name]
        reps: dict[int, Pod] = {}
        for p, k in zip(ordered, classes, strict=True):
            reps.setdefault(k, p)
        #: per class: whether its cycles may be remembered (no PVCs nor ResourceClaims: their Reserve keeps
        #: books outside the snapshot and the objects)
        self.memoizable = [_memoizable(reps[k]) for k in range(len(reps))]
        self.memo: dict[tuple[Any, ...], tuple[str | None, Placement, tuple[Any, ...] | None]] = {}
        self.keys = [p.key for p in ordered]
        self.last_failure: dict[int, Placement] = {}
        # run_end[i]: where the run of pods of class classes[i] that starts at i ends (queue order)
        self.run_end = [0] * len(ordered)
        end = len(ordered)
        for i in range(len(ordered) - 1, -1, -1):
            if i + 1 < len(ordered) and classes[i + 1] != classes[i]:
                end = i + 1
            self.run_end[i] = end
        self.runs: list[tuple[Placement, tuple[Placement, ...]] | None] = [None] * len(ordered)
        # per pod in queue order: (a remembered answer, the same answer for this pod)
        self.replays: list[tuple[Placement, Placement] | None] = [None] * len(ordered)

    def replay_run(self, i: int, end: int, answer: Placement) -> tuple[Placement, ...]:
        """``answer`` for the pods i..end-1 in queue order (see replayed), kept for the next time."""
        kept = self.runs[i]
        if kept is not None and kept[0] is answer:
            return kept[1]
        run = tuple(self.replayed(j, self.ordered[j], answer) for j in range(i, end))
        self.runs[i] = (answer, run)
        return run

    def replayed(self, i: int, pod: Pod, answer: Placement) -> Placement:
        """``answer`` (a remembered cycle's Placement) for the i-th pod in queue order: the same object when
        it was the pod's own, else a Placement with the pod's key, kept for the next time."""
        hit = self.replays[i]
        if hit is not None and hit[0] is answer:
            return hit[1]
        key = self.keys[i]
        r = answer if answer.pod == key else Placement(key, answer.node, answer.message, answer.status,
                                                        answer.total_scores, answer.diagnosis)
        self.replays[i] = (answer, r)
        return r


def _same_answer(a: Placement, b: Placement) -> bool:
    """Whether two Placements of the same pod say the same in every field (statuses and diagnoses compared
    field by field; an error object only equals itself)."""
    return (a.node == b.node and a.message == b.message and a.skipped == b.skipped
            and _same(a.total_scores, b.total_scores) and _same(a.status, b.status)
            and _same(a.diagnosis, b.diagnosis))


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, Status):
        return a.code == b.code and a.reasons == b.reasons and a.plugin == b.plugin and a.error is b.error
    if isinstance(a, Diagnosis):
        return all(_same(getattr(a, field), getattr(b, field)) for field in Diagnosis.FIELDS)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, (str, int, set, frozenset)):
        return bool(a == b)
    return False


def _memoizable(pod: Pod) -> bool:
    """Pods whose cycles may be remembered: no ResourceClaims, and volumes none of the volume plugins reads
    (claims, CSI and cloud disks bring in bindings and attach limits kept by Reserve or in other objects)."""
    return (not pod.spec.resource_claims and all(v.source_kind in _PLAIN_VOLUMES for v in pod.spec.volumes)
            and not requests_dra_candidate(pod))


_PLAIN_VOLUMES = frozenset({"configMap", "secret", "emptyDir", "downwardAPI", "projected", "hostPath"})

# For answers remembered under the candidates' content (see Simulator._cycle_memo), of the in-tree plugins:
#: PreFilter reads the pod (and the plugin's own arguments) only
_POD_ONLY_PRE_FILTER = frozenset({"NodeAffinity", "NodePorts", "NodeResourcesFit", "NodeDeclaredFeatures"})
#: PreFilter SKIPs for a memoizable pod (no claims, plain volumes only) for reasons the pod and the objects decide
#: (InterPodAffinity: a pod without required terms, when no pod in the cluster has required anti-affinity)
_SKIP_STABLE_PRE_FILTER = frozenset({"PodTopologySpread", "InterPodAffinity", "VolumeRestrictions", "NodeVolumeLimits",
                                     "VolumeBinding", "VolumeZone", "DynamicResources"})
#: Filter reads the node's NodeInfo, the pod, the plugin's PreFilter state and the objects only
_NODE_LOCAL_FILTER = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                "NodeResourcesFit", "NodeDeclaredFeatures"})
_SCOPED: Any = object()  # first item of memo keys made of the candidates' content tokens
_POD_TYPE = {Pod}  # schedule_pods: a list of Pods (nothing to convert)


def _equivalent(a: Pod, b: Pod) -> bool:
    """Same pod for every plugin's purpose: everything but name, uid and creation time is equal."""
    if a.spec != b.spec or a.status != b.status:
        return False
    ma, mb = a.metadata, b.metadata
    for name in _COMPARED_META_FIELDS:
        if getattr(ma, name) != getattr(mb, name):
            return False
    return True


# Metadata that may differ between otherwise identical pods (replicas of one controller).
_IDENTITY_FIELDS = frozenset({"name", "uid", "creation_timestamp"})
_COMPARED_META_FIELDS = tuple(f.name for f in attrs.fields(ObjectMeta) if f.name not in _IDENTITY_FIELDS)


def _stays_on_drain(pod: Pod) -> bool:
    """DaemonSet pods and mirror (static) pods are not evicted by a drain."""
    if MIRROR_POD_ANNOTATION in pod.metadata.annotations:
        return True
    ref = pod.metadata.controller_ref()
    return ref is not None and ref.kind == "DaemonSet"
