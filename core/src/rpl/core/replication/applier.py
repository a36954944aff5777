"""The applier (SQL thread): relay log -> engine + this server's binlog.

What holds:

* Whole transactions only. Events are collected from GTID to the end of their
  transaction before anything is applied; a transaction cut off in the relay log
  (the receiver reconnected inside it, so the source's FORMAT_DESCRIPTION follows,
  or the file ends) is discarded, and the source sends it again whole.
* Each transaction goes through the normal commit pipeline of a session (the
  transaction hooks, group commit, ``after_sync``) and is logged to this server's
  binlog with its original GTID, server_id and commit timestamp (log_replica_updates).
* A transaction whose GTID this server has executed is skipped, so re-reading the
  relay log from an older position (relay-log.info lags by design) applies nothing
  twice.
* A lock wait timeout or deadlock (a local session held the rows) is retried up to
  ``replica_transaction_retries`` times; any other error stops the applier with
  Last_SQL_Errno/Last_SQL_Error in MySQL's wording, the transaction rolled back.
* ``applier_start`` before the first read, ``applier_stop`` at the end (aborted on an
  error).
* relay_log_purge: a relay log file is deleted once the applier has moved past it.
"""

from __future__ import annotations

import logging
import struct

from rpl.core import errorlog
from rpl.core.binlog.events import (
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    PREVIOUS_GTIDS_LOG_EVENT,
    ROTATE_EVENT,
    EventError,
    RotateEvent,
    checked_body,
    decode_event,
    unpack_header,
)
from rpl.core.binlog.logfile import LogError, TransactionTracker
from rpl.core.binlog.tail import LogTail
from rpl.core.errors import (
    ER_SLAVE_FATAL_ERROR,
    ER_SLAVE_RELAY_LOG_READ_FAILURE,
    MySQLError,
)
from rpl.core.execution.session import Session
from rpl.core.replication.batch import BATCH_LOCK_WAIT, CommitBatch
from rpl.core.replication.channel_state import ChannelState
from rpl.core.replication.relay_log_recovery import REMEDY
from rpl.core.replication.relay_transaction import RETRYABLE, RelayTransaction, apply_transaction
from rpl.core.replication.worker import ChannelThread
from rpl.observers import RelayIOParam, ThreadKind

_log = errorlog.logger("applier")
STATE_IDLE = "Replica has read all relay log; waiting for more updates"
STATE_APPLYING = "Applying batch of row changes"
IDLE_CHECK = 0.5


def _read_failure(what: str, name: str, position: int) -> MySQLError:
    """ER_SLAVE_RELAY_LOG_READ_FAILURE naming the relay log file and position."""
    return MySQLError.of(
        ER_SLAVE_RELAY_LOG_READ_FAILURE,
        f"{what} at relay log '{name}' position {position}. {REMEDY}",
    )


def _parse_failure(detail: object, name: str, position: int) -> MySQLError:
    """:func:`_read_failure` for an event that does not parse (``detail`` says why)."""
    return _read_failure(f"could not parse relay log event entry ({detail})", name, position)


class ApplierStopped(Exception):
    """STOP SLAVE (or shutdown) asked the applier to end."""


