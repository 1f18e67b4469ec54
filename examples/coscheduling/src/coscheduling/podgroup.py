"""The PodGroup custom resource (``scheduling.x-k8s.io/v1alpha1``) as Coscheduling reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scheduling_framework import PluginError
from scheduling_framework.api.pod import Pod

POD_GROUP = "PodGroup"
API_VERSION = "scheduling.x-k8s.io/v1alpha1"
#: the label naming a pod's PodGroup (same namespace)
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


@dataclass(frozen=True)
class PodGroup:
    namespace: str
    name: str
    min_member: int = 0
    schedule_timeout_seconds: int | None = None
    creation_timestamp: datetime | None = None
    min_resources: Mapping[str, Any] | None = None

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], namespace: str) -> PodGroup:
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        name = str(meta.get("name", ""))
        where = f"PodGroup {namespace}/{name}"
        if not isinstance(spec, Mapping):
            raise PluginError("Coscheduling", f"{where}: spec: expected an object")
        mm = spec.get("minMember", 0)
        if isinstance(mm, bool) or not isinstance(mm, int) or mm < 0:
            raise PluginError("Coscheduling", f"{where}: spec.minMember: expected a non-negative integer, got {mm!r}")
        timeout = spec.get("scheduleTimeoutSeconds")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0):
            raise PluginError("Coscheduling", f"{where}: spec.scheduleTimeoutSeconds: expected a non-negative "
                                              f"integer, got {timeout!r}")
        created = meta.get("creationTimestamp")
        ts = None
        if isinstance(created, str):
            try:
                ts = datetime.fromisoformat(created.replace("Z", "+00:00"))
            except ValueError:
                ts = None
        elif isinstance(created, datetime):
            ts = created
        return cls(namespace, name, mm, timeout, ts, spec.get("minResources"))


def pod_group_label(pod: Pod) -> str:
    return pod.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    name = pod_group_label(pod)
    return f"{pod.namespace}/{name}" if name else ""
