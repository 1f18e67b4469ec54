"""Default plugin set and plugin-set merging (upstream v1 default_plugins_test.go)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_framework.config import (
    INTREE_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    default_plugins,
    merge_plugin_set,
    merge_plugins,
)
from scheduling_framework.features import FeatureGates


def ps(enabled: Any = (), disabled: Any = ()) -> PluginSet:
    def refs(items: Any) -> tuple[PluginRef, ...]:
        return tuple(PluginRef(*i) if isinstance(i, tuple) else PluginRef(i) for i in items)

    return PluginSet(refs(enabled), refs(disabled))


def test_default_plugins_v1_34() -> None:
    # getDefaultPlugins with DynamicResourceAllocation GA (v1.34+): DynamicResources just before
    # DefaultPreemption; the volume limit plugins upstream removed after v1.31 are not in the list.
    want = [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 0),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]
    assert len(want) == 19
    got = default_plugins(FeatureGates.for_release("1.34"))
    assert [(p.name, p.weight) for p in got.multi_point.enabled] == want
    assert got == Plugins(multi_point=got.multi_point)
    # NodeDeclaredFeatures joins from 1.36 (its gate's default), at the end; GangScheduling only behind its gates
    assert {n for n, _ in want} | {"NodeDeclaredFeatures", "GangScheduling"} == set(INTREE_POINTS)


@pytest.mark.parametrize(("release", "gates", "present"), [
    pytest.param("1.35", {"GenericWorkload": True, "GangScheduling": True}, True, id="1.35-both-gates"),
    pytest.param("1.36", {"GenericWorkload": True, "GangScheduling": True}, True, id="1.36-both-gates"),
    pytest.param("1.36", {"GenericWorkload": True}, False, id="1.36-generic-workload-alone"),
    pytest.param("1.37", {"GenericWorkload": True}, True, id="1.37-generic-workload-alone"),
    pytest.param("1.35", {"GangScheduling": True}, False, id="gang-without-generic-workload"),
    pytest.param("1.35", {"GenericWorkload": True}, False, id="generic-workload-alone"),
    pytest.param("1.35", {}, False, id="defaults"),
])
def test_default_plugins_gang_scheduling(release: str, gates: dict[str, bool], present: bool) -> None:
    # applyFeatureGates: GangScheduling is appended to the default multiPoint list (after DefaultBinder)
    names = [p.name for p in default_plugins(FeatureGates.for_release(release, gates)).multi_point.enabled]
    assert (names[-1] == "GangScheduling") == present
    assert names.count("GangScheduling") == int(present)


# (name, custom, default, expected) per point key; None custom means no custom plugins at all.
MERGE_CASES: list[Any] = [
    (
        "AppendCustomPlugin",
        {"filter": ps(["CustomPlugin"])},
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])},
    ),
    (
        "InsertAfterDefaultPlugins2",
        {"filter": ps(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])},
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {"filter": ps(["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])},
    ),
    (
        "InsertBeforeAllPlugins",
        {"filter": ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])},
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {"filter": ps(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])},
    ),
    (
        "ReorderDefaultPlugins",
        {"filter": ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])},
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {"filter": ps(["DefaultPlugin2", "DefaultPlugin1"], ["*"])},
    ),
    (
        "ApplyNilCustomPlugin",
        None,
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {"filter": ps(["DefaultPlugin1", "DefaultPlugin2"])},
    ),
    (
        "CustomPluginOverrideDefaultPlugin",
        {"filter": ps([("Plugin1", 2), ("Plugin3", 3)])},
        {"filter": ps(["Plugin1", "Plugin2", "Plugin3"])},
        {"filter": ps([("Plugin1", 2), "Plugin2", ("Plugin3", 3)])},
    ),
    (
        "OrderPreserveAfterOverride",
        {"filter": ps([("Plugin2", 2), ("Plugin1", 1)])},
        {"filter": ps(["Plugin1", "Plugin2", "Plugin3"])},
        {"filter": ps([("Plugin1", 1), ("Plugin2", 2), "Plugin3"])},
    ),
    (
        "RepeatedCustomPlugin",
        {"filter": ps(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)])},
        {"filter": ps(["Plugin1", "Plugin2", "Plugin3"])},
        {"filter": ps(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)])},
    ),
    (
        "Append custom MultiPoint plugin",
        {"multiPoint": ps(["CustomPlugin"])},
        {"multiPoint": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {"multiPoint": ps(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"])},
    ),
    (
        "Append disabled Multipoint plugins",
        {"multiPoint": ps(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]), "score": ps([], ["CustomPlugin2"])},
        {"multiPoint": ps(["DefaultPlugin1", "DefaultPlugin2"])},
        {
            "multiPoint": ps(["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
            "score": ps([], ["CustomPlugin2"]),
        },
    ),
    (
        "override default MultiPoint plugins with custom value",
        {"multiPoint": ps([("DefaultPlugin", 5)])},
        {"multiPoint": ps(["DefaultPlugin"])},
        {"multiPoint": ps([("DefaultPlugin", 5)])},
    ),
    (
        "disabled MultiPoint plugin in default set",
        {"multiPoint": ps(["CustomPlugin"])},
        {"multiPoint": ps(["DefaultPlugin"], ["DefaultPlugin2"])},
        {"multiPoint": ps(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"])},
    ),
    (
        "disabled MultiPoint plugin in default set for specific extension point",
        {"multiPoint": ps(["CustomPlugin"])},
        {"multiPoint": ps(["DefaultPlugin"]), "score": ps([], ["DefaultPlugin2"])},
        {"multiPoint": ps(["DefaultPlugin", "CustomPlugin"]), "score": ps([], ["DefaultPlugin2"])},
    ),
    (
        "multipoint with only disabled gets merged",
        {"multiPoint": ps([], ["DefaultPlugin"])},
        {"multiPoint": ps(["DefaultPlugin"])},
        {"multiPoint": ps([], ["DefaultPlugin"])},
    ),
]


@pytest.mark.parametrize(("custom", "default", "expected"), [pytest.param(*c[1:], id=c[0]) for c in MERGE_CASES])
def test_merge_plugins(custom: Any, default: Any, expected: Any) -> None:
    got = merge_plugins(Plugins().replace(**default), None if custom is None else Plugins().replace(**custom))
    assert got == Plugins().replace(**expected)


names = st.sampled_from(["A", "B", "C", "D", "E"])
refs = st.lists(st.builds(PluginRef, names, st.integers(0, 3)), max_size=6).map(tuple)


@given(refs, refs, st.lists(st.sampled_from(["A", "B", "C", "*"]), max_size=3))
def test_merge_plugin_set_invariants(
    default: tuple[PluginRef, ...], custom: tuple[PluginRef, ...], disabled: list[str]
) -> None:
    merged = merge_plugin_set(PluginSet(default), PluginSet(custom, tuple(PluginRef(n) for n in disabled)))
    kept = [] if "*" in disabled else [p for p in default if p.name not in disabled]
    last = {p.name: i for i, p in enumerate(custom)}
    replaced = {last[p.name] for p in kept if p.name in last}
    assert len(merged.enabled) == len(kept) + len(custom) - len(replaced)
    custom_names = {p.name for p in custom}
    assert custom_names <= {p.name for p in merged.enabled}
    # defaults nobody re-configured keep their relative order and their own weights
    assert [p for p in merged.enabled if p.name not in custom_names] == [p for p in kept if p.name not in custom_names]
    assert [p.name for p in merged.disabled] == disabled
