"""Similar node groups and the balanced scale-up: cluster-autoscaler's ``--balance-similar-node-groups``.

With balancing on, the scale-up orchestrator grows the chosen group together with the groups similar to it:

1. two groups are similar when their template nodes are (:func:`is_cloud_provider_node_info_similar`): the
   same capacity of every resource, memory within 1.5%; allocatable and free resources (allocatable less what
   the template's pods — its DaemonSet pods — request) within 5%; the same labels, except the ones that name a
   node or its zone (:data:`BASIC_IGNORED_LABELS`) and those given with ``--balancing-ignore-label``. With
   ``--balancing-label``, only the values of those labels are compared (:func:`create_label_node_info_comparator`);
2. of those, the groups that can take every pending pod the chosen group takes are kept
   (:func:`compute_similar_node_groups`); a ``zeroOrMaxNodeScaling`` group is never balanced;
3. the chosen node count goes to the smallest group first, one node at a time, within each group's ``maxSize``
   (:func:`balance_scale_up_between_groups`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import attrs

from scheduling_framework.api.quantity import Quantity
from scheduling_framework.state.node_info import NodeInfo

#: labels that differ between otherwise equal nodes and never make two groups dissimilar (cluster-autoscaler's
#: BasicIgnoredLabels: hostname, zone and region, old and new, fluentd's and kops' own)
BASIC_IGNORED_LABELS = frozenset({
    "kubernetes.io/hostname",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "beta.kubernetes.io/fluentd-ds-ready",
    "kops.k8s.io/instancegroup",
})

Comparator = Callable[[NodeInfo, NodeInfo], bool]


@attrs.frozen
class NodeGroupDifferenceRatios:
    """How far two similar groups' nodes may differ, as a fraction of the larger value (cluster-autoscaler's
    --max-allocatable-difference-ratio, --max-free-difference-ratio, --memory-difference-ratio)."""

    max_allocatable_difference_ratio: float = 0.05
    max_free_difference_ratio: float = 0.05
    max_capacity_memory_difference_ratio: float = 0.015


def within_tolerance(a: int, b: int, ratio: float) -> bool:
    """Two amounts (in milli-units) differ by at most ``ratio`` of the larger one."""
    larger, smaller = float(max(a, b)), float(min(a, b))
    return larger - smaller <= larger * ratio


def _free(ni: NodeInfo) -> dict[str, int]:
    """Allocatable less requested, in milli-units, for the resources a NodeInfo's requests always list (cpu,
    memory, pods, ephemeral storage) and the extended resources its pods request."""
    req = ni.requested
    alloc = ni.node.status.allocatable if ni.node is not None else {}

    def left(name: str, used_milli: int) -> int:
        q = alloc.get(name)
        return (q.milli_value() if q is not None else 0) - used_milli

    out = {"cpu": left("cpu", req.milli_cpu), "memory": left("memory", req.memory * 1000),
           "pods": left("pods", req.allowed_pod_number * 1000),
           "ephemeral-storage": left("ephemeral-storage", req.ephemeral_storage * 1000)}
    for name, v in req.scalar_resources.items():
        out[name] = left(name, v * 1000)
    return out


def _paired(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> dict[str, list[Quantity]]:
    out: dict[str, list[Quantity]] = {}
    for m in (a, b):
        for name, q in m.items():
            out.setdefault(name, []).append(q)
    return out


def compare_labels(n1: NodeInfo, n2: NodeInfo, ignored_labels: Collection[str]) -> bool:
    """Every label not ignored is on both nodes with the same value."""
    l1 = n1.node.metadata.labels if n1.node is not None else {}
    l2 = n2.node.metadata.labels if n2.node is not None else {}
    keys = (set(l1) | set(l2)) - set(ignored_labels)
    return all(k in l1 and k in l2 and l1[k] == l2[k] for k in keys)


def is_cloud_provider_node_info_similar(n1: NodeInfo, n2: NodeInfo, ignored_labels: Collection[str],
                                        ratios: NodeGroupDifferenceRatios = NodeGroupDifferenceRatios()) -> bool:
    """Whether two template nodes are alike enough for their groups to be balanced (see the module docstring)."""
    if n1.node is None or n2.node is None:
        return False
    s1, s2 = n1.node.status, n2.node.status
    for name, qs in _paired(s1.capacity, s2.capacity).items():
        if len(qs) != 2:
            return False
        if name == "memory":
            if not within_tolerance(qs[0].milli_value(), qs[1].milli_value(),
                                    ratios.max_capacity_memory_difference_ratio):
                return False
        elif qs[0].cmp(qs[1]) != 0:
            return False
    for qs in _paired(s1.allocatable, s2.allocatable).values():
        if len(qs) != 2 or not within_tolerance(qs[0].milli_value(), qs[1].milli_value(),
                                                ratios.max_allocatable_difference_ratio):
            return False
    f1, f2 = _free(n1), _free(n2)
    for name in set(f1) | set(f2):
        if name not in f1 or name not in f2 or not within_tolerance(f1[name], f2[name],
                                                                    ratios.max_free_difference_ratio):
            return False
    return compare_labels(n1, n2, ignored_labels)


def create_generic_node_info_comparator(extra_ignored_labels: Iterable[str] = (),
                                        ratios: NodeGroupDifferenceRatios = NodeGroupDifferenceRatios()
                                        ) -> Comparator:
    """cluster-autoscaler's generic comparator: the basic ignored labels and ``extra_ignored_labels``
    (``--balancing-ignore-label``) left out of the label comparison."""
    ignored = BASIC_IGNORED_LABELS | frozenset(extra_ignored_labels)
    return lambda n1, n2: is_cloud_provider_node_info_similar(n1, n2, ignored, ratios)


def create_label_node_info_comparator(labels: Sequence[str]) -> Comparator:
    """``--balancing-label``: two nodes are similar when each of ``labels`` is on both with the same value
    (nothing else is compared)."""
    names = tuple(labels)

    def similar(n1: NodeInfo, n2: NodeInfo) -> bool:
        if n1.node is None or n2.node is None or not names:
            return False
        l1, l2 = n1.node.metadata.labels, n2.node.metadata.labels
        return all(k in l1 and k in l2 and l1[k] == l2[k] for k in names)
    return similar


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen
class BalancingOptions:
    """How similar groups are found: ``ignored_labels`` (``--balancing-ignore-label``) added to the basic
    ones, or ``labels`` (``--balancing-label``) alone; the ratios of the resource comparison."""

    ignored_labels: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    labels: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    ratios: NodeGroupDifferenceRatios = NodeGroupDifferenceRatios()

    def comparator(self) -> Comparator:
        if self.labels:
            return create_label_node_info_comparator(self.labels)
        return create_generic_node_info_comparator(self.ignored_labels, self.ratios)


def find_similar_node_groups(group: str, node_infos: Mapping[str, NodeInfo], comparator: Comparator) -> list[str]:
    """The groups (in ``node_infos`` order) whose template the comparator finds similar to ``group``'s."""
    mine = node_infos.get(group)
    if mine is None:
        return []
    return [name for name, ni in node_infos.items() if name != group and comparator(mine, ni)]


