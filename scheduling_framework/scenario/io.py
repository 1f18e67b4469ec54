"""Reading scenario, sweep, cluster and config files named by a scenario (one place, safe loading only).

A scenario's ``cluster:`` file is read the way ``schedule --cluster`` reads one (:func:`load_cluster`: streamed
item by item into compact objects) and kept parsed in a small per-process cache keyed by the file's path, size,
modification time and strictness: validating a scenario, replaying it, and every scenario of a sweep that a
worker process runs parse it once (:func:`load_cluster_file`).
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import io
import os
from collections.abc import Mapping
from typing import Any

import attrs

from scheduling_framework.errors import InputError, SchedulingFrameworkError
from scheduling_framework.ingest.cluster import cluster_from_source, load_cluster
from scheduling_framework.ingest.model import Cluster
from scheduling_framework.ingest.untrusted import (
    DEFAULT_MAX_INPUT_BYTES,
    load_yaml_documents,
    open_regular_file,
    read_input,
    regular_file_size,
)
from scheduling_framework.warning_list import Warnings


@attrs.frozen
class ClusterFile:
    """A scenario's starting cluster given as a file: its absolute path and the size and modification time it
    had when the scenario was read (the parsed cluster is cached per process under these). ``data`` holds the
    file's bytes (gzip-compressed) when the scenario travels to a machine that may not have the file (Ray)."""

    path: str
    size: int
    mtime_ns: int
    data: bytes | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.path, self.size, self.mtime_ns)


#: Parsed cluster files kept per process (the most recently used ones; each may hold a big dump's objects).
MAX_CACHED_FILES = 2
#: The largest cluster file a scenario reads (that of every file a scenario names).
MAX_CLUSTER_FILE_BYTES = DEFAULT_MAX_INPUT_BYTES

_WHAT = "cluster file"
# (path, size, mtime_ns) -> {strict: the parsed Cluster (shared: never handed out) or the error reading gave}
_cache: collections.OrderedDict[tuple[str, int, int], dict[bool, Cluster | SchedulingFrameworkError]] = \
    collections.OrderedDict()


def _read_text(path: str, what: str) -> str:
    # The hardened reader: regular files only, size cap, encodings, then nesting/alias checks on loading.
    return read_input(path, what=f"{what} file")


def read_yaml_documents(path: str, what: str) -> list[Any]:
    """Every document of a YAML file, ``kind: List`` documents flattened into their items."""
    docs = load_yaml_documents(_read_text(path, what), path)
    out: list[Any] = []
    for d in docs:
        if isinstance(d, Mapping) and str(d.get("kind", "")).endswith("List") and isinstance(d.get("items"), list):
            out.extend(d["items"])
        else:
            out.append(d)
    return out


def read_yaml_mapping(path: str, what: str) -> Mapping[str, Any]:
    """A YAML file holding exactly one mapping (a scenario, a sweep, a configuration)."""
    docs = load_yaml_documents(_read_text(path, what), path)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise SchedulingFrameworkError(f"{path}: expected one YAML mapping ({what}), found {len(docs)} document(s)")
    return docs[0]


# --- cluster files ---------------------------------------------------------------------------------------


def _stat(path: str) -> tuple[int, int]:
    size = regular_file_size(path, _WHAT)  # InputError naming the file: missing, a directory, a FIFO...
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(path, f"cannot read {_WHAT} {path}: {e.strerror or e}") from None
    return size, st.st_mtime_ns


def cluster_file(path: str) -> ClusterFile:
    """A reference to the cluster file ``path`` as it is now (InputError naming it when it cannot be read)."""
    full = os.path.abspath(path)
    size, mtime_ns = _stat(full)
    return ClusterFile(full, size, mtime_ns)


def _check_unchanged(ref: ClusterFile) -> None:
    size, mtime_ns = _stat(ref.path)
    if (size, mtime_ns) != (ref.size, ref.mtime_ns):
        raise InputError(ref.path, f"{_WHAT} {ref.path} changed after the scenario was read (it was {ref.size} "
                                   f"bytes, it is {size} bytes{'' if size != ref.size else ', modified since'}); "
                                   "read the scenario again")


def _empty(e: InputError, ref: ClusterFile) -> bool:
    # A scenario's cluster may be empty (its steps create the nodes), unlike ``schedule --cluster``'s.
    return str(e).startswith(f"{ref.path}: no objects found")


