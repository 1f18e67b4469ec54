"""The scenario file: a starting cluster, a configuration and a timeline of operations.

A scenario is parsed once into plain, picklable data: ``config:`` file references are read and inlined relative
to the scenario file, so a scenario travels by content to another process or machine (sweeps). A ``cluster:``
file (a dump of any size) is kept as a :class:`ClusterFile` reference instead, read streamed as ``schedule
--cluster`` reads it, once per process (:func:`~scheduling_framework.scenario.io.load_cluster_file`): a scenario
holding 150,000 pods stays cheap to copy to sweep workers. Every validation error names the field path.

Schema (``kind: Scenario``)::

    name: str                       # optional; defaults to the file name
    seed: int                       # tie-breaking seed (default 0)
    cluster: PATH | [manifests]     # optional starting cluster (a kubectl dump, a List, or manifests)
    config: PATH | {KubeSchedulerConfiguration} | null
    kubernetesVersion: "1.N"        # optional; the release whose scheduler to follow (default the newest)
    featureGates: {NAME: bool}      # optional; gates of that release (docs/versions.md)
    templates:
      nodes: {NAME: Node manifest}
      pods:  {NAME: Pod manifest}
    steps:                          # run in order; after each step the scheduler runs until nothing is left to try
    - op: createNodes     count: N  template: NAME  [namePrefix: P]
    - op: createPods      count: N  template: NAME  [namePrefix: P] [namespace: NS]
    - op: deletePods      names: [NS/NAME, ...] | namePrefix: P [count: N]
    - op: deleteNodes     names: [NAME, ...] | namePrefix: P [count: N]  [evictedPods: recreate|delete]
    - op: cordonNodes     names: [...] | namePrefix: P [count: N]
    - op: uncordonNodes   names: [...] | namePrefix: P [count: N]
    - op: wait            seconds: S     # virtual time passes (backoffs expire)

Op names follow upstream scheduler_perf's (createNodes, createPods, deletePods, sleep ~ wait).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from scheduling_framework.errors import SchedulingFrameworkError, brief_str
from scheduling_framework.scenario.io import ClusterFile as ClusterFile  # (re-exported: its former home)

OPS = ("createNodes", "createPods", "deletePods", "deleteNodes", "cordonNodes", "uncordonNodes", "wait")
SELECTING_OPS = ("deletePods", "deleteNodes", "cordonNodes", "uncordonNodes")
MAX_COUNT = 1_000_000


class ScenarioError(SchedulingFrameworkError, ValueError):
    """A scenario or sweep file is invalid; the message lists every problem with its field path."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        super().__init__(f"{source}: " + "; ".join(self.problems))

    def __reduce__(self) -> tuple[Any, ...]:  # travels between processes (sweep workers)
        return (type(self), (self.source, self.problems))


@attrs.frozen
class Step:
    """One operation of the timeline (see the module docstring for the fields of each op)."""

    op: str
    count: int = 0
    template: str = ""
    name_prefix: str = ""
    namespace: str = "default"
    names: tuple[str, ...] = ()
    seconds: float = 0.0
    evicted_pods: str = "recreate"

    def describe(self) -> str:
        if self.op == "wait":
            return f"wait {self.seconds:g}s"
        if self.op in ("createNodes", "createPods"):
            return f"{self.op} {self.count} x {self.template}"
        what = ",".join(self.names) if self.names else f"{self.name_prefix}*"
        return f"{self.op} {what}" + (f" (count {self.count})" if self.count and not self.names else "")


@attrs.frozen
class Scenario:
    """A parsed scenario: manifests as plain mappings, the starting cluster inline (``cluster``) or as a file
    reference (``cluster_file``, then ``cluster`` is empty); ``replay.starting_cluster`` reads either."""

    name: str
    seed: int
    cluster: tuple[Mapping[str, Any], ...]
    config: Mapping[str, Any] | None
    node_templates: Mapping[str, Mapping[str, Any]]
    pod_templates: Mapping[str, Mapping[str, Any]]
    steps: tuple[Step, ...]
    #: the Kubernetes release whose behaviour to follow (None: the newest) and gate overrides
    kubernetes_version: str | None = None
    feature_gates: Mapping[str, bool] | None = None
    #: the starting cluster's file, when ``cluster:`` named one (read when the replay starts, once per process)
    cluster_file: ClusterFile | None = None


