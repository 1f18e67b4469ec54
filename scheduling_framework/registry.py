"""Registry: plugin name -> factory, filled from the ``scheduling_framework`` entry point group."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pluggy

from scheduling_framework import hooks
from scheduling_framework.errors import PluginError, RegistryError
from scheduling_framework.interfaces import points_of_class

Factory = Callable[[Any, Any], Any]


class _Entry:
    __slots__ = ("name", "ref", "origin", "_factory")

    def __init__(self, name: str, ref: Factory | str, origin: str) -> None:
        self.name = name
        self.ref = ref
        self.origin = origin
        self._factory: Factory | None = None if isinstance(ref, str) else ref

    def factory(self) -> Factory:
        if self._factory is None:
            assert isinstance(self.ref, str)
            mod_name, _, attr = self.ref.partition(":")
            try:
                obj = getattr(importlib.import_module(mod_name), attr)
            except Exception as e:  # a broken plugin module must not crash the caller with a deep traceback
                raise RegistryError(f"plugin {self.name!r} (from {self.origin}): cannot load {self.ref}: "
                                    f"{type(e).__name__}: {e}") from e
            self._factory = obj
        return self._factory


class Registry:
    """Maps plugin names to factories. Registering a name twice is an error naming both origins."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._origin = "<direct>"
        # Entry points that failed to load: their plugins are missing, and errors about them say why.
        self.load_errors: list[str] = []

    def register(self, name: str, factory: Factory | str, *, origin: str | None = None) -> None:
        """Register ``factory`` (a callable, or a lazy ``"module:attr"`` reference) under ``name``."""
        if not isinstance(name, str) or not name:
            raise RegistryError(f"plugin name must be a non-empty string, got {name!r}")
        if not isinstance(factory, str) and not callable(factory):
            raise RegistryError(f"plugin {name!r}: factory must be callable, got {type(factory).__name__}")
        org = origin or self._origin
        have = self._entries.get(name)
        if have is not None:
            raise RegistryError(f"a plugin named {name!r} already exists: registered by {have.origin}, "
                                f"registered again by {org}")
        self._entries[name] = _Entry(name, factory, org)

    def unregister(self, name: str) -> None:
        if name not in self._entries:
            raise RegistryError(f"no plugin named {name!r} in registry")
        del self._entries[name]

    def merge(self, other: Registry) -> None:
        for name, e in other._entries.items():
            self.register(name, e.ref, origin=e.origin)

    def get(self, name: str) -> Factory:
        e = self._entries.get(name)
        if e is None:
            raise RegistryError(f'plugin "{name}" does not exist{self.load_errors_note()}')
        return e.factory()

    def load_errors_note(self) -> str:
        """A suffix for "does not exist" errors when some plugin packages failed to load."""
        if not self.load_errors:
            return ""
        return " (plugin packages that failed to load: " + "; ".join(self.load_errors) + ")"

    def origin(self, name: str) -> str:
        return self._entries[name].origin

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def points_of(self, name: str) -> frozenset[str] | None:
        """Extension points the named plugin implements (from its class), or None when unknown."""
        e = self._entries.get(name)
        if e is None:
            return None
        f = e.factory()
        declared = getattr(f, "extension_points", None)
        if declared is not None:
            return frozenset(declared)
        if inspect.isclass(f):
            return points_of_class(f)
        # A plain function factory: build the plugin once with no args to learn what it implements.
        try:
            return points_of_class(f(None, None))
        except Exception as exc:
            raise PluginError(name, f"cannot determine extension points of factory {f!r}: {exc}") from exc


def _register_module(registry: Registry, pm: pluggy.PluginManager, module: Any, origin: str) -> None:
    pm.register(module, name=origin)
    registry._origin = origin
    try:
        caller = pm.subset_hook_caller("register_plugins", [p for p in pm.get_plugins() if p is not module])
        caller(registry=registry)
    except RegistryError:
        raise
    except Exception as e:
        raise RegistryError(f"{origin}: register_plugins failed: {type(e).__name__}: {e}") from e
    finally:
        registry._origin = "<direct>"


_default: Registry | None = None
_lock = threading.Lock()


def discover(group: str = hooks.ENTRY_POINT_GROUP) -> Registry:
    """A new Registry filled by every installed package's entry point in ``group``.

    The in-tree plugins come through this same path (``plugins_intree`` is an entry point of this
    distribution); in a source checkout that is not installed they are loaded directly.
    """
    registry = Registry()
    pm = pluggy.PluginManager(hooks.PROJECT)
    pm.add_hookspecs(hooks)
    seen_intree = False
    eps = sorted(importlib.metadata.entry_points(group=group), key=lambda ep: (ep.value != "plugins_intree", ep.name))
    for ep in eps:
        dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
        origin = f"{dist} (entry point {ep.name!r} = {ep.value})"
        if ep.value == "plugins_intree":
            if seen_intree:
                continue  # the same distribution seen twice on sys.path
            seen_intree = True
        try:
            module = ep.load()
        except Exception as e:
            # One broken plugin package must not disable every other plugin: record it, and name it
            # wherever a missing plugin is reported (the in-tree package itself failing is fatal).
            msg = (f"cannot load plugin entry point {ep.name!r} = {ep.value!r} of distribution {dist}: "
                   f"{type(e).__name__}: {e}")
            if ep.value == "plugins_intree":
                raise RegistryError(msg) from e
            registry.load_errors.append(msg)
            continue
        try:
            _register_module(registry, pm, module, origin)
        except RegistryError as e:
            if ep.value == "plugins_intree":
                raise
            registry.load_errors.append(str(e))
    if not seen_intree:
        # A source tree that is not installed: load the in-tree plugins by name, as their entry point would
        # (the registry discovers plugin packages; it never depends on one).
        intree = importlib.import_module(INTREE_MODULE)
        _register_module(registry, pm, intree, "scheduling-framework (source tree)")
    return registry


#: The in-tree plugins' package, registered like any third-party plugin package.
INTREE_MODULE = "plugins_intree"


def default_registry() -> Registry:
    """The process-wide registry discovered from entry points (built once, on first use)."""
    global _default
    with _lock:
        if _default is None:
            _default = discover()
        return _default


if TYPE_CHECKING:  # the hook's parameter type (hooks.PluginRegistry) is what a Registry offers
    def _registry_is_a_plugin_registry(r: Registry) -> hooks.PluginRegistry:
        return r
