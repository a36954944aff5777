"""One column's value in a rows event, as MySQL 8.0 packs it (``Field::pack``):
:func:`encode_value`, :func:`decode_value`, :func:`value_size`.

Values are the engine's stored values (:mod:`rpl.core.engine.coercion`): ``int``
(integers, YEAR, BIT), ``float``, ``Decimal``, ``str`` (text, ENUM, SET, and
DATE/DATETIME/TIMESTAMP/TIME in MySQL's output form) and ``bytes`` (binary strings); a
decoded value equals the value encoded. The column's type and metadata come from its
:class:`~rpl.core.binlog.events.column_types.BinlogColumn`.

Layouts, integers little-endian unless said: TINY 1, SHORT 2, INT24 3, LONG 4, LONGLONG 8;
FLOAT 4 / DOUBLE 8 IEEE; NEWDECIMAL (``decimal2bin``) 9 digits per 4 bytes big-endian,
sign bit set when positive, a negative value's bytes inverted; VARCHAR and CHAR a 1-byte
length when the column's maximum is below 256 bytes else 2, then the bytes; BLOB/TEXT the
metadata's 1-4 length bytes, then the bytes; the temporal types as
:mod:`~rpl.core.binlog.events.temporal` says; YEAR 1 byte; ENUM 1-2 bytes (1-based
index); SET 1, 2, 3, 4 or 8 bytes (bitmap, little-endian); BIT big-endian; JSON the
metadata's 1-4 (4 as MySQL writes) length bytes, then the value in MySQL's binary JSON
(:mod:`~rpl.core.binlog.events.json_binary`), read back as the text MySQL prints (the
form the engine stores: :func:`rpl.core.json_text.normalize`). An ENUM/SET
value is its member text when the column has its members (FULL metadata, or the writer's
own definition), else the index or bitmap as an ``int`` (a MINIMAL table map's reader;
MySQL's applier also reads them by number); either is accepted on the way in.
"""

from __future__ import annotations

import decimal
import struct
from typing import Final, TypeAlias

from rpl.core.binlog.events.column_types import (
    BINARY_CHARSET,
    INT_SIZE,
    MYSQL_TYPE_BIT,
    MYSQL_TYPE_BLOB,
    MYSQL_TYPE_DATE,
    MYSQL_TYPE_DATETIME2,
    MYSQL_TYPE_DOUBLE,
    MYSQL_TYPE_ENUM,
    MYSQL_TYPE_FLOAT,
    MYSQL_TYPE_JSON,
    MYSQL_TYPE_NEWDECIMAL,
    MYSQL_TYPE_SET,
    MYSQL_TYPE_STRING,
    MYSQL_TYPE_TIME2,
    MYSQL_TYPE_TIMESTAMP2,
    MYSQL_TYPE_VARCHAR,
    MYSQL_TYPE_YEAR,
    BinlogColumn,
    bit_bytes,
)
from rpl.core.binlog.events.header import EventError
from rpl.core.binlog.events.json_binary import decode_text, encode_text
from rpl.core.binlog.events.temporal import (
    pack_date,
    pack_datetime2,
    pack_time2,
    pack_timestamp2,
    unpack_date,
    unpack_datetime2,
    unpack_time2,
    unpack_timestamp2,
)

RowValue: TypeAlias = int | str | float | decimal.Decimal | bytes | None
"""A column's value in a row image (``None`` for SQL NULL)."""

_DIG2BYTES: Final = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_DIGITS_PER_WORD: Final = 9
_DEC_CONTEXT: Final = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
"""Room for DECIMAL(65, 30) (the default context's 28 digits are too few)."""
_FLOAT: Final = struct.Struct("<f")
_DOUBLE: Final = struct.Struct("<d")


# --- encoding ---------------------------------------------------------------------


