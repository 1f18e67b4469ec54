"""Reading untrusted input safely: files, stdin, encodings, size, YAML nesting and alias expansion.

Every cluster and configuration file goes through here before the YAML loader sees it, because the
loaders themselves are not safe against hostile input: the C loader composes nodes recursively (a
deeply nested document overflows the C stack and kills the process), aliases let a few hundred
bytes stand for billions of nodes, and ``open().read()`` on a FIFO or ``/dev/zero`` never returns.
The checks here cost one pass over the parser's events, which is a few percent of a full run.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO

import yaml

from scheduling_framework.errors import InputError, brief_str

try:  # the C parser is many times faster on big dumps; fall back to the pure-Python one
    YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    YamlLoader = yaml.SafeLoader

#: Largest input read by default (bytes). Real dumps of big clusters are tens of MB; raise it with
#: ``max_input_bytes=`` (API) or ``--max-input-bytes`` (CLI) when needed.
DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
#: Deepest collection nesting accepted. Kubernetes objects nest a few dozen levels at most; the C YAML
#: composer crashes somewhere past 20,000 and several Python walkers give up past a few hundred.
MAX_NESTING_DEPTH = 128
#: Nodes that aliases may add beyond the document's own nodes (or as many as it has, if more): what a
#: YAML file with a few shared anchors needs, far below what an alias bomb expands to.
ALIAS_EXPANSION_BUDGET = 100_000

STDIN = "-"

#: Byte-order marks, longest first (the UTF-32 LE mark starts with the UTF-16 LE one).
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def read_input(path: str | os.PathLike[str], *, what: str = "input",
               max_bytes: int | None = None, stdin: BinaryIO | None = None) -> str:
    """The decoded text of ``path`` (a regular file, or standard input when ``path`` is ``-``).

    Refuses (InputError naming the path) anything that is not a regular file, anything larger than
    ``max_bytes`` and bytes that are not UTF-8 (BOM optional) or BOM-marked UTF-16 / UTF-32.
    """
    name = os.fspath(path)
    limit = DEFAULT_MAX_INPUT_BYTES if max_bytes is None else max_bytes
    if name == STDIN:
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = _read_capped(stream, limit, "standard input", what)
        return decode_bytes(data, "standard input", what)
    size = regular_file_size(name, what)
    if size > limit:
        raise too_large(name, what, limit, size)
    with open_regular_file(name, what) as fh:
        try:
            data = _read_capped(fh, limit, name, what)
        except OSError as e:
            raise InputError(name, f"cannot read {what} {name}: {e.strerror or e}") from None
    return decode_bytes(data, name, what)


def regular_file_size(name: str, what: str) -> int:
    """The size of ``name``; InputError naming it when it cannot be read or is not a regular file (a FIFO,
    a device such as /dev/zero, a directory: reading one never ends or means nothing)."""
    try:
        st = os.stat(name)
    except OSError as e:
        raise InputError(name, f"cannot read {what} {name}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(name, f"cannot read {what} {name}: not a regular file ({file_type_label(st.st_mode)}); "
                               f"pass a file, or '-' to read standard input")
    return st.st_size


def open_regular_file(name: str, what: str) -> BinaryIO:
    """``name`` opened for binary reading, checked again to be a regular file once open."""
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO after the check, open() must not wait for a writer.
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        fh = os.fdopen(fd, "rb")
    except OSError as e:
        raise InputError(name, f"cannot read {what} {name}: {e.strerror or e}") from None
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise InputError(name, f"cannot read {what} {name}: not a regular file")
    return fh


def too_large(name: str, what: str, limit: int, size: int | None = None) -> InputError:
    """The refusal of input over the size limit (``size`` when it is known before reading)."""
    how_big = f"is {size} bytes, more than" if size is not None else "is more than"
    return InputError(name, f"{what} {name} {how_big} the limit of {limit} bytes "
                            f"(raise it with --max-input-bytes / max_input_bytes=)")


def undecodable(name: str, what: str, encoding: str, offset: int) -> InputError:
    """The refusal of bytes that are not text in ``encoding``, at byte ``offset``."""
    return InputError(name, f"cannot decode {what} {name} as {encoding.upper()}: invalid byte at offset {offset} "
                            f"(save the file as UTF-8)")


def _read_capped(stream: BinaryIO, limit: int, name: str, what: str) -> bytes:
    """Read to the end in chunks (never a buffer of the limit's size: the limit may be far above memory)."""
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:  # end of input, or a non-blocking stream with nothing to read yet (None)
            break
        total += len(chunk)
        if total > limit:
            raise too_large(name, what, limit)
        parts.append(bytes(chunk))
    return b"".join(parts)


_CHUNK = 1 << 20


def file_type_label(mode: int) -> str:
    """'a directory', 'a FIFO', ... for a file that is not a regular one."""
    for test, label in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return label
    return "not a regular file"  # pragma: no cover - every POSIX type is listed above


def decode_bytes(data: bytes, name: str = "<input>", what: str = "input") -> str:
    """UTF-8, UTF-16 or UTF-32, with a byte-order mark or detected as the YAML spec says (from the NUL bytes
    around the first character, which YAML requires to be ASCII); InputError naming ``name`` otherwise."""
    encoding = "utf-8"
    for bom, enc in BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom):], enc
            break
    else:
        encoding = sniff_encoding(data[:4])
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise undecodable(name, what, encoding, e.start) from None


