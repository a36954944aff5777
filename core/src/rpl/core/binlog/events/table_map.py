"""TABLE_MAP (19): a table's id, names and column types, written before its rows events
(``Table_map_log_event``, libbinlogevents' ``rows_event.cpp``).

Post header: table_id (6 bytes), flags (2). Body: database and table names (a length
byte, the name, NUL), the column count (packed integer), a type byte per column, the
metadata (packed length, then each column's :data:`~.row_values.METADATA_LENGTH` bytes),
the NULL-able bitmap, then optional metadata TLVs (type byte, packed length, value).
With ``binlog_row_metadata = MINIMAL`` MySQL writes SIGNEDNESS (numeric columns) and the
character columns' charsets; FULL adds column names, ENUM/SET members and their
charsets, the simple primary key and column visibility. :class:`TableMapEvent` writes
them in MySQL's order and reads any of them back; TLVs it does not model are kept as
they are (:attr:`TableMapEvent.other_metadata`).
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Sequence
from typing import ClassVar, Final, Literal, Self, TypeAlias

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.column_types import (
    MYSQL_TYPE_BLOB,
    MYSQL_TYPE_ENUM,
    MYSQL_TYPE_SET,
    MYSQL_TYPE_STRING,
    MYSQL_TYPE_VARCHAR,
    NUMERIC_TYPES,
    BinlogColumn,
    metadata_length,
)
from rpl.core.binlog.events.gtid_log import _pack_length, _unpack_length
from rpl.core.binlog.events.header import Event, EventError, _raw, _text

TABLE_MAP_EVENT: Final = 19
TM_BIT_LEN_EXACT_F: Final = 0x1
"""The flag MySQL 8.0 sets on every TABLE_MAP."""

SIGNEDNESS: Final = 1
DEFAULT_CHARSET: Final = 2
COLUMN_CHARSET: Final = 3
COLUMN_NAME: Final = 4
SET_STR_VALUE: Final = 5
ENUM_STR_VALUE: Final = 6
GEOMETRY_TYPE: Final = 7
SIMPLE_PRIMARY_KEY: Final = 8
PRIMARY_KEY_WITH_PREFIX: Final = 9
ENUM_AND_SET_DEFAULT_CHARSET: Final = 10
ENUM_AND_SET_COLUMN_CHARSET: Final = 11
COLUMN_VISIBILITY: Final = 12

RowMetadata = Literal["MINIMAL", "FULL"]
"""``binlog_row_metadata``: how much optional metadata a TABLE_MAP carries."""

_POST_HEADER: Final = struct.Struct("<6sH")
TABLE_MAP_POST_HEADER_LEN: Final = _POST_HEADER.size


def bitmap(bits: Sequence[bool]) -> bytes:
    """``bits`` as MySQL's bitmap: bit i is ``1 << (i % 8)`` of byte ``i // 8``."""
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def unbitmap(data: bytes, count: int) -> tuple[bool, ...]:
    """The first ``count`` bits of the bitmap ``data`` (see :func:`bitmap`)."""
    return tuple(bool(data[i >> 3] >> (i & 7) & 1) for i in range(count))


def _msb_bitmap(bits: Sequence[bool]) -> bytes:
    """SIGNEDNESS and COLUMN_VISIBILITY: bit i is ``0x80 >> (i % 8)`` of byte ``i // 8``."""
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i >> 3] |= 0x80 >> (i & 7)
    return bytes(out)


def _msb_bits(data: bytes, count: int) -> list[bool]:
    if len(data) * 8 < count:
        raise EventError(f"bitmap of {len(data)} bytes for {count} columns")
    return [bool(data[i >> 3] & (0x80 >> (i & 7))) for i in range(count)]


_CHARACTER_TYPES: Final = (MYSQL_TYPE_STRING, MYSQL_TYPE_VARCHAR, MYSQL_TYPE_BLOB)
"""The real types DEFAULT_CHARSET/COLUMN_CHARSET speak of (``is_character_type``; ENUM
and SET, STRING's other real types, have charsets of their own)."""


