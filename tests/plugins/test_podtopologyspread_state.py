"""PodTopologySpread internal state, ported from upstream tables the black-box fixtures cannot express.

filtering_test.go TestPreFilterState / TestPreFilterStateAddPod / TestPreFilterStateRemovePod /
TestPreFilterDisabled and scoring_test.go TestPreScoreStateEmptyNodes (upstream case names kept), plus
direct tests of reason strings, state cloning, rounding and default-selector resolution.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from plugins_intree.podtopologyspread import PodTopologySpread
from plugins_intree.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    default_selector,
)
from plugins_intree.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, CriticalPaths, PreFilterState
from plugins_intree.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    round_half_away_from_zero,
    topology_normalizing_weight,
)
from scheduling_framework.api import KubeObject, Node, Pod
from scheduling_framework.config.args import PodTopologySpreadArgs
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import PluginError
from scheduling_framework.interfaces import NodeScore
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code

H = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
UNSCHED = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
MAXINT32 = 2**31 - 1

# --- builders (the shapes of upstream's st.MakePod()/st.MakeNode() wrappers) -------------------------


def L(*keys: str, **kv: str) -> dict[str, str]:
    out = dict.fromkeys(keys, "")
    out.update(kv)
    return out


def node(name: str, labels: dict[str, str], taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    if taints:
        m["spec"] = {"taints": taints}
    return m


def zn(short: str, zone: str | None, *extra: str, taints: bool = False, key: str = "node") -> dict[str, Any]:
    """node-<short> with zone=<zone> (when given), <key>=node-<short> and the ``extra`` keys as labels."""
    name = f"node-{short}"
    labels: dict[str, str] = {}
    if zone is not None:
        labels["zone"] = zone
    labels[key] = name
    labels.update(L(*extra))
    return node(name, labels, UNSCHED if taints else None)


def ZN4() -> list[dict[str, Any]]:
    return [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2"), zn("y", "zone2")]


def E(name: str, on: str, labels: dict[str, str] | None = None, ns: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"nodeName": f"node-{on}", "containers": [{"name": "c"}]}}


def many(counts: dict[str, int], labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    lab = L("foo") if labels is None else labels
    return [E(f"p-{n}{i}", n, lab) for n, k in counts.items() for i in range(1, k + 1)]


def SC(skew: int, key: str, when: str, sel: dict[str, Any] | None, min_domains: int | None = None,
       nap: str | None = None, ntp: str | None = None, mlk: list[str] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when}
    if sel is not None:
        c["labelSelector"] = sel
    if min_domains is not None:
        c["minDomains"] = min_domains
    if nap is not None:
        c["nodeAffinityPolicy"] = nap
    if ntp is not None:
        c["nodeTaintsPolicy"] = ntp
    if mlk is not None:
        c["matchLabelKeys"] = mlk
    return c


def P(labels: dict[str, str] | None = None, constraints: list[dict[str, Any]] | None = None, *,
      node_selector: dict[str, str] | None = None, aff: tuple[str, str, list[str]] | None = None,
      tolerate: str | None = None, owner: tuple[str, str, str] | None = None, name: str = "p") -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels or {}}
    if owner is not None:
        md["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": owner[2], "uid": "u",
                                  "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if aff is not None:
        key, op, values = aff
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": op, "values": values}]}]}}}
    if tolerate is not None:
        spec["tolerations"] = [{"key": tolerate, "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def service(selector: dict[str, str], name: str = "svc") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": selector}}


def workload(kind: str, name: str, selector: Any, api: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": selector}}


class Handle:
    def __init__(self, snapshot: Snapshot, objects: ObjectStore) -> None:
        self.snapshot = snapshot
        self.objects = objects


def _setup(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], *, objs: list[dict[str, Any]] | None = None,
          args: dict[str, Any] | None = None) -> tuple[PodTopologySpread, Snapshot]:
    # Snapshot.from_objects does not accept an empty node list yet (node-tree ordering), hence the branch.
    snapshot = (Snapshot.from_objects([Node.from_dict(n) for n in nodes], [Pod.from_dict(p) for p in pods])
                if nodes else Snapshot({}))
    store = ObjectStore(KubeObject.from_dict(o) for o in objs or [])
    plugin_args = PodTopologySpreadArgs.from_dict(args if args is not None else {"defaultingType": "List"})
    return PodTopologySpread(plugin_args, Handle(snapshot, store)), snapshot


def norm_paths(p: CriticalPaths) -> tuple[tuple[str, int], tuple[str, int]]:
    """Upstream's comparer: with equal counts the two topology values are compared in sorted order."""
    (v0, n0), (v1, n1) = p.as_tuple()
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return (v0, n0), (v1, n1)


def want_paths(p: tuple[tuple[str, int], tuple[str, int]]) -> tuple[tuple[str, int], tuple[str, int]]:
    return norm_paths(CriticalPaths(p[0][0], p[0][1], p[1][0], p[1][1]))


NEW = (("", MAXINT32), ("", MAXINT32))


def constraint_shape(state: PreFilterState | PreScoreState) -> list[tuple[int, str, int, str, str]]:
    return [(c.max_skew, c.topology_key, c.min_domains, "Honor" if c.honor_node_affinity else "Ignore",
             "Honor" if c.honor_node_taints else "Ignore") for c in state.constraints]


def C(skew: int, key: str, nap: str = "Honor", ntp: str = "Ignore", min_domains: int = 1
      ) -> tuple[int, str, int, str, str]:
    return (skew, key, min_domains, nap, ntp)


# --- TestPreFilterState ----------------------------------------------------------------------------

