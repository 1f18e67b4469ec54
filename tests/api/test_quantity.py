"""Tests for scheduling_framework.api.quantity, with upstream's quantity_test.go tables ported as data.

Upstream builds expectations with ``decQuantity(mantissa, exponent, format)`` (value ``mantissa * 10**exponent``);
here that is ``Quantity(mantissa, exponent, fmt)``.
"""

from __future__ import annotations

import copy
import math
import pickle
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_framework.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    MICRO,
    MILLI,
    NANO,
    Quantity,
    QuantityFormat,
    must_parse,
    new_milli_quantity,
    new_quantity,
    new_scaled_quantity,
    parse_quantity,
)
from scheduling_framework.errors import InvalidQuantityError, ValidationError

MOST_POSITIVE = (1 << 63) - 1
MOST_NEGATIVE = -(1 << 63)
MAX_ALLOWED = Quantity(MOST_POSITIVE, 0, BINARY_SI)

SI: QuantityFormat = DECIMAL_SI
BIN: QuantityFormat = BINARY_SI
EXP: QuantityFormat = DECIMAL_EXPONENT


def dq(mantissa: int, exponent: int, fmt: QuantityFormat) -> Quantity:
    return Quantity(mantissa, exponent, fmt)


def exact(q: Quantity) -> Fraction:
    return Fraction(q.as_decimal())


def binary_past_cap(q: Quantity) -> bool:
    """A BinarySI spelling of more than 2**63-1 parses back capped (upstream #140674), so it cannot round-trip."""
    return str(q).endswith("i") and abs(exact(q)) > MOST_POSITIVE


# --- TestQuantityParse -------------------------------------------------------------------------------

PARSE_TABLE: list[tuple[str, Quantity]] = [
    ("0", dq(0, 0, SI)),
    ("0n", dq(0, 0, SI)),
    ("0u", dq(0, 0, SI)),
    ("0m", dq(0, 0, SI)),
    ("0Ki", dq(0, 0, BIN)),
    ("0k", dq(0, 0, SI)),
    ("0Mi", dq(0, 0, BIN)),
    ("0M", dq(0, 0, SI)),
    ("0Gi", dq(0, 0, BIN)),
    ("0G", dq(0, 0, SI)),
    ("0Ti", dq(0, 0, BIN)),
    ("0T", dq(0, 0, SI)),
    # Quantity less numbers are allowed
    ("1", dq(1, 0, SI)),
    # Binary suffixes
    ("1Ki", dq(1024, 0, BIN)),
    ("8Ki", dq(8 * 1024, 0, BIN)),
    ("7Mi", dq(7 * 1024 * 1024, 0, BIN)),
    ("6Gi", dq(6 * 1024 * 1024 * 1024, 0, BIN)),
    ("5Ti", dq(5 * 1024**4, 0, BIN)),
    ("4Pi", dq(4 * 1024**5, 0, BIN)),
    ("3Ei", dq(3 * 1024**6, 0, BIN)),
    ("10Ti", dq(10 * 1024**4, 0, BIN)),
    ("100Ti", dq(100 * 1024**4, 0, BIN)),
    # Decimal suffixes
    ("5n", dq(5, -9, SI)),
    ("4u", dq(4, -6, SI)),
    ("3m", dq(3, -3, SI)),
    ("9", dq(9, 0, SI)),
    ("8k", dq(8, 3, SI)),
    ("50k", dq(5, 4, SI)),
    ("7M", dq(7, 6, SI)),
    ("6G", dq(6, 9, SI)),
    ("5T", dq(5, 12, SI)),
    ("40T", dq(4, 13, SI)),
    ("300T", dq(3, 14, SI)),
    ("2P", dq(2, 15, SI)),
    ("1E", dq(1, 18, SI)),
    # Decimal exponents
    ("1E-3", dq(1, -3, EXP)),
    ("1e3", dq(1, 3, EXP)),
    ("1E6", dq(1, 6, EXP)),
    ("1e9", dq(1, 9, EXP)),
    ("1E12", dq(1, 12, EXP)),
    ("1e15", dq(1, 15, EXP)),
    ("1E18", dq(1, 18, EXP)),
    # Nonstandard but still parsable
    ("1e14", dq(1, 14, EXP)),
    ("1e13", dq(1, 13, EXP)),
    ("1e3", dq(1, 3, EXP)),
    ("100.035k", dq(100035, 0, SI)),
    # Things that look like floating point
    ("0.001", dq(1, -3, SI)),
    ("0.0005k", dq(5, -1, SI)),
    ("0.005", dq(5, -3, SI)),
    ("0.05", dq(5, -2, SI)),
    ("0.5", dq(5, -1, SI)),
    ("0.00050k", dq(5, -1, SI)),
    ("0.00500", dq(5, -3, SI)),
    ("0.05000", dq(5, -2, SI)),
    ("0.50000", dq(5, -1, SI)),
    ("0.5e0", dq(5, -1, EXP)),
    ("0.5e-1", dq(5, -2, EXP)),
    ("0.5e-2", dq(5, -3, EXP)),
    ("0.5e0", dq(5, -1, EXP)),
    ("10.035M", dq(10035, 3, SI)),
    ("1.2e3", dq(12, 2, EXP)),
    ("1.3E+6", dq(13, 5, EXP)),
    ("1.40e9", dq(14, 8, EXP)),
    ("1.53E12", dq(153, 10, EXP)),
    ("1.6e15", dq(16, 14, EXP)),
    ("1.7E18", dq(17, 17, EXP)),
    ("9.01", dq(901, -2, SI)),
    ("8.1k", dq(81, 2, SI)),
    ("7.123456M", dq(7123456, 0, SI)),
    ("6.987654321G", dq(6987654321, 0, SI)),
    ("5.444T", dq(5444, 9, SI)),
    ("40.1T", dq(401, 11, SI)),
    ("300.2T", dq(3002, 11, SI)),
    ("2.5P", dq(25, 14, SI)),
    ("1.01E", dq(101, 16, SI)),
    # Things that saturate/round
    ("3.001n", dq(4, -9, SI)),
    ("1.1E-9", dq(2, -9, EXP)),
    ("0.0000000001", dq(1, -9, SI)),
    ("0.0000000005", dq(1, -9, SI)),
    ("0.00000000050", dq(1, -9, SI)),
    ("0.5e-9", dq(1, -9, EXP)),
    ("0.9n", dq(1, -9, SI)),
    ("0.00000012345", dq(124, -9, SI)),
    ("0.00000012354", dq(124, -9, SI)),
    ("9Ei", MAX_ALLOWED),
    ("9223372036854775807Ki", MAX_ALLOWED),
    ("12E", dq(12, 18, SI)),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", dq(10243584, -2, BIN)),
    ("0.5Mi", dq(512 * 1024, 0, BIN)),
    ("0.05Gi", dq(536870912, -1, BIN)),
    ("0.025Ti", dq(274877906944, -1, BIN)),
    # Things written by trolls
    ("0.000000000001Ki", dq(2, -9, SI)),  # rounds up, changes format
    (".001", dq(1, -3, SI)),
    (".0001k", dq(100, -3, SI)),
    ("1.", dq(1, 0, SI)),
    ("1.G", dq(1, 9, SI)),
]


