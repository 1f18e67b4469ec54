"""Exception hierarchy: every error the library raises derives from SchedulingFrameworkError.

Messages name the object (kind/namespace/name), the field path or the plugin, and what was expected.
"""

from __future__ import annotations


class SchedulingFrameworkError(Exception):
    """Root of every error raised by scheduling_framework."""


class ValidationError(SchedulingFrameworkError, ValueError):
    """Input (a manifest, a quantity, a config) is malformed. ``path`` is the field path, when known."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}" if path else message)


class InvalidQuantityError(ValidationError):
    """A resource quantity string does not parse.

    Example: ``spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"``.
    """

    def __init__(self, value: object, path: str = "") -> None:
        self.value = value
        super().__init__(f'invalid quantity "{value}"', path)


class ManifestError(ValidationError):
    """A Kubernetes object manifest is malformed; the message starts with the object's kind/namespace/name."""

    def __init__(self, obj: str, message: str, path: str = "") -> None:
        self.obj = obj
        full = f"{path}: {message}" if path else message
        ValueError.__init__(self, f"{obj}: {full}" if obj else full)
        self.path = path
        self.detail = message


class ConfigError(ValidationError):
    """A KubeSchedulerConfiguration is invalid. ``errors`` lists every problem found (with field paths)."""

    def __init__(self, errors: list[str] | str) -> None:
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        ValueError.__init__(self, "; ".join(self.errors) if len(self.errors) != 1 else self.errors[0])
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