FOO4 = {"a": 2, "b": 1, "y": 4}
PRE_FILTER_STATE: list[Any] = [
    ("clean cluster with one spreadConstraint", P(L("foo"), [SC(5, "zone", DNS, {"matchLabels": {"foo": "bar"}})]),
     ZN4(), [], None, None, [C(5, "zone")], [(("zone1", 0), ("zone2", 0))], [{"zone1": 0, "zone2": 0}]),
    ("normal case with one spreadConstraint", P(L("foo"), [SC(1, "zone", DNS, FOO)]), ZN4(),
     many({"a": 2, "b": 1, "y": 2}), None, None, [C(1, "zone")], [(("zone2", 2), ("zone1", 3))],
     [{"zone1": 3, "zone2": 2}]),
    ("normal case with null label selector", P(L("foo"), [SC(1, "zone", DNS, None)]), ZN4(),
     many({"a": 2, "b": 1, "y": 2}), None, None, [C(1, "zone")], [(("zone2", 0), ("zone1", 0))],
     [{"zone1": 0, "zone2": 0}]),
    ("normal case with one spreadConstraint, on a 3-zone cluster", P(L("foo"), [SC(1, "zone", DNS, FOO)]),
     [*ZN4(), zn("o", "zone3"), zn("p", "zone3")], many({"a": 2, "b": 1, "y": 2}), None, None, [C(1, "zone")],
     [(("zone3", 0), ("zone2", 2))], [{"zone1": 3, "zone2": 2, "zone3": 0}]),
    ("namespace mismatch doesn't count", P(L("foo"), [SC(1, "zone", DNS, FOO)]), ZN4(),
     [E("p-a1", "a", L("foo")), E("p-a2", "a", L("foo"), ns="ns1"), E("p-b1", "b", L("foo")),
      E("p-y1", "y", L("foo"), ns="ns2"), E("p-y2", "y", L("foo"))], None, None, [C(1, "zone")],
     [(("zone2", 1), ("zone1", 2))], [{"zone1": 2, "zone2": 1}]),
    ("normal case with two spreadConstraints", P(L("foo"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, FOO)]),
     ZN4(), many(FOO4), None, None, [C(1, "zone"), C(1, "node")],
     [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
     [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}]),
    ("soft spreadConstraints should be bypassed",
     P(L("foo"), [SC(1, "zone", SA, FOO), SC(1, "zone", DNS, FOO), SC(1, "node", SA, FOO), SC(1, "node", DNS, FOO)]),
     [zn("a", "zone1"), zn("b", "zone1"), zn("y", "zone2")], many(FOO4), None, None, [C(1, "zone"), C(1, "node")],
     [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
     [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}]),
    ("different labelSelectors - simple version",
     P(L("foo", "bar"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, BAR)]),
     [zn("a", "zone1"), zn("b", "zone1"), zn("y", "zone2")], [E("p-a", "a", L("foo")), E("p-b", "b", L("bar"))],
     None, None, [C(1, "zone"), C(1, "node")], [(("zone2", 0), ("zone1", 1)), (("node-a", 0), ("node-y", 0))],
     [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}]),
    ("different labelSelectors - complex pods",
     P(L("foo", "bar"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, BAR)]),
     [zn("a", "zone1"), zn("b", "zone1"), zn("y", "zone2")],
     [E("p-a1", "a", L("foo")), E("p-a2", "a", L("foo", "bar")), E("p-b1", "b", L("foo")), E("p-y1", "y", L("foo")),
      E("p-y2", "y", L("foo", "bar")), E("p-y3", "y", L("foo")), E("p-y4", "y", L("foo", "bar"))],
     None, None, [C(1, "zone"), C(1, "node")], [(("zone1", 3), ("zone2", 4)), (("node-b", 0), ("node-a", 1))],
     [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}]),
    ("two spreadConstraints, and with podAffinity",
     P(L("foo"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, FOO)], aff=("node", "NotIn", ["node-x"])),
     ZN4(), many(FOO4), None, None, [C(1, "zone"), C(1, "node")],
     [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
     [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}]),
    ("default constraints and a service", P(L(foo="bar", baz="kar")), [], [],
     [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
      {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
      {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}],
     [service({"foo": "bar"})], [C(3, "node"), C(5, "rack")], [NEW, NEW], [{}, {}]),
    ("default constraints and a service that doesn't match", P(L(foo="bar")), [], [],
     [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}], [service({"baz": "kep"})], "Skip", None, None),
    ("default constraints and a service, but pod has constraints",
     P(L(foo="bar", baz="tar"), [SC(1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
                                 SC(2, "planet", SA, {"matchLabels": {"fot": "rok"}})]), [], [],
     [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}], [service({"foo": "bar"})],
     [C(1, "zone")], [NEW], [{}]),
    ("default soft constraints and a service", P(L(foo="bar")), [], [],
     [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}], [service({"foo": "bar"})], "Skip", None, None),
    ("TpKeyToDomainsNum is calculated when MinDomains is enabled",
     P(L("foo"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, FOO)]), ZN4(), many(FOO4), None, None,
     [C(1, "zone"), C(1, "node")], [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
     [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}]),
]