def load_scenario(path: str | os.PathLike[str], *, strict: bool = False) -> Scenario:
    """Read and validate a scenario file (file references resolved relative to it); ``strict`` as for
    :func:`scenario_from_dict`."""
    from scheduling_framework.scenario.io import read_yaml_mapping

    p = os.fspath(path)
    doc = read_yaml_mapping(p, "scenario")
    default_name = os.path.splitext(os.path.basename(p))[0]
    return scenario_from_dict(doc, base_dir=os.path.dirname(os.path.abspath(p)), source=p, default_name=default_name,
                              strict=strict)


def scenario_from_dict(doc: Mapping[str, Any], base_dir: str = ".", source: str = "<scenario>",
                       default_name: str = "scenario", *, strict: bool = False) -> Scenario:
    """Validate a scenario mapping; raises ScenarioError listing every problem with its field path.

    Fields the Kubernetes API does not define, in the cluster's manifests or the templates, are left for the
    replay to report as warnings; ``strict=True`` makes each a problem here (``templates.pods.p: Pod default/p:
    unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)``), as ``kubectl --validate=strict``.
    """
    problems: list[str] = []
    if not isinstance(doc, Mapping):
        raise ScenarioError(source, [f"expected a mapping, got {type(doc).__name__}"])
    known = {"apiVersion", "kind", "name", "seed", "cluster", "config", "templates", "steps", "kubernetesVersion",
             "featureGates"}
    for k in doc:
        if k not in known:
            problems.append(f"{k}: Unsupported field (expected one of {', '.join(sorted(known))})")
    kind = doc.get("kind", "Scenario")
    if kind != "Scenario":
        problems.append(f'kind: Unsupported value: "{kind}" (expected "Scenario")')
    name = doc.get("name", default_name)
    if not isinstance(name, str) or not name:
        problems.append("name: Invalid value: expected a non-empty string")
        name = default_name
    seed = _int(doc.get("seed", 0), "seed", problems, minimum=0)
    cluster, cluster_file = _cluster(doc.get("cluster"), base_dir, problems, strict)
    release, gates = _release(doc.get("kubernetesVersion"), doc.get("featureGates"), problems)
    config = _config(doc.get("config"), base_dir, problems, release, gates)
    node_t, pod_t = _templates(doc.get("templates", {}), problems, strict)
    steps = _steps(doc.get("steps", []), node_t, pod_t, problems)
    if problems:
        raise ScenarioError(source, problems)
    return Scenario(name, seed, cluster, config, node_t, pod_t, steps, release, gates, cluster_file)


def with_release(sc: Scenario, kubernetes_version: str | None, feature_gates: str | None) -> Scenario:
    """``sc`` following another release and/or other gates (the command line's overrides), validated."""
    from scheduling_framework.config import load_config
    from scheduling_framework.features import FeatureGates

    fg = FeatureGates.for_release(kubernetes_version if kubernetes_version is not None else sc.kubernetes_version,
                                  feature_gates if feature_gates is not None else sc.feature_gates)
    if sc.config is not None:
        load_config(sc.config, feature_gates=fg)
    return attrs.evolve(sc, kubernetes_version=fg.release, feature_gates=dict(fg.overrides) or None)


def _release(version: Any, gates: Any, problems: list[str]) -> tuple[str | None, Mapping[str, bool] | None]:
    from scheduling_framework.features import FeatureGateError, FeatureGates

    if version is not None and not isinstance(version, str):
        problems.append(f'kubernetesVersion: Invalid value: {version!r}: expected a string such as "1.35"')
        return None, None
    if gates is not None and not isinstance(gates, Mapping):
        problems.append("featureGates: Invalid value: expected a mapping of gate name to true/false")
        return version, None
    try:
        fg = FeatureGates.for_release(version, gates)
    except SchedulingFrameworkError as e:
        problems.append(f"{'featureGates' if isinstance(e, FeatureGateError) else 'kubernetesVersion'}: {e}")
        return None, None
    return (fg.release if version is not None else None), (dict(fg.overrides) if gates else None)


