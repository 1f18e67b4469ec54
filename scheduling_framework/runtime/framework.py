"""Framework: one scheduling profile's plugins, run at every extension point with upstream's semantics.

The Framework is also the *handle* plugins receive: it exposes the snapshot of the current cycle, the
store of other cluster objects, the waiting pods, the nominator, the parallelizer and the embedding
application's binder and event recorder.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import random
from collections.abc import Callable, Iterable, KeysView, Mapping, Sequence
from itertools import repeat
from typing import Any, cast

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ConfigError, PluginError, RegistryError
from scheduling_framework.features import FeatureGates
from scheduling_framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    POINT_METHODS,
    NodeScore,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from scheduling_framework.registry import Registry, default_registry
from scheduling_framework.runtime.columns import NodeColumns, gatherer
from scheduling_framework.runtime.parallelize import Parallelizer
from scheduling_framework.runtime.signatures import (
    MemoKeys,
    Signer,
    companion,
    sign,
    signer,
)
from scheduling_framework.runtime.waiting_pods import WaitingPod, WaitingPodsMap
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.state.podgroups import PodGroupManager
from scheduling_framework.state.snapshot import ObjectStore, Snapshot
from scheduling_framework.status import Code, Status

MAX_PERMIT_TIMEOUT = 15 * 60.0

# What the object returned by each extensions accessor must provide.
_EXTENSION_METHODS = {"pre_filter_extensions": ("add_pod", "remove_pod"), "score_extensions": ("normalize_score",)}

# Point key -> the human name upstream uses in "does not extend %s plugin" errors.
_POINT_TYPE_NAMES = {
    "preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin", "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin", "postFilter": "PostFilterPlugin", "preScore": "PreScorePlugin",
    "score": "ScorePlugin", "reserve": "ReservePlugin", "permit": "PermitPlugin", "preBind": "PreBindPlugin",
    "bind": "BindPlugin", "postBind": "PostBindPlugin",
}


class Nominator:
    """Pods nominated to nodes (by preemption), which Filter must account for."""

    def __init__(self) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add_nominated_pod(self, pi: PodInfo, node_name: str) -> None:
        self.delete_nominated_pod_if_exists(pi.pod)
        if not node_name:
            return
        self._node_of[pi.pod.uid] = node_name
        self._by_node.setdefault(node_name, []).append(pi)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return
        lst = [p for p in self._by_node.get(node, []) if p.pod.uid != pod.uid]
        if lst:
            self._by_node[node] = lst
        else:
            self._by_node.pop(node, None)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._by_node.get(node_name, [])

    def nodes(self) -> KeysView[str]:
        """The names of the nodes that have nominated pods (a live view)."""
        return self._by_node.keys()

    def nominated_node_of(self, uid: str) -> str:
        return self._node_of.get(uid, "")

    def __len__(self) -> int:
        return len(self._node_of)


class Binder:
    """What DefaultBinder calls: the embedding application's way to bind a pod (default: do nothing)."""

    def bind(self, pod: Pod, node_name: str) -> None:  # pragma: no cover - trivial default
        return None


class ScoreDetail:
    """Per-plugin scores of one cycle, for explanations: raw (from Score), normalized, weighted."""

    __slots__ = ("plugins", "raw", "normalized", "weights")

    def __init__(self) -> None:
        self.plugins: list[str] = []
        self.raw: dict[str, list[int]] = {}
        self.normalized: dict[str, list[int]] = {}
        self.weights: dict[str, int] = {}

    def add(self, plugin: str, raw: list[int], normalized: list[int], weight: int) -> None:
        """One plugin's (or extender's) column: its raw and normalized scores, in node order, and its weight."""
        self.plugins.append(plugin)
        self.raw[plugin] = raw
        self.normalized[plugin] = normalized
        self.weights[plugin] = weight


class NodePluginScores:
    """A node's weighted score from each score plugin, and their total.

    ``scores`` is a list of (plugin, weighted score). The framework fills it lazily from its per-plugin
    columns: building 500 small lists per cycle for the few callers that read them would dominate scoring.
    """

    __slots__ = ("name", "_scores", "total_score", "_columns", "_index")

    def __init__(self, name: str, scores: list[tuple[str, int]], total_score: int) -> None:
        self.name = name
        self._scores: list[tuple[str, int]] | None = scores
        self.total_score = total_score
        self._columns: list[tuple[str, list[int], int]] | None = None
        self._index = 0

    @classmethod
    def _from_columns(cls, name: str, columns: list[tuple[str, list[int], int]], index: int,
                      total_score: int) -> NodePluginScores:
        nps = cls.__new__(cls)
        nps.name = name
        nps._scores = None
        nps.total_score = total_score
        nps._columns = columns
        nps._index = index
        return nps

    @property
    def scores(self) -> list[tuple[str, int]]:
        s = self._scores
        if s is None:
            i = self._index
            s = self._scores = [(name, col[i] * weight) for name, col, weight in self._columns or ()]
            self._columns = None
        return s

    @scores.setter
    def scores(self, value: list[tuple[str, int]]) -> None:
        self._scores = value
        self._columns = None

    def __repr__(self) -> str:
        return f"NodePluginScores({self.name!r}, total={self.total_score})"


def _permit_timeout(timeout: Any) -> float | None:
    """A Permit timeout in seconds, capped at MAX_PERMIT_TIMEOUT as upstream caps it (a negative one passes
    at once); None when it is not a number or is NaN."""
    if timeout is None:
        return 0.0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        return None
    if isinstance(timeout, int):
        return float(max(0, min(timeout, int(MAX_PERMIT_TIMEOUT))))  # no float() of a huge int
    if math.isnan(timeout):
        return None
    return max(0.0, min(float(timeout), MAX_PERMIT_TIMEOUT))


def _well_formed_post_filter_result(r: PostFilterResult) -> bool:
    victims: Any = r.victims
    return (type(r.nominated_node_name) is str and isinstance(victims, (tuple, list))
            and all(type(v) is str for v in victims))


def _as_error(plugin: str, what: str, st: Status) -> Status:
    if isinstance(st.error, PluginError):
        return st  # already an error naming the plugin (a wrong return shape)
    return Status(Code.ERROR, f'running {what} plugin "{plugin}": {st.message()}', plugin=plugin, error=st.error)


def _raised(plugin: str, point: str, e: BaseException) -> Status:
    return Status(Code.ERROR, f'plugin "{plugin}" raised {type(e).__name__} at {point}: {e}', plugin=plugin, error=e)


raised_status = _raised


def _bad_shape(plugin: str, point: str, got: Any, want: str) -> Status:
    err = PluginError(plugin, f"{point} returned {type(got).__name__} ({got!r:.60}), expected {want}")
    return Status(Code.ERROR, str(err), plugin=plugin, error=err)


