"""ClusterSnapshot: a mutable, forkable cluster state with a live :class:`Snapshot` for a Framework to read.

Transactions follow cluster-autoscaler's ClusterSnapshot: ``fork()`` opens a nested transaction in O(1),
``revert()`` undoes what it changed, ``commit()`` folds its changes into the enclosing one.

How a fork stays cheap:

- NodeInfos are copied on write. The first change to a node inside a fork clones its NodeInfo, puts the
  clone in the live snapshot and remembers the previous object; the previous object is never mutated
  again, so revert simply puts it back. Nodes the fork did not touch are shared with the parent.
- Every other piece of state (pod locations, image counts, node order, the node list) is changed through
  an undo log of small entries, replayed backwards on revert.
- Commit hands the fork's remembered NodeInfos and its undo log to the parent fork (the parent keeps its
  own, older record of a node when it has one), so reverting the parent later still restores everything.

Outside any fork, changes apply in place and nothing is recorded.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resize import DEFAULT_RULES, RequestRules
from scheduling_framework.errors import SnapshotError
from scheduling_framework.simulation.templates import node_from_template, pod_for_node, template_node_names
from scheduling_framework.state.node_info import ImageStateSummary, NodeInfo, PodInfo
from scheduling_framework.state.snapshot import Snapshot, zone_key

OPEN = "open"
COMMITTED = "committed"
REVERTED = "reverted"

_MISSING: Any = object()
_NEW_NODE: Any = object()  # the content token every added node's token moves from (see _advance_node)
_TEMPLATE_COPIES = 4096  # remembered template copies (see ClusterSnapshot._node_copy)
_RENAMED_INFOS = 4096  # PodInfos kept for pods added without spec.nodeName (see ClusterSnapshot._renamed_info)
_TRANSITIONS = 65536  # remembered content transitions (see ClusterSnapshot._advance)

# An undo entry: (mapping, key, previous value or _MISSING), or (None, callback, None).
_Undo = tuple[Any, Any, Any]


class Fork:
    """One level of nested transaction on a :class:`ClusterSnapshot`, returned by ``fork()``.

    ``state`` is ``"open"``, ``"committed"`` or ``"reverted"``. Used as a context manager, a fork still
    open at the end of the ``with`` block is reverted (call :meth:`commit` inside the block to keep it).
    """

    __slots__ = ("id", "state", "_owner", "_saved", "_log", "_content")

    def __init__(self, owner: ClusterSnapshot, fork_id: int) -> None:
        self.id = fork_id
        self.state = OPEN
        self._owner = owner
        self._content = owner.content  # what revert brings back
        # node name -> the NodeInfo live when this fork first changed the node (None: the node did not exist)
        self._saved: dict[str, NodeInfo | None] = {}
        self._log: list[_Undo] = []

    def revert(self) -> None:
        """Undo every change made since this fork was opened (it must be the innermost open fork)."""
        self._owner._revert(self)

    def commit(self) -> None:
        """Keep this fork's changes as part of the enclosing fork (or of the base state)."""
        self._owner._commit(self)

    def __enter__(self) -> Fork:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.state != OPEN:
            return
        # Forks opened inside the block and left open are reverted with it.
        forks = self._owner._forks
        while forks and forks[-1] is not self:
            self._owner._revert(forks[-1])
        self._owner._revert(self)

    def __repr__(self) -> str:
        return f"Fork(#{self.id}, {self.state})"