def _int(v: Any, path: str, problems: list[str], minimum: int = 0, maximum: int = MAX_COUNT) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        problems.append(f"{path}: Invalid value: {_short(v)}: expected an integer")
        return minimum
    if not minimum <= v <= maximum:
        problems.append(f"{path}: Invalid value: {v}: must be between {minimum} and {maximum}")
        return minimum
    return v


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _cluster(v: Any, base_dir: str, problems: list[str],
             strict: bool = False) -> tuple[tuple[Mapping[str, Any], ...], ClusterFile | None]:
    """``(manifests, None)`` for an inline list, ``((), ClusterFile)`` for a file (a path relative to ``base_dir``,
    or a reference a sweep made); either is parsed once here, so that a broken cluster is reported when the
    scenario is read, not mid-sweep (a file's parse is cached for the replay)."""
    from scheduling_framework.scenario.io import cluster_file, cluster_problem, load_cluster_file

    if v is None:
        return (), None
    if isinstance(v, str | ClusterFile):
        path = v.path if isinstance(v, ClusterFile) else os.path.abspath(os.path.join(base_dir, v))
        try:
            ref = v if isinstance(v, ClusterFile) else cluster_file(path)
            load_cluster_file(ref, strict)
        except SchedulingFrameworkError as e:
            problems.append(cluster_problem(path, e))
            return (), None
        return (), ref
    if not isinstance(v, list):
        problems.append("cluster: Invalid value: expected a file path or a list of manifests")
        return (), None
    out = []
    for i, d in enumerate(v):
        if not isinstance(d, Mapping):
            problems.append(f"cluster[{i}]: Invalid value: expected an object manifest")
        else:
            out.append(d)
    from scheduling_framework.ingest.cluster import cluster_from_documents

    try:
        cluster_from_documents(out, strict=strict)
    except SchedulingFrameworkError as e:
        problems.append(f"cluster: {e}")
    return tuple(out), None


def _config(v: Any, base_dir: str, problems: list[str], release: str | None = None,
            gates: Mapping[str, bool] | None = None) -> Mapping[str, Any] | None:
    from scheduling_framework.config import load_config
    from scheduling_framework.config.expand import expand_profile
    from scheduling_framework.config.loader import read_config_file
    from scheduling_framework.registry import default_registry

    if v is None:
        return None
    file = None
    if isinstance(v, str):
        file = os.path.join(base_dir, v)
        try:
            v = read_config_file(file)
        except SchedulingFrameworkError as e:
            problems.append(f"config: {e}")
            return None
    if not isinstance(v, Mapping):
        problems.append("config: Invalid value: expected a file path or a KubeSchedulerConfiguration mapping")
        return None
    try:
        cfg = load_config(v, kubernetes_version=release, feature_gates=gates)
        if file is not None:
            # a file's plugins exist (in the replay's registry): a misspelt one is named now, with the file and
            # field path, not when the replay starts (an inline or a sweep's inlined configuration: then)
            cfg = attrs.evolve(cfg, file=file)
            for profile in cfg.profiles:
                expand_profile(profile, default_registry().points_of, cfg.kubernetes_version, config=cfg)
    except SchedulingFrameworkError as e:
        problems.append(f"config: {e}")
        return None
    return v


def _templates(v: Any, problems: list[str],
               strict: bool = False) -> tuple[dict[str, Mapping[str, Any]], dict[str, Mapping[str, Any]]]:
    from scheduling_framework.api.node import Node
    from scheduling_framework.api.pod import Pod

    nodes: dict[str, Mapping[str, Any]] = {}
    pods: dict[str, Mapping[str, Any]] = {}
    if not isinstance(v, Mapping):
        problems.append("templates: Invalid value: expected a mapping with 'nodes' and 'pods'")
        return nodes, pods
    for k in v:
        if k not in ("nodes", "pods"):
            problems.append(f"templates.{k}: Unsupported field (expected nodes or pods)")
    for group, out, cls, kind in (("nodes", nodes, Node, "Node"), ("pods", pods, Pod, "Pod")):
        entries = v.get(group, {}) or {}
        if not isinstance(entries, Mapping):
            problems.append(f"templates.{group}: Invalid value: expected a mapping of name to manifest")
            continue
        for name, manifest in entries.items():
            path = f"templates.{group}.{name}"
            if not isinstance(manifest, Mapping):
                problems.append(f"{path}: Invalid value: expected a {kind} manifest")
                continue
            m = copy.deepcopy(dict(manifest))
            m.setdefault("apiVersion", "v1")
            m.setdefault("kind", kind)
            meta = m.setdefault("metadata", {})
            if isinstance(meta, dict):
                meta.setdefault("name", str(name))
            if strict:
                problems.extend(f"{path}: {ref}: {u}" for ref, u in _unknown(m, kind))
            try:
                # Unknown fields are not warned of here: the replay reports them once per template.
                cls.from_dict(m, strict=None)
            except SchedulingFrameworkError as e:
                problems.append(f"{path}: {e}")
                continue
            out[str(name)] = m
    return nodes, pods


