"""JSON dumps (``kubectl get -o json``), item by item: the ``items`` of a List are decoded one at a time.

The top-level object's members are read in order; when the member ``items`` holds an array, each element is
decoded with the standard library's C decoder and handed out at once, so memory holds one item, not the
dump. JSON is read as JSON (RFC 8259, as the API server reads it): ``1e3`` is the number 1000, where a
YAML 1.1 reader would have made it a string. Invalid JSON before the first item was handed out is left to
the YAML reader (the file may be YAML flow style, such as ``{kind: Node, ...}``); after that, it is an
InputError naming line and column, and saying so when the input ends there (it looks truncated).

Time is linear in the size of the input, however big one item is: an item that does not fit in what was read
so far is first scanned to its end (brackets and strings only, by regular expressions), then decoded once.
An object larger than :data:`MAX_OBJECT_CHARS` is refused.

Duplicate keys are found without slowing the common case: the decoder's object hook counts the keys it kept,
and only when that differs from the ``":`` sequences of the item's text (which counts every key written
without whitespace before its colon, and every ``\\":`` inside strings) is the item decoded again keeping
every key. A key repeated in one object is therefore always found, except when the copies differ in the
whitespace before their colon in a way that balances the count exactly.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any

from scheduling_framework.errors import InputError
from scheduling_framework.ingest.notes import Notes, join_path
from scheduling_framework.ingest.source import CHUNK, CappedReader
from scheduling_framework.ingest.untrusted import too_deep, undecodable

_WS = re.compile(r"[ \t\n\r]*")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
#: How close to the end of the text read so far a decoding error must be to be taken for a cut value.
_TAIL = 64
#: The largest single object or value accepted, in characters of its text. The API server stores objects of at
#: most 1.5 MiB (etcd's limit; 3 MiB per request): a dump's objects, pretty-printed, are far below this.
MAX_OBJECT_CHARS = 256 << 20

# Finding where a value ends without decoding it. Outside strings: everything up to the next bracket, whole
# strings included, or up to a string that does not end in the text at hand. Inside a string: everything up to
# its closing quote (or a backslash that ends the text). Possessive, so that nothing is ever matched twice.
_OUTSIDE = re.compile(r'(?:[^"\[\]{}]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.S)
_INSIDE = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.S)
_SCALAR = re.compile(r"[-+.0-9a-zA-Z]*+")


class NotJson(Exception):
    """The input is not JSON after all (nothing was handed out yet): read it as YAML."""


class RereadWhole(Exception):
    """A document has a top-level ``items`` array that turned out not to be a List's: the source must be read
    again with that document (``document``, from 1) built whole instead of having its items streamed."""

    def __init__(self, reason: str, document: int) -> None:
        super().__init__(reason)
        self.document = document


def is_list_kind(kind: Any) -> bool:
    return kind == "List" or str(kind).endswith("List")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def size_label(chars: int) -> str:
    return f"{chars >> 20} MiB" if chars >= 1 << 20 and not chars % (1 << 20) else f"{chars} characters"


class _EndScan:
    """Where a value ends, over the chunks of text that hold it (its state carries from one chunk to the next)."""

    __slots__ = ("depth", "inside", "escape", "scalar")

    def __init__(self, first: str) -> None:
        self.depth = 0
        self.inside = False
        self.escape = False
        self.scalar = first not in '{["'

    def end(self, text: str, p: int) -> int:
        """The index just past the value's end in ``text`` (scanned from ``p``), or -1 when it goes on."""
        n = len(text)
        if self.scalar:
            p = _SCALAR.match(text, p).end()  # type: ignore[union-attr]
            return p if p < n else -1
        while p < n:
            if self.escape:  # the backslash ended the previous chunk: this character is escaped
                self.escape = False
                p += 1
                continue
            if self.inside:
                p = _INSIDE.match(text, p).end()  # type: ignore[union-attr]
                if p == n:
                    return -1
                p += 1
                if text[p - 1] == "\\":  # a backslash at the end of the text
                    self.escape = True
                    continue
                self.inside = False
                if self.depth == 0:  # the value was a string
                    return p
                continue
            p = _OUTSIDE.match(text, p).end()  # type: ignore[union-attr]
            if p == n:
                return -1
            c = text[p]
            p += 1
            if c == '"':
                self.inside = True
            elif c == "[" or c == "{":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth <= 0:
                    return p
        return -1

    def start(self, text: str, p: int) -> int:
        """:meth:`end` from the value's first character at ``p``."""
        if text[p] == '"':
            self.inside = True
            return self.end(text, p + 1)
        return self.end(text, p)


