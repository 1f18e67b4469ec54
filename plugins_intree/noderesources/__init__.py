"""The NodeResourcesFit and NodeResourcesBalancedAllocation plugins and their scoring strategies."""

from __future__ import annotations

from plugins_intree.noderesources.balanced_allocation import BalancedAllocation
from plugins_intree.noderesources.fit import Fit, InsufficientResource, compute_pod_resource_request, fits, fits_request

__all__ = [
    "BalancedAllocation",
    "Fit",
    "InsufficientResource",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
]
