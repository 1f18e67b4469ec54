"""The scheduler's in-memory cluster: nodes and pods, assumed pods, and cheap snapshot updates.

Every change marks its node dirty; ``update_snapshot`` re-clones only dirty NodeInfos, so a cycle after
binding one pod costs one NodeInfo copy, not a rebuild of the cluster.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable

from scheduling_framework.api.node import Node
from scheduling_framework.api.pod import Pod
from scheduling_framework.api.resize import DEFAULT_RULES, RequestRules
from scheduling_framework.errors import SnapshotError
from scheduling_framework.state.node_info import NodeInfo, PodInfo
from scheduling_framework.state.snapshot import Snapshot, node_tree_order, set_image_states


class _PodState:
    __slots__ = ("pod_info", "node_name", "assumed", "binding_finished")

    def __init__(self, pod_info: PodInfo, node_name: str, assumed: bool) -> None:
        self.pod_info = pod_info
        self.node_name = node_name
        self.assumed = assumed
        self.binding_finished = False


class Cache:
    def __init__(self, rules: RequestRules = DEFAULT_RULES) -> None:
        #: how in-place resizes in pod statuses count (the run's release and gates)
        self.rules = rules
        self._lock = threading.RLock()
        self._nodes: dict[str, NodeInfo] = {}
        self._node_objs: dict[str, Node] = {}
        self._pods: dict[str, _PodState] = {}
        self._dirty: set[str] = set()
        self._nodes_changed = True
        self._images_changed = True

    # nodes -----------------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        with self._lock:
            name = node.metadata.name
            ni = self._nodes.get(name)
            if ni is None:
                ni = self._nodes[name] = NodeInfo()
            ni.set_node(node)
            self._node_objs[name] = node
            self._mark(name)
            self._nodes_changed = True
            self._images_changed = True

    def update_node(self, node: Node) -> None:
        with self._lock:
            name = node.metadata.name
            if name not in self._node_objs:
                self.add_node(node)
                return
            old = self._node_objs[name]
            self._nodes[name].set_node(node)
            self._node_objs[name] = node
            self._mark(name)
            if old.metadata.labels != node.metadata.labels:
                self._nodes_changed = True
            if old.status.images != node.status.images:
                self._images_changed = True

    def remove_node(self, name: str) -> None:
        with self._lock:
            if name not in self._node_objs:
                raise SnapshotError(f'node "{name}" is not in the cache')
            del self._node_objs[name]
            ni = self._nodes[name]
            ni.remove_node()
            if not ni.pods:
                del self._nodes[name]
            self._mark(name)
            self._nodes_changed = True
            self._images_changed = True

    def get_node(self, name: str) -> Node | None:
        return self._node_objs.get(name)

    def nodes(self) -> list[Node]:
        return list(self._node_objs.values())

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    # pods ------------------------------------------------------------------------------------
    def add_pod(self, pod: Pod) -> None:
        """A pod bound to ``pod.spec.node_name`` (confirms an assumed pod of the same uid)."""
        with self._lock:
            st = self._pods.get(pod.uid)
            if st is not None:
                if st.assumed and st.node_name == pod.spec.node_name and st.pod_info.pod == pod:
                    st.assumed = False
                    return
                self._remove(st)
            self._add(PodInfo(pod, self.rules), pod.spec.node_name, assumed=False)

    def update_pod(self, pod: Pod) -> None:
        with self._lock:
            st = self._pods.get(pod.uid)
            if st is not None:
                self._remove(st)
            self._add(PodInfo(pod, self.rules), pod.spec.node_name, assumed=False)

    def remove_pod(self, pod: Pod) -> bool:
        with self._lock:
            st = self._pods.get(pod.uid)
            if st is None:
                return False
            self._remove(st)
            return True

    def assume_pod(self, pod: Pod, queued: PodInfo | None = None) -> PodInfo:
        """Account for ``pod`` (with spec.node_name set) on its node before binding completes. ``queued``: the
        PodInfo of the same pod before it was placed (see PodInfo.placed), whose derived values are reused."""
        with self._lock:
            if pod.uid in self._pods:
                raise SnapshotError(f"pod {pod.key} is in the cache, so can't be assumed")
            pi = PodInfo(pod, self.rules) if queued is None else queued.placed(pod, self.rules)
            return self._add(pi, pod.spec.node_name, assumed=True)

    def finish_binding(self, pod: Pod) -> None:
        with self._lock:
            st = self._pods.get(pod.uid)
            if st is not None and st.assumed:
                st.binding_finished = True

    def confirm(self, pod: Pod) -> None:
        """The binding happened: the assumed pod is now a bound pod."""
        with self._lock:
            st = self._pods.get(pod.uid)
            if st is not None:
                st.assumed = False

    def forget_pod(self, pod: Pod) -> None:
        with self._lock:
            st = self._pods.get(pod.uid)
            if st is None:
                return
            if not st.assumed:
                raise SnapshotError(f"pod {pod.key} was not assumed, so it can't be forgotten")
            self._remove(st)

    def is_assumed(self, uid: str) -> bool:
        st = self._pods.get(uid)
        return st is not None and st.assumed

    def get_pod(self, uid: str) -> Pod | None:
        st = self._pods.get(uid)
        return None if st is None else st.pod_info.pod

    def pods(self) -> list[Pod]:
        return [st.pod_info.pod for st in self._pods.values()]

    def pod_count(self) -> int:
        return len(self._pods)

    def _add(self, pi: PodInfo, node_name: str, assumed: bool) -> PodInfo:
        ni = self._nodes.get(node_name)
        if ni is None:
            ni = self._nodes[node_name] = NodeInfo()
        ni.add_pod(pi)
        self._pods[pi.pod.uid] = _PodState(pi, node_name, assumed)
        self._mark(node_name)
        return pi

    def _remove(self, st: _PodState) -> None:
        ni = self._nodes.get(st.node_name)
        if ni is not None:
            ni.remove_pod(st.pod_info)
            if ni.node is None and not ni.pods:
                del self._nodes[st.node_name]
        del self._pods[st.pod_info.pod.uid]
        self._mark(st.node_name)

    def _mark(self, name: str) -> None:
        self._dirty.add(name)

    # snapshot --------------------------------------------------------------------------------
    def update_snapshot(self, snapshot: Snapshot) -> Snapshot:
        """Bring ``snapshot`` up to date, cloning only the NodeInfos that changed since the last call."""
        with self._lock:
            if self._images_changed:
                set_image_states(self._nodes.values())
                self._dirty.update(self._nodes)
                self._images_changed = False
            m = snapshot.node_info_map
            replaced: list[tuple[NodeInfo, NodeInfo]] = []
            for name in self._dirty:
                old = m.get(name)
                ni = self._nodes.get(name)
                if ni is None:
                    m.pop(name, None)
                    self._nodes_changed = True
                    continue
                new = ni.clone()
                if old is None or (old.node is None) != (new.node is None):
                    self._nodes_changed = True
                else:
                    replaced.append((old, new))
                m[name] = new
            if self._nodes_changed:
                order = node_tree_order(list(self._node_objs.values()))
                snapshot.node_info_list = [m[n] for n in order if n in m and m[n].node is not None]
                snapshot._affinity_list = None
                snapshot._anti_affinity_list = None
                snapshot._index = None
                self._nodes_changed = False
            elif self._dirty:
                lst = snapshot.node_info_list
                idx = _index(snapshot)
                for name in self._dirty:
                    i = idx.get(name)
                    if i is not None and name in m:
                        lst[i] = m[name]
                # The lazily derived lists hold the old clones: patch them (a copy; someone may hold the old
                # list) by position instead of rebuilding them from the whole node list.
                in_list = [(old, new) for old, new in replaced if new.name in idx]
                if snapshot._affinity_list is not None:
                    snapshot._affinity_list = _patched(snapshot._affinity_list, in_list, idx, _has_affinity)
                if snapshot._anti_affinity_list is not None:
                    snapshot._anti_affinity_list = _patched(snapshot._anti_affinity_list, in_list, idx,
                                                            _has_required_anti_affinity)
            if self._dirty:
                snapshot._used_pvcs = None
            self._dirty.clear()
            snapshot.generation += 1
            return snapshot

    def snapshot(self) -> Snapshot:
        """A new snapshot of the whole cache."""
        s = Snapshot()
        self._dirty.update(self._nodes)
        self._nodes_changed = True
        return self.update_snapshot(s)


def _has_affinity(ni: NodeInfo) -> bool:
    return bool(ni.pods_with_affinity)


def _has_required_anti_affinity(ni: NodeInfo) -> bool:
    return bool(ni.pods_with_required_anti_affinity)


def _patched(derived: list[NodeInfo], replaced: list[tuple[NodeInfo, NodeInfo]], idx: dict[str, int],
             member: Callable[[NodeInfo], bool]) -> list[NodeInfo] | None:
    """``derived`` (the snapshot's nodes passing ``member``, in node-list order) after each (old, new)
    replacement of a node in the list; None (rebuild it) if it does not hold what it should."""
    out = derived
    copied = False
    for old, new in replaced:
        was, now = member(old), member(new)
        if not was and not now:
            continue
        if not copied:
            out = list(derived)
            copied = True
        target = idx[new.name]
        pos = bisect.bisect_left(out, target, key=lambda ni: idx.get(ni.name, -1))
        if was != (pos < len(out) and out[pos] is old):
            return None
        if was and now:
            out[pos] = new
        elif was:
            del out[pos]
        else:
            out.insert(pos, new)
    return out


def _index(snapshot: Snapshot) -> dict[str, int]:
    idx = snapshot._index
    if idx is None:
        idx = snapshot._index = {ni.name: i for i, ni in enumerate(snapshot.node_info_list)}
    return idx
