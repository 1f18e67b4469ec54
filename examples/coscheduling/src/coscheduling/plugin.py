"""Coscheduling: the pods of a PodGroup are placed together or not at all (kubernetes-sigs/scheduler-plugins
``pkg/coscheduling``), at QueueSort, PreFilter, PostFilter, Reserve and Permit.

- QueueSort orders by priority, then by the group's time (its last scheduling failure, else when it was first
  seen), then by ``namespace/name``: the pods of a group leave the queue together;
- PreFilter rejects a pod whose group failed recently (``podGroupBackoffSeconds``), has fewer pods than
  ``minMember``, or would fall below ``minMember`` counting its scheduling-gated pods;
- Permit holds each pod until ``minMember`` pods of the group are assigned (assumed here or bound), then
  allows all; the wait is the group's ``scheduleTimeoutSeconds`` or the plugin's ``permitWaitingTimeSeconds``;
- PostFilter, when a pod finds no node and too many of the group are unassigned (more than
  ``podGroupRejectPercentage``), rejects the group's waiting pods at once; Unreserve (a member timed out or
  failed) rejects the others.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduling_framework import PluginError
from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import PostFilterResult, QueuedPodInfo
from scheduling_framework.status import Code, Status

from coscheduling.podgroup import (
    API_VERSION,
    POD_GROUP,
    POD_GROUP_LABEL,
    PodGroup,
    pod_group_full_name,
    pod_group_label,
)

NAME = "Coscheduling"
PERMIT_STATE_KEY = "PermitCoscheduling"
DEFAULT_WAIT_SECONDS = 60

_FIELDS = ("permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage")


@dataclass(frozen=True)
class CoschedulingArgs:
    """``CoschedulingArgs`` (``pluginConfig[].args``), with scheduler-plugins' defaults."""

    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10

    @classmethod
    def from_args(cls, args: Any) -> CoschedulingArgs:
        if args is None:
            return cls()
        if not isinstance(args, Mapping):
            raise PluginError(NAME, f"args: expected a mapping with fields {', '.join(_FIELDS)}, "
                                    f"got {type(args).__name__}")
        problems = [f"args.{k}: unknown field (expected one of {', '.join(_FIELDS)})" for k in args
                    if k not in _FIELDS and k not in ("apiVersion", "kind")]
        values: dict[str, int] = {}
        for field, default in zip(_FIELDS, (60, 0, 10), strict=True):
            v = args.get(field, default)
            if isinstance(v, bool) or not isinstance(v, int):
                problems.append(f"args.{field}: expected an integer, got {v!r}")
                continue
            values[field] = v
        if values.get("permitWaitingTimeSeconds", 0) < 0:
            problems.append("args.permitWaitingTimeSeconds: must be greater than or equal to 0")
        if values.get("podGroupBackoffSeconds", 0) < 0:
            problems.append("args.podGroupBackoffSeconds: must be greater than or equal to 0")
        if not 0 <= values.get("podGroupRejectPercentage", 10) <= 100:
            problems.append("args.podGroupRejectPercentage: must be between 0 and 100")
        if problems:
            raise PluginError(NAME, "; ".join(problems))
        return cls(values["permitWaitingTimeSeconds"], values["podGroupBackoffSeconds"],
                   values["podGroupRejectPercentage"])


