"""The cluster snapshot plugins read during a cycle, and the store of other cluster objects.

Node order follows upstream's node tree: nodes are grouped by zone (region + zone labels) and listed
round-robin across zones, so the first nodes evaluated are spread over zones.
"""

from __future__ import annotations

import builtins
import collections
import functools
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from scheduling_framework.api.node import Node
from scheduling_framework.api.objects import KubeObject
from scheduling_framework.api.pod import Pod
from scheduling_framework.errors import SnapshotError
from scheduling_framework.state.node_info import ImageStateSummary, NodeInfo, PodInfo
from scheduling_framework.state.pod_index import PodIndex

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(node: Node) -> str:
    """upstream GetZoneKey: "" when the node has neither a region nor a zone label."""
    labels = node.metadata.labels
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(nodes: Sequence[Node]) -> builtins.list[str]:
    """Node names in upstream node-tree order: zones in first-seen order, one node of each in turn."""
    zones: dict[str, list[str]] = {}
    if not nodes:
        return []
    for n in nodes:
        zones.setdefault(zone_key(n), []).append(n.metadata.name)
    if len(zones) == 1:
        return next(iter(zones.values()))
    out: list[str] = []
    lists = list(zones.values())
    for i in range(max(len(names) for names in lists)):
        for names in lists:
            if i < len(names):
                out.append(names[i])
    return out


