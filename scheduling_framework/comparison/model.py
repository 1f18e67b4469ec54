"""The comparison's value types: a side, each pod on each side, and the whole result with its views."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.report.notebook import to_dataframe

#: How the pending pods meet the cluster (see docs/compare.md).
SEQUENTIAL = "sequential"  # one after another, each placement visible to the next, as ``schedule`` runs them
INDEPENDENT = "independent"  # each pod alone against the starting cluster
MODES = (SEQUENTIAL, INDEPENDENT)
#: How ties among equal top scores are broken on side B.
ALIGN = "align"  # toward A's node when it is among B's top-scored nodes
SEED = "seed"  # with B's own draws, as ``schedule --seed`` does
TIE_BREAKS = (ALIGN, SEED)

#: Kinds of change of one pod (PodComparison.kind); "" = same outcome, node and devices.
MOVED = "moved"
NEWLY_UNSCHEDULABLE = "newlyUnschedulable"
NEWLY_SCHEDULABLE = "newlySchedulable"
OUTCOME = "outcome"  # any other change of outcome (Error, Preempted, Skipped)
DEVICES = "devices"  # same node, other devices for the pod's claims
#: Causes (PodComparison.cause).
OWN = "own"  # decided on the same cluster state on both sides: a difference of the sides' rules
EARLIER = "earlier"  # decided after earlier placements had already differed


@attrs.frozen
class Side:
    """One side of a comparison: the release, configuration and feature gates its scheduler follows.

    Each field left None is the default (the newest release, the default profile, the release's gates).
    ``config`` is a KubeSchedulerConfiguration file path, a parsed document, or a loaded configuration."""

    kubernetes_version: str | None = None
    config: Any = None
    feature_gates: str | Mapping[str, Any] | None = None
    #: how the side is named in output (default: "A" / "B" with what it follows)
    name: str = ""

    def describe(self, release: str) -> str:
        """``Kubernetes 1.35, config binpack.yaml, gates X=true``: what the side follows."""
        parts = [f"Kubernetes {release}"]
        if isinstance(self.config, (str, os.PathLike)):
            parts.append(f"config {os.fspath(self.config)}")
        elif self.config is not None:
            file = getattr(self.config, "file", None)
            parts.append(f"config {file}" if file else "a configuration document")
        if self.feature_gates:
            gates = self.feature_gates if isinstance(self.feature_gates, str) else ",".join(
                f"{k}={str(v).lower()}" for k, v in self.feature_gates.items())
            parts.append(f"feature gates {gates}")
        return ", ".join(parts)


@attrs.frozen
class PodSide:
    """A pod's outcome on one side."""

    outcome: str
    node: str | None = None
    nominated_node: str | None = None
    victims: tuple[str, ...] = ()
    message: str = ""
    #: the nodes that tied for the top total score when the choice among them was a random pick
    tied: tuple[str, ...] = ()
    #: the devices allocated to the pod's claims, "claim/request: driver/pool/device"
    devices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"outcome": self.outcome, "node": self.node}
        if self.nominated_node:
            d["nominatedNode"] = self.nominated_node
        if self.victims:
            d["victims"] = list(self.victims)
        if self.message and self.outcome != "Scheduled":
            d["message"] = self.message
        if self.tied:
            d["tiedNodes"] = list(self.tied)
        if self.devices:
            d["devices"] = list(self.devices)
        return d

    def brief(self) -> str:
        return f"{self.outcome} {self.node}" if self.node else self.outcome


@attrs.frozen
class PodComparison:
    """One pending pod on both sides.

    ``changed``: its outcome, node or devices differ and not only through tie-breaking; ``tie``: the two sides'
    choices differ (or would have, see ``why``) only among equally top-scored nodes, which is not counted as a
    change; ``kind``: how it changed (``moved``, ``newlyUnschedulable``, ``newlySchedulable``, ``outcome``,
    ``devices``; "" when the same); ``cause``: ``own`` (decided on the same cluster state on both sides) or
    ``earlier`` (decided after earlier placements had differed, the first of them ``diverged_after``);
    ``why``: see :func:`scheduling_framework.comparison.why.explain` (None when nothing differs)."""

    pod: str
    a: PodSide
    b: PodSide
    changed: bool = False
    tie: bool = False
    kind: str = ""
    cause: str | None = None
    diverged_after: str | None = None
    why: Mapping[str, Any] | None = None

    @property
    def plugins(self) -> list[str]:
        return list((self.why or {}).get("plugins", []))

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "a": self.a.to_dict(), "b": self.b.to_dict(), "changed": self.changed,
                "tie": self.tie, "kind": self.kind, "cause": self.cause, "divergedAfter": self.diverged_after,
                "why": None if self.why is None else dict(self.why)}

    def record(self) -> dict[str, Any]:
        ns, _, name = self.pod.rpartition("/")
        return {"pod": self.pod, "namespace": ns, "name": name, "aOutcome": self.a.outcome, "aNode": self.a.node,
                "bOutcome": self.b.outcome, "bNode": self.b.node, "changed": self.changed, "tie": self.tie,
                "kind": self.kind, "cause": self.cause, "plugins": self.plugins,
                "why": (self.why or {}).get("text", "")}