_INCL_NODES = [zn("a", None, "foo"), zn("b", None, "foo"), zn("c", None, "bar")]
_INCL_PODS = [E("p-a", "a", L("bar")), E("p-b", "b", L("bar")), E("p-c", "b", L("bar")), E("p-d", "c")]
_TAINT_NODES = [zn("a", None), zn("b", None), zn("c", None, "bar", taints=True)]
_AB = {"node-a": 1, "node-b": 2}
_ABC = {"node-a": 1, "node-b": 2, "node-c": 0}
PRE_FILTER_STATE += [
    ("feature gate disabled with NodeAffinityPolicy",
     P(L("foo"), [SC(1, "node", DNS, BAR)], node_selector=L("foo")), _INCL_NODES, _INCL_PODS, None, None,
     [C(1, "node")], [(("node-a", 1), ("node-b", 2))], [_AB]),
    ("NodeAffinityPolicy honored with labelSelectors",
     P(L("foo"), [SC(1, "node", DNS, BAR)], node_selector=L("foo")), _INCL_NODES, _INCL_PODS, None, None,
     [C(1, "node")], [(("node-a", 1), ("node-b", 2))], [_AB]),
    ("NodeAffinityPolicy ignored with labelSelectors",
     P(L("foo"), [SC(1, "node", DNS, BAR, nap="Ignore")], node_selector=L("foo")), _INCL_NODES, _INCL_PODS, None,
     None, [C(1, "node", nap="Ignore")], [(("node-c", 0), ("node-a", 1))], [_ABC]),
    ("NodeAffinityPolicy honored with nodeAffinity",
     P(L("foo"), [SC(1, "node", DNS, BAR)], aff=("foo", "In", [""])), _INCL_NODES,
     [E("p-a", "a", L("bar")), E("p-c", "b", L("bar")), E("p-d", "b", L("bar")), E("p-e", "c")], None, None,
     [C(1, "node")], [(("node-a", 1), ("node-b", 2))], [_AB]),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     P(L("foo"), [SC(1, "node", DNS, BAR, nap="Ignore")], aff=("foo", "In", [""])), _INCL_NODES, _INCL_PODS, None,
     None, [C(1, "node", nap="Ignore")], [(("node-c", 0), ("node-a", 1))], [_ABC]),
    ("feature gate disabled with NodeTaintsPolicy", P(L("foo"), [SC(1, "node", DNS, BAR)]), _TAINT_NODES, _INCL_PODS,
     None, None, [C(1, "node")], [(("node-c", 0), ("node-a", 1))], [_ABC]),
    ("NodeTaintsPolicy ignored", P(L("foo"), [SC(1, "node", DNS, BAR)]), _TAINT_NODES, _INCL_PODS, None, None,
     [C(1, "node")], [(("node-c", 0), ("node-a", 1))], [_ABC]),
    ("NodeTaintsPolicy honored", P(L("foo"), [SC(1, "node", DNS, BAR, ntp="Honor")]), _TAINT_NODES, _INCL_PODS,
     None, None, [C(1, "node", ntp="Honor")], [(("node-a", 1), ("node-b", 2))], [_AB]),
    ("NodeTaintsPolicy honored with tolerated taints",
     P(L("foo"), [SC(1, "node", DNS, BAR, ntp="Honor")], tolerate="node.kubernetes.io/unschedulable"), _TAINT_NODES,
     _INCL_PODS, None, None, [C(1, "node", ntp="Honor")], [(("node-c", 0), ("node-a", 1))], [_ABC]),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     P(L("foo"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, FOO, nap="Ignore")], node_selector=L("foo")),
     [zn("a", "zone1", "foo"), zn("b", "zone1"), zn("x", "zone2", "foo")], many({"b": 2, "x": 1}), None, None,
     [C(1, "zone"), C(1, "node", nap="Ignore")], [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
     [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}]),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     P(L("foo"), [SC(1, "zone", DNS, FOO, ntp="Honor"), SC(1, "node", DNS, FOO)]),
     [zn("a", "zone1", "foo"), zn("b", "zone1", taints=True), zn("x", "zone2", "foo")], many({"b": 2, "x": 1}),
     None, None, [C(1, "zone", ntp="Honor"), C(1, "node")],
     [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
     [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}]),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     P(L("foo"), [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, FOO)], node_selector=L("foo")),
     [zn("a", "zone1"), zn("b", "zone1", "foo", taints=True), zn("x", "zone2", "foo"), zn("y", "zone2")],
     many({"a": 2, "x": 1, "y": 1}), None, None, [C(1, "zone"), C(1, "node")],
     [(("zone1", 0), ("zone2", 1)), (("node-b", 0), ("node-x", 1))],
     [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}]),
    ("two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
     P(L("foo"), [SC(1, "zone", DNS, FOO, nap="Ignore"), SC(1, "node", DNS, FOO, ntp="Honor")],
       node_selector=L("foo")),
     [zn("a", "zone1"), zn("b", "zone1", "foo", taints=True), zn("x", "zone2", "foo"), zn("y", "zone2", "foo")],
     many({"a": 2, "x": 2, "y": 1}), None, None, [C(1, "zone", nap="Ignore"), C(1, "node", ntp="Honor")],
     [(("zone1", 2), ("zone2", 3)), (("node-y", 1), ("node-x", 2))],
     [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}]),
]

_FOOA = many({"a": 2, "b": 1, "y": 2}, L(foo="a"))
PRE_FILTER_STATE += [
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     P(L("foo", bar="a"), [SC(1, "zone", DNS, FOO, mlk=["bar"])]), ZN4(),
     [E("p-a1", "a", L("foo")), E("p-a2", "a", L("foo", bar="a")), E("p-b1", "b", L("foo")),
      E("p-y1", "y", L("foo", bar="a")), E("p-y2", "y", L("bar"))], None, None, [C(1, "zone")],
     [(("zone2", 1), ("zone1", 1))], [{"zone1": 1, "zone2": 1}]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     P(L(foo="a"), [SC(1, "zone", DNS, {}, mlk=["foo"])]), ZN4(), _FOOA, None, None, [C(1, "zone")],
     [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}]),
    ("key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
     P(L("foo"), [SC(1, "zone", DNS, None, mlk=["bar"])]), ZN4(), _FOOA, None, None, [C(1, "zone")],
     [(("zone2", 0), ("zone1", 0))], [{"zone1": 0, "zone2": 0}]),
    # Upstream runs this one with the matchLabelKeys gate off; the outcome is the same with it on.
    ("no pod is matched when LabelSelector is nil when feature gate disabled",
     P(L("foo"), [SC(1, "zone", DNS, None, mlk=["bar"])]), ZN4(), _FOOA, None, None, [C(1, "zone")],
     [(("zone2", 0), ("zone1", 0))], [{"zone1": 0, "zone2": 0}]),
    ("key in matchLabelKeys is ignored when it isn't exist in pod.labels",
     P(L("foo"), [SC(1, "zone", DNS, FOO, mlk=["bar"])]), ZN4(), _FOOA, None, None, [C(1, "zone")],
     [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}]),
    ("two spreadConstraints with the same topologyKey",
     P(L("foo", "bar"), [SC(1, "zone", DNS, FOO), SC(1, "zone", DNS, BAR)]), ZN4(),
     [E("p-a1", "a", L("foo", "bar")), E("p-b1", "b", L("foo")), E("p-x1", "x", L("bar")),
      E("p-y1", "y", L("foo", "bar")), E("p-y2", "y", L("bar"))], None, None, [C(1, "zone"), C(1, "zone")],
     [(("zone2", 1), ("zone1", 2)), (("zone1", 1), ("zone2", 3))],
     [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}]),
    ("skip if not specified", P(L("foo")), [zn("a", "zone1")], [], None, None, "Skip", None, None),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "defaults", "objs", "want_cons", "want_paths", "want_counts"),
                         [pytest.param(*c[1:], id=c[0]) for c in PRE_FILTER_STATE])
