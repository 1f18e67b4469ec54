"""Over-committed input: nodes whose bound pods request more than the node's allocatable.

Real clusters show this after a node is resized, when static pods or pods bound by hand skip the scheduler,
or when the kubelet reports a smaller allocatable than before. The run keeps the pods as given (the API
server would too), but it means no pending pod fits there for that resource, which a user reading the
result should know: one warning, with one item per node naming each over-committed resource.
"""

from __future__ import annotations

from collections.abc import Iterable

from scheduling_framework.state.node_info import NodeInfo
from scheduling_framework.warning_list import Warnings

WARN_OVERCOMMITTED = ("node(s) over-committed: the pods bound to them request more than the node's allocatable "
                      "(kept as given: pending pods requesting that resource do not fit there)")

_BINARY = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def _bytes(n: int) -> str:
    for suffix, unit in _BINARY:
        if n >= unit:
            return f"{n / unit:.4g}{suffix}"
    return str(n)


def _cpu(milli: int) -> str:
    return f"{milli / 1000:.4g}"


def overcommitted(ni: NodeInfo) -> list[tuple[str, str, str]]:
    """``(resource, requested, allocatable)`` for every resource the node's pods request beyond its allocatable
    (amounts in the units ``kubectl describe node`` uses); empty when it is not over-committed."""
    req, alloc = ni.requested, ni.allocatable
    out: list[tuple[str, str, str]] = []
    if req.milli_cpu > alloc.milli_cpu:
        out.append(("cpu", _cpu(req.milli_cpu), _cpu(alloc.milli_cpu)))
    if req.memory > alloc.memory:
        out.append(("memory", _bytes(req.memory), _bytes(alloc.memory)))
    if req.ephemeral_storage > alloc.ephemeral_storage:
        out.append(("ephemeral-storage", _bytes(req.ephemeral_storage), _bytes(alloc.ephemeral_storage)))
    if len(ni.pods) > alloc.allowed_pod_number:
        out.append(("pods", str(len(ni.pods)), str(alloc.allowed_pod_number)))
    for name, v in sorted(req.scalar_resources.items()):
        a = alloc.scalar_resources.get(name, 0)
        if v > a:
            out.append((name, str(v), str(a)))
    return out


def overcommit_item(name: str, over: list[tuple[str, str, str]]) -> str:
    """``node-1 (cpu 11.96 > 7.91, memory 40Gi > 32Gi)``: requested > allocatable, per resource."""
    return f"{name} ({', '.join(f'{r} {q} > {a}' for r, q, a in over)})"


def report_overcommitted(node_infos: Iterable[NodeInfo], warnings: Warnings) -> None:
    """Add one item per over-committed node to ``warnings`` (under :data:`WARN_OVERCOMMITTED`)."""
    for ni in node_infos:
        if ni.node is None:
            continue
        over = overcommitted(ni)
        if over:
            warnings.add_item(WARN_OVERCOMMITTED, overcommit_item(ni.node.name, over))


__all__ = ["WARN_OVERCOMMITTED", "overcommit_item", "overcommitted", "report_overcommitted"]
