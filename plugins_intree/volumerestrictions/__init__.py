"""The VolumeRestrictions plugin (upstream pkg/scheduler/framework/plugins/volumerestrictions)."""

from plugins_intree.volumerestrictions.plugin import VolumeRestrictions

__all__ = ["VolumeRestrictions"]
