"""Pod signatures: reuse a node-local plugin's Filter verdict or raw Score on a NodeInfo that did not change.

Replicas of one workload ask every node the same questions. A plugin whose answer for a pod on a node depends
only on some part of the pod (its requests, its tolerations, ...) and on that node's NodeInfo can say so by
returning that part, hashable, from an optional method:

* ``filter_signature(state, pod)``: called after PreFilter; the plugin's Filter verdict on any NodeInfo is a
  function of the returned value, the NodeInfo's content (its node and pods) and the plugin's configuration;
* ``score_signature(state, pod)``: the same for its raw Score (before normalization), called after PreScore.

``None`` means the pod cannot be signed this cycle; the plugin then runs as usual. The framework keeps the
answers in columns over the snapshot's node list (runtime/columns.py), which every change of a NodeInfo
empties at its position, under a key unique to this framework and signature: the Filter verdict of the
leading signed filters per combination of their signatures, each scorer's raw scores per its signature.
Like ``score_nodes``, a signature method is taken only from the class that defines the method it vouches for,
so a subclass overriding ``filter`` alone is never bypassed.

This is upstream 1.35's pod scheduling signature idea, made exact: upstream reuses a whole cycle's result for
pods with the same signature; here only per-node answers are reused, and only while the node is unchanged.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState

Signer = Callable[[CycleState, Pod], Hashable | None]

# Memo keys come from one process-wide counter, so two frameworks (whose plugins may be configured
# differently) never share a key, and a key forgotten by its table is never handed out again.
_keys = itertools.count(1)

#: Beyond this many signatures a framework forgets the table (new keys are fresh; nothing stale is reused).
MAX_SIGNATURES = 4096
#: A NodeInfo keeps at most this many answers; beyond it new answers are computed but not kept.
MAX_MEMO_ENTRIES = 64


def defining_class(cls: type, attr: str) -> type | None:
    """The first class of ``cls``'s MRO whose own namespace defines ``attr``; None when none does."""
    for c in cls.__mro__:
        if attr in c.__dict__:
            return c
    return None


def companion(plugin: Any, method: str, vouches_for: str) -> Any:
    """The plugin's ``method`` when the class defining it also defines ``vouches_for``; None otherwise. A
    companion (a signature, a batch form, a sort key) stands for the method it vouches for, so a subclass that
    overrides that method alone must not have its parent's companion used in its place."""
    fn = getattr(plugin, method, None)
    if not callable(fn):
        return None
    cls = type(plugin)
    owner = defining_class(cls, vouches_for)
    if owner is None or owner is not defining_class(cls, method):
        return None
    return fn


def signer(plugin: Any, method: str, vouches_for: str) -> Signer | None:
    """The plugin's ``method`` (filter_signature / score_signature) when the class defining it also defines
    ``vouches_for`` (filter / score); None otherwise."""
    return companion(plugin, method, vouches_for)  # type: ignore[no-any-return]


class MemoKeys:
    """Interns signatures as small ints (the keys of kept answers) for one framework."""

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[Hashable, int] = {}

    def key(self, signature: Hashable) -> int | None:
        """The key of ``signature``; None when it is not hashable (nothing is then cached)."""
        table = self._table
        try:
            k = table.get(signature)
        except TypeError:
            return None
        if k is None:
            if len(table) >= MAX_SIGNATURES:
                table.clear()
            k = table[signature] = next(_keys)
        return k


def sign(fn: Signer, state: CycleState, pod: Pod) -> Hashable | None:
    """``fn(state, pod)``, with a failure read as "cannot sign" (the plugin then runs and reports it)."""
    try:
        return fn(state, pod)
    except Exception:
        return None


T = TypeVar("T")


class KeptPerPod(Generic[T]):
    """Answers that depend on nothing but a Pod object, kept for that very object (pods are immutable): looked up
    by uid and taken only when the kept pod is the same object. Up to ``limit`` pods, then forgotten all at once;
    an answer that raises is not kept."""

    __slots__ = ("_kept", "limit")

    def __init__(self, limit: int) -> None:
        self._kept: dict[str, tuple[Pod, T]] = {}
        self.limit = limit

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, pod: Pod, compute: Callable[[Pod], T]) -> T:
        hit = self._kept.get(pod.uid)
        if hit is not None and hit[0] is pod:
            return hit[1]
        answer = compute(pod)
        if len(self._kept) >= self.limit:
            self._kept.clear()
        self._kept[pod.uid] = (pod, answer)
        return answer
