"""The binlog sender: a replica's dump thread on the source.

What holds:

* The stream starts with an artificial ROTATE naming the file and position, then
  the file's FORMAT_DESCRIPTION event (LOG_EVENT_BINLOG_IN_USE_F cleared; with
  ``log_pos`` 0 when the dump starts past it, so the replica does not take it as
  progress). Every later file gets the same artificial ROTATE + FD opening.
* Only bytes before the binlog's *published* end are read (see
  :mod:`rpl.core.binlog.writer`): an event is sent only once it is durable per
  ``sync_binlog``, and no binlog lock is ever taken, so a commit waiting in
  ``after_sync`` for this dump (semisync) can never block it (WL#6355).
* The transmit hooks run at MySQL's points: ``transmit_start`` before the first
  packet, ``reserve_header`` + ``before_send_event`` per packet, ``after_send_event``
  after it was flushed (or for a transaction skipped because the replica has its
  GTID), ``transmit_stop`` whenever the dump ends.
* Idle for ``@master_heartbeat_period``: a HEARTBEAT event with the current position.
* The dump ends on KILL, shutdown, the replica going away, or an error; errors reach
  the replica as ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) with MySQL's message.
"""

from __future__ import annotations

import errno
import logging
import select
import socket
import time
from typing import TYPE_CHECKING

import attrs

from rpl.core import errorlog
from rpl.core.binlog.events import (
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    LOG_EVENT_ARTIFICIAL_F,
    QUERY_EVENT,
    ROTATE_EVENT,
    HeartbeatEvent,
    QueryEvent,
    RotateEvent,
    artificial,
    decode_event,
    encode_event,
    event_checksum_alg,
    event_gtid,
)
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import (
    LogError,
    TransactionTracker,
    previous_gtids,
    read_events,
)
from rpl.core.binlog.tail import LogTail
from rpl.core.delegates import DumpObservers, HookError
from rpl.core.errors import ER_MASTER_FATAL_ERROR_READING_BINLOG, MySQLError
from rpl.core.net import responses as rsp
from rpl.core.replication.services import DumpNet, SessionUserVariables
from rpl.observers import BinlogDumpFlags, TransmitParam, UserVariableNotFound

if TYPE_CHECKING:
    from rpl.core.binlog.writer import Binlog
    from rpl.core.execution.connection import Connection

_log = errorlog.logger("binlog_sender")
IDLE_CHECK = 0.5
"""Seconds between checks for KILL, shutdown or a vanished replica while idle."""
STATE_IDLE = "Source has sent all binlog to replica; waiting for more updates"
STATE_SENDING = "Sending binlog event to replica"
STATE_SWITCHING = "Finished reading one binlog; switching to next binlog"


_COM_QUIT_PACKET = b"\x01\x00\x00\x00\x01"
"""A whole COM_QUIT packet: payload length 1, sequence 0, command 0x01."""


@attrs.frozen
class DumpRequest:
    """A COM_BINLOG_DUMP(_GTID) request; ``gtids`` is the replica's set for a GTID dump."""

    file: str
    position: int
    flags: BinlogDumpFlags
    server_id: int
    gtids: GtidSet | None


class DumpEnded(Exception):
    """The dump is over (the replica left, KILL, shutdown): nothing to report."""


def fatal(message: str) -> MySQLError:
    """ER_MASTER_FATAL_ERROR_READING_BINLOG with ``message``."""
    code = ER_MASTER_FATAL_ERROR_READING_BINLOG
    return MySQLError(code.errno, code.sqlstate, message)


