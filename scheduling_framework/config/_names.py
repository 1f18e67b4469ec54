"""Kept for imports written before the name rules moved to ``scheduling_framework.api.names``."""

from scheduling_framework.api.names import *  # noqa: F403
from scheduling_framework.api.names import is_dns1123_subdomain, is_qualified_name, is_valid_label_value

__all__ = ["is_dns1123_subdomain", "is_qualified_name", "is_valid_label_value"]
