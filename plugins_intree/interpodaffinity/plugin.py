"""InterPodAffinity: required pod (anti-)affinity as a filter, preferred terms as a score.

Extension points: PreFilter (with AddPod/RemovePod extensions), Filter, PreScore, Score and
NormalizeScore, as upstream's ``interpodaffinity`` plugin. Namespace selectors of the incoming pod's
terms are resolved against the Namespace objects in ``handle.objects``; the labels of the incoming pod's
own namespace are matched against existing pods' namespace selectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plugins_intree.interpodaffinity._terms as _terms
from plugins_intree.interpodaffinity._kept_terms import KeptTerms
from plugins_intree.interpodaffinity._sums import KeptSumsCache
from plugins_intree.interpodaffinity._terms import NO_LABELS
from plugins_intree.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    anti_affinity_inputs,
    anti_affinity_terms_of,
    existing_anti_affinity_counts,
    filter_fast,
    filter_many,
    incoming_affinity_anti_affinity_counts,
    incoming_counts_from_index,
    satisfy_existing_pods_anti_affinity,
    satisfy_pod_affinity,
    satisfy_pod_anti_affinity,
)
from plugins_intree.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY,
    ExistingTermSums,
    PreScoreState,
    TermSums,
    node_score,
    node_scores,
    normalize,
    normalize_values,
    topology_scores,
)
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import InterPodAffinityArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import NodeScore, PreFilterResult
from scheduling_framework.state.node_info import (
    AffinityTerm,
    NodeInfo,
    PodInfo,
    WeightedAffinityTerm,
    new_affinity_term,
    node_labels,
)
from scheduling_framework.status import Code, Status

NAME = "InterPodAffinity"


def _args_of(args: Any) -> InterPodAffinityArgs:
    if args is None:
        return InterPodAffinityArgs()
    if isinstance(args, InterPodAffinityArgs):
        return args
    if isinstance(args, Mapping):
        return InterPodAffinityArgs.from_dict(args)
    raise TypeError(f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}")


def _required_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    aff = pod.spec.affinity
    if aff is None:
        return (), ()
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    affinity = () if pa is None else tuple(
        new_affinity_term(pod, t) for t in pa.required_during_scheduling_ignored_during_execution)
    anti = () if paa is None else tuple(
        new_affinity_term(pod, t) for t in paa.required_during_scheduling_ignored_during_execution)
    return affinity, anti


def _preferred_terms(pod: Pod) -> tuple[tuple[WeightedAffinityTerm, ...], tuple[WeightedAffinityTerm, ...]]:
    aff = pod.spec.affinity
    if aff is None:
        return (), ()
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    affinity = () if pa is None else tuple(
        WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
        for w in pa.preferred_during_scheduling_ignored_during_execution)
    anti = () if paa is None else tuple(
        WeightedAffinityTerm(new_affinity_term(pod, w.pod_affinity_term), w.weight)
        for w in paa.preferred_during_scheduling_ignored_during_execution)
    return affinity, anti


class InterPodAffinity:
    """Checks and scores inter-pod affinity and anti-affinity (upstream plugin ``InterPodAffinity``)."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = _args_of(args)
        problems = self.args.validate()
        if problems:
            raise ValueError("; ".join(problems))
        self._handle = handle
        # PreFilter's existing anti-affinity and incoming-term counts and PreScore's topology scores of earlier
        # cycles, per incoming-pod signature, added again only where nodes changed
        self._kept_existing = KeptSumsCache()
        self._kept_incoming = KeptSumsCache(limit=16)  # (a map per side)
        self._kept_scores = KeptSumsCache()
        self._term_sums = TermSums()
        self._existing_sums = ExistingTermSums()
        # the existing pods' required anti-affinity terms of the snapshot, kept across cycles by term
        self._kept_anti_terms = KeptTerms(anti_affinity_terms_of, anti_affinity_inputs)

    # --- cluster lookups ------------------------------------------------------------------------
    def _objects(self) -> Any:
        return getattr(self._handle, "objects", None)

    def _namespaces(self) -> list[Any]:
        objects = self._objects()
        return [] if objects is None else list(objects.list("Namespace"))

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The labels of ``namespace``; none when the Namespace object is not known."""
        objects = self._objects()
        if objects is None:
            return NO_LABELS
        labels = objects.namespace_labels(namespace)
        return NO_LABELS if labels is None else dict(labels)

    # --- PreFilter -------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        snapshot = self._handle.snapshot
        with_anti = snapshot.have_pods_with_required_anti_affinity_list()

        err = _terms.pod_parse_error(pod)
        if err is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {err}")

        affinity, anti = _required_terms(pod)
        if not with_anti and not affinity and not anti:
            # No terms of its own and no existing pod with required anti-affinity: the counts below would all
            # be empty and the plugin would skip; skip without building them. Pinned by
            # tests/test_perf_equivalence.py::test_interpodaffinity_prefilter_skip_equals_plain_path.
            return None, Status(Code.SKIP)
        if _terms.needs_namespaces(affinity) or _terms.needs_namespaces(anti):
            namespaces = self._namespaces()
            affinity = _terms.merge_all(affinity, namespaces)
            anti = _terms.merge_all(anti, namespaces)
        ns_labels = self._namespace_labels(pod.metadata.namespace)

        all_nodes = snapshot.list()
        existing = existing_anti_affinity_counts(pod, ns_labels, with_anti, self._kept_existing,
                                                 self._kept_anti_terms, all_nodes)
        if not existing and not affinity and not anti:
            return None, Status(Code.SKIP)
        found = None
        if (affinity or anti) and hasattr(snapshot, "pod_index"):
            # the snapshot's pods by label: only the pods carrying the terms' labels are looked at; equal to the
            # passes below, pinned by tests/test_perf_equivalence.py::test_interpodaffinity_index_prefilter_equals_plain
            found = incoming_counts_from_index(affinity, anti, all_nodes, snapshot.pod_index())
        if found is None:
            found = incoming_affinity_anti_affinity_counts(affinity, anti, nodes, self._kept_incoming)
        affinity_counts, anti_counts = found
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod, affinity, anti, ns_labels, existing,
                                                         affinity_counts, anti_counts))
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        return self._update(state, pod_info_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._update(state, pod_info_to_remove, node_info, -1)

    @staticmethod
    def _update(state: CycleState, pod_info: PodInfo, node_info: NodeInfo, multiplier: int) -> Status | None:
        s = _read_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        s.update_with_pod(pod_info, node.metadata.labels, multiplier)
        return None

    # --- Filter ----------------------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Status | None] | None:
        """``[filter(state, pod, ni) for ni in nodes]`` for the usual case (the state PreFilter wrote, every node
        present); None otherwise (the framework then calls ``filter``). Pinned by
        tests/test_perf_equivalence.py::test_batch_filters_equal_plain."""
        fs = state.get(PRE_FILTER_STATE_KEY)
        label_sets = node_labels(nodes) if type(fs) is PreFilterState else None
        if label_sets is None:
            return None
        return filter_many(fs, label_sets)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Fast path (the state PreFilter wrote, a node): filter_fast, equal to the plain checks below; pinned by
        # tests/test_perf_equivalence.py::test_interpodaffinity_filter_fast_equals_plain.
        fs = state.get(PRE_FILTER_STATE_KEY)
        node = node_info.node
        if type(fs) is PreFilterState and node is not None:
            return filter_fast(fs, node.metadata.labels)
        s = _read_pre_filter_state(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        labels = node.metadata.labels
        # (each check passes trivially without terms / counts: skip the call then)
        if s.affinity_terms and not satisfy_pod_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if s.anti_affinity_counts and not satisfy_pod_anti_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if s.existing_anti_affinity_counts and not satisfy_existing_pods_anti_affinity(s, labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    # --- PreScore / Score ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred_affinity, preferred_anti = _preferred_terms(pod)
        has_constraints = bool(preferred_affinity) or bool(preferred_anti)
        # Optionally skip the existing pods' preferences when the incoming pod has none of its own.
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)

        snapshot = self._handle.snapshot
        # Without preferred terms of its own only pods with (anti-)affinity can contribute.
        all_nodes = snapshot.list() if has_constraints else snapshot.have_pods_with_affinity_list()

        err = _terms.pod_parse_error(pod)
        if err is not None:
            return Status(Code.ERROR, f"failed to parse pod: {err}")
        if not has_constraints and not all_nodes:
            # no preferred term of its own and no node with a pod having (anti-)affinity: no term applies anywhere
            # (the pass below would find an empty map and skip). Pinned by
            # tests/test_perf_equivalence.py::test_interpodaffinity_prescore_skip_without_terms_equals_plain.
            return Status(Code.SKIP)
        if _terms.needs_namespaces(w.term for w in preferred_affinity) or _terms.needs_namespaces(
                w.term for w in preferred_anti):
            namespaces = self._namespaces()
            preferred_affinity = _terms.merge_all_weighted(preferred_affinity, namespaces)
            preferred_anti = _terms.merge_all_weighted(preferred_anti, namespaces)
        ns_labels = self._namespace_labels(pod.metadata.namespace)

        index = snapshot.pod_index() if hasattr(snapshot, "pod_index") else None
        scores = topology_scores(pod, preferred_affinity, preferred_anti, ns_labels, all_nodes, has_constraints,
                                 self.args.hard_pod_affinity_weight, self._kept_scores, self._term_sums,
                                 snapshot.list(), index, self._existing_sums)
        if scores is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = _read_pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        node = node_info.node
        if node is None:
            return 0, Status(Code.ERROR, "node not found")
        return node_score(s, node.metadata.labels), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        label_sets = node_labels(nodes)
        return None if label_sets is None else node_scores(s, label_sets)

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s = _read_pre_score_state(state)
        if isinstance(s, Status):
            return s
        normalize(s, scores)
        return None

    def normalize_values(self, state: CycleState, pod: Pod, node_names: list[str],
                         scores: list[int]) -> list[int] | None:
        """``normalize_score`` on plain scores, for the framework (None: use normalize_score)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        return normalize_values(s, scores)


def _read_pre_filter_state(state: CycleState) -> PreFilterState | Status:
    try:
        s = state.read(PRE_FILTER_STATE_KEY)
    except KeyError:
        return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreFilterState):
        return Status(Code.ERROR, f"{s!r}  convert to interpodaffinity.state error")
    return s


def _read_pre_score_state(state: CycleState) -> PreScoreState | Status:
    try:
        s = state.read(PRE_SCORE_STATE_KEY)
    except KeyError:
        return Status(Code.ERROR, f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not isinstance(s, PreScoreState):
        return Status(Code.ERROR, f"{s!r}  convert to interpodaffinity.preScoreState error")
    return s
