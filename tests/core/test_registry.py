"""Registry and entry-point discovery (scheduling_framework.registry).

Entry points are faked by replacing ``importlib.metadata.entry_points`` with a function returning objects
shaped like ``EntryPoint`` (name, value, dist, load), so no package is installed for these tests.
"""

from __future__ import annotations

import importlib.metadata
import types
from collections.abc import Callable
from typing import Any

import pytest

import plugins_intree
import scheduling_framework as sf
from scheduling_framework import hooks
from scheduling_framework import registry as registry_mod
from scheduling_framework.errors import PluginError, RegistryError, SchedulingFrameworkError
from scheduling_framework.registry import Registry, default_registry, discover
from scheduling_framework.status import Status


class FilterOnly:
    name = "FilterOnly"

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return None


class ScoreAndReserve:
    name = "ScoreAndReserve"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        return 0, None

    def score_extensions(self) -> None:
        return None

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def filter_factory(args: Any, handle: Any) -> FilterOnly:
    return FilterOnly(args, handle)


# --- Registry -----------------------------------------------------------------------------------------------

def test_register_get_and_introspection() -> None:
    r = Registry()
    r.register("FilterOnly", FilterOnly)
    r.register("ByFunction", filter_factory, origin="my-package")
    assert r.get("FilterOnly") is FilterOnly and r.get("ByFunction") is filter_factory
    assert "FilterOnly" in r and "Nope" not in r and 3 not in r
    assert r.names() == ["FilterOnly", "ByFunction"] and list(r) == r.names() and len(r) == 2
    assert r.origin("FilterOnly") == "<direct>" and r.origin("ByFunction") == "my-package"


def test_get_unknown_plugin() -> None:
    with pytest.raises(RegistryError, match='plugin "Missing" does not exist'):
        Registry().get("Missing")
    assert issubclass(RegistryError, SchedulingFrameworkError)


@pytest.mark.parametrize(("name", "factory", "fragment"), [
    pytest.param("", FilterOnly, "non-empty string", id="empty-name"),
    pytest.param(None, FilterOnly, "non-empty string", id="none-name"),
    pytest.param("X", 42, "factory must be callable, got int", id="not-callable"),
])
def test_register_rejects_bad_input(name: Any, factory: Any, fragment: str) -> None:
    with pytest.raises(RegistryError, match=fragment):
        Registry().register(name, factory)


def test_duplicate_name_names_both_origins() -> None:
    r = Registry()
    r.register("P", FilterOnly, origin="pkg-a")
    with pytest.raises(RegistryError) as ei:
        r.register("P", filter_factory, origin="pkg-b")
    msg = str(ei.value)
    assert "'P' already exists" in msg and "pkg-a" in msg and "pkg-b" in msg
    assert r.get("P") is FilterOnly  # the first registration stays


def test_unregister() -> None:
    r = Registry()
    r.register("P", FilterOnly)
    r.unregister("P")
    assert "P" not in r
    with pytest.raises(RegistryError, match="no plugin named 'P'"):
        r.unregister("P")


def test_merge_keeps_origins_and_reports_clashes() -> None:
    a, b = Registry(), Registry()
    a.register("A", FilterOnly, origin="pkg-a")
    b.register("B", filter_factory, origin="pkg-b")
    a.merge(b)
    assert a.names() == ["A", "B"] and a.origin("B") == "pkg-b"
    c = Registry()
    c.register("A", filter_factory, origin="pkg-c")
    with pytest.raises(RegistryError, match=r"pkg-a.*pkg-c"):
        a.merge(c)


def test_lazy_reference_is_resolved_on_get() -> None:
    r = Registry()
    r.register("Lazy", f"{__name__}:FilterOnly", origin="here")
    assert r.get("Lazy") is FilterOnly
    assert r.get("Lazy") is FilterOnly  # cached


@pytest.mark.parametrize("ref", [
    pytest.param("no_such_module_xyz:Thing", id="missing-module"),
    pytest.param(f"{__name__}:NoSuchAttribute", id="missing-attribute"),
])
def test_broken_lazy_reference_names_plugin_origin_and_reference(ref: str) -> None:
    r = Registry()
    r.register("Broken", ref, origin="pkg-x (entry point 'x' = x)")
    with pytest.raises(RegistryError) as ei:
        r.get("Broken")
    msg = str(ei.value)
    assert "'Broken'" in msg and "pkg-x" in msg and ref in msg


