"""``load_config``: read, strictly decode, default and validate a KubeSchedulerConfiguration v1.

The steps follow kube-scheduler: decode (unknown fields are errors, plugin args are decoded into
their typed kinds), ``SetDefaults_KubeSchedulerConfiguration`` (default plugins merged into each
profile, default args appended), then ``ValidateKubeSchedulerConfiguration``.  Unlike upstream, a
decoding problem does not stop the load: every problem found is reported in one ConfigError,
and no configuration object is returned unless there are none.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.api import _field as f
from scheduling_framework.config.args import ARGS_TYPES, args_to_dict, decode_args
from scheduling_framework.config.defaults import default_plugin_configs, default_plugins, merge_plugins
from scheduling_framework.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    MULTI_POINT,
    POINTS,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from scheduling_framework.config.validation import (
    validate_extenders,
    validate_global,
    validate_leader_election,
    validate_profiles,
)
from scheduling_framework.errors import ConfigError, InputError, brief_str
from scheduling_framework.features import FeatureGates
from scheduling_framework.ingest.untrusted import STDIN, load_yaml_documents, read_input

_TOP_FIELDS = (
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
)
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_LEADER_ELECTION_FIELDS = (
    "leaderElect",
    "leaseDuration",
    "renewDeadline",
    "retryPeriod",
    "resourceLock",
    "resourceName",
    "resourceNamespace",
)
_CLIENT_CONNECTION_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
_EXTENDER_FIELDS = (
    "urlPrefix",
    "filterVerb",
    "preemptVerb",
    "prioritizeVerb",
    "weight",
    "bindVerb",
    "enableHTTPS",
    "tlsConfig",
    "httpTimeout",
    "nodeCacheCapable",
    "managedResources",
    "ignorable",
)
_TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")

_LEADER_ELECTION_DEFAULTS: dict[str, Any] = {
    "leaderElect": True,
    "leaseDuration": "15s",
    "renewDeadline": "10s",
    "retryPeriod": "2s",
    "resourceLock": "leases",
    "resourceName": "kube-scheduler",
    "resourceNamespace": "kube-system",
}


GateValues = str | Mapping[str, Any] | FeatureGates | None


def load_config(source: str | os.PathLike[str] | Mapping[str, Any] | None, *,
                max_input_bytes: int | None = None, kubernetes_version: str | None = None,
                feature_gates: GateValues = None) -> KubeSchedulerConfiguration:
    """Load a KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``).

    ``source`` is a file path (``-`` reads standard input), an already-parsed document, or None for the
    default configuration (one profile, ``default-scheduler``, with upstream's default plugins).  Files
    are read as cluster files are (regular files only, at most ``max_input_bytes``, UTF-8/16/32, bounded
    nesting and aliases).  ``kubernetes_version`` ("1.35") selects the release whose defaults apply
    (default plugins, args defaults, feature-gate defaults; default: the newest supported);
    ``feature_gates`` overrides gates (``{"Name": True}`` or ``"Name=true,Other=false"``), validated
    against that release.  Raises ConfigError listing every problem with its field path.
    """
    features = feature_gates_for(kubernetes_version, feature_gates)
    file = None
    if source is None:
        doc: Any = {"apiVersion": API_VERSION, "kind": KIND}
    elif isinstance(source, Mapping):
        doc = source
    else:
        path = os.fspath(source)
        doc = read_config_file(path, max_input_bytes)
        file = "standard input" if path == STDIN else path
    errors: list[str] = []
    cfg = _build(doc, errors, features)
    if errors or cfg is None:
        raise ConfigError(errors or ["invalid configuration"], file=file)
    return cfg if file is None else attrs.evolve(cfg, file=file)


def feature_gates_for(kubernetes_version: str | None, feature_gates: GateValues) -> FeatureGates:
    """The validated gates of ``kubernetes_version`` (default newest) with ``feature_gates`` applied."""
    if isinstance(feature_gates, FeatureGates):
        if kubernetes_version is None or kubernetes_version == feature_gates.release:
            return feature_gates
        return FeatureGates.for_release(kubernetes_version, dict(feature_gates.overrides))
    return FeatureGates.for_release(kubernetes_version, feature_gates)


def resolve_config(config: KubeSchedulerConfiguration | str | os.PathLike[str] | Mapping[str, Any] | None, *,
                   kubernetes_version: str | None = None,
                   feature_gates: GateValues = None) -> KubeSchedulerConfiguration:
    """What ``Scheduler`` and ``Simulator`` do with their ``config``, ``kubernetes_version`` and
    ``feature_gates``: load it for that release, or, for a configuration already loaded for another
    release or other gates, load its document again for the one asked."""
    if not isinstance(config, KubeSchedulerConfiguration):
        return load_config(config, kubernetes_version=kubernetes_version, feature_gates=feature_gates)
    if kubernetes_version is None and feature_gates is None:
        return config
    release = config.kubernetes_version if kubernetes_version is None else kubernetes_version
    gates = feature_gates_for(release, config.feature_gates if feature_gates is None else feature_gates)
    if gates == config.feature_gates:
        return config
    if config.source is None:
        raise ConfigError(f"this configuration was built for Kubernetes {config.kubernetes_version} and cannot be "
                          f"loaded again; pass kubernetes_version / feature_gates to load_config instead")
    cfg = load_config(config.source, kubernetes_version=gates.release, feature_gates=gates)
    return attrs.evolve(cfg, file=config.file)


def read_config_file(path: str, max_input_bytes: int | None = None) -> Any:
    """The one YAML document of the configuration file ``path`` (``-``: standard input), not yet validated.

    Raises ConfigError naming the file when it cannot be read, is empty, holds several documents, or is not
    a KubeSchedulerConfiguration at all (neither its kind nor its apiVersion is one's): a file named by
    mistake (``/etc/shadow``) is then named with at most a short excerpt of its first line, not echoed
    field by field as unknown fields."""
    name = "standard input" if path == STDIN else path
    try:
        text = read_input(path, what="configuration file", max_bytes=max_input_bytes)
        docs = load_yaml_documents(text, name)
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    if not docs:
        raise ConfigError(f"{name}: the file is empty (expected a KubeSchedulerConfiguration)")
    if len(docs) > 1:
        raise ConfigError(f"{name}: expected one YAML document (a KubeSchedulerConfiguration), found {len(docs)}")
    problem = _not_a_configuration(docs[0], text)
    if problem:
        raise ConfigError(f"{name}: not a {KIND}: {problem}; expected apiVersion: {API_VERSION} and kind: {KIND}")
    return docs[0]


#: Characters of a file's first line that an error about a file that is not a configuration may show.
EXCERPT_CHARS = 40
_TYPE_NAMES = {str: "a string", list: "a list", int: "a number", float: "a number", bool: "a boolean"}


def _not_a_configuration(doc: Any, text: str) -> str | None:
    """Why ``doc`` (read from ``text``) is no configuration at all, or None when it is one (with mistakes,
    maybe: each is named)."""
    if not isinstance(doc, Mapping):
        return f"it holds {_TYPE_NAMES.get(type(doc), type(doc).__name__)}, not a mapping ({_excerpt(text)})"
    kind, version = doc.get("kind"), doc.get("apiVersion")
    if kind == KIND or (isinstance(version, str) and version.startswith(API_VERSION.split("/")[0] + "/")):
        return None
    if kind is None and version is None:
        return f"it has no apiVersion and no kind ({_excerpt(text)})"
    said = [f'{field} "{brief_str(v)}"' for field, v in (("apiVersion", version), ("kind", kind)) if v is not None]
    return f"it is {', '.join(said)}"


def _excerpt(text: str) -> str:
    line = next((s.strip() for s in text.lstrip("\ufeff").splitlines() if s.strip()), "")
    cut = line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 3] + "..."
    return f'its first line: "{cut}"'


# --------------------------------------------------------------------------- decoding


def _plugin_set(r: f.Reader, value: Any, path: str) -> PluginSet:
    m = r.obj(value, path, ("enabled", "disabled"))
    if m is None:
        return PluginSet()

    def refs(key: str) -> tuple[PluginRef, ...]:
        out: list[PluginRef] = []
        lp = f.child(path, key)
        for i, item in enumerate(r.seq(m.get(key), lp) or ()):
            ip = f.index(lp, i)
            pm = r.obj(item, ip, ("name", "weight"))
            if pm is None:
                continue
            name = r.string(pm.get("name"), f.child(ip, "name")) or ""
            weight = r.integer(pm.get("weight"), f.child(ip, "weight"))
            out.append(PluginRef(name, weight or 0))
        return tuple(out)

    return PluginSet(refs("enabled"), refs("disabled"))


def _plugins(r: f.Reader, value: Any, path: str) -> Plugins | None:
    if value is None:
        return None
    m = r.obj(value, path, (*POINTS, MULTI_POINT))
    if m is None:
        return None
    return Plugins().replace(**{key: _plugin_set(r, m.get(key), f.child(path, key)) for key in (*POINTS, MULTI_POINT)})


def _profile(r: f.Reader, value: Any, path: str, single: bool, features: FeatureGates) -> Profile | None:
    m = r.obj(value, path, _PROFILE_FIELDS)
    if m is None:
        return None
    name = r.string(m.get("schedulerName"), f.child(path, "schedulerName"))
    if name is None:
        # only a lone profile gets the default name; validation requires one otherwise
        name = DEFAULT_SCHEDULER_NAME if single and m.get("schedulerName") is None else ""
    pct = r.integer(m.get("percentageOfNodesToScore"), f.child(path, "percentageOfNodesToScore"))
    plugins = merge_plugins(default_plugins(features), _plugins(r, m.get("plugins"), f.child(path, "plugins")))
    configs: list[PluginConfig] = []
    cp = f.child(path, "pluginConfig")
    for i, item in enumerate(r.seq(m.get("pluginConfig"), cp) or ()):
        ip = f.index(cp, i)
        pm = r.obj(item, ip, ("name", "args"))
        if pm is None:
            continue
        pname = r.string(pm.get("name"), f.child(ip, "name")) or ""
        configs.append(PluginConfig(pname, decode_args(pname, pm.get("args"), f.child(ip, "args"), r.errors, features)))
    return Profile(
        scheduler_name=name,
        plugins=plugins,
        plugin_config=default_plugin_configs(plugins, tuple(configs), features),
        percentage_of_nodes_to_score=pct,
    )


def _duration(r: f.Reader, m: Mapping[str, Any], key: str, path: str, default: str | None) -> tuple[Any, float | None]:
    value = m.get(key)
    if value is None:
        value = default
    if value is None:
        return None, None
    p = f.child(path, key)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        r.errors.append(f.invalid(p, value, 'expected a duration string such as "15s"'))
        return value, None
    seconds = f.parse_duration(str(value)) if isinstance(value, str) else None
    if seconds is None:
        r.errors.append(f.invalid(p, value, f'time: invalid duration "{value}"'))
    return value, seconds


def _leader_election(r: f.Reader, value: Any) -> tuple[dict[str, Any], dict[str, float | None]]:
    path = "leaderElection"
    m = r.obj(value, path, _LEADER_ELECTION_FIELDS) or {}
    out: dict[str, Any] = {}
    elect = r.boolean(m.get("leaderElect"), f.child(path, "leaderElect"))
    out["leaderElect"] = True if elect is None else elect
    durations: dict[str, float | None] = {}
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        out[key], durations[key] = _duration(r, m, key, path, _LEADER_ELECTION_DEFAULTS[key])
    for key in ("resourceLock", "resourceName", "resourceNamespace"):
        s = r.string(m.get(key), f.child(path, key))
        out[key] = s or _LEADER_ELECTION_DEFAULTS[key]
    return out, durations


def _client_connection(r: f.Reader, value: Any) -> dict[str, Any]:
    path = "clientConnection"
    m = r.obj(value, path, _CLIENT_CONNECTION_FIELDS) or {}
    out: dict[str, Any] = {}
    for key in ("kubeconfig", "acceptContentTypes", "contentType"):
        s = r.string(m.get(key), f.child(path, key))
        if s:
            out[key] = s
    out.setdefault("contentType", "application/vnd.kubernetes.protobuf")
    qps = r.number(m.get("qps"), f.child(path, "qps"))
    out["qps"] = qps if qps else 50.0
    burst = r.integer(m.get("burst"), f.child(path, "burst"))
    out["burst"] = burst if burst else 100
    return out


def _extenders(r: f.Reader, value: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, item in enumerate(r.seq(value, "extenders") or ()):
        p = f.index("extenders", i)
        m = r.obj(item, p, _EXTENDER_FIELDS)
        if m is None:
            continue
        ext: dict[str, Any] = {}
        for key in ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb"):
            s = r.string(m.get(key), f.child(p, key))
            if s:
                ext[key] = s
        weight = r.integer(m.get("weight"), f.child(p, "weight"), bits=64)
        if weight:
            ext["weight"] = weight
        for key in ("enableHTTPS", "nodeCacheCapable", "ignorable"):
            b = r.boolean(m.get(key), f.child(p, key))
            if b:
                ext[key] = b
        if m.get("httpTimeout") is not None:
            ext["httpTimeout"] = _duration(r, m, "httpTimeout", p, None)[0]
        if m.get("tlsConfig") is not None:
            tls = r.obj(m["tlsConfig"], f.child(p, "tlsConfig"), _TLS_FIELDS)
            if tls is not None:
                ext["tlsConfig"] = copy.deepcopy(dict(tls))
        resources: list[dict[str, Any]] = []
        mp = f.child(p, "managedResources")
        for j, res in enumerate(r.seq(m.get("managedResources"), mp) or ()):
            rp = f.index(mp, j)
            rm = r.obj(res, rp, ("name", "ignoredByScheduler"))
            if rm is None:
                continue
            entry: dict[str, Any] = {"name": r.string(rm.get("name"), f.child(rp, "name")) or ""}
            if r.boolean(rm.get("ignoredByScheduler"), f.child(rp, "ignoredByScheduler")):
                entry["ignoredByScheduler"] = True
            resources.append(entry)
        if resources:
            ext["managedResources"] = resources
        out.append(ext)
    return out


def _int_or(value: int | None, default: int) -> int:
    return default if value is None else value


def _build(doc: Any, errors: list[str], features: FeatureGates | None = None) -> KubeSchedulerConfiguration | None:
    if features is None:
        features = FeatureGates()
    r = f.Reader(errors)
    if not isinstance(doc, Mapping):
        errors.append(f"expected a KubeSchedulerConfiguration object, got {type(doc).__name__}")
        return None
    m = r.obj(doc, "", _TOP_FIELDS) or {}
    version, kind = m.get("apiVersion"), m.get("kind")
    if version is None:
        errors.append(f.required("apiVersion", f'must be "{API_VERSION}"'))
    elif version != API_VERSION:
        errors.append(f.not_supported("apiVersion", version, (API_VERSION,)))
    if kind is None:
        errors.append(f.required("kind", f'must be "{KIND}"'))
    elif kind != KIND:
        errors.append(f.not_supported("kind", kind, (KIND,)))

    parallelism = _int_or(r.integer(m.get("parallelism"), "parallelism"), 16)
    leader, durations = _leader_election(r, m.get("leaderElection"))
    client = _client_connection(r, m.get("clientConnection"))
    profiling = r.boolean(m.get("enableProfiling"), "enableProfiling")
    profiling = True if profiling is None else profiling
    contention = r.boolean(m.get("enableContentionProfiling"), "enableContentionProfiling")
    if contention is None and profiling:
        contention = True
    pct = _int_or(r.integer(m.get("percentageOfNodesToScore"), "percentageOfNodesToScore"), 0)
    initial = _int_or(r.integer(m.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds", bits=64), 1)
    maximum = _int_or(r.integer(m.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds", bits=64), 10)
    delay = r.boolean(m.get("delayCacheUntilActive"), "delayCacheUntilActive")

    raw_profiles = r.seq(m.get("profiles"), "profiles") or []
    if not raw_profiles:
        raw_profiles = [{}]
    profiles: list[Profile] = []
    for i, item in enumerate(raw_profiles):
        prof = _profile(r, item, f.index("profiles", i), single=len(raw_profiles) == 1, features=features)
        if prof is not None:
            profiles.append(prof)
    extenders = _extenders(r, m.get("extenders"))

    if client["burst"] < 0:
        errors.append(f.invalid("clientConnection.burst", client["burst"], "must be non-negative"))
    errors.extend(validate_leader_election("leaderElection", leader, durations))
    errors.extend(validate_profiles(profiles))
    errors.extend(
        validate_global(
            parallelism=parallelism,
            percentage_of_nodes_to_score=pct,
            pod_initial_backoff_seconds=initial,
            pod_max_backoff_seconds=maximum,
        )
    )
    errors.extend(validate_extenders("extenders", extenders))

    raw: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "parallelism": parallelism,
        "leaderElection": leader,
        "clientConnection": client,
        "enableProfiling": profiling,
    }
    if contention is not None:
        raw["enableContentionProfiling"] = contention
    raw.update(
        {
            "percentageOfNodesToScore": pct,
            "podInitialBackoffSeconds": initial,
            "podMaxBackoffSeconds": maximum,
            "profiles": [_profile_doc(p) for p in profiles],
        }
    )
    if extenders:
        raw["extenders"] = extenders
    if delay:
        raw["delayCacheUntilActive"] = True
    return KubeSchedulerConfiguration(
        profiles=tuple(profiles),
        percentage_of_nodes_to_score=pct,
        parallelism=parallelism,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        raw=raw,
        kubernetes_version=features.release,
        feature_gates=features,
        source=copy.deepcopy(doc),
    )


def plugin_config_doc(pc: PluginConfig) -> dict[str, Any]:
    """A pluginConfig entry as written in a v1 document (typed args carry apiVersion and kind)."""
    out: dict[str, Any] = {"name": pc.name}
    if pc.name in ARGS_TYPES and pc.args is not None and not isinstance(pc.args, Mapping):
        out["args"] = {"apiVersion": API_VERSION, "kind": type(pc.args).__name__, **args_to_dict(pc.args)}
    elif pc.args is not None:
        out["args"] = copy.deepcopy(pc.args)
    return out


def _profile_doc(p: Profile) -> dict[str, Any]:
    out: dict[str, Any] = {"schedulerName": p.scheduler_name}
    if p.percentage_of_nodes_to_score is not None:
        out["percentageOfNodesToScore"] = p.percentage_of_nodes_to_score
    out["plugins"] = p.plugins.to_dict()
    if p.plugin_config:
        out["pluginConfig"] = [plugin_config_doc(pc) for pc in p.plugin_config]
    return out
