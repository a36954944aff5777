"""The binary protocol of prepared statements: PREPARE_OK, COM_STMT_EXECUTE's parameter
block and binary result set rows.

What holds:

* **Parameters** are decoded by the type the client declared for each (MySQL's
  ``enum_field_types``, with the unsigned flag 0x80 in the type's second byte): integers
  by width, FLOAT and DOUBLE as floats, DECIMAL as ``Decimal``, strings as ``str`` when
  they are UTF-8 and ``bytes`` otherwise, BLOBs as ``bytes``, and DATE, DATETIME,
  TIMESTAMP and TIME as the text MySQL prints for them (``'2024-01-31 10:00:00.250000'``,
  ``'-838:59:59'``), which every column and comparison reads as MySQL reads a temporal
  value. So every value is an :data:`rpl.core.sql.ast.LiteralValue`: it becomes a
  literal of the statement and the binlog's text quotes it as one.
* **Bad input is refused whole**: a block shorter than its parameters, an unknown type
  byte, a length past the payload's end raise :class:`ParameterError`; nothing of the
  block is used.
* **Rows** are encoded by the column definitions sent before them (the type code and
  the unsigned flag): the client decodes each cell by the same definition, so the
  value it reads is the one the text protocol would have sent as text.
"""

from __future__ import annotations

import datetime
import decimal
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Final, TypeAlias

from rpl.core.net.packets import PayloadReader, ProtocolError, lenenc_int
from rpl.core.net.responses import (
    UNSIGNED_FLAG,
    Column,
    column_definition,
    eof_packet,
    text_value,
)

ParameterValue: TypeAlias = int | float | decimal.Decimal | str | bytes | None
"""A bound parameter's value (a subset of the SQL layer's literal values)."""

MYSQL_TYPE_DECIMAL: Final = 0x00
MYSQL_TYPE_TINY: Final = 0x01
MYSQL_TYPE_SHORT: Final = 0x02
MYSQL_TYPE_LONG: Final = 0x03
MYSQL_TYPE_FLOAT: Final = 0x04
MYSQL_TYPE_DOUBLE: Final = 0x05
MYSQL_TYPE_NULL: Final = 0x06
MYSQL_TYPE_TIMESTAMP: Final = 0x07
MYSQL_TYPE_LONGLONG: Final = 0x08
MYSQL_TYPE_INT24: Final = 0x09
MYSQL_TYPE_DATE: Final = 0x0A
MYSQL_TYPE_TIME: Final = 0x0B
MYSQL_TYPE_DATETIME: Final = 0x0C
MYSQL_TYPE_YEAR: Final = 0x0D
MYSQL_TYPE_NEWDATE: Final = 0x0E
MYSQL_TYPE_VARCHAR: Final = 0x0F
MYSQL_TYPE_BIT: Final = 0x10
MYSQL_TYPE_TIMESTAMP2: Final = 0x11
MYSQL_TYPE_DATETIME2: Final = 0x12
MYSQL_TYPE_TIME2: Final = 0x13
MYSQL_TYPE_JSON: Final = 0xF5
MYSQL_TYPE_NEWDECIMAL: Final = 0xF6
MYSQL_TYPE_ENUM: Final = 0xF7
MYSQL_TYPE_SET: Final = 0xF8
MYSQL_TYPE_TINY_BLOB: Final = 0xF9
MYSQL_TYPE_MEDIUM_BLOB: Final = 0xFA
MYSQL_TYPE_LONG_BLOB: Final = 0xFB
MYSQL_TYPE_BLOB: Final = 0xFC
MYSQL_TYPE_VAR_STRING: Final = 0xFD
MYSQL_TYPE_STRING: Final = 0xFE
MYSQL_TYPE_GEOMETRY: Final = 0xFF

PARAMETER_UNSIGNED: Final = 0x80
"""The flag in a parameter type's second byte that makes an integer unsigned."""

