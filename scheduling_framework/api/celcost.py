"""Worst-case cost of a DRA CEL selector, estimated as the API server does before it admits one.

Upstream compiles every selector with cel-go and refuses an object whose estimated cost is above
``CELSelectorExpressionMaxCost`` (1,000,000 units): ``...cel.expression: Forbidden: too complex, exceeds cost
limit``; the scheduler's evaluation stops at the same limit (``operation cancelled: actual cost limit exceeded``).
The interpreter we evaluate with has no cost tracking, so the expression is parsed here and its worst case
computed with cel-go's cost model: 1 per identifier, field selection and call, 10 per list literal, 30 per map
literal, string traversals at 0.1 per character, regular expressions at 0.1 x string length x 0.25 x pattern
length, and a comprehension as its range's size times the cost of one iteration of the macro's expansion. Sizes
come from the declared DRA device type (at most 32 domains of 32 attributes, values of at most 64 characters,
driver names of at most 63) and from literals.

The parser here is also the interpreter's (``scheduling_framework.dra.celeval``), and applies cel-go's parser limits
with its wording (code points, rule nesting, visitor depth), plus a bound of its own on the depth of the tree: an
expression past them is a compile error, refused at load as the API server refuses it (``admission_error``), and an
expression that parses always has a cost (``UNKNOWN`` when it cannot be computed: never cheap).

This module is pure Python (no CEL package needed; resource objects use it when they are parsed). The model
follows cel-go and the Kubernetes cost estimator for what selectors use; without a type checker the type of an
expression is inferred from its shape, so an expression near the limit may be estimated a little differently
from upstream (tests/dra/test_cel_cost.py compares it with the real compiler; docs/dra-cel.md).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from scheduling_framework.errors import brief_str

MAX_COST = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
UNKNOWN = 2**64 - 1  # cel-go's unknown size / saturated cost (math.MaxUint64)

ESTIMATE_MESSAGE = "too complex, exceeds cost limit"
RUNTIME_MESSAGE = "operation cancelled: actual cost limit exceeded"

# Declared sizes of the ``device`` variable (k8s.io/api/resource: ResourceSliceMaxAttributesAndCapacitiesPerDevice,
# DeviceAttributeMaxValueLength, DeviceMaxDomainLength, DeviceMaxIDLength, DriverNameMaxLength).
_MAX_ENTRIES = 32
_ATTR_VALUE = 64
_DOMAIN = 63
_ID = 32
_DRIVER = 63


class _Size:
    """A size estimate (maximum only: the limit is compared with the maximum) with the sizes of a container's
    keys and elements when known."""

    __slots__ = ("max", "key", "elem", "scalar", "opaque", "text")

    def __init__(self, max_: int, key: _Size | None = None, elem: _Size | None = None, scalar: bool = False,
                 opaque: bool = False, text: bool = False) -> None:
        self.max = max_
        self.key = key
        self.elem = elem
        self.scalar = scalar
        self.opaque = opaque  # a Quantity or a Semver: compared in constant time
        self.text = text  # known to be a string


_UNKNOWN_SIZE = _Size(UNKNOWN)
_SCALAR = _Size(1, scalar=True)
_ATTR = _Size(_ATTR_VALUE)
_OPAQUE = _Size(UNKNOWN, opaque=True)
_DEVICE = _Size(UNKNOWN)  # a struct: only its fields have sizes
_DEVICE_FIELDS = {
    "driver": _Size(_DRIVER, text=True),
    "allowMultipleAllocations": _Size(1, scalar=True),
    "attributes": _Size(_MAX_ENTRIES, key=_Size(_DOMAIN, text=True),
                        elem=_Size(_MAX_ENTRIES, key=_Size(_ID, text=True), elem=_ATTR)),
    "capacity": _Size(_MAX_ENTRIES, key=_Size(_DOMAIN, text=True),
                      elem=_Size(_MAX_ENTRIES, key=_Size(_ID, text=True), elem=_OPAQUE)),
}


def _add(a: int, b: int) -> int:
    return min(a + b, UNKNOWN)


def _mul(a: int, b: int) -> int:
    return min(a * b, UNKNOWN)


def _factor(size: int, factor: float) -> int:
    x = float(size)  # as cel-go: in float64, saturating
    if x > 0 and factor > 0 and x > UNKNOWN / factor:
        return UNKNOWN
    c = math.ceil(x * factor)
    return UNKNOWN if c >= 2**64 else c


# --- parsing ----------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|[<>+\-*/%!?:.,()\[\]{}])
""", re.VERBOSE | re.DOTALL)