@pytest.mark.parametrize(("text", "expect"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_quantity_parse(text: str, expect: Quantity) -> None:
    got = Quantity.parse(text)
    assert got.cmp(expect) == 0, f"{text}: expected {expect}, got {got}"
    assert got == expect
    assert got.format == expect.format


@pytest.mark.parametrize(("text", "expect"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_quantity_parse_negative_and_plus(text: str, expect: Quantity) -> None:
    neg = Quantity.parse("-" + text)
    assert neg.cmp(-expect) == 0
    assert neg.format == expect.format
    plus = Quantity.parse("+" + text)
    assert plus.cmp(expect) == 0
    assert plus.format == expect.format


@pytest.mark.parametrize(("text", "expect"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_quantity_parse_round_trips_through_string(text: str, expect: Quantity) -> None:
    got = Quantity.parse(text)
    assert Quantity.parse(str(got)) == got
    for fmt in (SI, BIN, EXP):
        # Same value in another format: still equal, and its string parses back to the same value.
        other = Quantity(got.mantissa, got.exponent, fmt)
        assert other.cmp(got) == 0
        if binary_past_cap(other):
            assert Quantity.parse(str(other)) == MAX_ALLOWED
        else:
            assert Quantity.parse(str(other)) == got


INVALID = [
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    # an exponent outside the int32 scale is rejected rather than truncated
    "1e4294967297",
    # leading/trailing whitespace is forbidden
    " 1",
    "1 ",
    # more from the brief and the grammar
    "",
    "1.5.3",
    "1Ki5",
    "1K",
    "1e",
    "1e+",
    "1ei",
    "1Ee3",
    "1e5e5",
    "1e3.5",
    "--1",
    "+-1",
    "1..",
    "1_000",
    "\uff11",  # FULLWIDTH DIGIT ONE: not an ASCII digit
    "1\n",
    "0x10",
    "Infinity",
    "NaN",
    "1E2147483648",
    "1E-2147483648",
    "1e9223372036854775807",
    "1e9223372036854775808",
    "1e6024865272343",
]


@pytest.mark.parametrize("text", INVALID)
def test_quantity_parse_invalid(text: str) -> None:
    with pytest.raises(InvalidQuantityError):
        Quantity.parse(text)


def test_invalid_quantity_error_message_and_types() -> None:
    path = "spec.containers[0].resources.requests.cpu"
    with pytest.raises(InvalidQuantityError) as info:
        Quantity.parse("1.5.3", path)
    assert str(info.value) == 'spec.containers[0].resources.requests.cpu: invalid quantity "1.5.3"'
    assert info.value.path == path
    assert isinstance(info.value, ValidationError)
    assert isinstance(info.value, ValueError)
    # cached failures still report the caller's path
    with pytest.raises(InvalidQuantityError, match=r"^other: invalid quantity"):
        parse_quantity("1.5.3", "other")
    with pytest.raises(InvalidQuantityError):
        must_parse("Non-Numeric")  # TestQuantityParseNonNumericPanic


def test_exponent_int32_bounds() -> None:
    # TestInterpretExponentInt32Bounds: [-MaxInt32, MaxInt32] accepted, anything past rejected.
    big = Quantity.parse("1E2147483647")
    assert big.format == DECIMAL_EXPONENT
    assert big.exponent == 2147483647
    assert big.value() == MOST_POSITIVE  # saturates instead of building 10**2147483647
    assert big.as_float() == math.inf
    assert str(big) == "10e2147483646"
    assert Quantity.parse(str(big)) == big
    tiny = Quantity.parse("1E-2147483647")
    assert tiny == dq(1, -9, EXP)  # rounded up to one nano-unit
    assert Quantity.parse("e14") == Quantity()  # an empty number is zero upstream
    assert Quantity.parse("1e0000000000003") == dq(1, 3, EXP)


def test_upstream_scanner_quirks() -> None:
    # Upstream's scanner reads a missing number as 0, so these parse (to zero) rather than fail.
    for text in (".", "-.", "+", "-", "m", "Ki", "000", "-0", "+0.000"):
        assert Quantity.parse(text).is_zero(), text
    assert Quantity.parse("Ki").format == BINARY_SI
    assert Quantity.parse("-.").format == DECIMAL_SI
    # TestParseQuantityString's decompositions, by value
    assert Quantity.parse("0.025Ti") == dq(274877906944, -1, BIN)
    assert Quantity.parse("1.025Ti") == Quantity(1025 * 1024**4, -3, BIN)
    assert Quantity.parse("-1.025Ti") == Quantity(-1025 * 1024**4, -3, BIN)


# --- TestQuantityParseZero / canonical strings ----------------------------------------------------------


def test_quantity_parse_zero() -> None:
    zero = must_parse("0")
    assert str(zero) == "0"
    assert zero.format == DECIMAL_SI
    assert zero.is_zero()
    assert Quantity() == zero


# (quantity, canonical string, an alternate spelling that must canonicalise to it or "")
STRING_TABLE: list[tuple[Quantity, str, str]] = [
    (dq(1024 * 1024 * 1024, 0, BIN), "1Gi", "1024Mi"),
    (dq(300 * 1024 * 1024, 0, BIN), "300Mi", "307200Ki"),
    (dq(6 * 1024, 0, BIN), "6Ki", ""),
    (dq(1001 * 1024 * 1024 * 1024, 0, BIN), "1001Gi", "1025024Mi"),
    (dq(1024 * 1024 * 1024 * 1024, 0, BIN), "1Ti", "1024Gi"),
    (dq(5, 0, BIN), "5", "5000m"),
    (dq(500, -3, BIN), "500m", "0.5"),
    (dq(1, 9, SI), "1G", "1000M"),
    (dq(1000, 6, SI), "1G", "0.001T"),
    (dq(1000000, 3, SI), "1G", ""),
    (dq(1000000000, 0, SI), "1G", ""),
    (dq(1, -3, SI), "1m", "1000u"),
    (dq(80, -3, SI), "80m", ""),
    (dq(1080, -3, SI), "1080m", "1.08"),
    (dq(108, -2, SI), "1080m", "1080000000n"),
    (dq(10800, -4, SI), "1080m", ""),
    (dq(300, 6, SI), "300M", ""),
    (dq(1, 12, SI), "1T", ""),
    # DecimalSI has no suffix beyond "E": exponent notation keeps the magnitude.
    (dq(1, 18, SI), "1E", ""),
    (dq(1, 21, SI), "1e21", "1000E"),
    (dq(5, 21, SI), "5e21", "5000E"),
    (dq(1, 24, SI), "1e24", "1000000E"),
    # BinarySI has no suffix beyond "Ei": exact decimal instead.
    (dq(1, 70, BIN), "10e69", ""),
    (dq(2, 70, BIN), "20e69", ""),
    (dq(1, 72, BIN), "1e72", ""),
    (dq(1234567, 6, SI), "1234567M", ""),
    (dq(1234567, -3, BIN), "1234567m", ""),
    (dq(3, 3, SI), "3k", ""),
    (dq(1025, 0, BIN), "1025", ""),
    (dq(0, 0, SI), "0", ""),
    (dq(0, 0, BIN), "0", ""),
    (dq(1, 9, EXP), "1e9", ".001e12"),
    (dq(1, -3, EXP), "1e-3", "0.001e0"),
    (dq(1, -9, EXP), "1e-9", "1000e-12"),
    (dq(80, -3, EXP), "80e-3", ""),
    (dq(300, 6, EXP), "300e6", ""),
    (dq(1, 12, EXP), "1e12", ""),
    (dq(1, 3, EXP), "1e3", ""),
    (dq(3, 3, EXP), "3e3", ""),
    (dq(3, 3, SI), "3k", ""),
    (dq(0, 0, EXP), "0", "00"),
    (dq(1, -9, SI), "1n", ""),
    (dq(80, -9, SI), "80n", ""),
    (dq(1080, -9, SI), "1080n", ""),
    (dq(108, -8, SI), "1080n", ""),
    (dq(10800, -10, SI), "1080n", ""),
    (dq(1, -6, SI), "1u", ""),
    (dq(80, -6, SI), "80u", ""),
    (dq(1080, -6, SI), "1080u", ""),
]


@pytest.mark.parametrize(("q", "expect", "alternate"), STRING_TABLE, ids=[e for _, e, _ in STRING_TABLE])
def test_quantity_string(q: Quantity, expect: str, alternate: str) -> None:
    assert str(q) == expect
    assert Quantity.parse(expect) == q
    assert str(Quantity.parse(expect)) == expect
    if alternate:
        assert str(Quantity.parse(alternate)) == expect
    if not q.is_zero():
        assert str(-q) == "-" + expect  # never "-0"


def test_binary_si_past_ei_arithmetic_round_trip() -> None:
    q = must_parse("1Ei")
    for _ in range(10):
        q = q + q  # 2**70
    assert str(q) == "1180591620717411303424"
    assert must_parse(str(q)) == q


def test_binary_si_zero_exponent_string() -> None:
    assert str(dq(2000, 0, BIN)) == "2000"
    assert str(dq(-2000, 0, BIN)) == "-2000"


def test_quantity_string_below_nano() -> None:
    assert str(dq(1, -12, SI)) == "1e-12"
    assert str(dq(1, -10, SI)) == "100e-12"


PARSE_EMIT = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
]


@pytest.mark.parametrize(("text", "expect"), PARSE_EMIT)
def test_quantity_parse_emit(text: str, expect: str) -> None:
    assert str(Quantity.parse(text)) == expect
    assert str(Quantity.parse("-" + text)) == "-" + expect


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("1.5Gi", "1536Mi"),
        ("1.5", "1500m"),
        ("1e3", "1e3"),
        ("100Mi", "100Mi"),
        ("12e6", "12e6"),
        ("0.1m", "100u"),  # sub-milli survives: rounding is to nano-units
        ("0.1n", "1n"),
        ("1.1Ki", "1126400m"),  # a fractional BinarySI value is shown as DecimalSI
        ("100m", "100m"),
        ("2", "2"),
        ("1000", "1k"),
        ("1024", "1024"),
        ("2048Ki", "2Mi"),
        ("1E3", "1e3"),
        ("1.5e-3", "1500e-6"),
        ("-0", "0"),
    ],
)
def test_canonical_examples(text: str, expect: str) -> None:
    assert str(Quantity.parse(text)) == expect
    assert repr(Quantity.parse(text)) == f"Quantity({expect!r})"


# --- TestParseQuantity (values around the int64 edges) ------------------------------------------------

# (input, exact value, canonical string or "" when the input is already canonical)
BIG_TABLE: list[tuple[str, str, str]] = [
    ("-999999999999999999", "-999999999999999999", ""),
    ("999999999999999999", "999999999999999999", ""),
    ("-999999999999999999.0", "-999999999999999999", "-999999999999999999"),
    ("999999999999999999.0", "999999999999999999", "999999999999999999"),
    ("-999999999999999999.1", "-999999999999999999.1", "-999999999999999999100m"),
    ("999999999999999999.1", "999999999999999999.1", "999999999999999999100m"),
    ("-9999999999999999999", "-9999999999999999999", ""),
    ("9999999999999999999", "9999999999999999999", ""),
    ("-1E", "-1000000000000000000", ""),
    ("1E", "1000000000000000000", ""),
    ("-1000000000000000000", "-1000000000000000000", "-1E"),
    ("1000000000000000000", "1000000000000000000", "1E"),
    ("-9999999999999999999.0", "-9999999999999999999", "-9999999999999999999"),
    ("9999999999999999999.0", "9999999999999999999", "9999999999999999999"),
    ("-1.0E", "-1000000000000000000", "-1E"),
    ("1.0E", "1000000000000000000", "1E"),
    ("-1000000000000000000.0", "-1000000000000000000", "-1E"),
    ("1000000000000000000.0", "1000000000000000000", "1E"),
    ("-9999999999999999999000m", "-9999999999999999999", "-9999999999999999999"),
    ("9999999999999999999000m", "9999999999999999999", "9999999999999999999"),
    ("-9999999999999999999.1", "-9999999999999999999.1", "-9999999999999999999100m"),
    ("9999999999999999999.1", "9999999999999999999.1", "9999999999999999999100m"),
    ("-1.0000000000000000001E", "-1000000000000000000.1", "-1000000000000000000100m"),
    ("1.0000000000000000001E", "1000000000000000000.1", "1000000000000000000100m"),
    ("-1000000000000000000.1", "-1000000000000000000.1", "-1000000000000000000100m"),
    ("1000000000000000000.1", "1000000000000000000.1", "1000000000000000000100m"),
    ("-1.000000000000000001E", "-1000000000000000001", "-1000000000000000001"),
    ("1.000000000000000001E", "1000000000000000001", "1000000000000000001"),
    ("-1000000000000000001", "-1000000000000000001", ""),
    ("1000000000000000001", "1000000000000000001", ""),
    ("-10E", "-10000000000000000000", ""),
    ("10E", "10000000000000000000", ""),
    ("-10000000000000000000", "-10000000000000000000", "-10E"),
    ("10000000000000000000", "10000000000000000000", "10E"),
    ("-10.0E", "-10000000000000000000", "-10E"),
    ("10.0E", "10000000000000000000", "10E"),
    ("-10000000000000000000.0", "-10000000000000000000", "-10E"),
    ("10000000000000000000.0", "10000000000000000000", "10E"),
    ("-10000000000000000000000m", "-10000000000000000000", "-10E"),
    ("10000000000000000000000m", "10000000000000000000", "10E"),
    ("-10.0000000000000000001E", "-10000000000000000000.1", "-10000000000000000000100m"),
    ("10.0000000000000000001E", "10000000000000000000.1", "10000000000000000000100m"),
    ("-10000000000000000000.1", "-10000000000000000000.1", "-10000000000000000000100m"),
    ("10000000000000000000.1", "10000000000000000000.1", "10000000000000000000100m"),
    ("-10.000000000000000001E", "-10000000000000000001", "-10000000000000000001"),
    ("10.000000000000000001E", "10000000000000000001", "10000000000000000001"),
    ("-10000000000000000001", "-10000000000000000001", ""),
    ("10000000000000000001", "10000000000000000001", ""),
    ("-9223372036854775809", "-9223372036854775809", ""),
    ("9223372036854775806", "9223372036854775806", ""),
    ("-9223372036854775809.0", "-9223372036854775809", "-9223372036854775809"),
    ("9223372036854775806.0", "9223372036854775806", "9223372036854775806"),
    ("-9223372036854775809000m", "-9223372036854775809", "-9223372036854775809"),
    ("9223372036854775806000m", "9223372036854775806", "9223372036854775806"),
    ("-9223372036854775809.1", "-9223372036854775809.1", "-9223372036854775809100m"),
    ("9223372036854775806.1", "9223372036854775806.1", "9223372036854775806100m"),
    ("-9223372036854775808", "-9223372036854775808", ""),
    ("9223372036854775807", "9223372036854775807", ""),
    ("-9223372036854775808.0", "-9223372036854775808", "-9223372036854775808"),
    ("9223372036854775807.0", "9223372036854775807", "9223372036854775807"),
    ("-9223372036854775808000m", "-9223372036854775808", "-9223372036854775808"),
    ("9223372036854775807000m", "9223372036854775807", "9223372036854775807"),
    ("-9223372036854775808.1", "-9223372036854775808.1", "-9223372036854775808100m"),
    ("9223372036854775807.1", "9223372036854775807.1", "9223372036854775807100m"),
    ("-9223372036854775807", "-9223372036854775807", ""),
    ("9223372036854775808", "9223372036854775808", ""),
    ("-9223372036854775807.0", "-9223372036854775807", "-9223372036854775807"),
    ("9223372036854775808.0", "9223372036854775808", "9223372036854775808"),
    ("-9223372036854775807000m", "-9223372036854775807", "-9223372036854775807"),
    ("9223372036854775808000m", "9223372036854775808", "9223372036854775808"),
    ("-9223372036854775807.1", "-9223372036854775807.1", "-9223372036854775807100m"),
    ("9223372036854775808.1", "9223372036854775808.1", "9223372036854775808100m"),
]


@pytest.mark.parametrize(("text", "value", "canonical"), BIG_TABLE, ids=[t for t, _, _ in BIG_TABLE])
def test_parse_quantity_int64_edges(text: str, value: str, canonical: str) -> None:
    q = Quantity.parse(text)
    assert q.as_decimal() == Decimal(value)
    assert str(q) == (canonical or text)


# --- Cmp ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "expect"),
    [("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1)],
)
def test_quantity_cmp(x: str, y: str, expect: int) -> None:
    a, b = must_parse(x), must_parse(y)
    assert a.cmp(b) == expect
    assert b.cmp(a) == -expect


CMP_TABLE: list[tuple[Quantity, Quantity, int]] = [
    (dq(901, -2, SI), dq(901, -2, SI), 0),
    (dq(90, -1, SI), dq(901, -2, SI), -1),
    (dq(901, -2, SI), dq(900, -2, SI), 1),
    (dq(0, 0, SI), dq(0, 0, SI), 0),
    (dq(0, 1, SI), dq(0, -1, SI), 0),
    (dq(0, -1, SI), dq(0, 1, SI), 0),
    (dq(800, -3, SI), dq(1, 0, SI), -1),
    (dq(800, -3, SI), dq(79, -2, SI), 1),
    (dq(MOST_POSITIVE, 0, SI), dq(1, -1, SI), 1),
    (dq(MOST_POSITIVE, 1, SI), dq(1, 0, SI), 1),
    (dq(MOST_POSITIVE, 1, SI), dq(1, 1, SI), 1),
    (dq(MOST_POSITIVE, 1, SI), dq(0, 1, SI), 1),
    (dq(MOST_POSITIVE, -16, SI), dq(1, 3, SI), -1),
    (dq(MOST_NEGATIVE, 0, SI), dq(0, 0, SI), -1),
    (dq(MOST_NEGATIVE, -18, SI), dq(-1, 0, SI), -1),
    (dq(MOST_NEGATIVE, -19, SI), dq(-1, 0, SI), 1),
    (dq(10**18, -17, SI), dq(1, 1, SI), 0),
    (dq(10**18, -17, SI), dq(-10, 0, SI), 1),
    (dq(-(10**18), -17, SI), dq(-10, 0, SI), 0),
    (dq(10**18, -17, SI), dq(1, 0, SI), 1),
    (dq(10**18 + 1, -17, SI), dq(1, 1, SI), 1),
    (dq(10**18 - 1, -17, SI), dq(1, 1, SI), -1),
    # far-apart exponents are decided without building the huge powers
    (dq(1, 2_000_000_000, EXP), dq(MOST_POSITIVE, 0, SI), 1),
    (dq(-1, 2_000_000_000, EXP), dq(MOST_NEGATIVE, 0, SI), -1),
    (dq(1, -2_000_000_000, EXP), dq(0, 0, SI), 1),
    (dq(1, -2_000_000_000, EXP), dq(1, -1_999_999_999, EXP), -1),
    (dq(123, 100, EXP), dq(1230, 99, EXP), 0),
    (dq(123, 100, EXP), dq(1231, 99, EXP), -1),
    (dq(99, 100, EXP), dq(1, 102, EXP), -1),
]


@pytest.mark.parametrize(("a", "b", "expect"), CMP_TABLE)
def test_quantity_cmp_int64_and_dec(a: Quantity, b: Quantity, expect: int) -> None:
    assert a.cmp(b) == expect
    assert b.cmp(a) == -expect
    assert (a == b) == (expect == 0)
    assert (a != b) == (expect != 0)
    assert (a < b) == (expect < 0)
    assert (a <= b) == (expect <= 0)
    assert (a > b) == (expect > 0)
    assert (a >= b) == (expect >= 0)
    assert exact(a) == exact(b) if expect == 0 else True


def test_equality_ignores_format_and_hash_agrees() -> None:
    a = must_parse("1Ki")
    b = must_parse("1024")
    c = must_parse("1.024e3")
    assert a == b == c
    assert hash(a) == hash(b) == hash(c)
    assert len({a, b, c, must_parse("1025")}) == 2
    assert a != "1Ki"
    assert (a == "1Ki") is False
    with pytest.raises(TypeError):
        _ = a < "1Ki"  # type: ignore[operator]


# --- RoundUp / Value / MilliValue / ScaledValue -------------------------------------------------------

ROUND_UP = [
    ("9.01", -3, dq(901, -2, SI), True),
    ("9.01", -2, dq(901, -2, SI), True),
    ("9.01", -1, dq(91, -1, SI), False),
    ("9.01", 0, dq(10, 0, SI), False),
    ("9.01", 1, dq(10, 0, SI), False),
    ("9.01", 2, dq(100, 0, SI), False),
    ("-9.01", -3, dq(-901, -2, SI), True),
    ("-9.01", -2, dq(-901, -2, SI), True),
    ("-9.01", -1, dq(-91, -1, SI), False),
    ("-9.01", 0, dq(-10, 0, SI), False),
    ("-9.01", 1, dq(-10, 0, SI), False),
    ("-9.01", 2, dq(-100, 0, SI), False),
]


@pytest.mark.parametrize(("text", "scale", "expect", "ok"), ROUND_UP)
def test_quantity_round_up(text: str, scale: int, expect: Quantity, ok: bool) -> None:
    got, exact_ = must_parse(text).round_up(scale)
    assert exact_ is ok
    assert got == expect
    assert got.format == DECIMAL_SI


def test_round_up_far_scale() -> None:
    got, ok = must_parse("1n").round_up(100)
    assert (got, ok) == (dq(1, 100, SI), False)
    assert must_parse("0").round_up(5) == (must_parse("0"), True)


NEGATIVE_VALUES = [
    ("-.484785E-7466", -1, -1),
    (".484785E-7466", 1, 1),
    ("-.484785E-1", -1, -49),
    (".484785E-1", 1, 49),
    ("-0.0005", -1, -1),
    ("0.0005", 1, 1),
    ("-1500m", -2, -1500),
    ("1500m", 2, 1500),
    ("-9.5000000001Gi", -10200547329, -10200547328108),
    ("9.5000000001Gi", 10200547329, 10200547328108),
    ("-1", -1, -1000),
    ("1", 1, 1000),
    ("0", 0, 0),
]


@pytest.mark.parametrize(("text", "value", "milli"), NEGATIVE_VALUES)
def test_value_rounds_away_from_zero(text: str, value: int, milli: int) -> None:
    q = must_parse(text)
    assert q.value() == value
    assert q.milli_value() == milli


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("100m", 1, 100),
        ("1", 1, 1000),
        ("1.5", 2, 1500),
        ("0.1m", 1, 1),
        ("1n", 1, 1),
        ("1001u", 1, 2),
        ("1Gi", 1 << 30, 1000 << 30),
        ("2Ki", 2048, 2048000),
        ("1.5Ki", 1536, 1536000),
        ("1.1Ki", 1127, 1126400),
        ("9223372036854775807", MOST_POSITIVE, MOST_POSITIVE),  # milli saturates
        ("9223372036854775807m", 9223372036854776, MOST_POSITIVE),
        ("10E", MOST_POSITIVE, MOST_POSITIVE),  # saturates like upstream's int64 path
        ("-10E", MOST_NEGATIVE, MOST_NEGATIVE),
        ("-9223372036854775808", MOST_NEGATIVE, MOST_NEGATIVE),
        ("1e-9", 1, 1),
    ],
)
def test_value_and_milli_value(text: str, value: int, milli: int) -> None:
    q = must_parse(text)
    assert q.value() == value
    assert q.milli_value() == milli
    assert q.scaled_value(0) == value
    assert q.scaled_value(MILLI) == milli


@pytest.mark.parametrize(
    ("from_scale", "to_scale", "expected"),
    [
        (NANO, NANO, 1),
        (NANO, MICRO, 1),
        (NANO, MILLI, 1),
        (NANO, 0, 1),
        (MICRO, NANO, 1000),
        (MICRO, MICRO, 1),
        (MICRO, MILLI, 1),
        (MICRO, 0, 1),
        (MILLI, NANO, 1000 * 1000),
        (MILLI, MICRO, 1000),
        (MILLI, MILLI, 1),
        (MILLI, 0, 1),
        (0, NANO, 1000 * 1000 * 1000),
        (0, MICRO, 1000 * 1000),
        (0, MILLI, 1000),
        (0, 0, 1),
        (2, -2, 100 * 100),
    ],
)
def test_scaled_value(from_scale: int, to_scale: int, expected: int) -> None:
    assert new_scaled_quantity(1, from_scale).scaled_value(to_scale) == expected


@pytest.mark.parametrize(
    ("value", "scale", "expect"),
    [
        (1, NANO, "1n"),
        (1000, NANO, "1u"),
        (1, MICRO, "1u"),
        (1000, MICRO, "1m"),
        (1, MILLI, "1m"),
        (1000, MILLI, "1"),
        (1, 0, "1"),
        (0, NANO, "0"),
        (0, MICRO, "0"),
        (0, MILLI, "0"),
        (0, 0, "0"),
    ],
)
def test_new_scaled_set(value: int, scale: int, expect: str) -> None:
    q = new_scaled_quantity(value, scale)
    assert str(q) == expect
    assert must_parse(str(q)).scaled_value(scale) == value


@pytest.mark.parametrize(
    ("value", "fmt", "expect"),
    [
        (1, SI, "1"),
        (1000, SI, "1k"),
        (1234000, SI, "1234k"),
        (1024, BIN, "1Ki"),
        (1000000, EXP, "1e6"),
        (1024 * 1024, BIN, "1Mi"),
    ],
)
def test_new_set(value: int, fmt: QuantityFormat, expect: str) -> None:
    q = new_quantity(value, fmt)
    assert str(q) == expect
    assert must_parse(str(q)).value() == value


@pytest.mark.parametrize(
    ("value", "fmt", "expect", "exact_"),
    [
        (1, SI, "1m", True),
        (1000, SI, "1", True),
        (1234000, SI, "1234", True),
        (1024, BIN, "1024m", False),  # format changes
        (1000000, EXP, "1e3", True),
        (1024 * 1024, BIN, "1048576m", False),  # format changes
    ],
)
def test_milli_new_set(value: int, fmt: QuantityFormat, expect: str, exact_: bool) -> None:
    q = new_milli_quantity(value, fmt)
    assert str(q) == expect
    if exact_:
        assert must_parse(str(q)).milli_value() == value


def test_invalid_format_rejected() -> None:
    # Upstream silently prints an unknown format as DecimalExponent; here it is refused up front.
    with pytest.raises(ValueError, match="unknown quantity format"):
        Quantity(1, 0, "invalidFormatDefaultsToExponent")  # type: ignore[arg-type]


# --- arithmetic -----------------------------------------------------------------------------------------

ZERO_SI = Quantity(0, 0, SI)


@pytest.mark.parametrize(
    ("a", "b", "expected", "fmt"),
    [
        (dq(10, 0, SI), dq(1, 1, SI), dq(20, 0, SI), SI),
        (dq(10, 0, SI), dq(1, 0, BIN), dq(11, 0, SI), SI),
        (dq(10, 0, BIN), dq(1, 0, SI), dq(11, 0, BIN), BIN),
        (ZERO_SI, dq(50, 0, SI), dq(50, 0, SI), SI),
        (dq(50, 0, SI), ZERO_SI, dq(50, 0, SI), SI),
        (ZERO_SI, ZERO_SI, dq(0, 0, SI), SI),
        (ZERO_SI, dq(50, 0, BIN), dq(50, 0, BIN), BIN),  # a zero left side takes the right's format
    ],
)
def test_add(a: Quantity, b: Quantity, expected: Quantity, fmt: str) -> None:
    got = a + b
    assert got == expected
    assert got.format == fmt


@pytest.mark.parametrize(
    ("a", "b", "expected", "fmt"),
    [
        (dq(10, 0, SI), dq(1, 1, SI), dq(0, 0, SI), SI),
        (dq(10, 0, SI), dq(1, 0, BIN), dq(9, 0, SI), SI),
        (dq(10, 0, BIN), dq(1, 0, SI), dq(9, 0, BIN), BIN),
        (ZERO_SI, dq(50, 0, SI), dq(-50, 0, SI), SI),
        (dq(50, 0, SI), ZERO_SI, dq(50, 0, SI), SI),
        (ZERO_SI, ZERO_SI, dq(0, 0, SI), SI),
    ],
)
def test_sub(a: Quantity, b: Quantity, expected: Quantity, fmt: str) -> None:
    got = a - b
    assert got == expected
    assert got.format == fmt


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_add_sub_zero_preserves_suffix(text: str) -> None:
    value = must_parse(text)
    zero = must_parse("0")
    assert str(value + zero) == text
    assert str(zero + value) == text
    assert str(value - zero) == text
    assert str(zero - value) == str(-value) == "-" + text


def test_canonicalize_zero_after_arithmetic() -> None:
    val = must_parse("1000m") - must_parse("1")
    assert str(val) == "0"
    assert val.is_zero()


@pytest.mark.parametrize(
    ("a", "expected", "text"),
    [
        (dq(901, -2, SI), dq(-901, -2, SI), "-9010m"),
        (dq(0, 0, SI), dq(0, 0, SI), "0"),
        (dq(10, 0, BIN), dq(-10, 0, BIN), "-10"),
        (dq(-10, 0, BIN), dq(10, 0, BIN), "10"),
        (dq(MOST_NEGATIVE, 0, SI), must_parse("9223372036854775808"), "9223372036854775808"),
        (dq(MOST_NEGATIVE, -3, SI), must_parse("9223372036854775808m"), "9223372036854775808m"),
    ],
)
def test_neg(a: Quantity, expected: Quantity, text: str) -> None:
    assert -a == expected
    assert str(-a) == text
    assert (-a).format == a.format
    negated = -a
    assert -negated == a


def test_sub_at_most_negative() -> None:
    most_negative = dq(MOST_NEGATIVE, 0, SI)
    assert str(ZERO_SI - most_negative) == "9223372036854775808"
    assert str(dq(1, 0, SI) - most_negative) == "9223372036854775809"
    assert str(dq(1, 1, SI) - most_negative) == "9223372036854775818"
    assert str(dq(1, -3, SI) - dq(MOST_NEGATIVE, -3, SI)) == "9223372036854775809m"
    got = ZERO_SI - dq(MOST_NEGATIVE, 0, BIN)
    assert got.format == BINARY_SI
    assert str(got) == "8Ei"


def test_add_sub_round_trip_across_scales() -> None:
    import random

    rng = random.Random(1234)
    values = [new_scaled_quantity(rng.getrandbits(63), rng.randint(-10, 10)) for _ in range(200)]
    total = ZERO_SI
    for v in values:
        total = total + v
    for v in values:
        total = total - v
    assert total.is_zero()


# --- floats ---------------------------------------------------------------------------------------------

FLOAT_TABLE: list[tuple[Quantity, float]] = [
    (dq(0, 0, SI), 0.0),
    (dq(0, 0, EXP), 0.0),
    (dq(0, 0, BIN), 0.0),
    (dq(0, 500, SI), 0.0),
    (dq(0, -500, SI), 0.0),
    (dq(1, 0, SI), 1),
    (dq(1, 0, EXP), 1),
    (dq(1, 0, BIN), 1),
    (dq(1024, 0, BIN), 1024),
    (dq(8 * 1024, 0, BIN), 8 * 1024),
    (dq(7 * 1024 * 1024, 0, BIN), 7 * 1024 * 1024),
    (dq(7 * 1024 * 1024, 1, BIN), (7 * 1024 * 1024) * 10),
    (dq(7 * 1024 * 1024, 4, BIN), (7 * 1024 * 1024) * 10000),
    (dq(7 * 1024 * 1024, 8, BIN), (7 * 1024 * 1024) * 100000000),
    (dq(7 * 1024 * 1024, -1, BIN), (7 * 1024 * 1024) / 10.0),
    (dq(7 * 1024 * 1024, -8, BIN), (7 * 1024 * 1024) / 100000000.0),
    (dq(1024, 0, SI), 1024),
    (dq(7 * 1024 * 1024, 1, SI), (7 * 1024 * 1024) * 10),
    (dq(7 * 1024 * 1024, -1, SI), (7 * 1024 * 1024) / 10.0),
    (dq(7 * 1024 * 1024, -8, SI), (7 * 1024 * 1024) / 100000000.0),
    (dq(7 * 1024 * 1024, 8, EXP), (7 * 1024 * 1024) * 100000000),
    (dq(7 * 1024 * 1024, -1, EXP), (7 * 1024 * 1024) / 10.0),
    (MAX_ALLOWED, float(MOST_POSITIVE)),
    (Quantity(MOST_POSITIVE, 0, SI), float(MOST_POSITIVE)),
    (dq(12, 18, SI), 1.2e19),
    (dq(12, 500, SI), math.inf),
    (dq(-12, 500, SI), -math.inf),
    (dq(12, 2_000_000_000, EXP), math.inf),
    (dq(12, -2_000_000_000, EXP), 0.0),
    (must_parse("2Ki"), 2048),
    (must_parse("1.1Ki"), 1126.4e0),
    (must_parse("1Mi"), 1.048576e06),
    (must_parse("2Gi"), 2.147483648e09),
    (must_parse("100m"), 0.1),
]


@pytest.mark.parametrize(("q", "out"), FLOAT_TABLE)
def test_quantity_as_float(q: Quantity, out: float) -> None:
    # Upstream's AsFloat64Slow table (correctly rounded); AsApproximateFloat64 may differ in the last bit.
    assert q.as_float() == out


# --- other input types, caching, immutability ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expect"),
    [
        (0, "0"),
        (2, "2"),
        (-3, "-3"),
        (1000, "1k"),
        (1 << 40, "1099511627776"),
        (0.5, "500m"),
        (1.5, "1500m"),
        (100.0, "100"),
        (1e20, "100e18"),  # repr gives "1e+20": DecimalExponent
        (1.5e-10, "1e-9"),
        (-0.0, "0"),
    ],
)
def test_parse_numbers(value: int | float, expect: str) -> None:
    q = Quantity.parse(value)
    assert str(q) == expect
    assert q.format == DECIMAL_SI or isinstance(value, float)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, None, [1], b"1"])
