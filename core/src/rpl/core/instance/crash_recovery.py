"""Crash recovery: the engine is the last checkpoint plus a replay of the binlog after it.

What holds after :func:`recover`:

* The last binlog file ends with its last complete transaction: a trailing partial
  event or transaction (a crash in the middle of a group write), or anything after
  the first damaged event, is cut off, as MySQL trims a crashed binlog; the error log
  says which file, what size and to which position.
* Every transaction in the binlog after the checkpoint is applied once, in binlog
  order, whether or not its engine commit happened before the crash: a transaction is
  durable exactly when its events are in the binlog (docs/server.md, "Durability and recovery").
* ``gtid_executed`` is the checkpoint's set plus every replayed GTID.

Damage in an older file (which was closed cleanly, so nothing there is a crash
artefact) or a file missing from the index stops the start with a clear error
instead of silently losing transactions.
"""

from __future__ import annotations

from pathlib import Path

from rpl.core.binlog.events import GtidEvent, QueryEvent, RowsEvent, TableMapEvent, XidEvent
from rpl.core.binlog.gtid import Gtid, GtidSet
from rpl.core.binlog.logfile import LogError, read_events
from rpl.core.binlog.trim import mark_closed, truncate_tail
from rpl.core.binlog.writer import Binlog
from rpl.core.execution.execute import execute
from rpl.core.execution.row_apply import RowApplier
from rpl.core.execution.session import Session


class RecoveryError(Exception):
    """The binlog cannot be recovered without losing transactions."""


def recover(
    binlog: Binlog, replayer: Replayer, start_file: str, start_pos: int, gtids: GtidSet
) -> int:
    """Replay ``binlog`` from (start_file, start_pos) through ``replayer``; returns the
    transactions applied.
    """
    names = binlog.index.names()
    missing = [n for n in names if not (binlog.directory / n).exists()]
    if missing:
        raise RecoveryError(f"binlog files listed in the index are missing: {missing}")
    if not names:
        return 0
    truncate_tail(binlog.directory / names[-1])
    first = names.index(start_file) if start_file in names else 0
    if start_file and start_file not in names:
        start_pos = 4
    applied = 0
    for name in names[first:]:
        path = binlog.directory / name
        position = start_pos if name == start_file else 4
        try:
            applied += _replay_file(replayer, path, position, gtids)
        except LogError as exc:
            raise RecoveryError(f"cannot read binlog {name}: {exc}") from exc
        mark_closed(path)
    return applied


def _replay_file(replayer: Replayer, path: Path, position: int, gtids: GtidSet) -> int:
    applied = 0
    for entry in read_events(path, position):
        event = entry.event
        if isinstance(event, GtidEvent):
            replayer.start(event, gtids)
        elif isinstance(event, QueryEvent):
            if replayer.query(event):
                applied += 1
        elif isinstance(event, XidEvent):
            applied += replayer.commit()
        elif isinstance(event, TableMapEvent | RowsEvent):
            replayer.row_event(event, entry.header.log_pos)
    return applied


class Replayer:
    """Applies binlog transactions to the engine through a non-logging session."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.skip = False
        self.open = False
        self.gtids: GtidSet | None = None
        self.gtid: GtidEvent | None = None
        self.rows = RowApplier(session)

    def start(self, event: GtidEvent, gtids: GtidSet) -> None:
        """A GTID event: the next transaction's identity."""
        self.gtids, self.gtid = gtids, event
        self.skip = Gtid(event.sid, event.gno) in gtids
        self.rows.reset()

    def row_event(self, event: TableMapEvent | RowsEvent, end_log_pos: int) -> None:
        """A TABLE_MAP or rows event of the open transaction."""
        if self.skip:
            return
        if isinstance(event, TableMapEvent):
            self.rows.table_map(event)
        else:
            self.rows.rows(event, end_log_pos)

    def query(self, event: QueryEvent) -> bool:
        """A QUERY event; True when it completed a (DDL) transaction."""
        text = event.query
        if text == "BEGIN":
            self.open = True
            if not self.skip:
                self.session.begin()
            return False
        if text == "COMMIT":
            return bool(self.commit())
        if self.skip:
            return not self.open
        self.rows.end_statement()
        self.session.db = event.db or None
        execute(self.session, text)
        if not self.open:
            self._done()
            return True
        return False

    def commit(self) -> int:
        """An XID (or COMMIT): the transaction ends."""
        self.open = False
        if self.skip:
            return 0
        self.rows.end_transaction()
        self.session.commit()
        self._done()
        return 1

    def _done(self) -> None:
        if self.gtids is not None and self.gtid is not None:
            self.gtids.add(self.gtid.sid, self.gtid.gno)
        self.gtid = None