_MACROS = {"all", "exists", "exists_one", "map", "filter"}
_RELATIONS = {"<", "<=", ">", ">=", "==", "!=", "in"}
# Binary operators below && by precedence: relations, then + -, then * / % (all left-associative).
_RELATION, _ADDITIVE, _MULTIPLICATIVE = 2, 3, 4
_LEVEL = {**dict.fromkeys(_RELATIONS, _RELATION), "+": _ADDITIVE, "-": _ADDITIVE,
          "*": _MULTIPLICATIVE, "/": _MULTIPLICATIVE, "%": _MULTIPLICATIVE}

# cel-go's parser limits (parser.NewParser defaults; the Kubernetes CEL environments keep them):
MAX_CODE_POINTS = 100_000  # ExpressionSizeCodePointLimit
MAX_RECURSION_DEPTH = 250  # MaxRecursionDepth: both the parse listener's and the visitor's limit
# This interpreter's own bound on the depth of a parsed expression (every node counted): evaluating and
# estimating recurse through the tree, and Python's stack is far smaller than Go's. cel-go bounds each kind of
# nesting separately (above); an expression within those but deeper than this in total is refused here.
MAX_TREE_DEPTH = 256


class _Unsupported(Exception):
    """Syntax this parser does not accept; ``column`` (0-based) is where it stopped, -1 for an error without a
    location (cel-go's limits). ``syntax`` is false for errors cel-go does not word as ``Syntax error: ...``."""

    def __init__(self, text: str, column: int = 0, syntax: bool = True) -> None:
        self.text = text
        self.column = column
        self.syntax = syntax
        super().__init__(text)


def _limit(text: str) -> _Unsupported:
    return _Unsupported(text, -1, syntax=False)


class UInt(int):
    """A CEL ``uint`` value (an ``int`` that remembers its type)."""

    __slots__ = ()


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                   "\\": "\\", "?": "?", '"': '"', "'": "'", "`": "`"}


def _unescape(m: re.Match[str]) -> str:
    e = m.group(1)
    if e in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[e]
    if e[0] in "xuU":
        code = int(e[1:], 16)
    elif e[0] in "0123":
        code = int(e, 8)
    else:
        raise _Unsupported(f"invalid escape sequence \\{e}")
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise _Unsupported("invalid unicode code point", syntax=False)  # cel-go's unescape (utf8.ValidRune)
    return chr(code)


def _string_value(text: str) -> str | bytes:
    prefix = ""
    while text[0] in "rRbB":
        prefix += text[0].lower()
        text = text[1:]
    q = 3 if text[:3] in ('"""', "'''") else 1
    body = text[q:-q]
    if "r" not in prefix:
        body = _ESCAPE.sub(_unescape, body)
    return body.encode("utf-8", "surrogatepass") if "b" in prefix else body


_INT64 = range(-(2**63), 2**63)


def _number_value(text: str) -> int | float:
    unsigned = text[-1] in "uU"
    if unsigned:
        text = text[:-1]
    base, digits = (16, text[2:]) if text[:2] in ("0x", "0X") else (10, text)
    if base == 10 and any(c in text for c in ".eE"):
        if unsigned:
            raise _Unsupported(text)
        return float(text)
    # 20 digits are more than 64 bits hold: a longer literal is out of range without converting it (int() refuses
    # more than 4,300 digits)
    value = int(digits, base) if len(digits.lstrip("0")) <= 20 else 2**64
    if unsigned:
        if value >= 2**64:
            raise _Unsupported("invalid uint literal", syntax=False)
        return UInt(value)
    return value  # an int out of range is refused by the parser, which knows whether a '-' precedes it


