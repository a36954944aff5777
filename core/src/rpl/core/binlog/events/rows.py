"""Rows events v2: WRITE_ROWS (30), UPDATE_ROWS (31), DELETE_ROWS (32), and ROWS_QUERY
(29), the statement a rows event came from (``binlog_rows_query_log_events``).

Post header: table_id (6 bytes), flags (2: STMT_END_F on a statement's last rows event),
extra-data length (2, counting itself) and the extra data. Body: the column count (packed
integer), the columns-present bitmap (the before image's for UPDATE and DELETE), for
UPDATE the after image's bitmap, then the rows: each image a NULL bitmap over the present
columns, then each present non-NULL value (:mod:`~.row_values`); an UPDATE row is a before
image then an after image.

A rows event is read without its TABLE_MAP (:meth:`RowsEvent.decode_body` keeps the
rows' bytes); its values need the table's column types, so they are built and read
against the :class:`~.table_map.TableMapEvent`: :meth:`RowsEvent.of`,
:meth:`UpdateRowsEvent.of_updates`, :meth:`RowsEvent.images`,
:meth:`UpdateRowsEvent.updates`. An image holds the values of the present columns only,
in column order (all columns with ``binlog_row_image = FULL``).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence
from typing import ClassVar, Final, Self, TypeAlias

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.column_types import BinlogColumn
from rpl.core.binlog.events.gtid_log import _pack_length, _unpack_length
from rpl.core.binlog.events.header import Event, EventError, _raw, _text
from rpl.core.binlog.events.row_values import RowValue, decode_value, encode_value
from rpl.core.binlog.events.table_map import TableMapEvent, bitmap, unbitmap

ROWS_QUERY_LOG_EVENT: Final = 29
WRITE_ROWS_EVENT: Final = 30
UPDATE_ROWS_EVENT: Final = 31
DELETE_ROWS_EVENT: Final = 32

STMT_END_F: Final = 0x1
NO_FOREIGN_KEY_CHECKS_F: Final = 0x2
RELAXED_UNIQUE_CHECKS_F: Final = 0x4
COMPLETE_ROWS_F: Final = 0x8

_POST_HEADER: Final = struct.Struct("<6sHH")
ROWS_POST_HEADER_LEN: Final = _POST_HEADER.size

Image: TypeAlias = tuple[RowValue, ...]
"""A row image: the values of the present columns, in column order (None for NULL)."""


def encode_image(
    columns: Sequence[BinlogColumn], present: Sequence[bool], image: Sequence[RowValue]
) -> bytes:
    """One row image's bytes: the NULL bitmap over the ``present`` columns, then each
    non-NULL value; ValueError if the image does not fit the columns.
    """
    chosen = [c for c, bit in zip(columns, present, strict=True) if bit]
    if len(image) != len(chosen):
        raise ValueError(f"row image has {len(image)} values for {len(chosen)} columns")
    for column, value in zip(chosen, image, strict=True):
        if value is None and not column.nullable:
            raise ValueError(f"NULL for the NOT NULL column {column.name or '?'}")
    return bitmap([v is None for v in image]) + b"".join(
        encode_value(c, v) for c, v in zip(chosen, image, strict=True) if v is not None
    )


def _decode_image(chosen: Sequence[BinlogColumn], data: bytes, pos: int) -> tuple[Image, int]:
    nulls_end = pos + (len(chosen) + 7) // 8
    if nulls_end > len(data):
        raise EventError(
            f"row image truncated: its NULL bitmap needs {nulls_end - pos} "
            f"bytes at offset {pos}, {len(data) - pos} left"
        )
    nulls = unbitmap(data[pos:nulls_end], len(chosen))
    pos = nulls_end
    values: list[RowValue] = []
    for column, null in zip(chosen, nulls, strict=True):
        if null:
            values.append(None)
        else:
            value, pos = decode_value(column, data, pos)
            values.append(value)
    return tuple(values), pos


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class RowsEvent(Event):
    """The body WRITE, UPDATE and DELETE rows v2 share; ``rows_data`` is the rows' bytes.

    ``columns`` is the columns-present bitmap (a bool per table column), ``columns_after``
    UPDATE's after-image bitmap (None for the others). ``extra_data`` is what follows the
    extra-data length (empty in what MySQL 8.0 writes outside NDB).
    """

    table_id: int
    flags: int
    columns: tuple[bool, ...]
    rows_data: bytes
    columns_after: tuple[bool, ...] | None = None
    extra_data: bytes = b""

    @property
    def width(self) -> int:
        """The table's column count as the event says it."""
        return len(self.columns)

    @classmethod
    def of(
        cls,
        table_map: TableMapEvent,
        images: Sequence[Sequence[RowValue]],
        *,
        columns: Sequence[bool] | None = None,
        flags: int = STMT_END_F,
    ) -> Self:
        """The event of ``images`` (each the values of the ``columns`` present, all by
        default) of the table ``table_map`` maps; ValueError if a value does not fit.
        """
        if cls is UpdateRowsEvent:
            raise TypeError("UPDATE rows are pairs: use UpdateRowsEvent.of_updates")
        present = _present(table_map, columns)
        data = b"".join(encode_image(table_map.columns, present, image) for image in images)
        return cls(table_map.table_id, flags, present, data)

    def _chosen(self, table_map: TableMapEvent, present: tuple[bool, ...]) -> list[BinlogColumn]:
        if table_map.table_id != self.table_id:
            raise EventError(
                f"rows event of table_id {self.table_id} read with the table "
                f"map of table_id {table_map.table_id}"
            )
        if len(table_map.columns) != self.width:
            raise EventError(
                f"rows event has {self.width} columns, the table map of "
                f"{table_map.db}.{table_map.table} {len(table_map.columns)}"
            )
        return [c for c, bit in zip(table_map.columns, present, strict=True) if bit]

    def images(self, table_map: TableMapEvent) -> tuple[Image, ...]:
        """Every row image in order (UPDATE: before, after, before, ...); EventError if
        the rows do not match ``table_map`` or are truncated.
        """
        before = self._chosen(table_map, self.columns)
        after = (
            before if self.columns_after is None else self._chosen(table_map, self.columns_after)
        )
        shapes = (before,) if self.columns_after is None else (before, after)
        if self.rows_data and not all(shapes):
            raise EventError("rows event has rows but no columns present in an image")
        images: list[Image] = []
        pos, data = 0, self.rows_data
        while pos < len(data):
            image, pos = _decode_image(shapes[len(images) % len(shapes)], data, pos)
            images.append(image)
        if len(images) % len(shapes):
            raise EventError("UPDATE rows end after a before image without its after image")
        return tuple(images)

    def encode_body(self) -> bytes:
        return encode_rows_body(
            self.table_id,
            self.flags,
            self.columns,
            self.rows_data,
            self.columns_after,
            self.extra_data,
        )

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if len(body) < _POST_HEADER.size:
            raise EventError(f"rows event body of {len(body)} bytes is too short")
        raw_id, flags, extra_len = _POST_HEADER.unpack_from(body)
        pos = _POST_HEADER.size + extra_len - 2
        if extra_len < 2 or pos >= len(body):
            raise EventError(f"rows event extra-data length {extra_len} overruns the body")
        width, pos = _unpack_length(body, pos)
        size = (width + 7) // 8
        count = 2 if cls.TYPE_CODE == UPDATE_ROWS_EVENT else 1
        if pos + count * size > len(body):
            raise EventError(f"rows event of {width} columns ends inside its bitmaps")
        before = unbitmap(body[pos : pos + size], width)
        after = unbitmap(body[pos + size : pos + 2 * size], width) if count == 2 else None
        return cls(
            int.from_bytes(raw_id, "little"),
            flags,
            before,
            body[pos + count * size :],
            after,
            body[_POST_HEADER.size : _POST_HEADER.size + extra_len - 2],
        )