def test_parse_rejects_other_inputs(value: object) -> None:
    with pytest.raises(InvalidQuantityError):
        Quantity.parse(value, "x")  # type: ignore[arg-type]


def test_parse_accepts_quantity_and_caches() -> None:
    q = must_parse("250m")
    assert Quantity.parse(q) is q
    assert must_parse("250m") is q  # cached: the same immutable object


def test_immutable_and_copyable() -> None:
    q = must_parse("1.5Gi")
    with pytest.raises(AttributeError):
        q._m = 3
    with pytest.raises(AttributeError):
        q.extra = 1
    assert copy.copy(q) is q
    assert copy.deepcopy(q) is q
    back = pickle.loads(pickle.dumps(q))
    assert back == q
    assert back.format == q.format
    assert str(back) == "1536Mi"


def test_huge_digit_strings() -> None:
    text = "1" * 5000
    q = must_parse(text)
    assert str(q) == text
    assert q.value() == MOST_POSITIVE
    frac = must_parse("0." + "0" * 4990 + "1")
    assert frac == dq(1, -9, SI)
    assert str(must_parse("1" + "0" * 6000)) == "1e6000"


def test_as_decimal() -> None:
    assert must_parse("1.5Gi").as_decimal() == Decimal(1610612736)
    assert must_parse("-100m").as_decimal() == Decimal("-0.1")
    assert must_parse("0").as_decimal() == 0


