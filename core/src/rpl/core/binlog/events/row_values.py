"""One column's value in a rows event, as MySQL 8.0 packs it (``Field::pack``), and a
table column's binlog type (type code and TABLE_MAP metadata).

:class:`BinlogColumn` is what TABLE_MAP says of a column: its type code, its metadata
bytes, and what the optional metadata adds (signedness, charset, name, ENUM/SET members).
:func:`binlog_column` maps a column definition (``type_name``, ``length``, ``scale``,
``unsigned``, ``nullable``, as :class:`rpl.core.engine.schema.ColumnSchema` has them) to
one; :func:`encode_value` and :func:`decode_value` move one value. Values are the
engine's stored values (:mod:`rpl.core.engine.coercion`): ``int`` (integers, YEAR, BIT),
``float``, ``Decimal``, ``str`` (text, ENUM, SET, and DATE/DATETIME/TIMESTAMP/TIME in
MySQL's output form) and ``bytes`` (binary strings); a decoded value equals the value
encoded. TIMESTAMP strings are read and written as UTC (MySQL's event carries seconds
since the epoch; the session time zone is the writer's business).

Layouts (MySQL's ``Field_*::pack``, ``decimal2bin``, ``my_datetime_packed_to_binary``,
``my_time_packed_to_binary``, ``my_timestamp_to_binary``); integers little-endian unless
said: TINY 1, SHORT 2, INT24 3, LONG 4, LONGLONG 8; FLOAT 4 / DOUBLE 8 IEEE; NEWDECIMAL
9 digits per 4 bytes big-endian, sign bit flipped, a negative value's bytes inverted;
VARCHAR and CHAR a 1-byte length when the column's maximum is below 256 bytes else 2,
then the bytes; BLOB/TEXT the metadata's 1-4 length bytes, then the bytes; DATE 3 bytes;
DATETIME2 5 bytes big-endian + fraction; TIMESTAMP2 4 bytes big-endian + fraction; TIME2
3 bytes big-endian + fraction (6 bytes in all for 5-6 digits); YEAR 1 byte; ENUM 1-2
bytes (1-based index); SET 1, 2, 3, 4 or 8 bytes (bitmap); BIT big-endian.
"""

from __future__ import annotations

import calendar
import datetime
import decimal
import re
import struct
from typing import Final, Protocol, TypeAlias

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.header import EventError

RowValue: TypeAlias = int | str | float | decimal.Decimal | bytes | None
"""A column's value in a row image (``None`` for SQL NULL)."""

MYSQL_TYPE_DECIMAL: Final = 0
MYSQL_TYPE_TINY: Final = 1
MYSQL_TYPE_SHORT: Final = 2
MYSQL_TYPE_LONG: Final = 3
MYSQL_TYPE_FLOAT: Final = 4
MYSQL_TYPE_DOUBLE: Final = 5
MYSQL_TYPE_NULL: Final = 6
MYSQL_TYPE_TIMESTAMP: Final = 7
MYSQL_TYPE_LONGLONG: Final = 8
MYSQL_TYPE_INT24: Final = 9
MYSQL_TYPE_DATE: Final = 10
MYSQL_TYPE_TIME: Final = 11
MYSQL_TYPE_DATETIME: Final = 12
MYSQL_TYPE_YEAR: Final = 13
MYSQL_TYPE_NEWDATE: Final = 14
MYSQL_TYPE_VARCHAR: Final = 15
MYSQL_TYPE_BIT: Final = 16
MYSQL_TYPE_TIMESTAMP2: Final = 17
MYSQL_TYPE_DATETIME2: Final = 18
MYSQL_TYPE_TIME2: Final = 19
MYSQL_TYPE_JSON: Final = 245
MYSQL_TYPE_NEWDECIMAL: Final = 246
MYSQL_TYPE_ENUM: Final = 247
MYSQL_TYPE_SET: Final = 248
MYSQL_TYPE_TINY_BLOB: Final = 249
MYSQL_TYPE_MEDIUM_BLOB: Final = 250
MYSQL_TYPE_LONG_BLOB: Final = 251
MYSQL_TYPE_BLOB: Final = 252
MYSQL_TYPE_VAR_STRING: Final = 253
MYSQL_TYPE_STRING: Final = 254
MYSQL_TYPE_GEOMETRY: Final = 255

