"""Turning a statement's row changes into binlog events, in either format.

ROW (``binlog_format = ROW``, the default): per statement, a TABLE_MAP for each table it
changed, then its rows in WRITE/UPDATE/DELETE_ROWS v2 events (:meth:`EventEncoder.rows`).
A run of changes of one kind to one table shares an event until its rows reach
``binlog_row_event_max_size`` (a row is never split); the statement's last rows event
carries STMT_END_F. ``binlog_row_image`` chooses the columns each image carries,
``binlog_row_metadata`` TABLE_MAP's optional metadata, and ``binlog_rows_query_log_events``
puts a ROWS_QUERY with the statement first. A table keeps one table_id for as long as its
definition lasts: DDL makes a new definition, which gets a new id.

STATEMENT and MIXED: each row change as a deterministic statement that any
MySQL-compatible server replays to the same result: auto-increment values are resolved,
every value is a literal, every row is addressed by its full primary key, and tables are
qualified with their database. The rows of one INSERT statement go into one multi-row
INSERT; updates and deletes are one statement per row. Such statements are always safe
to log as statements, so MIXED (which MySQL logs as ROW only for unsafe statements) logs
what STATEMENT does.

A table with an ENUM or SET column of a definition loaded without its members (an engine
snapshot written before members were kept) has its changes logged as statements in every
format: there is nothing to number its values by. JSON goes in rows as MySQL's binary
JSON.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from typing import TypeAlias

import attrs

from rpl.core.binlog.events import (
    DELETE_ROWS_EVENT,
    LOG_EVENT_IGNORABLE_F,
    MYSQL_TYPE_BLOB,
    ROWS_QUERY_LOG_EVENT,
    STMT_END_F,
    TABLE_MAP_EVENT,
    UPDATE_ROWS_EVENT,
    VIEW_CHANGE_EVENT,
    WRITE_ROWS_EVENT,
    BinlogColumn,
    RowsQueryEvent,
    TableMapEvent,
    ViewChangeEvent,
    binlog_column,
    default_status_vars,
    encode_image,
    encode_query,
    encode_rows_body,
    encode_xid,
    unsealed,
)
from rpl.core.engine import Row, RowChange, TableSchema
from rpl.core.engine.memo import SchemaMemo
from rpl.core.sql.ast import quote_identifier, quote_literal

MAX_ROWS_PER_INSERT = 1000
_BEGINS_KEPT = 4096
"""Threads whose last BEGIN event :class:`EventEncoder` keeps (all, then none)."""


def _table(schema: TableSchema) -> str:
    return f"{quote_identifier(schema.db)}.{quote_identifier(schema.name)}"


def _where_pk(schema: TableSchema, row: Row) -> str:
    return " AND ".join(
        f"{quote_identifier(schema.columns[i].name)}={quote_literal(row[i])}"
        for i in schema.pk_positions
    )


def _make_insert_head(schema: TableSchema, _: None) -> str:
    columns = ",".join(quote_identifier(c.name) for c in schema.columns)
    return f"INSERT INTO {_table(schema)} ({columns}) VALUES "


_insert_heads: SchemaMemo[None, str] = SchemaMemo(_make_insert_head)
"""A table's ``INSERT INTO `db`.`t` (`a`,`b`) VALUES ``, built once per definition."""


def _values(row: Row) -> str:
    return "(" + ",".join(quote_literal(v) for v in row) + ")"


def change_statements(changes: Iterable[RowChange]) -> list[tuple[str, str]]:
    """(database, statement) pairs replaying ``changes`` in order."""
    out: list[tuple[str, str]] = []
    pending: list[Row] = []
    pending_schema: TableSchema | None = None

    def flush_inserts() -> None:
        if pending_schema is not None and pending:
            values = ",".join(_values(r) for r in pending)
            out.append((pending_schema.db, _insert_heads.get(pending_schema, None) + values))
        pending.clear()

    for change in changes:
        schema = change.table
        if change.kind == "insert" and change.after is not None:
            if pending_schema is not schema or len(pending) >= MAX_ROWS_PER_INSERT:
                flush_inserts()
                pending_schema = schema
            pending.append(change.after)
            continue
        flush_inserts()
        pending_schema = None
        if change.kind == "update" and change.before is not None and change.after is not None:
            sets = ",".join(
                f"{quote_identifier(c.name)}={quote_literal(change.after[i])}"
                for i, c in enumerate(schema.columns)
                if change.after[i] != change.before[i]
                or type(change.after[i]) is not type(change.before[i])
            )
            if sets:
                out.append(
                    (
                        schema.db,
                        f"UPDATE {_table(schema)} SET {sets} "
                        f"WHERE {_where_pk(schema, change.before)}",
                    )
                )
        elif change.kind == "delete" and change.before is not None:
            out.append(
                (
                    schema.db,
                    f"DELETE FROM {_table(schema)} WHERE {_where_pk(schema, change.before)}",
                )
            )
    flush_inserts()
    return out


