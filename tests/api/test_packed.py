"""Packed manifests (api/packed.py): what a packed pod's copies read equals what the plain manifests give."""

from __future__ import annotations

import pytest

from scheduling_framework.api.packed import PackedManifest
from scheduling_framework.api.pod import Pod

MANIFEST = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Pending"}}


def _packed_pod(manifest: dict[str, object]) -> Pod:
    pod = Pod.from_dict(manifest)
    return Pod(pod.metadata, pod.spec, pod.status, PackedManifest.pack(manifest))


@pytest.mark.parametrize("manifest", [MANIFEST, {**MANIFEST, "spec": {**MANIFEST["spec"], "nodeName": "old"}}],  # type: ignore[dict-item]
                         ids=["unbound", "bound-elsewhere"])
def test_with_node_name_on_a_packed_pod_equals_the_plain_copy(manifest: dict[str, object]) -> None:
    plain = Pod.from_dict(manifest).with_node_name("n1")
    packed = _packed_pod(manifest).with_node_name("n1")
    assert packed.to_dict() == plain.to_dict()
    assert packed.to_dict()["spec"]["nodeName"] == "n1"
    assert packed.spec.node_name == "n1"
    again = packed.with_node_name("n2")  # a second set replaces the first
    assert again.to_dict()["spec"]["nodeName"] == "n2"
    assert again.to_dict()["spec"]["containers"] == manifest["spec"]["containers"]  # type: ignore[index]


def test_with_field_keeps_the_blob_and_unpacks_fresh_copies() -> None:
    base = PackedManifest.pack(MANIFEST)
    patched = base.with_field("spec", "nodeName", "n1")
    assert base.unpack() == MANIFEST  # the original is unchanged
    first = patched.unpack()
    first["spec"]["nodeName"] = "changed"
    assert patched.unpack()["spec"]["nodeName"] == "n1"
    assert patched == base.with_field("spec", "nodeName", "n1")
    assert patched != base
    assert patched.packed_size == base.packed_size


_FEATURE_SPECS = {
    "none": {},
    "host-users": {"hostUsers": False},
    "host-network": {"hostNetwork": True},
    "bind-mounts": {"containers": [{"name": "c", "image": "i", "volumeMounts": [
        {"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]}]},
    "restart-rules": {"containers": [{"name": "c", "image": "i", "restartPolicyRules": [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}]},
    "bad-mounts": {"containers": [{"name": "c", "image": "i", "volumeMounts": 5}]},
    "bad-host-users": {"hostUsers": "yes"},
}


@pytest.mark.parametrize("name", list(_FEATURE_SPECS))
def test_feature_use_of_a_packed_pod_equals_the_manifest_reading(name: str) -> None:
    """The node-declared-features reading kept when a pod is packed (then also on its bound copy) equals reading
    the manifest, errors included."""
    from scheduling_framework.api.declared_features import pod_feature_use
    from scheduling_framework.errors import ValidationError

    manifest = {**MANIFEST, "spec": {**MANIFEST["spec"], **_FEATURE_SPECS[name]}}  # type: ignore[dict-item]
    plain = Pod.from_dict(manifest)
    packed = plain.with_packed_manifest()
    for pod in (packed, packed.with_node_name("n1")):
        try:
            want = pod_feature_use(plain)
        except ValidationError as e:
            with pytest.raises(ValidationError) as got:
                pod_feature_use(pod)
            assert str(got.value) == str(e)
            continue
        assert pod_feature_use(pod) == want
        assert isinstance(pod.raw_manifest(), PackedManifest)