def _unknown(manifest: Mapping[str, Any], kind: str) -> list[tuple[str, str]]:
    from scheduling_framework.api.fields import unknown_fields
    from scheduling_framework.api.meta import object_ref

    found = unknown_fields(manifest, kind)
    return [(object_ref(kind, manifest), m) for m in found] if found else []


def template_unknown_fields(sc: Scenario) -> list[tuple[str, str]]:
    """``(templates.GROUP.NAME, message)`` for every field of the scenario's templates that the Kubernetes API
    does not define (``unknown field "spec.node_selector" (did you mean "spec.nodeSelector"?)``)."""
    out: list[tuple[str, str]] = []
    for group, kind, templates in (("nodes", "Node", sc.node_templates), ("pods", "Pod", sc.pod_templates)):
        for name, m in templates.items():
            out.extend((f"templates.{group}.{name}", msg) for _, msg in _unknown(m, kind))
    return out


def _steps(v: Any, node_t: Mapping[str, Any], pod_t: Mapping[str, Any], problems: list[str]) -> tuple[Step, ...]:
    if not isinstance(v, list):
        problems.append("steps: Invalid value: expected a list of operations")
        return ()
    out: list[Step] = []
    for i, s in enumerate(v):
        path = f"steps[{i}]"
        if not isinstance(s, Mapping):
            problems.append(f"{path}: Invalid value: expected a mapping with an 'op'")
            continue
        op = s.get("op")
        if op not in OPS:
            problems.append(f'{path}.op: Unsupported value: {_short(op)} (expected one of {", ".join(OPS)})')
            continue
        allowed = {"op"}
        kw: dict[str, Any] = {"op": op}
        if op in ("createNodes", "createPods"):
            allowed |= {"count", "template", "namePrefix"} | ({"namespace"} if op == "createPods" else set())
            kw["count"] = _int(s.get("count"), f"{path}.count", problems, minimum=1)
            tmpl = s.get("template")
            pool = node_t if op == "createNodes" else pod_t
            if not isinstance(tmpl, str) or tmpl not in pool:
                group = "nodes" if op == "createNodes" else "pods"
                problems.append(f"{path}.template: Not found: {_short(tmpl)} (templates.{group} has "
                                f"{', '.join(sorted(pool)) or 'none'})")
            else:
                kw["template"] = tmpl
            kw["name_prefix"] = _str(s.get("namePrefix", tmpl if isinstance(tmpl, str) else ""), f"{path}.namePrefix",
                                     problems)
            if op == "createPods":
                kw["namespace"] = _str(s.get("namespace", "default"), f"{path}.namespace", problems)
        elif op == "wait":
            allowed |= {"seconds"}
            sec = s.get("seconds")
            if isinstance(sec, bool) or not isinstance(sec, int | float) or not 0 <= sec <= 10**9:
                problems.append(f"{path}.seconds: Invalid value: {_short(sec)}: expected a number from 0 to 1e9")
            else:
                kw["seconds"] = float(sec)
        else:
            allowed |= {"names", "namePrefix", "count"} | ({"evictedPods"} if op == "deleteNodes" else set())
            names = s.get("names")
            prefix = s.get("namePrefix")
            if (names is None) == (prefix is None):
                problems.append(f"{path}: Invalid value: give exactly one of names or namePrefix")
            if names is not None:
                if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
                    problems.append(f"{path}.names: Invalid value: expected a list of names")
                else:
                    kw["names"] = tuple(names)
                    seen: set[str] = set()
                    for j, n in enumerate(names):
                        if n in seen:  # the second would name an object the first already removed
                            problems.append(f'{path}.names[{j}]: Duplicate value: "{brief_str(n)}"')
                        seen.add(n)
            if prefix is not None:
                kw["name_prefix"] = _str(prefix, f"{path}.namePrefix", problems)
            if "count" in s:
                kw["count"] = _int(s.get("count"), f"{path}.count", problems, minimum=1)
            if op == "deleteNodes":
                ev = s.get("evictedPods", "recreate")
                if ev not in ("recreate", "delete"):
                    problems.append(f'{path}.evictedPods: Unsupported value: {_short(ev)} (expected "recreate" or '
                                    '"delete")')
                else:
                    kw["evicted_pods"] = ev
        for k in s:
            if k not in allowed:
                problems.append(f"{path}.{k}: Unsupported field for op {op} (allowed: {', '.join(sorted(allowed))})")
        out.append(Step(**kw))
    return tuple(out)


def _str(v: Any, path: str, problems: list[str]) -> str:
    if not isinstance(v, str) or not v:
        problems.append(f"{path}: Invalid value: {_short(v)}: expected a non-empty string")
        return "x"
    return v
