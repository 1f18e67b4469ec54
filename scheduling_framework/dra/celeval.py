"""A CEL interpreter in pure Python for DRA device selectors (the parser is ``scheduling_framework.api.celcost``'s).

It implements the part of CEL that device selectors use, with cel-go's semantics: int (64-bit, overflow is an
error), uint, double, string, bytes, bool, null, lists and maps; heterogeneous equality (values of different
types are unequal, numbers compare by value); ``&&`` / ``||`` / ``?:`` that absorb errors as cel-go does (``false
&& error`` is false; when both sides fail, the left error is reported); the macros ``has``, ``all``, ``exists``,
``exists_one``, ``map`` and ``filter``; the standard functions (``size``, ``contains``, ``startsWith``,
``endsWith``, ``matches``, the conversions); and whatever functions the caller registers (the Kubernetes libraries
are registered by ``scheduling_framework.dra.cel``). Regular expressions are RE2's (``google-re2``): linear-time
matching and the syntax of cel-go's Go ``regexp``, with Go's error messages. Timestamps, durations, protobuf
messages and the optional syntax are not supported (docs/dra-cel.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import re2

from scheduling_framework.api.celcost import UInt, _children, _Unsupported, format_error, parse

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
# Kubernetes' CEL types travel as one-key maps with a reserved key (scheduling_framework.dra.cel builds them)
QUANTITY_KEY = "\x00quantity"
SEMVER_KEY = "\x00semver"
_UINT_MAX = 2**64 - 1


class EvalError(Exception):
    """A CEL runtime error (cel-go's wording in ``args[0]``)."""


class CompileError(Exception):
    """The expression does not parse, or names something the environment does not declare."""


class DefaultingMap(dict[str, Any]):
    """A map whose missing keys read as an empty map (the DRA ``attributes`` / ``capacity`` domains)."""

    __slots__ = ()


_MACROS = ("all", "exists", "exists_one", "map", "filter")
_BUILTINS = frozenset({"size", "int", "uint", "double", "string", "bytes", "bool", "dyn", "contains",
                       "startsWith", "endsWith", "matches"})


def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, UInt):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, Mapping):
        if len(v) == 1 and QUANTITY_KEY in v:
            return "kubernetes.Quantity"
        if len(v) == 1 and SEMVER_KEY in v:
            return "kubernetes.Semver"
        return "map"
    return type(v).__name__


def type_name(v: Any) -> str:
    """The CEL type name of a value (``int``, ``string``, ``kubernetes.Quantity``...)."""
    return _type_name(v)


def _no_overload(_name: str = "") -> EvalError:
    return EvalError("no such overload")


def _unary_no_overload(fn: str, v: Any) -> EvalError:
    # CEL's own types get the plain message; the Kubernetes types (no such operator at all) its name
    return EvalError(f"no such overload: {fn}" if _type_name(v).startswith("kubernetes.") else "no such overload")


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def cel_equal(a: Any, b: Any) -> bool:
    """CEL equality: numbers by value across int/uint/double, containers element-wise, other types never equal."""
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            found, other = _map_get(b, k)
            if not found or not cel_equal(v, other):
                return False
        return True
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    return bool(a == b)


def _is_map(v: Any) -> bool:
    """A CEL map (not a Quantity or Semver, which travel as tagged maps)."""
    return isinstance(v, Mapping) and not (len(v) == 1 and (QUANTITY_KEY in v or SEMVER_KEY in v))