_RECORD_COLUMNS = ("pod", "namespace", "name", "aOutcome", "aNode", "bOutcome", "bNode", "changed", "tie", "kind",
                   "cause", "plugins", "why")


@attrs.frozen
class NodeChange:
    """A node whose pods differ at the end: pod count and requested cpu (millicores) / memory (bytes) on each
    side, beside its allocatable. In ``independent`` mode the counts are the pending pods each side would put
    there (each alone), and the requests are not given."""

    node: str
    a_pods: int
    b_pods: int
    a_cpu: int | None = None
    b_cpu: int | None = None
    a_memory: int | None = None
    b_memory: int | None = None
    allocatable: Mapping[str, int] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        def side(pods: int, cpu: int | None, mem: int | None) -> dict[str, Any]:
            d: dict[str, Any] = {"pods": pods}
            if cpu is not None:
                d["cpu"] = cpu
                d["memory"] = mem
            return d

        return {"node": self.node, "a": side(self.a_pods, self.a_cpu, self.a_memory),
                "b": side(self.b_pods, self.b_cpu, self.b_memory), "allocatable": dict(self.allocatable)}


@attrs.frozen(eq=False)
class Comparison:
    """What :func:`~scheduling_framework.comparison.compare` returns."""

    a: Mapping[str, Any]
    b: Mapping[str, Any]
    seed: int | None
    mode: str
    ties: str
    pods: tuple[PodComparison, ...]
    nodes: tuple[NodeChange, ...]
    summary: Mapping[str, Any]
    config_changes: tuple[Mapping[str, Any], ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def changed(self) -> list[PodComparison]:
        """The pods counted as changed (ties left out)."""
        return [p for p in self.pods if p.changed]

    def pod(self, key: str) -> PodComparison:
        for p in self.pods:
            if p.pod == key:
                return p
        raise KeyError(key)

    def to_dict(self) -> dict[str, Any]:
        """The ``compare --output json`` document (schema in docs/compare.md)."""
        return {"a": dict(self.a), "b": dict(self.b), "seed": self.seed, "mode": self.mode, "ties": self.ties,
                "configChanges": [dict(c) for c in self.config_changes],
                "pods": [p.to_dict() for p in self.pods], "nodes": [n.to_dict() for n in self.nodes],
                "summary": dict(self.summary), "warnings": list(self.warnings), "seconds": round(self.seconds, 6)}

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per pod (see :data:`_RECORD_COLUMNS`)."""
        return [p.record() for p in self.pods]

    def to_dataframe(self) -> Any:
        """:meth:`to_records` as a pandas DataFrame (PandasMissingError, an ImportError, without pandas)."""
        return to_dataframe(self.to_records(), _RECORD_COLUMNS)


def side_info(label: str, side: Side, release: str, config_file: str | None, explicit_gates: Mapping[str, bool],
              ) -> dict[str, Any]:
    return {"name": side.name or label, "kubernetesVersion": release, "config": config_file,
            "featureGates": dict(explicit_gates), "description": side.describe(release)}


def changed_kinds(pods: Sequence[PodComparison]) -> dict[str, int]:
    out = {MOVED: 0, NEWLY_UNSCHEDULABLE: 0, NEWLY_SCHEDULABLE: 0, OUTCOME: 0, DEVICES: 0}
    for p in pods:
        if p.changed:
            out[p.kind] = out.get(p.kind, 0) + 1
    return out


__all__ = ["ALIGN", "DEVICES", "EARLIER", "INDEPENDENT", "MODES", "MOVED", "NEWLY_SCHEDULABLE",
           "NEWLY_UNSCHEDULABLE", "OUTCOME", "OWN", "SEED", "SEQUENTIAL", "TIE_BREAKS", "Comparison", "NodeChange",
           "PodComparison", "PodSide", "Side", "changed_kinds", "side_info"]
