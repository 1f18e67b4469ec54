"""CEL device selectors, evaluated as upstream's DRA CEL environment does.

The expression sees one variable, ``device``, with ``driver`` (string), ``attributes`` and ``capacity``
(maps from domain to maps from attribute name to value). An attribute or capacity name without a domain
(``model``) lives under the device's driver name (``device.attributes["gpu.example.com"].model``); looking up
a domain that the device does not have gives an empty map, so ``has(...)`` and ``in`` work on any domain.
Version attributes are semantic versions; capacities are quantities.

Evaluation uses our own interpreter, ``scheduling_framework.dra.celeval`` (pure Python; the candidates that were
measured and why this one won are in docs/dra-cel.md). The Kubernetes libraries the DRA environment enables are
implemented here and registered with it: ``quantity``/``isQuantity`` and the quantity methods,
``semver``/``isSemver`` and the version methods, the strings extension, and the Kubernetes list and regex
libraries. Every selector's worst-case cost is estimated as cel-go does (``scheduling_framework.api.celcost``);
one over upstream's limit is never evaluated.

Compiled programs are cached per expression (``CELCache``), results per (expression, device object): a
``Device`` is immutable, so a changed device is a new object and is evaluated afresh. A selector that does not
read ``device`` is evaluated once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

import attrs

from scheduling_framework.api.celcost import MAX_COST, RUNTIME_MESSAGE, UNKNOWN, estimate_cost
from scheduling_framework.api.quantity import Quantity
from scheduling_framework.api.resource import Device, DeviceAttribute
from scheduling_framework.dra.celeval import (
    QUANTITY_KEY,
    SEMVER_KEY,
    CompileError,
    DefaultingMap,
    EvalError,
    compile_program,
    compile_regex,
    constant_pattern_errors,
    regex_find_all,
    type_name,
)
from scheduling_framework.errors import SchedulingFrameworkError, ValidationError

# Values of Kubernetes' CEL types travel through the interpreter as one-key maps with a reserved key, so the
# interpreter's own equality (map equality on a canonical text) is the types' equality.
_QUANTITY_KEY = QUANTITY_KEY
_SEMVER_KEY = SEMVER_KEY


class CELError(SchedulingFrameworkError):
    """A CEL selector failed to compile or to evaluate; ``detail`` has upstream's wording."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


class CELCompileError(CELError):
    """The expression does not compile (syntax, undeclared reference, not a boolean...)."""


class CELRuntimeError(CELError):
    """Evaluating the expression against a device failed (missing attribute, no such overload...)."""


# --- semantic versions (blang/semver rules, as the Kubernetes semver library uses) ------------------------

