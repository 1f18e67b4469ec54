"""The autoscale plan's value types and its JSON (see docs/autoscaler-simulation.md)."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class ScaleUpOption:
    """A node group that can help: the nodes it would add and the pending pods they would take.

    The chosen option, as executed, may also carry ``balanced`` — the nodes each group gets when the scale-up is
    split among similar groups (``nodes`` is then their sum) — and ``capped_from``/``capped_by`` when the
    cluster-wide limits cut its node count (from the option's, for that reason)."""

    node_group: str
    nodes: int
    pods: tuple[str, ...]
    #: why a group is left out or capped (``max size reached``, ``capped at maxSize 10``), "" when it is not
    note: str = ""
    balanced: tuple[tuple[str, int], ...] = ()
    capped_from: int = 0
    capped_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"nodeGroup": self.node_group, "nodes": self.nodes, "pods": list(self.pods)}
        if self.note:
            d["note"] = self.note
        return d

    def chosen_dict(self) -> dict[str, Any]:
        """The chosen option's JSON: ``nodeGroup``, ``nodes``, ``pods``, and ``balanced`` ([{nodeGroup, nodes}])
        when split, ``cappedFrom`` and ``cappedBy`` when the limits capped it."""
        d: dict[str, Any] = {"nodeGroup": self.node_group, "nodes": self.nodes, "pods": list(self.pods)}
        if self.balanced:
            d["balanced"] = [{"nodeGroup": g, "nodes": n} for g, n in self.balanced]
        if self.capped_by:
            d["cappedFrom"], d["cappedBy"] = self.capped_from, self.capped_by
        return d


@attrs.frozen
class Unhelpable:
    """A pending pod no node group can take, and why (each group's reason; the remedies when computed)."""

    pod: str
    reason: str
    groups: tuple[tuple[str, str], ...] = ()
    remedies: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"pod": self.pod, "reason": self.reason,
                             "nodeGroups": {g: r for g, r in self.groups}}
        if self.remedies:
            d["remedies"] = list(self.remedies)
        return d


@attrs.frozen
class ScaleDownCandidate:
    node: str
    node_group: str | None
    utilization: float
    #: where its pods would go
    moves: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "nodeGroup": self.node_group, "utilization": round(self.utilization, 4),
                "moves": {p: n for p, n in self.moves}}


@attrs.frozen
class Blocked:
    """A node that cannot be removed: the rule that blocks it (cluster-autoscaler's reason) and the detail."""

    node: str
    rule: str
    detail: str = ""
    node_group: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "nodeGroup": self.node_group, "rule": self.rule, "detail": self.detail}


@attrs.frozen
class Plan:
    """What cluster-autoscaler would do with the cluster: the scale-up and the scale-down, and what was assumed."""

    schedulable: tuple[tuple[str, str], ...] = ()
    options: tuple[ScaleUpOption, ...] = ()
    chosen: ScaleUpOption | None = None
    expander: tuple[str, ...] = ()
    unhelpable: tuple[Unhelpable, ...] = ()
    candidates: tuple[ScaleDownCandidate, ...] = ()
    blocked: tuple[Blocked, ...] = ()
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    #: with --enforce-node-group-min-size: the groups under their minSize and the nodes that bring them there
    min_size: tuple[ScaleUpOption, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "scaleUp": {
                "schedulableOnExistingNodes": {p: n for p, n in self.schedulable},
                "options": [o.to_dict() for o in self.options],
                "chosen": None if self.chosen is None else self.chosen.chosen_dict(),
                "expander": list(self.expander),
                "unhelpable": [u.to_dict() for u in self.unhelpable],
                "minSize": [{"nodeGroup": o.node_group, "nodes": o.nodes, "note": o.note} for o in self.min_size],
            },
            "scaleDown": {"candidates": [c.to_dict() for c in self.candidates],
                          "blocked": [b.to_dict() for b in self.blocked]},
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


__all__ = ["Blocked", "Plan", "ScaleDownCandidate", "ScaleUpOption", "Unhelpable"]
