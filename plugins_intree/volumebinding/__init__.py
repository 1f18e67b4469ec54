"""The VolumeBinding plugin (upstream pkg/scheduler/framework/plugins/volumebinding).

``storage`` and ``csi_translation`` are shared by the other volume plugins.
"""

from plugins_intree.volumebinding.plugin import VolumeBinding

__all__ = ["VolumeBinding"]