def encode_value(column: BinlogColumn, value: RowValue) -> bytes:
    """``value`` (not None) packed as a rows event carries it for ``column``; ValueError if
    it does not fit the column.
    """
    code = column.real_type
    if code in INT_SIZE:
        return _int(value).to_bytes(INT_SIZE[code], "little", signed=not column.unsigned)
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
    if code == MYSQL_TYPE_JSON:
        return _length_prefixed(encode_text(_str(value)), column.metadata[0])
    return _encode_other(column, code, value)


def _encode_other(column: BinlogColumn, code: int, value: RowValue) -> bytes:
    """The temporal, ENUM, SET, YEAR and BIT encodings."""
    if code == MYSQL_TYPE_DATE:
        return pack_date(_str(value))
    if code == MYSQL_TYPE_DATETIME2:
        return pack_datetime2(_str(value), column.metadata[0])
    if code == MYSQL_TYPE_TIMESTAMP2:
        return pack_timestamp2(_str(value), column.metadata[0])
    if code == MYSQL_TYPE_TIME2:
        return pack_time2(_str(value), column.metadata[0])
    if code == MYSQL_TYPE_YEAR:
        year = _int(value)
        return bytes((0 if year == 0 else year - 1900,))
    if code == MYSQL_TYPE_ENUM:
        index = value if isinstance(value, int) else _enum_index(column, _str(value))
        return index.to_bytes(column.metadata[1], "little")
    if code == MYSQL_TYPE_SET:
        bits = value if isinstance(value, int) else _set_bits(column, _str(value))
        return bits.to_bytes(column.metadata[1], "little")
    if code == MYSQL_TYPE_BIT:
        return _int(value).to_bytes(bit_bytes(column), "big")
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
    groups += [(whole[i : i + 9], 4) for i in range(head, intg, 9)]
    full = scale - scale % _DIGITS_PER_WORD
    groups += [(fraction[i : i + 9], 4) for i in range(0, full, 9)]
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
    return intg // 9 * 4 + _DIG2BYTES[intg % 9] + scale // 9 * 4 + _DIG2BYTES[scale % 9]


def _enum_index(column: BinlogColumn, text: str) -> int:
    try:
        return column.members.index(text) + 1
    except ValueError:
        if text == "":
            return 0  # the error value (unless '' is a member)
        raise ValueError(f"{text!r} is not a member of ENUM {column.members}") from None


def _set_bits(column: BinlogColumn, text: str) -> int:
    bits = 0
    for item in filter(None, text.split(",")):
        try:
            bits |= 1 << column.members.index(item)
        except ValueError:
            raise ValueError(f"{item!r} is not a member of SET {column.members}") from None
    return bits


# --- decoding ---------------------------------------------------------------------


def value_size(column: BinlogColumn, data: bytes, pos: int) -> int:
    """Bytes the value of ``column`` at ``data[pos:]`` takes; EventError if they are not
    all there.
    """
    code = column.real_type
    if code in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_STRING, MYSQL_TYPE_BLOB, MYSQL_TYPE_JSON):
        width = (
            column.metadata[0]
            if code in (MYSQL_TYPE_BLOB, MYSQL_TYPE_JSON)
            else 1
            if column.max_length < 256
            else 2
        )
        _need(data, pos, width, column)
        size = width + int.from_bytes(data[pos : pos + width], "little")
    else:
        size = _fixed_size(column, code)
    _need(data, pos, size, column)
    return size


def _fixed_size(column: BinlogColumn, code: int) -> int:
    if code in INT_SIZE:
        return INT_SIZE[code]
    fsp = column.metadata[0] if column.metadata else 0
    sizes = {
        MYSQL_TYPE_FLOAT: 4,
        MYSQL_TYPE_DOUBLE: 8,
        MYSQL_TYPE_DATE: 3,
        MYSQL_TYPE_YEAR: 1,
        MYSQL_TYPE_DATETIME2: 5 + (fsp + 1) // 2,
        MYSQL_TYPE_TIMESTAMP2: 4 + (fsp + 1) // 2,
        MYSQL_TYPE_TIME2: 3 + (fsp + 1) // 2,
    }
    if code in sizes:
        return sizes[code]
    if code == MYSQL_TYPE_NEWDECIMAL:
        return decimal_size(column.metadata[0], column.metadata[1])
    if code in (MYSQL_TYPE_ENUM, MYSQL_TYPE_SET):
        return column.metadata[1]
    if code == MYSQL_TYPE_BIT:
        return bit_bytes(column)
    raise EventError(f"column type {code} has no row decoding here")


