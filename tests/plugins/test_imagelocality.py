"""ImageLocality driven directly over the ported upstream fixture and the shared sample, plus the
normalized-image-name table and the image-volume rule."""

from __future__ import annotations

import hashlib
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

from plugins_intree.imagelocality import ImageLocality, calculate_priority, normalized_image_name
from plugins_intree.imagelocality.plugin import MB, pod_images
from scheduling_framework.api import Node, Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.state.snapshot import Snapshot
from tests import yamlio

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
FILES = [FIXTURES / "upstream" / "imagelocality.yaml", FIXTURES / "samples" / "imagelocality.yaml"]


class Handle:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot


def _cases() -> Iterator[Any]:
    for path in FILES:
        doc = yamlio.load(path.read_text())
        assert doc["plugin"] == "ImageLocality"
        for case in doc["cases"]:
            yield pytest.param(case, id=f"{path.parent.name}/{case['name']}")


@pytest.mark.parametrize("case", list(_cases()))
def test_fixture_case(case: dict[str, Any]) -> None:
    assert case["points"] == ["score"]
    snapshot = Snapshot.from_objects([Node.from_dict(n) for n in case["nodes"]],
                                     [Pod.from_dict(p) for p in case.get("pods") or []])
    plugin = ImageLocality(None, Handle(snapshot))
    pod = Pod.from_dict(case["pod"])
    state = CycleState()
    got = {}
    for ni in snapshot.list():
        score, st = plugin.score(state, pod, ni)
        assert st is None
        got[ni.name] = score
    assert plugin.score_extensions() is None
    assert got == case["expect"]["scores"]


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(("given", "want"), [
    pytest.param("root", "root:latest", id="add :latest postfix 1"),
    pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
    pytest.param("root:tag", "root:tag", id="keep it as is 1"),
    pytest.param("root@" + _digest("root"), "root@" + _digest("root"), id="keep it as is 2"),
])
def test_normalized_image_name(given: str, want: str) -> None:
    assert normalized_image_name(given) == want


def test_calculate_priority_bounds() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(10**12, 1) == 100
    assert calculate_priority(0, 0) == 0  # a pod without images


def test_image_volumes_count_as_images() -> None:
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "gcr.io/app"}],
                                  "volumes": [{"name": "v", "image": {"reference": "gcr.io/model:v1"}},
                                              {"name": "e", "emptyDir": {}}]}})
    assert pod_images(pod) == ("gcr.io/app:latest", "gcr.io/model:v1")
    node = Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                           "status": {"images": [{"names": ["gcr.io/model:v1"], "sizeBytes": 1500 * MB}]}})
    snapshot = Snapshot.from_objects([node])
    score, st = ImageLocality(None, Handle(snapshot)).score(CycleState(), pod, snapshot.get("n"))
    # 1500MB over two images: 100 * (1500 - 23) / (2000 - 23)
    assert st is None and score == 100 * (1500 * MB - 23 * MB) // (2000 * MB - 23 * MB)
