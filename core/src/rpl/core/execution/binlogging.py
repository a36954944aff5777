"""Turning a transaction's row changes into binlog events.

The binlog holds each row change as a deterministic statement that any
MySQL-compatible server replays to the same result: auto-increment values are
resolved, every value is a literal, every row is addressed by its full primary key,
and tables are qualified with their database. The rows of one INSERT statement go
into one multi-row INSERT; updates and deletes are one statement per row.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from rpl.core.binlog.events import default_status_vars, encode_query, encode_xid
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

    def xid(self, xid: int, origin: Origin | None = None) -> bytearray:
        """An XID event ending a transaction."""
        server_id, timestamp = self._stamp(origin)
        return encode_xid(xid, server_id=server_id, timestamp=timestamp, checksum=self.checksum)

    def _stamp(self, origin: Origin | None) -> Origin:
        """The server id and time an event carries: the originating server's for a
        replicated transaction, this server's and now otherwise.
        """
        return origin if origin else (self.server_id, int(time.time()))
