"""The scheduler extender wire protocol (``k8s.io/kube-scheduler/extender/v1``), as JSON.

Upstream's Go types carry no ``json`` tags, so the keys on the wire are the Go field names
(``Pod``, ``Nodes``, ``NodeNames``, ``FailedNodes``, ``Host``, ``Score``, ...), and Go's decoder
matches keys case-insensitively (``nodenames`` is read as ``NodeNames``) and ignores unknown keys.
Both directions here follow that: :meth:`to_json` writes the exact Go names, ``from_json`` accepts
any casing. Kubernetes objects (the pod, nodes, victims) travel as their manifests (camelCase, the
core/v1 JSON); ``Nodes`` is a ``NodeList`` (``{"metadata": {}, "items": [...]}``).

A reply of the wrong shape raises :class:`WireError` with the message Go's decoder gives
(``json: cannot unmarshal array into Go struct field ExtenderFilterResult.FailedNodes of type ...``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.errors import SchedulingFrameworkError

#: Scores an extender's prioritize verb returns lie in [MIN_EXTENDER_PRIORITY, MAX_EXTENDER_PRIORITY].
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10


class WireError(SchedulingFrameworkError):
    """A JSON document does not have the shape of the extender type it should decode into."""


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _bad(v: Any, where: str, go_type: str) -> WireError:
    shown = f"number {v}" if _kind(v) == "number" else _kind(v)
    return WireError(f"json: cannot unmarshal {shown} into {where} of type {go_type}")


def _object(doc: Any, go_type: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise _bad(doc, "Go value", go_type)
    return doc


def _get(m: Mapping[str, Any], key: str) -> Any:
    """``m[key]``, else the first key equal to it ignoring case (Go's encoding/json rule); None if absent."""
    if key in m:
        return m[key]
    low = key.lower()
    for k, v in m.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def _field(struct: str, name: str) -> str:
    return f"Go struct field {struct}.{name}"


def _str(v: Any, struct: str, name: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise _bad(v, _field(struct, name), "string")
    return v


def _int64(v: Any, struct: str, name: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _bad(v, _field(struct, name), "int64")
    if isinstance(v, float):
        if not v.is_integer():
            raise _bad(v, _field(struct, name), "int64")
        v = int(v)
    n = int(v)
    if not -(2**63) <= n < 2**63:
        raise _bad(v, _field(struct, name), "int64")
    return n


def _str_map(v: Any, struct: str, name: str, go_type: str) -> dict[str, str] | None:
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise _bad(v, _field(struct, name), go_type)
    out: dict[str, str] = {}
    for k, msg in v.items():
        out[str(k)] = _str(msg, struct, name)
    return out


def _str_list(v: Any, struct: str, name: str) -> list[str] | None:
    if v is None:
        return None
    if not isinstance(v, list):
        raise _bad(v, _field(struct, name), "[]string")
    return [_str(s, struct, name) for s in v]


def _manifest(v: Any, struct: str, name: str, go_type: str) -> dict[str, Any] | None:
    if v is None:
        return None
    if not isinstance(v, Mapping):
        raise _bad(v, _field(struct, name), go_type)
    return dict(v)


def _node_list(v: Any, struct: str, name: str) -> list[dict[str, Any]] | None:
    m = _manifest(v, struct, name, "v1.NodeList")
    if m is None:
        return None
    items = _get(m, "items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise _bad(items, _field("NodeList", "items"), "[]v1.Node")
    out = []
    for it in items:
        node = _manifest(it, "NodeList", "items", "v1.Node")
        out.append(node if node is not None else {})
    return out


# --- filter / prioritize -----------------------------------------------------------------------------


@attrs.frozen
class ExtenderArgs:
    """What filter and prioritize verbs receive: the pod and the candidate nodes — full Node manifests
    (``nodes``) when the extender is not nodeCacheCapable, else only their names (``node_names``)."""

    pod: Mapping[str, Any]
    nodes: Sequence[Mapping[str, Any]] | None = None
    node_names: Sequence[str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"Pod": self.pod,
                "Nodes": None if self.nodes is None else {"metadata": {}, "items": self.nodes},
                "NodeNames": self.node_names}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderArgs:
        m = _object(doc, "v1.ExtenderArgs")
        pod = _manifest(_get(m, "Pod"), "ExtenderArgs", "Pod", "v1.Pod")
        return cls(pod if pod is not None else {}, _node_list(_get(m, "Nodes"), "ExtenderArgs", "Nodes"),
                   _str_list(_get(m, "NodeNames"), "ExtenderArgs", "NodeNames"))


@attrs.frozen
class ExtenderFilterResult:
    """A filter verb's answer: the nodes that pass (``nodes`` or ``node_names``), the nodes that fail
    with a message (``failed_nodes``; ``failed_and_unresolvable_nodes`` when preemption cannot help, which
    takes precedence), or an ``error`` that fails the whole scheduling attempt."""

    nodes: list[dict[str, Any]] | None = None
    node_names: list[str] | None = None
    failed_nodes: dict[str, str] | None = None
    failed_and_unresolvable_nodes: dict[str, str] | None = None
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"Nodes": None if self.nodes is None else {"metadata": {}, "items": self.nodes},
                "NodeNames": self.node_names,
                "FailedNodes": self.failed_nodes,
                "FailedAndUnresolvableNodes": self.failed_and_unresolvable_nodes,
                "Error": self.error}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderFilterResult:
        s = "ExtenderFilterResult"
        m = _object(doc, "v1.ExtenderFilterResult")
        return cls(_node_list(_get(m, "Nodes"), s, "Nodes"),
                   _str_list(_get(m, "NodeNames"), s, "NodeNames"),
                   _str_map(_get(m, "FailedNodes"), s, "FailedNodes", "v1.FailedNodesMap"),
                   _str_map(_get(m, "FailedAndUnresolvableNodes"), s, "FailedAndUnresolvableNodes",
                            "v1.FailedNodesMap"),
                   _str(_get(m, "Error"), s, "Error"))


@attrs.frozen
class HostPriority:
    """One node's score from a prioritize verb, in [0, MAX_EXTENDER_PRIORITY]."""

    host: str
    score: int

    def to_json(self) -> dict[str, Any]:
        return {"Host": self.host, "Score": self.score}


def host_priority_list_to_json(items: Sequence[HostPriority]) -> list[dict[str, Any]]:
    return [hp.to_json() for hp in items]


def host_priority_list_from_json(doc: Any) -> list[HostPriority]:
    """Decode a HostPriorityList (a JSON array; ``null`` is an empty list, as in Go)."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise _bad(doc, "Go value", "v1.HostPriorityList")
    out = []
    for item in doc:
        if item is None:
            out.append(HostPriority("", 0))
            continue
        if not isinstance(item, Mapping):
            raise _bad(item, "Go value", "v1.HostPriority")
        out.append(HostPriority(_str(_get(item, "Host"), "HostPriority", "Host"),
                                _int64(_get(item, "Score"), "HostPriority", "Score")))
    return out


# --- preemption -----------------------------------------------------------------------------------


@attrs.frozen
class MetaVictims:
    """Victims on one node named by pod UID (what nodeCacheCapable extenders exchange)."""

    pod_uids: tuple[str, ...] = ()
    num_pdb_violations: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"Pods": [{"UID": u} for u in self.pod_uids], "NumPDBViolations": self.num_pdb_violations}

    @classmethod
    def from_json(cls, doc: Any) -> MetaVictims | None:
        if doc is None:
            return None
        m = _object(doc, "v1.MetaVictims")
        pods = _get(m, "Pods")
        uids: list[str] = []
        if pods is not None:
            if not isinstance(pods, list):
                raise _bad(pods, _field("MetaVictims", "Pods"), "[]*v1.MetaPod")
            for p in pods:
                if p is None:
                    uids.append("")
                    continue
                if not isinstance(p, Mapping):
                    raise _bad(p, _field("MetaVictims", "Pods"), "v1.MetaPod")
                uids.append(_str(_get(p, "UID"), "MetaPod", "UID"))
        return cls(tuple(uids), _int64(_get(m, "NumPDBViolations"), "MetaVictims", "NumPDBViolations"))


@attrs.frozen
class WireVictims:
    """Victims on one node as full pod manifests (sent to extenders that are not nodeCacheCapable)."""

    pods: tuple[Mapping[str, Any], ...] = ()
    num_pdb_violations: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"Pods": list(self.pods), "NumPDBViolations": self.num_pdb_violations}

    @classmethod
    def from_json(cls, doc: Any) -> WireVictims | None:
        if doc is None:
            return None
        m = _object(doc, "v1.Victims")
        pods = _get(m, "Pods")
        out: list[dict[str, Any]] = []
        if pods is not None:
            if not isinstance(pods, list):
                raise _bad(pods, _field("Victims", "Pods"), "[]*v1.Pod")
            for p in pods:
                out.append(_manifest(p, "Victims", "Pods", "v1.Pod") or {})
        return cls(tuple(out), _int64(_get(m, "NumPDBViolations"), "Victims", "NumPDBViolations"))


@attrs.frozen
class ExtenderPreemptionArgs:
    """What a preempt verb receives: the preemptor and, per candidate node, the victims the scheduler
    chose — as full pods (``node_name_to_victims``) or, for nodeCacheCapable extenders, as UIDs
    (``node_name_to_meta_victims``)."""

    pod: Mapping[str, Any]
    node_name_to_victims: dict[str, WireVictims] | None = None
    node_name_to_meta_victims: dict[str, MetaVictims] | None = None

    def to_json(self) -> dict[str, Any]:
        v = self.node_name_to_victims
        mv = self.node_name_to_meta_victims
        return {"Pod": self.pod,
                "NodeNameToVictims": None if v is None else {k: x.to_json() for k, x in v.items()},
                "NodeNameToMetaVictims": None if mv is None else {k: x.to_json() for k, x in mv.items()}}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderPreemptionArgs:
        s = "ExtenderPreemptionArgs"
        m = _object(doc, "v1.ExtenderPreemptionArgs")
        pod = _manifest(_get(m, "Pod"), s, "Pod", "v1.Pod") or {}
        raw_v = _manifest(_get(m, "NodeNameToVictims"), s, "NodeNameToVictims", "map[string]*v1.Victims")
        raw_mv = _manifest(_get(m, "NodeNameToMetaVictims"), s, "NodeNameToMetaVictims",
                           "map[string]*v1.MetaVictims")
        victims = None if raw_v is None else {k: WireVictims.from_json(x) or WireVictims()
                                              for k, x in raw_v.items()}
        meta = None if raw_mv is None else {k: MetaVictims.from_json(x) or MetaVictims()
                                            for k, x in raw_mv.items()}
        return cls(pod, victims, meta)


@attrs.frozen
class ExtenderPreemptionResult:
    """A preempt verb's answer: per node it keeps, the victims (by UID) it agrees to; a node left out is
    no longer a candidate. A node mapped to null has no victims."""

    node_name_to_meta_victims: dict[str, MetaVictims | None] | None = None

    def to_json(self) -> dict[str, Any]:
        mv = self.node_name_to_meta_victims
        return {"NodeNameToMetaVictims": None if mv is None else
                {k: (None if x is None else x.to_json()) for k, x in mv.items()}}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderPreemptionResult:
        m = _object(doc, "v1.ExtenderPreemptionResult")
        raw = _manifest(_get(m, "NodeNameToMetaVictims"), "ExtenderPreemptionResult", "NodeNameToMetaVictims",
                        "map[string]*v1.MetaVictims")
        return cls(None if raw is None else {str(k): MetaVictims.from_json(x) for k, x in raw.items()})


# --- binding --------------------------------------------------------------------------------------


@attrs.frozen
class ExtenderBindingArgs:
    """What a bind verb receives: the pod (name, namespace, UID) and the node chosen for it."""

    pod_name: str
    pod_namespace: str
    pod_uid: str
    node: str

    def to_json(self) -> dict[str, Any]:
        return {"PodName": self.pod_name, "PodNamespace": self.pod_namespace, "PodUID": self.pod_uid,
                "Node": self.node}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderBindingArgs:
        s = "ExtenderBindingArgs"
        m = _object(doc, "v1.ExtenderBindingArgs")
        return cls(_str(_get(m, "PodName"), s, "PodName"), _str(_get(m, "PodNamespace"), s, "PodNamespace"),
                   _str(_get(m, "PodUID"), s, "PodUID"), _str(_get(m, "Node"), s, "Node"))


@attrs.frozen
class ExtenderBindingResult:
    """A bind verb's answer: an empty ``error`` means the pod is bound."""

    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"Error": self.error}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderBindingResult:
        m = _object(doc, "v1.ExtenderBindingResult")
        return cls(_str(_get(m, "Error"), "ExtenderBindingResult", "Error"))
