"""A table column's binlog type: its type code and TABLE_MAP metadata
(``Table_map_log_event::save_field_metadata``), and what the optional metadata says of
it.

:class:`BinlogColumn` is what TABLE_MAP says of a column: its type code, its metadata
bytes, and what the optional metadata adds (signedness, charset, name, ENUM/SET members).
:func:`binlog_column` maps a column definition (``type_name``, ``length``, ``scale``,
``unsigned``, ``nullable``, as :class:`rpl.core.engine.schema.ColumnSchema` has them) to
one, as MySQL 8.0 declares that type with utf8mb4 text. The values themselves are
:mod:`~rpl.core.binlog.events.row_values`'.
"""

from __future__ import annotations

from typing import Final

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.header import EventError
from rpl.core.columns import ColumnDefinition

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
JSON_PACK_LENGTH: Final = 4
"""A JSON column's metadata: the bytes of its value's length (``Field_json``'s pack
length, 4 as MySQL writes it)."""

METADATA_LENGTH: Final[dict[int, int]] = {
    MYSQL_TYPE_DECIMAL: 0,
    MYSQL_TYPE_TINY: 0,
    MYSQL_TYPE_SHORT: 0,
    MYSQL_TYPE_LONG: 0,
    MYSQL_TYPE_FLOAT: 1,
    MYSQL_TYPE_DOUBLE: 1,
    MYSQL_TYPE_NULL: 0,
    MYSQL_TYPE_TIMESTAMP: 0,
    MYSQL_TYPE_LONGLONG: 0,
    MYSQL_TYPE_INT24: 0,
    MYSQL_TYPE_DATE: 0,
    MYSQL_TYPE_TIME: 0,
    MYSQL_TYPE_DATETIME: 0,
    MYSQL_TYPE_YEAR: 0,
    MYSQL_TYPE_NEWDATE: 0,
    MYSQL_TYPE_VARCHAR: 2,
    MYSQL_TYPE_BIT: 2,
    MYSQL_TYPE_TIMESTAMP2: 1,
    MYSQL_TYPE_DATETIME2: 1,
    MYSQL_TYPE_TIME2: 1,
    MYSQL_TYPE_JSON: 1,
    MYSQL_TYPE_NEWDECIMAL: 2,
    MYSQL_TYPE_ENUM: 2,
    MYSQL_TYPE_SET: 2,
    MYSQL_TYPE_TINY_BLOB: 1,
    MYSQL_TYPE_MEDIUM_BLOB: 1,
    MYSQL_TYPE_LONG_BLOB: 1,
    MYSQL_TYPE_BLOB: 1,
    MYSQL_TYPE_VAR_STRING: 2,
    MYSQL_TYPE_STRING: 2,
    MYSQL_TYPE_GEOMETRY: 1,
}
"""Bytes of TABLE_MAP metadata per column type code (``Table_map_log_event``'s
``save_field_metadata``, the pre-5.6 types included, so any table map MySQL 8.0 writes
parses); a type code not here is one no MySQL writes, and its table map is refused.
Values of the pre-5.6 temporal types and GEOMETRY are not decoded (EventError)."""

NUMERIC_TYPES: Final = frozenset(
    (
        MYSQL_TYPE_TINY,
        MYSQL_TYPE_SHORT,
        MYSQL_TYPE_INT24,
        MYSQL_TYPE_LONG,
        MYSQL_TYPE_LONGLONG,
        MYSQL_TYPE_NEWDECIMAL,
        MYSQL_TYPE_FLOAT,
        MYSQL_TYPE_DOUBLE,
    )
)
"""The types the SIGNEDNESS optional metadata has a bit for (``is_numeric_type``)."""

