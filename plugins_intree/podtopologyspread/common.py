"""What PreFilter/Filter and PreScore/Score share: parsed constraints, selectors, node inclusion, defaults."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod, TopologySpreadConstraint
from scheduling_framework.api.selectors import LabelSelector, LabelSelectorRequirement, NodeSelector
from scheduling_framework.api.taints import does_not_schedule_or_execute, find_matching_untolerated_taint
from scheduling_framework.errors import SchedulingFrameworkError, ValidationError
from scheduling_framework.state.node_info import NodeInfo, PodInfo

NAME = "PodTopologySpread"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
POLICY_HONOR = "Honor"
POLICY_IGNORE = "Ignore"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# Applied to pods without constraints of their own when defaultingType is System: soft spreading over
# hostnames (maxSkew 3) and zones (maxSkew 5), each selecting the pod's Services / controller.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)

# A pod selector as labels.Selector behaves: None selects nothing (a nil labelSelector); an empty
# LabelSelector selects everything but counts as "empty" (upstream counts no pods for it).
Selector = LabelSelector | None


class StateNotFoundError(SchedulingFrameworkError, LookupError):
    """A cycle-state entry this plugin writes in an earlier extension point is missing."""

    def __init__(self, key: str, prefix: str = "") -> None:
        super().__init__(f'{prefix}reading "{key}" from cycleState: not found')


class SpreadConstraint:
    """A topology spread constraint ready to evaluate: selector resolved, policies and minDomains defaulted."""

    __slots__ = ("honor_node_affinity", "honor_node_taints", "max_skew", "min_domains", "selector",
                 "topology_key")

    def __init__(self, max_skew: int, topology_key: str, selector: Selector, min_domains: int = 1,
                 honor_node_affinity: bool = True, honor_node_taints: bool = False) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.honor_node_affinity = honor_node_affinity
        self.honor_node_taints = honor_node_taints

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpreadConstraint):
            return NotImplemented
        return (self.max_skew, self.topology_key, self.selector, self.min_domains, self.honor_node_affinity,
                self.honor_node_taints) == (other.max_skew, other.topology_key, other.selector, other.min_domains,
                                            other.honor_node_affinity, other.honor_node_taints)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"SpreadConstraint(max_skew={self.max_skew}, topology_key={self.topology_key!r}, "
                f"selector={self.selector!r}, min_domains={self.min_domains}, "
                f"node_affinity_policy={POLICY_HONOR if self.honor_node_affinity else POLICY_IGNORE}, "
                f"node_taints_policy={POLICY_HONOR if self.honor_node_taints else POLICY_IGNORE})")


def merge_label_set(match_labels: Mapping[str, str], selector: Selector) -> Selector:
    """AND the equality requirements ``match_labels`` into ``selector`` (a nil selector stays nil)."""
    if selector is None:
        return None
    # Keep every requirement of both sides: the selector's own matchLabels become In requirements so a
    # key present on both sides is required twice rather than overwritten.
    exprs = tuple(LabelSelectorRequirement(k, "In", (v,)) for k, v in selector.match_labels.items())
    return LabelSelector(dict(match_labels), exprs + selector.match_expressions)


def filter_constraints(constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str],
                       action: str) -> list[SpreadConstraint]:
    """The constraints whose whenUnsatisfiable is ``action``, with matchLabelKeys folded into the selector."""
    out: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector: Selector = c.label_selector
        if c.match_label_keys:
            extra = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if extra:
                selector = merge_label_set(extra, selector)
        out.append(SpreadConstraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            honor_node_affinity=(c.node_affinity_policy or POLICY_HONOR) == POLICY_HONOR,
            honor_node_taints=(c.node_taints_policy or POLICY_IGNORE) == POLICY_HONOR,
        ))
    return out


def node_has_all_keys(node_labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]) -> bool:
    """Whether every constraint's topology key is a label of the node."""
    for c in constraints:
        if c.topology_key not in node_labels:
            return False
    return True


def selector_matches(selector: Selector, labels: Mapping[str, str]) -> bool:
    return selector is not None and selector.matches(labels)