# --- properties -----------------------------------------------------------------------------------------

_formats = st.sampled_from([SI, BIN, EXP])


@st.composite
def parsed_quantities(draw: st.DrawFn) -> Quantity:
    """Quantities as a manifest could spell them: a number, optional fraction, any suffix."""
    sign = draw(st.sampled_from(["", "-", "+"]))
    whole = draw(st.integers(min_value=0, max_value=10**20))
    frac = draw(st.one_of(st.just(""), st.text("0123456789", min_size=0, max_size=12).map(lambda t: "." + t)))
    suffix = draw(
        st.one_of(
            st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]),
            st.integers(min_value=-30, max_value=30).map(lambda e: f"e{e}"),
            st.integers(min_value=-30, max_value=30).map(lambda e: f"E{e:+d}"),
        )
    )
    return must_parse(f"{sign}{whole}{frac}{suffix}")


@st.composite
def constructed_quantities(draw: st.DrawFn) -> Quantity:
    m = draw(st.integers(min_value=-(10**25), max_value=10**25))
    e = draw(st.integers(min_value=-9, max_value=40))
    return Quantity(m, e, draw(_formats))


any_quantity = st.one_of(parsed_quantities(), constructed_quantities())


@settings(max_examples=400)
@given(any_quantity)
def test_prop_string_round_trip(q: Quantity) -> None:
    s = str(q)
    back = Quantity.parse(s)
    if binary_past_cap(q):
        assert back == (MAX_ALLOWED if q.sign() > 0 else -MAX_ALLOWED)
        return
    assert back == q
    assert str(back) == s or back.format != q.format
    assert Quantity.parse(str(back)) == back


