"""Server responses: OK, ERR, EOF and text result sets (protocol 4.1 forms).

Values in a text result set row are sent as their text (NULL as the single byte
0xFB); column definitions carry MySQL's type codes so that clients convert the
text back to the right Python/C type.
"""

from __future__ import annotations

import datetime
import decimal
import struct
from collections.abc import Iterable, Sequence

import attrs

from rpl.core.net.packets import lenenc_int, lenenc_str

SERVER_STATUS_IN_TRANS = 0x0001
SERVER_STATUS_AUTOCOMMIT = 0x0002
SERVER_MORE_RESULTS_EXISTS = 0x0008

# Column types (enum_field_types).
MYSQL_TYPE_DECIMAL_NEW = 0xF6
MYSQL_TYPE_TINY = 0x01
MYSQL_TYPE_LONG = 0x03
MYSQL_TYPE_DOUBLE = 0x05
MYSQL_TYPE_NULL = 0x06
MYSQL_TYPE_TIMESTAMP = 0x07
MYSQL_TYPE_LONGLONG = 0x08
MYSQL_TYPE_DATE = 0x0A
MYSQL_TYPE_DATETIME = 0x0C
MYSQL_TYPE_VAR_STRING = 0xFD
MYSQL_TYPE_STRING = 0xFE
MYSQL_TYPE_BLOB = 0xFC

CHARSET_UTF8MB4 = 255
CHARSET_BINARY = 63
NOT_NULL_FLAG = 0x0001
PRI_KEY_FLAG = 0x0002
UNSIGNED_FLAG = 0x0020
BINARY_FLAG = 0x0080
NUM_FLAG = 0x8000


def ok_packet(
    affected_rows: int = 0,
    last_insert_id: int = 0,
    status: int = 0,
    warnings: int = 0,
    info: str = "",
) -> bytes:
    """An OK packet (header 0x00); the info text is length-encoded, as mysqld writes it
    (libmariadb reads it that way and reports a malformed packet otherwise).
    """
    body = (
        b"\x00"
        + lenenc_int(affected_rows)
        + lenenc_int(last_insert_id)
        + struct.pack("<HH", status, min(warnings, 0xFFFF))
    )
    return body + lenenc_str(info.encode()) if info else body


def err_packet(errno: int, sqlstate: str, message: str) -> bytes:
    """An ERR packet (header 0xFF) with the protocol 4.1 SQLSTATE marker."""
    return (
        b"\xff"
        + struct.pack("<H", errno)
        + b"#"
        + sqlstate.encode()[:5].ljust(5, b"0")
        + message.encode("utf-8", "replace")
    )


def eof_packet(warnings: int = 0, status: int = 0) -> bytes:
    """An EOF packet (header 0xFE, 5 bytes)."""
    return b"\xfe" + struct.pack("<HH", min(warnings, 0xFFFF), status)


@attrs.frozen
class Column:
    """A result set column: its name and MySQL type description."""

    name: str
    type_code: int = MYSQL_TYPE_VAR_STRING
    length: int = 255
    charset: int = CHARSET_UTF8MB4
    flags: int = 0
    decimals: int = 0x1F
    table: str = ""
    schema: str = ""

    def definition(self) -> bytes:
        """The ColumnDefinition41 payload."""
        name = self.name.encode("utf-8", "surrogateescape")
        return b"".join(
            (
                lenenc_str(b"def"),
                lenenc_str(self.schema.encode()),
                lenenc_str(self.table.encode()),
                lenenc_str(self.table.encode()),
                lenenc_str(name),
                lenenc_str(name),
                b"\x0c",
                struct.pack(
                    "<HIBHB", self.charset, self.length, self.type_code, self.flags, self.decimals
                ),
                b"\x00\x00",
            )
        )


_DEFINITIONS: dict[int, tuple[Column, bytes]] = {}
"""Encoded definitions by the id of the (immutable) Column they encode: a select list
worked out once per table definition sends the same Column objects at each execution.
Each entry holds its Column, so the id cannot be reused by another while it lives."""
_DEFINITIONS_KEPT = 4096


def column_definition(column: Column) -> bytes:
    """``column.definition()``, encoded once per Column object (the object is frozen: its
    encoding cannot change).
    """
    entry = _DEFINITIONS.get(id(column))
    if entry is not None and entry[0] is column:
        return entry[1]
    data = column.definition()
    if len(_DEFINITIONS) >= _DEFINITIONS_KEPT:
        _DEFINITIONS.clear()
    _DEFINITIONS[id(column)] = (column, data)
    return data


def text_column(name: str) -> Column:
    """A VARCHAR column."""
    return Column(name)


def int_column(name: str, unsigned: bool = False) -> Column:
    """A BIGINT column."""
    flags = NOT_NULL_FLAG | BINARY_FLAG | NUM_FLAG | (UNSIGNED_FLAG if unsigned else 0)
    return Column(name, MYSQL_TYPE_LONGLONG, 21, CHARSET_BINARY, flags, 0)


def column_for_value(name: str, value: object) -> Column:
    """A column whose type suits ``value`` (for expressions without a table column)."""
    if isinstance(value, bool) or isinstance(value, int):
        return Column(name, MYSQL_TYPE_LONGLONG, 21, CHARSET_BINARY, BINARY_FLAG | NUM_FLAG, 0)
    if isinstance(value, float):
        return Column(name, MYSQL_TYPE_DOUBLE, 23, CHARSET_BINARY, BINARY_FLAG | NUM_FLAG, 31)
    if isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return Column(name, MYSQL_TYPE_DECIMAL_NEW, 66, CHARSET_BINARY, NUM_FLAG, scale)
    if value is None:
        return Column(name, MYSQL_TYPE_NULL, 0, CHARSET_BINARY, BINARY_FLAG, 0)
    if isinstance(value, bytes):
        return Column(name, MYSQL_TYPE_BLOB, 65535, CHARSET_BINARY, BINARY_FLAG, 0)
    return Column(name)


def text_value(value: object) -> bytes:
    """A value as a text-protocol cell."""
    if value is None:
        return b"\xfb"
    if isinstance(value, bytes):
        return lenenc_str(value)
    if isinstance(value, bool):
        return b"\x011" if value else b"\x010"
    if isinstance(value, float):
        return lenenc_str(repr(value).encode())
    if isinstance(value, datetime.datetime):
        return lenenc_str(value.isoformat(sep=" ").encode())
    return lenenc_str(str(value).encode("utf-8", "surrogateescape"))


def result_set(
    columns: Sequence[Column], rows: Iterable[Sequence[object]], status: int, warnings: int = 0
) -> list[bytes]:
    """The payloads of a text result set: count, definitions, EOF, rows, EOF."""
    eof = eof_packet(warnings, status)
    payloads = [lenenc_int(len(columns))]
    payloads.extend([column_definition(column) for column in columns])
    payloads.append(eof)
    payloads.extend([b"".join(map(text_value, row)) for row in rows])
    payloads.append(eof)
    return payloads
