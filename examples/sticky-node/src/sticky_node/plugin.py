"""StickyNode: once a VM has run on a node, every later pod of that VM runs on the same node.

A VM (for example a KubeVirt VirtualMachineInstance) is the controlling owner of its launcher pod.
When the VM restarts, a new pod is created; the default scheduler could put it anywhere, but the
VM's local disk or cache is on the node it ran on before.

- PreFilter finds the pod's VM and looks up the node it sticks to. A pod of no VM, or of a VM that has
  not run yet, returns Skip: the framework then does not run this plugin's Filter for the pod.
- Filter allows only that node; every other node is UnschedulableAndUnresolvable (preempting pods
  there would not help).
- PostBind records where the VM first ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduling_framework import Code, CycleState, NodeInfo, PluginError, PreFilterResult, Status
from scheduling_framework.api import Pod

from sticky_node.store import JsonFileStore, PlacementStore, memory_store

NAME = "StickyNode"
# CycleState key PreFilter writes for Filter, named after the point and plugin as upstream does.
STATE_KEY = "PreFilter" + NAME
ERR_REASON = "already stick to another node"
DEFAULT_OWNER_KINDS = ("VirtualMachineInstance",)
_FIELDS = ("storePath", "storeName", "ownerKinds")


@dataclass(frozen=True)
class StickyNodeArgs:
    """The plugin's args (``pluginConfig[].args``): where placements are kept and which owners are VMs.

    ``storePath``: a JSON file (survives restarts); ``storeName``: an in-process store (tests, embedding);
    neither: the in-process store ``"default"``. ``ownerKinds``: controller kinds that count as VMs.
    """

    store_path: str | None = None
    store_name: str | None = None
    owner_kinds: tuple[str, ...] = DEFAULT_OWNER_KINDS

    @classmethod
    def from_args(cls, args: Any) -> StickyNodeArgs:
        if args is None:
            return cls()
        if not isinstance(args, Mapping):
            raise PluginError(NAME, f"args: expected a mapping with fields {', '.join(_FIELDS)}, "
                                    f"got {type(args).__name__}")
        problems = [f'args.{k}: unknown field (expected one of {", ".join(_FIELDS)})' for k in args
                    if k not in _FIELDS]
        path, name, kinds = args.get("storePath"), args.get("storeName"), args.get("ownerKinds")
        for field, value in (("storePath", path), ("storeName", name)):
            if value is not None and (not isinstance(value, str) or not value):
                problems.append(f"args.{field}: expected a non-empty string, got {value!r}")
        if path is not None and name is not None:
            problems.append("args: storePath and storeName are exclusive: give one")
        if kinds is not None and (not isinstance(kinds, list) or not kinds
                                  or not all(isinstance(k, str) and k for k in kinds)):
            problems.append(f"args.ownerKinds: expected a non-empty list of kinds, got {kinds!r}")
        if problems:
            raise PluginError(NAME, "; ".join(problems))
        return cls(path, name, tuple(kinds) if kinds is not None else DEFAULT_OWNER_KINDS)

    def open_store(self) -> PlacementStore:
        if self.store_path is not None:
            try:
                return JsonFileStore(self.store_path)
            except ValueError as e:
                raise PluginError(NAME, f"args.storePath: {e}") from None
        return memory_store(self.store_name or "default")


class StickyNode:
    """PreFilter, Filter and PostBind; the class is its own factory: ``StickyNode(args, handle)``."""

    name = NAME

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = StickyNodeArgs.from_args(args)
        self.store = self.args.open_store()
        self.handle = handle

    def vm_key(self, pod: Pod) -> str | None:
        """``"<namespace>/<vm>"`` for a pod controlled by a VM, None for any other pod."""
        for ref in pod.metadata.owner_references:
            if ref.controller and ref.kind in self.args.owner_kinds:
                return f"{pod.namespace}/{ref.name}"
        return None

    # PreFilter -----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        key = self.vm_key(pod)
        node = None if key is None else self.store.get(key)
        if node is None:
            return None, Status(Code.SKIP)  # not a VM, or its first run: any node will do
        if not any(ni.name == node for ni in nodes):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                f'VM {key} sticks to node "{node}", which is not in the cluster')
        state.write(STATE_KEY, node)
        return None, None

    def pre_filter_extensions(self) -> None:
        return None  # the verdict does not depend on other pods

    # Filter --------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Filter runs only when PreFilter did not Skip, so the key is there.
        if node_info.name == state.read(STATE_KEY):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    # PostBind ------------------------------------------------------------------------------------
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key = self.vm_key(pod)
        if key is not None:
            self.store.record_first(key, node_name)
