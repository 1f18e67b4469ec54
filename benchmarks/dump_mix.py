"""Rewrite a ``gen_dump.py`` JSON dump into a heavier constraint mix, deterministically.

    python -m benchmarks.dump_mix --mix heavy c500.json > c500-heavy.json
    python -m benchmarks.dump_mix --mix hard-zone c500.json -o c500-hard-zone.json

A **Deployment** is the set of pods sharing a namespace and an ``app.kubernetes.io/name`` label whose controller
ownerReference is a ReplicaSet; Deployments are numbered 0, 1, 2... in order of first appearance in the dump
(for ``gen_dump.py``, its own Deployment numbers). A change applies to every pod of a chosen Deployment, bound
and pending alike (the bound ones then count in the spreading and affinity of the pending ones, as in a
cluster where the Deployment was created with that spec). DaemonSet pods, and every other item, are left as
they were. Each mix keeps what the pods already had unless said:

* ``hard-zone``: every Deployment with a zone spread constraint (``topology.kubernetes.io/zone``) gets
  ``whenUnsatisfiable: DoNotSchedule`` instead of ``ScheduleAnyway``.
* ``hostname-spread``: 1 Deployment in 3 (number % 3 == 1) gets a topologySpreadConstraint maxSkew 1 on
  ``kubernetes.io/hostname``, selecting its own ``app.kubernetes.io/name``, with ``matchLabelKeys:
  [pod-template-hash]``; ``ScheduleAnyway``, except 1 in 6 of them (the 1st, 7th, 13th...) ``DoNotSchedule``.
* ``required-anti``: 1 Deployment in 7 (number % 7 == 0: in a ``gen_dump.py`` dump, exactly the ones with the
  preferred hostname anti-affinity) gets a required podAntiAffinity to itself on ``kubernetes.io/hostname``
  instead of the preferred one (a preferred term to itself on the hostname is removed).
* ``cross-affinity``: 1 Deployment in 4 of each namespace (the 2nd, 6th, 10th... of its namespace: a global
  number % 4 would only ever pick 2 of ``gen_dump.py``'s 8 namespaces, which it deals round-robin) gets a
  preferred podAffinity (weight 50, ``topology.kubernetes.io/zone``) to the pods of the previous Deployment of
  its namespace (matchLabels on that one's ``app.kubernetes.io/name``); 1 in 20 (the 2nd, 22nd, 42nd... of its
  namespace) also gets a required podAffinity of the same kind, when that previous Deployment has at least one
  bound pod (so the term can be met).
* ``heavy``: all of the above together.

The whole dump is read into memory (orjson when installed, else json): about five times the size of a
``gen_dump.py`` file (measured at 20 nodes; some 0.8 GB at 500 nodes). The output
is compact JSON, items in the same order; what each change touched is printed on standard error.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is optional
    orjson = None  # type: ignore[assignment]

NAME = "app.kubernetes.io/name"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
TERMINAL = ("Succeeded", "Failed")


@dataclass
class Deployment:
    """The pods of one Deployment in the dump (the dicts themselves: changes are made in place)."""

    number: int  # order of first appearance in the dump
    namespace: str
    name: str  # its app.kubernetes.io/name
    ordinal: int  # order of first appearance among its namespace's Deployments
    previous: Deployment | None  # the namespace's Deployment that appeared just before it
    pods: list[dict[str, Any]] = field(default_factory=list)
    bound: int = 0  # pods with spec.nodeName, not finished


@dataclass
class Change:
    """What one change did: Deployments and pods touched."""

    what: str
    deployments: int = 0
    pods: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def touch(self, dep: Deployment) -> None:
        self.deployments += 1
        self.pods += len(dep.pods)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def __str__(self) -> str:
        skipped = "".join(f"; {n} Deployments skipped: {why}" for why, n in self.skipped.items())
        return f"{self.what}: {self.deployments} Deployments, {self.pods} pods{skipped}"


def deployments(items: Iterable[Any]) -> list[Deployment]:
    """The Deployments of a dump's items, numbered in order of first appearance."""
    found: dict[tuple[str, str], Deployment] = {}
    last_of_namespace: dict[str, Deployment] = {}
    per_namespace: dict[str, int] = {}
    for it in items:
        if not isinstance(it, dict) or it.get("kind") != "Pod":
            continue
        meta = it.get("metadata") or {}
        name = (meta.get("labels") or {}).get(NAME)
        owner = next((o for o in meta.get("ownerReferences") or [] if isinstance(o, dict) and o.get("controller")),
                     None)
        if not isinstance(name, str) or owner is None or owner.get("kind") != "ReplicaSet":
            continue
        ns = meta.get("namespace") or "default"
        dep = found.get((ns, name))
        if dep is None:
            dep = Deployment(len(found), ns, name, per_namespace.get(ns, 0), last_of_namespace.get(ns))
            found[(ns, name)] = dep
            last_of_namespace[ns] = dep
            per_namespace[ns] = dep.ordinal + 1
        dep.pods.append(it)
        spec = it.get("spec") or {}
        if spec.get("nodeName") and (it.get("status") or {}).get("phase") not in TERMINAL:
            dep.bound += 1
    return list(found.values())