_NUM = r"(?:0|[1-9][0-9]*)"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER_RE = re.compile(rf"^({_NUM})\.({_NUM})\.({_NUM})(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?"
                        r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


@attrs.frozen(slots=True)
class SemVer:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: str = ""

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(self.pre)
        if self.build:
            s += "+" + self.build
        return s

    def compare(self, other: SemVer) -> int:
        a, b = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        # A version with a pre-release sorts before the same version without one; build metadata is ignored.
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


@lru_cache(maxsize=4096)
def parse_semver(text: str, normalize: bool = False) -> SemVer | None:
    """A SemVer, or None when ``text`` is not one. ``normalize`` accepts a "v" prefix, missing minor/patch
    and leading zeros, as ``semver(text, true)`` does."""
    if normalize:
        text = text.removeprefix("v")
        core, sep, rest = text.partition("-") if "-" in text.split("+")[0] else text.partition("+")
        parts = core.split(".")
        if len(parts) > 3 or not all(p.isdigit() for p in parts):
            return None
        parts += ["0"] * (3 - len(parts))
        text = ".".join(str(int(p)) for p in parts) + (sep + rest if sep else "")
    m = _SEMVER_RE.match(text)
    if m is None:
        return None
    return SemVer(int(m.group(1)), int(m.group(2)), int(m.group(3)),
                  tuple(m.group(4).split(".")) if m.group(4) else (), m.group(5) or "")


def _semver_value(v: SemVer) -> dict[str, str]:
    return {_SEMVER_KEY: str(v)}


def _quantity_value(q: Quantity) -> dict[str, str]:
    return {_QUANTITY_KEY: str(q)}


def _as_quantity(v: Any) -> Quantity | None:
    if isinstance(v, Mapping) and _QUANTITY_KEY in v:
        return _parse_quantity_text(str(v[_QUANTITY_KEY]))
    return None


def _as_semver(v: Any) -> SemVer | None:
    if isinstance(v, Mapping) and _SEMVER_KEY in v:
        return parse_semver(str(v[_SEMVER_KEY]))
    return None


@lru_cache(maxsize=4096)
def _parse_quantity_text(text: str) -> Quantity:
    return Quantity.parse(text)


class _NoOverload(Exception):
    pass


def _no_overload(name: str) -> _NoOverload:
    return _NoOverload(f"no such overload: {name}")


# --- the Kubernetes library functions ---------------------------------------------------------------------


def _fn_quantity(s: Any) -> dict[str, str]:
    if not isinstance(s, str):
        raise _no_overload("quantity")
    try:
        return _quantity_value(_parse_quantity_text(s))
    except ValidationError:
        raise _NoOverload(f"quantities must match the regular expression "
                          f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {s}") from None


def _fn_is_quantity(s: Any) -> bool:
    if not isinstance(s, str):
        raise _no_overload("isQuantity")
    try:
        _parse_quantity_text(s)
    except ValidationError:
        return False
    return True


def _fn_semver(s: Any, normalize: Any = False) -> dict[str, str]:
    if not isinstance(s, str):
        raise _no_overload("semver")
    v = parse_semver(s, bool(normalize))
    if v is None:
        raise _NoOverload(f"Invalid character(s) found in version: {s}")
    return _semver_value(v)


def _fn_is_semver(s: Any, normalize: Any = False) -> bool:
    if not isinstance(s, str):
        raise _no_overload("isSemver")
    return parse_semver(s, bool(normalize)) is not None


def _compare(name: str, a: Any, b: Any) -> int:
    qa, qb = _as_quantity(a), _as_quantity(b)
    if qa is not None and qb is not None:
        return qa.cmp(qb)
    sa, sb = _as_semver(a), _as_semver(b)
    if sa is not None and sb is not None:
        return sa.compare(sb)
    raise _no_overload(name)


def _fn_compare_to(a: Any, b: Any) -> int:
    return _compare("compareTo", a, b)


def _fn_is_less_than(a: Any, b: Any) -> bool:
    return _compare("isLessThan", a, b) < 0


def _fn_is_greater_than(a: Any, b: Any) -> bool:
    return _compare("isGreaterThan", a, b) > 0


def _quantity_arg(name: str, v: Any) -> Quantity:
    q = _as_quantity(v)
    if q is None:
        raise _no_overload(name)
    return q


def _fn_sign(q: Any) -> int:
    return _quantity_arg("sign", q).sign()


def _fn_is_integer(q: Any) -> bool:
    qq = _quantity_arg("isInteger", q)
    return qq == Quantity.parse(qq.value()) and -(2**63) <= qq.value() < 2**63


def _fn_as_integer(q: Any) -> int:
    if not _fn_is_integer(q):
        raise _NoOverload("cannot convert value to integer")
    return _quantity_arg("asInteger", q).value()


def _fn_as_approximate_float(q: Any) -> float:
    return _quantity_arg("asApproximateFloat", q).as_float()


def _other_quantity(name: str, v: Any) -> Quantity:
    if isinstance(v, int) and not isinstance(v, bool):
        return Quantity.parse(v)
    return _quantity_arg(name, v)


def _fn_add(a: Any, b: Any) -> dict[str, str]:
    return _quantity_value(_quantity_arg("add", a) + _other_quantity("add", b))


def _fn_sub(a: Any, b: Any) -> dict[str, str]:
    return _quantity_value(_quantity_arg("sub", a) - _other_quantity("sub", b))


def _version_part(name: str, index: int) -> Callable[[Any], int]:
    def part(v: Any) -> int:
        s = _as_semver(v)
        if s is None:
            raise _no_overload(name)
        return (s.major, s.minor, s.patch)[index]
    return part


def _fn_find(s: Any, pattern: Any) -> str:
    if not isinstance(s, str) or not isinstance(pattern, str):
        raise _no_overload("find")
    m = compile_regex(pattern, "Illegal regex: ").search(s)
    return "" if m is None else str(m.group(0))


def _fn_find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    if not isinstance(s, str) or not isinstance(pattern, str) or not isinstance(limit, int):
        raise _no_overload("findAll")
    return regex_find_all(compile_regex(pattern, "Illegal regex: "), s, limit)


def _fn_is_sorted(xs: Any) -> bool:
    if not isinstance(xs, list) or any(x is None or isinstance(x, (list, Mapping)) for x in xs):
        raise _no_overload("isSorted")
    return all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))


