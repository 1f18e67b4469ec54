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


class _Unsupported(Exception):
    """Syntax this parser does not accept; ``column`` (0-based) is where it stopped."""

    def __init__(self, text: str, column: int = 0) -> None:
        self.text = text
        self.column = column
        super().__init__(text)


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
        return chr(int(e[1:], 16))
    if e[0] in "0123":
        return chr(int(e, 8))
    raise _Unsupported(f"invalid escape sequence \\{e}")


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


def _number_value(text: str) -> int | float:
    unsigned = text[-1] in "uU"
    if unsigned:
        text = text[:-1]
    if text[:2] in ("0x", "0X"):
        value: int | float = int(text, 16)
    elif any(c in text for c in ".eE"):
        if unsigned:
            raise _Unsupported(text)
        return float(text)
    else:
        value = int(text)
    if unsigned:
        if value >= 2**64:
            raise _Unsupported(text)
        return UInt(value)
    return value


class _Parser:
    def __init__(self, source: str) -> None:
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

    def fail(self, what: str = "") -> _Unsupported:
        if self.i >= len(self.toks):
            return _Unsupported(what or "mismatched input '<EOF>'", self.end)
        return _Unsupported(what or f"mismatched input '{self.toks[self.i][1]}'", self.starts[self.i])

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise self.fail()
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise self.fail()
        self.i += 1
        return tok

    def parse(self) -> Any:
        e = self.expr()
        if self.i != len(self.toks):
            raise self.fail(f"extraneous input '{self.peek()}'")
        return e

    def expr(self) -> Any:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.binary(0)
            self.take(":")
            return ("call", "_?_:_", None, [cond, a, self.expr()])
        return cond

    _LEVELS = (("||",), ("&&",), tuple(_RELATIONS), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> Any:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level] and self.toks[self.i][0] != "str":
            op = self.take()[1]
            left = ("call", op, None, [left, self.binary(level + 1)])
        return left

    def unary(self) -> Any:
        if self.peek() in ("!", "-"):
            op = self.peek()
            count = 0
            while self.peek() == op:
                self.take()
                count += 1
            operand = self.member() if self.peek() not in ("!", "-") else self.unary()
            if op == "-" and count % 2 and operand[0] == "lit" and type(operand[1]) in (int, float):
                return ("lit", -operand[1])
            # as cel-go's parser: an even run of the same prefix operator cancels out
            return operand if count % 2 == 0 else ("call", op + "_", None, [operand])
        return self.member()

    def args(self) -> list[Any]:
        self.take("(")
        out: list[Any] = []
        while self.peek() != ")":
            out.append(self.expr())
            if self.peek() != ",":
                break
            self.take(",")
        self.take(")")
        return out

    def member(self) -> Any:
        e = self.primary()
        while True:
            p = self.peek()
            if p == ".":
                self.take()
                name = self.take()[1]
                if self.peek() == "(":
                    e = self.call(name, e, self.args())
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

    def primary(self) -> Any:
        at = self.i
        kind, text = self.take()
        if kind == "str":
            return ("lit", _string_value(text))
        if kind == "num":
            return ("lit", _number_value(text))
        if kind == "ident":
            if text in ("true", "false", "null"):
                return ("lit", {"true": True, "false": False, "null": None}[text])
            if self.peek() == "(":
                return self.call(text, None, self.args())
            if self.peek() == "{":
                self.i = at
                raise self.fail("message construction is not supported")
            return ("ident", text)
        if text == "(":
            e = self.expr()
            self.take(")")
            return e
        if text == "[":
            elems: list[Any] = []
            while self.peek() != "]":
                elems.append(self.expr())
                if self.peek() != ",":
                    break
                self.take(",")
            self.take("]")
            return ("list", elems)
        if text == "{":
            entries: list[tuple[Any, Any]] = []
            while self.peek() != "}":
                k = self.expr()
                self.take(":")
                entries.append((k, self.expr()))
                if self.peek() != ",":
                    break
                self.take(",")
            self.take("}")
            return ("map", entries)
        if text == "." and self.peek():
            return self.primary()
        self.i = at
        raise self.fail()


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
    (the compiler then reports the syntax error)."""
    source = expression.strip()
    try:
        tree = _Parser(source).parse()
        cost, _ = _Estimator().cost(tree)
    except (_Unsupported, RecursionError, IndexError, ValueError):
        return None
    return cost


def exceeds_limit(expression: str, limit: int = MAX_COST) -> bool:
    """Whether the API server would refuse ``expression`` as too expensive."""
    cost = estimate_cost(expression)
    return cost is not None and cost > limit


__all__ = ["ESTIMATE_MESSAGE", "MAX_COST", "RUNTIME_MESSAGE", "estimate_cost", "exceeds_limit"]