def _check_status(plugin: str, point: str, st: Any) -> Status | None:
    if st is None or type(st) is Status:
        return st
    if isinstance(st, Status):
        return st
    return _bad_shape(plugin, point, st, "Status or None")


def batch_scorer(plugin: Any) -> Callable[[CycleState, Pod, Sequence[NodeInfo]], list[int] | None] | None:
    """The plugin's optional batch form of Score, when the framework may use it instead of ``score``.

    A Score plugin may define ``score_nodes(state, pod, nodes)``: the list of the scores ``score`` returns
    for each of ``nodes``, in order, when every one of them would be ``(int, None)`` -- or None to have the
    framework call ``score`` node by node (for errors, a missing state, anything unusual). It is only an
    accelerator: the per-node ``score`` stays the contract. The framework takes it only from the class
    that defines ``score`` (a subclass overriding ``score`` alone keeps being called node by node).
    """
    return companion(plugin, "score_nodes", "score")  # type: ignore[no-any-return]


def batch_filter(plugin: Any) -> Callable[[CycleState, Pod, Sequence[NodeInfo]], list[Any] | None] | None:
    """The plugin's optional batch form of Filter, when the framework may use it instead of ``filter``.

    A Filter plugin may define ``filter_nodes(state, pod, nodes)``: the list of what ``filter`` returns for
    each of ``nodes``, in order, or None to have the framework call ``filter`` node by node (a missing state,
    anything unusual). Like ``score_nodes`` it is only an accelerator, taken only from the class that defines
    ``filter``; if it raises, the framework calls ``filter`` node by node instead."""
    return companion(plugin, "filter_nodes", "filter")  # type: ignore[no-any-return]


#: Filter with nominated pods reads the cycle's state itself when no PreFilter extension runs for the pod (False: a
#: copy each time, the plain twin of tests/test_perf_equivalence.py::test_preemption_bulk_removal_equals_plain).
SHARE_UNEXTENDED_STATE = True


def constant_scorer(plugin: Any) -> Callable[[CycleState, Pod], int | None] | None:
    """The plugin's optional ``score_constant(state, pod)``, when the framework may use it.

    An internal protocol for scorers whose score does not depend on the node for some pods (DynamicResources
    gives 0 to every node for a pod without claims, and upstream has no PreScore to skip it): asked once per
    cycle, an int ``c`` is a promise that ``score`` returns ``(c, None)`` on every node for this pod and that
    the plugin's NormalizeScore (if any) leaves a column of ``c`` as it is; the framework then fills the raw,
    normalized and weighted columns with ``c`` without calling either. None (or anything that is not an int
    in the score range) means score as usual. Taken, like ``score_nodes``, only from the class that defines
    ``score``. Pinned by tests/test_perf_equivalence.py::test_constant_score_column_equals_plain_scoring.
    """
    return companion(plugin, "score_constant", "score")  # type: ignore[no-any-return]


def _run_constant(fn: Callable[[CycleState, Pod], int | None], state: CycleState, pod: Pod) -> int | None:
    """The plugin's constant score for this pod, or None (score node by node, which reports any failure)."""
    try:
        c = fn(state, pod)
    except Exception:
        return None
    if type(c) is not int or c < MIN_NODE_SCORE or c > MAX_NODE_SCORE:
        return None
    return c


def _run_batch(batch: Callable[[CycleState, Pod, Sequence[NodeInfo]], list[int] | None], state: CycleState,
               pod: Pod, nodes: Sequence[NodeInfo], n: int, exact: bool = False) -> list[int] | None:
    """The batch's scores when it gives one int per node; None (score node by node) otherwise. ``exact``: the
    batch is one of ours (:func:`_ours`), whose values are ints by construction: their types are not checked.

    A batch that raises is not reported: the node-by-node pass that follows meets the same failure on
    the same node and reports it exactly as Score does."""
    try:
        vals = batch(state, pod, nodes)
    except Exception:
        return None
    if type(vals) is not list or len(vals) != n:
        return None
    if not exact and not _all_ints(vals):
        return None
    return vals


def _ours(fn: Any) -> bool:
    """Whether ``fn`` (a batch form) is defined by the bundled plugins, which give ints by construction (pinned by
    tests/test_perf_equivalence.py::test_batch_scores_equal_node_by_node_scores): a third party's batch has the
    type of every value checked."""
    return fn is not None and str(getattr(fn, "__module__", "")).startswith("plugins_intree.")


_INTS_ONLY = {int}

_NO_SKIP: frozenset[str] = frozenset()
#: Sets of skipped Filter plugins whose plan Framework.filter_plugins_for keeps (a few in practice).
MAX_FILTER_PLANS = 64

def _all_ints(vals: list[Any]) -> bool:
    """Whether every value is exactly an int (not a bool, not a float), in one C-speed pass."""
    return not vals or set(map(type, vals)) == _INTS_ONLY


def _first_bad_score(vals: list[Any]) -> Any:
    """The first normalized score that is not an int within [MIN_NODE_SCORE, MAX_NODE_SCORE], or None."""
    for s in vals:
        if type(s) is not int or s > MAX_NODE_SCORE or s < MIN_NODE_SCORE:
            return s
    return None


def _bad_score_status(plugin: str, s: Any) -> Status:
    if type(s) is not int:
        return _bad_shape(plugin, "NormalizeScore", s, "integer scores")
    return Status(Code.ERROR, f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an '
                              f"invalid score {s}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                              "after normalizing", plugin=plugin)


def _normalize_error(plugin: str, what: str, error: BaseException | None) -> Status:
    return Status(Code.ERROR, f'running Normalize on Score plugins: plugin "{plugin}" {what}', plugin=plugin,
                  error=error)


def _score_node_by_node(pl: Any, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                        ) -> tuple[list[int], Status | None]:
    """Score every node with the plugin's ``score``; the first failure ends the pass with an ERROR status."""
    name = pl.name
    vals: list[int] = []
    append = vals.append
    score_fn = pl.score
    for ni in nodes:
        try:
            out = score_fn(state, pod, ni)
        except Exception as e:
            return vals, Status(Code.ERROR, f'running Score plugins: plugin "{name}" raised '
                                            f"{type(e).__name__}: {e}", plugin=name, error=e)
        # the common case first: an (int, None) tuple
        if type(out) is tuple and len(out) == 2 and out[1] is None and type(out[0]) is int:
            append(out[0])
            continue
        if type(out) is not tuple or len(out) != 2:
            return vals, _bad_shape(name, "Score", out, "(int, Status or None)")
        s, st = out
        if st is not None and not (isinstance(st, Status) and st.code == Code.SUCCESS):
            if not isinstance(st, Status):
                return vals, _bad_shape(name, "Score", out, "(int, Status or None)")
            return vals, Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: '
                                            f"{st.message()}", plugin=name, error=st.error)
        if type(s) is not int:
            if isinstance(s, bool) or not isinstance(s, int):
                return vals, _bad_shape(name, "Score", out, "(int, Status or None)")
            s = int(s)
        append(s)
    return vals, None