UTF8MB4_0900_CHARSET: Final = 255
"""utf8mb4_0900_ai_ci, the collation of every character column here."""
BINARY_CHARSET: Final = 63
"""``binary``: the collation of BINARY, VARBINARY and the BLOB family."""
UTF8MB4_MAXLEN: Final = 4

METADATA_LENGTH: Final[dict[int, int]] = {
    MYSQL_TYPE_DECIMAL: 0, MYSQL_TYPE_TINY: 0, MYSQL_TYPE_SHORT: 0, MYSQL_TYPE_LONG: 0,
    MYSQL_TYPE_FLOAT: 1, MYSQL_TYPE_DOUBLE: 1, MYSQL_TYPE_NULL: 0, MYSQL_TYPE_TIMESTAMP: 0,
    MYSQL_TYPE_LONGLONG: 0, MYSQL_TYPE_INT24: 0, MYSQL_TYPE_DATE: 0, MYSQL_TYPE_TIME: 0,
    MYSQL_TYPE_DATETIME: 0, MYSQL_TYPE_YEAR: 0, MYSQL_TYPE_NEWDATE: 0, MYSQL_TYPE_VARCHAR: 2,
    MYSQL_TYPE_BIT: 2, MYSQL_TYPE_TIMESTAMP2: 1, MYSQL_TYPE_DATETIME2: 1, MYSQL_TYPE_TIME2: 1,
    MYSQL_TYPE_JSON: 1, MYSQL_TYPE_NEWDECIMAL: 2, MYSQL_TYPE_ENUM: 2, MYSQL_TYPE_SET: 2,
    MYSQL_TYPE_TINY_BLOB: 1, MYSQL_TYPE_MEDIUM_BLOB: 1, MYSQL_TYPE_LONG_BLOB: 1,
    MYSQL_TYPE_BLOB: 1, MYSQL_TYPE_VAR_STRING: 2, MYSQL_TYPE_STRING: 2, MYSQL_TYPE_GEOMETRY: 1,
}
"""Bytes of TABLE_MAP metadata per column type code (``Table_map_log_event``'s
``save_field_metadata``, the pre-5.6 types included, so any table map MySQL 8.0 writes
parses); a type code not here is one no MySQL writes, and its table map is refused.
Values of the pre-5.6 temporal types, JSON and GEOMETRY are not decoded (EventError)."""

NUMERIC_TYPES: Final = frozenset((
    MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_INT24, MYSQL_TYPE_LONG,
    MYSQL_TYPE_LONGLONG, MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE))
"""The types the SIGNEDNESS optional metadata has a bit for (``is_numeric_type``)."""

_INT_SIZE: Final = {MYSQL_TYPE_TINY: 1, MYSQL_TYPE_SHORT: 2, MYSQL_TYPE_INT24: 3,
                    MYSQL_TYPE_LONG: 4, MYSQL_TYPE_LONGLONG: 8}
_INT_TYPES: Final = {"TINYINT": MYSQL_TYPE_TINY, "BOOL": MYSQL_TYPE_TINY,
                     "BOOLEAN": MYSQL_TYPE_TINY, "SMALLINT": MYSQL_TYPE_SHORT,
                     "MEDIUMINT": MYSQL_TYPE_INT24, "INT": MYSQL_TYPE_LONG,
                     "INTEGER": MYSQL_TYPE_LONG, "BIGINT": MYSQL_TYPE_LONGLONG}
_BLOB_PACK: Final = {"TINYTEXT": 1, "TEXT": 2, "MEDIUMTEXT": 3, "LONGTEXT": 4,
                     "TINYBLOB": 1, "BLOB": 2, "MEDIUMBLOB": 3, "LONGBLOB": 4}