class Coscheduling:
    """QueueSort, PreFilter, PostFilter, Reserve, Permit."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.args = CoschedulingArgs.from_args(args)
        self.handle = handle
        self.schedule_timeout = float(self.args.permit_waiting_time_seconds)
        self.reject_threshold = self.args.pod_group_reject_percentage / 100.0
        # group full name -> names of its pods that reached Permit (assumed), as upstream's assignedPodsByPG
        self._assigned: dict[str, set[str]] = {}
        self._backed_off: dict[str, float] = {}  # group -> until when PreFilter refuses it
        self._last_failed: dict[str, float] = {}  # group -> time of its last failed attempt
        self._first_seen: dict[str, float] = {}  # group -> earliest queue time of its pods (see less)
        register = getattr(handle, "register_pod_group_key", None)
        if register is not None:
            register(pod_group_full_name)

    # helpers ---------------------------------------------------------------------------------
    def _now(self) -> float:
        clock = getattr(self.handle, "permit_clock", None)
        return float(clock()) if clock is not None else time.monotonic()

    def get_pod_group(self, pod: Pod) -> tuple[str, PodGroup | None]:
        name = pod_group_label(pod)
        if not name:
            return "", None
        full = f"{pod.namespace}/{name}"
        objects = self.handle.objects
        # ours, not Kubernetes' own PodGroup (scheduling.k8s.io) of the same name, which the store keeps beside it
        group = API_VERSION.partition("/")[0]
        obj = objects.get(POD_GROUP, pod.namespace, name, group=group)
        if obj is None and pod.namespace == "default":
            obj = objects.get(POD_GROUP, "", name, group=group)  # a manifest without metadata.namespace
        if obj is None or not str(obj.raw.get("apiVersion", API_VERSION)).startswith("scheduling.x-k8s.io/"):
            return full, None  # absent, or Kubernetes' own PodGroup (scheduling.k8s.io), which is not ours
        return full, PodGroup.from_manifest(obj.raw, pod.namespace)

    def _group_pods(self, pod: Pod) -> list[Pod]:
        name = pod_group_label(pod)
        return [p for p in self.handle.list_pods(pod.namespace) if p.labels.get(POD_GROUP_LABEL) == name]

    def assigned_pod_count(self, pg_full_name: str) -> int:
        return len(self._assigned_names(pg_full_name))

    def _assigned_names(self, pg_full_name: str) -> set[str]:
        names = set(self._assigned.get(pg_full_name, ()))
        # pods bound before this scheduler started count as assigned (upstream: the informer's Add events)
        for ni in self.handle.snapshot.list():
            for pi in ni.pods:
                if pod_group_full_name(pi.pod) == pg_full_name:
                    names.add(pi.pod.name)
        return names

    def _waiting_of(self, namespace: str, group: str) -> Iterable[Any]:
        for wp in list(self.handle.iterate_over_waiting_pods()):
            p = wp.pod
            if p.namespace == namespace and p.labels.get(POD_GROUP_LABEL) == group:
                yield wp

    def _creation_time(self, qpi: QueuedPodInfo) -> float:
        pod = qpi.pod
        ts = qpi.initial_attempt_timestamp if qpi.initial_attempt_timestamp is not None else qpi.timestamp
        ts = float(ts) if isinstance(ts, (int, float)) else 0.0
        full = pod_group_full_name(pod)
        if not full:
            return ts
        failed = self._last_failed.get(full)
        if failed is not None:
            return failed
        first = self._first_seen.get(full)
        if first is None or ts < first:
            self._first_seen[full] = first = ts
        return first

    # QueueSort -------------------------------------------------------------------------------
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.spec.priority or 0, b.pod.spec.priority or 0
        if pa != pb:
            return pa > pb
        ta, tb = self._creation_time(a), self._creation_time(b)
        if ta == tb:
            return a.pod.key < b.pod.key
        return ta < tb

    # PreFilter -------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> tuple[None, Status | None]:
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return None, None
        until = self._backed_off.get(full)
        if until is not None and self._now() < until:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"podGroup {full} failed recently")
        pods = self._group_pods(pod)
        gap = pg.min_member - len(pods)
        if gap > 0:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods number: "
                                f"{len(pods)}, minMember of group: {pg.min_member}")
        for p in pods:
            if p.spec.scheduling_gates:
                gap += 1
            if gap > 0:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                    f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup")
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # PostFilter ------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: Any
                    ) -> tuple[PostFilterResult, Status]:
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE, "can not find pod group")
        assigned = self.assigned_pod_count(full)
        if assigned >= pg.min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        not_assigned = (pg.min_member - assigned) / pg.min_member
        if not_assigned <= self.reject_threshold:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        for wp in self._waiting_of(pod.namespace, pg.name):
            wp.reject(NAME, "optimistic rejection in PostFilter")
        if self.args.pod_group_backoff_seconds > 0 and len(self._group_pods(pod)) >= pg.min_member:
            self._backed_off[full] = self._now() + self.args.pod_group_backoff_seconds
        self._last_failed[full] = self._now()
        return PostFilterResult(), Status(Code.UNSCHEDULABLE, f"PodGroup {full} gets rejected due to Pod {pod.name} "
                                                              "is unschedulable even after PostFilter")

    # Reserve / Permit ------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return
        names = self._assigned.get(full)
        if names is not None:
            names.discard(pod.name)
            if not names:
                del self._assigned[full]
        for wp in self._waiting_of(pod.namespace, pg.name):
            wp.reject(NAME, "rejection in Unreserve")
        self._last_failed[full] = self._now()

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        full, pg = self.get_pod_group(pod)
        if not full:
            return None, 0
        if pg is None:
            return Status(Code.UNSCHEDULABLE, "PodGroup not found"), 0
        names = self._assigned.setdefault(full, set())
        names.add(pod.name)
        if len(self._assigned_names(full)) >= pg.min_member:
            self._last_failed.pop(full, None)
            for wp in self._waiting_of(pod.namespace, pg.name):
                wp.allow(NAME)
            return None, 0
        activate = len(names) == 1
        if activate:
            state.write(PERMIT_STATE_KEY, True)
        wait = float(pg.schedule_timeout_seconds) if pg.schedule_timeout_seconds is not None else (
            self.schedule_timeout or DEFAULT_WAIT_SECONDS)
        if activate:
            siblings = [p for p in self._group_pods(pod) if p.uid != pod.uid]
            if siblings:
                self.handle.activate(siblings)
        return Status(Code.WAIT), wait
