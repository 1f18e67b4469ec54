"""NodeAffinity: a node must satisfy the pod's nodeSelector, its required node affinity and the
scheduler-enforced ``addedAffinity``; nodes matching preferred terms score the sum of their weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugins_intree.nodeaffinity.matching import (
    NODE_NAME_FIELD,
    CompiledNodeSelector,
    CompiledPreferredTerms,
    RequiredNodeAffinity,
    compile_preferred,
)
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import NodeAffinity as NodeAffinitySpec
from scheduling_framework.api.pod import Pod
from scheduling_framework.config.args import NodeAffinityArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, PluginError, ValidationError
from scheduling_framework.interfaces import MAX_NODE_SCORE, NodeScore, PreFilterResult
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def _pod_node_affinity(pod: Pod) -> NodeAffinitySpec | None:
    aff = pod.spec.affinity
    return None if aff is None else aff.node_affinity


def required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    na = _pod_node_affinity(pod)
    req = None if na is None else na.required_during_scheduling_ignored_during_execution
    return RequiredNodeAffinity(pod.spec.node_selector, req)


def pod_preferred_terms(pod: Pod) -> tuple[CompiledPreferredTerms | None, str | None]:
    """The pod's preferred terms compiled, or None when it has none; or the parse error."""
    na = _pod_node_affinity(pod)
    if na is None or not na.preferred_during_scheduling_ignored_during_execution:
        return None, None
    return compile_preferred(na.preferred_during_scheduling_ignored_during_execution)


def _normalize(scores: list[NodeScore]) -> None:
    # upstream helper.DefaultNormalizeScore(MaxNodeScore, reverse=false)
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        return
    for s in scores:
        s.score = MAX_NODE_SCORE * s.score // max_count


def _added_affinity(args: Any) -> Mapping[str, Any] | None:
    if args is None:
        return None
    if isinstance(args, NodeAffinityArgs):
        return args.added_affinity
    if isinstance(args, Mapping):
        try:
            return NodeAffinityArgs.from_dict(args).added_affinity
        except ConfigError as e:
            raise PluginError(NAME, str(e)) from e
    raise PluginError(NAME, f"args are not of type NodeAffinityArgs, got {type(args).__name__}")


class NodeAffinity:
    """PreFilter (a PreFilterResult for ``metadata.name`` matchFields; SKIP when nothing to check),
    Filter, PreScore (SKIP without preferred terms), Score and NormalizeScore."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        self.added_node_selector: CompiledNodeSelector | None = None
        self.added_pref_sched_terms: CompiledPreferredTerms | None = None
        raw = _added_affinity(args)
        if raw is None:
            return
        try:
            added = NodeAffinitySpec.from_dict(raw, "addedAffinity")
        except ValidationError as e:
            raise PluginError(NAME, str(e)) from e
        req = added.required_during_scheduling_ignored_during_execution
        if req is not None:
            sel = CompiledNodeSelector(req)
            errs = sel.errors()
            if errs:
                raise PluginError(NAME, "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                                  + "; ".join(errs))
            self.added_node_selector = sel
        prefs = added.preferred_during_scheduling_ignored_during_execution
        if prefs:
            terms, err = compile_preferred(prefs)
            if err is not None:
                raise PluginError(NAME, f"parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {err}")
            self.added_pref_sched_terms = terms

    # PreFilter / Filter -----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        na = _pod_node_affinity(pod)
        required = None if na is None else na.required_during_scheduling_ignored_during_execution
        if required is None and self.added_node_selector is None and not pod.spec.node_selector:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, required_node_affinity(pod))
        if required is None or not required.node_selector_terms:
            return None, None
        # Terms are ORed and requirements within a term ANDed: a union over terms of per-term
        # intersections of metadata.name In values. A term without such a requirement allows any node.
        node_names: set[str] | None = None
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for r in term.match_fields:
                if r.key == NODE_NAME_FIELD and r.operator == "In":
                    vals = set(r.values)
                    term_names = vals if term_names is None else term_names & vals
            if term_names is None:
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def pre_filter_extensions(self) -> None:
        # The state does not depend on the pods on a node.
        return None

    def filter_signature(self, state: CycleState, pod: Pod) -> tuple[Any, ...]:
        """Filter reads of the pod only its node selector and required node affinity (the profile's
        addedAffinity is the plugin's own)."""
        na = _pod_node_affinity(pod)
        required = None if na is None else na.required_during_scheduling_ignored_during_execution
        return tuple(sorted(pod.spec.node_selector.items())), required

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        if self.added_node_selector is not None and not self.added_node_selector.matches(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        required: RequiredNodeAffinity | None = state.get(PRE_FILTER_STATE_KEY)
        if required is None:
            # PreFilter is disabled in this profile: parse here.
            required = required_node_affinity(pod)
        if not required.matches(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    # PreScore / Score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred, err = pod_preferred_terms(pod)
        if err is not None:
            return Status(Code.ERROR, err)
        if preferred is None and self.added_pref_sched_terms is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score_signature(self, state: CycleState, pod: Pod) -> Any:
        """Score reads of the pod only its preferred node affinity terms (None without PreScore's state)."""
        if state.get(PRE_SCORE_STATE_KEY) is None:
            return None
        na = _pod_node_affinity(pod)
        return ("preferred", None if na is None else na.preferred_during_scheduling_ignored_during_execution)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node: Node | None = node_info.node
        if node is None:
            return 0, Status(Code.ERROR, "node not found")
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(node)
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            # PreScore is disabled in this profile: parse here.
            preferred, err = pod_preferred_terms(pod)
            if err is not None:
                return 0, Status(Code.ERROR, err)
            s = _PreScoreState(preferred)
        if s.preferred is not None:
            count += s.preferred.score(node)
        return count, None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        added = self.added_pref_sched_terms
        preferred = s.preferred
        out: list[int] = []
        for ni in nodes:
            node = ni.node
            if node is None:
                return None
            count = 0
            if added is not None:
                count += added.score(node)
            if preferred is not None:
                count += preferred.score(node)
            out.append(count)
        return out

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        _normalize(scores)
        return None

    def normalize_values(self, state: CycleState, pod: Pod, node_names: list[str], scores: list[int]) -> list[int]:
        """``normalize_score`` on plain scores, for the framework."""
        max_count = 0
        for s in scores:
            if s > max_count:
                max_count = s
        if max_count == 0:
            return list(scores)
        return [MAX_NODE_SCORE * s // max_count for s in scores]


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: CompiledPreferredTerms | None) -> None:
        self.preferred = preferred