def sniff_encoding(head: bytes) -> str:
    """The YAML spec's detection of BOM-less UTF-16/32 from where the NUL bytes of the first ASCII character are."""
    if len(head) == 4:
        if head[:3] == b"\0\0\0" and head[3]:
            return "utf-32-be"
        if head[0] and head[1:] == b"\0\0\0":
            return "utf-32-le"
    if len(head) >= 2:
        if head[0] == 0 and head[1]:
            return "utf-16-be"
        if head[0] and head[1] == 0:
            return "utf-16-le"
    return "utf-8"


def check_size(text: str, name: str, max_bytes: int | None, what: str = "input") -> None:
    """Apply the size limit to text the caller passed directly (counted in characters, not bytes)."""
    limit = DEFAULT_MAX_INPUT_BYTES if max_bytes is None else max_bytes
    if len(text) > limit:
        raise too_large(name, what, limit)


# --------------------------------------------------------------------------- YAML


def yaml_error(e: yaml.YAMLError, source: str) -> InputError:
    mark = getattr(e, "problem_mark", None)
    where = mark_location(mark, source)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return InputError(source, f"invalid YAML at {where}: {brief_str(problem, 300)}")


def check_yaml_structure(text: str, source: str = "<input>", *, max_depth: int = MAX_NESTING_DEPTH,
                         alias_budget: int = ALIAS_EXPANSION_BUDGET) -> None:
    """Refuse nesting deeper than ``max_depth`` and alias expansion beyond the budget, before composing.

    Walks the parser's event stream (the C parser keeps its own stacks, so deep input cannot crash it)
    and keeps, per anchor, the number of nodes the anchored node stands for once aliases are expanded.

    Newer libyaml builds (PyYAML 6.0.4 and later) refuse nesting past their own limit while the scanner
    looks ahead, which in flow style (``[[[[...``) happens before the parser has emitted the event our
    check would have stopped at. When the parser refuses for nesting, the text up to that point is walked
    again with the pure-Python parser, which has no limit of its own, so the refusal names the level
    where ours is crossed whatever the parser version.
    """
    try:
        _walk_events(yaml.parse(text, Loader=YamlLoader), source, max_depth, alias_budget)
    except yaml.YAMLError as e:
        index = parser_nesting_refusal(e)
        if index is not None:
            recheck_nesting(text[: index + 1], source, max_depth, alias_budget)
        raise yaml_error(e, source) from None


def parser_nesting_refusal(e: yaml.YAMLError) -> int | None:
    """Where (character index) libyaml refused nesting past its own limit, or None for any other error."""
    mark = getattr(e, "problem_mark", None)
    if YamlLoader is yaml.SafeLoader or mark is None or "nesting" not in str(getattr(e, "problem", "") or ""):
        return None
    return int(getattr(mark, "index", 0))


def recheck_nesting(prefix: str, source: str, max_depth: int, alias_budget: int) -> None:
    """Walk ``prefix`` (the text up to where libyaml refused nesting with its own limit, which its scanner
    does while looking ahead) with the pure-Python parser, which has no limit of its own: raises our
    InputError naming the level where ours is crossed, when it is crossed there."""
    with contextlib.suppress(yaml.YAMLError):  # the prefix ends mid-structure: the parser's refusal stands
        _walk_events(yaml.parse(prefix, Loader=yaml.SafeLoader), source, max_depth, alias_budget)


