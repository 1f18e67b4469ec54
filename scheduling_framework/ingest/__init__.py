"""Reading a cluster: from untrusted bytes to a :class:`~.model.Cluster`, in pipeline order.

1. **read**: :mod:`.untrusted` (files, standard input, encodings, size, YAML nesting and alias expansion checked
   before any loader sees the input), :mod:`.source` (file, standard input or ``.gz``, size-capped, restartable,
   UTF-16/32 transcoded to UTF-8 as it is read);
2. **parse**: :mod:`.jsonstream` / :mod:`.yamlstream` (``(where, item)`` pairs, one List item at a time, with the
   nesting, alias and object-size checks; what they notice besides items goes to :class:`~.notes.Notes`);
3. **objects**: :mod:`.model` (the Cluster: nodes, pods, other objects, warnings);
4. **what the API server and the controllers would do**: :mod:`.admission` (LimitRanger, Priority,
   RuntimeClass, ...), :mod:`.workloads` (Deployments, ReplicaSets, StatefulSets, Jobs, DaemonSets into pods),
   :mod:`.overcommit` (nodes whose bound pods exceed allocatable, named in a warning);
5. **the reader**: :mod:`.cluster` (``load_cluster``: ``cluster_from_items`` builds each object and drops its
   dict), the one module that puts the stages together.

No input is ever held whole: a document whose top-level ``items`` turns out not to be a List's (its kind comes
after them) is read again from the start with that one document built whole, as one object. This package's own
names are the read and parse stages' (``stream_items``, ``gc_paused``, ...); tests/test_structure.py keeps the
order.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
from collections.abc import Iterator
from typing import Any

from scheduling_framework.errors import InputError
from scheduling_framework.ingest.jsonstream import JsonItems, NotJson, RereadWhole
from scheduling_framework.ingest.notes import Notes
from scheduling_framework.ingest.source import Source, Utf8Checked, open_source, text_source
from scheduling_framework.ingest.untrusted import ALIAS_EXPANSION_BUDGET, MAX_NESTING_DEPTH, recheck_nesting
from scheduling_framework.ingest.yamlstream import NestingRefusedByParser, yaml_items

#: Largest cluster dump read by default: a 15,000-node dump with managedFields is ~12 GB of JSON. Cluster
#: dumps are streamed, so memory follows the objects, not this limit.
DEFAULT_MAX_CLUSTER_BYTES = 64 << 30

_UTF8_BOM = codecs.BOM_UTF8
#: The readers' notes (the name ``stream_items`` callers use).
Counter = Notes


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


def sniff(source: Source) -> str:
    """'json' or 'yaml' from the first bytes (as UTF-8: the source transcodes UTF-16/32)."""
    with source.open() as r:
        head = r.read(1 << 16)
    if head.startswith(_UTF8_BOM):
        head = head[len(_UTF8_BOM):]
    stripped = head.lstrip(b" \t\r\n")
    if stripped.startswith(b"{") and stripped[1:].lstrip(b" \t\r\n")[:1] in (b'"', b"}"):
        return "json"
    return "yaml"


def stream_items(source: Source, notes: Notes, *, max_depth: int = MAX_NESTING_DEPTH,
                 alias_budget: int = ALIAS_EXPANSION_BUDGET,
                 whole: frozenset[int] = frozenset()) -> Iterator[tuple[str, Any]]:
    """``(where, item)`` over the source; ``notes`` gets what the readers saw besides items. Raises
    RereadWhole when a document must be built whole: read again with its number added to ``whole``."""
    fmt = sniff(source)
    if fmt == "json":
        with source.open() as r:
            reader = JsonItems(r, max_depth, notes, stream_lists=1 not in whole)
            try:
                yield from reader
                return
            except NotJson:
                pass  # not JSON after all (nothing was handed out, nothing noted): YAML flow style, read below
    with source.open() as r:
        try:
            yield from yaml_items(Utf8Checked(r), source.name, max_depth, alias_budget, notes, whole)
        except NestingRefusedByParser as e:
            _recheck_nesting(source, e, max_depth, alias_budget)
            raise e.error from None


def _recheck_nesting(source: Source, e: NestingRefusedByParser, max_depth: int, alias_budget: int) -> None:
    """:func:`~scheduling_framework.ingest.untrusted.recheck_nesting` on the source's text up to the refusal."""
    with source.open() as r:
        data = r.read_up_to((e.index + 2) * 4)  # at most 4 bytes a character
    recheck_nesting(data.decode("utf-8", "ignore")[: e.index + 1], source.name, max_depth, alias_budget)


__all__ = ["DEFAULT_MAX_CLUSTER_BYTES", "Counter", "gc_paused", "InputError", "Notes", "RereadWhole", "Source",
           "open_source", "stream_items", "text_source"]