_INT_FORMATS: Final = {
    MYSQL_TYPE_TINY: ("<b", "<B", 1),
    MYSQL_TYPE_SHORT: ("<h", "<H", 2),
    MYSQL_TYPE_YEAR: ("<h", "<H", 2),
    MYSQL_TYPE_LONG: ("<i", "<I", 4),
    MYSQL_TYPE_INT24: ("<i", "<I", 4),
    MYSQL_TYPE_LONGLONG: ("<q", "<Q", 8),
}
"""Integer types: (signed format, unsigned format, size)."""
_FIXED: Final = {
    **{code: struct.Struct(signed) for code, (signed, _, _) in _INT_FORMATS.items()},
    **{code | 0x100: struct.Struct(unsigned) for code, (_, unsigned, _) in _INT_FORMATS.items()},
    MYSQL_TYPE_DOUBLE: struct.Struct("<d"),
    MYSQL_TYPE_DOUBLE | 0x100: struct.Struct("<d"),
    MYSQL_TYPE_FLOAT: struct.Struct("<f"),
    MYSQL_TYPE_FLOAT | 0x100: struct.Struct("<f"),
}
"""Fixed-width parameter types by type code (| 0x100 when unsigned): their decoders."""
_DATE_TYPES: Final = frozenset(
    (
        MYSQL_TYPE_DATE,
        MYSQL_TYPE_NEWDATE,
        MYSQL_TYPE_DATETIME,
        MYSQL_TYPE_DATETIME2,
        MYSQL_TYPE_TIMESTAMP,
        MYSQL_TYPE_TIMESTAMP2,
    )
)
_TIME_TYPES: Final = frozenset((MYSQL_TYPE_TIME, MYSQL_TYPE_TIME2))
_BLOB_TYPES: Final = frozenset(
    (
        MYSQL_TYPE_TINY_BLOB,
        MYSQL_TYPE_MEDIUM_BLOB,
        MYSQL_TYPE_LONG_BLOB,
        MYSQL_TYPE_BLOB,
        MYSQL_TYPE_GEOMETRY,
        MYSQL_TYPE_BIT,
    )
)
_STRING_TYPES: Final = frozenset(
    (
        MYSQL_TYPE_VARCHAR,
        MYSQL_TYPE_VAR_STRING,
        MYSQL_TYPE_STRING,
        MYSQL_TYPE_ENUM,
        MYSQL_TYPE_SET,
        MYSQL_TYPE_JSON,
    )
)
_DECIMAL_TYPES: Final = frozenset((MYSQL_TYPE_DECIMAL, MYSQL_TYPE_NEWDECIMAL))
LENGTH_TYPES: Final = _BLOB_TYPES | _STRING_TYPES | _DECIMAL_TYPES
"""Parameter types whose value is a length-encoded string (SEND_LONG_DATA may send it)."""
KNOWN_TYPES: Final = (
    frozenset(_INT_FORMATS)
    | _DATE_TYPES
    | _TIME_TYPES
    | LENGTH_TYPES
    | {MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE, MYSQL_TYPE_NULL}
)
"""Every parameter type the server decodes."""

CURSOR_TYPE_READ_ONLY: Final = 0x01
"""COM_STMT_EXECUTE flag: open a cursor (not opened here: the rows are sent at once)."""


class ParameterError(Exception):
    """A COM_STMT_EXECUTE parameter block that does not hold its parameters."""


ParameterTypes: TypeAlias = tuple[tuple[int, bool], ...]
"""Each parameter's (type code, unsigned)."""


def prepare_ok(
    statement_id: int, columns: Sequence[Column], param_count: int, warnings: int
) -> list[bytes]:
    """The payloads of a COM_STMT_PREPARE reply: PREPARE_OK, a definition per parameter
    and per column, each block ended by an EOF (the server does not offer
    CLIENT_DEPRECATE_EOF, as in its text result sets).
    """
    payloads = [
        b"\x00"
        + struct.pack("<IHHxH", statement_id, len(columns), param_count, min(warnings, 0xFFFF))
    ]
    if param_count:
        parameter = Column("?", MYSQL_TYPE_VAR_STRING, 0, 63, 0x80, 0)
        payloads.extend(parameter.definition() for _ in range(param_count))
        payloads.append(eof_packet())
    if columns:
        payloads.extend(column.definition() for column in columns)
        payloads.append(eof_packet())
    return payloads


