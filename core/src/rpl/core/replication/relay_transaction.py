"""Applying one replicated transaction through a session (the applier and its workers).

What holds after :func:`apply_transaction` returns: the transaction is committed here
through the ordinary commit path, logged to this server's binlog with its original GTID,
server_id and commit timestamp; or it raised a MySQLError and nothing of it remains (the
session's transaction was rolled back). Lock wait timeouts and deadlocks are retried.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

from rpl.core.binlog.events import (
    DELETE_ROWS_EVENT,
    QUERY_EVENT,
    ROWS_QUERY_LOG_EVENT,
    STMT_END_F,
    TABLE_MAP_EVENT,
    UPDATE_ROWS_EVENT,
    VIEW_CHANGE_EVENT,
    WRITE_ROWS_EVENT,
    XID_EVENT,
    DeleteRowsEvent,
    RowsEvent,
    RowsQueryEvent,
    TableMapEvent,
    UpdateRowsEvent,
    ViewChangeEvent,
    WriteRowsEvent,
    gtid_body,
    query_body,
    valid_gno,
    xid_body,
)
from rpl.core.binlog.gtid import Gtid
from rpl.core.errors import ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, MySQLError
from rpl.core.execution.execute import execute
from rpl.core.execution.row_apply import RowApplier
from rpl.core.execution.session import Session

RETRYABLE = frozenset((ER_LOCK_WAIT_TIMEOUT.errno, ER_LOCK_DEADLOCK.errno))

COMMIT_MARK = ("", "COMMIT")
"""The statement an XID event stands for."""

_ROWS_CLASSES: dict[int, type[RowsEvent]] = {
    WRITE_ROWS_EVENT: WriteRowsEvent,
    UPDATE_ROWS_EVENT: UpdateRowsEvent,
    DELETE_ROWS_EVENT: DeleteRowsEvent,
}

Step = tuple[str, str] | TableMapEvent | tuple[RowsEvent, int] | RowsQueryEvent | ViewChangeEvent
"""One thing a transaction does, in order: a statement ``(db, text)`` (an XID is
COMMIT_MARK), a TABLE_MAP, a rows event with its ``end_log_pos``, a ROWS_QUERY, a
VIEW_CHANGE (logged again here, as MySQL's applier logs it)."""


class RelayTransaction:
    """One transaction read from the relay log, kept as what applying it needs: its GTID
    event's fields and its statements. No event objects are built: the applier reads a few
    fields of each event's body, and decoding every event into its attrs class was a quarter
    of the applier's CPU.
    """

    def __init__(self, gtid_event_body: bytes, server_id: int, timestamp: int) -> None:
        """From the body of the GTID event that opens the transaction (EventError if it is
        malformed) and that event's header fields.
        """
        sid, gno, fields = gtid_body(gtid_event_body)
        self.gtid = Gtid(sid, valid_gno(gno))
        self.last_committed = cast(int, fields.get("last_committed", 0))
        self.sequence_number = cast(int, fields.get("sequence_number", 0))
        original = cast("int | None", fields.get("original_commit_timestamp"))
        immediate = cast(int, fields.get("immediate_commit_timestamp", 0))
        self.commit_timestamp = original or immediate or timestamp * 1_000_000
        """When it committed on its originating server (µs)."""
        self.origin = (server_id, timestamp)
        """The originating server's id and the GTID event's timestamp."""
        self.steps: list[Step] = []
        """What the transaction's events do, in order (see :data:`Step`)."""
        self.source_file = ""
        """The source's binlog file (Last_SQL_Error names it)."""
        self.is_ddl = True
        """A self-committing statement (DDL, account statement) rather than BEGIN ... XID:
        settled by the event after the GTID event."""
        self._events = 1
        self.end_relay: tuple[str, int] = ("", 0)
        self.end_master_pos = 0

    @property
    def statements(self) -> list[tuple[str, str]]:
        """(database, statement) of each QUERY event in order; an XID is COMMIT_MARK."""
        return [s for s in self.steps if isinstance(s, tuple) and isinstance(s[0], str)]

    def add(self, code: int, body: bytes, log_pos: int = 0) -> str:
        """Take the next event's body (CRC checked) and its end ``log_pos``; for a QUERY
        its statement (what the transaction tracker reads), else "". EventError if a
        QUERY, XID, TABLE_MAP, rows or VIEW_CHANGE event is malformed.
        """
        statement = ""
        if code == QUERY_EVENT:
            db, statement = query_body(body)
            self.steps.append((db, statement))
        elif code == XID_EVENT:
            xid_body(body)
            self.steps.append(COMMIT_MARK)
        elif code == TABLE_MAP_EVENT:
            self.steps.append(_table_map(body))
        elif code in _ROWS_CLASSES:
            self.steps.append((_ROWS_CLASSES[code].decode_body(body), log_pos))
        elif code == ROWS_QUERY_LOG_EVENT:
            self.steps.append(RowsQueryEvent.decode_body(body))
        elif code == VIEW_CHANGE_EVENT:
            self.steps.append(ViewChangeEvent.decode_body(body))
        if self._events == 1:
            self.is_ddl = not (code == QUERY_EVENT and statement == "BEGIN")
        self._events += 1
        return statement


_TABLE_MAPS: dict[bytes, TableMapEvent] = {}
_TABLE_MAPS_KEPT = 1024


def _table_map(body: bytes) -> TableMapEvent:
    """The TABLE_MAP of ``body``, decoded once: a source's transactions repeat the same
    few table maps byte for byte (emptied past _TABLE_MAPS_KEPT; threads share it without
    a lock, as a lookup and a store are each one dict operation).
    """
    event = _TABLE_MAPS.get(body)
    if event is None:
        event = TableMapEvent.decode_body(body)
        if len(_TABLE_MAPS) >= _TABLE_MAPS_KEPT:
            _TABLE_MAPS.clear()
        _TABLE_MAPS[body] = event
    return event


def apply_transaction(
    session: Session, transaction: RelayTransaction, retries: int, stopping: Callable[[], bool]
) -> None:
    """Apply ``transaction`` in ``session``, retrying a lock wait timeout or deadlock up
    to ``retries`` times; MySQLError (MySQL's Last_SQL_Error wording) if it fails.
    """
    attempt = 0
    while True:
        try:
            _execute(session, transaction)
            return
        except MySQLError as exc:
            if session.trx is not None:
                session.rollback()
            if exc.errno in RETRYABLE and attempt < retries and not stopping():
                attempt += 1
                time.sleep(min(0.01 * attempt, 0.5))
                continue
            raise sql_error(exc, transaction) from exc


def _execute(session: Session, transaction: RelayTransaction) -> None:
    session.gtid_next = transaction.gtid
    session.origin = transaction.origin
    session.original_commit_timestamp = transaction.commit_timestamp
    rows = RowApplier(session, idempotent=_idempotent(session))
    rows.source_file = transaction.source_file
    rows_query: str | None = None
    try:
        for step in transaction.steps:
            if isinstance(step, TableMapEvent):
                rows.table_map(step)
            elif isinstance(step, RowsQueryEvent):
                rows_query = step.query
            elif isinstance(step, ViewChangeEvent):
                session.log_view_change(step)
            elif isinstance(step[0], RowsEvent):
                event = step[0]
                rows.rows(event, step[1], rows_query)
                if event.flags & STMT_END_F:
                    rows_query = None
            else:
                db, text = step
                rows.end_statement(rows_query)
                _statement(session, db, text)
        rows.end_transaction()
        if session.trx is not None:
            session.commit()
        if _gtid_next_pending(session):  # a statement that logged nothing here
            session.begin()
            session.commit()
    finally:
        session.gtid_next = None
        session.origin = None
        session.original_commit_timestamp = None


def _statement(session: Session, db: str, text: str) -> None:
    """One QUERY event's statement (BEGIN, COMMIT, DDL or DML), logged as a statement."""
    if text == "BEGIN":
        session.begin()
    elif text == "COMMIT":
        session.commit()
    else:
        session.db = db or None
        session.session_vars["binlog_format"] = "STATEMENT"
        execute(session, text)


def _idempotent(session: Session) -> bool:
    """replica_exec_mode = IDEMPOTENT."""
    return str(session.server.variables.get_global("replica_exec_mode")) == "IDEMPOTENT"


def _gtid_next_pending(session: Session) -> bool:
    """Whether the session's GTID_NEXT is still set. Read through a call: the commits
    between clear it, and a compiled build would otherwise trust what ``_execute`` stored.
    """
    return session.gtid_next is not None


def sql_error(exc: MySQLError, transaction: RelayTransaction) -> MySQLError:
    """``exc`` as Last_SQL_Error words it: "Error '...' on query. Default database: ..."."""
    if exc.message.startswith(("Error '", "Could not execute")):
        return exc
    query = next(
        ((db, text) for db, text in transaction.statements if text not in ("BEGIN", "COMMIT")), None
    )
    if query is None:
        return exc
    db, text = query
    message = f"Error '{exc.message}' on query. Default database: '{db}'. Query: '{text[:1024]}'"
    return MySQLError(exc.errno, exc.sqlstate, message)
