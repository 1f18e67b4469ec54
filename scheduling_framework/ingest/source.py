"""Where a cluster dump comes from: a file, standard input or a ``.gz`` of either, read in bounded chunks.

A :class:`Source` hands out byte streams over the input, each of which stops with an InputError past the size
limit (counted on the bytes of the input, i.e. after decompression), and can be opened again from the start:
a streamed parse that finds a document must be read without streaming its items starts over. Standard input
is spooled to an unnamed temporary file while it is read so that it can be read again too. Nothing is read
ahead of what the parser asks for, and no buffer of the limit's size is ever allocated.

The streams always hand out UTF-8: UTF-16 and UTF-32 input (with a byte-order mark, or without one, detected
from the NUL bytes around the first character as the YAML spec says) is transcoded chunk by chunk, so the
readers downstream have one encoding to handle and no input is decoded whole. Input whose first bytes are NUL
but that is not UTF-16/32 is not text (a disk image, a core dump, a gzip bomb of zeros): it is refused after
reading four bytes.
"""

from __future__ import annotations

import codecs
import gzip
import os
import shutil
import sys
import tempfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

from scheduling_framework.errors import InputError
from scheduling_framework.ingest.untrusted import STDIN, open_regular_file, regular_file_size, too_large, undecodable

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
        """A stream of the input as UTF-8 from its start (see the module docstring)."""
        raw = self._opener()
        head = raw.read(2)
        raw.seek(0)
        compressed = head == GZIP_MAGIC
        stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw  # type: ignore[assignment]
        reader = CappedReader(stream, raw, self, compressed)
        try:
            reader.start()
        except BaseException:
            reader.close()
            raise
        return reader

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CappedReader:
    """A binary stream of UTF-8 over a Source that refuses to go past its limit; ``read(n)`` as file objects
    do (``b""`` only at the end of the input). Call :meth:`start` first (``Source.open`` does)."""

    def __init__(self, stream: BinaryIO, raw: BinaryIO, source: Source, compressed: bool) -> None:
        self._stream = stream
        self._raw = raw
        self.source = source
        self.compressed = compressed
        self.count = 0  # bytes of the input read (decompressed)
        self.encoding = "utf-8"  # of the input; what read() hands out is always UTF-8
        self._head = b""  # bytes read by start() and not handed out yet
        self._decoder: codecs.IncrementalDecoder | None = None  # UTF-16/32 input
        self._decoded = 0  # bytes of the input that went through _decoder

    def start(self) -> None:
        """Read the first four bytes: the encoding (byte-order mark, or the YAML spec's NUL pattern) and the
        refusal of input that is not text."""
        head = b""
        while len(head) < 4:
            more = self._read_raw(4 - len(head))
            if not more:
                break
            head += more
        encoding, bom = detect_encoding(head)
        self.encoding = encoding
        if encoding == "utf-8":
            nul = head.find(b"\0")
            if nul >= 0:
                raise not_text(self.source, nul)
            self._head = head
            return
        self._decoder = codecs.getincrementaldecoder(encoding)()
        self._decoded = bom
        self._head = self._transcode(head[bom:], final=False)

    def read(self, n: int = CHUNK) -> bytes:
        if n is None or n < 0:
            n = CHUNK
        if self._head:
            data, self._head = self._head, b""
            return data + self.read(n - len(data)) if len(data) < n else data
        data = self._read_raw(min(n, CHUNK * 8))
        if self._decoder is None:
            return data
        out = self._transcode(data, final=not data)
        while not out and data:  # a chunk that ends inside a character: read on (b"" would mean the end)
            data = self._read_raw(min(n, CHUNK * 8))
            out = self._transcode(data, final=not data)
        return out

    def _transcode(self, data: bytes, final: bool) -> bytes:
        assert self._decoder is not None
        buffered = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(data, final=final)
        except UnicodeDecodeError as e:
            src = self.source
            raise undecodable(src.name, src.what, self.encoding, self._decoded - buffered + e.start) from None
        self._decoded += len(data)
        return text.encode("utf-8")  # strict decoders: no lone surrogate gets this far

    def _read_raw(self, n: int) -> bytes:
        try:
            data = self._stream.read(n)
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
    instead of the parser's); ``chars`` counts the characters handed out, ``ends_with_newline`` says whether
    the input ended with one (both for the truncation hints of the YAML reader)."""

    def __init__(self, reader: CappedReader) -> None:
        self._reader = reader
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._offset = 0
        self.chars = 0
        self.eof = False
        self.ends_with_newline = False

    def read(self, n: int = CHUNK) -> bytes:
        data = self._reader.read(n)
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            if self._reader.encoding != "utf-8":  # pragma: no cover - the transcoder hands out UTF-8
                raise
            src = self._reader.source
            raise undecodable(src.name, src.what, "utf-8", self._offset + e.start) from None
        self._offset += len(data)
        self.chars += len(text)
        if data:
            self.ends_with_newline = data.endswith((b"\n", b"\r"))
        else:
            self.eof = True
        return data


def detect_encoding(head: bytes) -> tuple[str, int]:
    """(encoding, length of its byte-order mark) from the first four bytes: a byte-order mark, or BOM-less
    UTF-16/32 told by where the NUL bytes of the first (ASCII, as YAML and JSON start) character are."""
    from scheduling_framework.ingest.untrusted import BOMS, sniff_encoding

    for bom, enc in BOMS:
        if head.startswith(bom):
            return enc, (0 if enc == "utf-8" else len(bom))  # the readers skip a UTF-8 mark themselves
    return sniff_encoding(head), 0


def not_text(source: Source, offset: int) -> InputError:
    return InputError(source.name, f"{source.what} {source.name} is not text: a NUL byte at offset {offset} "
                                   f"(expected YAML or JSON in UTF-8, UTF-16 or UTF-32)")


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


__all__ = ["CappedReader", "Source", "Utf8Checked", "detect_encoding", "open_source", "text_source"]