def _charset_of(column: BinlogColumn) -> int:
    """The collation of a character, ENUM or SET column; ValueError if it has none."""
    if column.charset is None:
        raise ValueError(
            f"column {column.name or '?'} of type {column.real_type} needs its charset"
        )
    return column.charset


def _is_enum_or_set(column: BinlogColumn) -> bool:
    return column.real_type in (MYSQL_TYPE_ENUM, MYSQL_TYPE_SET)


def _strings(values: Sequence[str]) -> bytes:
    return b"".join(_pack_length(len(raw)) + raw for raw in map(_raw, values))


def _read_strings(value: bytes, pos: int, count: int | None) -> tuple[list[str], int]:
    """``count`` length-prefixed strings from ``value[pos:]`` (all of it when None)."""
    out: list[str] = []
    while (pos < len(value)) if count is None else (len(out) < count):
        size, pos = _unpack_length(value, pos)
        if pos + size > len(value):
            raise EventError("optional metadata string overruns its field")
        out.append(_text(value[pos : pos + size]))
        pos += size
    return out, pos


def _charset_tlv(collations: list[int], default_type: int, column_type: int) -> tuple[int, bytes]:
    """``init_charset_field``: the most used collation (the lowest number on a tie) and
    the exceptions as (index among the columns concerned, collation) pairs; or every
    column's collation when MySQL's estimate (a byte per number) says that is shorter:
    ``count < 1 + 2 * exceptions``.
    """
    counts = Counter(collations)
    default = min(counts, key=lambda number: (-counts[number], number))
    exceptions = [(i, c) for i, c in enumerate(collations) if c != default]
    if len(collations) < 1 + 2 * len(exceptions):
        return column_type, b"".join(_pack_length(c) for c in collations)
    return default_type, _pack_length(default) + b"".join(
        _pack_length(i) + _pack_length(c) for i, c in exceptions
    )