def batch_normalizer(ext: Any) -> Callable[[CycleState, Pod, list[str], list[int]], list[int] | None] | None:
    """The score extension's optional ``normalize_values(state, pod, node_names, scores)``, when the framework
    may use it instead of ``normalize_score``.

    It returns, as a new list, the scores ``normalize_score`` would leave in NodeScores holding ``scores``
    for ``node_names`` -- or None to have the framework call ``normalize_score`` (for any non-success). As with
    ``score_nodes``, it is only an accelerator, taken from the class that defines ``normalize_score``.
    """
    return companion(ext, "normalize_values", "normalize_score")  # type: ignore[no-any-return]


def _run_normalize_batch(batch: Callable[[CycleState, Pod, list[str], list[int]], list[int] | None],
                         state: CycleState, pod: Pod, names: list[str], vals: list[int],
                         exact: bool = False) -> list[int] | None:
    try:
        out = batch(state, pod, names, vals)
    except Exception:
        return None  # normalize_score meets the same failure and reports it
    if type(out) is not list or len(out) != len(vals):
        return None
    if not exact and not _all_ints(out):
        return None
    return out


class Framework:
    """A built profile. Construct with :meth:`from_config`, or directly from an EffectiveProfile."""

    def __init__(self, profile: Any, registry: Registry | None = None, *,
                 snapshot: Snapshot | None = None, objects: ObjectStore | None = None,
                 parallelism: int = 16, percentage_of_nodes_to_score: int | None = None,
                 binder: Any = None, event_recorder: Any = None,
                 nominator: Nominator | None = None, rng: random.Random | None = None,
                 pod_deleter: Callable[[Pod], None] | None = None, extenders: Sequence[Any] = (),
                 feature_gates: FeatureGates | None = None) -> None:
        self.profile = profile
        # The release this profile follows and its feature gates; plugins read both from the handle.
        self.feature_gates: FeatureGates = feature_gates if feature_gates is not None else FeatureGates()
        self.kubernetes_version: str = self.feature_gates.release
        self.profile_name: str = profile.scheduler_name
        self.registry = registry if registry is not None else default_registry()
        self.snapshot: Snapshot = snapshot if snapshot is not None else Snapshot()
        self.objects: ObjectStore = objects if objects is not None else ObjectStore()
        self.parallelizer = Parallelizer(parallelism)
        self.percentage_of_nodes_to_score: int | None = (
            profile.percentage_of_nodes_to_score if profile.percentage_of_nodes_to_score is not None
            else percentage_of_nodes_to_score)
        self.binder = binder
        self.event_recorder = event_recorder
        self.nominator: Nominator = nominator if nominator is not None else Nominator()
        self.waiting_pods = WaitingPodsMap()
        # The clock Permit timeouts run on: None = real-time timers; a virtual clock (the Scheduler's, in a
        # simulation) = timeouts pass when the clock's owner moves it and calls expire_waiting_pods().
        self.permit_clock: Callable[[], float] | None = None
        # Seeded randomness plugins may use (preemption's candidate offset), shared with host selection.
        self.rng = rng if rng is not None else random.Random(0)
        # Deletes a pod from the cluster (preemption evicts victims through it); None = not supported.
        self.pod_deleter = pod_deleter
        # Called when a pending pod loses its nominated node (the embedding scheduler updates its queue).
        self.nomination_cleared: Callable[[Pod], None] | None = None
        # The configuration's scheduler extenders (HTTPExtender), shared by every profile as upstream; the
        # preemption plugin reads them through the handle.
        self.extenders: tuple[Any, ...] = tuple(extenders)
        # The pod groups (Workload API) the scheduler knows, shared by its profiles; GangScheduling reads it.
        self.pod_groups: PodGroupManager = PodGroupManager()
        # Moves pods from the unschedulable pool / backoff to the active queue (upstream's PodActivator);
        # None = no queue to move (a framework used alone).
        self.pod_activator: Callable[[Iterable[Pod]], None] | None = None
        # Every pod the embedding scheduler knows, pending or bound (upstream plugins list pods through the
        # shared informer: Coscheduling counts a group's pods this way); None = the snapshot's pods only.
        self.pod_lister: Callable[[], Iterable[Pod]] | None = None
        # How plugins that schedule groups of pods together name a pod's group (see register_pod_group_key).
        self.pod_group_keys: list[Callable[[Pod], Any]] = []
        self.plugins: dict[str, Any] = {}
        self.score_weights: dict[str, int] = {}
        self._points: dict[str, list[Any]] = {p: [] for p in POINT_METHODS}
        self._filter_plans: tuple[list[Any], dict[frozenset[str], tuple[tuple[str, Any], ...]]] | None = None
        self._build()

    # construction ----------------------------------------------------------------------------
    @classmethod
    def from_config(cls, config: Any = None, registry: Registry | None = None, profile_name: str | None = None,
                    **kwargs: Any) -> Framework:
        """Build the named profile (or the first) of a KubeSchedulerConfiguration (or path/mapping/None)."""
        from scheduling_framework.config import KubeSchedulerConfiguration, expand_profile, load_config

        cfg = config if isinstance(config, KubeSchedulerConfiguration) else load_config(config)
        reg = registry if registry is not None else default_registry()
        profiles = list(cfg.profiles)
        prof = profiles[0] if profile_name is None else next(
            (p for p in profiles if p.scheduler_name == profile_name), None)
        if prof is None:
            raise ConfigError(f"profile {profile_name!r} not found")
        eff = expand_profile(prof, reg.points_of, cfg.kubernetes_version, config=cfg)
        if "extenders" not in kwargs:
            from scheduling_framework.extender.client import build_extenders, ignored_resources
            from scheduling_framework.extender.config import apply_ignored_resources

            kwargs["extenders"] = build_extenders(cfg)
            eff = apply_ignored_resources(eff, ignored_resources(cfg))
        kwargs.setdefault("parallelism", cfg.parallelism)
        kwargs.setdefault("percentage_of_nodes_to_score", cfg.percentage_of_nodes_to_score)
        kwargs.setdefault("feature_gates", cfg.feature_gates)
        return cls(eff, reg, **kwargs)

    def _build(self) -> None:
        points: Mapping[str, Sequence[Any]] = self.profile.points
        plugin_args: Mapping[str, Any] = self.profile.plugin_args
        order: list[str] = []
        for key in POINT_METHODS:
            for ep in points.get(key, ()):
                if ep.name not in order:
                    order.append(ep.name)
        for name in order:
            self.plugins[name] = self._instantiate(name, plugin_args.get(name))
        for key, method in POINT_METHODS.items():
            for ep in points.get(key, ()):
                pl = self.plugins[ep.name]
                if not callable(getattr(pl, method, None)):
                    raise ConfigError(f'plugin "{ep.name}" does not extend {_POINT_TYPE_NAMES[key]} plugin')
                self._points[key].append(pl)
                if key == "score":
                    self.score_weights[ep.name] = ep.weight or 1
        if not self._points["queueSort"]:
            raise ConfigError("no queue sort plugin is enabled")
        if len(self._points["queueSort"]) > 1:
            raise ConfigError("only one queue sort plugin can be enabled")
        if not self._points["bind"]:
            raise ConfigError("at least one bind plugin is needed")
        self._pre_filter_ext = {pl.name: self._extensions(pl, "pre_filter_extensions")
                                for pl in self._points["preFilter"]}
        # (name, extensions) of the PreFilter plugins that have extensions, in PreFilter order
        self._pre_filter_ext_list = [(pl.name, self._pre_filter_ext[pl.name]) for pl in self._points["preFilter"]
                                     if self._pre_filter_ext.get(pl.name) is not None]
        self._score_ext = {pl.name: self._extensions(pl, "score_extensions") for pl in self._points["score"]}
        self._score_batch = {pl.name: batch_scorer(pl) for pl in self._points["score"]}
        self._filter_batch = {pl.name: bfn for pl in self._points["filter"] if (bfn := batch_filter(pl))}
        self._score_constant = {pl.name: cfn for pl in self._points["score"] if (cfn := constant_scorer(pl))}
        self._normalize_batch = {name: batch_normalizer(ext) for name, ext in self._score_ext.items()
                                 if ext is not None}
        # the plugins whose batch forms are ours (their values' types go unchecked, see _run_batch)
        self._exact_batch = {name for name, fn in self._score_batch.items() if _ours(fn)}
        self._exact_normalize = {name for name, fn in self._normalize_batch.items() if _ours(fn)}
        # Node-local plugins' pod signatures (runtime/signatures.py): their answers on an unchanged NodeInfo are
        # reused from its memo.
        self._filter_signers: dict[str, Signer] = {
            pl.name: fn for pl in self._points["filter"] if (fn := signer(pl, "filter_signature", "filter"))}
        self._score_signers: dict[str, Signer] = {
            pl.name: fn for pl in self._points["score"] if (fn := signer(pl, "score_signature", "score"))}
        self._memo_keys = MemoKeys()
        # answers of signing plugins kept per signature, by position in the snapshot's node list: raw scores
        # (_signed_raw_scores) and Filter verdicts (Algorithm._find_nodes_that_pass_filters)
        self.node_columns = NodeColumns()

    def _instantiate(self, name: str, args: Any) -> Any:
        try:
            factory = self.registry.get(name)
        except RegistryError as e:
            raise ConfigError(str(e)) from None
        if not callable(factory):
            raise PluginError(name, f"factory {factory!r} is not callable")
        try:
            plugin = factory(args, self)
        except (ConfigError, PluginError):
            raise
        except TypeError as e:
            sig = _signature(factory)
            raise PluginError(name, f"factory {getattr(factory, '__qualname__', factory)}{sig} could not be "
                                    f"called as factory(args, handle): {e}") from e
        except Exception as e:
            raise PluginError(name, f"construction failed: {type(e).__name__}: {e}") from e
        pname = getattr(plugin, "name", None)
        if not isinstance(pname, str) or not pname:
            raise PluginError(name, f"{type(plugin).__name__} has no `name` attribute (a non-empty str) - "
                                    f"set a class attribute name = {name!r}")
        if pname != name:
            raise PluginError(name, f"the plugin instance is named {pname!r} but registered and configured as "
                                    f"{name!r} (they must be the same)")
        return plugin

    def _extensions(self, pl: Any, method: str) -> Any:
        fn = getattr(pl, method, None)
        if fn is None:
            return None
        try:
            ext = fn()
        except Exception as e:
            raise PluginError(pl.name, f"{method}() raised {type(e).__name__}: {e}") from e
        if ext is None:
            return None
        # Checked once here so that a wrong object fails construction, not every cycle that reaches it.
        needed = _EXTENSION_METHODS[method]
        missing = [m for m in needed if not callable(getattr(ext, m, None))]
        if missing:
            raise PluginError(pl.name, f"{method}() returned {type(ext).__name__} ({ext!r:.60}), expected None or an "
                                       f"object with {' and '.join(f'{m}()' for m in needed)}")
        return ext

    # queries ---------------------------------------------------------------------------------
    def plugins_at(self, point: str) -> list[Any]:
        return list(self._points[point])

    def has_filter_plugins(self) -> bool:
        return bool(self._points["filter"])

    def has_score_plugins(self) -> bool:
        return bool(self._points["score"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self._points["postFilter"])

    def list_plugins(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for key, pls in self._points.items():
            out[key] = [({"name": p.name, "weight": self.score_weights[p.name]} if key == "score"
                         else {"name": p.name}) for p in pls]
        return out

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Drop ``pod``'s nomination (as upstream's status patch does): out of the nominator, and the
        embedding scheduler is told so the queued pod forgets its nominated node and is retried."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        if self.nomination_cleared is not None:
            self.nomination_cleared(pod)

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    # PreEnqueue / QueueSort ------------------------------------------------------------------
    def _run_until_failure(self, point: str, what: str, call: Callable[[Any], Any],
                           skip: set[str] | None = None) -> Status | None:
        """Run the plugins of a point that answer Status or None, in order; the first non-success ends the
        run: a rejection names its plugin, anything else becomes an ERROR naming it."""
        for pl in self._points[point]:
            if skip and pl.name in skip:
                continue
            try:
                st = _check_status(pl.name, what, call(pl))
            except Exception as e:
                return _raised(pl.name, what, e)
            if st is None or st.code == Code.SUCCESS:
                continue
            if st.is_rejected():
                return st.with_plugin(pl.name)
            return _as_error(pl.name, what, st)
        return None

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        return self._run_until_failure("preEnqueue", "PreEnqueue", lambda pl: pl.pre_enqueue(pod))

    def queue_sort_key(self) -> Callable[[QueuedPodInfo], tuple[Any, ...]] | None:
        """A key giving :meth:`queue_sort_less`'s order (``less(a, b)`` exactly when ``key(a) < key(b)``), when
        the QueueSort plugin offers one: its ``sort_key`` method, taken only from the class that defines its
        ``less`` (as signatures are, runtime/signatures.py), so a subclass overriding ``less`` alone is asked
        through ``less``. None otherwise."""
        points = self._points["queueSort"]
        if not points:
            return None
        fn = companion(points[0], "sort_key", "less")
        if fn is None or "less" in getattr(points[0], "__dict__", ()):
            return None
        return fn  # type: ignore[no-any-return]

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pl = self._points["queueSort"][0]
        try:
            return bool(pl.less(a, b))
        except Exception as e:
            raise PluginError(pl.name, f"QueueSort less() raised {type(e).__name__}: {e}") from e

    # PreFilter -------------------------------------------------------------------------------
    def run_pre_filter_plugins(self, state: CycleState, pod: Pod,
                               nodes: Sequence[NodeInfo] | None = None
                               ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Returns (merged result, status, plugins that narrowed the node set)."""
        if nodes is None:
            nodes = self.snapshot.list()
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        returned: Status | None = None
        skip: set[str] = set()
        state.skip_filter_plugins = skip  # filled as plugins skip; visible whichever way this returns
        for pl in self._points["preFilter"]:
            try:
                out = pl.pre_filter(state, pod, nodes)
                if type(out) is tuple and len(out) == 2 and out[0] is None and out[1] is None:
                    continue  # the usual answer: no narrowing, success
                if not (isinstance(out, tuple) and len(out) == 2):
                    return None, _bad_shape(pl.name, "PreFilter", out, "(PreFilterResult or None, Status or None)"), []
                r, st = out
                if r is not None and not isinstance(r, PreFilterResult):
                    return None, _bad_shape(pl.name, "PreFilter", out, "(PreFilterResult or None, Status or None)"), []
                st = _check_status(pl.name, "PreFilter", st)
            except Exception as e:
                return None, _raised(pl.name, "PreFilter", e), []
            if st is not None and st.code == Code.SKIP:
                skip.add(pl.name)
                continue
            if st is not None and st.code != Code.SUCCESS:
                st.plugin = pl.name
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, st, []
                if st.code == Code.UNSCHEDULABLE:
                    returned = st
                    continue
                return None, _as_error(pl.name, "PreFilter", st), []
            if r is not None and not r.all_nodes():
                with_nodes.append(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                if len(with_nodes) == 1:
                    msg = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(with_nodes)}] simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), with_nodes
        return result, returned, with_nodes

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo,
                                         node_info: NodeInfo) -> Status | None:
        return self._run_ext(state, pod, pod_info_to_add, node_info, "add_pod", "AddPod")

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo,
                                            node_info: NodeInfo) -> Status | None:
        return self._run_ext(state, pod, pod_info_to_remove, node_info, "remove_pod", "RemovePod")

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        """Whether any PreFilter extension (AddPod / RemovePod) runs for this cycle's pod: False when no
        PreFilter plugin with extensions is enabled, or each of them returned SKIP from PreFilter."""
        skip = state.skip_filter_plugins
        for name, _ in self._pre_filter_ext_list:  # a loop: cheaper than any() over a generator for a few
            if name not in skip:
                return True
        return False

    def _run_ext(self, state: CycleState, pod: Pod, pi: PodInfo, ni: NodeInfo, method: str, what: str
                 ) -> Status | None:
        skip = state.skip_filter_plugins
        for name, ext in self._pre_filter_ext_list:
            if name in skip:
                continue
            try:
                st = _check_status(name, what, getattr(ext, method)(state, pod, pi, ni))
            except Exception as e:
                return _raised(name, what, e)
            if st is not None and st.code != Code.SUCCESS:
                return Status(Code.ERROR, f'running {what} on PreFilter plugin "{name}": {st.message()}',
                              plugin=name)
        return None

    # Filter ----------------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # The loop of run_filter_plan over the profile's plugins, kept apart: taking the plan
        # (filter_plugins_for) on every call, as Filter with nominated pods does per node, cost PreemptionBasic 12 %.
        skip = state.skip_filter_plugins
        for pl in self._points["filter"]:
            if skip and pl.name in skip:
                continue
            try:
                st = pl.filter(state, pod, node_info)
            except Exception as e:
                return _raised(pl.name, "Filter", e)
            if st is None:
                continue
            if type(st) is not Status:
                st = _check_status(pl.name, "Filter", st)
                if st is None:
                    continue
            code = st.code
            if code == Code.SUCCESS:
                continue
            if code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
                st.plugin = pl.name
                return st
            return Status(Code.ERROR, f'running "{pl.name}" filter plugin: {st.message()}', plugin=pl.name,
                          error=st.error)
        return None

    def filter_plugins_for(self, state: CycleState) -> tuple[tuple[str, Any], ...]:
        """(name, bound filter method) of the Filter plugins this cycle runs (PreFilter SKIPs removed): one tuple
        per set of skipped plugins, kept while the profile's Filter plugins are the same list."""
        skip = state.skip_filter_plugins
        points = self._points["filter"]
        kept = self._filter_plans
        if kept is None or kept[0] is not points:
            kept = self._filter_plans = (points, {})
        key = frozenset(skip) if skip else _NO_SKIP
        plan = kept[1].get(key)
        if plan is None:
            plan = tuple((pl.name, pl.filter) for pl in points if not (skip and pl.name in skip))
            if len(kept[1]) < MAX_FILTER_PLANS:
                kept[1][key] = plan
        return plan

    def filter_batches(self, filters: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]] | None:
        """(name, ``filter_nodes``) for each of ``filters`` when every one has a batch form the framework may use
        (see :func:`batch_filter`), else None."""
        batches = self._filter_batch
        if not batches:
            return None
        out: list[tuple[str, Any]] = []
        for name, _fn in filters:
            batch = batches.get(name)
            if batch is None or "filter" in getattr(self.plugins[name], "__dict__", ()):
                return None
            out.append((name, batch))
        return out

    def filter_memo_key(self, state: CycleState, pod: Pod, filters: Sequence[tuple[str, Any]]
                        ) -> tuple[int, int | None, list[int | None]]:
        """(n, key, keys): the first ``n`` of this cycle's ``filters`` sign the pod; their combined verdict on a
        node is kept under ``key``, and each one's own verdict under its entry of ``keys`` (runtime/columns.py;
        None, n = 0: nothing to reuse). The verdict of the first ``n`` filters depends only on their signatures
        and the NodeInfo, so it holds while the NodeInfo does; so does each one's."""
        signers = self._filter_signers
        if not signers:
            return 0, None, []
        parts: list[tuple[str, Any]] = []
        for name, _fn in filters:
            fn = signers.get(name)
            if fn is None or "filter" in getattr(self.plugins[name], "__dict__", ()):
                break
            frag = sign(fn, state, pod)
            if frag is None:
                break
            parts.append((name, frag))
        if not parts:
            return 0, None, []
        keys = self._memo_keys
        key = keys.key(("filter", tuple(parts)))
        if key is None:
            return 0, None, []
        return len(parts), key, [keys.key(("filter-1", name, frag)) for name, frag in parts]

    def _signed_raw_scores(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugins: Sequence[Any]
                           ) -> dict[str, list[int]]:
        """The raw score column of every scorer that signs the pod (runtime/signatures.py), by plugin name.

        Each scorer's raw scores are kept per signature in a column over the snapshot's node list
        (runtime/columns.py) and reused while a node is unchanged; only the nodes without one are scored (in
        batch when the plugin can), and their scores kept. Pods that differ in one signature (another image,
        other requests) still share the others. When a scorer fails on those nodes nothing is returned: the
        plain pass then meets and reports the failure exactly as before. Pinned by
        tests/test_perf_equivalence.py::test_signature_scores_are_reused_exactly."""
        parts: list[tuple[Any, Any]] = []
        for pl in plugins:
            fn = self._score_signers.get(pl.name)
            if fn is None or "score" in getattr(pl, "__dict__", ()):
                continue
            frag = sign(fn, state, pod)
            if frag is not None:
                parts.append((pl, frag))
        if not parts:
            return {}
        kept = self.node_columns
        positions = kept.positions(nodes, self.snapshot.node_info_list)
        spare = kept.spare
        listed = positions.count(spare) < len(positions)
        gather = gatherer(positions)
        out: dict[str, list[int]] = {}
        for pl, frag in parts:
            key = self._memo_keys.key(("score", pl.name, frag))
            col = kept.column(key) if key is not None else None
            missing: list[int] | None = None  # None: every node
            if col is not None:
                got: list[int | None] = gather(col)
                if None not in got:
                    out[pl.name] = cast("list[int]", got)
                    continue
                missing = [j for j, v in enumerate(got) if v is None]
            sub = nodes if missing is None else [nodes[j] for j in missing]
            batch = self._score_batch.get(pl.name)
            vals = _run_batch(batch, state, pod, sub, len(sub), pl.name in self._exact_batch) \
                if batch is not None else None
            if vals is None:
                vals, err = _score_node_by_node(pl, state, pod, sub)
                if err is not None:
                    return {}
            if (vals and self._score_ext.get(pl.name) is None
                    and (min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE)):
                return {}  # a score out of range is kept nowhere: the plain pass reports it
            if key is not None and listed:
                if col is None:
                    col = kept.new_column(key)
                if missing is None:
                    for p, v in zip(positions, vals, strict=True):
                        col[p] = v
                else:
                    for j, v in zip(missing, vals, strict=True):
                        col[positions[j]] = v
                col[spare] = None  # the slot of nodes outside the list never holds an answer
            if missing is None:
                out[pl.name] = vals
            else:
                for j, v in zip(missing, vals, strict=True):
                    got[j] = v
                out[pl.name] = cast("list[int]", got)
        return out

    @staticmethod
    def filter_verdict(plugin: str, st: Any) -> Status | None:
        """What ``run_filter_plugins`` makes of a non-None Filter result: None to go on with the next plugin,
        else the status to stop with (a rejection naming ``plugin``, or an ERROR)."""
        if type(st) is not Status:
            checked = _check_status(plugin, "Filter", st)
            if checked is None:
                return None
            st = checked
        status: Status = st
        code = status.code
        if code == Code.SUCCESS:
            return None
        if code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
            status.plugin = plugin
            return status
        return Status(Code.ERROR, f'running "{plugin}" filter plugin: {status.message()}', plugin=plugin,
                      error=status.error)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        """Filter twice when higher-or-equal priority pods are nominated to the node: once with them added,
        once without (the pod must fit both ways)."""
        return self._filter_with_nominated_pods(None, state, pod, node_info)

    def run_filter_plan(self, plan: Sequence[tuple[str, Any]], state: CycleState, pod: Pod,
                        node_info: NodeInfo) -> Status | None:
        """:meth:`run_filter_plugins` over ``plan``, the cycle's :meth:`filter_plugins_for` taken once (for
        whoever filters one pod many times in a cycle, as preemption's dry run does)."""
        for name, fn in plan:
            try:
                st = fn(state, pod, node_info)
            except Exception as e:
                return _raised(name, "Filter", e)
            if st is None:
                continue
            if type(st) is not Status:
                st = _check_status(name, "Filter", st)
                if st is None:
                    continue
            code = st.code
            if code == Code.SUCCESS:
                continue
            if code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
                st.plugin = name
                return st
            return Status(Code.ERROR, f'running "{name}" filter plugin: {st.message()}', plugin=name,
                          error=st.error)
        return None

    def run_filter_plan_with_nominated_pods(self, plan: Sequence[tuple[str, Any]], state: CycleState, pod: Pod,
                                            node_info: NodeInfo) -> Status | None:
        """:meth:`run_filter_plugins_with_nominated_pods` over ``plan`` (see :meth:`run_filter_plan`). Pinned by
        tests/test_perf_equivalence.py::test_preemption_bulk_removal_equals_plain."""
        return self._filter_with_nominated_pods(plan, state, pod, node_info)

    def _filter_with_nominated_pods(self, plan: Sequence[tuple[str, Any]] | None, state: CycleState, pod: Pod,
                                    node_info: NodeInfo) -> Status | None:
        """Both forms of Filter with nominated pods: each pass runs ``plan``, or :meth:`run_filter_plugins`
        (which a subclass may replace) when there is none."""
        def run(s: CycleState, ni: NodeInfo) -> Status | None:
            if plan is None:
                return self.run_filter_plugins(s, pod, ni)
            return self.run_filter_plan(plan, s, pod, ni)

        nominated = self.nominator.nominated_pods_for_node(node_info.name) if len(self.nominator) else None
        if not nominated:
            return run(state, node_info)
        added, state_with, info_with, err = self._add_ge_nominated_pods(state, pod, node_info, nominated)
        if err is not None:
            return err
        st = run(state_with, info_with)
        if st is not None and not st.is_success() and not st.is_rejected():
            return st
        if not added or (st is not None and not st.is_success()):
            return st
        return run(state, node_info)

    def _add_ge_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               nominated: list[PodInfo]) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        prio = pod.priority
        uid = pod.uid
        to_add = [npi for npi in nominated if npi.pod.priority >= prio and npi.pod.uid != uid]
        if not to_add:
            # nothing to add: Filter reads the node as it is (a copy would equal it), once
            return False, state, node_info, None
        info_out = node_info.clone(noted=False) if type(node_info) is NodeInfo else node_info.clone()
        # AddPod changes the state: a copy then; when no extension runs for the pod the copy would equal the
        # state, which Filter reads as it does on every other node, and there is no AddPod to call
        active = self.pre_filter_extensions_active(state)
        state_out = state.clone() if not SHARE_UNEXTENDED_STATE or active else state
        for npi in to_add:
            info_out.add_pod(npi)
            if active or not SHARE_UNEXTENDED_STATE:
                st = self.run_pre_filter_extension_add_pod(state_out, pod, npi, info_out)
                if st is not None and not st.is_success():
                    return False, state, node_info, st
        return True, state_out, info_out, None

    # PostFilter ------------------------------------------------------------------------------
    def run_post_filter_plugins(self, state: CycleState, pod: Pod, filtered_node_status_map: dict[str, Status]
                                ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self._points["postFilter"]:
            try:
                out = pl.post_filter(state, pod, filtered_node_status_map)
                if not (isinstance(out, tuple) and len(out) == 2):
                    return None, _bad_shape(pl.name, "PostFilter", out, "(PostFilterResult or None, Status or None)")
                r, st = out
                if r is not None and not isinstance(r, PostFilterResult):
                    return None, _bad_shape(pl.name, "PostFilter", out, "(PostFilterResult or None, Status or None)")
                if r is not None and not _well_formed_post_filter_result(r):
                    return None, _bad_shape(pl.name, "PostFilter", r, "a PostFilterResult whose nominated_node_name "
                                            "is a str and victims a sequence of str")
                st = _check_status(pl.name, "PostFilter", st)
            except Exception as e:
                return None, _raised(pl.name, "PostFilter", e)
            if st is None or st.code == Code.SUCCESS:
                return r, st if st is not None else Status(Code.SUCCESS)
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, st.with_plugin(pl.name)
            if not st.is_rejected():
                return None, Status(Code.ERROR, st.message(), plugin=pl.name, error=st.error)
            if r is not None and r.mode != "Noop":
                result = r
            reasons.extend(st.reasons)
            if not rejector:
                rejector = pl.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # PreScore / Score ------------------------------------------------------------------------
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        skip: set[str] = set()
        state.skip_score_plugins = skip
        for pl in self._points["preScore"]:
            try:
                st = _check_status(pl.name, "PreScore", pl.pre_score(state, pod, nodes))
            except Exception as e:
                return _raised(pl.name, "PreScore", e)
            if st is None or st.code == Code.SUCCESS:
                continue
            if st.code == Code.SKIP:
                skip.add(pl.name)
                continue
            return _as_error(pl.name, "PreScore", st)
        return None

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                          detail: ScoreDetail | None = None) -> tuple[list[NodePluginScores], Status | None]:
        names, totals, columns, st = self.score_columns(state, pod, nodes, detail)
        if st is not None:
            return [], st
        from_columns = NodePluginScores._from_columns
        return [from_columns(names[i], columns, i, totals[i]) for i in range(len(names))], None

    def score_columns(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], detail: ScoreDetail | None = None
                      ) -> tuple[list[str], list[int], list[tuple[str, list[int], int]], Status | None]:
        """:meth:`run_score_plugins` without a NodePluginScores per node: (node names, total scores,
        (plugin, normalized scores, weight) per plugin, status), every list in node order."""
        skip = state.skip_score_plugins
        plugins = [pl for pl in self._points["score"] if pl.name not in skip]
        names = [ni.name for ni in nodes]
        n = len(names)
        # One column of weighted scores per plugin, in node order; NodePluginScores read them lazily.
        columns: list[tuple[str, list[int], int]] = []
        weighted: list[list[int]] = []
        const_total = 0  # the weighted scores of the columns where every node scored the same
        batches = self._score_batch
        # Raw scores of the node-local scorers that sign the pod, reused on unchanged NodeInfos.
        signed = self._signed_raw_scores(state, pod, nodes, plugins) if self._score_signers else {}
        constants = self._score_constant
        vals: list[int] | None
        for pl in plugins:
            name = pl.name
            if constants:
                const_fn = constants.get(name)
                if const_fn is not None and "score" not in getattr(pl, "__dict__", ()):
                    c = _run_constant(const_fn, state, pod)
                    if c is not None:
                        # every node scores c, before and after normalizing: nothing to call or check
                        weight = self.score_weights[name]
                        vals = [c] * n
                        const_total += c * weight
                        columns.append((name, vals, weight))
                        if detail is not None:
                            detail.add(name, [c] * n, [c] * n, weight)
                        continue
            vals = None
            batch = batches.get(name)
            if batch is not None and "score" in getattr(pl, "__dict__", ()):
                batch = None  # an instance that overrides score is scored node by node
            if name in signed:
                vals = signed[name]
            elif batch is not None:
                vals = _run_batch(batch, state, pod, nodes, n, name in self._exact_batch)
            if vals is None:
                vals, err = _score_node_by_node(pl, state, pod, nodes)
                if err is not None:
                    return names, [], [], err
            raw = list(vals) if detail is not None else None
            normalized = list(vals) if detail is not None else None
            ext = self._score_ext.get(name)
            normalize_batch = self._normalize_batch.get(name) if ext is not None else None
            if normalize_batch is not None and "normalize_score" not in getattr(ext, "__dict__", ()):
                batch_vals = _run_normalize_batch(normalize_batch, state, pod, names, vals,
                                                  name in self._exact_normalize)
                if batch_vals is not None:
                    vals = batch_vals
                    ext = None  # normalized
                    if detail is not None:
                        normalized = list(vals)
            if ext is not None:
                scores = [NodeScore(nm, v) for nm, v in zip(names, vals, strict=True)]
                try:
                    st = _check_status(name, "NormalizeScore", ext.normalize_score(state, pod, scores))
                except Exception as e:
                    return names, [], [], _normalize_error(name, f"raised {type(e).__name__}: {e}", e)
                if st is not None and st.code != Code.SUCCESS:
                    return names, [], [], _normalize_error(name, f"failed with: {st.message()}", None)
                if type(scores) is not list or len(scores) != n:
                    # Go hands NormalizeScore a slice whose length it cannot change; a Python list can
                    got = len(scores) if isinstance(scores, list) else type(scores).__name__
                    return names, [], [], _normalize_error(
                        name, f"changed the score list to {got} entries for {n} nodes", None)
                try:
                    vals = [ns.score for ns in scores]
                except AttributeError:
                    bad = next(ns for ns in scores if not hasattr(ns, "score"))
                    return names, [], [], _bad_shape(name, "NormalizeScore", bad, "NodeScore entries")
                if detail is not None:
                    normalized = [ns.score for ns in scores]
            # Scores from Score, score_nodes or normalize_values are ints already (checked as they came in); only
            # normalize_score's NodeScores may hold anything. So the common case is one C-speed range check over
            # the distinct values; otherwise the first bad score is found and reported. Kept raw scores of a
            # scorer without NormalizeScore were checked when they were kept (_signed_raw_scores).
            weight = self.score_weights[name]
            constant = False
            if vals and not (ext is None and name in signed and self._score_ext.get(name) is None):
                distinct = set(vals) if ext is None or _all_ints(vals) else None
                if distinct is None or min(distinct) < MIN_NODE_SCORE or max(distinct) > MAX_NODE_SCORE:
                    bad = _first_bad_score(vals)
                    if bad is not None:
                        return names, [], [], _bad_score_status(name, bad)
                elif len(distinct) == 1:
                    constant = True
            if constant:  # every node has the same score: added to the totals once
                const_total += vals[0] * weight
            else:
                weighted.append(vals if weight == 1 else [s * weight for s in vals])
            columns.append((name, vals, weight))
            if detail is not None and raw is not None and normalized is not None:
                detail.add(name, raw, normalized, weight)
        # Each node's total: the sum of its weighted scores (one pass over the nodes for all plugins), plus the
        # columns that gave every node the same score.
        totals: list[int]
        if not weighted:
            totals = [const_total] * n
        elif len(weighted) == 1:
            totals = list(map(const_total.__add__, weighted[0])) if const_total else list(weighted[0])
        elif len(weighted) == 2:  # the usual counts of columns, added without a tuple and a sum() call per node
            w1, w2 = weighted
            totals = [x + y + const_total for x, y in zip(w1, w2, strict=True)]
        elif len(weighted) == 3:
            w1, w2, w3 = weighted
            totals = [x + y + z + const_total for x, y, z in zip(w1, w2, w3, strict=True)]
        elif len(weighted) == 4:
            w1, w2, w3, w4 = weighted
            totals = [x + y + z + v + const_total for x, y, z, v in zip(w1, w2, w3, w4, strict=True)]
        else:
            totals = list(map(sum, zip(*weighted, strict=True), repeat(const_total)))
        return names, totals, columns, None

    # Reserve / Permit ------------------------------------------------------------------------
    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._run_until_failure("reserve", "Reserve", lambda pl: pl.reserve(state, pod, node_name))

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve in reverse order; a plugin that raises does not stop the others."""
        for pl in reversed(self._points["reserve"]):
            with contextlib.suppress(Exception):  # unreserve must reach every plugin
                pl.unreserve(state, pod, node_name)

    def list_pods(self, namespace: str | None = None) -> list[Pod]:
        """Every pod known to the scheduler (pending and bound), of ``namespace`` when given: what upstream
        plugins read from the shared informer's pod lister."""
        if self.pod_lister is not None:
            pods: Iterable[Pod] = self.pod_lister()
        else:
            pods = [pi.pod for ni in self.snapshot.list() for pi in ni.pods]
        return [p for p in pods if namespace is None or p.namespace == namespace]

    def register_pod_group_key(self, key: Callable[[Pod], Any]) -> None:
        """A plugin that places groups of pods together (Coscheduling) says how to name a pod's group (a
        falsy key: no group). The reference Scheduler then does not send a group round again on the room its
        own members gave back when its attempt failed (docs/differences.md, gang scheduling)."""
        self.pod_group_keys.append(key)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Ask the scheduling queue to retry ``pods`` now (upstream's ``Handle.Activate``)."""
        if self.pod_activator is not None:
            self.pod_activator(pods)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        waits: dict[str, float] = {}
        for pl in self._points["permit"]:
            try:
                out = pl.permit(state, pod, node_name)
                if not (isinstance(out, tuple) and len(out) == 2):
                    return _bad_shape(pl.name, "Permit", out, "(Status or None, timeout seconds)")
                st, timeout = out
                st = _check_status(pl.name, "Permit", st)
            except Exception as e:
                return _raised(pl.name, "Permit", e)
            if st is None or st.code == Code.SUCCESS:
                continue
            if st.is_rejected():
                return st.with_plugin(pl.name)
            if st.code == Code.WAIT:
                t = _permit_timeout(timeout)
                if t is None:
                    return _bad_shape(pl.name, "Permit", out, "(Status or None, timeout seconds as a finite number)")
                waits[pl.name] = t
                continue
            return _as_error(pl.name, "Permit", st)
        if waits:
            self.waiting_pods.add(WaitingPod(pod, waits, self.permit_clock))
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
        return None

    def wait_on_permit(self, pod: Pod) -> Status | None:
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        try:
            st = wp.wait()
        finally:
            self.waiting_pods.remove(pod.uid)
        if st.code == Code.SUCCESS:
            return None
        if st.is_rejected():
            return st
        return Status(Code.ERROR, f"waiting on permit for pod: {st.message()}", plugin=st.plugin)

    def next_permit_deadline(self) -> float | None:
        """The earliest Permit timeout on :attr:`permit_clock` among the waiting pods (None: none pending)."""
        return self.waiting_pods.next_deadline() if len(self.waiting_pods) else None

    def expire_waiting_pods(self, now: float) -> None:
        """Reject the waiting pods whose Permit timeout on :attr:`permit_clock` has passed at ``now``."""
        if len(self.waiting_pods):
            self.waiting_pods.expire(now)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]:
        return iter(self.waiting_pods)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    # PreBind / Bind / PostBind ---------------------------------------------------------------
    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._run_until_failure("preBind", "PreBind", lambda pl: pl.pre_bind(state, pod, node_name),
                                       state.skip_pre_bind_plugins)

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first bind plugin that does not SKIP binds the pod; all skipping gives SKIP."""
        st: Status = Status(Code.SKIP)
        for pl in self._points["bind"]:
            try:
                got = _check_status(pl.name, "Bind", pl.bind(state, pod, node_name))
            except Exception as e:
                return _raised(pl.name, "Bind", e)
            st = got if got is not None else Status(Code.SUCCESS)
            if st.code == Code.SKIP:
                continue
            if st.code != Code.SUCCESS:
                if st.is_rejected():
                    return st.with_plugin(pl.name)
                return _as_error(pl.name, "Bind", st)
            return st
        return st

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for pl in self._points["postBind"]:
            with contextlib.suppress(Exception):  # PostBind is informational; one failure must not stop the rest
                pl.post_bind(state, pod, node_name)

    def __repr__(self) -> str:
        return f"Framework({self.profile_name!r}, plugins={list(self.plugins)})"


def _signature(fn: Any) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"
