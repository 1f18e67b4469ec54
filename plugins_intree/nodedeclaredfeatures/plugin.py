"""NodeDeclaredFeatures: keeps a pod off nodes that do not declare a feature its spec needs.

PreFilter infers the pod's required features from the release's registry (:mod:`.registry`) and SKIPs
pods that need none (almost all of them), so Filter runs only for the few that do. Filter rejects, as
UnschedulableAndUnresolvable, a node whose ``status.declaredFeatures`` lacks one of them. The plugin does
nothing unless the NodeDeclaredFeatures gate is on (beta, on by default from 1.36; GA in 1.37), and
upstream's default profile lists it only then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from plugins_intree.nodedeclaredfeatures.registry import Feature, infer_for_pod_scheduling, registry_for
from scheduling_framework.api.declared_features import pod_feature_use
from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.errors import ValidationError
from scheduling_framework.features import features_of
from scheduling_framework.interfaces import PreFilterResult
from scheduling_framework.runtime.signatures import KeptPerPod
from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.status import Code, Status
from scheduling_framework.versions import at_least, release_of

NAME: Final = "NodeDeclaredFeatures"
GATE: Final = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
#: Filter's reason from 1.36 on.
ERR_REASON_UNSATISFIED_REQUIREMENTS: Final = "node(s) didn't match Pod's required features"
#: Filter's reason in 1.35, followed by the missing features.
ERR_REASON_UNSATISFIED_1_35: Final = "node declared features check failed - unsatisfied requirements: "
_FIXED_REASON_SINCE: Final = "1.36"
_KEPT_PODS: Final = 4096  # pods whose required features are kept (see required_features)

#: queueing hints (upstream's fwk.Queue / fwk.QueueSkip).
QUEUE: Final = "Queue"
QUEUE_SKIP: Final = "QueueSkip"


class NodeDeclaredFeatures:
    """PreFilter and Filter; ``events_to_register`` and the two queueing hints say which cluster events can
    make a rejected pod schedulable."""

    name = NAME
    #: False: infer a pod's features afresh every cycle (the plain path the equivalence tests compare with)
    fast_paths: bool = True

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        release = release_of(handle)
        self.enabled = features_of(handle).enabled(GATE)
        self.features: tuple[Feature, ...] = registry_for(release)
        self.version: str | None = f"{release}.0"
        self.list_missing = not at_least(release, _FIXED_REASON_SINCE)
        # pod uid -> (the Pod object, its required features): see required_features
        self._required: KeptPerPod[frozenset[str]] = KeptPerPod(_KEPT_PODS)

    @classmethod
    def with_registry(cls, features: Sequence[Feature], version: str | None, *, enabled: bool = True,
                      list_missing: bool = False) -> NodeDeclaredFeatures:
        """A plugin with its own feature registry and version (upstream's tests build it so)."""
        pl = cls()
        pl.enabled = enabled
        pl.features = tuple(features)
        pl.version = version
        pl.list_missing = list_missing
        return pl

    def required_features(self, pod: Pod) -> frozenset[str]:
        """The features the pod needs a node to declare (ValidationError / ValueError on bad input).

        Kept per Pod object while ``fast_paths`` is on (pods are immutable, and what-if loops and retries bring
        the same objects back every cycle); errors are not kept. Pinned by tests/test_perf_equivalence.py::
        test_declared_features_kept_per_pod_equal_plain."""
        if not self.fast_paths:
            return self._infer(pod)
        return self._required.get(pod, self._infer)

    def _infer(self, pod: Pod) -> frozenset[str]:
        return infer_for_pod_scheduling(self.features, pod_feature_use(pod), self.version)

    # PreFilter / Filter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.SKIP)
        try:
            reqs = self.required_features(pod)
        except (ValidationError, ValueError) as e:
            return None, Status.from_error(e)
        if not reqs:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, reqs)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter_signature(self, state: CycleState, pod: Pod) -> frozenset[str] | None:
        """Filter reads of the pod only the features PreFilter inferred."""
        reqs: frozenset[str] | None = state.get(PRE_FILTER_STATE_KEY)
        return reqs

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        reqs: frozenset[str] | None = state.get(PRE_FILTER_STATE_KEY)
        if reqs is None:
            return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found')
        node = node_info.node
        declared = node.status.declared_features if node is not None else ()
        missing = [f for f in reqs if f not in declared]
        if not missing:
            return None
        if self.list_missing:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_1_35 + ", ".join(sorted(missing)))
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)

    # requeueing ---------------------------------------------------------------------------------------
    def events_to_register(self) -> list[tuple[str, str]]:
        """Upstream's EventsToRegister: a node added or its declared features changed; the pod updated."""
        if not self.enabled:
            return []
        return [("Node", "Add|UpdateNodeDeclaredFeature"), ("Pod", "Update")]

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node) -> str:
        """Queue unless the node's declared features are unchanged."""
        if old is not None and old.status.declared_features == new.status.declared_features:
            return QUEUE_SKIP
        return QUEUE

    def is_schedulable_after_pod_update(self, pod: Pod, old: Pod, new: Pod) -> str:
        """Queue when the update changes the pod's required features (or they cannot be inferred); skip
        another pod's update (1.35; from 1.36 the event is the target pod's own update only)."""
        if new.uid != pod.uid:
            return QUEUE_SKIP
        try:
            changed = self.required_features(old) != self.required_features(new)
        except (ValidationError, ValueError):
            return QUEUE
        return QUEUE if changed else QUEUE_SKIP