def count_pods_match_selector(pod_infos: Sequence[PodInfo], selector: Selector, namespace: str) -> int:
    """Pods in ``namespace``, not terminating, matched by ``selector``; an empty or nil selector counts none."""
    if selector is None or selector.is_empty():
        return 0
    matches = selector.matches
    count = 0
    for pi in pod_infos:
        if pi.namespace == namespace and matches(pi.labels) and pi.pod.metadata.deletion_timestamp is None:
            count += 1
    return count


#: Bound on the per-NodeInfo memo entries this plugin keeps (distinct selectors seen since the node changed).
_MEMO_LIMIT = 64


class CountKey:
    """What a per-node count of matching pods depends on besides the pods: the selector and the namespace.

    ``key`` is None when the count is 0 whatever the pods (a nil or empty selector)."""

    __slots__ = ("key", "namespace", "selector")

    def __init__(self, selector: Selector, namespace: str) -> None:
        self.selector = selector
        self.namespace = namespace
        # a string: its hash is computed once, and the key is looked up on every node of every cycle
        self.key: str | None = None
        if selector is not None and not selector.is_empty():
            self.key = repr((NAME, "count", namespace, tuple(sorted(selector.match_labels.items())),
                             selector.match_expressions))


def count_matching_pods(ni: NodeInfo, ck: CountKey) -> int:
    """``count_pods_match_selector(ni.pods, ...)``, remembered on the NodeInfo until its pods change."""
    key = ck.key
    if key is None:
        return 0
    memo = ni.memo
    cnt: int | None = memo.get(key)
    if cnt is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        cnt = memo[key] = count_pods_match_selector(ni.pods, ck.selector, ck.namespace)
    return cnt


class RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity, matched against a node together."""

    __slots__ = ("_node_selector", "_terms")

    @property
    def is_empty(self) -> bool:
        """True when every node matches (no nodeSelector, no required node affinity)."""
        return not self._node_selector and self._terms is None

    def __init__(self, pod: Pod) -> None:
        self._node_selector: tuple[tuple[str, str], ...] = tuple(pod.spec.node_selector.items())
        aff = pod.spec.affinity
        na = aff.node_affinity if aff is not None else None
        self._terms: NodeSelector | None = (
            na.required_during_scheduling_ignored_during_execution if na is not None else None)

    def key(self) -> tuple[object, ...]:
        """A value equal for pods whose nodeSelector and required node affinity are equal (so match alike)."""
        return self._node_selector, self._terms

    def matches(self, node: Node) -> bool:
        labels = node.metadata.labels
        for k, v in self._node_selector:
            if labels.get(k) != v:
                return False
        return self._terms is None or self._terms.matches(node.metadata.name, labels)


def has_untolerated_taint(node: Node, pod: Pod) -> bool:
    """Whether the node has a NoSchedule/NoExecute taint the pod does not tolerate."""
    taints = node.spec.taints
    if not taints:
        return False
    return find_matching_untolerated_taint(taints, pod.spec.tolerations, does_not_schedule_or_execute) is not None


class NodeInclusion:
    """Evaluates nodeAffinityPolicy / nodeTaintsPolicy for one node, computing each check at most once."""

    __slots__ = ("_affinity", "_node", "_pod", "_affinity_ok", "_taints_ok")

    def __init__(self, pod: Pod, affinity: RequiredNodeAffinity) -> None:
        self._pod = pod
        self._affinity = affinity
        self._node: Node | None = None
        self._affinity_ok: bool | None = None
        self._taints_ok: bool | None = None

    def reset(self, node: Node) -> None:
        self._node = node
        self._affinity_ok = None
        self._taints_ok = None

    def includes_every_node(self, constraints: Sequence[SpreadConstraint]) -> bool:
        """True when ``includes`` is True for every node and each of ``constraints``: nothing to check."""
        affinity_empty = self._affinity.is_empty
        return all((affinity_empty or not c.honor_node_affinity) and not c.honor_node_taints for c in constraints)

    def key(self, constraints: Sequence[SpreadConstraint]) -> tuple[object, ...]:
        """A value equal for (pod, constraints) pairs whose ``flags`` agree on every node: the policies, and the
        pod's node affinity / tolerations where a policy honors them."""
        honor_affinity = any(c.honor_node_affinity for c in constraints) and not self._affinity.is_empty
        honor_taints = any(c.honor_node_taints for c in constraints)
        return (tuple((c.honor_node_affinity, c.honor_node_taints) for c in constraints),
                self._affinity.key() if honor_affinity else None,
                tuple(self._pod.spec.tolerations) if honor_taints else None)

    def flags(self, node: Node, constraints: Sequence[SpreadConstraint]) -> tuple[bool, ...]:
        """``includes(c)`` on ``node`` for each of ``constraints``."""
        self.reset(node)
        return tuple([self.includes(c) for c in constraints])

    def includes(self, c: SpreadConstraint) -> bool:
        node = self._node
        assert node is not None
        if c.honor_node_affinity:
            if self._affinity_ok is None:
                self._affinity_ok = self._affinity.matches(node)
            if not self._affinity_ok:
                return False
        if c.honor_node_taints:
            if self._taints_ok is None:
                self._taints_ok = not has_untolerated_taint(node, self._pod)
            if not self._taints_ok:
                return False
        return True


