"""Configuration validation: upstream validation_test.go TestValidateKubeSchedulerConfigurationV1,
ported to v1 documents, plus loader behaviour (every problem at once, YAML errors, strictness)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework.config import load_config
from scheduling_framework.errors import ConfigError

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

VALID: dict[str, Any] = {
    **V1,
    "parallelism": 8,
    "clientConnection": {
        "acceptContentTypes": "application/json",
        "contentType": "application/json",
        "qps": 10,
        "burst": 10,
    },
    "leaderElection": {
        "resourceLock": "leases",
        "leaderElect": True,
        "leaseDuration": "30s",
        "renewDeadline": "15s",
        "retryPeriod": "5s",
        "resourceNamespace": "name",
        "resourceName": "name",
    },
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "profiles": [
        {
            "schedulerName": "me",
            "percentageOfNodesToScore": 35,
            "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "score": {"disabled": [{"name": "*"}]}},
            "pluginConfig": [
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                }
            ],
        },
        {
            "schedulerName": "other",
            "percentageOfNodesToScore": 35,
            "plugins": {
                "queueSort": {"enabled": [{"name": "CustomSort"}]},
                "bind": {"enabled": [{"name": "CustomBind"}]},
            },
        },
    ],
    "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
}

_MSG = re.compile(
    r"^(?:(?P<path>\S*?): )?(?P<type>Invalid value|Required value|Duplicate value|Unsupported value|Forbidden)"
)


def kinds(errors: list[str]) -> list[tuple[str, str]]:
    """(error type, field path) of each message; messages of another shape keep their text as type."""
    out = []
    for e in errors:
        m = _MSG.match(e)
        out.append((m["type"], m["path"] or "") if m else (e, ""))
    return out


def mutate(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(VALID)
    fn(doc)
    return doc


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return apply


def _duplicate_bind(doc: dict[str, Any]) -> None:
    doc["extenders"][0]["bindVerb"] = "foo"
    doc["extenders"].append({"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1})


def _valid_plugins(doc: dict[str, Any]) -> None:
    doc["profiles"][0]["plugins"]["score"]["enabled"] = [{"name": "PodTopologySpread", "weight": 2}]


MISMATCH_QUEUE_SORT = [
    {
        "schedulerName": "me",
        "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
        "pluginConfig": [{"name": "PrioritySort"}],
    },
    {
        "schedulerName": "other",
        "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
        "pluginConfig": [{"name": "CustomSort"}],
    },
]

SCENARIOS: list[Any] = [
    ("good", lambda d: None, []),
    ("bad-parallelism-invalid-value", _set(["parallelism"], 0), [("Invalid value", "parallelism")]),
    (
        "bad-resource-lock-not-leases",
        _set(["leaderElection", "resourceLock"], "configmap"),
        [("Invalid value", "leaderElection.resourceLock")],
    ),
    (
        "bad-percentage-of-nodes-to-score",
        _set(["percentageOfNodesToScore"], 101),
        [("Invalid value", "percentageOfNodesToScore")],
    ),
    (
        "negative-percentage-of-nodes-to-score",
        _set(["percentageOfNodesToScore"], -1),
        [("Invalid value", "percentageOfNodesToScore")],
    ),
    (
        "scheduler-name-not-set",
        _set(["profiles", 1, "schedulerName"], ""),
        [("Required value", "profiles[1].schedulerName")],
    ),
    (
        "repeated-scheduler-name",
        _set(["profiles", 0, "schedulerName"], "other"),
        [("Duplicate value", "profiles[1].schedulerName")],
    ),
    (
        "greater-than-100-profile-percentage-of-nodes-to-score",
        _set(["profiles", 1, "percentageOfNodesToScore"], 101),
        [("Invalid value", "profiles[1].percentageOfNodesToScore")],
    ),
    (
        "negative-profile-percentage-of-nodes-to-score",
        _set(["profiles", 1, "percentageOfNodesToScore"], -1),
        [("Invalid value", "profiles[1].percentageOfNodesToScore")],
    ),
    (
        "different-queue-sort",
        _set(["profiles", 1, "plugins", "queueSort", "enabled", 0, "name"], "AnotherSort"),
        [("Invalid value", "profiles[1].plugins.queueSort")],
    ),
    (
        "one-empty-queue-sort",
        _set(["profiles", 0, "plugins"], None),
        [("Invalid value", "profiles[1].plugins.queueSort")],
    ),
    ("extender-negative-weight", _set(["extenders", 0, "weight"], -1), [("Invalid value", "extenders[0].weight")]),
    (
        "extender-duplicate-managed-resources",
        _set(["extenders", 0, "managedResources"], [{"name": "example.com/foo"}, {"name": "example.com/foo"}]),
        [("Invalid value", "extenders[0].managedResources[1].name")],
    ),
    ("extender-duplicate-bind", _duplicate_bind, [("Invalid value", "extenders")]),
    (
        "invalid-node-percentage",
        _set(
            ["profiles", 0, "pluginConfig"],
            [
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100},
                }
            ],
        ),
        [("Invalid value", "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage")],
    ),
    (
        "invalid-plugin-args",
        _set(
            ["profiles", 0, "pluginConfig"], [{"name": "DefaultPreemption", "args": {"kind": "InterPodAffinityArgs"}}]
        ),
        [
            (
                "profiles[0].pluginConfig[0].args: args for plugin DefaultPreemption were not of type "
                "DefaultPreemptionArgs.kubescheduler.config.k8s.io, "
                "got InterPodAffinityArgs.kubescheduler.config.k8s.io",
                "",
            )
        ],
    ),
    (
        "duplicated-plugin-config",
        _set(["profiles", 0, "pluginConfig"], [{"name": "config"}, {"name": "config"}]),
        [("Duplicate value", "profiles[0].pluginConfig[1]")],
    ),
    (
        "mismatch-queue-sort",
        _set(["profiles"], MISMATCH_QUEUE_SORT),
        [("Invalid value", "profiles[1].plugins.queueSort")],
    ),
    ("valid-plugins", _valid_plugins, []),
]


@pytest.mark.parametrize(("fn", "want"), [pytest.param(*s[1:], id=s[0]) for s in SCENARIOS])
def test_validate_kube_scheduler_configuration_v1(fn: Callable[[dict[str, Any]], None], want: list[Any]) -> None:
    doc = mutate(fn)
    if not want:
        load_config(doc)
        return
    with pytest.raises(ConfigError) as exc:
        load_config(doc)
    assert kinds(exc.value.errors) == want


@pytest.mark.parametrize(
    "case",
    ["bad-resource-name-not-set", "bad-resource-namespace-not-set"],
)
def test_validate_leader_election_names_are_defaulted(case: str) -> None:
    # Upstream validates the internal type, where these can be empty; a v1 document's empty
    # resourceName/resourceNamespace is defaulted first, so the same input is accepted here.
    key = "resourceName" if case == "bad-resource-name-not-set" else "resourceNamespace"
    cfg = load_config(mutate(_set(["leaderElection", key], "")))
    assert cfg.raw["leaderElection"][key] in ("kube-scheduler", "kube-system")


def test_messages_use_upstream_wording() -> None:
    doc = mutate(_set(["parallelism"], 0))
    doc["profiles"][1]["percentageOfNodesToScore"] = 101
    with pytest.raises(ConfigError) as exc:
        load_config(doc)
    assert exc.value.errors == [
        "profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
    ]


def test_removed_plugins_are_rejected() -> None:
    doc = {
        **V1,
        "profiles": [
            {"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}, "pluginConfig": [{"name": "GCEPDLimits"}]}
        ],
    }
    with pytest.raises(ConfigError) as exc:
        load_config(doc)
    version = '"kubescheduler.config.k8s.io/v1"'
    assert exc.value.errors == [
        f'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version {version} '
        f"(KubeSchedulerConfiguration is version {version})",
        f'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version {version} '
        f"(KubeSchedulerConfiguration is version {version})",
    ]


def test_more_than_one_queue_sort_in_first_profile() -> None:
    doc = {**V1, "profiles": [{"plugins": {"queueSort": {"enabled": [{"name": "A"}, {"name": "B"}]}}}]}
    with pytest.raises(ConfigError) as exc:
        load_config(doc)
    assert exc.value.errors == [
        "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"
    ]


def test_invalid_file_reports_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 0
unknownTopLevel: true
podInitialBackoffSeconds: 5
podMaxBackoffSeconds: 2
profiles:
- schedulerName: a
  plugins:
    score:
      enabled:
      - name: EBSLimits
        weight: three
    filtr: {}
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Fancy
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 200
- schedulerName: a
"""
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    errors = exc.value.errors
    expected = [
        'strict decoding error: unknown field "unknownTopLevel"',
        'profiles[0].plugins.score.enabled[0].weight: Invalid value: "three": expected an int32',
        'strict decoding error: unknown field "profiles[0].plugins.filtr"',
        'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Fancy": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: 200: not in valid range [0, 100]",
        'profiles[0].plugins.score.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        'profiles[1].schedulerName: Duplicate value: "a"',
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
    ]
    assert sorted(errors) == sorted(expected)
    # The message names the file first (errors stay the field problems alone).
    assert exc.value.file == str(path)
    assert str(exc.value) == f"{path}: " + "; ".join(errors)


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nprofiles:\n  - schedulerName: [oops\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(path) in str(exc.value)
    assert f"{path}:4:" in str(exc.value) or f"{path}:3:" in str(exc.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("doc", "want"),
    [
        pytest.param(
            {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
            'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: '
            '"kubescheduler.config.k8s.io/v1"',
            id="old apiVersion",
        ),
        pytest.param(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "Policy"},
            'kind: Unsupported value: "Policy": supported values: "KubeSchedulerConfiguration"',
            id="wrong kind",
        ),
        pytest.param(
            {"kind": "KubeSchedulerConfiguration"},
            'apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"',
            id="no apiVersion",
        ),
        pytest.param(
            {**V1, "profiles": [{"schedulerName": "x", "plugin": {}}]},
            'strict decoding error: unknown field "profiles[0].plugin"',
            id="unknown profile field",
        ),
        pytest.param(
            {**V1, "leaderElection": {"leaseDuration": "soon"}},
            'leaderElection.leaseDuration: Invalid value: "soon": time: invalid duration "soon"',
            id="bad duration",
        ),
        pytest.param(
            {**V1, "leaderElection": {"leaseDuration": "5s"}},
            'leaderElection.leaseDuration: Invalid value: "10s": LeaseDuration must be greater than RenewDeadline',
            id="lease shorter than renew deadline",
        ),
        pytest.param(
            {**V1, "clientConnection": {"burst": -1}},
            "clientConnection.burst: Invalid value: -1: must be non-negative",
            id="negative burst",
        ),
        pytest.param(
            {**V1, "extenders": [{"managedResources": [{"name": "cpu"}]}]},
            'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name',
            id="extender manages a native resource",
        ),
    ],
)
def test_document_errors(doc: dict[str, Any], want: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(doc)
    assert want in exc.value.errors


def test_nothing_half_applied() -> None:
    doc = mutate(_set(["parallelism"], 0))
    original = copy.deepcopy(doc)
    with pytest.raises(ConfigError):
        load_config(doc)
    assert doc == original