def _map_get(m: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    if _is_num(key):
        for k, v in m.items():
            if _is_num(k) and k == key:
                return True, v
        return False, None
    if isinstance(key, bool):
        for k, v in m.items():
            if isinstance(k, bool) and k == key:
                return True, v
        return False, None
    if key in m:
        return True, m[key]
    if isinstance(m, DefaultingMap):
        return True, {}
    return False, None


def _check_int(v: int) -> int:
    if v < _INT_MIN or v > _INT_MAX:
        raise EvalError("integer overflow")
    return v


def _check_uint(v: int) -> UInt:
    if v < 0 or v > _UINT_MAX:
        raise EvalError("unsigned integer overflow")
    return UInt(v)


def _arith(op: str, a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if op == "+":
            return _check_int(a + b)
        if op == "-":
            return _check_int(a - b)
        if op == "*":
            return _check_int(a * b)
        if b == 0:
            raise EvalError("division by zero" if op == "/" else "modulus by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # truncated, as Go
        return _check_int(q) if op == "/" else a - b * q
    if ta is UInt and tb is UInt:
        if op == "+":
            return _check_uint(a + b)
        if op == "-":
            return _check_uint(a - b)
        if op == "*":
            return _check_uint(a * b)
        if b == 0:
            raise EvalError("division by zero" if op == "/" else "modulus by zero")
        return UInt(a // b) if op == "/" else UInt(a % b)
    if ta is float and tb is float:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1.0, b) if a != 0 else math.nan
            return a / b
    if op == "+" and ta is tb and ta in (str, bytes):
        return a + b
    if op == "+" and ta is list and tb is list:
        return a + b
    # a left operand whose type has the operator gets cel-go's plain message; one whose type lacks it, the
    # operator's name
    has_op = ta in (int, UInt) or (ta is float and op != "%") or (op == "+" and ta in (str, bytes, list))
    raise _no_overload() if has_op else EvalError(f"no such overload: _{op}_")


def _compare(op: str, a: Any, b: Any) -> int:
    if (_is_num(a) and _is_num(b)) or (type(a) is type(b) and type(a) in (str, bytes, bool)):
        return int(a > b) - int(a < b)
    comparable = _is_num(a) or type(a) in (str, bytes, bool)
    raise _no_overload() if comparable else EvalError(f"no such overload: _{op}_")


def _size(v: Any) -> int:
    if isinstance(v, (str, bytes, list)) or _is_map(v):
        return len(v)
    raise _no_overload()


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        raise _no_overload()
    if isinstance(v, int):
        return _check_int(int(v))
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v) or not (_INT_MIN <= v < 2**63):
            raise EvalError("double is out of range for int")
        return int(v)
    if isinstance(v, str):
        try:
            return _check_int(int(v, 10))
        except ValueError:
            raise EvalError("type conversion error from 'string' to 'int'") from None
    raise _no_overload()


def _to_uint(v: Any) -> UInt:
    if isinstance(v, bool):
        raise _no_overload()
    if isinstance(v, int):
        return _check_uint(int(v))
    if isinstance(v, float):
        if math.isnan(v) or not (0 <= v < 2**64):
            raise EvalError("double is out of range for uint")
        return UInt(int(v))
    if isinstance(v, str):
        try:
            return _check_uint(int(v, 10))
        except ValueError:
            raise EvalError("type conversion error from 'string' to 'uint'") from None
    raise _no_overload()


def _to_double(v: Any) -> float:
    if _is_num(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise EvalError("type conversion error from 'string' to 'double'") from None
    raise _no_overload()


def _to_string(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e21 else str(int(v)) if math.isfinite(v) else str(v)
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    raise _no_overload()


def _to_bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    raise _no_overload()


def _to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        table = {"1": True, "t": True, "true": True, "TRUE": True, "True": True,
                 "0": False, "f": False, "false": False, "FALSE": False, "False": False}
        if v in table:
            return table[v]
        raise EvalError("type conversion error from 'string' to 'bool'")
    raise _no_overload()


# --- regular expressions: RE2, as cel-go (Go's regexp, RE2 syntax, linear time) -----------------------------

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would print every refused pattern on stderr

# RE2's error texts (re2.h) and the same errors in the words of Go's regexp/syntax, which cel-go reports
_GO_ERROR_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
}


def _go_regexp_error(re2_message: str) -> str:
    code, _, arg = re2_message.partition(": ")
    go = _GO_ERROR_CODES.get(code)
    if go is None:
        return f"error parsing regexp: {re2_message}"
    return f"error parsing regexp: {go}: `{arg}`"


def _byte_escape(pattern: str) -> bool:
    """Whether ``pattern`` uses ``\\C`` (any byte), which RE2 accepts and Go's regexp refuses."""
    i = pattern.find("\\")
    while 0 <= i < len(pattern) - 1:
        if pattern[i + 1] == "C":
            return True
        i = pattern.find("\\", i + 2)
    return False


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> tuple[Any, str | None]:
    """(the compiled pattern, None), or (None, Go's ``error parsing regexp: ...``) when RE2 syntax refuses it."""
    if _byte_escape(pattern):
        return None, "error parsing regexp: invalid escape sequence: `\\C`"
    try:
        return re2.compile(pattern, _RE2_OPTIONS), None
    except re2.error as e:
        message = e.args[0] if e.args else ""
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        return None, _go_regexp_error(text)
    except UnicodeEncodeError:
        return None, "error parsing regexp: invalid UTF-8: `" + pattern + "`"


def regex_error(pattern: str) -> str | None:
    """Go's ``error parsing regexp: ...`` when RE2 syntax refuses ``pattern``, else None."""
    return _compiled(pattern)[1]


def compile_regex(pattern: str, prefix: str = "") -> Any:
    """``pattern`` compiled by RE2 (matching takes time linear in the text, as Go's regexp: no backtracking);
    raises EvalError with cel-go's wording (``prefix`` + ``error parsing regexp: ...``) when RE2 syntax refuses it."""
    rx, error = _compiled(pattern)
    if error is not None:
        raise EvalError(prefix + error)
    return rx


def regex_find_all(rx: Any, text: str, limit: int = -1) -> list[str]:
    """The successive non-overlapping matches of ``rx`` in ``text``, at most ``limit`` (all when negative), with
    Go's rule that an empty match right after a previous match does not count (Go's ``FindAllString``)."""
    if limit == 0:
        return []
    data = text.encode("utf-8")
    found: list[str] = []
    pos, previous_end = 0, -1
    while pos <= len(data) and (limit < 0 or len(found) < limit):
        m = rx.search(data, pos)
        if m is None:
            break
        start, end = m.span()
        accept = True
        if end == pos:  # an empty match
            accept = start != previous_end
            pos += _utf8_width(data[pos]) if pos < len(data) else 1
        else:
            pos = end
        previous_end = end
        if accept:
            found.append(data[start:end].decode("utf-8"))
    return found


def _utf8_width(lead: int) -> int:
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def constant_pattern_errors(program: Program) -> tuple[str | None, str | None]:
    """cel-go's errors for constant regular expressions RE2 syntax refuses, as (check time, program time):

    - its type checker's literal validation (``cel.ValidateRegexLiterals``, enabled by Kubernetes): a ``matches``
      call whose first argument is a string literal (the pattern of ``s.matches(p)``, the string of
      ``matches(s, p)``) that does not compile is ``ERROR: <input>:line:col: invalid matches argument``;
    - its program planner's regex optimizations (``matches``, and Kubernetes' ``find`` and ``findAll``): a
      literal pattern that does not compile fails the program: ``error parsing regexp: ...``.
    """
    check: tuple[int, str] | None = None
    plan: tuple[int, str] | None = None
    stack = [program.tree]
    while stack:
        node = stack.pop()
        stack.extend(_children(node))
        if node[0] != "call" or node[1] not in ("matches", "find", "findAll"):
            continue
        _, fn, target, args = node
        if fn == "matches" and args and _is_string_literal(args[0]) and regex_error(args[0][1]) is not None:
            at = args[0][2]
            if check is None or at < check[0]:
                check = (at, args[0][1])
        operands = ([target] if target is not None else []) + list(args)
        if len(operands) > 1 and _is_string_literal(operands[1]):
            error = regex_error(operands[1][1])
            if error is not None and (plan is None or operands[1][2] < plan[0]):
                plan = (operands[1][2], error)
    check_error = None
    if check is not None:
        before = program.source[:check[0]]
        line, col = before.count("\n") + 1, check[0] - (before.rfind("\n") + 1) + 1
        check_error = f"ERROR: <input>:{line}:{col}: invalid matches argument"
    return check_error, (plan[1] if plan is not None else None)


def _is_string_literal(node: Any) -> bool:
    return node[0] == "lit" and len(node) == 3 and isinstance(node[1], str)


def _string_method(name: str, target: Any, args: list[Any]) -> Any:
    if len(args) != 1 or not isinstance(target, str) or not isinstance(args[0], str):
        raise EvalError("no such overload: matches" if name == "matches" else "no such overload")
    arg = args[0]
    if name == "contains":
        return arg in target
    if name == "startsWith":
        return target.startswith(arg)
    if name == "endsWith":
        return target.endswith(arg)
    return compile_regex(arg).search(target) is not None  # matches: an unanchored search, as cel-go


class Program:
    """A parsed expression, evaluated against a mapping of variables with a mapping of functions."""

    __slots__ = ("source", "tree", "variables", "functions")

    def __init__(self, source: str, tree: Any) -> None:
        self.source = source
        self.tree = tree
        self.variables: set[str] = set()
        self.functions: set[str] = set()
        _collect(tree, set(), self.variables, self.functions)

    def execute(self, variables: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]]) -> Any:
        return _Eval(variables, functions).eval(self.tree)


def _collect(node: Any, bound: set[str], variables: set[str], functions: set[str]) -> None:
    kind = node[0]
    if kind == "ident":
        if node[1] not in bound:
            variables.add(node[1])
    elif kind == "select":
        _collect(node[1], bound, variables, functions)
    elif kind == "call":
        _, fn, target, args = node
        functions.add(fn)
        if target is not None:
            _collect(target, bound, variables, functions)
        for a in args:
            _collect(a, bound, variables, functions)
    elif kind == "list":
        for e in node[1]:
            _collect(e, bound, variables, functions)
    elif kind == "map":
        for k, v in node[1]:
            _collect(k, bound, variables, functions)
            _collect(v, bound, variables, functions)
    elif kind == "bind":
        _, var, init, body = node
        _collect(init, bound, variables, functions)
        _collect(body, bound | {var}, variables, functions)
    elif kind == "comp":
        _, _macro, var, rng, args = node
        _collect(rng, bound, variables, functions)
        for a in args:
            _collect(a, bound | {var}, variables, functions)


def compile_program(source: str) -> Program:
    """Parse ``source``; raises CompileError with cel-go's ``ERROR: <input>:line:col: Syntax error: ...``, or
    ``ERROR: <input>:-1:0: ...`` for the parser's limits (size, nesting, recursion)."""
    try:
        tree = parse(source)
    except _Unsupported as e:
        raise CompileError(format_error(source, e)) from None
    except RecursionError:  # the parser's limits come first; this is Python's stack running out before them
        raise CompileError("ERROR: <input>:-1:0: max recursion depth exceeded") from None
    return Program(source, tree)


class _Lazy:
    """A ``cel.bind`` value not computed yet, with the variables in scope where it was bound."""

    __slots__ = ("node", "scopes")

    def __init__(self, node: Any, scopes: dict[str, list[Any]]) -> None:
        self.node = node
        self.scopes = scopes

    def force(self, ev: _Eval) -> Any:
        saved = ev.scopes
        ev.scopes = self.scopes
        try:
            return ev.eval(self.node)
        finally:
            ev.scopes = saved


class _Eval:
    __slots__ = ("vars", "fns", "scopes")

    def __init__(self, variables: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]]) -> None:
        self.vars = variables
        self.fns = functions
        self.scopes: dict[str, list[Any]] = {}

    def eval(self, node: Any) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "ident":
            stack = self.scopes.get(node[1])
            if stack:
                value = stack[-1]
                if type(value) is _Lazy:
                    value = stack[-1] = value.force(self)
                return value
            if node[1] in self.vars:
                return self.vars[node[1]]
            raise EvalError(f"no such attribute(s): {node[1]}")
        if kind == "select":
            _, operand, field, test_only = node
            target = self.eval(operand)
            if not _is_map(target):
                raise EvalError(f"no such key: {field}" if not test_only else "no such overload")
            if test_only:
                return field in target
            found, value = _map_get(target, field)
            if not found:
                raise EvalError(f"no such key: {field}")
            return value
        if kind == "call":
            return self.call(node)
        if kind == "list":
            return [self.eval(e) for e in node[1]]
        if kind == "map":
            out: dict[Any, Any] = {}
            for k, v in node[1]:
                key = self.eval(k)
                if not isinstance(key, (str, int)):
                    raise EvalError(f"unsupported key type: {_type_name(key)}")
                if key in out:
                    raise EvalError(f"Failed with repeated key: {key}")
                out[key] = self.eval(v)
            return out
        if kind == "bind":
            # cel.bind's value is computed when the body first reads it (never, if it does not)
            _, var, init, body = node
            self.scopes.setdefault(var, []).append(_Lazy(init, {k: list(v) for k, v in self.scopes.items() if v}))
            try:
                return self.eval(body)
            finally:
                self.scopes[var].pop()
        return self.comprehension(node)

    def _try(self, node: Any) -> tuple[Any, EvalError | None]:
        try:
            return self.eval(node), None
        except EvalError as e:
            return None, e

    def call(self, node: Any) -> Any:
        _, fn, target, args = node
        if fn in ("&&", "||"):
            absorbing = fn == "||"  # the value that decides the result whatever the other side is
            left, lerr = self._try(args[0])
            if lerr is None and left is absorbing:
                return absorbing
            right, rerr = self._try(args[1])
            if rerr is None and right is absorbing:
                return absorbing
            if lerr is not None:
                raise lerr
            if not isinstance(left, bool):
                raise _no_overload()
            if rerr is not None:
                raise rerr
            if not isinstance(right, bool):
                raise _no_overload()
            return not absorbing
        if fn == "in" and args[1] == ("list", []):
            return False  # cel-go decides membership in an empty list literal without evaluating the element
        if fn == "_?_:_":
            cond = self.eval(args[0])
            if not isinstance(cond, bool):
                raise _no_overload()
            return self.eval(args[1] if cond else args[2])
        if target is not None:
            recv = self.eval(target)
            values = [self.eval(a) for a in args]
            return self.invoke(fn, [recv, *values], method=True)
        values = [self.eval(a) for a in args]
        return self.invoke(fn, values, method=False)

    def invoke(self, fn: str, values: list[Any], method: bool) -> Any:
        if len(values) == 2 and not method:
            a, b = values
            if fn in ("==", "!="):
                ta = _type_name(a)
                if ta.startswith("kubernetes.") and _type_name(b) != ta:
                    raise _no_overload()  # the Kubernetes types compare only with their own kind
                return cel_equal(a, b) is (fn == "==")
            if fn in ("<", "<=", ">", ">="):
                c = _compare(fn, a, b)
                return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[fn]
            if fn in ("+", "-", "*", "/", "%"):
                return _arith(fn, a, b)
            if fn == "in":
                if isinstance(b, list):
                    return any(cel_equal(a, x) for x in b)
                if _is_map(b):
                    return (a in b) if isinstance(b, DefaultingMap) else _map_get(b, a)[0]
                raise _no_overload()
            if fn == "_[_]":
                return self.index(a, b)
        if fn == "!_" and len(values) == 1:
            if not isinstance(values[0], bool):
                raise _no_overload()
            return not values[0]
        if fn == "-_" and len(values) == 1:
            v = values[0]
            if type(v) is int:
                return _check_int(-v)
            if type(v) is float:
                return -v
            raise _unary_no_overload("-_", v)
        if fn in _BUILTINS:
            return self.builtin(fn, values, method)
        impl = self.fns.get(fn)
        if impl is None:
            raise EvalError(f"no such overload: {fn}")
        try:
            return impl(*values)
        except Exception as e:
            # a declared function given arguments none of its overloads takes: cel-go names the argument types
            if str(e) in ("no such overload", f"no such overload: {fn}") or isinstance(e, (TypeError, AttributeError)):
                raise EvalError(f"no such overload: {fn}({', '.join(_type_name(x) for x in values)})") from None
            raise

    def builtin(self, fn: str, values: list[Any], method: bool) -> Any:
        if fn in ("contains", "startsWith", "endsWith", "matches"):
            if not values:
                raise _no_overload()
            if not method and fn == "matches" and len(values) == 2:
                return _string_method(fn, values[0], values[1:])
            if not method:
                raise _no_overload()
            return _string_method(fn, values[0], values[1:])
        if len(values) != 1:
            raise _no_overload()
        v = values[0]
        if fn == "size":
            try:
                return _size(v)
            except EvalError:
                raise EvalError("no such overload: size") from None
        if fn == "dyn":
            return v
        conv: dict[str, Callable[[Any], Any]] = {"int": _to_int, "uint": _to_uint, "double": _to_double,
                                                "string": _to_string, "bytes": _to_bytes, "bool": _to_bool}
        try:
            return conv[fn](v)
        except EvalError as e:
            if str(e) == "no such overload":
                raise EvalError(f"no such overload: {fn}({_type_name(v)})") from None
            raise

    def index(self, container: Any, key: Any) -> Any:
        if isinstance(container, list):
            if isinstance(key, bool) or not (_is_num(key) and float(key).is_integer()):
                raise _no_overload()
            i = int(key)
            if i < 0 or i >= len(container):
                raise EvalError(f"index out of bounds: {i}")
            return container[i]
        if _is_map(container):
            found, value = _map_get(container, key)
            if not found:
                raise EvalError(f"no such key: {key}")
            return value
        raise _no_overload()

    def comprehension(self, node: Any) -> Any:
        _, macro, var, rng, args = node
        source = self.eval(rng)
        if _is_map(source):
            items = list(source.keys())
        elif isinstance(source, list):
            items = source
        else:
            raise EvalError(f"expression of type '{_type_name(source)}' cannot be range of a comprehension "
                            "(must be list, map, or dynamic)")
        stack = self.scopes.setdefault(var, [])
        depth = len(stack)
        try:
            if macro in ("all", "exists"):
                decided = macro == "exists"  # the predicate value that ends the loop
                error: EvalError | None = None
                for item in items:
                    stack.append(item)
                    value, err = self._try(args[0])
                    stack.pop()
                    if err is not None:
                        error = error or err
                    elif not isinstance(value, bool):
                        error = error or _no_overload()
                    elif value is decided:
                        return decided
                if error is not None:
                    raise error
                return not decided
            if macro == "exists_one":
                count = 0
                for item in items:
                    stack.append(item)
                    value = self.eval(args[0])
                    stack.pop()
                    if not isinstance(value, bool):
                        raise _no_overload()
                    count += value
                return count == 1
            out: list[Any] = []
            for item in items:
                stack.append(item)
                if macro == "filter" or len(args) == 2:
                    keep = self.eval(args[0])
                    if not isinstance(keep, bool):
                        stack.pop()
                        raise _no_overload()
                    if keep:
                        out.append(item if macro == "filter" else self.eval(args[1]))
                else:
                    out.append(self.eval(args[0]))
                stack.pop()
            return out
        finally:
            del stack[depth:]  # an error left the loop variable bound


__all__ = ["QUANTITY_KEY", "SEMVER_KEY", "CompileError", "DefaultingMap", "EvalError", "Program", "UInt", "cel_equal",
           "compile_program", "type_name"]
