"""Kubernetes resource quantities (``k8s.io/apimachinery/pkg/api/resource.Quantity``).

A quantity is an exact decimal number written as ``<sign><digits>[.<digits>]<suffix>``, where the suffix is
one of the binary SI suffixes (``Ki`` ... ``Ei``, powers of 1024), the decimal SI suffixes (``n u m "" k M G
T P E``) or a decimal exponent (``e3``, ``E-6``).  Parsing follows upstream exactly:

* the value is exact; anything finer than a nano-unit is rounded *away from zero* to the next nano-unit
  (``0.1n`` -> ``1n``, ``-3.001n`` -> ``-4n``);
* a binary-suffixed value is capped at ``2**63 - 1`` in magnitude; decimal values are not capped;
* a binary-suffixed value strictly between 0 and 1 (in magnitude) becomes DecimalSI;
* the quantity remembers which kind of suffix it was written with, and :meth:`Quantity.__str__` re-emits
  the canonical spelling in that kind (``1.5Gi`` -> ``1536Mi``, ``1.5`` -> ``1500m``, ``1e3`` -> ``1e3``).

Internally a quantity is ``mantissa * 10**exponent`` with Python integers, normalised so that the mantissa
has no trailing zero digit; nothing is ever a float.  Equal values compare (and hash) equal whatever their
format, like upstream ``Cmp``/``Equal``.
"""

from __future__ import annotations

import decimal
import math
import re
from functools import lru_cache
from typing import Final, Literal, NoReturn, TypeAlias

from scheduling_framework.errors import InvalidQuantityError

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "GIGA",
    "KILO",
    "MEGA",
    "MICRO",
    "MILLI",
    "NANO",
    "QuantityFormat",
    "Quantity",
    "must_parse",
    "new_milli_quantity",
    "new_quantity",
    "new_scaled_quantity",
    "parse_quantity",
]

QuantityFormat: TypeAlias = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
_FORMATS: Final[frozenset[str]] = frozenset((DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT))

# Power-of-ten scales, as upstream's resource.Scale constants.
NANO: Final = -9
MICRO: Final = -6
MILLI: Final = -3
KILO: Final = 3
MEGA: Final = 6
GIGA: Final = 9

_INT64_MAX: Final = (1 << 63) - 1
_INT64_MIN: Final = -(1 << 63)
# Exponents must fit upstream's int32 scale and survive negation.
_MAX_EXPONENT: Final = (1 << 31) - 1
# Digits CPython converts between str and int without tripping sys.get_int_max_str_digits().
_SAFE_STR_DIGITS: Final = 4000
_POW10: Final[tuple[int, ...]] = tuple(10**i for i in range(64))

# suffix -> (base, exponent, format)
_SUFFIXES: Final[dict[str, tuple[int, int, QuantityFormat]]] = {
    "": (10, 0, "DecimalSI"),
    "n": (10, -9, "DecimalSI"),
    "u": (10, -6, "DecimalSI"),
    "m": (10, -3, "DecimalSI"),
    "k": (10, 3, "DecimalSI"),
    "M": (10, 6, "DecimalSI"),
    "G": (10, 9, "DecimalSI"),
    "T": (10, 12, "DecimalSI"),
    "P": (10, 15, "DecimalSI"),
    "E": (10, 18, "DecimalSI"),
    "Ki": (2, 10, "BinarySI"),
    "Mi": (2, 20, "BinarySI"),
    "Gi": (2, 30, "BinarySI"),
    "Ti": (2, 40, "BinarySI"),
    "Pi": (2, 50, "BinarySI"),
    "Ei": (2, 60, "BinarySI"),
}
# power of ten (a multiple of 3) -> DecimalSI suffix
_DECIMAL_SUFFIX: Final[dict[int, str]] = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
# power of 1024 -> BinarySI suffix
_BINARY_SUFFIX: Final[tuple[str, ...]] = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")