_ROWS_CODES = {"insert": WRITE_ROWS_EVENT, "update": UPDATE_ROWS_EVENT, "delete": DELETE_ROWS_EVENT}
"""The rows event type of each kind of row change."""


@attrs.frozen
class RowLogging:
    """How a session logs rows: ``binlog_row_image``, ``binlog_row_metadata``,
    ``binlog_row_event_max_size`` and ``binlog_rows_query_log_events``.
    """

    image: str = "FULL"
    metadata: str = "MINIMAL"
    max_size: int = 8192
    rows_query: bool = False
    flags: int = 0
    """Flags every rows event carries: NO_FOREIGN_KEY_CHECKS_F when the session runs
    with foreign_key_checks = 0 (the applier then skips the checks too, as MySQL's)."""


def _make_columns(schema: TableSchema, _: None) -> tuple[BinlogColumn, ...] | None:
    try:
        return tuple(binlog_column(c, c.members) for c in schema.columns)
    except ValueError:
        return None


_binlog_columns: SchemaMemo[None, tuple[BinlogColumn, ...] | None] = SchemaMemo(_make_columns)
"""A table's columns as TABLE_MAP describes them; None when one has no row encoding."""


def _make_masks(schema: TableSchema, image: str) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
    """(every column, the before image's columns) under ``binlog_row_image = image``."""
    count = len(schema.columns)
    every = (True,) * count
    keys = frozenset(schema.pk_positions)
    if image == "MINIMAL":
        return every, tuple(i in keys for i in range(count))
    if image == "NOBLOB":
        columns = _binlog_columns.get(schema, None) or ()
        blobs = frozenset(i for i, c in enumerate(columns) if c.type_code == MYSQL_TYPE_BLOB)
        return every, tuple(i in keys or i not in blobs for i in range(count))
    return every, every


_masks: SchemaMemo[str, tuple[tuple[bool, ...], tuple[bool, ...]]] = SchemaMemo(_make_masks)


def _after_mask(change: RowChange, image: str, before_mask: tuple[bool, ...]) -> tuple[bool, ...]:
    """An UPDATE's after-image columns: all (FULL); the changed ones (MINIMAL, the key
    when none differs); NOBLOB's before columns plus the changed BLOB/TEXT ones.
    """
    before, after = change.before, change.after
    assert before is not None and after is not None
    if image == "FULL":
        return (True,) * len(after)
    changed = [a != b or type(a) is not type(b) for a, b in zip(before, after, strict=True)]
    if image == "NOBLOB":
        return tuple(c or kept for c, kept in zip(changed, before_mask, strict=True))
    if not any(changed):
        return tuple(i in change.table.pk_positions for i in range(len(after)))
    return tuple(changed)


def _pick(row: Row, mask: Sequence[bool]) -> list[object]:
    return [value for value, bit in zip(row, mask, strict=True) if bit]


def row_encodable(schema: TableSchema) -> bool:
    """Whether ``schema``'s rows can be logged as rows events."""
    return _binlog_columns.get(schema, None) is not None


Origin = tuple[int, int]
"""A replicated transaction's originating ``(server_id, timestamp)``: its events keep
them in every binlog down a chain, as MySQL's do (loop detection, replication lag)."""


