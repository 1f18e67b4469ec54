"""Pods by label, over a node list, kept from one cycle to the next: who a selector can match, without a full pass.

PodTopologySpread and InterPodAffinity count, per topology domain, the pods of the whole cluster that a
label selector matches. In a real cluster nearly every Deployment brings a selector of its own, so counts
kept per selector rarely help: each new selector would visit every pod again. A :class:`PodIndex` lists,
per label key it was asked about, namespace and value, the positions of the node list holding pods with
that label and those pods. A selector with an equality, ``In`` or ``Exists`` requirement is then answered
from the pods that carry the label it requires (typically a Deployment's replicas), and the other pods are
never looked at.

The index follows one node list (the snapshot's): each query first brings it up to date with
:class:`~scheduling_framework.state.node_info.ChangedNodes` (the NodeInfo change journal), re-indexing only the
positions whose NodeInfo changed; another length or order starts afresh. A key is indexed the first time a
query needs it. The answers equal a pass over every pod of the list; pinned by
tests/test_perf_equivalence.py::test_pod_index_counts_equal_a_full_pass.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Collection, Mapping, Sequence

from scheduling_framework.api.selectors import LabelSelector
from scheduling_framework.state.node_info import ChangedNodes, NodeInfo, PodInfo

#: namespace -> label value -> position in the node list -> the pods there with that label value: the one PodInfo
#: itself, or a list of two or more (most positions hold one replica of a Deployment: no list is made for it)
_Postings = dict[str, dict[str, dict[int, "PodInfo | list[PodInfo]"]]]

#: Candidate positions beyond which the plugins count a selector their kept way instead (a selector that many
#: pods carry, as in a workload of thousands of replicas, is met again and again: counts kept across cycles,
#: which follow the few nodes that change, cost less than visiting its pods every cycle).
KEPT_BEYOND = 64

#: Label keys a PodIndex indexes at most (each costs a pass over every pod when first asked for, and one
#: entry per labelled pod); a selector on another key is answered with None (count the plain way).
MAX_KEYS = 16


#: what a pod's labels are asked: does the selector match them
_Matches = Callable[[Mapping[str, str]], bool]


def _every_label_set(labels: object) -> bool:
    """What a selector whose one requirement chose the listed pods answers for each of them."""
    return True


class PodIndex:
    """Per label key, namespace and value: which positions of a node list hold matching pods, and which pods."""

    __slots__ = ("_by_name", "_changes", "_indexed", "_keys", "_lock", "_nodes")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes = ChangedNodes()
        self._nodes: list[NodeInfo] = []
        self._by_name: dict[str, int] = {}
        self._keys: dict[str, _Postings] = {}
        # per position, the pods the postings of every indexed key hold there (kept while any key is indexed:
        # a position that changes otherwise than by pods appended leaves the postings these pods are in)
        self._indexed: list[list[PodInfo]] = []

    # -- keeping up with the node list --------------------------------------------------------------
    def _sync(self, nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
        lst = nodes if type(nodes) is list else list(nodes)
        changed = self._changes.changed(lst)
        if changed is None:
            self._nodes = list(lst)
            self._by_name = {ni.name: i for i, ni in enumerate(lst)}
            self._keys = {}
            self._indexed = []
            return lst
        if not changed:
            return lst
        nodes_before = self._nodes
        by_name = self._by_name
        for i in changed:  # names leave first: positions may swap NodeInfos
            if by_name.get(nodes_before[i].name) == i:
                del by_name[nodes_before[i].name]
        keys = self._keys
        indexed = self._indexed
        for i in changed:
            ni = lst[i]
            nodes_before[i] = ni
            by_name[ni.name] = i
            if not keys:
                continue
            before, now = indexed[i], ni.pods
            if len(now) > len(before) and all(map(operator.is_, before, now)):
                # pods only appended (a clone that received a pod, the usual change): index those alone
                added = now[len(before):]
                for key, postings in keys.items():
                    self._add_pods(key, postings, i, added)
                before.extend(added)
                continue
            for key, postings in keys.items():
                self._remove_pods(key, postings, i, before)
                self._add_pods(key, postings, i, now)
            indexed[i] = list(now)
        return lst

    @staticmethod
    def _add_pods(key: str, postings: _Postings, i: int, pods: list[PodInfo]) -> None:
        for pi in pods:
            value = pi.labels.get(key)
            if value is None:
                continue
            ns = pi.namespace
            per_value = postings.get(ns)
            if per_value is None:
                per_value = postings[ns] = {}
            per_pos = per_value.get(value)
            if per_pos is None:
                per_value[value] = {i: pi}
                continue
            listed = per_pos.get(i)
            if listed is None:
                per_pos[i] = pi
            elif isinstance(listed, list):
                listed.append(pi)
            else:
                per_pos[i] = [listed, pi]

    @staticmethod
    def _remove_pods(key: str, postings: _Postings, i: int, pods: list[PodInfo]) -> None:
        """Take position ``i`` out of the postings ``pods`` (all the pods indexed there) are in."""
        for pi in pods:
            value = pi.labels.get(key)
            if value is None:
                continue
            per_value = postings[pi.namespace]
            per_pos = per_value.get(value)
            if per_pos is not None and per_pos.pop(i, None) is not None and not per_pos:
                del per_value[value]

    def _postings(self, key: str) -> _Postings | None:
        postings = self._keys.get(key)
        if postings is None:
            if len(self._keys) >= MAX_KEYS:
                return None
            if not self._keys:
                self._indexed = [list(ni.pods) for ni in self._nodes]
            postings = self._keys[key] = {}
            add = self._add_pods
            for i, pods in enumerate(self._indexed):
                if pods:
                    add(key, postings, i, pods)
        return postings

    # -- queries -----------------------------------------------------------------------------------
    def position(self, ni: NodeInfo) -> int | None:
        """The position of ``ni`` in the node list of the last query, None when that list does not hold it."""
        i = self._by_name.get(ni.name)
        if i is None or i >= len(self._nodes) or self._nodes[i] is not ni:
            return None
        return i

    def positions(self, nodes: Sequence[NodeInfo]) -> list[int | None]:
        """:meth:`position` of each of ``nodes``, in one pass."""
        get = self._by_name.get
        listed = self._nodes
        n = len(listed)
        return [i if (i := get(ni.name)) is not None and i < n and listed[i] is ni else None for ni in nodes]

    def match_counts(self, nodes: Sequence[NodeInfo], selector: LabelSelector | None,
                     namespaces: Collection[str] | None, skip_terminating: bool,
                     limit: int | None = None) -> dict[int, int] | None:
        """Per position of ``nodes`` holding any, how many of its pods ``selector`` matches among those in
        ``namespaces`` (None: every namespace), leaving out pods with a deletionTimestamp when
        ``skip_terminating``. Positions without a match are absent. None when the selector has no
        requirement the index can answer from (only ``NotIn`` / ``DoesNotExist``, or empty), or when more than
        ``limit`` positions hold pods that can match: count the plain (or kept) way then. A nil selector
        matches nothing: {}."""
        with self._lock:
            found = self._look_up(nodes, selector, namespaces, limit)
            if found is None:
                return None
            candidates, matches = found
            if matches is _every_label_set:
                # every listed pod carries the selector's one requirement: only terminating pods are left out
                # (a position may come in several lists: one per value or namespace)
                out: dict[int, int] = {}
                for pos, pods in candidates:
                    n = len(pods)
                    if skip_terminating:
                        for pi in pods:
                            if pi.pod.metadata.deletion_timestamp is not None:
                                n -= 1
                    if n:
                        out[pos] = out.get(pos, 0) + n
                return out
            lists = self._matching(candidates, matches, skip_terminating)
        return {pos: len(pods) for pos, pods in lists.items()}

    def match_lists(self, nodes: Sequence[NodeInfo], selector: LabelSelector | None,
                    namespaces: Collection[str] | None, skip_terminating: bool,
                    limit: int | None = None) -> dict[int, list[PodInfo]] | None:
        """:meth:`match_counts` with the matching pods themselves (in no particular order) instead of their
        number."""
        with self._lock:
            found = self._look_up(nodes, selector, namespaces, limit)
            if found is None:
                return None
            candidates, matches = found
            return self._matching(candidates, matches, skip_terminating)

    def _look_up(self, nodes: Sequence[NodeInfo], selector: LabelSelector | None,
                 namespaces: Collection[str] | None,
                 limit: int | None) -> tuple[list[tuple[int, list[PodInfo]]], _Matches] | None:
        """The queries' common part, under the lock: follow ``nodes``, then :meth:`_candidates` and what each
        candidate's labels are to match (``_every_label_set`` when the requirement that chose them is the
        selector's only one; a nil selector matches nothing: no candidates). None: not answered here."""
        self._sync(nodes)
        if selector is None:
            return [], _every_label_set
        found = self._candidates(selector, namespaces, limit)
        if found is None:
            return None
        candidates, exact = found
        return candidates, _every_label_set if exact else selector.matches

    @staticmethod
    def _matching(candidates: list[tuple[int, list[PodInfo]]], matches: _Matches,
                  skip_terminating: bool) -> dict[int, list[PodInfo]]:
        out: dict[int, list[PodInfo]] = {}
        for pos, pods in candidates:
            for pi in pods:
                if skip_terminating and pi.pod.metadata.deletion_timestamp is not None:
                    continue
                if matches(pi.labels):
                    found = out.get(pos)
                    if found is None:
                        out[pos] = [pi]
                    else:
                        found.append(pi)
        return out

    def _candidates(self, selector: LabelSelector, namespaces: Collection[str] | None,
                    limit: int | None = None) -> tuple[list[tuple[int, list[PodInfo]]], bool] | None:
        """The (position, pods) lists holding every pod that can match: those carrying the label of the
        cheapest indexable requirement (each pod once), and whether that requirement is the selector's only one
        (then every listed pod matches); None when no requirement is indexable or when they are on more than
        ``limit`` positions."""
        # (key, values or None for Exists)
        options: list[tuple[str, tuple[str, ...] | None]] = [(k, (v,)) for k, v in selector.match_labels.items()]
        for r in selector.match_expressions:
            if r.operator == "In":
                options.append((r.key, tuple(dict.fromkeys(r.values))))
            elif r.operator == "Exists":
                options.append((r.key, None))
        if not options:
            return None
        # prefer keys already indexed; among them the requirement with the fewest candidate positions
        indexed = [o for o in options if o[0] in self._keys]
        if not indexed:
            postings = self._postings(options[0][0])
            if postings is None:
                return None
            indexed = [options[0]]
        best: list[dict[int, PodInfo | list[PodInfo]]] | None = None
        best_size = -1
        for key, values in indexed:
            postings = self._keys[key]
            per_ns = postings.values() if namespaces is None else [
                postings[ns] for ns in set(namespaces) if ns in postings]
            lists: list[dict[int, PodInfo | list[PodInfo]]] = []
            for per_value in per_ns:
                if values is None:
                    lists.extend(per_value.values())
                else:
                    for v in values:
                        per_pos = per_value.get(v)
                        if per_pos is not None:
                            lists.append(per_pos)
            size = sum(map(len, lists))
            if best is None or size < best_size:
                best, best_size = lists, size
                if not size:
                    break
        if best is None or (limit is not None and best_size > limit):
            return None  # (the size is known before any list is built: refusing costs nothing per pod)
        # distinct namespaces and distinct values hold distinct pods: no pod is listed twice
        exact = len(options) == 1 and len(selector.match_labels) + len(selector.match_expressions) == 1
        return [(pos, pods if isinstance(pods, list) else [pods]) for per_pos in best
                for pos, pods in per_pos.items()], exact
