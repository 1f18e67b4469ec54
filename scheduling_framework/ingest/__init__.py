"""Reading cluster dumps of any size: bounded chunked reading, then one item at a time from JSON or YAML.

The pipeline, in module order: :mod:`.source` (file, standard input or ``.gz``, size-capped, restartable),
:mod:`.jsonstream` / :mod:`.yamlstream` (``(where, item)`` pairs, one List item at a time, with the nesting
and alias checks), then ``cluster.cluster_from_items`` builds each object and drops its dict. Inputs the
streamed readers leave to the whole-document loader (UTF-16/32 text, YAML merge keys, explicit collection
tags) are read again from the start by that loader, with the same checks as before.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
from collections.abc import Iterator
from typing import Any

from scheduling_framework._input import ALIAS_EXPANSION_BUDGET, MAX_NESTING_DEPTH, recheck_nesting
from scheduling_framework.errors import InputError
from scheduling_framework.ingest.jsonstream import JsonItems, NotJson, RereadWhole
from scheduling_framework.ingest.source import Source, Utf8Checked, open_source, text_source
from scheduling_framework.ingest.yamlstream import NestingRefusedByParser, yaml_items

#: Largest cluster dump read by default: a 15,000-node dump with managedFields is ~12 GB of JSON. Cluster
#: dumps are streamed, so memory follows the objects, not this limit.
DEFAULT_MAX_CLUSTER_BYTES = 64 << 30

_UTF8_BOM = codecs.BOM_UTF8


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a dump is turned into objects, as it was before afterwards.

    Loading creates millions of long-lived container objects and no cycles (each item's dicts are freed by
    reference counting); with the collector on, every collection walks all the objects loaded so far,
    which costs 40 % of a big load.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Counter:
    """What the readers saw besides items: how many non-empty documents."""

    __slots__ = ("documents",)

    def __init__(self) -> None:
        self.documents = 0


def sniff(source: Source) -> str:
    """'json', 'yaml' or 'whole' (not UTF-8: the whole-document loader decodes it) from the first bytes."""
    with source.open() as r:
        head = r.read(1 << 16)
    if head.startswith(_UTF8_BOM):
        head = head[len(_UTF8_BOM):]
    elif head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or b"\0" in head[:4]:
        return "whole"
    stripped = head.lstrip(b" \t\r\n")
    if stripped.startswith(b"{") and stripped[1:].lstrip(b" \t\r\n")[:1] in (b'"', b"}"):
        return "json"
    return "yaml"


def stream_items(source: Source, counter: Counter, *, max_depth: int = MAX_NESTING_DEPTH,
                 alias_budget: int = ALIAS_EXPANSION_BUDGET) -> Iterator[tuple[str, Any]]:
    """``(where, item)`` over the source. Raises RereadWhole when the whole-document loader must read it."""
    fmt = sniff(source)
    if fmt == "whole":
        raise RereadWhole("not UTF-8")
    if fmt == "json":
        with source.open() as r:
            reader = JsonItems(r, max_depth)
            try:
                yield from reader
                counter.documents = 1
                return
            except NotJson:
                pass  # not JSON after all (nothing was handed out): YAML flow style, read below
    with source.open() as r:
        docs = [0]
        try:
            yield from yaml_items(Utf8Checked(r), source.name, max_depth, alias_budget, docs)
        except NestingRefusedByParser as e:
            _recheck_nesting(source, e, max_depth, alias_budget)
            raise e.error from None
        counter.documents = docs[0]


def _recheck_nesting(source: Source, e: NestingRefusedByParser, max_depth: int, alias_budget: int) -> None:
    """:func:`~scheduling_framework._input.recheck_nesting` on the source's text up to the refusal."""
    with source.open() as r:
        data = r.read_up_to((e.index + 2) * 4)  # at most 4 bytes a character
    recheck_nesting(data.decode("utf-8", "ignore")[: e.index + 1], source.name, max_depth, alias_budget)


__all__ = ["DEFAULT_MAX_CLUSTER_BYTES", "Counter", "gc_paused", "InputError", "RereadWhole", "Source", "open_source",
           "stream_items", "text_source"]
