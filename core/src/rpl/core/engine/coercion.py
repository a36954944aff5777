"""Values converted into a column's type, as MySQL strict mode does: :func:`coerce`.

:func:`coerce` stores a value the way MySQL 8.0 does with its default sql_mode
(STRICT_TRANS_TABLES, NO_ZERO_DATE, ...): where non-strict MySQL would warn and truncate,
the statement fails. Stored values are ``int``, ``str``, ``float``, ``decimal.Decimal``,
``bytes`` or ``None``:

=====================================  ==============================================
type                                   stored as
=====================================  ==============================================
TINYINT SMALLINT MEDIUMINT INT BIGINT  ``int`` in the signed or UNSIGNED range
CHAR VARCHAR TEXT family               ``str`` (CHAR without trailing spaces)
ENUM                                   ``str``: the member as declared
SET                                    ``str``: the members in declaration order, ``,``-joined
JSON                                   ``str``: the document as MySQL prints it
BINARY VARBINARY BLOB family           ``bytes`` (BINARY right-padded with 0x00)
FLOAT DOUBLE REAL                      ``float``
DECIMAL NUMERIC                        ``Decimal`` quantized to the column's scale
DATE DATETIME TIMESTAMP TIME YEAR      ``str`` in MySQL's output form (YEAR: ``int``)
anything else                          the value unchanged
=====================================  ==============================================

Every stored value goes through here (each column of each row written), so this module
is compiled in the compiled build; the column definitions it reads
(:class:`rpl.core.engine.schema.ColumnSchema`) stay attrs classes in a module of their
own, which mypyc does not compile, and are seen here through :class:`ColumnDefinition`.
"""

from __future__ import annotations

import datetime
import decimal
import re
import unicodedata
from collections.abc import Callable
from typing import Final, TypeAlias

from rpl.core import json_text
from rpl.core.columns import ColumnDefinition
from rpl.core.errors import (
    ER_BAD_NULL_ERROR,
    ER_DATA_TOO_LONG,
    ER_INVALID_JSON_TEXT,
    ER_JSON_DOCUMENT_TOO_DEEP,
    ER_JSON_KEY_TOO_BIG,
    ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
    ER_WARN_DATA_OUT_OF_RANGE,
    WARN_DATA_TRUNCATED,
    MySQLError,
)
from rpl.core.hex_literal import HexBytes

Value: TypeAlias = int | str | float | decimal.Decimal | bytes | None
"""A stored column value."""


_INT_BITS: Final = {
    "TINYINT": 8,
    "BOOL": 8,
    "BOOLEAN": 8,
    "SMALLINT": 16,
    "MEDIUMINT": 24,
    "INT": 32,
    "INTEGER": 32,
    "BIGINT": 64,
}
_TEXT_BYTES: Final = {
    "TINYTEXT": 255,
    "TEXT": 65535,
    "MEDIUMTEXT": 16777215,
    "LONGTEXT": 4294967295,
}
_BLOB_BYTES: Final = {
    "TINYBLOB": 255,
    "BLOB": 65535,
    "MEDIUMBLOB": 16777215,
    "LONGBLOB": 4294967295,
}
_FLOAT_MAX: Final = {
    "FLOAT": 3.402823466e38,
    "DOUBLE": 1.7976931348623157e308,
    "REAL": 1.7976931348623157e308,
    "DOUBLE PRECISION": 1.7976931348623157e308,
}
_NUMBER: Final = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*\Z")
_DATETIME: Final = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?)?\s*\Z"
)
_DATETIME_DIGITS: Final = re.compile(r"\s*(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?\s*\Z")
_TIME: Final = re.compile(r"\s*(-?)(\d{1,3}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?\s*\Z")
_DEC_CONTEXT: Final = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
_TS_MIN: Final = datetime.datetime(1970, 1, 1, 0, 0, 1)
_TS_MAX: Final = datetime.datetime(2038, 1, 19, 3, 14, 7, 999999)