class ClusterSnapshot:
    """Nodes and the pods bound to them, with fork / revert / commit, read by a Framework through ``snapshot``.

    ``snapshot`` is one :class:`~scheduling_framework.state.snapshot.Snapshot` object that stays current:
    give it to a Framework once (``Framework(..., snapshot=cs.snapshot)``) and every change, fork and
    revert is visible to the next cycle. Node order is upstream's node-tree order (zones round-robin,
    nodes in the order they were added). Treat the NodeInfos it holds as read-only; change the cluster
    through this class so that forks can undo the change.

    Errors (:class:`SnapshotError`) are raised before anything changes: a failed call leaves the
    snapshot as it was.
    """

    def __init__(self, nodes: Iterable[Node] = (), pods: Iterable[Pod] = (),
                 rules: RequestRules = DEFAULT_RULES) -> None:
        """Build from nodes and the pods bound to them (each pod's ``spec.nodeName`` must name one of the nodes).
        ``rules``: how in-place resizes in pod statuses count (the release and gates the simulation follows)."""
        self.rules = rules
        self._snapshot = Snapshot()
        self._nodes: dict[str, Node] = {}
        self._zone_of: dict[str, str] = {}
        self._zones: dict[str, list[str]] = {}
        self._index: dict[str, int] = {}
        self._pod_nodes: dict[str, str] = {}
        self._image_counts: dict[str, int] = {}
        self._forks: list[Fork] = []
        self._fork_ids = 0
        self._template_copies: dict[tuple[int, str], tuple[Node, Node]] = {}
        self._renamed_infos: dict[int, tuple[Pod, PodInfo]] = {}  # see _renamed_info
        #: A token naming the content of the snapshot: two moments with the same token have the same nodes,
        #: pods and node order. Each change moves to the token that this change from this token led to the
        #: last time (see _advance); revert brings back the fork's starting token; changes that are not
        #: told apart get a new token. A what-if loop that reverts its fork and makes the same changes
        #: again thus sees the same tokens, and answers derived from the content can be kept under them.
        #: Pinned by tests/test_perf_equivalence.py::test_content_token_names_the_content.
        self.content: object = object()
        self._transitions: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        #: node name -> a token naming that node's content (its Node, its pods and their order), kept as
        #: ``content`` is: a node changed the same way from the same token gets the same token. Answers that
        #: depend on a few nodes only can be kept under their tokens (see node_content).
        #: Pinned by tests/test_perf_equivalence.py::test_node_content_token_names_the_node.
        self._node_content: dict[str, object] = {}
        self._load(list(nodes), list(pods))

    def _load(self, nodes: list[Node], pods: list[Pod]) -> None:
        infos: dict[str, NodeInfo] = {}
        for n in nodes:
            if n.name in infos:
                raise SnapshotError(f'duplicate node "{n.name}": node names must be unique')
            infos[n.name] = NodeInfo(n)
        seen: dict[str, str] = {}
        for p in pods:
            self._check_new_pod(p, p.spec.node_name, infos, seen)
            seen[p.uid] = p.spec.node_name
        for p in pods:
            infos[p.spec.node_name].add_pod(PodInfo(p, self.rules))
        m = self._snapshot.node_info_map
        for n in nodes:
            self._nodes[n.name] = n
            self._node_content[n.name] = object()
            z = zone_key(n)
            self._zone_of[n.name] = z
            self._zones.setdefault(z, []).append(n.name)
            m[n.name] = infos[n.name]
            for name in _image_names(n):
                self._image_counts[name] = self._image_counts.get(name, 0) + 1
        for ni in infos.values():
            ni.image_states = self._image_states_of(ni.node)
        self._pod_nodes.update(seen)
        self._rebuild_list()

    # reading ---------------------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        """The live Snapshot a Framework reads (the same object for the life of this ClusterSnapshot)."""
        return self._snapshot

    def get(self, node_name: str) -> NodeInfo:
        """The node's current NodeInfo (read-only); SnapshotError when the node is not in the snapshot."""
        ni = self._snapshot.node_info_map.get(node_name)
        if ni is None:
            raise SnapshotError(f'node "{node_name}" is not in the snapshot')
        return ni

    def has_node(self, node_name: str) -> bool:
        return node_name in self._nodes

    def node_content(self, names: Iterable[str]) -> tuple[object, ...]:
        """The content tokens of these nodes (KeyError for a node not in the snapshot): equal tuples at two
        moments mean these nodes held the same Node objects and pods (the same Pod objects, added in the same
        order). Image states are not named: they follow cluster-wide counts (see refresh_image_states)."""
        return tuple(map(self._node_content.__getitem__, names))

    def node_names(self) -> builtins.list[str]:
        """Node names in the order nodes were added."""
        return list(self._nodes)

    def nodes(self) -> builtins.list[Node]:
        """Nodes in the order they were added."""
        return list(self._nodes.values())

    def node_infos(self) -> builtins.list[NodeInfo]:
        """NodeInfos in node-tree order (what ``snapshot.list()`` returns, as a new list)."""
        return list(self._snapshot.node_info_list)

    def pods(self) -> builtins.list[Pod]:
        """Every pod in the snapshot."""
        return [pi.pod for ni in self._snapshot.node_info_list for pi in ni.pods]

    def pod_node(self, pod: Pod | str) -> str | None:
        """The node a pod (or pod uid) is on, or None when it is not in the snapshot."""
        return self._pod_nodes.get(pod if isinstance(pod, str) else pod.uid)

    def has_pod(self, pod: Pod | str) -> bool:
        return (pod if isinstance(pod, str) else pod.uid) in self._pod_nodes

    def has_any_pod(self, uids: frozenset[str]) -> bool:
        """Whether any of these pod uids is in the snapshot."""
        return not self._pod_nodes.keys().isdisjoint(uids)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node_name: object) -> bool:
        return node_name in self._nodes

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(list(self._snapshot.node_info_list))

    # transactions ----------------------------------------------------------------------------
    @property
    def depth(self) -> int:
        """How many forks are open."""
        return len(self._forks)

    def fork(self) -> Fork:
        """Open a nested transaction (O(1)); returns its handle, usable as a context manager."""
        self._fork_ids += 1
        f = Fork(self, self._fork_ids)
        self._forks.append(f)
        return f

    def revert(self) -> None:
        """Revert the innermost open fork."""
        if not self._forks:
            raise SnapshotError("revert without an open fork: call fork() first")
        self._revert(self._forks[-1])

    def commit(self) -> None:
        """Commit the innermost open fork into its parent (or into the base state)."""
        if not self._forks:
            raise SnapshotError("commit without an open fork: call fork() first")
        self._commit(self._forks[-1])

    def on_revert(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` if the innermost open fork is reverted (in reverse order of registration).

        Committing the fork hands the callback to the parent fork; with no fork open it is dropped.
        Use it to undo state kept outside the snapshot (a Reserve plugin's bookkeeping, nominations).
        """
        if self._forks:
            self._forks[-1]._log.append((None, callback, None))

    def _check_closable(self, f: Fork, action: str) -> None:
        if f._owner is not self:
            raise SnapshotError(f"fork #{f.id} belongs to another ClusterSnapshot")
        if f.state == REVERTED:
            if action == "commit":
                raise SnapshotError(f"fork #{f.id} was reverted; a reverted fork cannot be committed")
            raise SnapshotError(f"fork #{f.id} was already reverted")
        if f.state == COMMITTED:
            if action == "commit":
                raise SnapshotError(f"fork #{f.id} was already committed")
            raise SnapshotError(f"fork #{f.id} was committed; revert the enclosing fork to undo its changes")
        if self._forks[-1] is not f:
            inner = ", ".join(f"#{g.id}" for g in self._forks[self._forks.index(f) + 1:])
            raise SnapshotError(f"fork #{f.id} has open nested fork(s) {inner}; commit or revert them first")

    def _revert(self, f: Fork) -> None:
        self._check_closable(f, "revert")
        self._forks.pop()
        f.state = REVERTED
        self.content = f._content
        s = self._snapshot
        for target, key, old in reversed(f._log):
            if target is None:
                key()
            elif old is _MISSING:
                target.pop(key, None)
            else:
                target[key] = old
        m = s.node_info_map
        lst = s.node_info_list
        index = self._index
        lists_stale = pvcs_stale = False
        for name, old_ni in f._saved.items():
            cur = m.get(name)
            if old_ni is None:
                if cur is not None:
                    del m[name]
            else:
                m[name] = old_ni
                i = index.get(name)
                if i is not None:
                    lst[i] = old_ni
            if _has_affinity(cur) or _has_affinity(old_ni):
                lists_stale = True
            if (cur.pvc_ref_counts if cur is not None else None) != (
                    old_ni.pvc_ref_counts if old_ni is not None else None):
                pvcs_stale = True
        if lists_stale:
            s._affinity_list = None
            s._anti_affinity_list = None
        if pvcs_stale:
            s._used_pvcs = None
        s.generation += 1

    def _commit(self, f: Fork) -> None:
        self._check_closable(f, "commit")
        self._forks.pop()
        f.state = COMMITTED
        if self._forks:
            parent = self._forks[-1]
            parent._log.extend(f._log)
            saved = parent._saved
            for name, ni in f._saved.items():
                if name not in saved:
                    saved[name] = ni
        f._log = []
        f._saved = {}

    # recording -------------------------------------------------------------------------------
    def _advance(self, op: tuple[Any, ...], objects: tuple[Any, ...] = ()) -> None:
        """Move ``content`` to the token of the current content changed by ``op``: a hashable description of
        the change naming ``objects`` (Nodes, Pods) by their ids. The transition keeps the objects and is
        taken only for the very same objects (ids alone could name other objects in a copy of this
        snapshot)."""
        self.content = self._next_token(self.content, op, objects)

    def _advance_node(self, name: str, op: tuple[Any, ...], objects: tuple[Any, ...] = (),
                      start: object = None) -> None:
        """Move the node's content token as ``_advance`` moves ``content`` (``start``: the token to move from,
        default the node's current one)."""
        token = self._next_token(self._node_content[name] if start is None else start, op, objects)
        self._set(self._node_content, name, token)

    def _next_token(self, token: object, op: tuple[Any, ...], objects: tuple[Any, ...]) -> object:
        """The token ``token`` moves to by ``op``: the same one each time the same change is made from it."""
        key = (token, *op)
        hit = self._transitions.get(key)
        # (one flat tuple per transition, the new token first: what-if loops asking new questions keep
        # thousands, every one a container the garbage collector walks)
        if hit is None or len(hit) != len(objects) + 1 or not all(map(operator.is_, hit[1:], objects)):
            if len(self._transitions) >= _TRANSITIONS:
                self._transitions.clear()
            hit = self._transitions[key] = (object(), *objects)
        return hit[0]

    def _set(self, target: dict[Any, Any], key: Any, value: Any) -> None:
        if self._forks:
            self._forks[-1]._log.append((target, key, target.get(key, _MISSING)))
        target[key] = value

    def _delete(self, target: dict[Any, Any], key: Any) -> None:
        if self._forks:
            self._forks[-1]._log.append((target, key, target[key]))
        del target[key]

    def _writable(self, name: str) -> NodeInfo:
        """The node's NodeInfo, cloned first when the innermost fork has not changed it yet."""
        ni = self._snapshot.node_info_map[name]
        if not self._forks:
            return ni
        f = self._forks[-1]
        if name in f._saved:
            return ni
        f._saved[name] = ni
        c = ni.clone()
        s = self._snapshot
        s.node_info_map[name] = c
        i = self._index.get(name)
        if i is not None:
            s.node_info_list[i] = c
        # The lazily built lists hold NodeInfo objects: a list holding the replaced one is stale.
        if ni.pods_with_affinity:
            s._affinity_list = None
        if ni.pods_with_required_anti_affinity:
            s._anti_affinity_list = None
        return c

    def _remember_new(self, name: str) -> None:
        if self._forks:
            self._forks[-1]._saved.setdefault(name, None)

    # nodes -----------------------------------------------------------------------------------
    def add_node(self, node: Node, pods: Iterable[Pod] = ()) -> NodeInfo:
        """Add a node, with pods bound to it (their ``spec.nodeName`` is set to the node when empty)."""
        name = node.name
        if name in self._nodes:
            raise SnapshotError(f'duplicate node "{name}": a node with this name is already in the snapshot')
        pod_list = list(pods)
        seen: dict[str, str] = {}
        for p in pod_list:
            self._check_new_pod(p, p.spec.node_name or name, {name: None}, seen)
            seen[p.uid] = name
        ni = NodeInfo(node)
        for p in pod_list:
            ni.add_pod(p if p.spec.node_name else p.with_node_name(name))
        for img in _image_names(node):
            self._set(self._image_counts, img, self._image_counts.get(img, 0) + 1)
        ni.image_states = self._image_states_of(node)
        self._remember_new(name)
        self._snapshot.node_info_map[name] = ni
        for uid in seen:
            self._set(self._pod_nodes, uid, name)
        self._insert_node(node)
        s = self._snapshot
        if ni.pods_with_affinity or ni.pods_with_required_anti_affinity:
            s._affinity_list = None
            s._anti_affinity_list = None
        if ni.pvc_ref_counts:
            s._used_pvcs = None
        s.generation += 1
        self._advance(("add_node", id(node), *map(id, pod_list)), (node, *pod_list))
        self._advance_node(name, ("add_node", id(node), *map(id, pod_list)), (node, *pod_list), _NEW_NODE)
        return ni

    def remove_node(self, name: str) -> builtins.list[Pod]:
        """Remove a node and the pods on it; returns those pods."""
        if name not in self._nodes:
            raise SnapshotError(f'cannot remove node "{name}": it is not in the snapshot')
        s = self._snapshot
        ni = s.node_info_map[name]
        if self._forks:
            self._forks[-1]._saved.setdefault(name, ni)
        del s.node_info_map[name]
        for pi in ni.pods:
            self._delete(self._pod_nodes, pi.pod.uid)
        node = self._nodes[name]
        for img in _image_names(node):
            n = self._image_counts[img] - 1
            if n:
                self._set(self._image_counts, img, n)
            else:
                self._delete(self._image_counts, img)
        self._remove_from_order(name)
        self._delete(self._node_content, name)
        s.generation += 1
        self._advance(("remove_node", name))
        return [pi.pod for pi in ni.pods]

    def add_node_from_template(self, template: Node, count: int = 1, name_prefix: str | None = None,
                               pods: Iterable[Pod] = ()) -> builtins.list[str]:
        """Add ``count`` copies of ``template`` named ``<name_prefix>-<i>``; returns their names.

        ``i`` counts from 0, skipping names already taken, so a what-if loop that reverts its fork reuses
        the same names. Each copy gets its own uid and ``kubernetes.io/hostname`` label, and a copy of each
        of ``pods`` (DaemonSet pods, typically) named ``<pod>-<node>``. ``name_prefix`` defaults to
        ``template-<template name>``.
        """
        if count < 0:
            raise SnapshotError(f"count must be >= 0, got {count}")
        prefix = name_prefix if name_prefix is not None else f"template-{template.name}"
        pod_list = list(pods)
        names = template_node_names(prefix, count, self._nodes)
        copies = [(self._node_copy(template, n), [pod_for_node(p, n) for p in pod_list]) for n in names]
        for _, node_pods in copies:
            for p in node_pods:
                where = self._pod_nodes.get(p.uid)
                if where is not None:
                    raise SnapshotError(f'pod {p.key} (uid {p.uid}) is already in the snapshot, on node "{where}"')
        for node, node_pods in copies:
            self.add_node(node, node_pods)
        return names

    def _node_copy(self, template: Node, name: str) -> Node:
        """``node_from_template(template, name)``, remembered: a what-if loop that reverts its fork adds the
        same copy again and again, and Nodes are immutable, so the copy made last time is the same node.
        Pinned by tests/test_perf_equivalence.py::test_template_copies_equal_fresh_copies."""
        key = (id(template), name)
        hit = self._template_copies.get(key)
        if hit is not None and hit[0] is template:
            return hit[1]
        if len(self._template_copies) >= _TEMPLATE_COPIES:
            self._template_copies.clear()
        node = node_from_template(template, name)
        self._template_copies[key] = (template, node)
        return node

    def refresh_image_states(self) -> None:
        """Recount, on every node, how many nodes have each of its images.

        Adding or removing a node updates the cluster-wide counts and the new node's own image states;
        the other nodes keep the counts they had (as upstream's snapshot keeps unchanged NodeInfos).
        Call this to bring every node up to date; nodes whose counts change are copied on write.
        """
        for name, node in self._nodes.items():
            states = self._image_states_of(node)
            ni = self._snapshot.node_info_map[name]
            if ni.image_states != states:
                self._writable(name).image_states = states
                self._snapshot.generation += 1
                self.content = object()

    def _image_states_of(self, node: Node | None) -> dict[str, ImageStateSummary]:
        states: dict[str, ImageStateSummary] = {}
        if node is not None:
            counts = self._image_counts
            for im in node.status.images:
                for img in im.names:
                    states[img] = ImageStateSummary(im.size_bytes, counts.get(img, 0))
        return states

    # pods ------------------------------------------------------------------------------------
    def add_pod(self, pod: Pod, node_name: str | None = None, *, info: PodInfo | None = None) -> PodInfo:
        """Bind ``pod`` to ``node_name`` (default: its ``spec.nodeName``) in the snapshot.

        The stored pod has ``spec.nodeName`` set to the node. Raises SnapshotError for an unknown node,
        a pod without a node, or a pod (uid) already in the snapshot. ``info``: the PodInfo of ``pod`` when
        the caller has it (used only when ``pod`` already names the node).
        """
        nn = node_name or pod.spec.node_name
        self._check_new_pod(pod, nn, self._nodes, {})
        given = pod
        if pod.spec.node_name != nn:
            renamed = pod.with_node_name(nn)
            if info is None:
                info = self._renamed_info(pod, renamed)
            pod = renamed
        s = self._snapshot
        ni = self._writable(nn)
        pi = ni.add_pod(info if info is not None and info.pod is pod else PodInfo(pod, self.rules))
        self._set(self._pod_nodes, pod.uid, nn)
        if pi.has_affinity:
            s._affinity_list = None
        if pi.required_anti_affinity_terms:
            s._anti_affinity_list = None
        if pi.pvc_keys:
            s._used_pvcs = None
        s.generation += 1
        self._advance(("add_pod", id(given), nn), (given,))
        self._advance_node(nn, ("add_pod", id(given)), (given,))
        return pi

    def _renamed_info(self, given: Pod, stored: Pod) -> PodInfo:
        """The PodInfo of ``stored``, which is ``given`` with spec.nodeName set. Nothing a PodInfo derives
        (requests, affinity terms, host ports, claims) depends on spec.nodeName: the one derived when the same
        Pod object was added before is placed (PodInfo.placed). Pinned by
        tests/test_perf_equivalence.py::test_renamed_pod_info_equals_a_fresh_one."""
        hit = self._renamed_infos.get(id(given))
        if hit is None or hit[0] is not given:
            if len(self._renamed_infos) >= _RENAMED_INFOS:
                self._renamed_infos.clear()
            pi = PodInfo(stored, self.rules)
            self._renamed_infos[id(given)] = (given, pi)  # (given is held: its id is not reused meanwhile)
            return pi
        return hit[1].placed(stored, self.rules)

    def rebuild_pod_infos(self, rules: RequestRules) -> None:
        """Follow ``rules`` from now on, and count again the pods whose status holds an in-place resize (the
        only ones the rules change). Not inside a fork."""
        if self._forks:
            raise SnapshotError("cannot change how resizes count inside a fork")
        self.rules = rules
        self._renamed_infos.clear()
        for pod in [p for p in self.pods() if p.status.resize is not None]:
            node_name = self._pod_nodes[pod.uid]
            self.remove_pod(pod)
            self.add_pod(pod, node_name, info=PodInfo(pod, rules))

    def remove_pod(self, pod: Pod | str) -> Pod:
        """Remove a pod (or the pod with this uid) from its node; returns the stored pod."""
        uid = pod if isinstance(pod, str) else pod.uid
        nn = self._pod_nodes.get(uid)
        if nn is None:
            what = uid if isinstance(pod, str) else f"{pod.key} (uid {uid})"
            raise SnapshotError(f"cannot remove pod {what}: it is not in the snapshot")
        s = self._snapshot
        ni = self._writable(nn)
        pi = ni.get_pod(uid)
        assert pi is not None
        ni.remove_pod(pi)
        self._delete(self._pod_nodes, uid)
        self._advance(("remove_pod", uid))
        self._advance_node(nn, ("remove_pod", uid))
        if pi.has_affinity:
            s._affinity_list = None
        if pi.required_anti_affinity_terms:
            s._anti_affinity_list = None
        if pi.pvc_keys:
            s._used_pvcs = None
        s.generation += 1
        return pi.pod

    def _check_new_pod(self, pod: Pod, node_name: str, nodes: Any, batch: dict[str, str]) -> None:
        if not node_name:
            raise SnapshotError(f"pod {pod.key} has no spec.nodeName: give the node to bind it to")
        if node_name not in nodes:
            raise SnapshotError(f'pod {pod.key} references unknown node "{node_name}"')
        where = self._pod_nodes.get(pod.uid) or batch.get(pod.uid)
        if where is not None:
            raise SnapshotError(f'pod {pod.key} (uid {pod.uid}) is already in the snapshot, on node "{where}"')

    # node order ------------------------------------------------------------------------------
    def _rebuild_list(self) -> None:
        """Node-tree order from scratch: zones in first-seen order, one node of each zone in turn."""
        lists = list(self._zones.values())
        if len(lists) == 1:
            order = list(lists[0])
        else:
            order = []
            for i in range(max((len(names) for names in lists), default=0)):
                for names in lists:
                    if i < len(names):
                        order.append(names[i])
        m = self._snapshot.node_info_map
        s = self._snapshot
        s.node_info_list = [m[n] for n in order]
        self._index = {n: i for i, n in enumerate(order)}
        s._index = None
        s._affinity_list = None
        s._anti_affinity_list = None
        s._used_pvcs = None

    def _save_structure(self) -> None:
        """Before rebuilding the node order: let the innermost fork restore the current structures."""
        if not self._forks:
            return
        s = self._snapshot
        saved = (self._nodes, self._zones, s.node_info_list, self._index)

        def restore() -> None:
            self._nodes, self._zones, s.node_info_list, self._index = saved
            s._index = None
            s._affinity_list = None
            s._anti_affinity_list = None
            s._used_pvcs = None

        self._forks[-1]._log.append((None, restore, None))

    def _insert_node(self, node: Node) -> None:
        name = node.name
        z = zone_key(node)
        self._set(self._zone_of, name, z)
        zones = self._zones
        names = zones.get(z)
        k = 0 if names is None else len(names)
        # The new node is the k-th of its zone, so it lands in round k of the round-robin. It is last in
        # node-tree order unless a zone after its own has a k-th node too, or any zone has a later round.
        last = all(len(other) <= (k if after else k + 1) for after, other in _zones_after(zones, z))
        if last:
            self._append_node(node, z)
            return
        self._save_structure()
        self._nodes = {**self._nodes, name: node}
        self._zones = {zn: list(v) for zn, v in zones.items()}
        self._zones.setdefault(z, []).append(name)
        self._rebuild_list()

    def _append_node(self, node: Node, z: str) -> None:
        name = node.name
        s = self._snapshot
        nodes, zones, lst, index = self._nodes, self._zones, s.node_info_list, self._index
        names = zones.get(z)
        new_zone = names is None
        if names is None:
            names = zones[z] = []
        names.append(name)
        nodes[name] = node
        index[name] = len(lst)
        lst.append(s.node_info_map[name])
        s._index = None
        if self._forks:
            def undo() -> None:
                lst.pop()
                del index[name]
                del nodes[name]
                names.pop()
                if new_zone:
                    del zones[z]
                s._index = None

            self._forks[-1]._log.append((None, undo, None))

    def _remove_from_order(self, name: str) -> None:
        self._save_structure()
        z = self._zone_of[name]
        self._delete(self._zone_of, name)
        nodes = dict(self._nodes)
        del nodes[name]
        self._nodes = nodes
        # Zones are listed in first-seen order over the remaining nodes: recompute from insertion order.
        zones: dict[str, list[str]] = {}
        zone_of = self._zone_of
        if len(self._zones) == 1 and z in self._zones:
            zones[z] = [n for n in self._zones[z] if n != name]
            if not zones[z]:
                zones.clear()
        else:
            for n in nodes:
                zones.setdefault(zone_of[n], []).append(n)
        self._zones = zones
        self._rebuild_list()


def _zones_after(zones: dict[str, list[str]], z: str) -> Iterator[tuple[bool, list[str]]]:
    """(whether the zone comes after ``z`` in zone order, its names) for every zone other than ``z``.

    A zone not yet in ``zones`` will be added last, so every existing zone comes before it.
    """
    after = False
    for zn, names in zones.items():
        if zn == z:
            after = True
            continue
        yield after, names


def _image_names(node: Node) -> set[str]:
    return {n for im in node.status.images for n in im.names}


def _has_affinity(ni: NodeInfo | None) -> bool:
    return ni is not None and bool(ni.pods_with_affinity or ni.pods_with_required_anti_affinity)
