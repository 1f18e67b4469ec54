"""What would make a pending pod fit: the value types (see docs/remedies.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

#: Kinds of remedy (Remedy.kind).
TOLERATE_TAINT = "tolerateTaint"
DROP_NODE_SELECTOR = "dropNodeSelector"
DROP_NODE_AFFINITY = "dropRequiredNodeAffinity"
RELAX_SPREAD = "relaxTopologySpread"
DROP_POD_AFFINITY = "dropPodAffinityTerm"
DROP_POD_ANTI_AFFINITY = "dropPodAntiAffinityTerm"
DROP_HOST_PORT = "dropHostPort"
LOWER_REQUESTS = "lowerRequests"
UNCORDON = "uncordonNode"
PREEMPT = "raisePriority"
COMBINATION = "combination"
NEW_NODE = "newNode"
KINDS = (TOLERATE_TAINT, DROP_NODE_SELECTOR, DROP_NODE_AFFINITY, RELAX_SPREAD, DROP_POD_AFFINITY,
         DROP_POD_ANTI_AFFINITY, DROP_HOST_PORT, LOWER_REQUESTS, UNCORDON, PREEMPT, COMBINATION, NEW_NODE)


@attrs.frozen
class Remedy:
    """One change that makes the pod fit somewhere, verified by running the real plugins with it applied."""

    kind: str
    #: the change in words: ``add the toleration dedicated=gpu:NoSchedule``
    change: str
    #: the change as data: per object changed, its ``target`` (kind, namespace, name) and ``patch``, JSON Patch
    #: operations (``kubectl patch --type json``); a new node has ``create: {fromTemplate: NAME}`` instead
    patches: list[dict[str, Any]]
    #: the Filter plugins whose rejection the change answers
    plugins: tuple[str, ...] = ()
    #: nodes that pass PreFilter and Filter with the change, among the nodes examined (``PodRemedies.examined``)
    nodes_opened: int = 0
    #: some of them (at most 5), by name
    nodes: tuple[str, ...] = ()
    #: where a full scheduling cycle (Filter, Score) puts the pod with the change; None when it would not fit
    lands_on: str | None = None
    #: the change was applied and the plugins re-run: the pod then fits (always true for a listed remedy)
    verified: bool = True
    #: the changes a combination is made of
    parts: tuple[str, ...] = ()
    #: raisePriority: the pods preemption would evict (upstream's choice of node and victims, PDBs counted)
    victims: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "change": self.change, "patches": self.patches,
                             "plugins": list(self.plugins), "nodesOpened": self.nodes_opened,
                             "nodes": list(self.nodes), "landsOn": self.lands_on, "verified": self.verified}
        if self.parts:
            d["parts"] = list(self.parts)
        if self.victims:
            d["victims"] = list(self.victims)
        return d


@attrs.frozen
class NodeShortfall:
    """How much of each resource a node lacks for the pod (``cpu 350m short``)."""

    node: str
    short: tuple[tuple[str, str], ...]
    #: other Filter plugins that reject the node as well
    also: tuple[str, ...] = ()

    def text(self) -> str:
        parts = ", ".join(f"{r} {q} short" for r, q in self.short)
        return f"{self.node}: {parts}" + (f" (also rejected by {', '.join(self.also)})" if self.also else "")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"node": self.node, "short": {r: q for r, q in self.short}}
        if self.also:
            d["alsoRejectedBy"] = list(self.also)
        return d


@attrs.frozen
class PodRemedies:
    """What would make one pending pod fit: cluster-wide facts in plain words, then the verified remedies."""

    pod: str
    #: upstream's message for the pod (``0/300 nodes are available: ...``)
    message: str = ""
    facts: tuple[str, ...] = ()
    remedies: tuple[Remedy, ...] = ()
    #: the nodes with the smallest resource shortfall (NodeResourcesFit), least short first
    shortfalls: tuple[NodeShortfall, ...] = ()
    #: rejections no remedy was computed for, each named: ``no remedy computed for VolumeBinding: ...``
    not_computed: tuple[str, ...] = ()
    #: Filter plugins rejecting the pod, with the number of examined nodes each rejects
    rejected_by: tuple[tuple[str, int], ...] = ()
    #: nodes examined (every Filter plugin run on each), out of ``nodes``
    examined: int = 0
    nodes: int = 0

    @property
    def sampled(self) -> bool:
        return self.examined < self.nodes

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "message": self.message, "facts": list(self.facts),
                "remedies": [r.to_dict() for r in self.remedies],
                "shortfalls": [s.to_dict() for s in self.shortfalls],
                "notComputed": list(self.not_computed),
                "rejectedBy": {p: n for p, n in self.rejected_by},
                "examinedNodes": self.examined, "nodes": self.nodes, "sampled": self.sampled}

    def record(self) -> dict[str, Any]:
        """What ``schedule --why --output json`` adds to the pod's record: ``facts``, ``remedies`` and ``why``
        (the rest of :meth:`to_dict`)."""
        d = self.to_dict()
        for k in ("pod", "message"):
            d.pop(k)
        return {"facts": d.pop("facts"), "remedies": d.pop("remedies"), "why": d}

    def records(self) -> list[dict[str, Any]]:
        """One flat record per remedy (for ``to_dataframe``)."""
        return [{"pod": self.pod, "kind": r.kind, "change": r.change, "nodesOpened": r.nodes_opened,
                 "landsOn": r.lands_on, "verified": r.verified, "plugins": ", ".join(r.plugins)}
                for r in self.remedies]

    def to_dataframe(self) -> Any:
        from scheduling_framework.report.notebook import to_dataframe

        return to_dataframe(self.records(), RECORD_COLUMNS)


RECORD_COLUMNS = ("pod", "kind", "change", "nodesOpened", "landsOn", "verified", "plugins")


def records(results: Sequence[PodRemedies]) -> list[dict[str, Any]]:
    return [rec for r in results for rec in r.records()]


__all__ = ["COMBINATION", "DROP_HOST_PORT", "DROP_NODE_AFFINITY", "DROP_NODE_SELECTOR", "DROP_POD_AFFINITY",
           "DROP_POD_ANTI_AFFINITY", "KINDS", "LOWER_REQUESTS", "NEW_NODE", "PREEMPT", "RELAX_SPREAD", "TOLERATE_TAINT",
           "RECORD_COLUMNS", "UNCORDON", "NodeShortfall", "PodRemedies", "Remedy", "records"]