@settings(max_examples=300)
@given(parsed_quantities())
def test_prop_parsed_values_are_nano_multiples_and_binary_capped(q: Quantity) -> None:
    assert q.is_zero() or q.exponent >= NANO
    if q.format == BINARY_SI:
        assert abs(exact(q)) <= MOST_POSITIVE
        assert q.is_zero() or abs(exact(q)) >= 1


@settings(max_examples=300)
@given(any_quantity, any_quantity)
def test_prop_value_and_milli_monotone_with_cmp(a: Quantity, b: Quantity) -> None:
    c = a.cmp(b)
    assert c == -b.cmp(a)
    assert c == (exact(a) > exact(b)) - (exact(a) < exact(b))
    if c <= 0:
        assert a.value() <= b.value()
        assert a.milli_value() <= b.milli_value()
    if c == 0:
        assert a == b
        assert hash(a) == hash(b)


@settings(max_examples=300)
@given(any_quantity)
def test_prop_milli_value_rounds_away_from_zero(q: Quantity) -> None:
    x = exact(q) * 1000
    mv = q.milli_value()
    if MOST_NEGATIVE < mv < MOST_POSITIVE:
        if x > 0:
            assert mv == math.ceil(x)
        elif x < 0:
            assert mv == math.floor(x)
        else:
            assert mv == 0
    else:  # saturated
        assert (x >= MOST_POSITIVE) if mv > 0 else (x <= MOST_NEGATIVE)
    v = q.value()
    y = exact(q)
    if MOST_NEGATIVE < v < MOST_POSITIVE:
        assert v == (math.ceil(y) if y > 0 else math.floor(y))


@settings(max_examples=200)
@given(any_quantity, any_quantity)
def test_prop_add_sub_exact(a: Quantity, b: Quantity) -> None:
    assert exact(a + b) == exact(a) + exact(b)
    assert exact(a - b) == exact(a) - exact(b)
    assert (a + b) - b == a
    assert (a - b).format == (b.format if a.is_zero() else a.format)


@settings(max_examples=200)
@given(any_quantity)
def test_prop_as_float_is_nearest(q: Quantity) -> None:
    assert q.as_float() == float(exact(q))