# ----------------------------------------------------------------- parameters
def read_parameters(
    reader: PayloadReader,
    count: int,
    previous: ParameterTypes | None,
    long_data: dict[int, bytes],
) -> tuple[list[ParameterValue], ParameterTypes]:
    """The ``count`` parameters of a COM_STMT_EXECUTE whose reader stands after the
    iteration count, and their types: the types sent now when the new-params-bound flag
    is set, else ``previous`` (the types of the statement's last execution). A parameter
    with long data (COM_STMT_SEND_LONG_DATA) takes that data and has no bytes here.

    Parameters of fixed-width types only (integers, FLOAT, DOUBLE), none NULL and none
    with long data, are decoded by one ``struct`` unpack of the whole block, by a layout
    worked out once per type list (sysbench's ``WHERE id = ?`` is one INT).
    """
    if count == 0:
        return [], ()
    try:
        nulls = reader.take((count + 7) // 8)
        if reader.uint(1):
            raw = reader.take(2 * count)
            layout = _LAYOUTS.get(raw)
            if layout is None:
                layout = _layout(tuple(_read_type(PayloadReader(raw, 2 * i)) for i in range(count)))
                if len(_LAYOUTS) >= _LAYOUTS_KEPT:
                    _LAYOUTS.clear()
                _LAYOUTS[raw] = layout
            types, fixed = layout
        elif previous is None:
            raise ParameterError("no parameter types were ever sent")
        else:
            types = previous
            found = _BY_TYPES.get(types)
            fixed = _layout(types)[1] if found is None else found[1]
        if fixed is not None and not long_data and not any(nulls):
            try:
                values: list[ParameterValue] = list(fixed.unpack_from(reader.data, reader.pos))
            except struct.error:
                raise ParameterError("the parameters are short") from None
            reader.pos += fixed.size
            return values, types
        values = [
            _read_value(reader, code, unsigned, index, nulls, long_data)
            for index, (code, unsigned) in enumerate(types)
        ]
    except ProtocolError as short:
        raise ParameterError(str(short)) from None
    return values, types


Layout: TypeAlias = tuple[ParameterTypes, struct.Struct | None]
"""A type list and the struct that decodes its values at once (None: not all fixed-width)."""
_LAYOUTS: dict[bytes, Layout] = {}
"""Layouts by the type bytes a client sent (2 a parameter)."""
_BY_TYPES: dict[ParameterTypes, Layout] = {}
"""Layouts by type list (an execution that sends no types uses the previous ones)."""
_LAYOUTS_KEPT: Final = 1024


def _layout(types: ParameterTypes) -> Layout:
    """``types`` with the struct decoding their values when every type is fixed-width."""
    found = _BY_TYPES.get(types)
    if found is not None:
        return found
    formats: list[str] = []
    for code, unsigned in types:
        fixed = _FIXED.get(code | 0x100 if unsigned else code)
        if fixed is None:
            break
        formats.append(fixed.format.lstrip("<"))
    whole = len(formats) == len(types)
    layout: Layout = (types, struct.Struct("<" + "".join(formats)) if whole else None)
    if len(_BY_TYPES) >= _LAYOUTS_KEPT:
        _BY_TYPES.clear()
    _BY_TYPES[types] = layout
    return layout


def _read_type(reader: PayloadReader) -> tuple[int, bool]:
    code = reader.uint(1)
    flags = reader.uint(1)
    if code not in KNOWN_TYPES:
        raise ParameterError(f"unknown parameter type 0x{code:02x}")
    return code, bool(flags & PARAMETER_UNSIGNED)


def _read_value(
    reader: PayloadReader,
    code: int,
    unsigned: bool,
    index: int,
    nulls: bytes,
    long_data: dict[int, bytes],
) -> ParameterValue:
    if nulls[index >> 3] & (1 << (index & 7)) or code == MYSQL_TYPE_NULL:
        return None
    if index in long_data:
        return _string_value(code, long_data[index])
    fixed = _FIXED.get(code | 0x100 if unsigned else code)
    if fixed is not None:
        number: int | float = fixed.unpack(reader.take(fixed.size))[0]
        return number
    if code in _DATE_TYPES:
        return _read_date(reader.take(reader.uint(1)), code)
    if code in _TIME_TYPES:
        return _read_time(reader.take(reader.uint(1)))
    return _string_value(code, reader.lenenc_str())


def _string_value(code: int, data: bytes) -> ParameterValue:
    if code in _DECIMAL_TYPES:
        try:
            return decimal.Decimal(data.decode("ascii"))
        except (UnicodeDecodeError, decimal.InvalidOperation):
            raise ParameterError(f"not a decimal: {data[:40]!r}") from None
    if code in _BLOB_TYPES:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def _read_date(data: bytes, code: int) -> str:
    """DATE / DATETIME / TIMESTAMP (0, 4, 7 or 11 bytes) as MySQL prints it."""
    if len(data) not in (0, 4, 7, 11):
        raise ParameterError(f"a date of {len(data)} bytes")
    year, month, day = struct.unpack("<HBB", data[:4]) if data else (0, 0, 0)
    hour, minute, second = tuple(data[4:7]) if len(data) >= 7 else (0, 0, 0)
    micro = int.from_bytes(data[7:11], "little") if len(data) == 11 else 0
    text = f"{year:04d}-{month:02d}-{day:02d}"
    if code in (MYSQL_TYPE_DATE, MYSQL_TYPE_NEWDATE):
        return text
    text += f" {hour:02d}:{minute:02d}:{second:02d}"
    return text + f".{micro:06d}" if micro else text


def _read_time(data: bytes) -> str:
    """TIME (0, 8 or 12 bytes: sign, days, hours, minutes, seconds, microseconds)."""
    if len(data) not in (0, 8, 12):
        raise ParameterError(f"a time of {len(data)} bytes")
    if not data:
        return "00:00:00"
    negative, days, hour, minute, second = struct.unpack("<BIBBB", data[:8])
    micro = int.from_bytes(data[8:12], "little") if len(data) == 12 else 0
    text = f"{'-' if negative else ''}{days * 24 + hour:02d}:{minute:02d}:{second:02d}"
    return text + f".{micro:06d}" if micro else text


# ----------------------------------------------------------------------- rows
_TEMPORAL: Final = re.compile(
    r"(?:(\d{4})-(\d{2})-(\d{2}))?[ T]?(-)?(?:(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?$"
)
"""A stored DATE, DATETIME, TIMESTAMP or TIME value as the engine keeps it (text)."""


def _temporal_parts(value: object) -> tuple[int, ...] | None:
    """(year, month, day, negative, hours, minute, second, micro) of a temporal value."""
    if isinstance(value, datetime.datetime):
        return (
            value.year,
            value.month,
            value.day,
            0,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
        )
    if isinstance(value, datetime.date):
        return (value.year, value.month, value.day, 0, 0, 0, 0, 0)
    match = _TEMPORAL.match(value.decode() if isinstance(value, bytes) else str(value))
    if match is None:
        return None
    year, month, day, negative, hours, minute, second, fraction = match.groups()
    return (
        int(year or 0),
        int(month or 0),
        int(day or 0),
        1 if negative else 0,
        int(hours or 0),
        int(minute or 0),
        int(second or 0),
        int((fraction or "0").ljust(6, "0")),
    )


def _date_cell(value: object) -> bytes:
    parts = _temporal_parts(value)
    if parts is None:
        return b"\x00"
    year, month, day, _, hour, minute, second, micro = parts
    if micro:
        return struct.pack("<BHBBBBBI", 11, year, month, day, hour, minute, second, micro)
    if hour or minute or second:
        return struct.pack("<BHBBBBB", 7, year, month, day, hour, minute, second)
    if year or month or day:
        return struct.pack("<BHBB", 4, year, month, day)
    return b"\x00"


def _time_cell(value: object) -> bytes:
    if isinstance(value, datetime.timedelta):
        negative = value < datetime.timedelta(0)
        span = -value if negative else value
        parts: tuple[int, ...] | None = (
            0,
            0,
            0,
            int(negative),
            span.days * 24 + span.seconds // 3600,
            span.seconds // 60 % 60,
            span.seconds % 60,
            span.microseconds,
        )
    else:
        parts = _temporal_parts(value)
    if parts is None:
        return b"\x00"
    _, _, _, negative_flag, hours, minute, second, micro = parts
    days, hour = divmod(hours, 24)
    if micro:
        return struct.pack("<BBIBBBI", 12, negative_flag, days, hour, minute, second, micro)
    if days or hour or minute or second:
        return struct.pack("<BBIBBB", 8, negative_flag, days, hour, minute, second)
    return b"\x00"


def _integer(value: object) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, bytes):
        value = value.decode()
    return int(decimal.Decimal(str(value)).to_integral_value(decimal.ROUND_HALF_UP))