def test_points_of() -> None:
    r = Registry()
    r.register("FilterOnly", FilterOnly)
    r.register("ScoreAndReserve", ScoreAndReserve)
    r.register("ByFunction", filter_factory)

    def declared(args: Any, handle: Any) -> Any:
        raise AssertionError("not called when extension_points is declared")

    declared.extension_points = ("filter", "score")  # type: ignore[attr-defined]
    r.register("Declared", declared)
    # Points are named as in the configuration's plugin sets (preFilter, filter, score, ...).
    assert r.points_of("FilterOnly") == frozenset({"filter"})
    assert r.points_of("ScoreAndReserve") == frozenset({"score", "reserve"})
    assert r.points_of("ByFunction") == frozenset({"filter"})
    assert r.points_of("Declared") == frozenset({"filter", "score"})
    assert r.points_of("Unknown") is None


def test_points_of_failing_function_factory_is_a_plugin_error() -> None:
    def needs_args(args: Any, handle: Any) -> Any:
        raise ValueError("args required")

    r = Registry()
    r.register("Needy", needs_args)
    with pytest.raises(PluginError, match=r"'Needy'.*args required"):
        r.points_of("Needy")


# --- discovery through entry points ---------------------------------------------------------------------------

class FakeEntryPoint:
    """Shaped like importlib.metadata.EntryPoint as discover() uses it."""

    def __init__(self, name: str, value: str, dist: str | None, load: Callable[[], Any]) -> None:
        self.name = name
        self.value = value
        self.dist = None if dist is None else types.SimpleNamespace(name=dist)
        self._load = load

    def load(self) -> Any:
        return self._load()


def plugin_module(name: str, register: Callable[[Registry], None]) -> types.ModuleType:
    mod = types.ModuleType(name)

    @sf.hookimpl
    def register_plugins(registry: Registry) -> None:
        register(registry)

    mod.register_plugins = register_plugins  # type: ignore[attr-defined]
    return mod


def intree_ep() -> FakeEntryPoint:
    return FakeEntryPoint("intree", "plugins_intree", "scheduling-framework", lambda: plugins_intree)


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[FakeEntryPoint]], None]:
    def install(eps: list[FakeEntryPoint]) -> None:
        def entry_points(**kw: Any) -> list[FakeEntryPoint]:
            assert kw == {"group": hooks.ENTRY_POINT_GROUP}
            return list(eps)

        monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)

    return install


def test_discover_real_entry_points_registers_the_intree_plugins() -> None:
    r = discover()
    for name in plugins_intree.INTREE_PLUGINS:
        assert name in r
        assert "scheduling-framework" in r.origin(name)


def test_broken_entry_point_names_the_distribution(fake_entry_points: Any) -> None:
    # A broken third-party package does not disable the others: discovery records it, and asking for a
    # plugin that is missing gives a RegistryError that names the distribution and the failure.
    def boom() -> Any:
        raise ImportError("No module named 'sticky_vm_plugin'")

    other = plugin_module("other", lambda reg: reg.register("Other", FilterOnly))
    fake_entry_points([intree_ep(), FakeEntryPoint("sticky", "sticky_vm_plugin", "sticky-vm", boom),
                       FakeEntryPoint("other", "other", "other-dist", lambda: other)])
    r = discover()
    assert "Other" in r and "NodeName" in r
    (load_error,) = r.load_errors
    assert "distribution sticky-vm" in load_error
    assert "'sticky'" in load_error and "'sticky_vm_plugin'" in load_error
    assert "ImportError: No module named 'sticky_vm_plugin'" in load_error
    with pytest.raises(RegistryError) as ei:
        r.get("StickyVM")
    msg = str(ei.value)
    assert msg.startswith('plugin "StickyVM" does not exist')
    assert "sticky-vm" in msg and "No module named 'sticky_vm_plugin'" in msg


def test_broken_entry_point_without_distribution(fake_entry_points: Any) -> None:
    def boom() -> Any:
        raise AttributeError("nope")

    fake_entry_points([FakeEntryPoint("x", "x_mod", None, boom)])
    r = discover()
    assert len(r.load_errors) == 1 and "<unknown distribution>" in r.load_errors[0]
    with pytest.raises(RegistryError, match="<unknown distribution>"):
        r.get("X")