# The number, then a suffix made of suffix letters, an optional sign and digits (checked later).  All
# quantifiers are possessive so the split is the greedy left-to-right one upstream's scanner makes.
_QUANTITY_RE: Final = re.compile(r"([+-]?+)0*+([0-9]*+)(?:\.([0-9]*+))?+([eEinumkKMGTP]*+[+-]?+[0-9]*+)")
_EXPONENT_RE: Final = re.compile(r"[eE]([+-]?)0*([0-9]+)")


def _fail(value: object, path: str) -> NoReturn:
    raise InvalidQuantityError(value, path)


def _digits_to_int(digits: str) -> int:
    if len(digits) <= _SAFE_STR_DIGITS:
        return int(digits)
    return int(decimal.Decimal(digits))


def _int_to_str(n: int) -> str:
    if n.bit_length() <= 13000:
        return str(n)
    return format(decimal.Decimal(n), "f")


def _ndigits(a: int) -> int:
    """Number of decimal digits of ``a > 0``."""
    if a < _POW10[18]:
        return len(str(a))
    bits = a.bit_length()
    if bits <= 13000:
        return len(str(a))
    est = int((bits - 1) * 0.30102999566398120) + 1
    while est > 1 and 10 ** (est - 1) > a:
        est -= 1
    while 10**est <= a:
        est += 1
    return est


def _pow10(n: int) -> int:
    return _POW10[n] if n < 64 else 10**n


def _normalize(m: int, e: int) -> tuple[int, int]:
    """Move every factor of ten of the mantissa into the exponent; zero is (0, 0)."""
    if m == 0:
        return 0, 0
    if m % 10:
        return m, e
    while m % 100_000_000 == 0:
        m //= 100_000_000
        e += 8
    while m % 10 == 0:
        m //= 10
        e += 1
    return m, e


def _clamp64(v: int) -> int:
    if v > _INT64_MAX:
        return _INT64_MAX
    if v < _INT64_MIN:
        return _INT64_MIN
    return v


def _scaled(m: int, e: int, scale: int) -> int:
    """ceil(|m * 10**e / 10**scale|) with m's sign (rounding away from zero), saturated to int64."""
    if m == 0:
        return 0
    d = e - scale
    a = -m if m < 0 else m
    if d >= 0:
        r = _INT64_MAX + 1 if d > 19 else a * _POW10[d]
    else:
        k = -d
        if k > 19 and k > _ndigits(a):
            r = 1  # 0 < |value| < 1
        else:
            q, rem = divmod(a, _pow10(k))
            r = q + 1 if rem else q
    return _clamp64(-r if m < 0 else r)


def _cmp(m1: int, e1: int, m2: int, e2: int) -> int:
    if e1 == e2 or (m1 == 0) or (m2 == 0):
        if e1 != e2:  # one side is zero: the signs decide
            m1 = (m1 > 0) - (m1 < 0)
            m2 = (m2 > 0) - (m2 < 0)
        return (m1 > m2) - (m1 < m2)
    s1 = 1 if m1 > 0 else -1
    s2 = 1 if m2 > 0 else -1
    if s1 != s2:
        return s1
    d = e1 - e2
    if -64 < d < 64:
        if d > 0:
            m1 *= _POW10[d]
        else:
            m2 *= _POW10[-d]
        return (m1 > m2) - (m1 < m2)
    a1, a2 = abs(m1), abs(m2)
    # |value| lies in [10**(order-1), 10**order): different orders decide without building huge numbers.
    o1 = _ndigits(a1) + e1
    o2 = _ndigits(a2) + e2
    if o1 != o2:
        return s1 if o1 > o2 else -s1
    if d > 0:
        a1 *= 10**d
    else:
        a2 *= 10 ** (-d)
    return s1 * ((a1 > a2) - (a1 < a2))