def _fn_index_of(x: Any, y: Any, start: Any = 0) -> int:
    if isinstance(x, list):
        return x.index(y) if y in x else -1
    if not isinstance(x, str) or not isinstance(y, str) or not isinstance(start, int):
        raise _no_overload("indexOf")
    if start < 0:
        raise _NoOverload(f"index out of range: {start}")
    return x.find(y, start) if start <= len(x) else -1


def _fn_last_index_of(x: Any, y: Any, *rest: Any) -> int:
    if isinstance(x, list):
        return len(x) - 1 - x[::-1].index(y) if y in x else -1
    if not isinstance(x, str) or not isinstance(y, str):
        raise _no_overload("lastIndexOf")
    end = rest[0] if rest else len(x)
    return x.rfind(y, 0, end + len(y))


def _fn_sum(xs: Any) -> Any:
    if not isinstance(xs, list):
        raise _no_overload("sum")
    return sum(xs) if xs else 0


def _fn_min(*xs: Any) -> Any:
    items = xs[0] if len(xs) == 1 and isinstance(xs[0], list) else list(xs)
    if not items:
        raise _NoOverload("min(list) argument must not be empty")
    return min(items)


def _fn_max(*xs: Any) -> Any:
    items = xs[0] if len(xs) == 1 and isinstance(xs[0], list) else list(xs)
    if not items:
        raise _NoOverload("max(list) argument must not be empty")
    return max(items)


