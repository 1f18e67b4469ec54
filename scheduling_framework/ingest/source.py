"""Where a cluster dump comes from: a file, standard input or a ``.gz`` of either, read in bounded chunks.

A :class:`Source` hands out byte streams over the input, each of which stops with an InputError past the size
limit (counted on the bytes parsed, i.e. after decompression), and can be opened again from the start: a
streamed parse that meets something it leaves to the full loader starts over. Standard input is spooled
to an unnamed temporary file while it is read so that it can be read again too. Nothing is read ahead of
what the parser asks for, and no buffer of the limit's size is ever allocated.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

from scheduling_framework._input import STDIN, open_regular_file, regular_file_size, too_large, undecodable
from scheduling_framework.errors import InputError

CHUNK = 1 << 20
#: Free space left in the temporary folder when standard input is spooled there.
SPOOL_MARGIN = 1 << 30
GZIP_MAGIC = b"\x1f\x8b"

#: Called with (bytes read so far, total bytes or None) as the input is read.
ProgressFn = Callable[[int, "int | None"], None]


class Source:
    """A readable, restartable input named ``name`` (what error messages call it)."""

    def __init__(self, name: str, what: str, limit: int, opener: Callable[[], BinaryIO], size: int | None,
                 cleanup: Callable[[], None] | None = None) -> None:
        self.name = name
        self.what = what
        self.limit = limit
        self._opener = opener
        self.size = size  # bytes on disk (compressed for .gz), when known
        self._cleanup = cleanup
        self.progress: ProgressFn | None = None

    def open(self) -> CappedReader:
        raw = self._opener()
        head = raw.read(2)
        raw.seek(0)
        compressed = head == GZIP_MAGIC
        stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw  # type: ignore[assignment]
        return CappedReader(stream, raw, self, compressed)

    def read_text(self) -> str:
        """The whole input, decoded (for the full loader's paths); the size limit applies."""
        from scheduling_framework._input import decode_bytes

        with self.open() as r:
            data = r.read_all()
        return decode_bytes(data, self.name, self.what)

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CappedReader:
    """A binary stream over a Source that refuses to go past its limit; ``read(n)`` as file objects do."""

    def __init__(self, stream: BinaryIO, raw: BinaryIO, source: Source, compressed: bool) -> None:
        self._stream = stream
        self._raw = raw
        self.source = source
        self.compressed = compressed
        self.count = 0  # bytes handed out (decompressed)

    def read(self, n: int = CHUNK) -> bytes:
        if n is None or n < 0:
            n = CHUNK
        try:
            data = self._stream.read(min(n, CHUNK * 8))
        except (OSError, EOFError, zlib.error) as e:
            kind = "gzip data" if self.compressed else self.source.what
            raise InputError(self.source.name, f"cannot read {kind} {self.source.name}: {e}") from None
        if data is None:
            data = b""
        self.count += len(data)
        if self.count > self.source.limit:
            raise too_large(self.source.name, self.source.what, self.source.limit)
        if self.source.progress is not None:
            try:
                done = self._raw.tell() if self.compressed else self.count
            except (OSError, ValueError):
                done = self.count
            self.source.progress(done, self.source.size)
        return bytes(data)

    def read_all(self) -> bytes:
        return self.read_up_to(None)

    def read_up_to(self, n: int | None) -> bytes:
        """The next ``n`` bytes (all that is left when None, or when fewer are left), the limit applying."""
        parts: list[bytes] = []
        left = n
        while left is None or left > 0:
            chunk = self.read(CHUNK * 8 if left is None else min(left, CHUNK * 8))
            if not chunk:
                break
            parts.append(chunk)
            if left is not None:
                left -= len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._raw.close()

    def __enter__(self) -> CappedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Utf8Checked:
    """A reader that hands bytes on unchanged after checking they are UTF-8 (our message, with the byte offset,
    instead of the parser's)."""

    def __init__(self, reader: CappedReader) -> None:
        import codecs

        self._reader = reader
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._offset = 0

    def read(self, n: int = CHUNK) -> bytes:
        data = self._reader.read(n)
        try:
            self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            src = self._reader.source
            raise undecodable(src.name, src.what, "utf-8", self._offset + e.start) from None
        self._offset += len(data)
        return data


def open_source(path: str | os.PathLike[str], *, what: str = "input", max_bytes: int,
                stdin: BinaryIO | None = None) -> Source:
    """A Source over ``path`` (a regular file, or ``-`` for standard input, spooled as it is read)."""
    name = os.fspath(path)
    if name == STDIN:
        return _stdin_source(stdin if stdin is not None else sys.stdin.buffer, what, max_bytes)
    size = regular_file_size(name, what)
    if not name.endswith(".gz") and size > max_bytes:
        raise too_large(name, what, max_bytes, size)

    def opener() -> BinaryIO:
        return open_regular_file(name, what)

    return Source(name, what, max_bytes, opener, size)


def _stdin_source(stream: BinaryIO, what: str, limit: int) -> Source:
    """Standard input copied to an unnamed temporary file (bounded by ``limit`` and by the free space of the
    temporary folder less a margin), so it can be read again."""
    spool = tempfile.TemporaryFile(prefix="scheduling-framework-stdin-")  # noqa: SIM115 - lives with the Source
    try:
        room = shutil.disk_usage(tempfile.gettempdir()).free - SPOOL_MARGIN
    except OSError:  # pragma: no cover - the folder was just written to
        room = limit
    total = 0
    try:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise too_large("standard input", what, limit)
            if total > room:
                raise InputError("standard input", f"{what} standard input is more than the {max(room, 0)} bytes "
                                                   f"of free space left to hold it in {tempfile.gettempdir()} "
                                                   f"(save it to a file and pass the file, or set TMPDIR)")
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.flush()
    fd = spool.fileno()

    def opener() -> BinaryIO:
        f: Any = os.fdopen(os.dup(fd), "rb")
        f.seek(0)
        return f  # type: ignore[no-any-return]

    return Source("standard input", what, limit, opener, total, cleanup=spool.close)


def text_source(text: str, name: str, what: str, limit: int) -> Source:
    """A Source over text already in memory (``cluster_from_text``): no copy beyond one UTF-8 encoding."""
    import io

    data = text.encode("utf-8", "surrogatepass")
    return Source(name, what, limit, lambda: io.BytesIO(data), len(data))


__all__ = ["CappedReader", "Source", "Utf8Checked", "open_source", "text_source"]