def normalized_image_name(name: str) -> str:
    """Add ":latest" when the image name has no tag or digest (upstream normalizedImageName)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


#: Changes per kind an ObjectStore keeps for ObjectStore.changes_since.
MAX_CHANGES_KEPT = 4096


class ObjectStore:
    """Other cluster objects (Namespaces, Services, PDBs, PVs, ...) by kind; read-only for plugins.

    An object is known by its API group, kind, namespace and name, as the API server knows it: Kubernetes'
    PodGroup (``scheduling.k8s.io``) and scheduler-plugins' (``scheduling.x-k8s.io``) of one namespace and name
    are two objects, both kept. Adding an object of the same group, kind, namespace and name replaces it (an
    update). Readers that care which group they read pass ``group``; one that names no apiVersion (a manifest
    written by hand) answers for any group, as the kind's readers took it before they told groups apart.
    """

    def __init__(self, objects: Iterable[KubeObject] = ()) -> None:
        # kind -> API group -> (namespace, name) -> object; a kind has one group but in rare cases (PodGroup)
        self._by_kind: dict[str, dict[str, dict[tuple[str, str], KubeObject]]] = {}
        # Bumped on every change, so readers can cache what they derive from the objects.
        self.generation = 0
        # When set, told how to undo each change (a ClusterSnapshot fork records it, see Simulator).
        self.journal: Callable[[Callable[[], None]], None] | None = None
        # Pod status fields plugins wrote (upstream patches them into the pod through the API), by pod uid and
        # field: DynamicResources' status.extendedResourceClaimStatus.
        self.pod_status: dict[str, dict[str, Any]] = {}
        # Per kind, the (namespace, name) keys changed, in order, and how many changes came before the first one
        # kept: readers that keep something derived from every object of a kind catch up from a mark
        # (changes_since) instead of comparing every object. Bounded: an old mark then reads None.
        self._changes: dict[str, builtins.list[tuple[str, str]]] = {}
        self._changes_before: dict[str, int] = {}
        for o in objects:
            self.add(o)

    def _note(self, kind: str, key: tuple[str, str]) -> None:
        log = self._changes.get(kind)
        if log is None:
            log = self._changes[kind] = []
        elif len(log) >= MAX_CHANGES_KEPT:
            self._changes_before[kind] = self._changes_before.get(kind, 0) + len(log)
            log.clear()
        log.append(key)

    def change_mark(self, kind: str) -> int:
        """How many changes objects of ``kind`` have had: a mark for :meth:`changes_since`."""
        return self._changes_before.get(kind, 0) + len(self._changes.get(kind, ()))

    def changes_since(self, kind: str, mark: int) -> builtins.list[tuple[str, str]] | None:
        """The (namespace, name) keys of the ``kind`` objects added, replaced or removed since ``mark`` (in order,
        repeats kept; any API group); None when they are no longer all known (then compare the objects)."""
        before = self._changes_before.get(kind, 0)
        if mark < before:
            return None
        return self._changes.get(kind, [])[mark - before:]

    def add(self, obj: KubeObject) -> None:
        """Add ``obj``, replacing the object of its API group, kind, namespace and name if there is one."""
        group = obj.api_group
        bucket = self._by_kind.setdefault(obj.kind, {}).setdefault(group, {})
        key = (obj.metadata.namespace, obj.metadata.name)
        if self.journal is not None:
            self.journal(functools.partial(self._restore, obj.kind, group, key, bucket.get(key)))
        bucket[key] = obj
        self._note(obj.kind, key)
        self.generation += 1

    def remove(self, kind: str, namespace: str, name: str, group: str | None = None) -> None:
        """Remove the object of ``kind``, ``namespace`` and ``name`` of API group ``group`` (None: of every group
        that has one); nothing when there is none."""
        groups = self._by_kind.get(kind)
        if not groups:
            return
        key = (namespace, name)
        for g, bucket in groups.items():
            if group is not None and g != group:
                continue
            old = bucket.pop(key, None)
            if old is not None:
                if self.journal is not None:
                    self.journal(functools.partial(self._restore, kind, g, key, old))
                self._note(kind, key)
                self.generation += 1

    def _restore(self, kind: str, group: str, key: tuple[str, str], obj: KubeObject | None) -> None:
        bucket = self._by_kind.setdefault(kind, {}).setdefault(group, {})
        if obj is None:
            bucket.pop(key, None)
        else:
            bucket[key] = obj
        self._note(kind, key)
        self.generation += 1

    def set_pod_status(self, uid: str, field: str, value: Any) -> None:
        """Record (``value`` None: drop) a status field written for the pod ``uid``."""
        fields = self.pod_status.get(uid, {})
        old = fields.get(field)
        if value is None and old is None:
            return
        if self.journal is not None:
            self.journal(functools.partial(self._restore_pod_status, uid, field, old))
        self._restore_pod_status(uid, field, value)

    def _restore_pod_status(self, uid: str, field: str, value: Any) -> None:
        fields = self.pod_status.setdefault(uid, {})
        if value is None:
            fields.pop(field, None)
            if not fields:
                del self.pod_status[uid]
        else:
            fields[field] = value
        self.generation += 1

    def get(self, kind: str, namespace: str, name: str, group: str | None = None) -> KubeObject | None:
        """The object of ``kind``, ``namespace`` and ``name``, or None. ``group``: of that API group, or else one
        that names no API group; None: of any group (the group added first, when two hold that name)."""
        groups = self._by_kind.get(kind)
        if groups is None:
            return None
        key = (namespace, name)
        if group is None:
            for bucket in groups.values():
                o = bucket.get(key)
                if o is not None:
                    return o
            return None
        own = groups.get(group)
        o = own.get(key) if own is not None else None
        if o is None and group:
            unnamed = groups.get("")
            o = unnamed.get(key) if unnamed is not None else None
        return o

    def by_key(self, kind: str) -> Mapping[tuple[str, str], KubeObject]:
        """The objects of ``kind`` by (namespace, name), read-only and live (copy it to keep a snapshot); of a
        kind held in two API groups, the group added first answers for a name both hold."""
        groups = self._by_kind.get(kind)
        if not groups:
            return types.MappingProxyType({})
        if len(groups) == 1:
            return types.MappingProxyType(next(iter(groups.values())))
        return types.MappingProxyType(collections.ChainMap(*groups.values()))

    def has_any(self, kind: str) -> bool:
        """Whether there is an object of this kind."""
        groups = self._by_kind.get(kind)
        return groups is not None and any(groups.values())

    def list(self, kind: str, namespace: str | None = None, group: str | None = None) -> builtins.list[KubeObject]:
        """The objects of ``kind`` (in ``namespace`` when given; of API group ``group``, or naming none, when
        given), every API group's when ``group`` is None."""
        groups = self._by_kind.get(kind)
        if not groups:
            return []
        out: builtins.list[KubeObject] = []
        for g, objs in groups.items():
            if group is not None and g != group and g:
                continue
            if namespace is None:
                out.extend(objs.values())
            else:
                out.extend(o for (ns, _), o in objs.items() if ns == namespace)
        return out

    def kinds(self) -> builtins.list[str]:
        return sorted(self._by_kind)

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        ns = self.get("Namespace", "", namespace)
        return None if ns is None else ns.metadata.labels