class JsonItems:
    """Iterate ``(where, item)`` over a JSON dump, as ``cluster._flatten`` names them.

    ``stream_lists=False`` builds the document whole (the ``items`` of a List included, then handed out one by
    one): for a document whose ``items`` turned out not to be a List's (see :class:`RereadWhole`).
    """

    def __init__(self, reader: CappedReader, max_depth: int, notes: Notes | None = None, *,
                 stream_lists: bool = True) -> None:
        self.reader = reader
        self.name = reader.source.name
        self.what = reader.source.what
        self.max_depth = max_depth
        self.notes = notes if notes is not None else Notes()
        self.stream_lists = stream_lists
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        lens: list[int] = []
        append = lens.append

        def count_keys(d: dict[str, Any]) -> dict[str, Any]:
            append(len(d))
            return d

        self._lens = lens  # the number of keys of every object the last decode built
        self._json = json.JSONDecoder(parse_constant=_reject_constant, object_hook=count_keys)
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._bytes = 0
        self._dropped = 0  # characters dropped from the front of buf
        self._lines_before = 0  # newlines in the text dropped from the front of buf
        self._col_carry = 0  # characters of the current line dropped from the front of buf
        self._item: tuple[int, int] | None = None  # the item being read: its index and its start (absolute)
        self._dups: list[str] = []  # duplicate key paths of the last value decoded
        self.yielded = False

    # ------------------------------------------------------------------ buffer
    def _read_text(self) -> str:
        """The next chunk of input, decoded ('' at the end)."""
        if self.eof:
            return ""
        data = self.reader.read(CHUNK * 4)
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            raise undecodable(self.name, self.what, "utf-8", self._bytes + e.start) from None
        self._bytes += len(data)
        if not data:
            self.eof = True
        if self._bytes == len(data) and text.startswith("\ufeff"):
            text = text[1:]
        return text

    def _drop_front(self, n: int) -> None:
        """Drop the first ``n`` characters of buf, keeping count of lines and columns."""
        if n <= 0:
            return
        nl = self.buf.rfind("\n", 0, n)
        if nl >= 0:
            self._lines_before += self.buf.count("\n", 0, n)
            self._col_carry = n - nl - 1
        else:
            self._col_carry += n
        self._dropped += n
        self.buf = self.buf[n:]
        self.pos -= n

    def _fill(self) -> bool:
        if self.eof:
            return False
        if self.pos > CHUNK and self.pos > len(self.buf) // 2:
            self._drop_front(self.pos)
        text = self._read_text()
        self.buf += text
        return bool(text) or not self.eof

    def _ws(self) -> str:
        """Skip whitespace; the next character ('' at the end of input)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def _line_col(self, pos: int) -> tuple[int, int]:
        line = self._lines_before + self.buf.count("\n", 0, pos) + 1
        nl = self.buf.rfind("\n", 0, pos)
        col = pos - nl if nl >= 0 else self._col_carry + pos + 1
        return line, col

    def _where(self, pos: int) -> str:
        line, col = self._line_col(pos)
        return f"{self.name}:{line}:{col}"

    def _fail(self, pos: int, problem: str) -> InputError:
        if not self.yielded:
            raise NotJson(problem)
        message = f"invalid JSON at {self._where(pos)}: {problem}"
        if self.eof and (problem.startswith("Unterminated string") or not self.buf[pos:].strip()):
            message += f": the input ends here{self._inside_item()}: it looks truncated"
        return InputError(self.name, message)

    def _inside_item(self) -> str:
        if self._item is None:
            return ""
        j, start = self._item
        if start < self._dropped:
            return f", inside items[{j}]"
        return f", inside items[{j}] (which starts at line {self._line_col(start - self._dropped)[0]})"

    def _decode(self, start: int, depth: int) -> tuple[Any, int]:
        self._lens.clear()
        try:
            return self._json.raw_decode(self.buf, start)
        except RecursionError:
            self._check_depth(start, len(self.buf), depth)
            raise self._fail(start, "nesting too deep") from None
        except json.JSONDecodeError:
            raise
        except ValueError as e:  # NaN / Infinity
            raise self._fail(start, str(e)) from None

    def _value(self, depth: int) -> Any:
        """Decode the value at pos (reading more input while it is incomplete)."""
        start = self.pos
        try:
            value, end = self._decode(start, depth)
            if end == len(self.buf) and not self.eof and isinstance(value, (int, float)):
                raise json.JSONDecodeError("a number at the end of what was read", self.buf, end)
        except json.JSONDecodeError as e:
            # Cut by the end of what was read so far: the error is within the last few characters (a literal
            # such as ``nu`` for null, a number, a key), or a string has not ended yet.
            if self.eof or not (e.pos >= len(self.buf) - _TAIL or e.msg.startswith("Unterminated string")):
                raise self._fail(e.pos, e.msg) from None
            start = self._complete(start)
            try:
                value, end = self._decode(start, depth)
            except json.JSONDecodeError as e2:
                raise self._fail(e2.pos, e2.msg) from None
        if end - start > MAX_OBJECT_CHARS:
            raise self._too_big(start)
        buf = self.buf
        lens = self._lens
        # Each level of nesting needs an opening bracket: only a value with more of them than the limit can be
        # too deep, and only then is it scanned (brackets inside strings are skipped there).
        if buf.count("[", start, end) + len(lens) + depth > self.max_depth:
            self._check_depth(start, end, depth)
        self._dups = []
        if lens:
            keys = sum(lens)
            if keys and buf.count('":', start, end) != keys:
                self._dups = self._duplicates(start, end, keys)
        self.pos = end
        return value

    def _too_big(self, start: int) -> InputError:
        label = f"items[{self._item[0]}] " if self._item is not None else "document 1 "
        return InputError(self.name, f"{self._where(start)}: {label}is larger than {size_label(MAX_OBJECT_CHARS)}, "
                                     f"far beyond what the API server stores (1.5 MiB): refused")

    def _complete(self, start: int) -> int:
        """Read on until the value that starts at ``start`` ends (or the input does); the buffer then starts with
        the value. Each character is scanned once and the chunks are joined once: linear in the value's size."""
        scan = _EndScan(self.buf[start])
        head = self.buf[start:]
        parts = [head]
        size = len(head)
        found = scan.start(head, 0) >= 0
        while not found:
            if size > MAX_OBJECT_CHARS + _TAIL:
                raise self._too_big(start)
            text = self._read_text()
            if not text:
                break
            parts.append(text)
            size += len(text)
            found = scan.end(text, 0) >= 0
        self.pos = start
        self._drop_front(start)  # what came before the value, counting its lines
        self.buf = "".join(parts)
        return 0

    def _check_depth(self, start: int, end: int, depth: int) -> None:
        level = depth
        for m in _TOKENS.finditer(self.buf, start, end):
            c = m.group()
            if c == "[" or c == "{":
                if level >= self.max_depth:
                    raise too_deep(self.name, self._where(m.start()), self.max_depth)
                level += 1
            elif c == "]" or c == "}":
                level -= 1

    def _duplicates(self, start: int, end: int, keys: int) -> list[str]:
        """The paths of the keys given twice in one object of the value at ``start``, the text of which shows
        more (or fewer) keys than were kept. Each ``\\":`` is counted as the end of a key by ``":`` but is
        most often an escaped quote inside a string (a last-applied-configuration annotation): when taking
        them out explains the difference, there is no duplicate; otherwise the value is decoded again."""
        buf = self.buf
        if buf.count('":', start, end) - buf.count('\\":', start, end) == keys \
                and not buf.count('\\\\":', start, end):
            return []
        found: list[tuple[dict[str, Any], list[str]]] = []

        def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            d = dict(pairs)
            if len(d) != len(pairs):
                seen: set[str] = set()
                twice: list[str] = []
                for k, _ in pairs:
                    if k in seen and k not in twice:
                        twice.append(k)
                    seen.add(k)
                found.append((d, twice))
            return d

        value, _ = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=keep_pairs).raw_decode(
            buf, start)
        if not found:
            return []
        flagged = {id(d): twice for d, twice in found}
        paths: list[str] = []
        _paths_of(value, "", flagged, paths)
        return paths

    def _expect(self, char: str) -> None:
        if self._ws() != char:
            raise self._fail(self.pos, f"Expecting '{char}'")
        self.pos += 1

    # ------------------------------------------------------------------ items
    def __iter__(self) -> Iterator[tuple[str, Any]]:
        first = self._ws()
        if first == "[":  # a top-level array: one document, as the YAML reader sees it
            value = self._value(0)
            self._end()
            self.notes.duplicate("document 1", value, self._dups)
            self.notes.documents = 1
            yield "document 1", value
            return
        if first != "{":
            raise NotJson("not a JSON object")
        top_line = self._line_col(self.pos)[0]
        self.pos += 1
        top: dict[str, Any] = {}
        top_dups: list[str] = []
        top_chars = 0  # of the values kept in top (the streamed items are not)
        streamed = False
        kindless: list[tuple[str, dict[str, Any], list[str]]] = []
        c = self._ws()
        if c == "}":
            self.pos += 1
        while c != "}":
            if c != '"':
                raise self._fail(self.pos, "Expecting property name enclosed in double quotes")
            key_at = self.pos
            key = self._value(1)
            self._expect(":")
            if key == "items" and streamed:
                raise InputError(self.name, f"{self.name}: document 1: a second items list, at line "
                                            f"{self._line_col(key_at)[0]}: refused (one of the two would be "
                                            f"dropped)")
            if key in top:
                top_dups.append(key)
            if (self.stream_lists and self._ws() == "[" and key == "items"
                    and ("kind" not in top or is_list_kind(top["kind"]))):
                streamed = True
                top.pop("items", None)
                yield from self._items(top, kindless)
            else:
                at = self._dropped + self.pos
                top[key] = self._value(1)
                top_chars += self._dropped + self.pos - at
                if top_chars > MAX_OBJECT_CHARS:  # each value is under the limit, all of them together are not
                    raise InputError(self.name, f"{self.name}:{top_line}: document 1 is larger than "
                                                f"{size_label(MAX_OBJECT_CHARS)}, far beyond what the API server "
                                                f"stores (1.5 MiB): refused")
                top_dups.extend(join_path(key, p) for p in self._dups)
            c = self._ws()
            if c == ",":
                self.pos += 1
                c = self._ws()
                if c == "}":
                    raise self._fail(self.pos, "Expecting property name enclosed in double quotes")
            elif c == "}":
                self.pos += 1
            else:
                raise self._fail(self.pos, "Expecting ',' delimiter")
        self._end()
        self.notes.documents = 1
        if not streamed:
            if not self.stream_lists and is_list_kind(top.get("kind")) and isinstance(top.get("items"), list):
                self.notes.duplicate("document 1", top, top_dups, str(top["kind"]))
                yield from _list_items(1, top)
                return
            self.notes.duplicate("document 1", top, top_dups)
            if not top.keys() & {"kind", "apiVersion", "metadata"}:
                self.notes.not_an_object("document 1", f"{self.name}, line {top_line}", list(top))
            yield "document 1", top
            return
        kind = top.get("kind")
        if "kind" not in top:
            raise InputError(self.name, f"{self.name}: document 1 (line {top_line}) has a top-level items list but "
                                        f"no kind: expected kind: List (or a typed list such as PodList)")
        if not is_list_kind(kind):
            raise RereadWhole("a top-level items array in an object that is not a List", 1)
        self.notes.duplicate("document 1", top, top_dups, str(kind))
        item_kind = str(kind)[:-4] if kind != "List" else ""
        for where, item, dups in kindless:
            if item_kind and isinstance(item, dict) and "kind" not in item:
                item["kind"] = item_kind
            self.notes.duplicate(where, item, dups)
            yield where, item

    def _items(self, top: dict[str, Any],
               kindless: list[tuple[str, dict[str, Any], list[str]]]) -> Iterator[tuple[str, Any]]:
        self.pos += 1  # '['
        j = 0
        c = self._ws()
        if c == "]":
            self.pos += 1
            return
        while True:
            where = f"document 1 items[{j}]"
            self._item = (j, self._dropped + self.pos)
            item = self._value(2)
            j += 1
            if kindless or (isinstance(item, dict) and "kind" not in item and "kind" not in top):
                kindless.append((where, item, self._dups))  # the List's kind (PodList -> Pod) comes later: wait
            else:
                if isinstance(item, dict) and "kind" not in item and top["kind"] != "List":
                    item["kind"] = str(top["kind"])[:-4]
                if self._dups:
                    self.notes.duplicate(where, item, self._dups)
                self.yielded = True
                yield where, item
            c = self._ws()
            if c == ",":
                self.pos += 1
                self._ws()
                continue
            if c == "]":
                self.pos += 1
                self._item = None
                return
            raise self._fail(self.pos, "Expecting ',' delimiter")

    def _end(self) -> None:
        if self._ws() != "":
            raise self._fail(self.pos, "Extra data")


def _list_items(doc: int, top: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The items of a List document built whole, named and given the List's kind as ``cluster._flatten`` does."""
    kind = top.get("kind")
    item_kind = str(kind)[:-4] if kind != "List" else ""
    for j, item in enumerate(top["items"]):
        if item_kind and isinstance(item, dict) and "kind" not in item:
            item = {**item, "kind": item_kind}
        yield f"document {doc} items[{j}]", item


def _paths_of(value: Any, prefix: str, flagged: dict[int, list[str]], out: list[str]) -> None:
    """Append to ``out`` the path of every key listed in ``flagged`` (by the id of its object) under ``value``."""
    if isinstance(value, dict):
        for k in flagged.get(id(value), ()):
            out.append(join_path(prefix, k))
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                _paths_of(v, join_path(prefix, k), flagged, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                _paths_of(v, f"{prefix}[{i}]", flagged, out)


__all__ = ["MAX_OBJECT_CHARS", "JsonItems", "NotJson", "RereadWhole", "is_list_kind", "size_label"]
