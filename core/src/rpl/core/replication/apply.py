"""Applying one replicated transaction through a session (the applier and its workers).

What holds after :func:`apply_transaction` returns: the transaction is committed here
through the ordinary commit path, logged to this server's binlog with its original GTID,
server_id and commit timestamp; or it raised a MySQLError and nothing of it remains (the
session's transaction was rolled back). Lock wait timeouts and deadlocks are retried.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rpl.core.binlog.events import Event, EventHeader, GtidEvent, QueryEvent, XidEvent
from rpl.core.binlog.gtid import Gtid
from rpl.core.errors import ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, MySQLError

if TYPE_CHECKING:
    from rpl.core.server.session import Session

RETRYABLE = frozenset((ER_LOCK_WAIT_TIMEOUT.errno, ER_LOCK_DEADLOCK.errno))


class Transaction:
    """The events of one transaction read from the relay log, GTID event first."""

    def __init__(self) -> None:
        self.events: list[tuple[EventHeader, Event]] = []
        self.end_relay: tuple[str, int] = ("", 0)
        self.end_master_pos = 0

    @property
    def gtid_event(self) -> GtidEvent:
        """The GTID event that opens the transaction."""
        event = self.events[0][1]
        assert isinstance(event, GtidEvent)
        return event

    @property
    def gtid(self) -> Gtid:
        """The transaction's GTID."""
        event = self.gtid_event
        return Gtid(event.sid, event.gno)

    @property
    def is_ddl(self) -> bool:
        """A self-committing statement (DDL, account statement) rather than BEGIN ... XID."""
        second = self.events[1][1] if len(self.events) > 1 else None
        return not (isinstance(second, QueryEvent) and second.query == "BEGIN")

    @property
    def commit_timestamp(self) -> int:
        """When it committed on its originating server (µs)."""
        event = self.gtid_event
        return event.original_commit_timestamp or event.immediate_commit_timestamp or \
            self.events[0][0].timestamp * 1_000_000


def apply_transaction(session: Session, transaction: Transaction, retries: int,
                      stopping: Callable[[], bool]) -> None:
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


def _execute(session: Session, transaction: Transaction) -> None:
    from rpl.core.server.execute import execute
    header = transaction.events[0][0]
    session.gtid_next = transaction.gtid
    session.origin = (header.server_id, header.timestamp)
    session.original_commit_timestamp = transaction.commit_timestamp
    try:
        for _, event in transaction.events[1:]:
            if isinstance(event, QueryEvent):
                text = event.query
                if text == "BEGIN":
                    session.begin()
                elif text == "COMMIT":
                    session.commit()
                else:
                    session.db = event.db or None
                    execute(session, text)
            elif isinstance(event, XidEvent):
                session.commit()
        if session.trx is not None:
            session.commit()
        if _gtid_next_pending(session):  # a statement that logged nothing here
            session.begin()
            session.commit()
    finally:
        session.gtid_next = None
        session.origin = None
        session.original_commit_timestamp = None


def _gtid_next_pending(session: Session) -> bool:
    """Whether the session's GTID_NEXT is still set. Read through a call: the commits
    between clear it, and a compiled build would otherwise trust what ``_execute`` stored.
    """
    return session.gtid_next is not None


def sql_error(exc: MySQLError, transaction: Transaction) -> MySQLError:
    """``exc`` as Last_SQL_Error words it: "Error '...' on query. Default database: ..."."""
    if exc.message.startswith("Error '"):
        return exc
    query = next((e for _, e in transaction.events[1:]
                  if isinstance(e, QueryEvent) and e.query not in ("BEGIN", "COMMIT")), None)
    if query is None:
        return exc
    message = (f"Error '{exc.message}' on query. Default database: '{query.db}'. "
               f"Query: '{query.query[:1024]}'")
    return MySQLError(exc.errno, exc.sqlstate, message)