def _parse(ref: ClusterFile, strict: bool) -> Cluster:
    try:
        if ref.data is not None:  # shipped with the scenario (the file may not exist on this machine)
            from scheduling_framework.ingest.source import Source

            data = ref.data
            with Source(ref.path, _WHAT, MAX_CLUSTER_FILE_BYTES, lambda: io.BytesIO(data), len(data)) as src:
                return cluster_from_source(src, strict=strict)
        _check_unchanged(ref)
        c = load_cluster(ref.path, max_input_bytes=MAX_CLUSTER_FILE_BYTES, strict=strict)
        _check_unchanged(ref)  # not rewritten while it was read
        return c
    except InputError as e:
        if _empty(e, ref):
            return Cluster()
        raise


def _shared(ref: ClusterFile, strict: bool) -> Cluster:
    """The parsed cluster of ``ref`` (cached; callers must not change it)."""
    entry = _cache.get(ref.key)
    if entry is not None:
        _cache.move_to_end(ref.key)
        hit = entry.get(strict)
        if hit is None and not strict and isinstance(entry.get(True), Cluster):
            # A strict parse that succeeded met no unknown field: the lenient parse would give the same cluster.
            hit = entry[True]
        if isinstance(hit, Cluster):
            return hit
        if hit is not None:
            raise hit
    try:
        result: Cluster | SchedulingFrameworkError = _parse(ref, strict)
    except SchedulingFrameworkError as e:
        if ref.data is None and not _unchanged(ref):
            raise  # the file changed: nothing to remember about the content read
        e.__traceback__ = e.__context__ = e.__cause__ = None  # keep the message, not the frames
        result = e
    _cache.setdefault(ref.key, {})[strict] = result
    _cache.move_to_end(ref.key)
    while len(_cache) > MAX_CACHED_FILES:
        _cache.popitem(last=False)
    if isinstance(result, Cluster):
        return result
    raise result


def _unchanged(ref: ClusterFile) -> bool:
    try:
        _check_unchanged(ref)
    except InputError:
        return False
    return True


def load_cluster_file(ref: ClusterFile, strict: bool = False) -> Cluster:
    """The cluster of the file ``ref``, parsed once per process (per file version and strictness): a new
    Cluster whose lists and warnings the caller may change (the objects themselves are immutable and shared).

    Raises what :func:`~scheduling_framework.ingest.cluster.load_cluster` raises (InputError naming the file,
    ManifestValidationError listing every invalid object), and InputError when the file changed after ``ref``
    was taken (the scenario holds the file as it was read). An empty file is an empty cluster.
    """
    c = _shared(ref, strict)
    warnings = Warnings()
    warnings.extend(c.warnings)
    return Cluster(list(c.nodes), list(c.pods), list(c.objects), warnings)


def cluster_problem(path: str, e: Exception) -> str:
    """A scenario problem (``cluster: ...``) for an error reading the cluster file ``path``, naming the file."""
    msg = str(e)
    return f"cluster: {msg}" if path in msg else f"cluster: {path}: {msg}"


def _file_bytes(ref: ClusterFile) -> bytes:
    _check_unchanged(ref)
    with open_regular_file(ref.path, _WHAT) as f:
        data = f.read(MAX_CLUSTER_FILE_BYTES + 1)
    if len(data) != ref.size:
        raise InputError(ref.path, f"{_WHAT} {ref.path} changed after the scenario was read; read it again")
    return data


def cluster_file_digest(ref: ClusterFile) -> str:
    """SHA-256 of the file's bytes (what a sweep's scenario ids hash for a cluster given as a file); read from
    the file, which must be as ``ref`` was taken."""
    h = hashlib.sha256()
    _check_unchanged(ref)
    with open_regular_file(ref.path, _WHAT) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    _check_unchanged(ref)
    return h.hexdigest()


def with_data(ref: ClusterFile) -> ClusterFile:
    """``ref`` carrying the file's bytes (gzip-compressed unless they are already), for a process on another
    machine: it parses them instead of the file (once per process, as the file)."""
    if ref.data is not None:
        return ref
    data = _file_bytes(ref)
    if data[:2] != b"\x1f\x8b":
        data = gzip.compress(data, compresslevel=1, mtime=0)
    return attrs.evolve(ref, data=data)


def clear_cluster_cache() -> None:
    """Forget every parsed cluster file of this process."""
    _cache.clear()