def compute_similar_node_groups(group: str, similar: Sequence[str], schedulable: Mapping[str, Collection[str]], *,
                                enabled: bool = True, zero_or_max_node_scaling: bool = False) -> list[str]:
    """The similar groups a scale-up of ``group`` is balanced with (cluster-autoscaler's
    ComputeSimilarNodeGroups): none when balancing is off, when ``group`` is a zeroOrMaxNodeScaling group or
    takes no pending pod; else those of ``similar`` that take every pending pod ``group`` takes.
    ``schedulable`` maps each group tried to the pending pods (or pod groups) its template takes."""
    if not enabled or zero_or_max_node_scaling:
        return []
    mine = schedulable.get(group)
    if not mine:
        return []
    need = set(mine)
    return [g for g in similar if g in schedulable and need <= set(schedulable[g])]


@attrs.frozen
class ScaleUpInfo:
    """One group's part of a scale-up: its size now and after."""

    group: str
    current_size: int
    new_size: int
    max_size: int

    @property
    def delta(self) -> int:
        return self.new_size - self.current_size


def balance_scale_up_between_groups(groups: Sequence[tuple[str, int, int]], new_nodes: int) -> list[ScaleUpInfo]:
    """Split ``new_nodes`` among ``groups`` — (name, current size, max size) — the smallest group first, one node
    at a time, within each max size (cluster-autoscaler's BalanceScaleUpBetweenGroups). A group already at or
    over its max size gets nothing; more nodes than the groups can take are capped to what they can. Returns
    the groups that grow, smallest first (equal sizes in the given order)."""
    kept = [g for g in groups if g[1] != g[2]]
    order = sorted(range(len(kept)), key=lambda i: kept[i][1])  # by current size; equal sizes keep their order
    names = [kept[i][0] for i in order]
    current = [kept[i][1] for i in order]
    top = [kept[i][2] for i in order]
    new = list(current)
    new_nodes = min(new_nodes, sum(mx - cur for cur, mx in zip(current, top, strict=True) if mx > cur))
    start = at = 0
    while new_nodes > 0:
        if new[at] < top[at]:
            new[at] += 1
            new_nodes -= 1
        else:  # full: move it before the groups still growing (all of its size), which start one place later
            names[start], names[at] = names[at], names[start]
            for arr in (current, top, new):
                arr[start], arr[at] = arr[at], arr[start]
            start += 1
        at = at + 1 if at < len(new) - 1 and new[at] > new[at + 1] else start
    return [ScaleUpInfo(names[i], current[i], new[i], top[i]) for i in range(len(names)) if new[i] != current[i]]


__all__ = ["BASIC_IGNORED_LABELS", "BalancingOptions", "Comparator", "NodeGroupDifferenceRatios", "ScaleUpInfo",
           "balance_scale_up_between_groups", "compare_labels", "compute_similar_node_groups",
           "create_generic_node_info_comparator", "create_label_node_info_comparator", "find_similar_node_groups",
           "is_cloud_provider_node_info_similar", "within_tolerance"]