def _balanced(op: str, terms: list[Any]) -> Any:
    """A chain of ``&&`` or ``||`` as a balanced tree, as cel-go's parser builds it (the operators are
    associative, errors included: the leftmost failing term is the one reported whatever the shape)."""
    if len(terms) == 1:
        return terms[0]
    mid = (len(terms) + 1) // 2
    return ("call", op, None, [_balanced(op, terms[:mid]), _balanced(op, terms[mid:])])


class _Parser:
    """CEL's grammar by recursive descent in three methods (``expr``, ``logical``, ``operand``): chains of
    operators are loops, so only a nested expression (parentheses, arguments, list and map entries, an index, the
    else branch of ``?:``) recurses, three Python frames a level.

    cel-go's limits are applied with its wording: more than 100,000 code points; more than 250 open invocations
    of one grammar rule while parsing (its parse listener: ``expression recursion limit exceeded: 250``); more
    than 250 nested operators, selections, calls on a receiver and indexes (its visitor: ``max recursion depth
    exceeded``). Then this interpreter's own bound: a tree deeper than ``MAX_TREE_DEPTH`` nodes.
    """

    def __init__(self, source: str) -> None:
        if len(source) > MAX_CODE_POINTS:
            raise _limit(f"expression code point size exceeds limit: size: {len(source)}, limit {MAX_CODE_POINTS}")
        self.toks: list[tuple[str, str]] = []
        self.starts: list[int] = []
        self.end = len(source)
        pos = 0
        while pos < len(source):
            m = _TOKEN.match(source, pos)
            if m is None:
                rest = source[pos:].split("\n", 1)[0]
                raise _Unsupported(f"token recognition error at: '{rest}'", pos)
            pos = m.end()
            kind = m.lastgroup or ""
            if kind != "ws":
                self.toks.append((kind, m.group()))
                self.starts.append(m.start())
        self.i = 0
        # What cel-go's parse listener counts: open invocations of each grammar rule. The rules that can have the
        # most are expr (one per nesting level), relation (one more in the right operand of a relation) and calc
        # (one more in the right operand of + - and of * / %).
        self.open_exprs = 0
        self.open_relations = 0
        self.open_calcs = 0

    def fail(self, what: str = "") -> _Unsupported:
        if self.i >= len(self.toks):
            return _Unsupported(what or "mismatched input '<EOF>'", self.end)
        return _Unsupported(what or f"mismatched input '{self.toks[self.i][1]}'", self.starts[self.i])

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def peek_operator(self) -> str:
        if self.i < len(self.toks) and self.toks[self.i][0] != "str":
            return self.toks[self.i][1]
        return ""

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise self.fail()
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise self.fail()
        self.i += 1
        return tok

    @staticmethod
    def _opened(count: int) -> int:
        if count > MAX_RECURSION_DEPTH:
            raise _limit(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        return count

    def parse(self) -> Any:
        e = self.expr()
        if self.i != len(self.toks):
            raise self.fail(f"extraneous input '{self.peek()}'")
        _check_depth(e)
        return e

    def expr(self) -> Any:
        self.open_exprs = self._opened(self.open_exprs + 1)
        cond = self.logical()
        if self.peek() == "?":
            self.take()
            a = self.logical()
            self.take(":")
            cond = ("call", "_?_:_", None, [cond, a, self.expr()])
        self.open_exprs -= 1
        return cond

    def logical(self) -> Any:
        """``||`` of ``&&`` of relations; a relation's operands and operators by precedence."""
        disjuncts: list[Any] = []
        conjuncts: list[Any] = []
        while True:
            self.open_relations = self._opened(self.open_relations + 1)
            self.open_calcs = self._opened(self.open_calcs + 1)
            operands = [self.operand()]
            pending: list[str] = []
            while (op := self.peek_operator()) in _LEVEL:
                self.take()
                level = _LEVEL[op]
                while pending and _LEVEL[pending[-1]] >= level:
                    self._reduce(operands, pending.pop())
                pending.append(op)
                if level == _RELATION:
                    self.open_relations = self._opened(self.open_relations + 1)
                else:
                    self.open_calcs = self._opened(self.open_calcs + 1)
                operands.append(self.operand())
            while pending:
                self._reduce(operands, pending.pop())
            self.open_relations -= 1
            self.open_calcs -= 1
            conjuncts.append(operands[0])
            op = self.peek_operator()
            if op == "&&":
                self.take()
                continue
            disjuncts.append(_balanced("&&", conjuncts))
            conjuncts = []
            if op != "||":
                return _balanced("||", disjuncts)
            self.take()

    def _reduce(self, operands: list[Any], op: str) -> None:
        right = operands.pop()
        operands[-1] = ("call", op, None, [operands[-1], right])
        if _LEVEL[op] == _RELATION:
            self.open_relations -= 1
        else:
            self.open_calcs -= 1

    def operand(self) -> Any:
        """Prefix operators, a primary expression, then selections, calls on it and indexes (one method: each
        nesting level costs Python two frames, this and ``expr``)."""
        runs: list[tuple[str, int]] = []
        while (op := self.peek_operator()) in ("!", "-"):
            count = 0
            while self.peek() == op:
                self.take()
                count += 1
            runs.append((op, count))
        # the primary expression
        at = self.i
        kind, text = self.take()
        while text == "." and kind == "op" and self.peek():  # a leading dot: the name is absolute
            at = self.i
            kind, text = self.take()
        e: Any
        if kind == "str":
            e = ("lit", _string_value(text), self.starts[at])  # where it starts: errors about a pattern name it
        elif kind == "num":
            e = ("lit", _number_value(text))
        elif kind == "ident" and text in ("true", "false", "null"):
            e = ("lit", {"true": True, "false": False, "null": None}[text])
        elif kind == "ident" and self.peek() == "(":
            self.take()
            args: list[Any] = []
            while self.peek() != ")":
                args.append(self.expr())
                if self.peek() != ",":
                    break
                self.take(",")
            self.take(")")
            e = self.call(text, None, args)
        elif kind == "ident":
            if self.peek() == "{":
                self.i = at
                raise self.fail("message construction is not supported")
            e = ("ident", text)
        elif text == "(":
            e = self.expr()
            self.take(")")
        elif text == "[":
            elems: list[Any] = []
            while self.peek() != "]":
                elems.append(self.expr())
                if self.peek() != ",":
                    break
                self.take(",")
            self.take("]")
            e = ("list", elems)
        elif text == "{":
            entries: list[tuple[Any, Any]] = []
            while self.peek() != "}":
                k = self.expr()
                self.take(":")
                entries.append((k, self.expr()))
                if self.peek() != ",":
                    break
                self.take(",")
            self.take("}")
            e = ("map", entries)
        else:
            self.i = at
            raise self.fail()
        # an int literal out of int64's range, unless a '-' directly before it brings it back (-9223372036854775808)
        too_big = kind == "num" and type(e[1]) is int and e[1] not in _INT64
        while True:
            p = self.peek_operator()
            if p == ".":
                self.take()
                name = self.take()[1]
                if self.peek() == "(":
                    self.take()
                    args = []
                    while self.peek() != ")":
                        args.append(self.expr())
                        if self.peek() != ",":
                            break
                        self.take(",")
                    self.take(")")
                    e = self.call(name, e, args)
                else:
                    e = ("select", e, name, False)
            elif p == "[":
                self.take()
                idx = self.expr()
                self.take("]")
                e = ("call", "_[_]", None, [e, idx])
            elif p == ".?":
                raise self.fail("unsupported syntax '.?'")
            else:
                break
        for i, (op, count) in enumerate(reversed(runs)):
            if op == "-" and count % 2 and e[0] == "lit" and type(e[1]) in (int, float) and (
                    type(e[1]) is float or -e[1] in _INT64):
                e = ("lit", -e[1])
                if i == 0:
                    too_big = False
            elif count % 2:
                # as cel-go's parser: an even run of the same prefix operator cancels out
                e = ("call", op + "_", None, [e])
        if too_big:
            raise _Unsupported("invalid int literal", self.starts[at], syntax=False)
        return e

    def call(self, name: str, target: Any, args: list[Any]) -> Any:
        if target is not None and name in _MACROS and args and args[0][0] == "ident" and len(args) in (2, 3):
            return ("comp", name, args[0][1], target, args[1:])
        if target == ("ident", "strings") and name == "quote":
            return ("call", "strings.quote", None, args)
        if target is not None and target == ("ident", "cel") and name == "bind" and len(args) == 3 \
                and args[0][0] == "ident":
            return ("bind", args[0][1], args[1], args[2])
        if target is None and name == "has" and len(args) == 1 and args[0][0] == "select":
            _, operand, field, _ = args[0]
            return ("select", operand, field, True)
        return ("call", name, target, args)


def _children(node: Any) -> list[Any]:
    """The sub-expressions of a parsed node."""
    kind = node[0]
    if kind == "select":
        return [node[1]]
    if kind == "call":
        return ([node[2]] if node[2] is not None else []) + list(node[3])
    if kind == "list":
        return list(node[1])
    if kind == "map":
        return [x for entry in node[1] for x in entry]
    if kind == "bind":
        return [node[2], node[3]]
    if kind == "comp":
        return [node[3], *node[4]]
    return []


def _visited(node: Any) -> bool:
    """Whether cel-go's parser visitor counts this node against its depth limit: ``?:``, relations and
    arithmetic, selections, calls on a receiver (macros, ``cel.bind`` and ``strings.quote`` included) and indexes;
    not ``&&``/``||``, prefix operators, global calls, literals, lists and maps."""
    kind = node[0]
    if kind in ("select", "comp", "bind"):
        return True
    if kind != "call":
        return False
    fn = node[1]
    return node[2] is not None or fn in _LEVEL or fn in ("_?_:_", "_[_]", "strings.quote")


def _check_depth(tree: Any) -> None:
    """cel-go's visitor limit, then this interpreter's bound on the tree's depth (iteratively: no recursion)."""
    deepest_visited = deepest = 0
    stack = [(tree, 0, 0)]
    while stack:
        node, visited, depth = stack.pop()
        visited += _visited(node)
        depth += 1
        deepest_visited = max(deepest_visited, visited)
        deepest = max(deepest, depth)
        stack.extend((child, visited, depth) for child in _children(node))
    if deepest_visited > MAX_RECURSION_DEPTH:
        raise _limit("max recursion depth exceeded")
    if deepest > MAX_TREE_DEPTH:
        raise _limit(f"expression nested too deeply: more than {MAX_TREE_DEPTH} levels (this interpreter's limit)")


def parse(source: str) -> Any:
    """The parsed tree of ``source``; raises ``_Unsupported`` (syntax, or one of the limits above)."""
    return _Parser(source).parse()


# --- estimating -------------------------------------------------------------------------------------

# Calls whose result is a scalar (size 1) whatever their operands.
_SCALAR_CALLS = {"size", "int", "uint", "double", "bool", "!_", "-_", "contains", "startsWith",
                 "endsWith", "matches", "compareTo", "isLessThan", "isGreaterThan", "sign", "isInteger",
                 "asInteger", "asApproximateFloat", "major", "minor", "patch", "isQuantity", "isSemver",
                 "isSorted", "indexOf", "lastIndexOf", "*", "/", "%"} | _RELATIONS | {"&&", "||"}


class _Estimator:
    def __init__(self) -> None:
        self.scopes: dict[str, list[_Size]] = {}

    def size_of(self, node: Any, computed: _Size | None) -> _Size:
        if computed is not None:
            return computed
        kind = node[0]
        if kind == "lit":
            v = node[1]
            if isinstance(v, (str, bytes)):
                return _Size(len(v), text=isinstance(v, str))
            return _SCALAR
        return _UNKNOWN_SIZE

    def cost(self, node: Any) -> tuple[int, _Size]:
        kind = node[0]
        if kind == "lit":
            return 0, self.size_of(node, None)
        if kind == "ident":
            stack = self.scopes.get(node[1])
            if stack:
                return 1, stack[-1]
            return 1, _DEVICE if node[1] == "device" else _UNKNOWN_SIZE
        if kind == "select":
            _, operand, field, test_only = node
            c, s = self.cost(operand)
            if test_only:
                return c, _SCALAR  # Kubernetes does not charge the presence test itself
            if s is _DEVICE:
                return _add(c, 1), _DEVICE_FIELDS.get(field, _UNKNOWN_SIZE)
            return _add(c, 1), s.elem if s.elem is not None else _UNKNOWN_SIZE
        if kind == "list":
            total, elem = 10, None
            for e in node[1]:
                c, s = self.cost(e)
                total = _add(total, c)
                elem = s if elem is None or s.max > elem.max else elem
            return total, _Size(len(node[1]), key=_SCALAR, elem=elem or _Size(0))
        if kind == "map":
            total, key, val = 30, None, None
            for k, v in node[1]:
                ck, sk = self.cost(k)
                cv, sv = self.cost(v)
                total = _add(total, _add(ck, cv))
                key = sk if key is None or sk.max > key.max else key
                val = sv if val is None or sv.max > val.max else val
            return total, _Size(len(node[1]), key=key or _Size(0), elem=val or _Size(0))
        if kind == "bind":
            _, var, init, body = node
            ci, si = self.cost(init)
            self.scopes.setdefault(var, []).append(si)
            cb, sb = self.cost(body)
            self.scopes[var].pop()
            return _add(_add(10, ci), cb), sb  # the empty range list of the expansion, then init and body
        if kind == "comp":
            return self.comprehension(node)
        return self.call(node)

    def comprehension(self, node: Any) -> tuple[int, _Size]:
        _, macro, var, rng, args = node
        cr, sr = self.cost(rng)
        # iterating a list binds its elements, a map its keys
        self.scopes.setdefault(var, []).append((sr.elem if sr.key is _SCALAR else sr.key) or _UNKNOWN_SIZE)
        costs = [self.cost(a) for a in args]
        self.scopes[var].pop()
        body = costs[-1][0]
        # per-iteration cost of cel-go's expansion: loop condition plus loop step around the macro's argument(s)
        if macro == "all":
            init, step, result = 0, 1 + 1 + 1 + body, 1        # @not_strictly_false(accu); accu && p
        elif macro == "exists":
            init, step, result = 0, 1 + 1 + 1 + 1 + body, 1    # @not_strictly_false(!accu); accu || p
        elif macro == "exists_one":
            init, step, result = 0, body + 2, 2               # p ? accu + 1 : accu; accu == 1
        elif macro == "map" and len(args) == 1:
            init, step, result = 10, 1 + 10 + 1 + body, 1     # accu + [f(x)]
        elif macro == "map":
            init, step, result = 10, costs[0][0] + 1 + 10 + 1 + body, 1
        else:  # filter: p ? accu + [x] : accu
            init, step, result = 10, body + 1 + 10 + 1 + 1, 1
        total = _add(_add(_add(cr, init), result), _mul(sr.max, step))
        if macro in ("map", "filter"):
            elem = costs[-1][1] if macro == "map" else (sr.elem or _UNKNOWN_SIZE)
            return total, _Size(sr.max, key=_SCALAR, elem=elem)
        return total, _SCALAR

    def call(self, node: Any) -> tuple[int, _Size]:
        _, fn, target, args = node
        total = 0
        ts: _Size | None = None
        if target is not None:
            total, ts = self.cost(target)
        sized = [self.cost(a) for a in args]
        argsum = 0
        for c, _s in sized:
            argsum = _add(argsum, c)
        sizes = [s for _c, s in sized]
        if fn in ("&&", "||"):
            return _add(total, argsum), _SCALAR
        if fn == "_?_:_":
            c0, c1, c2 = (c for c, _s in sized)
            s1, s2 = sizes[1], sizes[2]
            return _add(total, _add(c0, max(c1, c2))), (s1 if s1.max >= s2.max else s2)
        if fn == "dyn" and len(args) == 1:
            return _add(1, argsum), sizes[0]
        if fn == "_[_]":
            container = sizes[0]
            return _add(1, argsum), container.elem if container.elem is not None else _UNKNOWN_SIZE
        fn_cost, result = self.function_cost(fn, ts, sizes, args)
        return _add(_add(total, argsum), fn_cost), result

    def function_cost(self, fn: str, target: _Size | None, sizes: list[_Size],
                      args: list[Any]) -> tuple[int, _Size]:
        t = target.max if target is not None else 0
        if fn in ("==", "!=") and len(sizes) == 2 and sizes[0].opaque and sizes[1].opaque:
            return 1, _SCALAR
        if fn in ("quantity", "semver", "isQuantity", "isSemver") and sizes:
            return _factor(sizes[0].max, 0.1), (_OPAQUE if fn in ("quantity", "semver") else _SCALAR)
        if fn in ("add", "sub") and target is not None:
            return 1, _OPAQUE
        if fn in ("==", "!=", "<", "<=", ">", ">=") and len(sizes) == 2:
            smallest = min(sizes[0].max, sizes[1].max)
            return _factor(smallest, 0.1) if smallest > 0 else 0, _SCALAR
        if fn == "in" and len(sizes) == 2:
            container = sizes[1]
            # a list is searched element by element; a map lookup costs 1; a value of unknown kind (an
            # attribute) may be either, and the larger cost counts
            known_map = container.key is not None and container.key is not _SCALAR
            return (1 if known_map else container.max), _SCALAR
        if fn == "+" and len(sizes) == 2:
            a, b = sizes
            total = _Size(_add(a.max, b.max), key=a.key or b.key, elem=a.elem or b.elem, scalar=a.scalar)
            if a.scalar or b.scalar:
                return 1, _SCALAR
            if a.key is _SCALAR or b.key is _SCALAR:  # lists: O(1)
                return 1, total
            return _factor(total.max, 0.1), total
        if target is not None:
            if fn in ("startsWith", "endsWith") and sizes:
                return _factor(sizes[0].max, 0.1), _SCALAR
            if fn == "matches" and sizes:
                return _mul(_factor(_add(t, 1), 0.1), _factor(sizes[0].max, 0.25)), _SCALAR
            if fn == "contains" and sizes:
                return _mul(_factor(t, 0.1), _factor(sizes[0].max, 0.1)), _SCALAR
            if fn in ("find", "findAll") and sizes:
                cost = _mul(_factor(_add(t, 1), 0.1), _factor(sizes[0].max, 0.25))
                return cost, (_Size(t) if fn == "find" else _Size(t, key=_SCALAR, elem=_Size(t)))
            if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
                if target.key is _SCALAR:
                    el = target.elem
                    # string elements add their traversal; the Kubernetes estimator knows their size only from a
                    # declared path, which a list never has here
                    per = _add(1, _factor(UNKNOWN, 0.1)) if el is not None and el.text else 1
                    return _mul(t, per), (el if fn in ("max", "min") and el is not None else _SCALAR)
                return _factor(t, 0.1), _SCALAR
            if fn in ("lowerAscii", "upperAscii", "substring", "trim"):
                return _factor(t, 0.1), _Size(t, text=True)
            if fn == "replace":
                return _factor(t, 0.2), _UNKNOWN_SIZE if t >= UNKNOWN else _Size(_mul(t + 1, max(
                    (s.max for s in sizes[1:2]), default=1)) + t)
            if fn == "split":
                return _factor(t, 0.2), _Size(t, key=_SCALAR, elem=_Size(UNKNOWN, text=True))
            if fn == "join":
                elem_max = target.elem.max if target.elem is not None else 0
                size = _mul(t, elem_max)
                if sizes:
                    size = _add(size, _mul(sizes[0].max, max(t - 1, 0)))
                return _factor(size, 0.1), _Size(size)
            if fn in ("charAt",):
                return 1, _Size(1)
        if fn == "strings.quote" and sizes:
            return _factor(sizes[0].max, 0.1), _Size(_add(_mul(sizes[0].max, 2), 2))
        if fn == "bytes" and sizes:
            return _factor(sizes[0].max, 0.1), _Size(_mul(sizes[0].max, 4))
        if fn == "string" and sizes:
            if sizes[0].scalar or sizes[0].text:
                return 1, _Size(UNKNOWN, text=True)
            # a value that may be bytes: the bytes-to-string overload's traversal and size count
            return max(1, _factor(sizes[0].max, 0.1)), _Size(sizes[0].max, text=True)
        if fn in _SCALAR_CALLS:
            return 1, _SCALAR
        return 1, _UNKNOWN_SIZE


@lru_cache(maxsize=4096)
def estimate_cost(expression: str) -> int | None:
    """The estimated worst-case cost of ``expression`` in cel-go units, or None when it does not parse here
    (the compiler then reports the error, and the expression is never evaluated). An expression that parses but
    whose cost cannot be computed is estimated at ``UNKNOWN``, over any limit: unknown is never cheap."""
    source = expression.strip()
    try:
        tree = parse(source)
    except _Unsupported:
        return None
    try:
        cost, _ = _Estimator().cost(tree)
    except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError):
        return UNKNOWN
    return cost