_TEMPORAL: Final = {"DATETIME": MYSQL_TYPE_DATETIME2, "TIMESTAMP": MYSQL_TYPE_TIMESTAMP2,
                    "TIME": MYSQL_TYPE_TIME2}
_DIG2BYTES: Final = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_DIGITS_PER_WORD: Final = 9
_DATETIMEF_INT_OFS: Final = 0x8000000000
_TIMEF_INT_OFS: Final = 0x800000
_TIMEF_OFS: Final = 0x800000000000
_DEC_CONTEXT: Final = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
"""Room for DECIMAL(65, 30) (the default context's 28 digits are too few)."""
_FLOAT: Final = struct.Struct("<f")
_DOUBLE: Final = struct.Struct("<d")
_EPOCH: Final = datetime.datetime(1970, 1, 1)
_DATETIME_TEXT: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?\Z")
_TIME_TEXT: Final = re.compile(r"(-?)(\d{2,3}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\Z")


class ColumnDefinition(Protocol):
    """What :func:`binlog_column` reads of a column (ColumnSchema has it all)."""

    @property
    def name(self) -> str: ...
    @property
    def type_name(self) -> str: ...
    @property
    def length(self) -> int | None: ...
    @property
    def unsigned(self) -> bool: ...
    @property
    def nullable(self) -> bool: ...
    @property
    def scale(self) -> int | None: ...


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class BinlogColumn:
    """A column as TABLE_MAP describes it.

    ``type_code`` is the type byte (CHAR, BINARY, ENUM and SET are all
    MYSQL_TYPE_STRING, told apart by the metadata's real type); ``metadata`` the column's
    metadata bytes (:data:`METADATA_LENGTH` of them). ``unsigned``, ``charset`` (a
    collation id, None for a column that has none), ``name`` and ``members`` (ENUM/SET)
    come from the optional metadata; a reader of a MINIMAL table map has no name or members.
    """

    type_code: int
    metadata: bytes = b""
    nullable: bool = True
    unsigned: bool = False
    charset: int | None = None
    name: str | None = None
    members: tuple[str, ...] = ()

    @property
    def real_type(self) -> int:
        """The type behind MYSQL_TYPE_STRING (STRING, ENUM or SET); else ``type_code``."""
        if self.type_code == MYSQL_TYPE_STRING and self.metadata[0] in (
                MYSQL_TYPE_ENUM, MYSQL_TYPE_SET):
            return self.metadata[0]
        return self.type_code

    @property
    def max_length(self) -> int:
        """A STRING's or VARCHAR's maximum length in bytes (``Field::field_length``)."""
        if self.type_code == MYSQL_TYPE_STRING:
            byte0, byte1 = self.metadata[0], self.metadata[1]
            return (((byte0 & 0x30) ^ 0x30) << 4) | byte1
        return int.from_bytes(self.metadata[:2], "little")


def binlog_column(column: ColumnDefinition, members: tuple[str, ...] = ()) -> BinlogColumn:
    """The :class:`BinlogColumn` of ``column`` as MySQL 8.0 writes it (utf8mb4 text);
    ``members`` are an ENUM's or SET's values. ValueError for a type the codec lacks.
    """
    kind = column.type_name
    numeric = _numeric_column(kind, column.length, column.scale)
    if numeric is not None:
        return BinlogColumn(numeric[0], numeric[1], column.nullable, column.unsigned,
                            name=column.name)
    text = _text_column(kind, column.length, members)
    if text is not None:
        return BinlogColumn(text[0], text[1], column.nullable, charset=text[2],
                            name=column.name, members=members)
    other = _other_column(kind, column.length)
    if other is None:
        raise ValueError(f"column {column.name!r}: type {kind} has no row encoding here")
    return BinlogColumn(other[0], other[1], column.nullable, name=column.name)