class Snapshot:
    """An immutable-for-the-cycle view of nodes and their pods (upstream cache.Snapshot / SharedLister)."""

    def __init__(self, node_infos: Mapping[str, NodeInfo] | None = None, order: Sequence[str] | None = None,
                 generation: int = 0) -> None:
        self.node_info_map: dict[str, NodeInfo] = dict(node_infos or {})
        names = list(order) if order is not None else list(self.node_info_map)
        self.node_info_list: list[NodeInfo] = [self.node_info_map[n] for n in names
                                               if self.node_info_map[n].node is not None]
        self.generation = generation
        self._affinity_list: list[NodeInfo] | None = None
        self._anti_affinity_list: list[NodeInfo] | None = None
        self._used_pvcs: set[str] | None = None
        self._index: dict[str, int] | None = None
        self._pod_index: PodIndex | None = None

    @classmethod
    def from_objects(cls, nodes: Sequence[Node], pods: Iterable[Pod] = ()) -> Snapshot:
        """Build from nodes and pods; pods with spec.nodeName are placed on their node."""
        infos: dict[str, NodeInfo] = {}
        for n in nodes:
            if n.metadata.name in infos:
                raise SnapshotError(f"duplicate node {n.metadata.name!r}")
            infos[n.metadata.name] = NodeInfo(n)
        for p in pods:
            nn = p.spec.node_name
            if not nn:
                continue
            ni = infos.get(nn)
            if ni is None:
                ni = infos[nn] = NodeInfo()
            ni.add_pod(p)
        set_image_states(infos.values())
        return cls(infos, node_tree_order(nodes))

    # SharedLister ----------------------------------------------------------------------------
    def get(self, node_name: str) -> NodeInfo:
        """The NodeInfo of ``node_name``; raises SnapshotError when the node is not in the snapshot."""
        ni = self.node_info_map.get(node_name)
        if ni is None or ni.node is None:
            raise SnapshotError(f'nodeinfo not found for node name "{node_name}"')
        return ni

    def list(self) -> builtins.list[NodeInfo]:
        return self.node_info_list

    def __len__(self) -> int:
        return len(self.node_info_list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_info_list)

    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfo]:
        if self._affinity_list is None:
            self._affinity_list = [ni for ni in self.node_info_list if ni.pods_with_affinity]
        return self._affinity_list

    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfo]:
        if self._anti_affinity_list is None:
            self._anti_affinity_list = [ni for ni in self.node_info_list if ni.pods_with_required_anti_affinity]
        return self._anti_affinity_list

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether any pod uses the PVC ``namespace/name``."""
        if self._used_pvcs is None:
            self._used_pvcs = {k for ni in self.node_info_list for k in ni.pvc_ref_counts}
        return key in self._used_pvcs

    def pod_index(self) -> PodIndex:
        """The pods of ``list()`` by label (see :mod:`scheduling_framework.state.pod_index`), one per snapshot; it
        follows the list's changes by itself, so it stays valid however the list is updated."""
        idx = self._pod_index
        if idx is None:
            idx = self._pod_index = PodIndex()
        return idx

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def pod_infos(self) -> Iterator[PodInfo]:
        for ni in self.node_info_list:
            yield from ni.pods

    def describe(self) -> dict[str, Any]:
        return {n: ni.snapshot_state() for n, ni in self.node_info_map.items()}


def set_image_states(infos: Iterable[NodeInfo]) -> None:
    """Fill each NodeInfo's image_states with image sizes and the number of nodes having each image."""
    infos = list(infos)
    # Node-side image names are used as reported (upstream's cache does not normalize them);
    # ImageLocality normalizes the container's image name before looking it up.
    counts: dict[str, int] = {}
    for ni in infos:
        if ni.node is None:
            continue
        for name in {n for im in ni.node.status.images for n in im.names}:
            counts[name] = counts.get(name, 0) + 1
    # equal summaries are one object (most images have one size on every node), which scorers can tell apart
    # by identity and the nodes share in memory
    shared: dict[tuple[int, int], ImageStateSummary] = {}
    for ni in infos:
        states: dict[str, ImageStateSummary] = {}
        if ni.node is not None:
            for im in ni.node.status.images:
                for name in im.names:
                    key = (im.size_bytes, counts.get(name, 0))
                    st = shared.get(key)
                    if st is None:
                        st = shared[key] = ImageStateSummary(*key)
                    states[name] = st
        ni.image_states = states