def _spec(pod: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = pod.setdefault("spec", {})
    return spec


def _selector(name: str) -> dict[str, Any]:
    return {"matchLabels": {NAME: name}}


def hard_zone(deps: list[Deployment]) -> list[Change]:
    """Zone spread constraints: DoNotSchedule instead of ScheduleAnyway."""
    ch = Change("hard-zone (zone spread ScheduleAnyway -> DoNotSchedule)")
    for dep in deps:
        changed = False
        for pod in dep.pods:
            for c in _spec(pod).get("topologySpreadConstraints") or []:
                if c.get("topologyKey") == ZONE and c.get("whenUnsatisfiable", "DoNotSchedule") == "ScheduleAnyway":
                    c["whenUnsatisfiable"] = "DoNotSchedule"
                    changed = True
        if changed:
            ch.touch(dep)
    return [ch]


def hostname_spread(deps: list[Deployment]) -> list[Change]:
    """1 in 3: a hostname spread constraint on itself (1 in 6 of those DoNotSchedule)."""
    soft = Change("hostname-spread (hostname spread, ScheduleAnyway)")
    hard = Change("hostname-spread (hostname spread, DoNotSchedule)")
    chosen = 0
    for dep in deps:
        if dep.number % 3 != 1:
            continue
        when = "DoNotSchedule" if chosen % 6 == 0 else "ScheduleAnyway"
        chosen += 1
        constraint = {"labelSelector": _selector(dep.name), "matchLabelKeys": ["pod-template-hash"], "maxSkew": 1,
                      "topologyKey": HOSTNAME, "whenUnsatisfiable": when}
        for pod in dep.pods:
            spec = _spec(pod)
            spec["topologySpreadConstraints"] = [*(spec.get("topologySpreadConstraints") or []),
                                                 copy.deepcopy(constraint)]
        (hard if when == "DoNotSchedule" else soft).touch(dep)
    return [soft, hard]


def required_anti(deps: list[Deployment]) -> list[Change]:
    """1 in 7: required hostname anti-affinity to itself, instead of the preferred one."""
    ch = Change("required-anti (required hostname anti-affinity to itself)")
    replaced = 0
    for dep in deps:
        if dep.number % 7 != 0:
            continue
        term = {"labelSelector": _selector(dep.name), "topologyKey": HOSTNAME}
        for pod in dep.pods:
            anti = _spec(pod).setdefault("affinity", {}).setdefault("podAntiAffinity", {})
            preferred = anti.get(PREFERRED) or []
            kept = [w for w in preferred if (w.get("podAffinityTerm") or {}) != term]
            if len(kept) != len(preferred):
                replaced += 1
            if kept:
                anti[PREFERRED] = kept
            else:
                anti.pop(PREFERRED, None)
            required = anti.setdefault(REQUIRED, [])
            if term not in required:
                required.append(copy.deepcopy(term))
        ch.touch(dep)
    if replaced:
        ch.what += f", replacing the preferred one in {replaced} pods"
    return [ch]


def cross_affinity(deps: list[Deployment]) -> list[Change]:
    """1 in 4 of each namespace: preferred zone affinity to the namespace's previous Deployment; 1 in 20 also a
    required one (when that Deployment has a bound pod)."""
    pref = Change("cross-affinity (preferred zone affinity to the previous Deployment)")
    req = Change("cross-affinity (required zone affinity to the previous Deployment)")
    for dep in deps:
        if dep.ordinal % 4 != 1:
            continue
        prev = dep.previous
        if prev is None:  # not reached: ordinal 1 and up always have one
            pref.skip("no previous Deployment in the namespace")
            continue
        term = {"labelSelector": _selector(prev.name), "topologyKey": ZONE}
        required = dep.ordinal % 20 == 1
        if required and not prev.bound:
            req.skip("the previous Deployment has no bound pod")
            required = False
        for pod in dep.pods:
            aff = _spec(pod).setdefault("affinity", {}).setdefault("podAffinity", {})
            aff[PREFERRED] = [*(aff.get(PREFERRED) or []), {"podAffinityTerm": copy.deepcopy(term), "weight": 50}]
            if required:
                aff[REQUIRED] = [*(aff.get(REQUIRED) or []), copy.deepcopy(term)]
        pref.touch(dep)
        if required:
            req.touch(dep)
    return [pref, req]


MIXES: dict[str, tuple[Callable[[list[Deployment]], list[Change]], ...]] = {
    "hard-zone": (hard_zone,),
    "hostname-spread": (hostname_spread,),
    "required-anti": (required_anti,),
    "cross-affinity": (cross_affinity,),
    "heavy": (hard_zone, hostname_spread, required_anti, cross_affinity),
}


def apply_mix(doc: dict[str, Any], mix: str) -> list[Change]:
    """Change ``doc`` (a List dump) in place; what each change touched."""
    if mix not in MIXES:
        raise ValueError(f"unknown mix {mix!r} (known: {', '.join(MIXES)})")
    items = doc.get("items")
    if not isinstance(items, list):
        raise ValueError("not a List dump: no top-level items array")
    deps = deployments(items)
    changes: list[Change] = []
    for fn in MIXES[mix]:
        changes += fn(deps)
    return changes


def load(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    doc = orjson.loads(data) if orjson is not None else json.loads(data)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON object (a kubectl List dump)")
    return doc


def _dumps(obj: Any) -> bytes:
    if orjson is not None:
        return orjson.dumps(obj)
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def write(doc: dict[str, Any], out: BinaryIO) -> None:
    """Compact JSON, the top-level keys in their order, the items written one at a time."""
    out.write(b"{")
    for i, (k, v) in enumerate(doc.items()):
        out.write((b"," if i else b"") + _dumps(k) + b":")
        if k == "items" and isinstance(v, list):
            out.write(b"[")
            for j, it in enumerate(v):
                out.write((b",\n" if j else b"\n") + _dumps(it))
            out.write(b"\n]")
        else:
            out.write(_dumps(v))
    out.write(b"}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.dump_mix", description=__doc__.splitlines()[0])
    ap.add_argument("--mix", required=True, choices=list(MIXES), help="the constraint mix")
    ap.add_argument("dump", type=Path, help="a gen_dump.py (kubectl get nodes,pods -A -o json) dump")
    ap.add_argument("-o", "--output", type=Path, metavar="FILE", help="write there (default: standard output)")
    args = ap.parse_args(argv)
    if not args.dump.is_file():
        ap.error(f"{args.dump}: no such file")
    try:
        doc = load(args.dump)
        changes = apply_mix(doc, args.mix)
    except ValueError as e:  # orjson.JSONDecodeError and json.JSONDecodeError are ValueErrors
        print(f"dump_mix: {args.dump}: {e}", file=sys.stderr)
        return 1
    for ch in changes:
        print(f"dump_mix {args.mix}: {ch}", file=sys.stderr)
    if args.output is not None:
        with open(args.output, "wb") as f:
            write(doc, f)
    else:
        write(doc, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