class Quantity:
    """An immutable, exact Kubernetes resource quantity.

    ``Quantity(mantissa, exponent, fmt)`` is ``mantissa * 10**exponent`` (no rounding is applied, like
    upstream's ``NewScaledQuantity``); most code wants :meth:`parse`.
    """

    __slots__ = ("_m", "_e", "_format", "_s")

    _m: int
    _e: int
    _format: QuantityFormat
    _s: str | None

    def __init__(self, mantissa: int = 0, exponent: int = 0, fmt: QuantityFormat = "DecimalSI") -> None:
        if fmt not in _FORMATS:
            raise ValueError(f"unknown quantity format {fmt!r}")
        m, e = _normalize(int(mantissa), int(exponent))
        object.__setattr__(self, "_m", m)
        object.__setattr__(self, "_e", e)
        object.__setattr__(self, "_format", fmt)
        object.__setattr__(self, "_s", None)

    @classmethod
    def _make(cls, m: int, e: int, fmt: QuantityFormat) -> Quantity:
        """Build from an already normalised (mantissa, exponent)."""
        q = object.__new__(cls)
        object.__setattr__(q, "_m", m)
        object.__setattr__(q, "_e", e)
        object.__setattr__(q, "_format", fmt)
        object.__setattr__(q, "_s", None)
        return q

    # -- construction -----------------------------------------------------------------------------------

    @classmethod
    def parse(cls, s: str | int | float | Quantity, path: str = "") -> Quantity:
        """Parse a quantity; raise :class:`InvalidQuantityError` (naming ``path``) on bad input.

        Integers are taken as their decimal text, finite floats as their ``repr``.
        """
        if isinstance(s, str):
            q = _parse_cached(s)
            if q is None:
                _fail(s, path)
            return q
        if isinstance(s, Quantity):
            return s
        if isinstance(s, bool):
            _fail(s, path)
        if isinstance(s, int):
            m, e = _normalize(s, 0)
            return cls._make(m, e, DECIMAL_SI)
        if isinstance(s, float):
            if not math.isfinite(s):
                _fail(s, path)
            q = _parse_cached(repr(s))
            if q is None:  # pragma: no cover - repr of a finite float always parses
                _fail(s, path)
            return q
        _fail(s, path)

    # -- immutability / protocol ------------------------------------------------------------------------

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Quantity is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Quantity is immutable")

    def __reduce__(self) -> tuple[object, tuple[int, int, QuantityFormat]]:
        return (Quantity, (self._m, self._e, self._format))

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: object) -> Quantity:
        return self

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __str__(self) -> str:
        s = self._s
        if s is None:
            s = self._canonical()
            object.__setattr__(self, "_s", s)
        return s

    def __hash__(self) -> int:
        return hash((self._m, self._e))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._m == other._m and self._e == other._e

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._m != other._m or self._e != other._e

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _cmp(self._m, self._e, other._m, other._e) < 0

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _cmp(self._m, self._e, other._m, other._e) <= 0

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _cmp(self._m, self._e, other._m, other._e) > 0

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _cmp(self._m, self._e, other._m, other._e) >= 0

    # -- accessors -------------------------------------------------------------------------------------

    @property
    def format(self) -> QuantityFormat:
        """``"DecimalSI"``, ``"BinarySI"`` or ``"DecimalExponent"``: how :meth:`__str__` spells it."""
        return self._format

    @property
    def mantissa(self) -> int:
        """The value is ``mantissa * 10**exponent``; the mantissa never ends in a zero digit."""
        return self._m

    @property
    def exponent(self) -> int:
        return self._e

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1 as this quantity is less than, equal to or greater than ``other`` (upstream ``Cmp``)."""
        return _cmp(self._m, self._e, other._m, other._e)

    def sign(self) -> int:
        return (self._m > 0) - (self._m < 0)

    def is_zero(self) -> bool:
        return self._m == 0

    def value(self) -> int:
        """The value rounded to an integer away from zero (``1500m`` -> 2, ``-1500m`` -> -2), like
        upstream ``Value()``; saturates at the int64 limits."""
        m, e = self._m, self._e
        if e == 0:
            return _clamp64(m)
        return _scaled(m, e, 0)

    def milli_value(self) -> int:
        """``value * 1000`` rounded away from zero (upstream ``MilliValue()``); saturates at the int64 limits."""
        m, e = self._m, self._e
        if 0 <= e + 3 <= 15:
            return _clamp64(m * _POW10[e + 3])
        return _scaled(m, e, MILLI)

    def scaled_value(self, scale: int) -> int:
        """``value / 10**scale`` rounded away from zero (upstream ``ScaledValue``); saturates at int64."""
        return _scaled(self._m, self._e, scale)

    def round_up(self, scale: int) -> tuple[Quantity, bool]:
        """The value rounded away from zero to a multiple of ``10**scale`` (upstream ``RoundUp``, which
        also accepts values that are already coarser), and whether that was exact."""
        m, e = self._m, self._e
        if m == 0 or e >= scale:
            return self, True
        k = scale - e
        a = -m if m < 0 else m
        if k > 19 and k > _ndigits(a):
            q, exact = 1, False
        else:
            q, rem = divmod(a, _pow10(k))
            exact = rem == 0
            if not exact:
                q += 1
        rm, re_ = _normalize(-q if m < 0 else q, scale)
        return Quantity._make(rm, re_, self._format), exact

    def as_decimal(self) -> decimal.Decimal:
        """The exact value as a :class:`decimal.Decimal` (no context rounding)."""
        m, e = self._m, self._e
        digits = decimal.Decimal(-m if m < 0 else m).as_tuple().digits
        return decimal.Decimal((1 if m < 0 else 0, digits, e))

    def as_float(self) -> float:
        """The value as the nearest float (like upstream ``AsFloat64Slow``); ±inf when out of range."""
        m, e = self._m, self._e
        if m == 0:
            return 0.0
        if e >= 0:
            if e + _ndigits(abs(m)) > 310:
                return math.copysign(math.inf, m)
            try:
                return float(m * _pow10(e))
            except OverflowError:
                return math.copysign(math.inf, m)
        k = -e
        if k - _ndigits(abs(m)) > 400:
            return math.copysign(0.0, m)
        return m / _pow10(k)

    # -- arithmetic ------------------------------------------------------------------------------------

    def __neg__(self) -> Quantity:
        return Quantity._make(-self._m, self._e, self._format)

    def __pos__(self) -> Quantity:
        return self

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _combine(self, other._m, other)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _combine(self, -other._m, other)

    # -- canonical string ------------------------------------------------------------------------------

    def _canonical(self) -> str:
        m, e = self._m, self._e
        if m == 0:
            return "0"
        fmt = self._format
        if fmt == BINARY_SI:
            # Only integers of magnitude >= 1024 get a binary suffix; anything else would need rounding
            # (or gains nothing), so it is shown as DecimalSI.  Past ``Ei`` there is no suffix either:
            # with e >= 70 the value has at least 7 factors of 1024, so go straight to DecimalSI.
            if 0 <= e < 70:
                n = m * _pow10(e)
                a = -n if n < 0 else n
                if a >= 1024:
                    k = 0
                    while a >= 1024 and a & 1023 == 0:
                        a >>= 10
                        k += 1
                    if k < len(_BINARY_SUFFIX):
                        return ("-" if n < 0 else "") + _int_to_str(a) + _BINARY_SUFFIX[k]
            fmt = DECIMAL_SI
        # Lower the exponent to a multiple of three (the mantissa has no trailing zeros already).
        r = e % 3
        if r:
            m *= _POW10[r]
            e -= r
        if fmt == DECIMAL_SI:
            suffix = _DECIMAL_SUFFIX.get(e)
            if suffix is None:  # no SI suffix beyond E or below n: exponent notation keeps the value
                suffix = f"e{e}"
        else:
            suffix = f"e{e}" if e else ""
        return _int_to_str(m) + suffix


def _combine(q: Quantity, m2: int, other: Quantity) -> Quantity:
    """q + (m2 * 10**other.exponent); a zero left operand takes the right operand's format (upstream Add/Sub)."""
    m1, e1 = q._m, q._e
    e2 = other._e
    fmt = other._format if m1 == 0 else q._format
    if m2 == 0:
        return q if fmt == q._format else Quantity._make(m1, e1, fmt)
    if m1 == 0:
        return Quantity._make(m2, e2, fmt)
    if e1 == e2:
        m, e = _normalize(m1 + m2, e1)
    elif e1 > e2:
        m, e = _normalize(m1 * _pow10(e1 - e2) + m2, e2)
    else:
        m, e = _normalize(m1 + m2 * _pow10(e2 - e1), e1)
    return Quantity._make(m, e, fmt)


