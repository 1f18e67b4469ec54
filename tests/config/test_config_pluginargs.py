"""Plugin args validation: upstream validation_pluginargs_test.go, on args built directly (no defaulting)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scheduling_framework.config import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
    parse_args,
)
from scheduling_framework.errors import ConfigError

_MSG = re.compile(
    r"^(?:(?P<path>\S*?): )?(?P<type>Invalid value|Required value|Duplicate value|Unsupported value|Forbidden)"
)
TYPES = {
    "Invalid": "Invalid value",
    "Required": "Required value",
    "Duplicate": "Duplicate value",
    "NotSupported": "Unsupported value",
    "Forbidden": "Forbidden",
}


def assert_errors(got: list[str], want: list[tuple[str, str]]) -> None:
    """Each message has upstream's error type, and its path ends with upstream's field."""
    assert len(got) == len(want), got
    for msg, (typ, fld) in zip(got, want, strict=True):
        m = _MSG.match(msg)
        assert m is not None, msg
        assert m["type"] == TYPES[typ], msg
        path = m["path"] or ""
        assert path == fld or path.endswith("." + fld), (msg, fld)


def case(name: str, args: Any, *want: tuple[str, str]) -> Any:
    return pytest.param(args, list(want), id=name)


DEFAULT_PREEMPTION = [
    case("valid args (default)", DefaultPreemptionArgs(10, 100)),
    case(
        "negative minCandidateNodesPercentage",
        DefaultPreemptionArgs(-1, 100),
        ("Invalid", "minCandidateNodesPercentage"),
    ),
    case(
        "minCandidateNodesPercentage over 100",
        DefaultPreemptionArgs(900, 100),
        ("Invalid", "minCandidateNodesPercentage"),
    ),
    case("negative minCandidateNodesAbsolute", DefaultPreemptionArgs(20, -1), ("Invalid", "minCandidateNodesAbsolute")),
    case(
        "all zero",
        DefaultPreemptionArgs(0, 0),
        ("Invalid", "minCandidateNodesPercentage"),
        ("Invalid", "minCandidateNodesAbsolute"),
    ),
    case(
        "both negative",
        DefaultPreemptionArgs(-1, -1),
        ("Invalid", "minCandidateNodesPercentage"),
        ("Invalid", "minCandidateNodesAbsolute"),
    ),
]

INTER_POD_AFFINITY = [
    case("valid args", InterPodAffinityArgs(10)),
    case("hardPodAffinityWeight less than min", InterPodAffinityArgs(-1), ("Invalid", "hardPodAffinityWeight")),
    case("hardPodAffinityWeight more than max", InterPodAffinityArgs(101), ("Invalid", "hardPodAffinityWeight")),
]


def tsc(max_skew: int, key: str, when: str, **extra: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}


POD_TOPOLOGY_SPREAD = [
    case(
        "valid config",
        PodTopologySpreadArgs((tsc(1, "node", "DoNotSchedule"), tsc(2, "zone", "ScheduleAnyway")), "List"),
    ),
    case(
        "maxSkew less than zero",
        PodTopologySpreadArgs((tsc(-1, "node", "DoNotSchedule"),), "List"),
        ("Invalid", "defaultConstraints[0].maxSkew"),
    ),
    case(
        "empty topology key",
        PodTopologySpreadArgs((tsc(1, "", "DoNotSchedule"),), "List"),
        ("Required", "defaultConstraints[0].topologyKey"),
    ),
    case(
        "whenUnsatisfiable is empty",
        PodTopologySpreadArgs((tsc(1, "node", ""),), "List"),
        ("Required", "defaultConstraints[0].whenUnsatisfiable"),
    ),
    case(
        "whenUnsatisfiable contains unsupported action",
        PodTopologySpreadArgs((tsc(1, "node", "unknown action"),), "List"),
        ("NotSupported", "defaultConstraints[0].whenUnsatisfiable"),
    ),
    case(
        "duplicated constraints",
        PodTopologySpreadArgs((tsc(1, "node", "DoNotSchedule"), tsc(2, "node", "DoNotSchedule")), "List"),
        ("Duplicate", "defaultConstraints[1]"),
    ),
    case(
        "label selector present",
        PodTopologySpreadArgs((tsc(1, "key", "DoNotSchedule", labelSelector={"matchLabels": {"a": "b"}}),), "List"),
        ("Forbidden", "defaultConstraints[0].labelSelector"),
    ),
    case("list default constraints, no constraints", PodTopologySpreadArgs((), "List")),
    case("system default constraints", PodTopologySpreadArgs((), "System")),
    case("wrong constraints", PodTopologySpreadArgs((), "unknown"), ("NotSupported", "defaultingType")),
    case(
        "system default constraints, but has constraints",
        PodTopologySpreadArgs((tsc(1, "key", "DoNotSchedule"),), "System"),
        ("Invalid", "defaultingType"),
    ),
]

BALANCED_ALLOCATION = [
    case("valid config", NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("memory", 1)))),
    case(
        "invalid config",
        NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 2), ResourceSpec("memory", 1))),
        ("Invalid", "resources[0].weight"),
    ),
    case(
        "repeated resources",
        NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("cpu", 1))),
        ("Duplicate", "resources[1].name"),
    ),
]

NODE_AFFINITY = [
    case("empty", NodeAffinityArgs()),
    case(
        "valid added affinity",
        NodeAffinityArgs(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]
                        },
                    }
                ],
            }
        ),
    ),
    case(
        "invalid added affinity",
        NodeAffinityArgs(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}
                            ]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]
                        },
                    }
                ],
            }
        ),
        (
            "Invalid",
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key",
        ),
        ("Invalid", "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values"),
    ),
]

VOLUME_BINDING = [
    case("zero is a valid config", VolumeBindingArgs(0)),
    case("positive value is valid config", VolumeBindingArgs(10)),
    case("negative value is invalid config ", VolumeBindingArgs(-10), ("Invalid", "bindTimeoutSeconds")),
    case("[StorageCapacityScoring=on] shape should not be empty", VolumeBindingArgs(10, ()), ("Required", "shape")),
    case(
        "[StorageCapacityScoring=on] shape points must be sorted in increasing order",
        VolumeBindingArgs(10, (UtilizationShapePoint(3, 3), UtilizationShapePoint(1, 1))),
        ("Invalid", "shape[1].utilization"),
    ),
    case(
        "[StorageCapacityScoring=on] shape point: invalid utilization and score",
        VolumeBindingArgs(
            10,
            (
                UtilizationShapePoint(-1, 1),
                UtilizationShapePoint(10, -1),
                UtilizationShapePoint(20, 11),
                UtilizationShapePoint(101, 1),
            ),
        ),
        ("Invalid", "shape[0].utilization"),
        ("Invalid", "shape[1].score"),
        ("Invalid", "shape[2].score"),
        ("Invalid", "shape[3].utilization"),
    ),
]


@pytest.mark.parametrize(
    ("args", "want"),
    DEFAULT_PREEMPTION
    + INTER_POD_AFFINITY
    + POD_TOPOLOGY_SPREAD
    + BALANCED_ALLOCATION
    + NODE_AFFINITY
    + VOLUME_BINDING,
)
def test_validate_args(args: Any, want: list[tuple[str, str]]) -> None:
    assert_errors(args.validate(), want)


@pytest.mark.skip(reason="[StorageCapacityScoring=off] cases: the feature gate is fixed on (its v1.37 default)")
def test_validate_volume_binding_feature_off() -> None:
    pass


DEFAULT_STRATEGY = ScoringStrategy("LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1)))

FIT_ARGS = [
    pytest.param(
        NodeResourcesFitArgs(("longvalue" + "a" * 64,), (), DEFAULT_STRATEGY),
        "name part must be no more than 63 characters",
        id="IgnoredResources: too long value",
    ),
    pytest.param(
        NodeResourcesFitArgs(("example.com/",), (), DEFAULT_STRATEGY),
        "name part must be non-empty",
        id="IgnoredResources: name is empty",
    ),
    pytest.param(
        NodeResourcesFitArgs(("example.com/aaa/bbb",), (), DEFAULT_STRATEGY),
        "a qualified name must consist of alphanumeric characters",
        id="IgnoredResources: name has too many slash",
    ),
    pytest.param(NodeResourcesFitArgs(("example.com",), (), DEFAULT_STRATEGY), "", id="IgnoredResources: valid args"),
    pytest.param(
        NodeResourcesFitArgs((), ("example.com",), DEFAULT_STRATEGY), "", id="IgnoredResourceGroups: valid args "
    ),
    pytest.param(
        NodeResourcesFitArgs((), ("example.com/",), DEFAULT_STRATEGY),
        "name part must be non-empty",
        id="IgnoredResourceGroups: illegal args",
    ),
    pytest.param(
        NodeResourcesFitArgs((), ("a" * 64,), DEFAULT_STRATEGY),
        "name part must be no more than 63 characters",
        id="IgnoredResourceGroups: name is too long",
    ),
    pytest.param(
        NodeResourcesFitArgs((), ("example.com/aa",), DEFAULT_STRATEGY),
        "resource group name can't contain '/'",
        id="IgnoredResourceGroups: name cannot be contain slash",
    ),
    pytest.param(
        NodeResourcesFitArgs((), (), None), "ScoringStrategy field is required", id="ScoringStrategy: field is required"
    ),
]


@pytest.mark.parametrize(("args", "expect"), FIT_ARGS)
def test_validate_fit_args(args: NodeResourcesFitArgs, expect: str) -> None:
    errors = args.validate()
    if expect:
        assert any(expect in e for e in errors), errors
    else:
        assert errors == []


WEIGHT_CASES = [
    ("default config", None, []),
    ("multi valid resources", (ResourceSpec("cpu", 1), ResourceSpec("memory", 10)), []),
    ("weight less than min", (ResourceSpec("cpu", 0),), [("Invalid", "resources[0].weight")]),
    ("weight greater than max", (ResourceSpec("cpu", 101),), [("Invalid", "resources[0].weight")]),
    (
        "multi invalid resources",
        (ResourceSpec("cpu", 0), ResourceSpec("memory", 101)),
        [("Invalid", "resources[0].weight"), ("Invalid", "resources[1].weight")],
    ),
]


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize(("resources", "want"), [pytest.param(*c[1:], id=c[0]) for c in WEIGHT_CASES])
def test_validate_least_and_most_allocated_scoring_strategy(strategy: str, resources: Any, want: Any) -> None:
    # upstream's "default config" validates an empty resource list, which is valid
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, resources or ()))
    assert_errors(args.validate(), want)


def pts(*points: tuple[int, int]) -> tuple[UtilizationShapePoint, ...]:
    return tuple(UtilizationShapePoint(u, s) for u, s in points)


RTCR_CASES = [
    ("no shapes", None, (), [("Required", "shape")]),
    ("weight greater than max", (ResourceSpec("cpu", 101),), pts((30, 3)), [("Invalid", "resources[0].weight")]),
    ("weight less than min", (ResourceSpec("cpu", 0),), pts((30, 3)), [("Invalid", "resources[0].weight")]),
    ("valid shapes", None, pts((30, 3)), []),
    ("utilization less than min", None, pts((-1, 3)), [("Invalid", "shape[0].utilization")]),
    ("utilization greater than max", None, pts((101, 3)), [("Invalid", "shape[0].utilization")]),
    ("duplicated utilization values", None, pts((10, 3), (10, 3)), [("Invalid", "shape[1].utilization")]),
    ("increasing utilization values", None, pts((10, 3), (20, 3), (30, 3)), []),
    ("non-increasing utilization values", None, pts((10, 3), (20, 3), (15, 3)), [("Invalid", "shape[2].utilization")]),
    ("score less than min", None, pts((10, -1)), [("Invalid", "shape[0].score")]),
    ("score greater than max", None, pts((10, 11)), [("Invalid", "shape[0].score")]),
]


@pytest.mark.parametrize(("resources", "shape", "want"), [pytest.param(*c[1:], id=c[0]) for c in RTCR_CASES])
def test_validate_requested_to_capacity_ratio_scoring_strategy(resources: Any, shape: Any, want: Any) -> None:
    strategy = ScoringStrategy("RequestedToCapacityRatio", resources or (), RequestedToCapacityRatioParam(shape))
    assert_errors(NodeResourcesFitArgs(scoring_strategy=strategy).validate(), want)


def test_requested_to_capacity_ratio_needs_its_parameters() -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("RequestedToCapacityRatio", (ResourceSpec("cpu"),)))
    assert args.validate() == [
        "scoringStrategy.requestedToCapacityRatio: Required value: "
        "must be specified when type is RequestedToCapacityRatio"
    ]
    args = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy("MostAllocated", (ResourceSpec("cpu"),), RequestedToCapacityRatioParam())
    )
    assert args.validate() == [
        "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"
    ]


def test_parse_args_prefixes_paths_and_reports_all() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_args(
            "DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0, "x": 1}, "args"
        )
    assert exc.value.errors == [
        'strict decoding error: unknown field "args.x"',
        "args.minCandidateNodesPercentage: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesAbsolute",
        "args.minCandidateNodesAbsolute: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesPercentage",
    ]
    assert parse_args("OutOfTree", {"a": 1}) == {"a": 1}


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [tsc(1, "node", "unknown action")]},
            'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": supported values: '
            '"DoNotSchedule", "ScheduleAnyway"',
            id="unsupported whenUnsatisfiable wording",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [tsc(1, "node", "DoNotSchedule"), tsc(2, "node", "DoNotSchedule")],
            },
            'defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"',
            id="duplicate constraint wording",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [{**tsc(1, "zone", "DoNotSchedule"), "maxSkw": 2}]},
            'strict decoding error: unknown field "defaultConstraints[0].maxSkw"',
            id="unknown constraint field",
        ),
    ],
)
def test_pod_topology_spread_messages(args: dict[str, Any], want: str) -> None:
    with pytest.raises(ConfigError) as exc:
        PodTopologySpreadArgs.from_dict(args)
    assert want in exc.value.errors


def test_node_affinity_messages() -> None:
    with pytest.raises(ConfigError) as exc:
        NodeAffinityArgs.from_dict(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]},
                            {"matchExpressions": [{"key": "a", "operator": "Near"}]},
                        ]
                    }
                }
            }
        )
    base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    assert exc.value.errors == [
        f'{base}[0].matchExpressions[0].values[0]: Invalid value: "x": '
        "for 'Gt', 'Lt' operators, the value must be an integer",
        f'{base}[1].matchExpressions[0].operator: Unsupported value: "Near": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    ]


def test_to_dict_round_trips() -> None:
    for cls in (
        DefaultPreemptionArgs,
        InterPodAffinityArgs,
        NodeAffinityArgs,
        NodeResourcesBalancedAllocationArgs,
        NodeResourcesFitArgs,
        PodTopologySpreadArgs,
        VolumeBindingArgs,
    ):
        default = cls.from_dict({})
        assert default == cls()
        assert cls.from_dict(default.to_dict()) == default