def _str_fn(name: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    def fn(s: Any, *args: Any) -> Any:
        if not isinstance(s, str):
            raise _no_overload(name)
        return impl(s, *args)
    return fn


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if start > end:
        raise _NoOverload(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise _NoOverload(f"index out of range: {start}")
    if end > len(s):
        raise _NoOverload(f"index out of range: {end}")
    return s[start:end]


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise _NoOverload(f"index out of range: {i}")
    return s[i:i + 1]


def _split(s: str, sep: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    return s.split(sep, limit - 1) if limit > 0 else s.split(sep)


def _replace(s: str, old: str, new: str, limit: int = -1) -> str:
    return s.replace(old, new, limit)


def _join(xs: Any, sep: str = "") -> str:
    if not isinstance(xs, list) or not all(isinstance(x, str) for x in xs):
        raise _no_overload("join")
    return sep.join(xs)


def _quote(s: Any) -> str:
    if not isinstance(s, str):
        raise _no_overload("strings.quote")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _lower_ascii(s: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in s)


def _upper_ascii(s: str) -> str:
    return "".join(c.upper() if c.isascii() else c for c in s)


def _reverse(x: Any) -> Any:
    if isinstance(x, (str, list)):
        return x[::-1]
    raise _no_overload("reverse")


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _fn_quantity, "isQuantity": _fn_is_quantity, "sign": _fn_sign, "isInteger": _fn_is_integer,
    "asInteger": _fn_as_integer, "asApproximateFloat": _fn_as_approximate_float, "add": _fn_add, "sub": _fn_sub,
    "semver": _fn_semver, "isSemver": _fn_is_semver, "major": _version_part("major", 0),
    "minor": _version_part("minor", 1), "patch": _version_part("patch", 2),
    "compareTo": _fn_compare_to, "isLessThan": _fn_is_less_than, "isGreaterThan": _fn_is_greater_than,
    "find": _fn_find, "findAll": _fn_find_all, "isSorted": _fn_is_sorted, "indexOf": _fn_index_of,
    "lastIndexOf": _fn_last_index_of, "sum": _fn_sum, "min": _fn_min, "max": _fn_max,
}
# The strings extension (Kubernetes enables ext.Strings).
_FUNCTIONS.update({
    "charAt": _str_fn("charAt", _char_at), "substring": _str_fn("substring", _substring),
    "replace": _str_fn("replace", _replace), "split": _str_fn("split", _split), "join": _join,
    "lowerAscii": _str_fn("lowerAscii", _lower_ascii), "upperAscii": _str_fn("upperAscii", _upper_ascii),
    "trim": _str_fn("trim", str.strip), "reverse": _reverse, "strings.quote": _quote,
})

# Functions the CEL environment declares beyond the Kubernetes libraries (standard definitions and macros);
# celeval implements all but the timestamp/duration ones, which fail when called.
_BUILTIN_FUNCTIONS = frozenset({
    "size", "int", "uint", "double", "string", "bytes", "bool", "type", "dyn", "duration", "timestamp",
    "matches", "contains", "startsWith", "endsWith", "has", "all", "exists", "exists_one", "map", "filter",
    "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours", "getMilliseconds",
    "getMinutes", "getMonth", "getSeconds",
})

def _cel_type_name(v: Any) -> str:
    return type_name(v)


def _runtime_message(e: BaseException) -> str:
    if isinstance(e, (_NoOverload, EvalError)):
        return str(e.args[0]) if e.args else ""
    if isinstance(e, (TypeError, AttributeError)):
        return "no such overload"
    if isinstance(e, ZeroDivisionError):
        return "division by zero"
    return str(e)


def _attribute_value(attr: DeviceAttribute) -> Any:
    if attr.kind == "version":
        v = parse_semver(str(attr.value))
        if v is None:
            raise CELRuntimeError(f"parse semantic version: Invalid character(s) found in version: {attr.value}")
        return _semver_value(v)
    return attr.value


def _split_qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_variable(device: Device, driver: str, allow_multiple_allocations: bool = False) -> dict[str, Any]:
    """The ``device`` variable for ``device`` of ``driver`` (names without a domain go under the driver)."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        domain, ident = _split_qualified(name, driver)
        try:
            attributes.setdefault(domain, {})[ident] = _attribute_value(attr)
        except CELRuntimeError as e:
            raise CELRuntimeError(f"attribute {name}: {e.detail}") from None
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        domain, ident = _split_qualified(name, driver)
        capacity.setdefault(domain, {})[ident] = _quantity_value(cap.value)
    # a domain the device lacks reads as an empty map, as upstream's
    var: dict[str, Any] = {"driver": driver, "attributes": DefaultingMap(attributes),
                           "capacity": DefaultingMap(capacity)}
    if allow_multiple_allocations:
        var["allowMultipleAllocations"] = bool(device.allow_multiple_allocations)
    return var


# --- fast path ---------------------------------------------------------------------------------------
#
# Most selectors in practice are conjunctions of equality tests on the driver or on one attribute
# (``device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"``). Those
# are decided here in Python, which is ~50x cheaper than handing a device to the interpreter; anything else
# goes to the interpreter. The semantics are CEL's: values of different types are never equal, a missing
# attribute is the error "no such key", and ``&&`` is false if any side is false even when another errs.

_STR_LIT = r'"[^"\\\n]*"|\'[^\'\\\n]*\''
_LIT = rf"{_STR_LIT}|-?[0-9]+|true|false"
_DRIVER_TERM = re.compile(rf"^device\.driver\s*==\s*({_STR_LIT})$|^({_STR_LIT})\s*==\s*device\.driver$")
_ATTR_TERM = re.compile(
    rf"^device\.attributes\[({_STR_LIT})\](?:\.([A-Za-z_][A-Za-z0-9_]*)|\[({_STR_LIT})\])\s*==\s*({_LIT})$")

_CAP_TERM = re.compile(
    rf"^device\.capacity\[({_STR_LIT})\](?:\.([A-Za-z_][A-Za-z0-9_]*)|\[({_STR_LIT})\])\s*\.\s*"
    rf"(?:(isGreaterThan|isLessThan)\(\s*quantity\(\s*({_STR_LIT})\s*\)\s*\)"
    rf"|compareTo\(\s*quantity\(\s*({_STR_LIT})\s*\)\s*\)\s*(>=|<=|==|!=|>|<)\s*(-?[0-9]+))$")

_FastTerm = tuple[str, str, str, Any]  # (kind "driver"|"attr"|"cap", domain, name, literal or comparison)
_CMP = {">=": lambda c, n: c >= n, "<=": lambda c, n: c <= n, "==": lambda c, n: c == n,
        "!=": lambda c, n: c != n, ">": lambda c, n: c > n, "<": lambda c, n: c < n}


def _literal(text: str) -> Any:
    if text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def _fast_terms(source: str) -> list[_FastTerm] | None:
    """The terms of a conjunction of simple equality tests, or None when the expression is anything else."""
    if "&&" in source:
        parts = source.split("&&")
    else:
        parts = [source]
    terms: list[_FastTerm] = []
    for raw in parts:
        part = raw.strip()
        m = _DRIVER_TERM.match(part)
        if m is not None:
            terms.append(("driver", "", "", _literal(m.group(1) or m.group(2))))
            continue
        m = _CAP_TERM.match(part)
        if m is not None:
            name = m.group(2) if m.group(2) is not None else _literal(m.group(3))
            try:
                if m.group(4):
                    q = _parse_quantity_text(_literal(m.group(5)))
                    want = 1 if m.group(4) == "isGreaterThan" else -1
                    cmp: tuple[Quantity, str, int] = (q, "==", want)
                else:
                    cmp = (_parse_quantity_text(_literal(m.group(6))), m.group(7), int(m.group(8)))
            except ValidationError:
                return None  # the interpreter reports the bad quantity at run time
            terms.append(("cap", _literal(m.group(1)), name, cmp))
            continue
        m = _ATTR_TERM.match(part)
        if m is None:
            return None
        name = m.group(2) if m.group(2) is not None else _literal(m.group(3))
        terms.append(("attr", _literal(m.group(1)), name, _literal(m.group(4))))
    # A literal that contains "&&" would have been split apart and then failed to match: no false positives.
    return terms


_KIND_OF_LITERAL = {str: "string", bool: "bool", int: "int"}


def _fast_eval(terms: list[_FastTerm], device: Device, driver: str) -> bool:
    error: str | None = None
    result = True
    for kind, domain, name, lit in terms:
        if kind == "driver":
            if driver != lit:
                result = False
            continue
        if kind == "cap":
            cap = _lookup_capacity(device, driver, domain, name)
            if cap is None:
                error = error or f"no such key: {name}"
                continue
            q, op, n = lit
            if not _CMP[op](cap.cmp(q), n):
                result = False
            continue
        attr = _lookup_attribute(device, driver, domain, name)
        if attr is None:
            error = error or f"no such key: {name}"
            continue
        if attr.kind == "version":
            error = error or "no such overload"  # a Semver compares only with a Semver
            continue
        if attr.kind != _KIND_OF_LITERAL[type(lit)] or attr.value != lit:
            result = False
    if not result:
        return False
    if error is not None:
        raise CELRuntimeError(error)
    return True


_V = TypeVar("_V")


def _lookup_qualified(entries: Mapping[str, _V], driver: str, domain: str, name: str) -> _V | None:
    # As device_variable builds the map: the later of "<domain>/<name>" and (driver domain) "<name>" wins.
    qualified = f"{domain}/{name}"
    found_q = qualified in entries
    found_u = domain == driver and name in entries
    if found_q and found_u:
        keys = list(entries)
        return entries[qualified] if keys.index(qualified) > keys.index(name) else entries[name]
    if found_q:
        return entries[qualified]
    if found_u:
        return entries[name]
    return None


def _lookup_attribute(device: Device, driver: str, domain: str, name: str) -> DeviceAttribute | None:
    return _lookup_qualified(device.attributes, driver, domain, name)


def _lookup_capacity(device: Device, driver: str, domain: str, name: str) -> Quantity | None:
    cap = _lookup_qualified(device.capacity, driver, domain, name)
    return None if cap is None else cap.value


class CompiledExpression:
    """One compiled selector. ``error`` is set (and ``matches`` raises it) when compilation failed.

    ``cost`` is the estimated worst-case cost (cel-go units); an expression over upstream's limit, or whose cost is
    unknown (None), fails every evaluation with upstream's cost-exceeded message instead of running.
    ``device_independent`` expressions (no reference to ``device``) have one result for every device.
    """

    __slots__ = ("expression", "error", "_program", "fast", "cost", "device_independent", "_constant")

    def __init__(self, expression: str, program: Any, error: CELCompileError | None,
                 fast: list[_FastTerm] | None = None, cost: int | None = None,
                 device_independent: bool = False) -> None:
        self.expression = expression
        self._program = program
        self.error = error
        self.fast = fast
        self.cost = cost
        self.device_independent = device_independent
        # the result (or the runtime error) of a device-independent expression, once evaluated
        self._constant: bool | CELRuntimeError | None = None

    @property
    def over_budget(self) -> bool:
        # a cost that was not estimated is not known to be within the limit
        return self.cost is None or self.cost > MAX_COST

    def evaluate(self, variable: dict[str, Any]) -> bool:
        """Evaluate against one ``device`` variable (``device_variable``)."""
        if self.error is not None:
            raise self.error
        if self.over_budget:
            # Upstream's evaluation would be cancelled once its actual cost passed the limit; an expression
            # whose worst case is over the limit is not started.
            raise CELRuntimeError(RUNTIME_MESSAGE)
        if self.device_independent:
            if self._constant is None:
                try:
                    self._constant = self._run(variable)
                except CELRuntimeError as e:
                    self._constant = e
            if isinstance(self._constant, CELRuntimeError):
                raise CELRuntimeError(self._constant.detail)
            return self._constant
        return self._run(variable)

    def _run(self, variable: dict[str, Any]) -> bool:
        try:
            result = self._program.execute({"device": variable}, _FUNCTIONS)
        except RecursionError:
            raise CELRuntimeError("max recursion depth exceeded") from None
        except Exception as e:
            raise CELRuntimeError(_runtime_message(e)) from None
        if not isinstance(result, bool):
            tn = _cel_type_name(result)
            why = _NOT_BOOL.get(tn, f"type conversion error from '{tn}' to 'bool'")
            raise CELRuntimeError(f"CEL result of type {tn} could not be converted to bool: {why}")
        return result


def compile_expression(expression: str) -> CompiledExpression:
    """Compile a selector; never raises (a failure is kept in ``.error`` with upstream's wording)."""
    try:
        program = compile_program(expression)
    except CompileError as e:
        return CompiledExpression(expression, None, CELCompileError(f"compilation failed: {e}"))
    for var in sorted(program.variables):
        if var != "device":
            return CompiledExpression(expression, None, CELCompileError(
                f"compilation failed: ERROR: <input>:1:1: undeclared reference to '{var}' (in container '')"))
    for fn in sorted(program.functions):
        if fn in _OPERATORS or fn in _BUILTIN_FUNCTIONS or fn in _FUNCTIONS:
            continue
        return CompiledExpression(expression, None, CELCompileError(
            f"compilation failed: ERROR: <input>:1:1: undeclared reference to '{fn}' (in container '')"))
    pattern_check, pattern_plan = constant_pattern_errors(program)
    if pattern_check is not None:
        return CompiledExpression(expression, None, CELCompileError(f"compilation failed: {pattern_check}"))
    cost = estimate_cost(expression)
    if cost is None:  # cannot happen once the expression parsed; were it to, unknown is never cheap
        cost = UNKNOWN
    over = cost > MAX_COST
    if not program.variables and not over:
        # A constant expression: its type is known now, as the type checker would know it.
        try:
            value = program.execute({}, _FUNCTIONS)
        except Exception:
            value = True
        if not isinstance(value, bool):
            return CompiledExpression(expression, None, CELCompileError(
                f"must evaluate to bool or the unknown type, not {_cel_type_name(value)}"))
    if pattern_plan is not None:
        return CompiledExpression(expression, None, CELCompileError(f"program instantiation failed: {pattern_plan}"))
    return CompiledExpression(expression, program, None, _fast_terms(expression.strip()), cost,
                              "device" not in program.variables)


# cel-go's wording when a value of each type is converted to a Go bool (what a non-boolean result reports)
_NOT_BOOL = {"int": "unsupported type conversion from 'int' to bool",
             "uint": "unsupported type conversion from 'uint' to bool",
             "string": "unsupported native conversion from string to 'bool'",
             "double": "type conversion error from Double to 'bool'",
             "kubernetes.Semver": "type conversion error from 'Semver' to 'bool'"}

_OPERATORS = frozenset({"&&", "||", "_?_:_", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "in",
                        "!_", "-_", "_[_]"})


class CELCache:
    """Compiled selectors per expression and results per (expression, device object).

    Share one cache across allocations (the DynamicResources plugin keeps one per scheduler); it holds
    strong references to the devices it has seen, bounded by ``max_results``. ``max_programs`` bounds the
    compiled expressions kept (upstream's ``cel.NewCache(maxCacheEntries)``), least recently compiled
    first out.
    """

    def __init__(self, max_programs: int = 1000, max_results: int = 200_000) -> None:
        self._programs: dict[str, CompiledExpression] = {}
        self._results: dict[tuple[str, int, bool], tuple[Device, bool]] = {}
        self._max_programs = max(1, max_programs)
        self._max_results = max_results
        self._lock = threading.Lock()

    def compile(self, expression: str) -> CompiledExpression:
        prog = self._programs.get(expression)
        if prog is None:
            prog = compile_expression(expression)
            if len(self._programs) >= self._max_programs:
                self._programs.pop(next(iter(self._programs)))
            self._programs[expression] = prog
        return prog

    def matches(self, expression: str, device: Device, driver: str,
                allow_multiple_allocations: bool = False) -> bool:
        """Whether ``device`` (of ``driver``) satisfies ``expression``; raises CELCompileError / CELRuntimeError.

        ``allow_multiple_allocations``: expose ``device.allowMultipleAllocations`` (consumable capacity on).
        """
        key = (expression, id(device), allow_multiple_allocations)
        hit = self._results.get(key)
        if hit is not None and hit[0] is device:
            return hit[1]
        prog = self.compile(expression)
        if prog.error is not None:
            raise prog.error
        if prog.fast is not None and not prog.over_budget:
            result = _fast_eval(prog.fast, device, driver)
            self._results[key] = (device, result)
            return result
        variable = device_variable(device, driver, allow_multiple_allocations)
        result = prog.evaluate(variable)
        with self._lock:
            if len(self._results) >= self._max_results:
                self._results.clear()
            self._results[key] = (device, result)
        return result


# Upstream's name (k8s.io/dynamic-resource-allocation/cel.Cache).
Cache = CELCache


def device_matches(expression: str, device: Device, driver: str) -> bool:
    """One-off evaluation without a shared cache (tests, examples)."""
    return CELCache().matches(expression, device, driver)


__all__ = [
    "CELCache", "CELCompileError", "Cache", "CELError", "CELRuntimeError", "CompiledExpression", "SemVer",
    "compile_expression", "device_matches", "device_variable", "parse_semver",
]