def _need(data: bytes, pos: int, size: int, column: BinlogColumn) -> None:
    if pos + size > len(data):
        raise EventError(
            f"row value of column type {column.real_type} needs {size} bytes "
            f"at offset {pos}, {len(data) - pos} left"
        )


def decode_value(column: BinlogColumn, data: bytes, pos: int) -> tuple[RowValue, int]:
    """The value of ``column`` at ``data[pos:]`` and the position after it; EventError if
    it is truncated or does not parse.
    """
    size = value_size(column, data, pos)
    raw = data[pos : pos + size]
    try:
        return _decode(column, column.real_type, raw), pos + size
    except (ValueError, IndexError) as exc:
        raise EventError(f"row value of column type {column.real_type}: {exc}") from exc


def _decode(column: BinlogColumn, code: int, raw: bytes) -> RowValue:
    if code in INT_SIZE:
        return int.from_bytes(raw, "little", signed=not column.unsigned)
    if code == MYSQL_TYPE_FLOAT:
        return float(_FLOAT.unpack(raw)[0])
    if code == MYSQL_TYPE_DOUBLE:
        return float(_DOUBLE.unpack(raw)[0])
    if code == MYSQL_TYPE_NEWDECIMAL:
        return _decimal_value(raw, column.metadata[0], column.metadata[1])
    if code in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_STRING, MYSQL_TYPE_BLOB):
        width = (
            column.metadata[0] if code == MYSQL_TYPE_BLOB else 1 if column.max_length < 256 else 2
        )
        payload = raw[width:]
        if column.charset == BINARY_CHARSET or column.charset is None and code == MYSQL_TYPE_BLOB:
            return payload
        return payload.decode("utf-8", "surrogateescape")
    if code == MYSQL_TYPE_JSON:
        return decode_text(raw[column.metadata[0] :])
    return _decode_other(column, code, raw)


def _decode_other(column: BinlogColumn, code: int, raw: bytes) -> RowValue:
    """The temporal, YEAR, ENUM, SET and BIT decodings."""
    fsp = column.metadata[0] if column.metadata else 0
    if code == MYSQL_TYPE_DATE:
        return unpack_date(raw)
    if code == MYSQL_TYPE_DATETIME2:
        return unpack_datetime2(raw, fsp)
    if code == MYSQL_TYPE_TIMESTAMP2:
        return unpack_timestamp2(raw, fsp)
    if code == MYSQL_TYPE_TIME2:
        return unpack_time2(raw, fsp)
    if code == MYSQL_TYPE_YEAR:
        return 0 if raw[0] == 0 else raw[0] + 1900
    if code in (MYSQL_TYPE_ENUM, MYSQL_TYPE_SET) and not column.members:
        return int.from_bytes(raw, "little")  # no FULL metadata: the index or bitmap
    if code == MYSQL_TYPE_ENUM:
        index = int.from_bytes(raw, "little")
        return "" if index == 0 else _member(column, index - 1)
    if code == MYSQL_TYPE_SET:
        bits = int.from_bytes(raw, "little")
        return ",".join(_member(column, i) for i in range(bits.bit_length()) if bits >> i & 1)
    return int.from_bytes(raw, "big")  # BIT (value_size refused any other type)


def _member(column: BinlogColumn, index: int) -> str:
    """The member ``index`` (0-based) of an ENUM/SET."""
    if index < len(column.members):
        return column.members[index]
    raise ValueError(f"member {index + 1} of {len(column.members)}")


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
    group = int.from_bytes(data[pos : pos + size], "big")
    if group >= 10**width:
        raise ValueError(f"DECIMAL digit group {group} has more than {width} digits")
    return str(group).rjust(width, "0")
