from plugins_intree.defaultbinder.plugin import DefaultBinder

__all__ = ["DefaultBinder"]