class Applier(ChannelThread):
    """The SQL thread of one channel. :meth:`stop` lets it finish the transaction it is
    applying.
    """

    thread_name = "rpl-replica-sql"

    def __init__(self, channel: ChannelState) -> None:
        super().__init__(channel)
        self.caught_up = True
        self.applying_since: int | None = None
        self.session: Session | None = None
        self._tracker = TransactionTracker()
        self._pending: RelayTransaction | None = None
        self._since_save = 0
        self._checksum = channel.relay_log.checksum
        self.batch = CommitBatch(self.server.variables.global_int("rpl_applier_batch_size"))

    def _param(self) -> RelayIOParam:
        info = self.channel.master_info
        position = self.channel.relay_info
        return RelayIOParam(
            self.server.server_id,
            self.channel.sql_thread_id,
            self.channel.name,
            info.host,
            info.port,
            info.user,
            position.master_log_file,
            position.master_log_pos,
            None,
        )

    def _set_state(self, state: str) -> None:
        self.set_state(state)
        if self.session is not None:
            self.session.state = state

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        """The applier's body."""
        channel = self.channel
        errorlog.set_thread_id(channel.sql_thread_id)
        registered = self.server.threads.register_thread("thread/sql/replica_sql")
        self.registered = registered
        self.session = Session(self.server, None, "", channel.sql_thread_id)
        self.session.thread_kind = ThreadKind.REPLICA_APPLIER
        self.session.channel_name = channel.name
        self.session.deferred = self.batch.tickets
        self.session.command = "Connect"
        self.server.add_session(self.session, None)
        relay = self.server.delegates.binlog_relay_io
        aborted = False
        try:
            relay.applier_start(self._param())
            errorlog.log(
                _log,
                logging.INFO,
                f"Replica SQL thread for channel '{channel.name}' initialized, starting "
                f"replication in log '{channel.relay_info.master_log_file or 'FIRST'}' at "
                f"position {channel.relay_info.master_log_pos}, relay log "
                f"'{channel.relay_info.relay_log_file}' position: "
                f"{channel.relay_info.relay_log_pos}",
                code=10686,
            )
            self._check_until()
            self._read_relay_log()
        except ApplierStopped:
            pass
        except MySQLError as exc:
            aborted = True
            channel.set_sql_error(exc.errno, exc.message)
        except Exception as bug:  # noqa: BLE001 - the thread reports, the server goes on
            aborted = True
            errorlog.log(
                _log, logging.ERROR, f"Replica SQL thread failed: {bug!r}", code=13117, exc_info=bug
            )
            channel.set_sql_error(
                ER_SLAVE_FATAL_ERROR.errno, ER_SLAVE_FATAL_ERROR.format(repr(bug))
            )
        finally:
            try:
                self._flush()
            except MySQLError as exc:
                if not aborted:
                    aborted = True
                    channel.set_sql_error(exc.errno, exc.message)
            if self.session.trx is not None:
                self.session.rollback()
            self.server.remove_session(self.session)
            channel.save_relay_log_info()
            relay.applier_stop(self._param(), aborted)
            self.exited(
                registered,
                f"Replica SQL thread for channel '{channel.name}' exiting, replication "
                f"stopped in log '{channel.relay_info.master_log_file}' at position "
                f"{channel.relay_info.master_log_pos}",
            )

    def _start_file(self) -> tuple[str, int]:
        channel = self.channel
        names = channel.relay_log.index.names()
        info = channel.relay_info
        if info.relay_log_file in names:
            return info.relay_log_file, max(4, info.relay_log_pos)
        if not names:
            end = channel.relay_log.wait_for_update(channel.relay_log.end, IDLE_CHECK)
            while not end.file:
                self._check_stop()
                end = channel.relay_log.wait_for_update(end, IDLE_CHECK)
            names = channel.relay_log.index.names()
        return names[0], 4

    def _check_stop(self) -> None:
        if self.stop_requested.is_set():
            raise ApplierStopped()

    def _read_relay_log(self) -> None:
        name, position = self._start_file()
        while True:
            self._read_file(name, position)
            name = self._next_file(name)
            position = 4

    def _next_file(self, name: str) -> str:
        relay_log = self.channel.relay_log
        while True:
            names = relay_log.index.names()
            if name in names and names.index(name) + 1 < len(names):
                following = names[names.index(name) + 1]
                break
            if name not in names and names:
                following = names[0]
                break
            self._check_stop()
            relay_log.wait_for_update(relay_log.end, IDLE_CHECK)
        self._pending = None  # a transaction cut off at the end of a file is discarded
        info = self.channel.relay_info
        info.relay_log_file, info.relay_log_pos = following, 4
        self.channel.save_relay_log_info()
        if self.server.variables.get_global("relay_log_purge"):
            relay_log.purge_before(following)
        return following

    def _read_file(self, name: str, position: int) -> None:
        relay_log = self.channel.relay_log
        try:
            tail = LogTail(relay_log.path(name), position)
        except FileNotFoundError as missing:
            raise _read_failure(
                f"relay log '{name}' listed in the index is missing", name, position
            ) from missing
        with tail:
            while True:
                self._check_stop()
                end = relay_log.end
                limit = end.pos if end.file == name else tail.size()
                try:
                    events = tail.read(limit)
                except LogError as exc:
                    raise _parse_failure(exc.reason, name, exc.position) from exc
                if events:
                    self.caught_up = False
                    for offset, raw in events:
                        self._event(name, offset, raw)
                    continue
                if end.file != name and tail.position >= tail.size():
                    return
                self._flush()
                self._check_until()
                self.caught_up = self.idle
                self._set_state(STATE_IDLE)
                relay_log.wait_for_update(end, IDLE_CHECK)

    # ------------------------------------------------------------- events
    def _event(self, name: str, offset: int, raw: bytes) -> None:
        end = offset + len(raw)
        code = raw[4]
        if offset == 4 or (code in (PREVIOUS_GTIDS_LOG_EVENT,) and self._pending is None):
            self._moved(name, end)
            return
        if code in (ROTATE_EVENT, FORMAT_DESCRIPTION_EVENT):
            self._file_event(name, offset, end, raw)
            return
        pending: RelayTransaction | None
        try:
            timestamp, _, server_id, event_size, log_pos, _ = unpack_header(raw, 0)
            body = checked_body(raw, code, event_size, checksum=self._checksum)
            if code == GTID_LOG_EVENT:
                pending = self._pending = RelayTransaction(body, server_id, timestamp)
                pending.source_file = self.channel.relay_info.master_log_file
                self._tracker = TransactionTracker()
                statement = ""
            else:
                pending = self._pending
                statement = pending.add(code, body, log_pos) if pending is not None else ""
        except (ValueError, struct.error, IndexError) as exc:  # EventError, as decode_event
            raise _parse_failure(exc, name, offset) from exc
        if pending is None:
            self._moved(name, end)
            return
        if self._tracker.feed(code, statement):
            self._pending = None
            pending.end_relay = (name, end)
            pending.end_master_pos = log_pos
            self._dispatch(pending)

    def _file_event(self, name: str, offset: int, end: int, raw: bytes) -> None:
        """A ROTATE or FORMAT_DESCRIPTION: the source's file name, or the source resent
        from a boundary (the partial copy of a transaction is dropped).
        """
        try:
            header, event = decode_event(raw, checksum=self._checksum)
        except EventError as exc:
            raise _parse_failure(exc, name, offset) from exc
        if isinstance(event, RotateEvent):
            if header.server_id != self.server.server_id or header.flags & 0x20:
                if self._pending is None:
                    self.channel.relay_info.master_log_file = event.next_file
                    self.channel.relay_info.master_log_pos = event.position
            if self._pending is None:
                self._moved(name, end)
            return
        self._pending = None  # the source resent from a boundary: drop the partial copy
        self._moved(name, end)

    def _moved(self, name: str, end: int) -> None:
        if self._pending is None:
            info = self.channel.relay_info
            info.relay_log_file, info.relay_log_pos = name, end

    # ------------------------------------------------------------- apply
    def _dispatch(self, transaction: RelayTransaction) -> None:
        """Apply ``transaction``, batching it with the uncommitted ones before it when the
        source's logical clock says they are independent (see :class:`CommitBatch`).
        """
        batch = self.batch
        gtid = transaction.gtid
        until = self.channel.until_sql_after_gtids
        if gtid in self.server.binlog.gtid_executed or batch.holds(gtid):
            self._flush()
            self.completed(transaction)
            if until is not None:
                self._check_until()
            return
        if not batch.admits(transaction):
            self._flush()
        batch.start(transaction)
        assert self.session is not None
        self._set_state(STATE_APPLYING)
        self.session.lock_wait_override = BATCH_LOCK_WAIT if batch.transactions else None
        # DDL commits at once: a checkpoint must never see a catalogue change whose
        # binlog commit is still to come (the DDL lock covers change to commit).
        self.session.deferred = None if transaction.is_ddl else batch.tickets
        try:
            apply_transaction(self.session, transaction, 0, self.stop_requested.is_set)
        except MySQLError as exc:
            self._flush()  # what ran before it commits; it does not
            if exc.errno not in RETRYABLE:
                raise
            self.session.lock_wait_override = None
            apply_transaction(self.session, transaction, self.retries(), self.stop_requested.is_set)
        batch.add(transaction)
        if transaction.is_ddl or batch.full() or until is not None:
            self._flush()  # UNTIL: one at a time, so the applier stops right after them
        if until is not None:
            self._check_until()

    def _check_until(self) -> None:
        """START SLAVE UNTIL SQL_AFTER_GTIDS: stop once every GTID of the condition is
        executed (at once when they already were at start), as MySQL's applier does; the
        condition ends with the thread.
        """
        until = self.channel.until_sql_after_gtids
        if until is None or not until.is_subset(self.server.binlog.gtid_executed):
            return
        self.channel.until_sql_after_gtids = None
        errorlog.log(
            _log,
            logging.INFO,
            f"Replica SQL thread for channel '{self.channel.name}' stopped because it "
            f"reached UNTIL SQL_AFTER_GTIDS {until}",
            code=10835,
        )
        raise ApplierStopped()

    def _flush(self) -> None:
        """Commit the batch as one binlog group; the position moves past it."""
        for transaction in self.batch.commit(self.server.binlog):
            self.completed(transaction)

    def completed(self, transaction: RelayTransaction) -> None:
        """``transaction`` committed (or was skipped): the applier's position moves past it."""
        channel = self.channel
        info = channel.relay_info
        info.relay_log_file, info.relay_log_pos = transaction.end_relay
        info.master_log_pos = transaction.end_master_pos
        channel.applied += 1
        self._since_save += 1
        if self._since_save >= channel.sync_relay_log_info():
            crash = self.server.crash
            crash.hit("crash_after_commit_before_update_pos")
            channel.save_relay_log_info()
            crash.hit("crash_after_commit_and_update_pos")
            self._since_save = 0

    def retries(self) -> int:
        """replica_transaction_retries."""
        return self.server.variables.global_int("replica_transaction_retries")

    def check_stop_soon(self) -> None:
        """Raise ApplierStopped if STOP SLAVE asked (the coordinator, while it waits)."""
        self._check_stop()

    def behind_since(self) -> int | None:
        """The commit timestamp (µs) of the oldest transaction not yet committed, if any."""
        return self.batch.oldest_timestamp()

    @property
    def idle(self) -> bool:
        """Nothing read and not yet applied."""
        return self._pending is None and not self.batch.transactions