# -- parsing ---------------------------------------------------------------------------------------------


def _interpret_suffix(suffix: str) -> tuple[int, int, QuantityFormat] | None:
    known = _SUFFIXES.get(suffix)
    if known is not None:
        return known
    match = _EXPONENT_RE.fullmatch(suffix)
    if match is None:
        return None
    digits = match.group(2)
    if len(digits) > 10:
        return None
    exp = int(digits)
    if exp > _MAX_EXPONENT:
        return None
    return 10, -exp if match.group(1) == "-" else exp, DECIMAL_EXPONENT


def _build(negative: bool, digits: str, frac_len: int, base: int, exp: int, fmt: QuantityFormat) -> Quantity:
    """sign * int(digits) * 10**-frac_len * base**exp, rounded up to nano, capped for BinarySI."""
    digits = digits.lstrip("0")
    if not digits:
        return Quantity._make(0, 0, fmt)
    stripped = digits.rstrip("0")
    scale = len(digits) - len(stripped) - frac_len
    m = _digits_to_int(stripped)
    if base == 10:
        scale += exp
    else:
        m <<= exp
    if scale < NANO:
        # Anything finer than a nano-unit rounds up to the next one.
        k = NANO - scale
        # m has at most len(stripped) digits, plus fewer than exp more from a binary shift.
        if k > len(stripped) + (exp if base == 2 else 0):  # 0 < |value| < 1n
            m = 1
        else:
            q, rem = divmod(m, _pow10(k))
            m = q + 1 if rem else q
        scale = NANO
    m, scale = _normalize(m, scale)
    if fmt == BINARY_SI:
        if scale >= 0:
            if m * _pow10(scale) > _INT64_MAX:
                m, scale = _INT64_MAX, 0
        else:
            unit = _pow10(-scale)
            if m > _INT64_MAX * unit:
                m, scale = _INT64_MAX, 0
            elif m < unit:  # 0 < value < 1: no binary spelling, so DecimalSI
                fmt = DECIMAL_SI
    return Quantity._make(-m if negative else m, scale, fmt)


