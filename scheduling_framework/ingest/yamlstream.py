"""YAML dumps, item by item: values built straight from the parser's events, with the safety checks on the way.

One pass over libyaml's events (the pure-Python parser's without libyaml) builds each document's values as
PyYAML's safe loader would, and hands out the ``items`` of a List one at a time, so memory holds one item,
not the dump. The same pass refuses nesting deeper than the limit, alias expansion beyond the budget (what
``_input.check_yaml_structure`` does before the whole-document loader, at the same events) and objects larger
than ``jsonstream.MAX_OBJECT_CHARS``, and notes keys given twice in one mapping.

Scalars get YAML 1.1 semantics exactly as PyYAML's safe loader gives them (``yes``/``on`` booleans, octal,
sexagesimal, timestamps, ``.inf``): plain scalars whose first character can start a non-string value go
through PyYAML's own resolver and constructors; the others are strings. Merge keys (``<<``) and the safe
loader's explicit collection tags (``!!map``, ``!!seq``, ``!!set``, ``!!omap``, ``!!pairs``) are applied as
it applies them; any other tag is refused as it refuses it. A document whose top-level ``items`` turns out
not to be a List's raises :class:`RereadWhole`: the source is read again with that document built whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from scheduling_framework.errors import InputError, brief_str
from scheduling_framework.ingest import jsonstream
from scheduling_framework.ingest.jsonstream import RereadWhole, is_list_kind, size_label
from scheduling_framework.ingest.notes import Notes, join_path
from scheduling_framework.ingest.untrusted import YamlLoader, alias_bomb, mark_location, recursive_alias, too_deep

_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
#: First characters for which a plain scalar may be something other than a string (from PyYAML's resolver).
_RESOLVE_FIRST = frozenset(k for k in yaml.resolver.Resolver.yaml_implicit_resolvers if k is not None)
_BOOLS = {**dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
          **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False)}
_NULLS = frozenset(("~", "null", "Null", "NULL"))
_BOOL_TAG, _NULL_TAG = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
#: First characters whose only implicit resolutions are booleans and nulls (all of them listed above).
_WORDS_ONLY = frozenset(c for c in _RESOLVE_FIRST if c.isalpha() and all(
    tag in (_BOOL_TAG, _NULL_TAG) for tag, _ in yaml.resolver.Resolver.yaml_implicit_resolvers[c]))
_MERGE_TAG = "tag:yaml.org,2002:merge"
_VALUE_TAG = "tag:yaml.org,2002:value"
_MAP_TAGS = (None, "!", "tag:yaml.org,2002:map")
_SEQ_TAGS = (None, "!", "tag:yaml.org,2002:seq")
#: Explicit collection tags of the safe loader that build something other than a dict or a list.
_SET_TAG, _OMAP_TAG, _PAIRS_TAG = "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs"
_NO_KEY: Any = object()
#: What :func:`scalar_value` gives for ``<<`` (a merge key) and ``=`` (a "value" key): only keys may be these.
MERGE: Any = object()
VALUE_KEY: Any = object()
_OBJECT_KEYS = frozenset(("kind", "apiVersion", "metadata"))


def _undefined_alias_name(anchor: str) -> str:  # the C and pure composers word it differently
    return "" if YamlLoader is not yaml.SafeLoader else f" {anchor!r}"


def _parser(reader: Any) -> Any:
    if YamlLoader is yaml.SafeLoader:  # pragma: no cover - PyYAML without libyaml
        return yaml.SafeLoader(reader)
    from yaml._yaml import CParser

    return CParser(reader)


def scalar_value(ev: Any) -> Any:
    """The value PyYAML's safe loader constructs for a ScalarEvent (:data:`MERGE` / :data:`VALUE_KEY` for the
    scalars it treats as special keys)."""
    tag = ev.tag
    v = ev.value
    if tag is None or tag == "!":
        if not ev.implicit[0]:  # quoted (or a non-specific tag): a string
            return v
        if not v:
            return None
        c = v[0]
        if c not in _RESOLVE_FIRST:
            return v
        b = _BOOLS.get(v)
        if b is not None:
            return b
        if v in _NULLS:
            return None
        if c in _WORDS_ONLY:  # a letter: only the boolean and null words above resolve to something else
            return v
        if v.isascii() and v.isdigit() and (v[0] != "0" or len(v) == 1):
            return int(v)
        tag = _RESOLVER.resolve(ScalarNode, v, (True, False))  # type: ignore[no-untyped-call]
        if tag == "tag:yaml.org,2002:str":
            return v
    if tag == _MERGE_TAG:
        return MERGE
    if tag == _VALUE_TAG:
        return VALUE_KEY
    node = ScalarNode(tag, v, ev.start_mark, ev.end_mark, ev.style)
    try:
        return _CONSTRUCTOR.construct_object(node, deep=True)
    finally:  # the constructor remembers every node it built: forget it, or memory grows with the input
        _CONSTRUCTOR.constructed_objects.clear()
        _CONSTRUCTOR.recursive_objects.clear()


class _ReadTooFar(Exception):
    """The parser read past the size limit of the object it is in (see :class:`_Paced`)."""


class _Paced:
    """The parser's reader: refuses to read on once the current object (``start``, in characters, as marks count
    them) would be larger than ``limit``. The events' marks cannot tell: libyaml holds the scalar it is scanning
    whole until its event, so one scalar of gigabytes (a gzip bomb of ``a: xxx...``), or a few of 200 MiB each,
    would fill memory before any event could be checked."""

    __slots__ = ("_reader", "_limit", "_bytes", "start")

    #: What the parser may have read ahead of its marks (libyaml's buffers hold 64 KiB), and then some.
    AHEAD = 1 << 20

    def __init__(self, reader: Any, limit: int) -> None:
        self._reader = reader
        self._limit = limit + self.AHEAD
        self._bytes = 0
        self.start = 0

    def read(self, n: int) -> bytes:
        data: bytes = self._reader.read(n)
        self._bytes += len(data)
        if getattr(self._reader, "chars", self._bytes) - self.start > self._limit:
            raise _ReadTooFar
        return data


class _Frame:
    __slots__ = ("value", "is_map", "key", "count", "anchor", "stream", "mark", "special", "tag", "merges")

    def __init__(self, value: Any, is_map: bool, anchor: str | None, mark: Any) -> None:
        self.mark = mark
        self.value = value
        self.is_map = is_map
        self.key: Any = _NO_KEY
        self.count = 1
        self.anchor = anchor
        self.stream = False
        # Placed through _place_special: a mapping with a merge key, the sequence of a merge key, !!omap / !!pairs.
        self.special = False
        self.tag: str | None = None  # _SET_TAG, _OMAP_TAG, _PAIRS_TAG, or "merge" (the sequence of a merge key)
        self.merges: list[dict[Any, Any]] | None = None


def _node_id(value: Any) -> str:
    """PyYAML's name for the kind of node a value was built from (for its constructor's messages)."""
    return "mapping" if isinstance(value, (dict, set)) else "sequence" if isinstance(value, list) else "scalar"


def _constructor_error(source: str, mark: Any, problem: str) -> InputError:
    return InputError(source, f"invalid YAML at {mark_location(mark, source)}: {problem}")


def yaml_items(reader: Any, source: str, max_depth: int, alias_budget: int, notes: Notes | None = None,
               whole: frozenset[int] = frozenset()) -> Iterator[tuple[str, Any]]:
    """``(where, item)`` for every non-empty document, and for every item of a List document, in order;
    ``notes`` gets the number of non-empty documents, the duplicate keys and the hints for error messages.
    Documents numbered in ``whole`` are built whole (their items handed out at the end)."""
    if notes is None:
        notes = Notes()
    limit = jsonstream.MAX_OBJECT_CHARS
    paced = _Paced(reader, limit)
    parser = _parser(paced)
    get = parser.get_event
    scalar_t, alias_t = yaml.ScalarEvent, yaml.AliasEvent
    map_start_t, seq_start_t = yaml.MappingStartEvent, yaml.SequenceStartEvent
    map_end_t, seq_end_t = yaml.MappingEndEvent, yaml.SequenceEndEvent
    doc_start_t, stream_end_t = yaml.DocumentStartEvent, yaml.StreamEndEvent
    stack: list[_Frame] = []
    anchors: dict[str, tuple[Any, int, Any]] = {}  # anchor -> (value, expanded node count, mark)
    open_anchors: set[str] = set()
    unique = 0
    extra = 0
    doc_no = 0
    root_value: Any = _NO_KEY
    kindless: list[tuple[str, dict[str, Any]]] = []
    item_no = 0
    item_line = 0
    streamed = False
    stream_here = True  # whether this document's items may be streamed
    keys_before = 0  # keys of the List's mapping before its streamed items
    root_line = 0  # the line where the document's value starts
    obj_start = 0  # where the current object (document, or streamed item) starts (index, for the size limit)
    pending: dict[str, list[str]] = {}  # duplicate key paths of the objects not handed out yet
    no_kind: tuple[int, str] | None = None  # a streamed document without kind: (its number, its last item)
    last_list: tuple[str, int] | None = None  # the last item of the last streamed List: (where, line)
    mark: Any = None
    try:
        while True:
            ev = get()
            t = type(ev)
            size = 1
            if t is scalar_t:
                mark = ev.start_mark
                unique += 1
                if not unique & 0xFFF and mark.index - obj_start > limit:
                    raise _too_big(source, stack, doc_no, item_no, obj_start, mark, limit)
                value = scalar_value(ev)
                if value is MERGE or value is VALUE_KEY:
                    parent = stack[-1] if stack else None
                    if parent is None or not parent.is_map or parent.key is not _NO_KEY:
                        raise _constructor_error(source, mark, "could not determine a constructor for the tag "
                                                               f"{(_MERGE_TAG if value is MERGE else _VALUE_TAG)!r}")
                    if value is MERGE:
                        parent.count += 1
                        parent.key = MERGE
                        parent.special = True
                        if parent.merges is None:
                            parent.merges = []
                        continue
                    value = ev.value  # "=": a string key, as the safe loader makes it
                if ev.anchor:  # (an anchor on "<<" is not kept: no alias can stand for a merge key)
                    _define(anchors, ev.anchor, value, 1, ev, source)
            elif t is map_start_t or t is seq_start_t:
                unique += 1
                if len(stack) >= max_depth:
                    raise too_deep(source, mark_location(ev.start_mark, source), max_depth)
                is_map = t is map_start_t
                frame = _Frame({} if is_map else [], is_map, ev.anchor, ev.start_mark)
                if ev.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                    _tagged(frame, ev, source)
                if ev.anchor:
                    _define(anchors, ev.anchor, frame.value, 0, ev, source)
                    open_anchors.add(ev.anchor)
                if stack:
                    parent = stack[-1]
                    if parent.stream:
                        item_line = ev.start_mark.line + 1
                        obj_start = paced.start = ev.start_mark.index
                    elif not unique & 0xFFF and ev.start_mark.index - obj_start > limit:
                        raise _too_big(source, stack, doc_no, item_no, obj_start, ev.start_mark, limit)
                    if parent.key is MERGE and not is_map:
                        frame.special = True
                        frame.tag = "merge"
                    elif len(stack) == 1 and parent.is_map and parent.key == "items" and not is_map:
                        top = parent.value
                        if streamed:
                            raise _second_items(source, doc_no, ev.start_mark)
                        if stream_here and ("kind" not in top or is_list_kind(top["kind"])):
                            frame.stream = True
                            streamed = True
                            item_no = 0
                            keys_before = len(top)
                stack.append(frame)
                continue
            elif t is map_end_t or t is seq_end_t:
                frame = stack.pop()
                value = frame.value
                mark = frame.mark
                size = frame.count
                if frame.merges:
                    merged: dict[Any, Any] = {}
                    for m in frame.merges:
                        merged.update(m)
                    merged.update(value)
                    value = merged
                if frame.tag == _SET_TAG:
                    value = set(value)
                if frame.anchor:
                    anchors[frame.anchor] = (value, size, anchors[frame.anchor][2])
                    open_anchors.discard(frame.anchor)
                if frame.stream:
                    parent = stack[-1]
                    parent.key = _NO_KEY  # the streamed items are not kept in the List
                    parent.count += size
                    parent.value["items"] = _STREAMED
                    obj_start = paced.start = ev.start_mark.index
                    if item_no:
                        last_list = (f"document {doc_no + 1} items[{item_no - 1}]", item_line)
                    continue
            elif t is alias_t:
                mark = ev.start_mark
                anchor = ev.anchor
                if anchor in open_anchors:
                    raise recursive_alias(source, mark_location(ev.start_mark, source), anchor)
                if anchor not in anchors:
                    raise InputError(source, f"invalid YAML at {mark_location(ev.start_mark, source)}: found undefined "
                                             f"alias{_undefined_alias_name(anchor)}")
                value, size, mark = anchors[anchor]  # errors about the value name where it was defined
                extra += size - 1
                allowed = max(alias_budget, unique)
                if extra > allowed:
                    raise alias_bomb(source, mark_location(ev.start_mark, source), allowed)
            elif t is doc_start_t:
                if no_kind is not None:
                    raise _list_without_kind(source, *no_kind, truncated=False)
                anchors.clear()
                open_anchors.clear()
                root_value = _NO_KEY
                streamed = False
                stream_here = doc_no + 1 not in whole
                kindless = []
                obj_start = paced.start = ev.start_mark.index
                mark = ev.start_mark  # (where a refusal names a document not read yet)
                last_list = None
                continue
            elif t is stream_end_t:
                if no_kind is not None:
                    raise _list_without_kind(source, *no_kind, truncated=True)
                if last_list is not None and getattr(reader, "eof", False) \
                        and not getattr(reader, "ends_with_newline", True):
                    where, line = last_list
                    notes.truncated = (where, f"{source}: the input does not end with a newline and ends with "
                                              f"{where} (line {line}): it looks truncated")
                notes.documents = doc_no
                return
            else:  # StreamStart, DocumentEnd
                if root_value is not _NO_KEY:
                    done = root_value
                    root_value = _NO_KEY
                    where = f"document {doc_no + 1}"
                    if streamed:
                        if "kind" not in done:  # an error once the next event says whether the input ended here
                            last = f"{last_list[0]} (line {last_list[1]})" if last_list else ""
                            no_kind = (doc_no + 1, last if len(done) == keys_before + 1 else "")
                            doc_no += 1
                            continue
                        kind = done.get("kind")
                        if not is_list_kind(kind):
                            raise RereadWhole("a top-level items array in an object that is not a List", doc_no + 1)
                        if where in pending:
                            notes.duplicate(where, done, pending.pop(where), str(kind))
                        item_kind = str(kind)[:-4] if kind != "List" else ""
                        for item_where, item in kindless:
                            if item_kind and isinstance(item, dict) and "kind" not in item:
                                item = {**item, "kind": item_kind}
                            if item_where in pending:
                                notes.duplicate(item_where, item, pending.pop(item_where))
                            yield item_where, item
                        kindless = []
                        doc_no += 1
                    elif done is not None:
                        doc_no += 1
                        if where in pending:
                            notes.duplicate(where, done, pending.pop(where))
                        if isinstance(done, dict) and is_list_kind(done.get("kind")) \
                                and isinstance(done.get("items"), list):
                            yield from jsonstream._list_items(doc_no, done)
                            continue
                        if isinstance(done, dict) and not done.keys() & _OBJECT_KEYS:
                            notes.not_an_object(where, f"{source}, line {root_line}", list(done))
                        yield where, done
                continue
            # a complete value: place it in its parent
            if not stack:
                root_value = value
                root_line = mark.line + 1
                continue
            parent = stack[-1]
            parent.count += size
            if parent.stream:
                where = f"document {doc_no + 1} items[{item_no}]"
                item_no += 1
                if t is scalar_t or t is alias_t:
                    item_line = ev.start_mark.line + 1
                top = stack[0].value
                if kindless or (isinstance(value, dict) and "kind" not in value and "kind" not in top):
                    kindless.append((where, value))  # the List's kind (PodList -> Pod) comes later: wait for it
                    continue
                if isinstance(value, dict) and "kind" not in value and top["kind"] != "List":
                    value = {**value, "kind": str(top["kind"])[:-4]}
                if where in pending:
                    notes.duplicate(where, value, pending.pop(where))
                yield where, value
                continue
            if parent.special:
                key = _place_special(parent, value, mark, source)
                if key is not _NO_KEY:
                    doc_where, path = _duplicate_at(stack, key, doc_no, item_no, source)
                    pending.setdefault(doc_where, []).append(path)
                continue
            if not parent.is_map:
                parent.value.append(value)
            elif parent.key is _NO_KEY:
                if isinstance(value, (list, dict, set)):
                    raise InputError(source, f"invalid YAML at {mark_location(mark, source)}: found unhashable key")
                parent.key = value
            else:
                key = parent.key
                d = parent.value
                if key in d:
                    doc_where, path = _duplicate_at(stack, key, doc_no, item_no, source)
                    pending.setdefault(doc_where, []).append(path)
                d[key] = value
                parent.key = _NO_KEY
    except _ReadTooFar:
        raise _too_big(source, stack, doc_no, item_no, obj_start, mark, limit) from None
    except yaml.YAMLError as e:
        raise _yaml_error(e, source, reader, stack, doc_no, item_no, item_line) from None
    except InputError:
        raise
    except (ValueError, OverflowError) as e:
        raise InputError(source, f"{source}: a value cannot be read: {brief_str(str(e))}") from None
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


#: Stands for the streamed items in the List's own mapping (a second ``items`` key is then a duplicate).
_STREAMED: Any = object()


def _tagged(frame: _Frame, ev: Any, source: str) -> None:
    """Set up a collection with an explicit tag as the safe loader builds it, or refuse it with its message."""
    tag = ev.tag
    if frame.is_map:
        if tag == _SET_TAG:
            frame.tag = tag
            return
        if tag in _SEQ_TAGS:
            raise _constructor_error(source, ev.start_mark, "expected a sequence node, but found mapping")
        if tag in (_OMAP_TAG, _PAIRS_TAG):
            raise _constructor_error(source, ev.start_mark, "expected a sequence, but found mapping")
    else:
        if tag in (_OMAP_TAG, _PAIRS_TAG):
            frame.tag = tag
            frame.special = True
            return
        if tag in _MAP_TAGS or tag == _SET_TAG:
            raise _constructor_error(source, ev.start_mark, "expected a mapping node, but found sequence")
    raise _constructor_error(source, ev.start_mark, f"could not determine a constructor for the tag {tag!r}")


def _place_special(parent: _Frame, value: Any, mark: Any, source: str) -> Any:
    """Place ``value`` in a frame that needs more than an append or a store (see ``_Frame.special``); the key
    when it was given twice in the mapping (``_NO_KEY`` otherwise)."""
    if parent.tag == "merge":  # an element of the sequence of a merge key
        if not isinstance(value, dict):
            raise _constructor_error(source, mark, f"expected a mapping for merging, but found {_node_id(value)}")
        parent.value.append(value)
        return _NO_KEY
    if parent.tag in (_OMAP_TAG, _PAIRS_TAG):
        if not isinstance(value, dict):
            raise _constructor_error(source, mark, f"expected a mapping of length 1, but found {_node_id(value)}")
        if len(value) != 1:
            raise _constructor_error(source, mark, f"expected a single mapping item, but found {len(value)} items")
        parent.value.append(next(iter(value.items())))
        return _NO_KEY
    # a mapping with a merge key
    if parent.key is _NO_KEY:
        if isinstance(value, (list, dict, set)):
            raise InputError(source, f"invalid YAML at {mark_location(mark, source)}: found unhashable key")
        parent.key = value
        return _NO_KEY
    key = parent.key
    parent.key = _NO_KEY
    if key is not MERGE:
        twice = key in parent.value
        parent.value[key] = value
        return key if twice else _NO_KEY
    assert parent.merges is not None
    if isinstance(value, dict):
        parent.merges.append(value)
    elif isinstance(value, list) and all(isinstance(m, dict) for m in value):
        parent.merges.extend(reversed(value))  # the first of the list wins: merged last
    elif isinstance(value, list):
        bad = next(m for m in value if not isinstance(m, dict))
        raise _constructor_error(source, mark, f"expected a mapping for merging, but found {_node_id(bad)}")
    else:
        raise _constructor_error(source, mark, "expected a mapping or list of mappings for merging, but found "
                                               f"{_node_id(value)}")
    return _NO_KEY


def _duplicate_at(stack: list[_Frame], key: Any, doc_no: int, item_no: int, source: str) -> tuple[str, str]:
    """(where, field path) of ``key``, given twice in the mapping on top of ``stack``."""
    root = 0
    where = f"document {doc_no + 1}"
    if len(stack) > 2 and stack[1].stream:
        root = 2
        where = f"document {doc_no + 1} items[{item_no}]"
    elif len(stack) == 1 and key == "items" and stack[0].value.get("items") is _STREAMED:
        raise _second_items(source, doc_no, None)
    path = ""
    for f in stack[root:-1]:
        if f.is_map:
            path = join_path(path, "<<" if f.key is MERGE else f.key)
        else:
            path = f"{path}[{len(f.value)}]"
    return where, join_path(path, key)


def _second_items(source: str, doc_no: int, mark: Any) -> InputError:
    at = f", at line {mark.line + 1}" if mark is not None else ""
    return InputError(source, f"{source}: document {doc_no + 1}: a second items list{at}: refused (one of the two "
                              f"would be dropped)")


def _list_without_kind(source: str, doc: int, last: str, truncated: bool) -> InputError:
    if truncated and last:
        return InputError(source, f"{source}: document {doc}: the input ends after the items of a List, before its "
                                  f"kind (kubectl writes kind: List after the items): it looks truncated; its last "
                                  f"item, {last}, may be cut short")
    return InputError(source, f"{source}: document {doc} has a top-level items list but no kind: expected kind: List "
                              f"(or a typed list such as PodList)")


def _too_big(source: str, stack: list[_Frame], doc_no: int, item_no: int, start: int, mark: Any,
             limit: int) -> InputError:
    if len(stack) > 1 and stack[1].stream:
        what = f"document {doc_no + 1} items[{item_no}]"
        line = mark.line + 1 if len(stack) < 3 else stack[2].mark.line + 1
    else:
        what = f"document {doc_no + 1}"
        line = stack[0].mark.line + 1 if stack else mark.line + 1 if mark is not None else 1
    return InputError(source, f"{source}:{line}: {what} is larger than {size_label(limit)}, far beyond what the API "
                              f"server stores (1.5 MiB): refused")


def _define(anchors: dict[str, tuple[Any, int, Any]], anchor: str, value: Any, size: int, ev: Any,
            source: str) -> None:
    if anchor in anchors:
        raise InputError(source, f"invalid YAML at {mark_location(ev.start_mark, source)}: second occurrence")
    anchors[anchor] = (value, size, ev.start_mark)


class NestingRefusedByParser(Exception):
    """libyaml refused nesting with its own limit; the caller re-checks the text up to ``index``."""

    def __init__(self, index: int, error: InputError) -> None:
        super().__init__(str(error))
        self.index = index
        self.error = error


def _yaml_error(e: yaml.YAMLError, source: str, reader: Any, stack: list[_Frame], doc_no: int, item_no: int,
                item_line: int) -> Exception:
    from scheduling_framework.ingest.untrusted import parser_nesting_refusal, yaml_error

    err = yaml_error(e, source)
    index = parser_nesting_refusal(e)
    if index is not None:
        return NestingRefusedByParser(index, err)
    mark = getattr(e, "problem_mark", None)
    if mark is not None and getattr(reader, "eof", False) and mark.index >= getattr(reader, "chars", 0) - 1:
        inside = ""
        if len(stack) > 2 and stack[1].stream:
            inside = f", inside document {doc_no + 1} items[{item_no}] (which starts at line {item_line})"
        return InputError(source, f"{err}: the input ends here{inside}: it looks truncated")
    return err


__all__ = ["MERGE", "VALUE_KEY", "NestingRefusedByParser", "scalar_value", "yaml_items"]