INT_SIZE: Final = {
    MYSQL_TYPE_TINY: 1,
    MYSQL_TYPE_SHORT: 2,
    MYSQL_TYPE_INT24: 3,
    MYSQL_TYPE_LONG: 4,
    MYSQL_TYPE_LONGLONG: 8,
}
"""Bytes of an integer value per type code."""
_INT_TYPES: Final = {
    "TINYINT": MYSQL_TYPE_TINY,
    "BOOL": MYSQL_TYPE_TINY,
    "BOOLEAN": MYSQL_TYPE_TINY,
    "SMALLINT": MYSQL_TYPE_SHORT,
    "MEDIUMINT": MYSQL_TYPE_INT24,
    "INT": MYSQL_TYPE_LONG,
    "INTEGER": MYSQL_TYPE_LONG,
    "BIGINT": MYSQL_TYPE_LONGLONG,
}
_BLOB_PACK: Final = {
    "TINYTEXT": 1,
    "TEXT": 2,
    "MEDIUMTEXT": 3,
    "LONGTEXT": 4,
    "TINYBLOB": 1,
    "BLOB": 2,
    "MEDIUMBLOB": 3,
    "LONGBLOB": 4,
}
_TEMPORAL: Final = {
    "DATETIME": MYSQL_TYPE_DATETIME2,
    "TIMESTAMP": MYSQL_TYPE_TIMESTAMP2,
    "TIME": MYSQL_TYPE_TIME2,
}


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
            MYSQL_TYPE_ENUM,
            MYSQL_TYPE_SET,
        ):
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
    ``members`` are an ENUM's or SET's values. ValueError for a type the codec lacks, and
    for an ENUM or SET without members (nothing to number its values by).
    """
    kind = column.type_name
    if kind in ("ENUM", "SET") and not members:
        raise ValueError(f"column {column.name!r}: {kind} without its members")
    numeric = _numeric_column(kind, column.length, column.scale)
    if numeric is not None:
        return BinlogColumn(
            numeric[0], numeric[1], column.nullable, column.unsigned, name=column.name
        )
    text = _text_column(kind, column.length, members)
    if text is not None:
        return BinlogColumn(
            text[0], text[1], column.nullable, charset=text[2], name=column.name, members=members
        )
    other = _other_column(kind, column.length)
    if other is None:
        raise ValueError(f"column {column.name!r}: type {kind} has no row encoding here")
    return BinlogColumn(other[0], other[1], column.nullable, name=column.name)


def _numeric_column(kind: str, length: int | None, scale: int | None) -> tuple[int, bytes] | None:
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
    """(type code, metadata) of a temporal, YEAR, BIT or JSON type."""
    if kind in _TEMPORAL:
        return _TEMPORAL[kind], bytes((min(length or 0, 6),))
    if kind in ("DATE", "YEAR"):
        return MYSQL_TYPE_DATE if kind == "DATE" else MYSQL_TYPE_YEAR, b""
    if kind == "BIT":
        bits = 1 if length is None else length
        return MYSQL_TYPE_BIT, bytes((bits % 8, bits // 8))
    if kind == "JSON":
        return MYSQL_TYPE_JSON, bytes((JSON_PACK_LENGTH,))
    return None


def _text_column(
    kind: str, length: int | None, members: tuple[str, ...]
) -> tuple[int, bytes, int] | None:
    """(type code, metadata, collation) of a string, BLOB/TEXT, ENUM or SET type."""
    if kind in ("CHAR", "BINARY"):
        binary = kind == "BINARY"
        size = (1 if length is None else length) * (1 if binary else UTF8MB4_MAXLEN)
        return (
            MYSQL_TYPE_STRING,
            _string_metadata(MYSQL_TYPE_STRING, size),
            BINARY_CHARSET if binary else UTF8MB4_0900_CHARSET,
        )
    if kind in ("VARCHAR", "VARBINARY"):
        binary = kind == "VARBINARY"
        size = (65535 if length is None else length) * (1 if binary else UTF8MB4_MAXLEN)
        return (
            MYSQL_TYPE_VARCHAR,
            min(size, 65535).to_bytes(2, "little"),
            BINARY_CHARSET if binary else UTF8MB4_0900_CHARSET,
        )
    if kind in _BLOB_PACK:
        charset = BINARY_CHARSET if kind.endswith("BLOB") else UTF8MB4_0900_CHARSET
        return MYSQL_TYPE_BLOB, bytes((_BLOB_PACK[kind],)), charset
    if kind == "ENUM":
        return (
            MYSQL_TYPE_STRING,
            bytes((MYSQL_TYPE_ENUM, 1 if len(members) < 256 else 2)),
            UTF8MB4_0900_CHARSET,
        )
    if kind == "SET":
        size = (len(members) + 7) // 8
        return (
            MYSQL_TYPE_STRING,
            bytes((MYSQL_TYPE_SET, 8 if size > 4 else size)),
            UTF8MB4_0900_CHARSET,
        )
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


def bit_bytes(column: BinlogColumn) -> int:
    """Bytes of a BIT column's value: its metadata's whole bytes, one more for odd bits."""
    return column.metadata[1] + (1 if column.metadata[0] else 0)
