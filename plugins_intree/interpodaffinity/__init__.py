"""The InterPodAffinity plugin: required and preferred inter-pod (anti-)affinity."""

from __future__ import annotations

from plugins_intree.interpodaffinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity"]