def _read_charsets(kind: int, value: bytes, count: int, default_type: int) -> list[int]:
    """The collation of each of ``count`` columns from a charset TLV."""
    numbers: list[int] = []
    pos = 0
    while pos < len(value):
        number, pos = _unpack_length(value, pos)
        numbers.append(number)
    if kind != default_type:
        if len(numbers) != count:
            raise EventError(f"{len(numbers)} charsets for {count} columns")
        return numbers
    if not numbers or len(numbers) % 2 != 1:
        raise EventError("DEFAULT_CHARSET is not a default and (index, charset) pairs")
    out = [numbers[0]] * count
    for i in range(1, len(numbers), 2):
        if numbers[i] >= count:
            raise EventError(f"charset exception for column {numbers[i]} of {count}")
        out[numbers[i]] = numbers[i + 1]
    return out


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class TableMapEvent(Event):
    """TABLE_MAP (19): table ``table_id`` is ``db``.``table`` with ``columns``.

    ``row_metadata`` says which optional metadata is written (a decoded event says FULL
    when it carried column names). ``primary_key`` (column indexes) is written with FULL.
    ``other_metadata`` holds TLVs this class does not model, written last as they came.
    """

    TYPE_CODE: "ClassVar[int]" = TABLE_MAP_EVENT

    table_id: int
    db: str
    table: str
    columns: tuple[BinlogColumn, ...]
    flags: int = TM_BIT_LEN_EXACT_F
    row_metadata: RowMetadata = "MINIMAL"
    primary_key: tuple[int, ...] = ()
    other_metadata: tuple[tuple[int, bytes], ...] = ()

    def encode_body(self) -> bytes:
        columns = self.columns
        metadata = b"".join(c.metadata for c in columns)
        return b"".join(
            (
                _POST_HEADER.pack(self.table_id.to_bytes(6, "little"), self.flags),
                _name(self.db),
                _name(self.table),
                _pack_length(len(columns)),
                bytes(c.type_code for c in columns),
                _pack_length(len(metadata)),
                metadata,
                bitmap([c.nullable for c in columns]),
                b"".join(
                    bytes((kind,)) + _pack_length(len(value)) + value
                    for kind, value in self._optional_metadata()
                ),
            )
        )

    def _optional_metadata(self) -> list[tuple[int, bytes]]:
        """The TLVs in ``Table_map_log_event::init_metadata_fields``' order."""
        columns = self.columns
        out: list[tuple[int, bytes]] = []
        numeric = [c.unsigned for c in columns if c.type_code in NUMERIC_TYPES]
        if numeric:
            out.append((SIGNEDNESS, _msb_bitmap(numeric)))
        chars = [_charset_of(c) for c in columns if c.real_type in _CHARACTER_TYPES]
        if chars:
            out.append(_charset_tlv(chars, DEFAULT_CHARSET, COLUMN_CHARSET))
        if self.row_metadata == "FULL":
            out.append((COLUMN_NAME, _strings([c.name or "" for c in columns])))
            out.extend(self._full_members())
            if self.primary_key:
                out.append((SIMPLE_PRIMARY_KEY, b"".join(map(_pack_length, self.primary_key))))
            out.append((COLUMN_VISIBILITY, _msb_bitmap([True] * len(columns))))
        out.extend(self.other_metadata)
        return out

    def _full_members(self) -> list[tuple[int, bytes]]:
        """ENUM/SET charsets, SET members, ENUM members (FULL only)."""
        out: list[tuple[int, bytes]] = []
        enum_or_set = [c for c in self.columns if _is_enum_or_set(c)]
        if enum_or_set:
            out.append(
                _charset_tlv(
                    [_charset_of(c) for c in enum_or_set],
                    ENUM_AND_SET_DEFAULT_CHARSET,
                    ENUM_AND_SET_COLUMN_CHARSET,
                )
            )
        for kind, real in ((SET_STR_VALUE, MYSQL_TYPE_SET), (ENUM_STR_VALUE, MYSQL_TYPE_ENUM)):
            chosen = [c for c in enum_or_set if c.real_type == real]
            if chosen:
                out.append(
                    (
                        kind,
                        b"".join(
                            _pack_length(len(c.members)) + _strings(c.members) for c in chosen
                        ),
                    )
                )
        return out

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if len(body) < _POST_HEADER.size:
            raise EventError(f"TABLE_MAP body of {len(body)} bytes is too short")
        raw_id, flags = _POST_HEADER.unpack_from(body)
        pos = _POST_HEADER.size
        db, pos = _read_name(body, pos)
        table, pos = _read_name(body, pos)
        count, pos = _unpack_length(body, pos)
        types = body[pos : pos + count]
        pos += count
        meta_len, pos = _unpack_length(body, pos)
        meta_end = pos + meta_len
        nulls_end = meta_end + (count + 7) // 8
        if len(types) != count or nulls_end > len(body):
            raise EventError(f"TABLE_MAP of {count} columns overruns its body")
        columns = []
        nullable = unbitmap(body[meta_end:nulls_end], count)
        for i, code in enumerate(types):
            size = metadata_length(code)
            if pos + size > meta_end:
                raise EventError(f"TABLE_MAP metadata of column {i} overruns its field")
            columns.append(BinlogColumn(code, body[pos : pos + size], nullable[i]))
            pos += size
        if pos != meta_end:
            raise EventError(f"TABLE_MAP metadata has {meta_end - pos} bytes left over")
        tlvs = _read_tlvs(body, nulls_end)
        bare = cls(int.from_bytes(raw_id, "little"), _text(db), _text(table), tuple(columns), flags)
        filled, row_metadata, primary_key, other = _apply_optional(bare, tlvs)
        return cls(
            bare.table_id, bare.db, bare.table, filled, flags, row_metadata, primary_key, other
        )


def _name(name: str) -> bytes:
    raw = _raw(name)
    if len(raw) > 255 or b"\0" in raw:
        raise ValueError(f"name {name!r} is too long or contains NUL")
    return bytes((len(raw),)) + raw + b"\0"


def _read_name(body: bytes, pos: int) -> tuple[bytes, int]:
    if pos >= len(body):
        raise EventError("TABLE_MAP ends before a name")
    size = body[pos]
    end = pos + 1 + size
    if end >= len(body) or body[end] != 0:
        raise EventError("TABLE_MAP name is not NUL-terminated within the body")
    return body[pos + 1 : end], end + 1