def _wrong_value(kind: str, value: object, column: ColumnDefinition, row: int) -> MySQLError:
    return MySQLError.of(ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, kind, _shown(value), column.name, row)


def _wrong_temporal(kind: str, value: object, column: ColumnDefinition, row: int) -> MySQLError:
    # MySQL reports temporal values with code 1292 (ER_TRUNCATED_WRONG_VALUE) but the
    # per-column message of ER_TRUNCATED_WRONG_VALUE_FOR_FIELD.
    message = ER_TRUNCATED_WRONG_VALUE_FOR_FIELD.format(kind, _shown(value), column.name, row)
    return MySQLError(1292, "22007", message)


def _out_of_range(column: ColumnDefinition, row: int) -> MySQLError:
    return MySQLError.of(ER_WARN_DATA_OUT_OF_RANGE, column.name, row)


def _shown(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _round_half_away(value: decimal.Decimal) -> int:
    """``value`` rounded half away from zero; values of more than 30 digits (beyond
    every integer type) come back as ±10**31, which every range check refuses.
    """
    if value.adjusted() > 30:
        return 10**31 if value > 0 else -(10**31)
    return int(
        value.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP, context=_DEC_CONTEXT)
    )


def _coerce_int(column: ColumnDefinition, value: object, row: int) -> Value:
    if type(value) is not int:
        if isinstance(value, int):  # bool and int subclasses
            value = int(value)
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise _out_of_range(column, row)
            value = _round_half_away(decimal.Decimal(value))
        elif isinstance(value, decimal.Decimal):
            if not value.is_finite():
                raise _wrong_value("integer", value, column, row)
            value = _round_half_away(value)
        elif isinstance(value, str | bytes):
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            if not _NUMBER.match(text):
                raise _wrong_value("integer", value, column, row)
            try:
                value = int(text)
            except ValueError:
                value = _round_half_away(decimal.Decimal(text.strip()))
        else:
            raise _wrong_value("integer", value, column, row)
    assert isinstance(value, int)
    bits = _INT_BITS[column.type_name]
    if column.unsigned:
        if value < 0 or value >= 1 << bits:
            raise _out_of_range(column, row)
    elif value < -(1 << (bits - 1)) or value >= 1 << (bits - 1):
        raise _out_of_range(column, row)
    return value


