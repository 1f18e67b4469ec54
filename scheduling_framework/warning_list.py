"""The warnings channel: what a run ignored or assumed, for the user to read.

Loading a cluster (``Cluster.warnings``), the reference scheduler (``Scheduler.warnings``) and the
simulator (``Simulator.warnings``) each keep one :class:`Warnings`. The CLI prints their union as the
top-level ``warnings`` list of ``--output json`` (always present, possibly empty) and on stderr for the
table. Anything that adds behaviour the input might not expect adds a warning here rather than logging.

Two kinds of entries:

- ``add(message)``: one message, kept once however often it is added;
- ``add_item(group, item)``: many items under one message (``group: a, b, c``), so that ten thousand pods
  for another scheduler give one line, not ten thousand. The items are listed up to :data:`MAX_ITEMS`,
  then counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

MAX_ITEMS = 10


class Warnings:
    """An ordered, de-duplicated list of warning messages (see the module docstring)."""

    __slots__ = ("_order", "_plain", "_groups")

    def __init__(self, messages: Iterable[str] = ()) -> None:
        # entries in first-seen order: ("m", message) or ("g", group)
        self._order: list[tuple[str, str]] = []
        self._plain: set[str] = set()
        self._groups: dict[str, dict[str, None]] = {}
        for m in messages:
            self.add(m)

    def add(self, message: str) -> None:
        if message not in self._plain:
            self._plain.add(message)
            self._order.append(("m", message))

    def add_item(self, group: str, item: str) -> None:
        items = self._groups.get(group)
        if items is None:
            items = self._groups[group] = {}
            self._order.append(("g", group))
        items[item] = None

    def extend(self, other: Iterable[str] | Warnings) -> None:
        if isinstance(other, Warnings):
            for kind, text in other._order:
                if kind == "m":
                    self.add(text)
                else:
                    for item in other._groups[text]:
                        self.add_item(text, item)
            return
        for m in other:
            self.add(m)

    def items_of(self, group: str) -> list[str]:
        """The items added under ``group`` (empty when none)."""
        return list(self._groups.get(group, ()))

    def to_list(self) -> list[str]:
        out: list[str] = []
        for kind, text in self._order:
            if kind == "m":
                out.append(text)
                continue
            items = list(self._groups[text])
            shown = ", ".join(items[:MAX_ITEMS])
            more = f" and {len(items) - MAX_ITEMS} more ({len(items)} in all)" if len(items) > MAX_ITEMS else ""
            out.append(f"{text}: {shown}{more}")
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_list())

    def __len__(self) -> int:
        return len(self._order)

    def __bool__(self) -> bool:
        return bool(self._order)

    def __contains__(self, message: object) -> bool:
        return message in self.to_list()

    def __repr__(self) -> str:
        return f"Warnings({self.to_list()!r})"


def merged(*sources: Iterable[str] | Warnings) -> list[str]:
    """The messages of several sources, in order, each once."""
    w = Warnings()
    for s in sources:
        w.extend(s)
    return w.to_list()


__all__ = ["MAX_ITEMS", "Warnings", "merged"]
