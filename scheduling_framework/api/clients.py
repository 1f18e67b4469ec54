"""Objects from the Python Kubernetes clients, read as the manifests the rest of the package takes.

Accepted: plain mappings (a manifest dict), models of the official ``kubernetes`` client (``V1Pod``,
``V1NodeList``, ...), lightkube models and resources, kr8s objects, and this package's own Pod, Node and
KubeObject. A client object is recognised by the module its class comes from and the attributes that client
gives its models, so no client is ever imported here: a user of one client does not pay for the others.

The official client's models hold snake_case attributes (``node_selector``) and Python values (datetimes);
their wire names come from each model's ``attribute_map``, as the client's own
``ApiClient().sanitize_for_serialization`` does. Their ``to_dict()`` keeps the snake_case names, which the
API does not know: reading such a dict reports every field as unknown (see ``api.fields``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from scheduling_framework.errors import ManifestError

#: What the entry points that take objects accept, for error messages.
ACCEPTED = ("a mapping (a manifest dict), an official kubernetes client model (V1Pod, ...), a lightkube object, "
            "a kr8s object or a scheduling_framework object")

# V1Pod, V1beta2ResourceClaim, ResourceV1ResourceClaim, CoreV1EndpointPort -> the kind after the version
_CLIENT_CLASS = re.compile(r"^(?:[A-Z][a-z]+)?(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$")
# Kinds whose apiVersion decides how their fields read: a client model names its version in its class.
_VERSIONED_GROUPS = {"ResourceClaim": "resource.k8s.io", "ResourceClaimTemplate": "resource.k8s.io",
                     "ResourceSlice": "resource.k8s.io", "DeviceClass": "resource.k8s.io"}


class UnsupportedObjectError(ManifestError, TypeError):
    """An object of a type no entry point reads: the message names the accepted types."""

    def __init__(self, what: str, value: Any) -> None:
        t = type(value)
        got = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        super().__init__(what, f"expected {ACCEPTED}; got {got}")


def client_of(obj: Any) -> str:
    """``"kubernetes"``, ``"lightkube"``, ``"kr8s"`` or ``""``: the client an object comes from (by its class's
    module and the attributes that client's objects have)."""
    root = (type(obj).__module__ or "").partition(".")[0]
    if root == "kubernetes" and hasattr(obj, "openapi_types") and hasattr(obj, "attribute_map"):
        return "kubernetes"
    if root == "lightkube" and callable(getattr(obj, "to_dict", None)):
        return "lightkube"
    if root == "kr8s" and hasattr(obj, "raw"):
        return "kr8s"
    return ""


def is_client_object(obj: Any) -> bool:
    return bool(client_of(obj))


def as_manifest(obj: Any, what: str = "object") -> Mapping[str, Any]:
    """The manifest of ``obj`` (a mapping is returned as it is); UnsupportedObjectError (a TypeError) for any
    other type, naming ``what`` (e.g. ``"Pod"``) and the accepted types."""
    if isinstance(obj, Mapping):
        return obj
    client = client_of(obj)
    if client == "kubernetes":
        d = _from_openapi_model(obj)
        m = _CLIENT_CLASS.match(type(obj).__name__)
        if m is not None:
            # list calls leave kind and apiVersion unset on their items, and locally built models have none
            kind = str(d.setdefault("kind", m.group(2)))
            group = _VERSIONED_GROUPS.get(kind)
            if group is not None:
                d.setdefault("apiVersion", f"{group}/{m.group(1).lower()}")
        return d
    if client == "lightkube":
        d = obj.to_dict()
        if isinstance(d, dict):
            return d
    if client == "kr8s":
        raw = obj.raw
        if isinstance(raw, Mapping):
            plain = _plain(raw)
            if isinstance(plain, dict):
                return plain
    raw_manifest = getattr(obj, "raw_manifest", None)  # Pod, Node
    if callable(raw_manifest) and type(obj).__module__.startswith("scheduling_framework."):
        m = raw_manifest()
        if isinstance(m, Mapping):
            return m
    raw = getattr(obj, "raw", None)  # KubeObject
    if isinstance(raw, Mapping) and type(obj).__module__.startswith("scheduling_framework."):
        return raw
    raise UnsupportedObjectError(what, obj)


def _from_openapi_model(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = obj.attribute_map
    for attr in obj.openapi_types:
        v = getattr(obj, attr, None)
        if v is not None:
            out[names.get(attr, attr)] = _wire(v)
    return out


def _wire(v: Any) -> Any:
    if isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, list | tuple):
        return [_wire(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _wire(x) for k, x in v.items()}
    if isinstance(v, datetime):
        return rfc3339(v)
    if isinstance(v, date):
        return v.isoformat()
    if hasattr(v, "openapi_types") and hasattr(v, "attribute_map"):
        return _from_openapi_model(v)
    return v


def rfc3339(t: datetime) -> str:
    """RFC 3339 as the API server writes it (``2024-01-02T03:04:05Z``; fractions kept when present)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)  # the client parses the API's times as aware; naive ones are UTC
    s = t.astimezone(UTC).isoformat()
    return s[:-6] + "Z" if s.endswith("+00:00") else s


def _plain(v: Any) -> Any:
    """Plain dicts and lists (kr8s keeps its objects in Box, a dict subclass the packed manifests cannot hold)."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


__all__ = ["ACCEPTED", "UnsupportedObjectError", "as_manifest", "client_of", "is_client_object", "rfc3339"]