def _numeric_column(kind: str, length: int | None,
                    scale: int | None) -> tuple[int, bytes] | None:
    """(type code, metadata) of an integer, FLOAT, DOUBLE or DECIMAL type."""
    if kind in _INT_TYPES:
        return _INT_TYPES[kind], b""
    if kind == "FLOAT":
        return MYSQL_TYPE_FLOAT, b"\x04"
    if kind in ("DOUBLE", "REAL", "DOUBLE PRECISION"):
        return MYSQL_TYPE_DOUBLE, b"\x08"
    if kind in ("DECIMAL", "NUMERIC", "DEC", "FIXED"):
        return MYSQL_TYPE_NEWDECIMAL, bytes((10 if length is None else length, scale or 0))
    return None


def _other_column(kind: str, length: int | None) -> tuple[int, bytes] | None:
    """(type code, metadata) of a temporal, YEAR or BIT type."""
    if kind in _TEMPORAL:
        return _TEMPORAL[kind], bytes((min(length or 0, 6),))
    if kind in ("DATE", "YEAR"):
        return MYSQL_TYPE_DATE if kind == "DATE" else MYSQL_TYPE_YEAR, b""
    if kind == "BIT":
        bits = 1 if length is None else length
        return MYSQL_TYPE_BIT, bytes((bits % 8, bits // 8))
    return None


def _text_column(kind: str, length: int | None,
                 members: tuple[str, ...]) -> tuple[int, bytes, int] | None:
    """(type code, metadata, collation) of a string, BLOB/TEXT, ENUM or SET type."""
    if kind in ("CHAR", "BINARY"):
        binary = kind == "BINARY"
        size = (1 if length is None else length) * (1 if binary else UTF8MB4_MAXLEN)
        return MYSQL_TYPE_STRING, _string_metadata(MYSQL_TYPE_STRING, size), \
            BINARY_CHARSET if binary else UTF8MB4_0900_CHARSET
    if kind in ("VARCHAR", "VARBINARY"):
        binary = kind == "VARBINARY"
        size = (65535 if length is None else length) * (1 if binary else UTF8MB4_MAXLEN)
        return MYSQL_TYPE_VARCHAR, min(size, 65535).to_bytes(2, "little"), \
            BINARY_CHARSET if binary else UTF8MB4_0900_CHARSET
    if kind in _BLOB_PACK:
        charset = BINARY_CHARSET if kind.endswith("BLOB") else UTF8MB4_0900_CHARSET
        return MYSQL_TYPE_BLOB, bytes((_BLOB_PACK[kind],)), charset
    if kind == "ENUM":
        return MYSQL_TYPE_STRING, bytes((MYSQL_TYPE_ENUM, 1 if len(members) < 256 else 2)), \
            UTF8MB4_0900_CHARSET
    if kind == "SET":
        size = (len(members) + 7) // 8
        return MYSQL_TYPE_STRING, bytes((MYSQL_TYPE_SET, 8 if size > 4 else size)), \
            UTF8MB4_0900_CHARSET
    return None


def _string_metadata(real_type: int, size: int) -> bytes:
    """A STRING column's two metadata bytes: the real type with the length's bits 8-9
    folded in (inverted), then the length's low byte (``Field_string::do_save_field_metadata``).
    """
    return bytes((real_type ^ ((size & 0x300) >> 4), size & 0xFF))


def metadata_length(type_code: int) -> int:
    """Bytes of TABLE_MAP metadata of a column of ``type_code``; EventError for a type this
    codec does not read.
    """
    size = METADATA_LENGTH.get(type_code)
    if size is None:
        raise EventError(f"column type {type_code} is not one this codec reads")
    return size


# --- encoding ---------------------------------------------------------------------


def encode_value(column: BinlogColumn, value: RowValue) -> bytes:
    """``value`` (not None) packed as a rows event carries it for ``column``; ValueError if
    it does not fit the column.
    """
    code = column.real_type
    if code in _INT_SIZE:
        return _int(value).to_bytes(_INT_SIZE[code], "little", signed=not column.unsigned)
    if code == MYSQL_TYPE_FLOAT:
        return _FLOAT.pack(_float(value))
    if code == MYSQL_TYPE_DOUBLE:
        return _DOUBLE.pack(_float(value))
    if code == MYSQL_TYPE_NEWDECIMAL:
        return _decimal_bytes(value, column.metadata[0], column.metadata[1])
    if code in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_STRING):
        data = _bytes(value)
        return _length_prefixed(data, 1 if column.max_length < 256 else 2)
    if code == MYSQL_TYPE_BLOB:
        return _length_prefixed(_bytes(value), column.metadata[0])
    return _encode_other(column, code, value)


def _encode_other(column: BinlogColumn, code: int, value: RowValue) -> bytes:
    """The temporal, ENUM, SET, YEAR and BIT encodings."""
    if code == MYSQL_TYPE_DATE:
        year, month, day = _date_parts(_str(value))
        return (day | month << 5 | year << 9).to_bytes(3, "little")
    if code == MYSQL_TYPE_DATETIME2:
        return _datetime2(_str(value), column.metadata[0])
    if code == MYSQL_TYPE_TIMESTAMP2:
        return _timestamp2(_str(value), column.metadata[0])
    if code == MYSQL_TYPE_TIME2:
        return _time2(_str(value), column.metadata[0])
    if code == MYSQL_TYPE_YEAR:
        year = _int(value)
        return bytes((0 if year == 0 else year - 1900,))
    if code == MYSQL_TYPE_ENUM:
        return _enum_index(column, _str(value)).to_bytes(column.metadata[1], "little")
    if code == MYSQL_TYPE_SET:
        return _set_bits(column, _str(value)).to_bytes(column.metadata[1], "little")
    if code == MYSQL_TYPE_BIT:
        return _int(value).to_bytes(_bit_bytes(column), "big")
    raise ValueError(f"column type {code} has no row encoding here")


def _int(value: RowValue) -> int:
    if not isinstance(value, int):
        raise ValueError(f"{value!r} is not an integer")
    return value


def _float(value: RowValue) -> float:
    if not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _str(value: RowValue) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def _bytes(value: RowValue) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    raise ValueError(f"{value!r} is neither text nor bytes")


def _length_prefixed(data: bytes, width: int) -> bytes:
    if len(data) >= 1 << (8 * width):
        raise ValueError(f"{len(data)} bytes do not fit a {width}-byte length")
    return len(data).to_bytes(width, "little") + data


def _decimal_bytes(value: RowValue, precision: int, scale: int) -> bytes:
    """MySQL's binary DECIMAL (``decimal2bin``) of ``value`` at (precision, scale)."""
    if not isinstance(value, decimal.Decimal | int):
        raise ValueError(f"{value!r} is not a decimal")
    number = decimal.Decimal(value)
    negative = number < 0
    digits = number.copy_abs().quantize(decimal.Decimal(1).scaleb(-scale), context=_DEC_CONTEXT)
    whole, _, fraction = f"{digits:f}".partition(".")
    intg = precision - scale
    whole = whole.lstrip("0").rjust(intg, "0")
    if len(whole) > intg:
        raise ValueError(f"{value} does not fit DECIMAL({precision},{scale})")
    fraction = fraction.ljust(scale, "0")
    head = intg % _DIGITS_PER_WORD
    groups = [(whole[:head], _DIG2BYTES[head])] if head else []
    groups += [(whole[i:i + 9], 4) for i in range(head, intg, 9)]
    full = scale - scale % _DIGITS_PER_WORD
    groups += [(fraction[i:i + 9], 4) for i in range(0, full, 9)]
    if scale % _DIGITS_PER_WORD:
        groups.append((fraction[full:], _DIG2BYTES[scale % _DIGITS_PER_WORD]))
    raw = b"".join(int(text).to_bytes(size, "big") for text, size in groups)
    return _flip_sign(raw, negative)


def _flip_sign(raw: bytes, invert: bool) -> bytes:
    """``raw`` with its first bit flipped, after every bit when ``invert`` (a negative
    binary DECIMAL's bytes are the positive's inverted; the sign bit is set when positive).
    """
    width = 8 * len(raw)
    number = int.from_bytes(raw, "big")
    if invert:
        number ^= (1 << width) - 1
    return (number ^ 1 << (width - 1)).to_bytes(len(raw), "big")


def decimal_size(precision: int, scale: int) -> int:
    """Bytes of a binary DECIMAL(precision, scale) (``decimal_bin_size``)."""
    intg = precision - scale
    return (intg // 9 * 4 + _DIG2BYTES[intg % 9] + scale // 9 * 4 + _DIG2BYTES[scale % 9])


def _date_parts(text: str) -> tuple[int, int, int]:
    match = _DATETIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a date")
    return int(match[1]), int(match[2]), int(match[3])


def _moment(text: str) -> tuple[int, int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second, microsecond) of a DATETIME string."""
    match = _DATETIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a datetime")
    parts = [int(p or 0) for p in match.groups()[:6]]
    micro = int((match[7] or "").ljust(6, "0"))
    return parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], micro


def _fraction(micro: int, fsp: int) -> bytes:
    """The fractional-second bytes: 1 for 1-2 digits, 2 for 3-4, 3 for 5-6 (big-endian)."""
    if fsp <= 0:
        return b""
    if fsp <= 2:
        return (micro // 10000).to_bytes(1, "big")
    if fsp <= 4:
        return (micro // 100).to_bytes(2, "big")
    return micro.to_bytes(3, "big")


def _datetime2(text: str, fsp: int) -> bytes:
    year, month, day, hour, minute, second, micro = _moment(text)
    packed = ((year * 13 + month) << 22 | day << 17 | hour << 12 | minute << 6 | second)
    return (packed + _DATETIMEF_INT_OFS).to_bytes(5, "big") + _fraction(micro, fsp)


def _timestamp2(text: str, fsp: int) -> bytes:
    year, month, day, hour, minute, second, micro = _moment(text)
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if year == 0:
        seconds = 0
    return seconds.to_bytes(4, "big") + _fraction(micro, fsp)


def _time2(text: str, fsp: int) -> bytes:
    """TIME2 (``my_time_packed_to_binary``): the packed time ``hms << 24 | microseconds``,
    negated for a negative time, as 3 bytes + the fraction, or 6 bytes for 5-6 digits.
    """
    match = _TIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a time")
    hms = int(match[2]) << 12 | int(match[3]) << 6 | int(match[4])
    micro = int((match[5] or "").ljust(6, "0"))
    packed = (hms << 24) + micro
    if match[1]:
        packed = -packed
    if fsp >= 5:
        return (packed + _TIMEF_OFS).to_bytes(6, "big")
    int_part = packed >> 24
    frac = -(abs(packed) % (1 << 24)) if packed < 0 else packed % (1 << 24)  # C's %
    head = (int_part + _TIMEF_INT_OFS).to_bytes(3, "big")
    if fsp <= 0:
        return head
    if fsp <= 2:
        return head + (_c_div(frac, 10000) & 0xFF).to_bytes(1, "big")
    return head + (_c_div(frac, 100) & 0xFFFF).to_bytes(2, "big")


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncating toward zero)."""
    quotient = abs(a) // b
    return -quotient if a < 0 else quotient


def _enum_index(column: BinlogColumn, text: str) -> int:
    if text == "":
        return 0
    try:
        return column.members.index(text) + 1
    except ValueError:
        raise ValueError(f"{text!r} is not a member of ENUM {column.members}") from None


def _set_bits(column: BinlogColumn, text: str) -> int:
    bits = 0
    for item in filter(None, text.split(",")):
        try:
            bits |= 1 << column.members.index(item)
        except ValueError:
            raise ValueError(f"{item!r} is not a member of SET {column.members}") from None
    return bits


def _bit_bytes(column: BinlogColumn) -> int:
    return column.metadata[1] + (1 if column.metadata[0] else 0)


# --- decoding ---------------------------------------------------------------------


def value_size(column: BinlogColumn, data: bytes, pos: int) -> int:
    """Bytes the value of ``column`` at ``data[pos:]`` takes; EventError if they are not
    all there.
    """
    code = column.real_type
    if code in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_STRING, MYSQL_TYPE_BLOB):
        width = (column.metadata[0] if code == MYSQL_TYPE_BLOB
                 else 1 if column.max_length < 256 else 2)
        _need(data, pos, width, column)
        size = width + int.from_bytes(data[pos:pos + width], "little")
    else:
        size = _fixed_size(column, code)
    _need(data, pos, size, column)
    return size


def _fixed_size(column: BinlogColumn, code: int) -> int:
    if code in _INT_SIZE:
        return _INT_SIZE[code]
    fsp = column.metadata[0] if column.metadata else 0
    sizes = {MYSQL_TYPE_FLOAT: 4, MYSQL_TYPE_DOUBLE: 8, MYSQL_TYPE_DATE: 3,
             MYSQL_TYPE_YEAR: 1, MYSQL_TYPE_DATETIME2: 5 + (fsp + 1) // 2,
             MYSQL_TYPE_TIMESTAMP2: 4 + (fsp + 1) // 2, MYSQL_TYPE_TIME2: 3 + (fsp + 1) // 2}
    if code in sizes:
        return sizes[code]
    if code == MYSQL_TYPE_NEWDECIMAL:
        return decimal_size(column.metadata[0], column.metadata[1])
    if code in (MYSQL_TYPE_ENUM, MYSQL_TYPE_SET):
        return column.metadata[1]
    if code == MYSQL_TYPE_BIT:
        return _bit_bytes(column)
    raise EventError(f"column type {code} has no row decoding here")


def _need(data: bytes, pos: int, size: int, column: BinlogColumn) -> None:
    if pos + size > len(data):
        raise EventError(f"row value of column type {column.real_type} needs {size} bytes "
                         f"at offset {pos}, {len(data) - pos} left")


def decode_value(column: BinlogColumn, data: bytes, pos: int) -> tuple[RowValue, int]:
    """The value of ``column`` at ``data[pos:]`` and the position after it; EventError if
    it is truncated or does not parse.
    """
    size = value_size(column, data, pos)
    raw = data[pos:pos + size]
    try:
        return _decode(column, column.real_type, raw), pos + size
    except (ValueError, IndexError) as exc:
        raise EventError(f"row value of column type {column.real_type}: {exc}") from exc


def _decode(column: BinlogColumn, code: int, raw: bytes) -> RowValue:
    if code in _INT_SIZE:
        return int.from_bytes(raw, "little", signed=not column.unsigned)
    if code == MYSQL_TYPE_FLOAT:
        return float(_FLOAT.unpack(raw)[0])
    if code == MYSQL_TYPE_DOUBLE:
        return float(_DOUBLE.unpack(raw)[0])
    if code == MYSQL_TYPE_NEWDECIMAL:
        return _decimal_value(raw, column.metadata[0], column.metadata[1])
    if code in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_STRING, MYSQL_TYPE_BLOB):
        width = (column.metadata[0] if code == MYSQL_TYPE_BLOB
                 else 1 if column.max_length < 256 else 2)
        payload = raw[width:]
        if column.charset == BINARY_CHARSET or column.charset is None and code == \
                MYSQL_TYPE_BLOB:
            return payload
        return payload.decode("utf-8", "surrogateescape")
    return _decode_other(column, code, raw)


def _decode_other(column: BinlogColumn, code: int, raw: bytes) -> RowValue:
    if code == MYSQL_TYPE_DATE:
        packed = int.from_bytes(raw, "little")
        return f"{packed >> 9:04d}-{packed >> 5 & 15:02d}-{packed & 31:02d}"
    fsp = column.metadata[0] if column.metadata else 0
    if code == MYSQL_TYPE_DATETIME2:
        return _datetime2_text(raw, fsp)
    if code == MYSQL_TYPE_TIMESTAMP2:
        seconds = int.from_bytes(raw[:4], "big")
        moment = _EPOCH + datetime.timedelta(seconds=seconds)
        text = moment.strftime("%Y-%m-%d %H:%M:%S") if seconds else "0000-00-00 00:00:00"
        return text + _fraction_text(_fraction_micro(raw[4:], fsp), fsp)
    if code == MYSQL_TYPE_TIME2:
        return _time2_text(raw, fsp)
    if code == MYSQL_TYPE_YEAR:
        return 0 if raw[0] == 0 else raw[0] + 1900
    if code == MYSQL_TYPE_ENUM:
        index = int.from_bytes(raw, "little")
        return "" if index == 0 else _member(column, index - 1)
    if code == MYSQL_TYPE_SET:
        bits = int.from_bytes(raw, "little")
        return ",".join(_member(column, i) for i in range(bits.bit_length()) if bits >> i & 1)
    return int.from_bytes(raw, "big")  # BIT (value_size refused any other type)


def _member(column: BinlogColumn, index: int) -> str:
    """The member ``index`` of an ENUM/SET; without the FULL metadata, its 1-based number."""
    if index < len(column.members):
        return column.members[index]
    if column.members:
        raise ValueError(f"member {index + 1} of {len(column.members)}")
    return str(index + 1)


def _decimal_value(raw: bytes, precision: int, scale: int) -> decimal.Decimal:
    """``bin2decimal``: the inverse of :func:`_decimal_bytes`."""
    positive = bool(raw[0] & 0x80)
    data = _flip_sign(raw, not positive)
    intg = precision - scale
    sizes = ([_DIG2BYTES[intg % 9]] if intg % 9 else []) + [4] * (intg // 9)
    frac_sizes = [4] * (scale // 9) + ([_DIG2BYTES[scale % 9]] if scale % 9 else [])
    pos, whole, fraction = 0, "", ""
    for i, size in enumerate(sizes):
        width = intg % 9 if i == 0 and intg % 9 else 9
        whole += _digit_group(data, pos, size, width)
        pos += size
    for i, size in enumerate(frac_sizes):
        fraction += _digit_group(data, pos, size, 9 if i < scale // 9 else scale % 9)
        pos += size
    text = f"{'' if positive else '-'}{int(whole or '0')}" + (f".{fraction}" if scale else "")
    return decimal.Decimal(text)


def _digit_group(data: bytes, pos: int, size: int, width: int) -> str:
    """One group of a binary DECIMAL as ``width`` digits; ValueError if it has more."""
    group = int.from_bytes(data[pos:pos + size], "big")
    if group >= 10 ** width:
        raise ValueError(f"DECIMAL digit group {group} has more than {width} digits")
    return str(group).rjust(width, "0")


def _fraction_micro(raw: bytes, fsp: int) -> int:
    value = int.from_bytes(raw, "big")
    return value * 10000 if fsp <= 2 else value * 100 if fsp <= 4 else value


def _fraction_text(micro: int, fsp: int) -> str:
    return "." + f"{micro:06d}"[:fsp] if fsp else ""


def _datetime2_text(raw: bytes, fsp: int) -> str:
    packed = int.from_bytes(raw[:5], "big") - _DATETIMEF_INT_OFS
    ym, day = packed >> 22, packed >> 17 & 31
    hour, minute, second = packed >> 12 & 31, packed >> 6 & 63, packed & 63
    text = (f"{ym // 13:04d}-{ym % 13:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}")
    return text + _fraction_text(_fraction_micro(raw[5:], fsp), fsp)


def _time2_text(raw: bytes, fsp: int) -> str:
    """``my_time_packed_from_binary`` then the time's text form."""
    if fsp >= 5:
        packed = int.from_bytes(raw, "big") - _TIMEF_OFS
    else:
        int_part = int.from_bytes(raw[:3], "big") - _TIMEF_INT_OFS
        frac = int.from_bytes(raw[3:], "big")
        if fsp >= 1:
            bits = 8 if fsp <= 2 else 16
            if int_part < 0 and frac:
                int_part += 1
                frac -= 1 << bits
            frac *= 10000 if fsp <= 2 else 100
        packed = (int_part << 24) + frac
    sign, packed = ("-", -packed) if packed < 0 else ("", packed)
    hms, micro = packed >> 24, packed & 0xFFFFFF
    text = f"{sign}{hms >> 12 & 0x3FF:02d}:{hms >> 6 & 63:02d}:{hms & 63:02d}"
    return text + _fraction_text(micro, fsp)