def test_broken_intree_entry_point_is_fatal(fake_entry_points: Any) -> None:
    def boom() -> Any:
        raise ImportError("half-installed")

    fake_entry_points([FakeEntryPoint("intree", "plugins_intree", "scheduling-framework", boom)])
    with pytest.raises(RegistryError) as ei:
        discover()
    assert "distribution scheduling-framework" in str(ei.value) and "half-installed" in str(ei.value)


def test_without_load_errors_missing_plugin_message_is_plain() -> None:
    r = discover()
    assert r.load_errors == []
    with pytest.raises(RegistryError) as ei:
        r.get("NoSuchPlugin")
    assert str(ei.value) == 'plugin "NoSuchPlugin" does not exist'


def test_third_party_plugin_is_registered_with_its_origin(fake_entry_points: Any) -> None:
    mod = plugin_module("sticky_vm", lambda reg: reg.register("StickyVM", FilterOnly))
    fake_entry_points([FakeEntryPoint("sticky", "sticky_vm", "sticky-vm", lambda: mod), intree_ep()])
    r = discover()
    assert r.get("StickyVM") is FilterOnly
    assert r.origin("StickyVM") == "sticky-vm (entry point 'sticky' = sticky_vm)"
    assert "NodeResourcesFit" in r
    assert r.names()[0] in plugins_intree.INTREE_PLUGINS  # in-tree plugins are registered first


def test_register_plugins_is_called_once_per_package(fake_entry_points: Any) -> None:
    calls: list[str] = []

    def registrar(tag: str, name: str, factory: Any) -> Callable[[Registry], None]:
        def register(reg: Registry) -> None:
            calls.append(tag)
            reg.register(name, factory)
        return register

    mod_a = plugin_module("pkg_a", registrar("a", "A", FilterOnly))
    mod_b = plugin_module("pkg_b", registrar("b", "B", filter_factory))
    fake_entry_points([intree_ep(), FakeEntryPoint("a", "pkg_a", "pkg-a", lambda: mod_a),
                       FakeEntryPoint("b", "pkg_b", "pkg-b", lambda: mod_b)])
    r = discover()
    assert sorted(calls) == ["a", "b"]
    assert r.origin("A").startswith("pkg-a") and r.origin("B").startswith("pkg-b")


def test_name_clash_with_intree_plugin_names_both_origins(fake_entry_points: Any) -> None:
    mod = plugin_module("shadow", lambda reg: reg.register("NodeName", FilterOnly))
    fake_entry_points([FakeEntryPoint("shadow", "shadow", "shadow-dist", lambda: mod), intree_ep()])
    r = discover()
    assert r.get("NodeName") is not FilterOnly  # the in-tree plugin keeps its name
    (clash,) = r.load_errors
    assert "'NodeName' already exists" in clash and "scheduling-framework" in clash and "shadow-dist" in clash


def test_failing_register_plugins_names_the_package(fake_entry_points: Any) -> None:
    def fail(reg: Registry) -> None:
        raise KeyError("oops")

    mod = plugin_module("bad", fail)
    fake_entry_points([intree_ep(), FakeEntryPoint("bad", "bad", "bad-dist", lambda: mod)])
    r = discover()
    assert r.load_errors == ["bad-dist (entry point 'bad' = bad): register_plugins failed: KeyError: 'oops'"]
    with pytest.raises(RegistryError, match="bad-dist"):
        r.get("Bad")


def test_without_intree_entry_point_the_source_tree_is_used(fake_entry_points: Any) -> None:
    fake_entry_points([])
    r = discover()
    assert set(plugins_intree.INTREE_PLUGINS) <= set(r.names())
    assert r.origin("NodeName") == "scheduling-framework (source tree)"


def test_intree_entry_point_seen_twice_is_registered_once(fake_entry_points: Any) -> None:
    fake_entry_points([intree_ep(), intree_ep()])
    r = discover()
    assert len(r) == len(plugins_intree.INTREE_PLUGINS)


def test_lazy_intree_factories_resolve() -> None:
    r = discover()
    for name in plugins_intree.INTREE_PLUGINS:
        factory = r.get(name)
        assert callable(factory)
        assert getattr(factory, "name", name) == name


def test_default_registry_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_mod, "_default", None)
    built: list[Registry] = []
    real = registry_mod.discover

    def counting() -> Registry:
        built.append(real())
        return built[-1]

    monkeypatch.setattr(registry_mod, "discover", counting)
    first = default_registry()
    assert default_registry() is first
    assert built == [first]
