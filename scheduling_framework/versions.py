"""The Kubernetes releases whose scheduler behaviour this library can follow.

Clusters run the release they run: a what-if answer computed with the newest scheduler's rules can be
wrong for a 1.35 cluster (NodeResourcesBalancedAllocation, for one, scores differently there). A run
follows one *supported minor release*; everything that differs between releases (default plugins,
feature-gate defaults, scoring formulas) is looked up from it. The default is the newest release.

Releases are written ``"1.N"``; ``"v1.N"`` and patch versions (``"1.35.4"``, what ``kubectl version``
prints) are accepted and name their minor release.
"""

from __future__ import annotations

import re
from typing import Any, Final

from scheduling_framework.errors import ConfigError

#: the minor releases whose behaviour can be selected, oldest first.
SUPPORTED_RELEASES: Final[tuple[str, ...]] = ("1.34", "1.35", "1.36", "1.37")
#: the release followed when none is chosen (DESIGN.md's reference: the newest upstream).
NEWEST_RELEASE: Final = SUPPORTED_RELEASES[-1]

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_release(value: Any, field: str = "kubernetes version") -> str:
    """The supported minor release ``value`` names, as ``"1.N"``; ConfigError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (str, float)):
        raise ConfigError(f"{field}: expected a version such as \"{NEWEST_RELEASE}\", got {value!r}")
    text = str(value).strip()
    m = _VERSION_RE.match(text)
    if m is None:
        raise ConfigError(f"{field}: invalid version {text!r}: expected MAJOR.MINOR such as \"{NEWEST_RELEASE}\"")
    release = f"{int(m.group(1))}.{int(m.group(2))}"
    if release not in SUPPORTED_RELEASES:
        raise ConfigError(f"{field}: Kubernetes {release} is not supported; supported releases: "
                          f"{', '.join(SUPPORTED_RELEASES)}")
    return release


def release_key(release: str) -> tuple[int, int]:
    """A sortable form of ``"1.N"``."""
    major, minor = release.split(".")
    return int(major), int(minor)


def at_least(release: str, other: str) -> bool:
    """Whether ``release`` is ``other`` or newer."""
    return release_key(release) >= release_key(other)


def release_of(handle: Any) -> str:
    """The release a plugin's framework handle follows (the newest for handles that do not say)."""
    release = getattr(handle, "kubernetes_version", None)
    return release if isinstance(release, str) and release in SUPPORTED_RELEASES else NEWEST_RELEASE


def version_banner(package_version: str) -> str:
    """What ``scheduling-framework --version`` prints."""
    return (f"scheduling-framework {package_version}\n"
            f"Kubernetes releases: {', '.join(SUPPORTED_RELEASES)} (default {NEWEST_RELEASE})")
