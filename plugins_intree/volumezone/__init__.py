"""The VolumeZone plugin (upstream pkg/scheduler/framework/plugins/volumezone)."""

from plugins_intree.volumezone.plugin import VolumeZone

__all__ = ["VolumeZone"]