def _read_tlvs(body: bytes, pos: int) -> list[tuple[int, bytes]]:
    out: list[tuple[int, bytes]] = []
    while pos < len(body):
        kind = body[pos]
        if pos + 1 >= len(body):
            raise EventError("TABLE_MAP optional metadata ends inside a field")
        size, pos = _unpack_length(body, pos + 1)
        if pos + size > len(body):
            raise EventError(f"TABLE_MAP optional metadata {kind} overruns the body")
        out.append((kind, body[pos : pos + size]))
        pos += size
    return out


_Optional: TypeAlias = tuple[
    tuple[BinlogColumn, ...], RowMetadata, tuple[int, ...], tuple[tuple[int, bytes], ...]
]


def _apply_optional(event: TableMapEvent, tlvs: list[tuple[int, bytes]]) -> _Optional:
    """(columns, row_metadata, primary_key, other_metadata) of ``event`` as its optional
    metadata ``tlvs`` fill them in; FULL when column names came.
    """
    columns = [attrs.asdict(c, recurse=False) for c in event.columns]
    other: list[tuple[int, bytes]] = []
    primary_key: tuple[int, ...] = ()
    for kind, value in tlvs:
        if kind == SIMPLE_PRIMARY_KEY:
            primary_key = _read_ints(value)
        elif not _fill_columns(kind, value, event.columns, columns) and kind != COLUMN_VISIBILITY:
            other.append((kind, value))
    full = any(c["name"] is not None for c in columns)
    return (
        tuple(BinlogColumn(**c) for c in columns),
        "FULL" if full else "MINIMAL",
        primary_key,
        tuple(other),
    )


def _fill_columns(
    kind: int, value: bytes, read: tuple[BinlogColumn, ...], columns: list[dict[str, object]]
) -> bool:
    """Fill ``columns`` (the fields of the ``read`` columns) from the TLV ``kind``;
    False for a TLV that says nothing of the columns.
    """
    pairs = list(zip(read, columns, strict=True))
    chars = [c for col, c in pairs if col.real_type in _CHARACTER_TYPES]
    enum_or_set = [c for col, c in pairs if _is_enum_or_set(col)]
    if kind == SIGNEDNESS:
        numeric = [c for col, c in pairs if col.type_code in NUMERIC_TYPES]
        _assign(numeric, "unsigned", _msb_bits(value, len(numeric)))
    elif kind in (DEFAULT_CHARSET, COLUMN_CHARSET):
        _assign(chars, "charset", _read_charsets(kind, value, len(chars), DEFAULT_CHARSET))
    elif kind in (ENUM_AND_SET_DEFAULT_CHARSET, ENUM_AND_SET_COLUMN_CHARSET):
        _assign(
            enum_or_set,
            "charset",
            _read_charsets(kind, value, len(enum_or_set), ENUM_AND_SET_DEFAULT_CHARSET),
        )
    elif kind == COLUMN_NAME:
        names, _ = _read_strings(value, 0, None)
        if len(names) != len(columns):
            raise EventError(f"{len(names)} column names for {len(columns)} columns")
        _assign(columns, "name", names)
    elif kind in (SET_STR_VALUE, ENUM_STR_VALUE):
        real = MYSQL_TYPE_SET if kind == SET_STR_VALUE else MYSQL_TYPE_ENUM
        _read_members(value, [c for col, c in pairs if col.real_type == real])
    else:
        return False
    return True


def _assign(columns: list[dict[str, object]], field: str, values: Sequence[object]) -> None:
    for column, value in zip(columns, values, strict=True):
        column[field] = value


def _read_members(value: bytes, columns: list[dict[str, object]]) -> None:
    pos = 0
    for column in columns:
        count, pos = _unpack_length(value, pos)
        members, pos = _read_strings(value, pos, count)
        column["members"] = tuple(members)
    if pos != len(value):
        raise EventError("ENUM/SET member lists do not match the ENUM/SET columns")


def _read_ints(value: bytes) -> tuple[int, ...]:
    out, pos = [], 0
    while pos < len(value):
        number, pos = _unpack_length(value, pos)
        out.append(number)
    return tuple(out)