def _cell(column: Column, value: object) -> bytes:
    """One non-NULL value in the binary form of ``column``'s type."""
    return _writer(column)(value)


CellWriter: TypeAlias = Callable[[object], bytes]
"""Encodes one non-NULL value of a column in its binary form."""


def _writer_for(column: Column) -> CellWriter:
    """The encoder of ``column``'s cells: by its type code and UNSIGNED flag."""
    code = column.type_code
    formats = _INT_FORMATS.get(code)
    if formats is not None:
        pack_int = struct.Struct(formats[1] if column.flags & UNSIGNED_FLAG else formats[0]).pack
        return lambda value: pack_int(_integer(value))
    if code == MYSQL_TYPE_DOUBLE:
        pack_double = struct.Struct("<d").pack
        return lambda value: pack_double(float(value))  # type: ignore[arg-type]
    if code == MYSQL_TYPE_FLOAT:
        pack_float = struct.Struct("<f").pack
        return lambda value: pack_float(float(value))  # type: ignore[arg-type]
    if code in _DATE_TYPES:
        return _date_cell
    if code in _TIME_TYPES:
        return _time_cell
    return text_value


_WRITERS: dict[int, tuple[Column, CellWriter]] = {}
"""Cell encoders by the id of the (immutable) Column they encode for; each entry holds
its Column, so the id is not reused while it lives."""
_WRITERS_KEPT: Final = 4096