@functools.lru_cache(maxsize=1024)
def _present_bitmap(columns: tuple[bool, ...]) -> bytes:
    """The columns-present bitmap, with the column count before it (a table's few
    bitmaps recur in every event).
    """
    return _pack_length(len(columns)) + bitmap(columns)


def encode_rows_body(
    table_id: int,
    flags: int,
    columns: tuple[bool, ...],
    rows_data: bytes,
    columns_after: tuple[bool, ...] | None = None,
    extra_data: bytes = b"",
) -> bytes:
    """A rows event's body (see :class:`RowsEvent`) from its parts, with no event object:
    the source encodes every statement's rows events through here.
    """
    head = _POST_HEADER.pack(table_id.to_bytes(6, "little"), flags, 2 + len(extra_data))
    after = b"" if columns_after is None else bitmap(columns_after)
    return b"".join((head, extra_data, _present_bitmap(columns), after, rows_data))


def _present(table_map: TableMapEvent, columns: Sequence[bool] | None) -> tuple[bool, ...]:
    if columns is None:
        return (True,) * len(table_map.columns)
    if len(columns) != len(table_map.columns):
        raise ValueError(f"{len(columns)} column bits for {len(table_map.columns)} columns")
    if not any(columns):
        raise ValueError("a row image needs at least one column (an empty one has no bytes)")
    return tuple(columns)


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class WriteRowsEvent(RowsEvent):
    """WRITE_ROWS v2 (30): rows inserted; each row is an after image."""

    TYPE_CODE: "ClassVar[int]" = WRITE_ROWS_EVENT


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class DeleteRowsEvent(RowsEvent):
    """DELETE_ROWS v2 (32): rows deleted; each row is a before image."""

    TYPE_CODE: "ClassVar[int]" = DELETE_ROWS_EVENT


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class UpdateRowsEvent(RowsEvent):
    """UPDATE_ROWS v2 (31): rows changed; each row a before image then an after image,
    each over its own columns-present bitmap.
    """

    TYPE_CODE: "ClassVar[int]" = UPDATE_ROWS_EVENT

    @classmethod
    def of_updates(
        cls,
        table_map: TableMapEvent,
        rows: Sequence[tuple[Sequence[RowValue], Sequence[RowValue]]],
        *,
        columns: Sequence[bool] | None = None,
        columns_after: Sequence[bool] | None = None,
        flags: int = STMT_END_F,
    ) -> Self:
        """The event of ``rows`` (before, after) pairs over the ``columns`` and
        ``columns_after`` present (all by default); ValueError if a value does not fit.
        """
        before, after = _present(table_map, columns), _present(table_map, columns_after)
        data = b"".join(
            encode_image(table_map.columns, before, old)
            + encode_image(table_map.columns, after, new)
            for old, new in rows
        )
        return cls(table_map.table_id, flags, before, data, after)

    def updates(self, table_map: TableMapEvent) -> tuple[tuple[Image, Image], ...]:
        """The (before, after) pairs; EventError as :meth:`images`."""
        images = self.images(table_map)
        return tuple(zip(images[::2], images[1::2], strict=True))


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class RowsQueryEvent(Event):
    """ROWS_QUERY (29): the statement whose rows events follow. Its one length byte is
    the statement's length modulo 256 (MySQL writes it so, and readers ignore it: the
    statement is the rest of the body). MySQL sets LOG_EVENT_IGNORABLE_F in its header.
    """

    TYPE_CODE: "ClassVar[int]" = ROWS_QUERY_LOG_EVENT

    query: str

    def encode_body(self) -> bytes:
        raw = _raw(self.query)
        return bytes((len(raw) & 0xFF,)) + raw

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if not body:
            raise EventError("ROWS_QUERY body is empty")
        return cls(_text(body[1:]))