class BinlogSender:
    """Runs one dump on its connection's thread."""

    def __init__(self, connection: Connection, request: DumpRequest) -> None:
        self.connection = connection
        self.server = connection.server
        self.binlog: Binlog = connection.server.binlog
        self.request = request
        session = connection.session
        assert session is not None
        self.session = session
        self.net = DumpNet(connection)
        self.checksum = self.server.encoder.checksum
        self.heartbeat = self._heartbeat_period()
        self.file = ""
        self.position = 0
        self._skipping = False
        self._tracker = TransactionTracker()
        self._last_sent = time.monotonic()
        self._flush_each = False

    # ----------------------------------------------------------------- run
    def run(self) -> None:
        """The dump, from start to end; errors go to the replica as ERR packets."""
        session = self.session
        session.command = "Binlog Dump GTID" if self.request.gtids is not None else "Binlog Dump"
        thread = self.server.threads.register_thread("thread/sql/one_connection")
        thread.command = session.command
        thread.processlist_id = session.thread_id
        self.thread = thread
        dump: DumpObservers | None = None
        try:
            self._check_replica_checksum()
            self.file, self.position = self._start_position()
            param = TransmitParam(
                self.request.server_id,
                self.connection.thread_id,
                self.request.flags,
                self.connection.host,
                session.user,
                self.net,
                SessionUserVariables(session),
            )
            dump = self.server.delegates.binlog_transmit.transmit_start(
                param, self.file, self.position
            )
            self._flush_each = bool(
                dump.observed
            ) and not self.server.delegates.binlog_transmit.is_empty("after_send_event")
            errorlog.log(
                _log,
                logging.INFO,
                f"Start binlog_dump to source_thread_id({self.connection.thread_id}) "
                f"replica_server({self.request.server_id}), pos({self.file}, "
                f"{self.position})",
                code=10179,
            )
            self._send_files(dump)
        except DumpEnded:
            pass
        except MySQLError as exc:
            self._send_error(exc)
        except (OSError, ConnectionError):
            pass
        finally:
            if dump is not None:
                self.server.delegates.binlog_transmit.transmit_stop(dump)
            thread.close()
            session.command = "Sleep"
            session.state = ""

    def _state(self, state: str) -> None:
        self.session.state = state
        self.thread.set_state(state)

    def _send_error(self, error: MySQLError) -> None:
        try:
            self.connection.channel.write(
                rsp.err_packet(error.errno, error.sqlstate, error.message)
            )
        except OSError:
            pass

    # -------------------------------------------------------- the request
    def _user_var(self, name: str) -> str | None:
        try:
            return SessionUserVariables(self.session).get_user_var_str(name)
        except UserVariableNotFound:
            return None

    def _heartbeat_period(self) -> float:
        try:
            value = SessionUserVariables(self.session).get_user_var_int("master_heartbeat_period")
        except UserVariableNotFound:
            value = None
        return (value or 0) / 1e9

    def _check_replica_checksum(self) -> None:
        announced = self._user_var("master_binlog_checksum")
        if self.checksum and announced is None:
            name = self.request.file
            raise fatal(
                "Replica can not handle replication events with the checksum that "
                f"source is configured to log; the first event '{name}' at "
                f"{self.request.position}, the last event read from './{name}' at 4, "
                f"the last byte read from './{name}' at 4."
            )

    def _start_position(self) -> tuple[str, int]:
        names = self.binlog.index.names()
        if self.request.gtids is not None:
            return self._gtid_start(names)
        name = self.request.file or (names[0] if names else "")
        if name not in names:
            raise fatal("Could not find first log file name in binary log index file")
        position = self.request.position
        if position < 4:
            raise fatal("Client requested source to start replication from position < 4")
        path = self.binlog.directory / name
        size = path.stat().st_size
        if position > size:
            raise fatal("Client requested source to start replication from position > file size")
        if position > 4 and not self._is_event_boundary(name, position):
            raise fatal(
                f"Client requested source to start replication from impossible "
                f"position; the first event '{name}' at {position}, the last event "
                f"read from './{name}' at 4, the last byte read from './{name}' at 4."
            )
        return name, position

    def _is_event_boundary(self, name: str, position: int) -> bool:
        try:
            for entry in read_events(self.binlog.directory / name, check_log_pos=False):
                if entry.end == position:
                    return True
                if entry.end > position:
                    return False
        except LogError:
            return False
        return False

    def _gtid_start(self, names: list[str]) -> tuple[str, int]:
        wanted = self.request.gtids
        assert wanted is not None
        purged = self.server.gtid_purged()
        if not purged.is_subset(wanted):
            missing = purged.difference(wanted)
            raise fatal(
                "Cannot replicate because the source purged required binary logs. "
                "Replicate the missing transactions from elsewhere, or provision a "
                "new replica from backup. Consider increasing the source's binary "
                "log expiration period. The GTID set sent by the replica is "
                f"'{wanted}', and the missing transactions are '{missing}'"
            )
        own = GtidSet()
        logged = self.binlog.gtids_logged()
        sid = self.server.server_uuid
        for start, end in wanted.intervals(sid):
            own.add_interval(sid, start, end)
        if not own.is_subset(logged):
            raise fatal(
                "Cannot replicate because the source has fewer transactions than "
                "the replica: the replica has GTIDs of the source's server_uuid that "
                "the source never logged"
            )
        for name in reversed(names):
            previous = previous_gtids(self.binlog.directory / name, check_log_pos=False)
            if previous is not None and previous.is_subset(wanted):
                return name, 4
        if not names:
            raise fatal("Could not find first log file name in binary log index file")
        return names[0], 4

    # ------------------------------------------------------------ sending
    def _send_files(self, dump: DumpObservers) -> None:
        first = True
        while True:
            start = self.position if first else 4
            self._send_file(dump, self.file, start)
            first = False
            self._state(STATE_SWITCHING)
            self.file = self._next_file(dump, self.file)
            self.position = 4

    def _next_file(self, dump: DumpObservers, name: str) -> str:
        names = self.binlog.index.names()
        if name not in names:
            raise fatal(
                f"could not find next log; the binary log '{name}' was purged or "
                f"reset while the dump was reading it"
            )
        index = names.index(name)
        while index + 1 >= len(names):
            self._idle_wait(dump, self.binlog.end)
            names = self.binlog.index.names()
        return names[index + 1]

    def _open(self, name: str) -> LogTail:
        try:
            return LogTail(self.binlog.directory / name, 4)
        except FileNotFoundError as exc:
            raise fatal(f"could not open log file '{name}': it was purged or reset") from exc

    def _send_file(self, dump: DumpObservers, name: str, start: int) -> None:
        """Send ``name`` from ``start``; returns once the file is finished."""
        with self._open(name) as tail:
            self._send_fake_rotate(dump, name, start)
            fd_raw = tail.read_one(self._limit(name, tail))
            if fd_raw is None or fd_raw[4] != FORMAT_DESCRIPTION_EVENT:
                raise fatal(f"binary log '{name}' does not start with a FORMAT_DESCRIPTION event")
            self.checksum = event_checksum_alg(fd_raw) == 1
            log_pos = 0 if start > 4 else int.from_bytes(fd_raw[13:17], "little")
            self._send(dump, artificial(fd_raw, log_pos=log_pos, checksum=True), name, log_pos)
            tail.position = max(start, tail.position)
            self._flush()
            while True:
                limit = self._limit(name, tail)
                events = tail.read(limit)
                if events:
                    self._state(STATE_SENDING)
                    if self._send_batch(dump, name, events):
                        return
                    continue
                if self.binlog.end.file != name and tail.position >= tail.size():
                    return  # finished without a ROTATE (the server stopped): next file
                if (
                    self.request.flags & BinlogDumpFlags.BINLOG_DUMP_NON_BLOCK
                    or self.request.server_id == 0
                ):
                    self.connection.channel.write(rsp.eof_packet())
                    raise DumpEnded()
                self._state(STATE_IDLE)
                self._idle_wait(dump, self.binlog.end)

    def _limit(self, name: str, tail: LogTail) -> int:
        end = self.binlog.end
        return end.pos if end.file == name else tail.size()

    def _send_batch(self, dump: DumpObservers, name: str, events: list[tuple[int, bytes]]) -> bool:
        """Send ``events``; True when a ROTATE ended the file."""
        rotated = False
        for _, raw in events:
            log_pos = int.from_bytes(raw[13:17], "little")
            if self.request.gtids is not None and self._skip(raw):
                self.server.delegates.binlog_transmit.after_send_event(dump, b"", name, log_pos)
                self.position = log_pos
                continue
            self._send(dump, raw, name, log_pos)
            self.position = log_pos
            if raw[4] == QUERY_EVENT and self.server.crash.armed:
                self._fault(raw)
            if raw[4] == ROTATE_EVENT:
                rotated = True
                break
        self._flush()
        return rotated

    def _fault(self, raw: bytes) -> None:
        """The ``dump_cut_mid_transaction`` fault point (see rpl.core.debug)."""
        _, event = decode_event(raw, checksum=self.checksum)
        if (
            isinstance(event, QueryEvent)
            and event.query == "BEGIN"
            and self.server.crash.fire_once("dump_cut_mid_transaction")
        ):
            self._flush()
            errorlog.log(
                _log,
                logging.WARNING,
                "Fault point dump_cut_mid_transaction: dropping the replica's connection",
                code=10000,
            )
            raise DumpEnded()

    def _skip(self, raw: bytes) -> bool:
        """In a GTID dump: whether ``raw`` belongs to a transaction the replica has."""
        wanted = self.request.gtids
        assert wanted is not None
        if raw[4] == GTID_LOG_EVENT:
            self._skipping = event_gtid(raw) in wanted
            self._tracker = TransactionTracker()
            self._tracker.feed(GTID_LOG_EVENT)
            return self._skipping
        if not self._skipping:
            return False
        header, event = decode_event(raw, checksum=self.checksum)
        if self._tracker.ends_group(header, event):
            self._skipping = False
        return True

    def _send_fake_rotate(self, dump: DumpObservers, name: str, position: int) -> None:
        raw = encode_event(
            RotateEvent(position, name),
            server_id=self.server.server_id,
            timestamp=0,
            log_pos=0,
            flags=LOG_EVENT_ARTIFICIAL_F,
            checksum=self.checksum,
        )
        self._send(dump, raw, name, 0)

    def _send(self, dump: DumpObservers, raw: bytes, name: str, log_pos: int) -> None:
        transmit = self.server.delegates.binlog_transmit
        try:
            packet = transmit.event_packet(dump, raw, name, log_pos)
        except HookError as exc:
            raise fatal(exc.message) from exc
        self.connection.channel.queue(packet)
        if self._flush_each:
            self._flush()
            try:
                transmit.after_send_event(dump, raw)
            except HookError as exc:
                raise fatal(exc.message) from exc
        self._last_sent = time.monotonic()

    def _flush(self) -> None:
        try:
            self.connection.channel.flush()
        except OSError as exc:
            raise DumpEnded() from exc

    # ------------------------------------------------------------- idling
    def _idle_wait(self, dump: DumpObservers, end: object) -> None:
        """Wait for the binlog to grow; heartbeat when due; end the dump if asked to."""
        timeout = IDLE_CHECK
        if self.heartbeat:
            timeout = max(0.001, min(timeout, self._last_sent + self.heartbeat - time.monotonic()))
        grew = self.binlog.wait_for_update(end, timeout) != end  # type: ignore[arg-type]
        if self.session.killed or self.server.stopping or self.net.peer_closed:
            raise DumpEnded()
        if self.heartbeat and time.monotonic() - self._last_sent >= self.heartbeat:
            self._send_heartbeat(dump)
        elif not grew and self._replica_gone():  # a busy dump learns it from its sends
            raise DumpEnded()

    def _send_heartbeat(self, dump: DumpObservers) -> None:
        """A HEARTBEAT event, with the headers the dump's observers reserve (as every
        packet of the dump: a semisync replica expects its header on each), but no
        ``before_send_event`` / ``after_send_event``: a heartbeat is no binlog event.
        """
        raw = encode_event(
            HeartbeatEvent(self.file),
            server_id=self.server.server_id,
            timestamp=0,
            log_pos=self.position,
            flags=LOG_EVENT_ARTIFICIAL_F,
            checksum=self.checksum,
        )
        try:
            packet = self.server.delegates.binlog_transmit.new_packet(dump, raw)
        except HookError as exc:
            raise fatal(exc.message) from exc
        self.connection.channel.queue(packet.data)
        self._flush()
        self._last_sent = time.monotonic()

    def _replica_gone(self) -> bool:
        """Whether the replica closed the connection or sent COM_QUIT (its client library
        does as it closes). Only peeks: a plugin reading ACKs here loses nothing.
        """
        sock = self.connection.sock
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            if not readable:
                return False
            waiting = sock.recv(len(_COM_QUIT_PACKET), socket.MSG_PEEK | socket.MSG_DONTWAIT)
            return waiting in (b"", _COM_QUIT_PACKET)
        except BlockingIOError:
            return False
        except OSError as exc:
            return exc.errno != errno.EAGAIN
