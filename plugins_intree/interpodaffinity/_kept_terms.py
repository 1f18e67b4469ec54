"""Existing pods' own terms over a node list, kept from one cycle to the next and found by label.

PreScore adds the weights of the existing pods' terms that the incoming pod matches, and PreFilter counts the
existing pods' required anti-affinity terms that it matches. Both are sums, per topology pair (key, value) of
the nodes the pods run on, over the terms that match. A :class:`KeptTerms` keeps, per canonical term key, those
sums (and on how many nodes each pair occurs) for a whole node list, following the list with
:class:`~scheduling_framework.state.node_info.ChangedNodes` (re-reading only the nodes that changed), and lists each
term under one label its selector requires, so that a pod is matched only against the terms it can match.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from plugins_intree.interpodaffinity._terms import term_id
from scheduling_framework.api.pod import Pod
from scheduling_framework.state.node_info import AffinityTerm, ChangedNodes, NodeInfo

#: One grouped term of a node: (canonical term key, a term of that key, topology key, topology value, amount).
NodeTerm = tuple[str, AffinityTerm, str, str, int]
#: topology pair -> sum of the amounts
PairSums = dict[tuple[str, str], int]


def group_terms(terms: Iterable[tuple[AffinityTerm, int]], node_labels: Mapping[str, str]) -> tuple[NodeTerm, ...]:
    """One node's (term, amount) pairs grouped by (canonical term key, topology key, topology value), amounts
    summed, in first-seen order; a term whose topology key the node lacks adds nothing."""
    grouped: dict[tuple[str, str, str], list[Any]] = {}  # -> [a term of the group, the amounts' sum]
    for term, amount in terms:
        topology_key = term.topology_key
        value = node_labels.get(topology_key)
        if value is None:
            continue
        group = (term_id(term), topology_key, value)
        entry = grouped.get(group)
        if entry is None:
            grouped[group] = [term, amount]
        else:
            entry[1] += amount
    return tuple([(tid, e[0], topology_key, value, e[1]) for (tid, topology_key, value), e in grouped.items()])


class KeptTerms:
    """Per canonical term key, the amounts the existing terms add per topology pair over a node list."""

    __slots__ = ("_anchors", "_changes", "_contrib", "_inputs", "_lock", "_occurrences", "_pairs", "_terms",
                 "_unanchored", "contribution", "inputs")

    def __init__(self, contribution: Callable[[NodeInfo], tuple[NodeTerm, ...]],
                 inputs: Callable[[NodeInfo], tuple[object, ...]]) -> None:
        #: a node's grouped terms (one entry per (term key, topology pair) the node adds to)
        self.contribution = contribution
        #: what a node's contribution is a function of (equal inputs, equal contribution): a changed node whose
        #: inputs are equal to the last ones (a pod without terms added, the usual change) is not read again
        self.inputs = inputs
        self._lock = threading.Lock()
        self._changes = ChangedNodes()
        self._contrib: list[tuple[NodeTerm, ...]] = []
        self._inputs: list[tuple[object, ...]] = []
        # term key -> the amounts per topology pair, and on how many nodes each pair occurs (a pair goes when
        # none is left); the amounts are a dict of their own so that a caller can copy them in one step
        self._pairs: dict[str, PairSums] = {}
        self._occurrences: dict[str, dict[tuple[str, str], int]] = {}
        self._terms: dict[str, AffinityTerm] = {}
        # The terms a pod can match only when it has one of the labels (key, value) they are listed under (one
        # equality or In requirement of their selector); the others are tried on every pod. Terms with a nil
        # selector match nothing and are in neither.
        self._anchors: dict[tuple[str, str], set[str]] = {}
        self._unanchored: set[str] = set()

    def matching(self, nodes: list[NodeInfo], pod: Pod, ns_labels: Mapping[str, str],
                 memo: dict[str, bool] | None = None) -> Iterator[PairSums]:
        """The pair sums of every term key whose terms ``pod`` matches (namespace labels ``ns_labels``), over
        ``nodes``. ``memo`` keeps term-key verdicts for the pod across calls. Read the sums, never change them,
        and before the next call."""
        with self._lock:
            self._sync(nodes)
            terms = self._terms
            pairs_of = self._pairs
            anchors = self._anchors
            candidates = set(self._unanchored)
            for label in pod.metadata.labels.items():
                listed = anchors.get(label)
                if listed:
                    candidates.update(listed)
            found: list[PairSums] = []
            for tid in candidates:
                matched = None if memo is None else memo.get(tid)
                if matched is None:
                    matched = terms[tid].matches(pod, ns_labels)
                    if memo is not None:
                        memo[tid] = matched
                if matched:
                    found.append(pairs_of[tid])
        return iter(found)

    @staticmethod
    def _anchor_labels(term: AffinityTerm) -> list[tuple[str, str]] | None:
        """The labels one of which a pod needs to match ``term`` ([] when it matches nothing), None when no
        requirement says."""
        sel = term.selector
        if sel is None:
            return []
        if sel.match_labels:
            key = min(sel.match_labels)
            return [(key, sel.match_labels[key])]
        for r in sel.match_expressions:
            if r.operator == "In":
                return [(r.key, v) for v in r.values]
        return None

    def _listed(self, tid: str, term: AffinityTerm, add: bool) -> None:
        labels = self._anchor_labels(term)
        if labels is None:
            if add:
                self._unanchored.add(tid)
            else:
                self._unanchored.discard(tid)
            return
        for label in labels:
            if add:
                self._anchors.setdefault(label, set()).add(tid)
            else:
                listed = self._anchors.get(label)
                if listed is not None:
                    listed.discard(tid)
                    if not listed:
                        del self._anchors[label]

    def _sync(self, nodes: list[NodeInfo]) -> None:
        changed = self._changes.changed(nodes)
        if changed is None:
            self._pairs = {}
            self._occurrences = {}
            self._terms = {}
            self._anchors = {}
            self._unanchored = set()
            contribution = self.contribution
            self._contrib = [contribution(ni) for ni in nodes]
            inputs = self.inputs
            self._inputs = [inputs(ni) for ni in nodes]
            for c in self._contrib:
                self._apply(c, 1)
            return
        inputs = self.inputs
        for i in changed:
            now = inputs(nodes[i])
            if now == self._inputs[i]:  # (elements compared by identity first)
                continue
            self._inputs[i] = now
            old = self._contrib[i]
            new = self._contrib[i] = self.contribution(nodes[i])
            if old != new:
                self._apply(old, -1)
                self._apply(new, 1)

    def _apply(self, contribution: tuple[NodeTerm, ...], sign: int) -> None:
        pairs_of = self._pairs
        occurrences_of = self._occurrences
        for tid, term, topology_key, value, amount in contribution:
            pairs = pairs_of.get(tid)
            if pairs is None:
                pairs = pairs_of[tid] = {}
                occurrences_of[tid] = {}
                self._terms[tid] = term
                self._listed(tid, term, True)
            occurrences = occurrences_of[tid]
            pair = (topology_key, value)
            n = occurrences.get(pair)
            if n is None:
                pairs[pair] = amount
                occurrences[pair] = 1
                continue
            n += sign
            if n:
                occurrences[pair] = n
                pairs[pair] += sign * amount
                continue
            del pairs[pair]
            del occurrences[pair]
            if not pairs:
                del pairs_of[tid]
                del occurrences_of[tid]
                self._listed(tid, self._terms.pop(tid), False)
