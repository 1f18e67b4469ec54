"""ImageLocality: prefers nodes that already hold the pod's images, weighted by image size and by how
widely each image has spread across the cluster (to avoid piling pods onto the few nodes that have it).

Image volumes (``volumes[].image.reference``) follow the release: up to 1.35 they are not images of the pod;
1.36 adds their score to the sum but not to the number of images that sets the top of the scale (so they
can lift a node above an equivalent container image, upstream PR #130231); from 1.37 they count in both
(upstream PR #138951).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduling_framework.api.pod import Pod
from scheduling_framework.cycle_state import CycleState
from scheduling_framework.interfaces import MAX_NODE_SCORE
from scheduling_framework.state.node_info import NodeInfo, image_states_of
from scheduling_framework.state.snapshot import normalized_image_name
from scheduling_framework.status import Code, Status
from scheduling_framework.versions import at_least, release_of

NAME = "ImageLocality"
_POD_IMAGES_KEY = "Score" + NAME + "/images"

MB = 1024 * 1024
#: Bounds of the summed image score: the range most registry images fall into (upstream's thresholds).
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

__all__ = ["ImageLocality", "calculate_priority", "normalized_image_name"]


#: first release whose ImageLocality scores image volumes, and the first that also counts them in the scale
IMAGE_VOLUMES_SCORED_SINCE = "1.36"
IMAGE_VOLUMES_COUNTED_SINCE = "1.37"


def pod_images(pod: Pod, image_volumes: bool = True) -> tuple[str, ...]:
    """Normalized names of every image the pod needs: init containers, containers and (``image_volumes``)
    image volumes."""
    names = [normalized_image_name(c.image) for c in pod.spec.init_containers]
    names.extend(normalized_image_name(c.image) for c in pod.spec.containers)
    if not image_volumes:
        return tuple(names)
    for v in pod.spec.volumes:
        if v.source_kind == "image":
            ref = v.source.get("reference")
            if isinstance(ref, str) and ref:
                names.append(normalized_image_name(ref))
    return tuple(names)


def calculate_priority(sum_scores: int, num_images: int) -> int:
    """Map the summed image score, clamped to [MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD * num_images],
    linearly onto [0, MAX_NODE_SCORE]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_images
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    """Score only (no normalization)."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        release = release_of(handle)
        self.score_image_volumes = at_least(release, IMAGE_VOLUMES_SCORED_SINCE)
        self.count_image_volumes = at_least(release, IMAGE_VOLUMES_COUNTED_SINCE)

    def _images(self, state: CycleState, pod: Pod) -> tuple[tuple[str, ...], int, int]:
        """(images summed, nodes in the snapshot, images setting the top of the scale), once per cycle;
        concurrent first calls compute the same value."""
        cached: tuple[tuple[str, ...], int, int] | None = state.get(_POD_IMAGES_KEY)
        if cached is None:
            images = pod_images(pod, self.score_image_volumes)
            count = len(images)
            if self.score_image_volumes and not self.count_image_volumes:
                count = len(pod.spec.init_containers) + len(pod.spec.containers)
            cached = (images, len(self.handle.snapshot.list()), count)
            state.write(_POD_IMAGES_KEY, cached)
        return cached

    def score_signature(self, state: CycleState, pod: Pod) -> tuple[tuple[str, ...], int, int]:
        """A node's score is a function of the pod's images, the number of nodes in the snapshot, the number
        of images setting the scale and the NodeInfo's image states (replacing them empties its memo), so the
        framework keeps it per NodeInfo (runtime/signatures.py)."""
        return self._images(state, pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        images, total_nodes, num_images = self._images(state, pod)
        if not images:
            return 0, None
        if total_nodes <= 0:
            return 0, Status(Code.ERROR, "no nodes in the snapshot")
        states = node_info.image_states
        if not states:
            # no image on the node: the sum is 0, clamped to the minimum threshold
            return calculate_priority(0, num_images), None
        total = 0
        for name in images:
            st = states.get(name)
            if st is not None:
                # Size scaled by the share of nodes holding the image (float, truncated, as upstream).
                total += int(st.size * (st.num_nodes / total_nodes))
        return calculate_priority(total, num_images), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | None:
        """Score of every node at once, for the framework (None: score them one by one)."""
        images, total_nodes, num_images = self._images(state, pod)
        if not images:
            return [0] * len(nodes)
        if total_nodes <= 0:
            return None
        no_image = calculate_priority(0, num_images)
        out: list[int] = []
        append = out.append
        if len(images) == 1:
            # one image: a node's score is a function of its summary for that image, computed once per summary
            # object (nodes share equal summaries, see snapshot.set_image_states). Equal to the loop below;
            # pinned by tests/test_perf_equivalence.py::test_batch_scores_equal_node_by_node_scores.
            name = images[0]
            by_summary: dict[int, int] = {}
            for states in map(image_states_of, nodes):
                st = states.get(name) if states else None
                if st is None:
                    append(no_image)
                    continue
                sc = by_summary.get(id(st))
                if sc is None:
                    sc = by_summary[id(st)] = calculate_priority(int(st.size * (st.num_nodes / total_nodes)),
                                                                 num_images)
                append(sc)
            return out
        for states in map(image_states_of, nodes):
            if not states:
                append(no_image)
                continue
            total = 0
            for name in images:
                st = states.get(name)
                if st is not None:
                    total += int(st.size * (st.num_nodes / total_nodes))
            append(calculate_priority(total, num_images))
        return out

    def score_extensions(self) -> None:
        return None
