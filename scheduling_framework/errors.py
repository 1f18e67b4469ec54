"""Exception hierarchy: every error the library raises derives from SchedulingFrameworkError.

Messages name the object (kind/namespace/name), the field path or the plugin, and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Longest rendering of a user-supplied value inside an error message.
MAX_VALUE_CHARS = 120


def brief(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``repr``-like text of ``value`` cut at ``limit`` characters, without rendering more than that.

    Every error message that shows a user's value goes through here: a value built from nested YAML
    aliases can stand for billions of nodes, and ``repr`` or ``json.dumps`` would try to print them all.
    """
    out: list[str] = []
    budget = [limit + 1]

    def emit(s: str) -> bool:
        out.append(s[: budget[0]])
        budget[0] -= len(s)
        return budget[0] > 0

    def walk(v: Any, depth: int) -> bool:
        if depth > 16:
            return emit("...")
        if isinstance(v, str):
            return emit(repr(v[: budget[0] + 2]) if len(v) > budget[0] else repr(v))
        if isinstance(v, Mapping):
            if not emit("{"):
                return False
            for i, (k, item) in enumerate(v.items()):
                if (i and not emit(", ")) or not walk(k, depth + 1) or not emit(": ") or not walk(item, depth + 1):
                    return False
            return emit("}")
        if isinstance(v, (list, tuple)):
            if not emit("["):
                return False
            for i, item in enumerate(v):
                if (i and not emit(", ")) or not walk(item, depth + 1):
                    return False
            return emit("]")
        if isinstance(v, int) and v.bit_length() > 256:
            return emit(f"<an integer of {v.bit_length()} bits>")
        try:
            return emit(repr(v)[: budget[0] + 1])
        except Exception:  # a repr that fails must not hide the error being reported
            return emit(f"<{type(v).__name__}>")

    walk(value, 0)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def brief_str(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """Like :func:`brief`, but a string is shown as its own text (no quotes)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 3] + "..."
    return brief(value, limit)


class SchedulingFrameworkError(Exception):
    """Root of every error raised by scheduling_framework."""


class ValidationError(SchedulingFrameworkError, ValueError):
    """Input (a manifest, a quantity, a config) is malformed. ``path`` is the field path, when known."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}" if path else message)


class InputError(ValidationError):
    """An input file or stream cannot be used: unreadable, not a regular file, too big, undecodable,
    invalid YAML, nested too deep, an alias bomb, or empty. The message names the file (``source``)."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        ValueError.__init__(self, message)
        self.path = ""
        self.detail = message


class InvalidQuantityError(ValidationError):
    """A resource quantity string does not parse.

    Example: ``spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"``.
    """

    def __init__(self, value: object, path: str = "") -> None:
        self.value = value
        super().__init__(f'invalid quantity "{brief_str(value)}"', path)


class ManifestError(ValidationError):
    """A Kubernetes object manifest is malformed; the message starts with the object's kind/namespace/name."""

    def __init__(self, obj: str, message: str, path: str = "") -> None:
        self.obj = obj
        full = f"{path}: {message}" if path else message
        ValueError.__init__(self, f"{obj}: {full}" if obj else full)
        self.path = path
        self.detail = message


class ManifestValidationError(ManifestError):
    """Objects in a cluster failed API validation; ``errors`` lists every problem, each naming its object
    and field path (e.g. ``Pod default/web: spec.containers[0].resources.requests[cpu]: Invalid value: ...``)."""

    #: problems shown in the message (``errors`` keeps them all)
    SHOWN = 50

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        shown = self.errors[: self.SHOWN]
        more = len(self.errors) - len(shown)
        text = "; ".join(shown) + (f"; ... and {more} more" if more > 0 else "")
        ValueError.__init__(self, text)
        self.obj = ""
        self.path = ""
        self.detail = text


class ConfigError(ValidationError):
    """A KubeSchedulerConfiguration is invalid. ``errors`` lists every problem found (with field paths)."""

    def __init__(self, errors: list[str] | str, file: str | None = None) -> None:
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        #: The configuration file the problems are in (None: a document given as data), named first in the message.
        self.file = file
        message = "; ".join(self.errors) if len(self.errors) != 1 else self.errors[0]
        ValueError.__init__(self, message if file is None else f"{file}: {message}")
        self.path = ""
        self.detail = str(self)


class RegistryError(SchedulingFrameworkError):
    """Plugin registration failed: a name clash, a broken entry point, an unknown plugin."""


class PluginError(SchedulingFrameworkError):
    """A plugin is unusable: missing ``name``, wrong factory signature, args rejected, wrong return shape."""

    def __init__(self, plugin: str, message: str) -> None:
        self.plugin = plugin
        super().__init__(f"plugin {plugin!r}: {message}")


class SnapshotError(SchedulingFrameworkError):
    """A snapshot operation is invalid (unknown node, reverted fork, ...)."""


class SchedulerBusyError(SchedulingFrameworkError):
    """A Scheduler's loop was entered re-entrantly (``run()`` or ``schedule_one()`` called from a plugin or a
    binder while a cycle of the same Scheduler is running on this thread)."""


class SimulatorBusyError(SchedulingFrameworkError):
    """A Simulator was used from two threads at once: a call came from one thread while another was inside a
    call of the same Simulator, or had a fork open (``Simulator.fork()`` until its revert or commit). A
    Simulator is not thread-safe; nothing was changed by the refused call."""