class EventEncoder:
    """Encodes one session's events: ``log_pos`` 0 and the CRC left to the group commit
    leader, which relocates them (:func:`rpl.core.binlog.events.relocate_events`).
    """

    def __init__(self, server_id: int, checksum: bool) -> None:
        self.server_id = server_id
        self.checksum = checksum
        self._status_vars = default_status_vars()
        self._table_ids = itertools.count(1)
        self._table_maps: SchemaMemo[str, tuple[TableMapEvent, bytes]] = SchemaMemo(
            self._make_table_map
        )
        """Per table definition and binlog_row_metadata: its TABLE_MAP and the body's
        bytes. The table_id is the definition's for as long as the entry lives."""
        self._begins: dict[int, tuple[int, int, bytes]] = {}
        """thread id -> (server id, timestamp, QUERY "BEGIN"): the last BEGIN of each
        thread, the same bytes for every transaction it starts within that second."""

    def query(self, thread_id: int, db: str, text: str, origin: Origin | None = None) -> bytearray:
        """A QUERY event (``origin``: a replicated transaction's server id and time)."""
        server_id, timestamp = self._stamp(origin)
        return encode_query(
            thread_id,
            db,
            text,
            status_vars=self._status_vars,
            server_id=server_id,
            timestamp=timestamp,
            checksum=self.checksum,
        )

    def begin(self, thread_id: int, origin: Origin | None = None) -> bytearray:
        """QUERY "BEGIN", which starts every transaction's events."""
        server_id, timestamp = self._stamp(origin)
        last = self._begins.get(thread_id)
        if last is not None and last[0] == server_id and last[1] == timestamp:
            return bytearray(last[2])
        event = self.query(thread_id, "", "BEGIN", (server_id, timestamp))
        if len(self._begins) >= _BEGINS_KEPT:
            self._begins.clear()
        self._begins[thread_id] = (server_id, timestamp, bytes(event))
        return event

    def rows(
        self,
        thread_id: int,
        changes: Sequence[RowChange],
        logging: RowLogging,
        statement: str | None = None,
        origin: Origin | None = None,
    ) -> list[bytearray] | None:
        """One statement's ``changes`` as ROWS_QUERY (if asked), TABLE_MAPs and rows
        events (see the module docstring); None when a table's rows have no encoding
        (the caller logs statements instead). ValueError if a value does not fit its
        column (the engine's values always do).
        """
        maps: dict[int, tuple[TableMapEvent, bytes]] = {}
        for change in changes:
            key = id(change.table)
            if key not in maps:
                if not row_encodable(change.table):
                    return None
                maps[key] = self._table_maps.get(change.table, logging.metadata)
        server_id, timestamp = self._stamp(origin)
        checksum = self.checksum
        out: list[bytearray] = []
        if logging.rows_query and statement:
            body = RowsQueryEvent(statement).encode_body()
            flags = LOG_EVENT_IGNORABLE_F
            out.append(unsealed(ROWS_QUERY_LOG_EVENT, body, server_id, timestamp, checksum, flags))
        for _, body in maps.values():
            out.append(unsealed(TABLE_MAP_EVENT, body, server_id, timestamp, checksum))
        events = _rows_events(changes, logging, maps)
        last = len(events) - 1
        for i, (shape, rows) in enumerate(events):
            table_id, kind, present, present_after = shape
            body = encode_rows_body(
                table_id,
                (STMT_END_F if i == last else 0) | logging.flags,
                present,
                rows,
                present_after,
            )
            out.append(unsealed(_ROWS_CODES[kind], body, server_id, timestamp, checksum))
        return out

    def _make_table_map(self, schema: TableSchema, metadata: str) -> tuple[TableMapEvent, bytes]:
        columns = _binlog_columns.get(schema, None)
        assert columns is not None
        event = TableMapEvent(
            next(self._table_ids),
            schema.db,
            schema.name,
            columns,
            row_metadata="FULL" if metadata == "FULL" else "MINIMAL",
            primary_key=schema.pk_positions,
        )
        return event, event.encode_body()

    def view_change(self, event: ViewChangeEvent, origin: Origin | None = None) -> bytearray:
        """A VIEW_CHANGE event (a Group Replication view change the applier logs)."""
        server_id, timestamp = self._stamp(origin)
        return unsealed(VIEW_CHANGE_EVENT, event.encode_body(), server_id, timestamp, self.checksum)

    def xid(self, xid: int, origin: Origin | None = None) -> bytearray:
        """An XID event ending a transaction."""
        server_id, timestamp = self._stamp(origin)
        return encode_xid(xid, server_id=server_id, timestamp=timestamp, checksum=self.checksum)

    def _stamp(self, origin: Origin | None) -> Origin:
        """The server id and time an event carries: the originating server's for a
        replicated transaction, this server's and now otherwise.
        """
        return origin if origin else (self.server_id, int(time.time()))


_Shape: TypeAlias = tuple[int, str, tuple[bool, ...], tuple[bool, ...] | None]
"""What the rows of one event share: table_id, kind, the columns present before and after."""


def _rows_events(
    changes: Sequence[RowChange],
    logging: RowLogging,
    maps: dict[int, tuple[TableMapEvent, bytes]],
) -> list[tuple[_Shape, bytes]]:
    """The rows events of ``changes``, as (shape, rows' bytes): a new event at each change
    of table, kind or columns present, or when the next row would take the rows' bytes
    past ``logging.max_size``. ``maps``: each changed table's TABLE_MAP, by ``id(schema)``.
    """
    out: list[tuple[_Shape, bytes]] = []
    shape: _Shape | None = None
    rows: list[bytes] = []
    size = 0
    for change in changes:
        schema = change.table
        table_map = maps[id(schema)][0]
        columns = table_map.columns
        every, before_mask = _masks.get(schema, logging.image)
        if change.kind == "insert":
            assert change.after is not None
            present, present_after = every, None
            data = encode_image(columns, every, change.after)
        elif change.kind == "delete":
            assert change.before is not None
            present, present_after = before_mask, None
            data = encode_image(columns, before_mask, _pick(change.before, before_mask))  # type: ignore[arg-type]
        else:
            assert change.before is not None and change.after is not None
            after_mask = _after_mask(change, logging.image, before_mask)
            present, present_after = before_mask, after_mask
            data = encode_image(
                columns,
                before_mask,
                _pick(change.before, before_mask),  # type: ignore[arg-type]
            ) + encode_image(columns, after_mask, _pick(change.after, after_mask))  # type: ignore[arg-type]
        key = (table_map.table_id, change.kind, present, present_after)
        if key != shape or (rows and size + len(data) > logging.max_size):
            if shape is not None and rows:
                out.append((shape, b"".join(rows)))
            shape, rows, size = key, [], 0
        rows.append(data)
        size += len(data)
    if shape is not None and rows:
        out.append((shape, b"".join(rows)))
    return out