def unique_selectors(constraints: Sequence[SpreadConstraint]) -> tuple[list[Selector], list[int]]:
    """Distinct selectors and, per constraint, the index of its selector (so equal selectors count once)."""
    uniq: list[Selector] = []
    index: list[int] = []
    for c in constraints:
        for i, s in enumerate(uniq):
            if s == c.selector:
                index.append(i)
                break
        else:
            index.append(len(uniq))
            uniq.append(c.selector)
    return uniq, index


# --- default constraints: the selector of the pod's Services and controller ------------------------


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: "" -> ("", ""), "v1" -> ("", "v1"), "apps/v1" -> ("apps", "v1")."""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _set_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    return all(labels.get(str(k)) == ("" if v is None else str(v)) for k, v in selector.items())


def _str_map(value: Any) -> dict[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _find(objects: Any, kind: str, namespace: str, name: str) -> KubeObject | None:
    get = getattr(objects, "get", None)
    if callable(get):
        found = get(kind, namespace, name)
        return found if isinstance(found, KubeObject) else None
    for o in objects.list(kind, namespace):
        if o.metadata.name == name:
            return o  # type: ignore[no-any-return]
    return None


def _controller_selector(obj: KubeObject) -> LabelSelector | None:
    """A ReplicaSet's / StatefulSet's spec.selector; None when absent or not a valid selector."""
    raw = obj.spec.get("selector")
    if raw is None:
        return None
    try:
        return LabelSelector.from_dict(raw, "spec.selector")
    except ValidationError:
        return None


def default_selector(pod: Pod, objects: Any) -> LabelSelector:
    """The selector of the Services, ReplicationController, ReplicaSet or StatefulSet that select the pod.

    ``objects`` is the handle's object store (``list(kind, namespace)``); None stands for an empty cluster.
    """
    label_set: dict[str, str] = {}
    ns = pod.metadata.namespace
    pod_labels = pod.metadata.labels
    if objects is not None:
        for svc in objects.list("Service", ns):
            sel = svc.spec.get("selector")
            # A Service without a selector selects nothing (not everything).
            if sel is None or not isinstance(sel, Mapping) or not _set_matches(sel, pod_labels):
                continue
            label_set.update(_str_map(sel) or {})
    selector = LabelSelector(dict(label_set), ())
    owner = pod.metadata.controller_ref()
    if owner is None or objects is None:
        return selector
    gv = _parse_group_version(owner.api_version)
    if gv is None:
        return selector
    group, version = gv
    kind = owner.kind
    if (group, version, kind) == ("", "v1", "ReplicationController"):
        rc = _find(objects, kind, ns, owner.name)
        if rc is not None:
            label_set.update(_str_map(rc.spec.get("selector")) or {})
            selector = LabelSelector(dict(label_set), ())
    elif (group, version) == ("apps", "v1") and kind in ("ReplicaSet", "StatefulSet"):
        ctrl = _find(objects, kind, ns, owner.name)
        other = _controller_selector(ctrl) if ctrl is not None else None
        if other is not None:
            exprs = tuple(LabelSelectorRequirement(k, "In", (v,)) for k, v in other.match_labels.items())
            selector = LabelSelector(selector.match_labels, selector.match_expressions + exprs
                                     + other.match_expressions)
    return selector
