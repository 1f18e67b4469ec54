"""The ImageLocality plugin (upstream pkg/scheduler/framework/plugins/imagelocality)."""

from plugins_intree.imagelocality.plugin import ImageLocality, calculate_priority, normalized_image_name

__all__ = ["ImageLocality", "calculate_priority", "normalized_image_name"]
