"""YAML dumps, item by item: values built straight from the parser's events, with the safety checks on the way.

One pass over libyaml's events (the pure-Python parser's without libyaml) builds each document's values as
PyYAML's safe loader would, and hands out the ``items`` of a List one at a time, so memory holds one item,
not the dump. The same pass refuses nesting deeper than the limit and alias expansion beyond the budget
(what ``_input.check_yaml_structure`` does before the whole-document loader), at the same events.

Scalars get YAML 1.1 semantics exactly as PyYAML's safe loader gives them (``yes``/``on`` booleans, octal,
sexagesimal, timestamps, ``.inf``): plain scalars whose first character can start a non-string value go
through PyYAML's own resolver and constructors; the others are strings. Shapes this reader leaves to the
whole-document loader (merge keys ``<<``, explicit tags on collections, a top-level ``items`` in an object
that turns out not to be a List) raise :class:`RereadWhole`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from scheduling_framework._input import YamlLoader, alias_bomb, mark_location, recursive_alias, too_deep
from scheduling_framework.errors import InputError, brief_str
from scheduling_framework.ingest.jsonstream import RereadWhole, is_list_kind

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
_PLAIN_COLLECTION_TAGS = (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_NO_KEY: Any = object()


def _undefined_alias_name(anchor: str) -> str:  # the C and pure composers word it differently
    return "" if YamlLoader is not yaml.SafeLoader else f" {anchor!r}"


def _parser(reader: Any) -> Any:
    if YamlLoader is yaml.SafeLoader:  # pragma: no cover - PyYAML without libyaml
        return yaml.SafeLoader(reader)
    from yaml._yaml import CParser

    return CParser(reader)


def scalar_value(ev: Any) -> Any:
    """The value PyYAML's safe loader constructs for a ScalarEvent."""
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
            raise RereadWhole("merge key")
    node = ScalarNode(tag, v, ev.start_mark, ev.end_mark, ev.style)
    return _CONSTRUCTOR.construct_object(node)


class _Frame:
    __slots__ = ("value", "is_map", "key", "count", "anchor", "stream", "mark")

    def __init__(self, value: Any, is_map: bool, anchor: str | None, mark: Any) -> None:
        self.mark = mark
        self.value = value
        self.is_map = is_map
        self.key: Any = _NO_KEY
        self.count = 1
        self.anchor = anchor
        self.stream = False


def yaml_items(reader: Any, source: str, max_depth: int, alias_budget: int,
               docs: list[int] | None = None) -> Iterator[tuple[str, Any]]:
    """``(where, item)`` for every non-empty document, and for every item of a List document, in order;
    ``docs[0]`` is set to the number of non-empty documents at the end."""
    parser = _parser(reader)
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
    streamed = False
    try:
        while True:
            ev = get()
            t = type(ev)
            size = 1
            if t is scalar_t:
                mark = ev.start_mark
                unique += 1
                value = scalar_value(ev)
                if ev.anchor:
                    _define(anchors, ev.anchor, value, 1, ev, source)
            elif t is map_start_t or t is seq_start_t:
                unique += 1
                if len(stack) >= max_depth:
                    raise too_deep(source, mark_location(ev.start_mark, source), max_depth)
                if ev.tag not in _PLAIN_COLLECTION_TAGS:
                    raise RereadWhole(f"explicit tag {ev.tag}")
                is_map = t is map_start_t
                frame = _Frame({} if is_map else [], is_map, ev.anchor, ev.start_mark)
                if ev.anchor:
                    _define(anchors, ev.anchor, frame.value, 0, ev, source)
                    open_anchors.add(ev.anchor)
                if stack:
                    parent = stack[-1]
                    if len(stack) == 1 and parent.is_map and parent.key == "items" and not is_map:
                        top = parent.value
                        if not streamed and ("kind" not in top or is_list_kind(top["kind"])):
                            frame.stream = True
                            streamed = True
                            item_no = 0
                        elif streamed:
                            raise RereadWhole("two items arrays")
                stack.append(frame)
                continue
            elif t is map_end_t or t is seq_end_t:
                frame = stack.pop()
                value = frame.value
                mark = frame.mark
                size = frame.count
                if frame.anchor:
                    anchors[frame.anchor] = (value, size, anchors[frame.anchor][2])
                    open_anchors.discard(frame.anchor)
                if frame.stream:
                    stack[-1].key = _NO_KEY  # the streamed items are not kept in the List
                    stack[-1].count += size
                    continue
            elif t is alias_t:
                mark = ev.start_mark
                anchor = ev.anchor
                if anchor in open_anchors:
                    raise recursive_alias(source, mark_location(ev.start_mark, source), anchor)
                if anchor not in anchors:
                    raise InputError(source, f"invalid YAML at {mark_location(ev.start_mark, source)}: found undefined "
                                             f"alias{_undefined_alias_name(anchor)}")
                value, size, _ = anchors[anchor]
                extra += size - 1
                allowed = max(alias_budget, unique)
                if extra > allowed:
                    raise alias_bomb(source, mark_location(ev.start_mark, source), allowed)
            elif t is doc_start_t:
                anchors.clear()
                open_anchors.clear()
                root_value = _NO_KEY
                streamed = False
                kindless = []
                continue
            elif t is stream_end_t:
                if docs is not None:
                    docs[0] = doc_no
                return
            else:  # StreamStart, DocumentEnd
                if root_value is not _NO_KEY:
                    done = root_value
                    root_value = _NO_KEY
                    if streamed:
                        kind = done.get("kind") if isinstance(done, dict) else None
                        if not is_list_kind(kind):
                            raise RereadWhole("a top-level items array in an object that is not a List")
                        item_kind = str(kind)[:-4] if kind != "List" else ""
                        for where, item in kindless:
                            if item_kind and isinstance(item, dict) and "kind" not in item:
                                item = {**item, "kind": item_kind}
                            yield where, item
                        kindless = []
                        doc_no += 1
                    elif done is not None:
                        doc_no += 1
                        yield f"document {doc_no}", done
                continue
            # a complete value: place it in its parent
            if not stack:
                root_value = value
                continue
            parent = stack[-1]
            parent.count += size
            if parent.stream:
                where = f"document {doc_no + 1} items[{item_no}]"
                item_no += 1
                top = stack[0].value
                if kindless or (isinstance(value, dict) and "kind" not in value and "kind" not in top):
                    kindless.append((where, value))  # the List's kind (PodList -> Pod) comes later: wait for it
                    continue
                if isinstance(value, dict) and "kind" not in value and top["kind"] != "List":
                    value = {**value, "kind": str(top["kind"])[:-4]}
                yield where, value
                continue
            if not parent.is_map:
                parent.value.append(value)
            elif parent.key is _NO_KEY:
                if isinstance(value, (list, dict)):
                    raise InputError(source, f"invalid YAML at {mark_location(mark, source)}: found unhashable key")
                parent.key = value
            else:
                parent.value[parent.key] = value
                parent.key = _NO_KEY
    except yaml.YAMLError as e:
        raise _yaml_error(e, source) from None
    except InputError:
        raise
    except (ValueError, OverflowError) as e:
        raise InputError(source, f"{source}: a value cannot be read: {brief_str(str(e))}") from None
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


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


def _yaml_error(e: yaml.YAMLError, source: str) -> Exception:
    from scheduling_framework._input import parser_nesting_refusal, yaml_error

    err = yaml_error(e, source)
    index = parser_nesting_refusal(e)
    return err if index is None else NestingRefusedByParser(index, err)


__all__ = ["NestingRefusedByParser", "scalar_value", "yaml_items"]