@lru_cache(maxsize=65536)
def _parse_cached(s: str) -> Quantity | None:
    if not s:
        return None
    # Fast paths: a plain integer, or an integer with one of the usual suffixes ("100m", "2Gi", "4k").
    if s.isascii():
        if s.isdigit():
            return _build(False, s, 0, 10, 0, DECIMAL_SI)
        last = s[-1]
        if last == "i":
            known = _SUFFIXES.get(s[-2:])
            head = s[:-2]
        else:
            known = _SUFFIXES.get(last)
            head = s[:-1]
        if known is not None and head.isdigit():
            return _build(False, head, 0, *known)
    match = _QUANTITY_RE.fullmatch(s)
    if match is None:
        return None
    sign, num, frac, suffix = match.groups()
    interpreted = _interpret_suffix(suffix)
    if interpreted is None:
        return None
    frac = frac or ""
    return _build(sign == "-", num + frac, len(frac), *interpreted)


def parse_quantity(s: str | int | float | Quantity, path: str = "") -> Quantity:
    """Same as :meth:`Quantity.parse`."""
    return Quantity.parse(s, path)


def must_parse(s: str) -> Quantity:
    """Parse a quantity known to be valid (constants, tests); raises :class:`InvalidQuantityError` if not."""
    return Quantity.parse(s)


def new_quantity(value: int, fmt: QuantityFormat = DECIMAL_SI) -> Quantity:
    """``value`` units in the given format (upstream ``NewQuantity``)."""
    return Quantity(value, 0, fmt)


def new_milli_quantity(value: int, fmt: QuantityFormat = DECIMAL_SI) -> Quantity:
    """``value / 1000`` in the given format (upstream ``NewMilliQuantity``)."""
    return Quantity(value, MILLI, fmt)


def new_scaled_quantity(value: int, scale: int) -> Quantity:
    """``value * 10**scale`` as DecimalSI (upstream ``NewScaledQuantity``)."""
    return Quantity(value, scale, DECIMAL_SI)