def _walk_events(events: Any, source: str, max_depth: int, alias_budget: int) -> None:
    start_types: Any = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    end_types: Any = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    stack: list[list[Any]] = []  # [expanded node count, anchor] per open collection
    sizes: dict[str, int] = {}
    open_anchors: set[str] = set()
    unique = 0
    extra = 0
    ev: Any
    for ev in events:
        t = type(ev)
        if t is yaml.ScalarEvent:
            unique += 1
            if stack:
                stack[-1][0] += 1
            if ev.anchor:
                sizes[ev.anchor] = 1
        elif t in start_types:
            unique += 1
            if len(stack) >= max_depth:
                raise too_deep(source, mark_location(ev.start_mark, source), max_depth)
            stack.append([1, ev.anchor])
            if ev.anchor:
                open_anchors.add(ev.anchor)
        elif t in end_types:
            count, anchor = stack.pop()
            if anchor:
                sizes[anchor] = count
                open_anchors.discard(anchor)
            if stack:
                stack[-1][0] += count
        elif t is yaml.AliasEvent:
            if ev.anchor in open_anchors:
                raise recursive_alias(source, mark_location(ev.start_mark, source), ev.anchor)
            size = sizes.get(ev.anchor, 1)  # an undefined alias is reported by the loader
            if stack:
                stack[-1][0] += size
            extra += size - 1
            if extra > max(alias_budget, unique):
                allowed = max(alias_budget, unique)
                raise alias_bomb(source, mark_location(ev.start_mark, source), allowed)
        elif t is yaml.DocumentStartEvent:
            sizes.clear()
            open_anchors.clear()


def mark_location(mark: Any, source: str) -> str:
    """``source:line:column`` of a parser mark (``source`` alone without one)."""
    return f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source


def too_deep(source: str, where: str, max_depth: int) -> InputError:
    return InputError(source, f"{where}: nesting deeper than {max_depth} levels is refused")


def recursive_alias(source: str, where: str, anchor: str) -> InputError:
    return InputError(source, f"{where}: alias *{anchor} refers to a node that contains it "
                              f"(recursive aliases are refused)")


def alias_bomb(source: str, where: str, allowed: int) -> InputError:
    return InputError(source, f"{where}: aliases expand to more than {allowed} extra nodes (an alias bomb?); refused")


def load_yaml_documents(text: str, source: str = "<input>", *, max_depth: int = MAX_NESTING_DEPTH,
                        alias_budget: int = ALIAS_EXPANSION_BUDGET) -> list[Any]:
    """Every non-empty document of a YAML stream, safe-loaded after :func:`check_yaml_structure`."""
    check_yaml_structure(text, source, max_depth=max_depth, alias_budget=alias_budget)
    try:
        return [d for d in yaml.load_all(text, Loader=YamlLoader) if d is not None]
    except yaml.YAMLError as e:
        raise yaml_error(e, source) from None
    except (ValueError, OverflowError) as e:  # e.g. an integer of 5,000 digits, a timestamp on day 45
        raise InputError(source, f"{source}: a value cannot be read: {brief_str(str(e))}") from None
    except RecursionError:  # pragma: no cover - the depth check above keeps the loader far from this
        raise InputError(source, f"{source}: nesting too deep") from None


def parse_byte_size(text: str) -> int:
    """``"1048576"``, ``"512Mi"``, ``"2G"`` -> bytes (for ``--max-input-bytes``). ValueError when malformed."""
    s = text.strip()
    units: Sequence[tuple[str, int]] = (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("Ti", 1 << 40),
                                        ("K", 10**3), ("k", 10**3), ("M", 10**6), ("G", 10**9), ("T", 10**12))
    mult = 1
    for suffix, m in units:
        if s.endswith(suffix):
            s, mult = s[: -len(suffix)], m
            break
    if not s.isdigit():
        raise ValueError(f"invalid size {text!r}: expected a number of bytes, optionally with a suffix "
                         f"(Ki, Mi, Gi, K, M, G)")
    n = int(s) * mult
    if n <= 0:
        raise ValueError(f"invalid size {text!r}: must be positive")
    return n