def _as_text(column: ColumnDefinition, value: object, row: int) -> str:
    if type(value) is str:
        if is_utf8(value):
            return value
        raise _wrong_value("string", invalid_bytes(value), column, row)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise _wrong_value("string", invalid_bytes(value), column, row) from None
    if isinstance(value, int | float | decimal.Decimal | str):
        return str(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat(" ") if isinstance(value, datetime.datetime) else value.isoformat()
    raise _wrong_value("string", value, column, row)


_INVALID_UTF8: Final = re.compile(f"[{chr(0xDC80)}-{chr(0xDCFF)}]")
"""What a statement's bytes that are not UTF-8 became (the connection decodes its text
with ``surrogateescape``, so a binary column gets them back whole)."""


def is_utf8(text: str) -> bool:
    """Whether ``text`` holds no byte of its statement that was not UTF-8."""
    return text.isascii() or not _INVALID_UTF8.search(text)


def invalid_bytes(value: str | bytes) -> str:
    """MySQL's rendering of a value that is not UTF-8 in ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:
    from the first byte that is not, at most six bytes, each as ``\\xHH`` (``\\xE9``).
    """
    data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value
    try:
        data.decode("utf-8")
        start = 0
    except UnicodeDecodeError as bad:
        start = bad.start
    return "".join(f"\\x{b:02X}" for b in data[start : start + 6])


def _fit_chars(column: ColumnDefinition, text: str, limit: int, row: int) -> str:
    # Strict mode refuses a value longer than the column, except that excess trailing spaces
    # are cut silently (MySQL notes them, it does not fail the statement).
    if len(text) > limit:
        if text[limit:].strip(" "):
            raise MySQLError.of(ER_DATA_TOO_LONG, column.name, row)
        text = text[:limit]
    return text


def _coerce_char(column: ColumnDefinition, value: object, row: int) -> Value:
    text = _fit_chars(column, _as_text(column, value, row), column.length or 1, row)
    return text.rstrip(" ")


def _coerce_varchar(column: ColumnDefinition, value: object, row: int) -> Value:
    return _fit_chars(
        column, _as_text(column, value, row), 65535 if column.length is None else column.length, row
    )


def _coerce_text(column: ColumnDefinition, value: object, row: int) -> Value:
    text = _as_text(column, value, row)
    limit = _TEXT_BYTES.get(column.type_name)
    if limit is not None and len(text) * 4 > limit and len(text.encode("utf-8")) > limit:
        raise MySQLError.of(ER_DATA_TOO_LONG, column.name, row)
    return text


def member_key(text: str) -> str:
    """``text`` as utf8mb4_0900_ai_ci compares it, near enough: accents and lettercase
    dropped, trailing spaces removed (ENUM/SET ignore them on input).
    """
    text = text.rstrip(" ")
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _member_text(column: ColumnDefinition, value: object, row: int) -> str | int:
    """An ENUM/SET input as text, or as an int when it is a number (an index or bitmap)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise MySQLError.of(WARN_DATA_TRUNCATED, column.name, row)
        return int(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise MySQLError.of(WARN_DATA_TRUNCATED, column.name, row)
        return int(value)
    return _as_text(column, value, row)


def _coerce_enum(column: ColumnDefinition, value: object, row: int) -> Value:
    # Field_enum::store: a member (compared as the collation does, trailing spaces
    # ignored), else a number of at most 5 digits is the 1-based index; 0, an index out of
    # range and anything else are WARN_DATA_TRUNCATED, an error in strict mode.
    members = column.members
    if not members:
        return _coerce_text(column, value, row)  # a definition without its members
    given = _member_text(column, value, row)
    if isinstance(given, str):
        folded = member_key(given)
        for member in members:
            if member_key(member) == folded:
                return member
        digits = given.rstrip(" ")
        if not (0 < len(digits) < 6 and digits.isdigit() and digits.isascii()):
            raise MySQLError.of(WARN_DATA_TRUNCATED, column.name, row)
        given = int(digits)
    if not 0 < given <= len(members):
        raise MySQLError.of(WARN_DATA_TRUNCATED, column.name, row)
    return members[given - 1]


def _coerce_set(column: ColumnDefinition, value: object, row: int) -> Value:
    # Field_set::store: comma-separated members in any order, repeats folded; if none of
    # the parts is a member, a number is the bitmap. An unknown member, or a bitmap with a
    # bit past the last member, is WARN_DATA_TRUNCATED (an error in strict mode).
    members = column.members
    if not members:
        return _coerce_text(column, value, row)  # a definition without its members
    given = _member_text(column, value, row)
    if isinstance(given, str):
        bits = 0
        unknown = False
        if given != "":
            folded = [member_key(m) for m in members]
            for part in given.split(","):
                try:
                    bits |= 1 << folded.index(member_key(part))
                except ValueError:
                    unknown = True
        if unknown:
            digits = given.rstrip(" ")
            if bits or not (0 < len(digits) < 22 and digits.isdigit() and digits.isascii()):
                raise MySQLError.of(WARN_DATA_TRUNCATED, column.name, row)
            bits = int(digits)
        given = bits
    if given < 0 or given >> len(members):
        raise MySQLError.of(WARN_DATA_TRUNCATED, column.name, row)
    return ",".join(m for i, m in enumerate(members) if given >> i & 1)


def _coerce_json(column: ColumnDefinition, value: object, row: int) -> Value:
    """The JSON document ``value`` as MySQL prints it back (``{"a": 1, "b": [true, null]}``:
    keys sorted as MySQL stores them, ", " and ": "); text that is not JSON is 3140, too
    deep 3157, a key too long 3151 (:func:`rpl.core.json_text.parse`).
    """
    text = _as_text(column, value, row)
    try:
        return json_text.normalize(text)
    except json_text.JsonTextError as exc:
        raise MySQLError.of(ER_INVALID_JSON_TEXT, exc.reason, exc.position, column.name) from None
    except json_text.JsonDepthError:
        raise MySQLError.of(ER_JSON_DOCUMENT_TOO_DEEP) from None
    except json_text.JsonKeyTooBigError:
        raise MySQLError.of(ER_JSON_KEY_TOO_BIG) from None


def _as_bytes(column: ColumnDefinition, value: object, row: int) -> bytes:
    if type(value) is bytes:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")  # the statement's bytes, whole
    return _as_text(column, value, row).encode("utf-8")


def _coerce_binary(column: ColumnDefinition, value: object, row: int) -> Value:
    data = _as_bytes(column, value, row)
    if column.type_name == "BINARY":
        limit = column.length or 1
    elif column.type_name == "VARBINARY":
        limit = 65535 if column.length is None else column.length
    else:
        limit = _BLOB_BYTES[column.type_name]
    if len(data) > limit:
        raise MySQLError.of(ER_DATA_TOO_LONG, column.name, row)
    if column.type_name == "BINARY" and len(data) < limit:
        data = data.ljust(limit, b"\0")
    return data


def _coerce_float(column: ColumnDefinition, value: object, row: int) -> Value:
    if type(value) is float:
        result = value
    elif isinstance(value, int | float | decimal.Decimal):
        result = float(value)
    elif isinstance(value, str | bytes):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if not _NUMBER.match(text):
            raise _wrong_value("double", value, column, row)
        result = float(text)
    else:
        raise _wrong_value("double", value, column, row)
    if result != result or abs(result) > _FLOAT_MAX[column.type_name]:
        raise _out_of_range(column, row)
    if column.unsigned and result < 0:
        raise _out_of_range(column, row)
    return result


def _coerce_decimal(column: ColumnDefinition, value: object, row: int) -> Value:
    if isinstance(value, decimal.Decimal):
        number = value
    elif isinstance(value, int):
        number = decimal.Decimal(int(value))
    elif isinstance(value, float):
        number = decimal.Decimal(repr(value))
    elif isinstance(value, str | bytes):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if not _NUMBER.match(text):
            raise _wrong_value("decimal", value, column, row)
        number = decimal.Decimal(text.strip())
    else:
        raise _wrong_value("decimal", value, column, row)
    if not number.is_finite():
        raise _wrong_value("decimal", value, column, row)
    precision = 10 if column.length is None else column.length
    scale = column.scale or 0
    if number and number.adjusted() >= precision - scale:  # too many integer digits
        raise _out_of_range(column, row)
    quantized = number.quantize(decimal.Decimal(1).scaleb(-scale), context=_DEC_CONTEXT)
    if abs(quantized) >= decimal.Decimal(10) ** (precision - scale):
        raise _out_of_range(column, row)
    if column.unsigned and quantized < 0:
        raise _out_of_range(column, row)
    return quantized


def _parse_datetime(text: str) -> datetime.datetime | None:
    match = _DATETIME.match(text) or _DATETIME_DIGITS.match(text)
    if match is None:
        return None
    parts = match.groups()
    fraction = parts[6] if len(parts) > 6 else None
    try:
        return datetime.datetime(
            int(parts[0]),
            int(parts[1]),
            int(parts[2]),
            int(parts[3] or 0),
            int(parts[4] or 0),
            int(parts[5] or 0),
            int((fraction or "0").ljust(6, "0")),
        )
    except ValueError:
        return None


def _round_fraction(moment: datetime.datetime, digits: int) -> datetime.datetime:
    step = 10 ** (6 - digits)
    micro = moment.microsecond
    rounded = (micro + step // 2) // step * step
    return moment.replace(microsecond=0) + datetime.timedelta(microseconds=rounded)


def _format_datetime(moment: datetime.datetime, digits: int) -> str:
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if digits:
        text += "." + f"{moment.microsecond:06d}"[:digits]
    return text


def _coerce_temporal(column: ColumnDefinition, value: object, row: int) -> Value:
    kind = column.type_name.lower()
    if isinstance(value, datetime.datetime):
        moment: datetime.datetime | None = value.replace(tzinfo=None)
    elif isinstance(value, datetime.date):
        moment = datetime.datetime(value.year, value.month, value.day)
    elif isinstance(value, str | bytes | int):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        moment = _parse_datetime(text)
    else:
        moment = None
    if moment is None:
        raise _wrong_temporal(kind, value, column, row)
    if column.type_name == "DATE":
        return moment.strftime("%Y-%m-%d")
    digits = min(column.length or 0, 6)
    try:
        moment = _round_fraction(moment, digits)
    except OverflowError:
        raise _wrong_temporal(kind, value, column, row) from None
    if column.type_name == "TIMESTAMP" and not _TS_MIN <= moment <= _TS_MAX:
        raise _wrong_temporal(kind, value, column, row)
    return _format_datetime(moment, digits)


def _coerce_time(column: ColumnDefinition, value: object, row: int) -> Value:
    if isinstance(value, datetime.time):
        value = value.isoformat()
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    match = _TIME.match(text)
    if match is None:
        raise _wrong_temporal("time", value, column, row)
    sign, hours, minutes, seconds, fraction = match.groups()
    h, m, s = int(hours), int(minutes), int(seconds or 0)
    if m > 59 or s > 59:
        raise _wrong_temporal("time", value, column, row)
    if h > 838:
        raise _out_of_range(column, row)
    digits = min(column.length or 0, 6)
    result = f"{sign}{h:02d}:{m:02d}:{s:02d}"
    if digits:
        result += "." + (fraction or "").ljust(6, "0")[:digits]
    return result


def _coerce_year(column: ColumnDefinition, value: object, row: int) -> Value:
    try:
        year = int(value) if isinstance(value, int | str | bytes) else None
    except ValueError:
        year = None
    if year is None:
        raise _wrong_value("integer", value, column, row)
    if isinstance(value, str | bytes) and 0 < year < 100 and len(str(value).strip()) <= 2:
        year += 2000 if year < 70 else 1900
    elif isinstance(value, int) and 0 < year < 100:
        year += 2000 if year < 70 else 1900
    if year != 0 and not 1901 <= year <= 2155:
        raise _out_of_range(column, row)
    return year


def _coerce_any(column: ColumnDefinition, value: object, row: int) -> Value:
    return value  # type: ignore[return-value]


_Coercer: TypeAlias = Callable[[ColumnDefinition, object, int], Value]
_NUMERIC: Final = frozenset((*_INT_BITS, *_FLOAT_MAX, "DECIMAL", "NUMERIC", "DEC", "FIXED", "YEAR"))
"""The column types a hexadecimal literal is stored into as its number."""
_COERCERS: Final[dict[str, _Coercer]] = {
    **dict.fromkeys(_INT_BITS, _coerce_int),
    "CHAR": _coerce_char,
    "VARCHAR": _coerce_varchar,
    **dict.fromkeys(_TEXT_BYTES, _coerce_text),
    "ENUM": _coerce_enum,
    "SET": _coerce_set,
    "JSON": _coerce_json,
    **dict.fromkeys(("BINARY", "VARBINARY", *_BLOB_BYTES), _coerce_binary),
    **dict.fromkeys(_FLOAT_MAX, _coerce_float),
    **dict.fromkeys(("DECIMAL", "NUMERIC", "DEC", "FIXED"), _coerce_decimal),
    **dict.fromkeys(("DATE", "DATETIME", "TIMESTAMP"), _coerce_temporal),
    "TIME": _coerce_time,
    "YEAR": _coerce_year,
}


def coerce(column: ColumnDefinition, value: object, row_number: int = 1) -> Value:
    """``value`` converted to what ``column`` stores, or the error strict mode raises.

    NULL into a NOT NULL column is ER_BAD_NULL_ERROR (1048); a value that is not a number
    for a numeric column is ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (1366, "Incorrect integer
    value: 'x' for column 'c' at row 1"); a number outside the type's range (by size and
    UNSIGNED, DECIMAL's precision) is ER_WARN_DATA_OUT_OF_RANGE (1264); a string longer
    than the column is ER_DATA_TOO_LONG (1406) unless only trailing spaces exceed it; a
    value that is no ENUM member or index, or a SET part that is no member, is
    WARN_DATA_TRUNCATED (1265, "Data truncated for column 'c' at row 1"); a bad
    date or time is 1292 "Incorrect datetime value: ...". Numbers are rounded half away from
    zero into integer columns and DECIMAL's scale, as MySQL does. ``row_number`` is the
    1-based row of the statement the messages name.
    """
    if value is None:
        if not column.nullable:
            raise MySQLError.of(ER_BAD_NULL_ERROR, column.name)
        return None
    if type(value) is HexBytes:
        value = value.number() if column.type_name in _NUMERIC else bytes(value)
    return _COERCERS.get(column.type_name, _coerce_any)(column, value, row_number)


def coerce_leniently(
    column: ColumnDefinition, value: object, row_number: int = 1
) -> tuple[Value, MySQLError | None]:
    """``value`` for ``column`` as INSERT IGNORE stores it: what strict mode refuses is
    adjusted, and the error comes back to be shown as a warning. A number out of range is
    clamped to the type's nearest bound (1264); a value that is not a number becomes 0
    (1366); a string too long is cut to the column's length (1265, "Data truncated"); NULL
    for a NOT NULL column becomes the type's implicit default (1048). Anything else (a bad
    date or time, a value of no known kind) is still raised.
    """
    try:
        return coerce(column, value, row_number), None
    except MySQLError as exc:
        adjusted = _lenient_value(column, value, exc)
        if adjusted is _NO_ADJUSTMENT:
            raise
        if exc.errno == ER_DATA_TOO_LONG.errno:
            exc = MySQLError.of(WARN_DATA_TRUNCATED, column.name, row_number)
        return coerce(column, adjusted, row_number), exc


_NO_ADJUSTMENT: Final = object()


def _lenient_value(column: ColumnDefinition, value: object, error: MySQLError) -> object:
    kind = column.type_name
    numeric = kind in _INT_BITS or kind in ("DECIMAL", "NUMERIC", "DEC", "FIXED")
    if error.errno == ER_BAD_NULL_ERROR.errno:
        return 0 if numeric or kind in _FLOAT_MAX else "null" if kind == "JSON" else ""
    if error.errno == ER_TRUNCATED_WRONG_VALUE_FOR_FIELD.errno and numeric:
        return 0
    if error.errno == ER_TRUNCATED_WRONG_VALUE_FOR_FIELD.errno and isinstance(value, str):
        return _INVALID_UTF8.sub("?", value)  # each byte that is not UTF-8, as MySQL does
    if error.errno == ER_WARN_DATA_OUT_OF_RANGE.errno and numeric:
        return _nearest_bound(column, value)
    if error.errno == ER_DATA_TOO_LONG.errno and isinstance(value, str | bytes):
        return value[: column.length] if column.length is not None else _NO_ADJUSTMENT
    return _NO_ADJUSTMENT


def _nearest_bound(column: ColumnDefinition, value: object) -> int | decimal.Decimal:
    try:
        negative = decimal.Decimal(_shown(value).strip()) < 0
    except decimal.InvalidOperation:
        negative = False
    if column.type_name in _INT_BITS:
        bits = _INT_BITS[column.type_name]
        if column.unsigned:
            return 0 if negative else (1 << bits) - 1
        return -(1 << (bits - 1)) if negative else (1 << (bits - 1)) - 1
    precision, scale = column.length or 10, column.scale or 0
    largest = decimal.Decimal(10) ** (precision - scale) - decimal.Decimal(1).scaleb(-scale)
    if column.unsigned and negative:
        return decimal.Decimal(0)
    return -largest if negative else largest