def _writer(column: Column) -> CellWriter:
    entry = _WRITERS.get(id(column))
    if entry is not None and entry[0] is column:
        return entry[1]
    writer = _writer_for(column)
    if len(_WRITERS) >= _WRITERS_KEPT:
        _WRITERS.clear()
    _WRITERS[id(column)] = (column, writer)
    return writer


def binary_row(columns: Sequence[Column], row: Sequence[object]) -> bytes:
    """A binary result set row: 0x00, the NULL bitmap (offset 2), the non-NULL cells."""
    return _row([_writer(column) for column in columns], row)


def _row(writers: list[CellWriter], row: Sequence[object]) -> bytes:
    if len(row) != len(writers):
        raise ValueError(f"a row of {len(row)} values for {len(writers)} columns")
    bitmap = bytearray((len(writers) + 9) // 8)
    cells = [b"\x00", b""]
    for index, value in enumerate(row):
        if value is None:
            bitmap[(index + 2) >> 3] |= 1 << ((index + 2) & 7)
        else:
            cells.append(writers[index](value))
    cells[1] = bytes(bitmap)
    return b"".join(cells)


def binary_result_set(
    columns: Sequence[Column], rows: Iterable[Sequence[object]], status: int, warnings: int = 0
) -> list[bytes]:
    """The payloads of a binary result set: count, definitions, EOF, rows, EOF."""
    eof = eof_packet(warnings, status)
    payloads = [lenenc_int(len(columns))]
    payloads.extend([column_definition(column) for column in columns])
    payloads.append(eof)
    writers = [_writer(column) for column in columns]
    payloads.extend([_row(writers, row) for row in rows])
    payloads.append(eof)
    return payloads