def format_error(source: str, e: _Unsupported) -> str:
    """``e`` as cel-go prints an issue: ``ERROR: <input>:line:col: Syntax error: ...``; ``-1:0`` without a location."""
    if e.column < 0:
        return f"ERROR: <input>:-1:0: {e.text}"
    before = source[:e.column]
    line = before.count("\n") + 1
    col = e.column - (before.rfind("\n") + 1) + 1  # 1-based, as cel-go prints it
    return f"ERROR: <input>:{line}:{col}: {'Syntax error: ' if e.syntax else ''}{e.text}"


def exceeds_limit(expression: str, limit: int = MAX_COST) -> bool:
    """Whether the API server would refuse ``expression`` as too expensive."""
    cost = estimate_cost(expression)
    return cost is not None and cost > limit


def admission_error(expression: str) -> str | None:
    """Why the API server refuses a selector when its object is created, in its words, or None.

    Two refusals are made when a manifest is loaded: an estimated cost over ``MAX_COST`` (``Forbidden: too complex,
    exceeds cost limit``), and an expression beyond the parser's limits (cel-go's size, nesting and recursion
    limits), whose cost cannot be estimated (``Invalid value: "...": compilation failed: ERROR: <input>:-1:0: max
    recursion depth exceeded``). Other compile errors are left to the scheduler, where the pods that need the
    selector end in Error naming the class or claim and the selector.
    """
    try:
        parse(expression)
    except _Unsupported as e:
        if e.column >= 0:
            return None
        return f'Invalid value: "{brief_str(expression)}": compilation failed: {format_error(expression, e)}'
    if exceeds_limit(expression):
        return f"Forbidden: {ESTIMATE_MESSAGE}"
    return None


__all__ = ["ESTIMATE_MESSAGE", "MAX_CODE_POINTS", "MAX_COST", "MAX_RECURSION_DEPTH", "MAX_TREE_DEPTH",
           "RUNTIME_MESSAGE", "UNKNOWN", "admission_error", "estimate_cost", "exceeds_limit", "format_error", "parse"]