def test_pre_filter_state(pod: dict[str, Any], nodes: list[dict[str, Any]], existing: list[dict[str, Any]],
                          defaults: list[dict[str, Any]] | None, objs: list[dict[str, Any]] | None, want_cons: Any,
                          want_paths: Any, want_counts: Any) -> None:
    args = {"defaultingType": "List", "defaultConstraints": defaults or []}
    plugin, snapshot = _setup(nodes, existing, objs=objs, args=args)
    state = CycleState()
    result, status = plugin.pre_filter(state, Pod.from_dict(pod), snapshot.list())
    assert result is None
    if want_cons == "Skip":
        assert status is not None and status.code == Code.SKIP
        assert PRE_FILTER_STATE_KEY not in state
        return
    assert status is None
    got = state.read(PRE_FILTER_STATE_KEY)
    assert constraint_shape(got) == want_cons
    assert [norm_paths(p) for p in got.critical_paths] == [want_paths_(p) for p in want_paths]
    assert got.tp_value_to_match_num == want_counts


want_paths_ = want_paths


def test_pre_filter_state_default_constraints_use_service_selector() -> None:
    # "default constraints and a service": the defaults take the selector of the matching Service.
    plugin, snapshot = _setup([], [], objs=[service({"foo": "bar"})], args={
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}]})
    state = CycleState()
    plugin.pre_filter(state, Pod.from_dict(P(L(foo="bar", baz="kar"))), snapshot.list())
    (c,) = state.read(PRE_FILTER_STATE_KEY).constraints
    assert c.selector is not None
    assert c.selector.matches({"foo": "bar"}) and not c.selector.matches({"baz": "kar"})


# --- TestPreFilterStateAddPod / TestPreFilterStateRemovePod -------------------------------------------

_ZONE_AB = [zn("a", "zone1", taints=False), zn("b", "zone2")]
_AFF_NODES = [node("node-a", {"zone": "zone1", "node": "node-a", "foo": "bar"}),
              node("node-b", {"zone": "zone2", "node": "node-b", "foo": ""})]
_TAINT_AB = [zn("a", "zone1", taints=True), zn("b", "zone2")]
_NOT_BAR = ("foo", "NotIn", ["bar"])
_ZONE_ONLY = [SC(1, "zone", DNS, FOO)]
_ZONE_NODE = [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, FOO)]
_ZF_NB = [SC(1, "zone", DNS, FOO), SC(1, "node", DNS, BAR)]

