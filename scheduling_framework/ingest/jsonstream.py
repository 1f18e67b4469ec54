"""JSON dumps (``kubectl get -o json``), item by item: the ``items`` of a List are decoded one at a time.

The top-level object's members are read in order; when the member ``items`` holds an array, each element is
decoded with the standard library's C decoder and handed out at once, so memory holds one item, not the
dump. JSON is read as JSON (RFC 8259, as the API server reads it): ``1e3`` is the number 1000, where a
YAML 1.1 reader would have made it a string. Invalid JSON before the first item was handed out is left to
the YAML reader (the file may be YAML flow style, such as ``{kind: Node, ...}``); after that, it is an
InputError naming line and column.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any

from scheduling_framework._input import too_deep, undecodable
from scheduling_framework.errors import InputError
from scheduling_framework.ingest.source import CHUNK, CappedReader

_WS = re.compile(r"[ \t\n\r]*")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
#: How close to the end of the text read so far a decoding error must be to be taken for a cut value.
_TAIL = 64
#: The largest single item accepted (a Node with a huge image list is ~100 kB; anything near this is hostile).
MAX_ITEM_CHARS = 256 << 20


class NotJson(Exception):
    """The input is not JSON after all (nothing was handed out yet): read it as YAML."""


class RereadWhole(Exception):
    """The input has a shape the streamed reader leaves to the whole-document loader."""


def is_list_kind(kind: Any) -> bool:
    return kind == "List" or str(kind).endswith("List")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


class JsonItems:
    """Iterate ``(where, item)`` over a JSON dump, as ``cluster._flatten`` names them."""

    def __init__(self, reader: CappedReader, max_depth: int) -> None:
        self.reader = reader
        self.name = reader.source.name
        self.what = reader.source.what
        self.max_depth = max_depth
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._json = json.JSONDecoder(parse_constant=_reject_constant)
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._bytes = 0
        self._lines_before = 0  # newlines in the text dropped from the front of buf
        self._col_carry = 0  # characters of the current line dropped from the front of buf
        self.yielded = False

    # ------------------------------------------------------------------ buffer
    def _fill(self) -> bool:
        if self.eof:
            return False
        if self.pos > CHUNK and self.pos > len(self.buf) // 2:
            dropped = self.buf[: self.pos]
            nl = dropped.rfind("\n")
            if nl >= 0:
                self._lines_before += dropped.count("\n")
                self._col_carry = len(dropped) - nl - 1
            else:
                self._col_carry += len(dropped)
            self.buf = self.buf[self.pos:]
            self.pos = 0
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

    def _where(self, pos: int) -> str:
        line = self._lines_before + self.buf.count("\n", 0, pos) + 1
        nl = self.buf.rfind("\n", 0, pos)
        col = pos - nl if nl >= 0 else self._col_carry + pos + 1
        return f"{self.name}:{line}:{col}"

    def _fail(self, pos: int, problem: str) -> InputError:
        if not self.yielded:
            raise NotJson(problem)
        return InputError(self.name, f"invalid JSON at {self._where(pos)}: {problem}")

    def _value(self, depth: int) -> Any:
        """Decode the value at pos (reading more input while it is incomplete)."""
        start = self.pos
        while True:
            try:
                value, end = self._json.raw_decode(self.buf, start)
            except json.JSONDecodeError as e:
                # Cut by the end of what was read so far: the error is within the last few characters (a
                # literal such as ``nu`` for null, a number, a key), or a string has not ended yet.
                incomplete = e.pos >= len(self.buf) - _TAIL or e.msg.startswith("Unterminated string")
                if incomplete and len(self.buf) - start > MAX_ITEM_CHARS:
                    raise InputError(self.name, f"{self._where(start)}: an object larger than {MAX_ITEM_CHARS} "
                                                f"characters is refused") from None
                if incomplete and self._fill():
                    start = self.pos  # _fill may have moved the buffer
                    continue
                raise self._fail(e.pos, e.msg) from None
            except RecursionError:
                self._check_depth(start, len(self.buf), depth)
                raise self._fail(start, "nesting too deep") from None
            except ValueError as e:  # NaN / Infinity
                raise self._fail(start, str(e)) from None
            # Each level of nesting needs an opening bracket: only a value with more of them than the limit
            # can be too deep, and only then is it scanned (brackets inside strings are skipped there).
            if self.buf.count("[", start, end) + self.buf.count("{", start, end) + depth > self.max_depth:
                self._check_depth(start, end, depth)
            self.pos = end
            return value

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
            yield "document 1", value
            return
        if first != "{":
            raise NotJson("not a JSON object")
        self.pos += 1
        top: dict[str, Any] = {}
        streamed = False
        kindless: list[tuple[str, dict[str, Any]]] = []
        c = self._ws()
        if c == "}":
            self.pos += 1
        while c != "}":
            if c != '"':
                raise self._fail(self.pos, "Expecting property name enclosed in double quotes")
            key = self._value(1)
            self._expect(":")
            if self._ws() == "[" and key == "items" and ("kind" not in top or is_list_kind(top["kind"])):
                streamed = True
                top.pop("items", None)
                for where, item in self._items(top, kindless):
                    yield where, item
            else:
                top[key] = self._value(1)
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
        if not streamed:
            yield "document 1", top
            return
        if not is_list_kind(top.get("kind")):
            raise RereadWhole("a top-level items array in an object that is not a List")
        item_kind = str(top.get("kind"))[:-4] if top.get("kind") != "List" else ""
        for where, item in kindless:
            if item_kind and isinstance(item, dict) and "kind" not in item:
                item["kind"] = item_kind
            yield where, item

    def _items(self, top: dict[str, Any], kindless: list[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, Any]]:
        self.pos += 1  # '['
        j = 0
        c = self._ws()
        if c == "]":
            self.pos += 1
            return
        while True:
            item = self._value(2)
            where = f"document 1 items[{j}]"
            j += 1
            if kindless or (isinstance(item, dict) and "kind" not in item and "kind" not in top):
                kindless.append((where, item))  # the List's kind (PodList -> Pod) comes later: wait for it
            else:
                if isinstance(item, dict) and "kind" not in item and top["kind"] != "List":
                    item["kind"] = str(top["kind"])[:-4]
                self.yielded = True
                yield where, item
            c = self._ws()
            if c == ",":
                self.pos += 1
                self._ws()
                continue
            if c == "]":
                self.pos += 1
                return
            raise self._fail(self.pos, "Expecting ',' delimiter")

    def _end(self) -> None:
        if self._ws() != "":
            raise self._fail(self.pos, "Extra data")


__all__ = ["JsonItems", "NotJson", "RereadWhole", "is_list_kind"]