ADD_POD: list[Any] = [
    ("node a and b both impact current min match", P(L("foo"), [SC(1, "node", DNS, FOO)]),
     E("p-a1", "a", L("foo")), [], 0, [zn("a", "zone1"), zn("b", "zone1")],
     [(("node-b", 0), ("node-a", 1))], [{"node-a": 1, "node-b": 0}]),
    ("only node a impacts current min match", P(L("foo"), [SC(1, "node", DNS, FOO)]),
     E("p-a1", "a", L("foo")), [E("p-b1", "b", L("foo"))], 0, [zn("a", "zone1"), zn("b", "zone1")],
     [(("node-a", 1), ("node-b", 1))], [{"node-a": 1, "node-b": 1}]),
    ("add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
     P(L("foo"), [SC(1, "node", DNS, FOO)]), E("p-a1", "a", L("foo"), ns="ns1"), [E("p-b1", "b", L("foo"))], 0,
     [zn("a", "zone1"), zn("b", "zone1")], [(("node-a", 0), ("node-b", 1))], [{"node-a": 0, "node-b": 1}]),
    ("add pod on non-critical node won't trigger re-calculation", P(L("foo"), [SC(1, "node", DNS, FOO)]),
     E("p-b2", "b", L("foo")), [E("p-b1", "b", L("foo"))], 1, [zn("a", "zone1"), zn("b", "zone1")],
     [(("node-a", 0), ("node-b", 2))], [{"node-a": 0, "node-b": 2}]),
    ("node a and x both impact topologyKeyToMinPodsMap on zone and node", P(L("foo"), _ZONE_NODE),
     E("p-a1", "a", L("foo")), [], 0, [zn("a", "zone1"), zn("x", "zone2")],
     [(("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))],
     [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}]),
    ("only node a impacts topologyKeyToMinPodsMap on zone and node", P(L("foo"), _ZONE_NODE),
     E("p-a1", "a", L("foo")), [E("p-x1", "x", L("foo"))], 0, [zn("a", "zone1"), zn("x", "zone2")],
     [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))],
     [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}]),
    ("node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
     P(L("foo"), _ZONE_NODE), E("p-a1", "a", L("foo")), many({"b": 2, "x": 1}), 0,
     [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2")],
     [(("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))],
     [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}]),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
     P(L("foo", "bar"), _ZF_NB), E("p-a1", "a", L("foo")),
     [E("p-b1", "b", L("foo", "bar")), E("p-x1", "x", L("foo", "bar")), E("p-x2", "x", L("bar"))], 0,
     [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2")],
     [(("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))],
     [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}]),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
     P(L("foo", "bar"), _ZF_NB), E("p-a1", "a", L("foo", "bar")),
     [E("p-b1", "b", L("bar")), E("p-x1", "x", L("foo", "bar")), E("p-x2", "x", L("bar"))], 0,
     [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2")],
     [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))],
     [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}]),
    ("add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
     P(L("foo"), _ZONE_ONLY, aff=_NOT_BAR), E("p-a1", "a", L("foo", zone="zone1")),
     [E("p-a2", "a", L("foo", zone="zone1")), E("p-b1", "b", L("foo", zone="zone2"))], 0, _AFF_NODES,
     [(("zone2", 1), ("", MAXINT32))], [{"zone2": 1}]),
    ("add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     P(L("foo"), _ZONE_ONLY, aff=_NOT_BAR), E("p-a1", "a", L("foo", zone="zone1")),
     [E("p-a2", "a", L("foo", zone="zone1")), E("p-b1", "b", L("foo", zone="zone2"))], 0, _AFF_NODES,
     [(("zone2", 1), ("", MAXINT32))], [{"zone2": 1}]),
    ("add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
     P(L("foo"), _ZONE_ONLY), E("p-b1", "b", L("foo", zone="zone2")),
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 1, _AFF_NODES,
     [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]),
    ("add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
     P(L("foo"), _ZONE_ONLY), E("p-b1", "b", L("foo", zone="zone2")),
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 1, _AFF_NODES,
     [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]),
    ("add a label selector not matched pod when with NodeInclusionPolicy enabled",
     P(L("foo"), _ZONE_ONLY), E("p-b1", "b", L(zone="zone2")),
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 1, _AFF_NODES,
     [(("zone1", 1), ("zone2", 1))], [{"zone1": 1, "zone2": 1}]),
    ("add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
     P(L("foo"), _ZONE_ONLY), E("p-b1", "b", L("foo", zone="zone2")),
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 1, _TAINT_AB,
     [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]),
    ("add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
     P(L("foo"), _ZONE_ONLY, tolerate="node.kubernetes.io/unschedulable"), E("p-b1", "b", L("foo", zone="zone2")),
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 1, _TAINT_AB,
     [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]),
]


@pytest.mark.parametrize(("preemptor", "added", "existing", "node_idx", "nodes", "want_paths", "want_counts"),
                         [pytest.param(*c[1:], id=c[0]) for c in ADD_POD])
def test_pre_filter_state_add_pod(preemptor: dict[str, Any], added: dict[str, Any], existing: list[dict[str, Any]],
                                  node_idx: int, nodes: list[dict[str, Any]], want_paths: Any,
                                  want_counts: Any) -> None:
    plugin, snapshot = _setup(nodes, existing)
    state = CycleState()
    pod = Pod.from_dict(preemptor)
    _, status = plugin.pre_filter(state, pod, snapshot.list())
    assert status is None
    ni = snapshot.get(nodes[node_idx]["metadata"]["name"])
    ext = plugin.pre_filter_extensions()
    assert ext.add_pod(state, pod, PodInfo(Pod.from_dict(added)), ni) is None
    got = state.read(PRE_FILTER_STATE_KEY)
    assert [norm_paths(p) for p in got.critical_paths] == [want_paths_(p) for p in want_paths]
    assert got.tp_value_to_match_num == want_counts


REMOVE_POD: list[Any] = [
    ("one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged", P(L("foo"), _ZONE_ONLY),
     [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2")], many({"a": 1, "b": 1, "x": 1}), 0, None, 0,
     [(("zone1", 1), ("zone2", 1))], [{"zone1": 1, "zone2": 1}]),
    ("one spreadConstraint on node, topologyKeyToMinPodsMap changed", P(L("foo"), _ZONE_ONLY), ZN4(),
     many({"a": 1, "b": 1, "x": 1, "y": 1}), 0, None, 0, [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]),
    ("delete an irrelevant pod won't help", P(L("foo"), _ZONE_ONLY), ZN4(),
     [E("p-a0", "a", L("bar")), *many({"a": 1, "b": 1, "x": 1, "y": 1})], 0, None, 0,
     [(("zone1", 2), ("zone2", 2))], [{"zone1": 2, "zone2": 2}]),
    ("delete a non-existing pod won't help", P(L("foo"), _ZONE_ONLY), ZN4(), many({"a": 1, "b": 1, "x": 1, "y": 1}),
     -1, E("p-a0", "a", L("bar")), 0, [(("zone1", 2), ("zone2", 2))], [{"zone1": 2, "zone2": 2}]),
    ("two spreadConstraints", P(L("foo"), _ZONE_NODE), [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2")],
     many({"a": 2, "b": 1, "x": 2}), 3, None, 2,
     [(("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))],
     [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}]),
    # In the next four upstream leaves deletedPodIdx at 0, so existingPods[0] is the pod removed.
    ("remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
     P(L("foo"), _ZONE_ONLY, aff=_NOT_BAR), _AFF_NODES,
     [E("p-a2", "a", L("foo", zone="zone1")), E("p-b1", "b", L("foo", zone="zone2"))], 0,
     E("p-a1", "a", L("foo", zone="zone1")), 0, [(("zone2", 1), ("", MAXINT32))], [{"zone2": 1}]),
    ("remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     P(L("foo"), _ZONE_ONLY, aff=_NOT_BAR), _AFF_NODES,
     [E("p-a2", "a", L("foo", zone="zone1")), E("p-b1", "b", L("foo", zone="zone2"))], 0,
     E("p-a1", "a", L("foo", zone="zone1")), 0, [(("zone2", 1), ("", MAXINT32))], [{"zone2": 1}]),
    ("remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
     P(L("foo"), _ZONE_ONLY), _AFF_NODES,
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 0,
     E("p-b1", "b", L("foo", zone="zone2")), 1, [(("zone2", 0), ("zone1", 1))], [{"zone1": 1, "zone2": 0}]),
    ("remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
     P(L("foo"), _ZONE_ONLY), _AFF_NODES,
     [E("p-a1", "a", L("foo", zone="zone1")), E("p-b2", "b", L("foo", zone="zone2"))], 0,
     E("p-b1", "b", L("foo", zone="zone2")), 1, [(("zone2", 0), ("zone1", 1))], [{"zone1": 1, "zone2": 0}]),
]


@pytest.mark.parametrize(("preemptor", "nodes", "existing", "deleted_idx", "deleted", "node_idx", "want_paths",
                          "want_counts"), [pytest.param(*c[1:], id=c[0]) for c in REMOVE_POD])
def test_pre_filter_state_remove_pod(preemptor: dict[str, Any], nodes: list[dict[str, Any]],
                                     existing: list[dict[str, Any]], deleted_idx: int, deleted: dict[str, Any] | None,
                                     node_idx: int, want_paths: Any, want_counts: Any) -> None:
    plugin, snapshot = _setup(nodes, existing)
    state = CycleState()
    pod = Pod.from_dict(preemptor)
    _, status = plugin.pre_filter(state, pod, snapshot.list())
    assert status is None
    victim = existing[deleted_idx] if 0 <= deleted_idx < len(existing) else deleted
    assert victim is not None
    ni = snapshot.get(nodes[node_idx]["metadata"]["name"])
    assert plugin.pre_filter_extensions().remove_pod(state, pod, PodInfo(Pod.from_dict(victim)), ni) is None
    got = state.read(PRE_FILTER_STATE_KEY)
    assert [norm_paths(p) for p in got.critical_paths] == [want_paths_(p) for p in want_paths]
    assert got.tp_value_to_match_num == want_counts


# --- TestPreFilterDisabled -------------------------------------------------------------------------


def test_pre_filter_disabled() -> None:
    plugin, _ = _setup([], [])
    ni = NodeInfo(Node.from_dict(node("n", {})))
    status = plugin.filter(CycleState(), Pod.from_dict(P()), ni)
    assert status is not None and status.code == Code.ERROR
    assert status.reasons == ['reading "PreFilterPodTopologySpread" from cycleState: not found']


def test_score_and_normalize_without_pre_score_are_errors() -> None:
    plugin, _ = _setup([], [])
    ni = NodeInfo(Node.from_dict(node("n", {})))
    want = ['error reading "PreScorePodTopologySpread" from cycleState: not found']
    score, status = plugin.score(CycleState(), Pod.from_dict(P()), ni)
    assert score == 0 and status is not None and status.code == Code.ERROR and status.reasons == want
    status = plugin.normalize_score(CycleState(), Pod.from_dict(P()), [NodeScore("n", 0)])
    assert status is not None and status.code == Code.ERROR and status.reasons == want


def test_add_pod_without_pre_filter_is_error() -> None:
    plugin, _ = _setup([], [])
    ni = NodeInfo(Node.from_dict(node("n", {})))
    status = plugin.add_pod(CycleState(), Pod.from_dict(P()), PodInfo(Pod.from_dict(E("q", "n"))), ni)
    assert status is not None and status.code == Code.ERROR


# --- TestPreScoreStateEmptyNodes ---------------------------------------------------------------------

_HN3 = [node("node-a", {"zone": "zone1", H: "node-a"}), node("node-b", {"zone": "zone1", H: "node-b"}),
        node("node-x", {"zone": "zone2", H: "node-x"})]
_HN3_FOO = [node("node-a", {"zone": "zone1", "foo": "", H: "node-a"}),
            node("node-b", {"zone": "zone1", "foo": "", H: "node-b"}), node("node-x", {"zone": "zone2", H: "node-x"})]
_HN3_TAINT = [_HN3_FOO[0], _HN3_FOO[1], node("node-x", {"zone": "zone2", H: "node-x"}, UNSCHED)]
_Z12 = {"zone1": 0, "zone2": 0}
_RS1 = workload("ReplicaSet", "rs1", FOO)
_OWNED = ("apps/v1", "ReplicaSet", "rs1")
w = topology_normalizing_weight

PRE_SCORE_STATE: list[Any] = [
    ("normal case", P(L("foo"), [SC(1, "zone", SA, FOO), SC(1, H, SA, FOO)]), _HN3, None, "List",
     [C(1, "zone"), C(1, H)], set(), [_Z12, {}], [w(2), w(3)]),
    ("null selector", P(L("foo"), [SC(1, "zone", SA, None)]), _HN3, None, "List", [C(1, "zone")], set(), [_Z12],
     [w(2)]),
    ("node-x doesn't have label zone", P(L("foo"), [SC(1, "zone", SA, FOO), SC(1, H, SA, BAR)]),
     [_HN3[0], _HN3[1], node("node-x", {H: "node-x"})], None, "List", [C(1, "zone"), C(1, H)], {"node-x"},
     [{"zone1": 0}, {}], [w(1), w(2)]),
    ("system default constraints and a replicaset", P(L(foo="tar", baz="sup"), owner=_OWNED),
     [node("node-a", {H: "node-a", ZONE: "mars"}), node("node-b", {H: "node-b", ZONE: "mars"}),
      node("node-c", {H: "node-c"}), node("node-d", {H: "node-d"})], [_RS1], "System",
     [C(3, H), C(5, ZONE)], set(), [{}, {"mars": 0, "": 0}], [w(4), w(2)]),
    ("default constraints and a replicaset", P(L(foo="tar", baz="sup"), owner=_OWNED),
     [node("node-a", {"rack": "rack1", H: "node-a", "planet": "mars"})], [_RS1],
     [{"maxSkew": 1, "topologyKey": H, "whenUnsatisfiable": SA},
      {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
      {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
     [C(1, H), C(2, "planet")], set(), [{}, {"mars": 0}], [w(1), w(1)]),
    ("default constraints and a replicaset, but pod has constraints",
     P(L(foo="bar", baz="sup"), [SC(1, "zone", DNS, BAR), SC(2, "planet", SA, {"matchLabels": {"baz": "sup"}})],
       owner=_OWNED), [node("node-a", {"planet": "mars", "galaxy": "andromeda"})], [_RS1],
     [{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}], [C(2, "planet")], set(), [{"mars": 0}],
     [w(1)]),
    ("NodeAffinityPolicy honored with labelSelectors", P(L("foo"), [SC(1, "zone", SA, BAR)], node_selector=L("foo")),
     _HN3_FOO, None, "List", [C(1, "zone")], set(), [_Z12], [w(2)]),
    ("NodeAffinityPolicy ignored with labelSelectors",
     P(L("foo"), [SC(1, "zone", SA, BAR, nap="Ignore")], node_selector=L("foo")), _HN3_FOO, None, "List",
     [C(1, "zone", nap="Ignore")], set(), [_Z12], [w(2)]),
    ("NodeAffinityPolicy honored with nodeAffinity", P(L("foo"), [SC(1, "zone", SA, BAR)], aff=("foo", "In", [""])),
     _HN3_FOO, None, "List", [C(1, "zone")], set(), [_Z12], [w(2)]),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     P(L("foo"), [SC(1, "zone", SA, BAR, nap="Ignore")], aff=("foo", "In", [""])), _HN3_FOO, None, "List",
     [C(1, "zone", nap="Ignore")], set(), [_Z12], [w(2)]),
    ("NodeTaintsPolicy honored", P(L("foo"), [SC(1, "zone", SA, BAR, ntp="Honor")]), _HN3_TAINT, None, "List",
     [C(1, "zone", ntp="Honor")], set(), [_Z12], [w(2)]),
    ("NodeTaintsPolicy ignored", P(L("foo"), [SC(1, "zone", SA, BAR)]), _HN3_TAINT, None, "List", [C(1, "zone")],
     set(), [_Z12], [w(2)]),
]


@pytest.mark.parametrize(("pod", "nodes", "objs", "config", "want_cons", "want_ignored", "want_counts",
                          "want_weights"), [pytest.param(*c[1:], id=c[0]) for c in PRE_SCORE_STATE])
def test_pre_score_state_empty_nodes(pod: dict[str, Any], nodes: list[dict[str, Any]],
                                     objs: list[dict[str, Any]] | None, config: Any, want_cons: Any,
                                     want_ignored: set[str], want_counts: Any, want_weights: list[float]) -> None:
    if config in ("List", "System"):
        args: dict[str, Any] = {"defaultingType": config}
    else:
        args = {"defaultingType": "List", "defaultConstraints": config}
    # Upstream's snapshot has the nodes but no pods, and every node is a candidate.
    plugin, snapshot = _setup(nodes, [], objs=objs, args=args)
    state = CycleState()
    assert plugin.pre_score(state, Pod.from_dict(pod), snapshot.list()) is None
    got = state.read(PRE_SCORE_STATE_KEY)
    assert constraint_shape(got) == want_cons
    assert got.ignored_nodes == want_ignored
    assert got.topology_value_to_pod_counts == want_counts
    assert got.topology_normalizing_weight == pytest.approx(want_weights)


def test_pre_score_state_replicaset_selector_is_used() -> None:
    plugin, snapshot = _setup([node("node-a", {H: "node-a", ZONE: "mars"})], [], objs=[_RS1],
                             args={"defaultingType": "System"})
    state = CycleState()
    plugin.pre_score(state, Pod.from_dict(P(L(foo="tar", baz="sup"), owner=_OWNED)), snapshot.list())
    for c in state.read(PRE_SCORE_STATE_KEY).constraints:
        assert c.selector.matches({"foo": "x"}) and not c.selector.matches({"baz": "sup"})


def test_pre_score_skip_without_nodes_in_the_snapshot() -> None:
    plugin, _ = _setup([], [])
    status = plugin.pre_score(CycleState(), Pod.from_dict(P(L("foo"), [SC(1, H, SA, FOO)])), [])
    assert status is not None and status.code == Code.SKIP


# --- reasons and codes ---------------------------------------------------------------------------------


def test_filter_reason_strings() -> None:
    nodes = [zn("a", "zone1"), zn("b", "zone1"), zn("x", "zone2"), node("node-m", {"node": "node-m"})]
    plugin, snapshot = _setup(nodes, many({"a": 1}))
    pod = Pod.from_dict(P(L("foo"), [SC(1, "zone", DNS, FOO)]))
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    by_name = {ni.name: plugin.filter(state, pod, ni) for ni in snapshot.list()}
    assert by_name["node-x"] is None
    assert by_name["node-a"] is not None and by_name["node-a"].code == Code.UNSCHEDULABLE
    assert by_name["node-a"].reasons == [ERR_REASON_CONSTRAINTS_NOT_MATCH]
    assert by_name["node-m"] is not None and by_name["node-m"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert by_name["node-m"].reasons == [
        "node(s) didn't match pod topology spread constraints (missing required label)"]
    assert by_name["node-m"].reasons == [ERR_REASON_NODE_LABEL_NOT_MATCH]


def test_min_domains_treats_global_minimum_as_zero() -> None:
    # One domain with 1 matching pod: skew 1+1-1 = 1 passes with minDomains 1, but 1+1-0 = 2 fails with 2.
    nodes = [zn("a", "zone1")]
    for min_domains, want in ((1, None), (2, Code.UNSCHEDULABLE)):
        plugin, snapshot = _setup(nodes, many({"a": 1}))
        pod = Pod.from_dict(P(L("foo"), [SC(1, "zone", DNS, FOO, min_domains)]))
        state = CycleState()
        plugin.pre_filter(state, pod, snapshot.list())
        status = plugin.filter(state, pod, snapshot.get("node-a"))
        assert (None if status is None else status.code) == want


def test_empty_selector_counts_no_pods_but_matches_the_pod_itself() -> None:
    plugin, snapshot = _setup([zn("a", "zone1"), zn("x", "zone2")], many({"a": 3}))
    pod = Pod.from_dict(P(L("foo"), [SC(1, "zone", DNS, {})]))
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    s = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [{"zone1": 0, "zone2": 0}]
    assert s.self_match == (1,)


# --- cloning ---------------------------------------------------------------------------------------------


def test_cycle_state_clone_isolates_pre_filter_counts() -> None:
    plugin, snapshot = _setup([zn("a", "zone1"), zn("b", "zone1")], many({"a": 1}))
    pod = Pod.from_dict(P(L("foo"), [SC(1, "node", DNS, FOO)]))
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    copy = state.clone()
    ext = plugin.pre_filter_extensions()
    ext.remove_pod(copy, pod, snapshot.get("node-a").pods[0], snapshot.get("node-a"))
    assert copy.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 0, "node-b": 0}]
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 1, "node-b": 0}]
    assert copy.read(PRE_FILTER_STATE_KEY).constraints is state.read(PRE_FILTER_STATE_KEY).constraints


def test_pre_score_state_clone_is_shared() -> None:
    s = PreScoreState([], set(), [], [], "default")
    assert s.clone() is s


def test_critical_paths_update_keeps_minimum_first() -> None:
    p = CriticalPaths()
    for value, num in (("z1", 3), ("z2", 1), ("z3", 2)):
        p.update(value, num)
    assert p.as_tuple() == (("z2", 1), ("z3", 2))
    p.update("z2", 5)  # the minimum grows past the second entry: they swap
    assert p.as_tuple() == (("z3", 2), ("z2", 5))


# --- scoring helpers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "want"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (0.0, 0), (-0.5, -1)])
def test_round_half_away_from_zero(x: float, want: int) -> None:
    assert round_half_away_from_zero(x) == want


def test_topology_normalizing_weight() -> None:
    assert topology_normalizing_weight(3) == pytest.approx(math.log(5))


def test_normalize_gives_ignored_nodes_zero_and_all_equal_max() -> None:
    s = PreScoreState([], {"n3"}, [], [], "default")
    scores = [NodeScore("n1", 0), NodeScore("n2", 0), NodeScore("n3", 7)]
    plugin, _ = _setup([], [])
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, s)
    assert plugin.normalize_score(state, Pod.from_dict(P()), scores) is None
    assert [x.score for x in scores] == [100, 100, 0]


# --- default selector ---------------------------------------------------------------------------------------


def _sel(pod: dict[str, Any], objs: list[dict[str, Any]]) -> Any:
    return default_selector(Pod.from_dict(pod), ObjectStore(KubeObject.from_dict(o) for o in objs))


def test_default_selector_merges_matching_services_only() -> None:
    objs = [service({"app": "web"}, "a"), service({"tier": "fe"}, "b"), service({"app": "db"}, "c"),
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nosel", "namespace": "default"},
             "spec": {}}]
    sel = _sel(P(L(app="web", tier="fe")), objs)
    assert dict(sel.match_labels) == {"app": "web", "tier": "fe"}


def test_default_selector_ignores_services_of_other_namespaces() -> None:
    other = service({"app": "web"})
    other["metadata"]["namespace"] = "other"
    assert _sel(P(L(app="web")), [other]).is_empty()


@pytest.mark.parametrize(("kind", "api", "selector", "match", "no_match"), [
    ("ReplicationController", "v1", {"app": "web"}, {"app": "web"}, {"app": "db"}),
    ("ReplicaSet", "apps/v1", {"matchLabels": {"app": "web"}}, {"app": "web"}, {"app": "db"}),
    ("StatefulSet", "apps/v1", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
     {"app": "web"}, {"app": "db"}),
])
def test_default_selector_from_controller(kind: str, api: str, selector: Any, match: dict[str, str],
                                          no_match: dict[str, str]) -> None:
    sel = _sel(P(L(app="web"), owner=(api, kind, "ctl")), [workload(kind, "ctl", selector, api)])
    assert not sel.is_empty()
    assert sel.matches(match) and not sel.matches(no_match)


def test_default_selector_unsupported_owner_kind_is_ignored() -> None:
    sel = _sel(P(L(app="web"), owner=("apps/v1", "Deployment", "d")),
               [workload("Deployment", "d", {"matchLabels": {"app": "web"}})])
    assert sel.is_empty()


def test_system_defaults_without_a_selecting_object_skip_scoring() -> None:
    plugin, snapshot = _setup([node("n", {H: "n"})], [], args={"defaultingType": "System"})
    status = plugin.pre_score(CycleState(), Pod.from_dict(P(L(app="web"))), snapshot.list())
    assert status is not None and status.code == Code.SKIP
    # a matching Service turns the system defaults on
    plugin, snapshot = _setup([node("n", {H: "n"})], [], objs=[service({"app": "web"})],
                             args={"defaultingType": "System"})
    assert plugin.pre_score(CycleState(), Pod.from_dict(P(L(app="web"))), snapshot.list()) is None


# --- args ----------------------------------------------------------------------------------------------------


def test_args_none_means_system_defaulting() -> None:
    plugin = PodTopologySpread(None, None)
    assert plugin.system_defaulted
    assert [c.topology_key for c in plugin.default_constraints] == [H, ZONE]


def test_args_mapping_is_decoded() -> None:
    plugin = PodTopologySpread({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": DNS}]}, None)
    assert not plugin.system_defaulted
    assert [c.topology_key for c in plugin.default_constraints] == ["zone"]


def test_args_of_wrong_type_name_the_plugin() -> None:
    with pytest.raises(PluginError, match="PodTopologySpread"):
        PodTopologySpread(42, None)
