"""The receiver (IO thread): source -> relay log.

One thread per running receiver. It connects with PyMySQL (authentication and the
setup statements go through a real client library), then speaks the binlog protocol
on that connection. In order, as MySQL's IO thread:

1. ``thread_start``; a new relay log file.
2. Connect; read the source's server_id and server_uuid (equal server ids stop the
   receiver: replication would loop); ``SET @master_heartbeat_period``,
   ``@master_binlog_checksum``, ``@slave_uuid``; COM_REGISTER_SLAVE.
3. ``before_request_transmit``; COM_BINLOG_DUMP from the last transaction boundary
   received, or COM_BINLOG_DUMP_GTID with executed + retrieved GTIDs (auto-position).
4. Per packet: ``after_read_event`` (may strip a plugin's header), verify the CRC,
   write the event to the relay log (``sync_relay_log``), advance the position,
   ``after_queue_event``. Once no whole packet is left among the bytes received (a
   burst, one commit group of the source, is read; or one read of a long catch-up
   stream), the applier is shown the whole transactions written.
5. A lost connection: wait MASTER_CONNECT_RETRY seconds and reconnect, at most
   MASTER_RETRY_COUNT times, resuming at the last transaction boundary received (the
   applier discards the partial copy), so nothing is missing or duplicated.
6. ``thread_stop`` whatever the reason it ends.

Events the source sent that originated on this server (same server_id) are not
relayed (loop prevention, ``replicate_same_server_id`` = 0), except on Group
Replication's channels (``ChannelState.replicate_same_server_id``).
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from rpl.core import errorlog
from rpl.core.binlog.events import (
    CHECKSUM_LEN,
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    HEADER_LEN,
    HEARTBEAT_LOG_EVENT,
    PREVIOUS_GTIDS_LOG_EVENT,
    QUERY_EVENT,
    ROTATE_EVENT,
    STOP_EVENT,
    EventError,
    RotateEvent,
    convert_checksum,
    decode_event,
    event_checksum_alg,
    event_gtid,
    query_layout,
    unpack_header,
    verify_checksum,
)
from rpl.core.binlog.gtid import Gtid
from rpl.core.binlog.logfile import TransactionTracker
from rpl.core.delegates import HookError
from rpl.core.errors import (
    ER_SERVER_MASTER_FATAL_ERROR_READING_BINLOG,
    ER_SLAVE_FATAL_ERROR,
    ER_SLAVE_MASTER_COM_FAILURE,
    ER_SLAVE_RELAY_LOG_WRITE_FAILURE,
    MySQLError,
)
from rpl.core.replication.relaylog import SourcePosition
from rpl.core.replication.services import SourceLink, nanoseconds
from rpl.core.replication.worker import ChannelThread
from rpl.observers import BinlogDumpFlags, BinlogRelayFlags, NetError, RelayIOParam

if TYPE_CHECKING:
    from rpl.core.replication.channel_state import ChannelState

_log = errorlog.logger("receiver")
COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15
COM_BINLOG_DUMP_GTID = 0x1E
NETWORK_ERRORS = frozenset(
    (2002, 2003, 2006, 2013, 2026, 2055, 1040, 1053, 1158, 1159, 1160, 1161, 1129, 1130)
)
"""Client errors after which the receiver reconnects instead of stopping."""

STATE_CONNECTING = "Connecting to source"
STATE_WAITING = "Waiting for source to send event"
STATE_QUEUEING = "Queueing source event to the relay log"
STATE_RECONNECT_WAIT = "Waiting to reconnect after a failed source event read"
STATE_REGISTERING = "Registering replica on source"
STATE_REQUESTING = "Requesting binlog dump"


_FILE_EVENTS = frozenset(
    (ROTATE_EVENT, FORMAT_DESCRIPTION_EVENT, PREVIOUS_GTIDS_LOG_EVENT, STOP_EVENT)
)
"""Events outside any transaction: after one of them the receiver may resume."""


class ReceiverStopped(Exception):
    """STOP SLAVE (or shutdown) asked the receiver to end."""


class ConnectionLost(Exception):
    """The connection failed in a way worth a reconnect; carries the client error."""

    def __init__(self, errno: int, message: str) -> None:
        super().__init__(message)
        self.errno = errno
        self.message = message


class Receiver(ChannelThread):
    """The IO thread of one channel."""

    thread_name = "rpl-replica-io"

    def __init__(self, channel: ChannelState) -> None:
        super().__init__(channel)
        self.connection: Any = None
        self.link: SourceLink | None = None
        self.source_checksum = True
        self._tracker = TransactionTracker()
        self._pending_gtid: Gtid | None = None
        self._in_transaction = False
        self._since_save = 0
        self._event_param: RelayIOParam | None = None

    def interrupt(self) -> None:
        """Break a blocking read from the source."""
        connection = self.connection
        if connection is not None and getattr(connection, "_sock", None) is not None:
            try:
                connection._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def param(self, with_link: bool = True) -> RelayIOParam:
        """The hook parameter as of now."""
        info = self.channel.master_info
        return RelayIOParam(
            self.server.server_id,
            self.channel.io_thread_id,
            self.channel.name,
            info.host,
            info.port,
            info.user,
            info.log_file,
            info.log_pos,
            self.link if with_link else None,
        )

    def event_param(self) -> RelayIOParam:
        """:meth:`param` for the per-event hooks while connected. One event's
        ``after_queue_event`` and the next one's ``after_read_event`` are at the same
        position, so one (immutable) param serves both: one is built per event, not two.
        """
        info = self.channel.master_info
        last = self._event_param
        if (
            last is None
            or last.master_log_pos != info.log_pos
            or last.master_log_name != info.log_file
        ):
            last = self._event_param = self.param()
        return last

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        """The receiver's body."""
        channel = self.channel
        errorlog.set_thread_id(channel.io_thread_id)
        registered = self.server.threads.register_thread("thread/sql/replica_io")
        self.registered = registered
        self.set_state(STATE_CONNECTING)
        relay = self.server.delegates.binlog_relay_io
        try:
            relay.thread_start(self.param(with_link=False))
            channel.relay_log.open_new(channel.retrieved_gtids.copy())
            self._connect_loop()
        except ReceiverStopped:
            pass
        except HookError as hook_error:
            channel.set_io_error(hook_error.errno, hook_error.message)
        except MySQLError as exc:
            channel.set_io_error(exc.errno, exc.message)
        except Exception as bug:  # noqa: BLE001 - the thread reports, the server goes on
            errorlog.log(
                _log, logging.ERROR, f"Replica I/O thread failed: {bug!r}", code=13117, exc_info=bug
            )
            channel.set_io_error(ER_SLAVE_FATAL_ERROR.errno, ER_SLAVE_FATAL_ERROR.format(repr(bug)))
        finally:
            self._close_connection()
            channel.relay_log.close()
            channel.save_master_info()
            relay.thread_stop(self.param(with_link=False))
            self.exited(
                registered,
                f"Replica I/O thread exiting for channel '{channel.name}', read up to "
                f"log '{channel.master_info.log_file or 'FIRST'}', position "
                f"{channel.master_info.log_pos}",
            )
            channel.io_stopped()

    def _connect_loop(self) -> None:
        retries = 0
        reading = False
        while True:
            if self.stop_requested.is_set():
                raise ReceiverStopped()
            try:
                self._connect()
                retries = 0
                reading = True
                self._read_loop()
            except ConnectionLost as lost:
                self._close_connection()
                if self.stop_requested.is_set():
                    raise ReceiverStopped() from None
                retries += 1
                info = self.channel.master_info
                if not reading:
                    self.channel.set_io_error(
                        lost.errno,
                        f"error connecting to source '{info.user}@{info.host}:"
                        f"{info.port}' - retry-time: {info.connect_retry} retries: {retries} "
                        f"message: {lost.message}",
                        log=lost.errno != self.channel.last_io_error[0],
                    )
                else:
                    errorlog.log(
                        _log,
                        logging.WARNING,
                        f"Error reading packet from server for channel '{self.channel.name}': "
                        f"{lost.message} (server_errno={lost.errno})",
                        code=10996,
                    )
                if retries > info.retry_count:
                    raise MySQLError(
                        lost.errno, "HY000", self.channel.last_io_error[1] or lost.message
                    ) from None
                self.set_state(STATE_RECONNECT_WAIT if reading else STATE_CONNECTING)
                self.channel.io_connected = False
                if self.stop_requested.wait(
                    info.connect_retry if not reading or retries > 1 else 0
                ):
                    raise ReceiverStopped() from None
                reading = False

    # ------------------------------------------------------------ connect
    def _connect(self) -> None:
        import pymysql

        info = self.channel.master_info
        self.set_state(STATE_CONNECTING)
        timeout = self.server.variables.global_float("replica_net_timeout")
        try:
            self.connection = pymysql.connect(
                host=info.host,
                port=info.port,
                user=info.user,
                password=info.password,
                connect_timeout=min(timeout, 30),
                read_timeout=timeout,
                write_timeout=timeout,
                autocommit=True,
                charset="utf8mb4",
            )
        except pymysql.MySQLError as exc:
            raise self._lost(exc) from exc
        self.link = SourceLink(self.connection)
        try:
            self._check_source()
            self._prepare_dump()
            self._register()
            flags = BinlogDumpFlags.NONE
            if info.auto_position:
                flags |= BinlogDumpFlags.BINLOG_THROUGH_GTID
            self.server.delegates.binlog_relay_io.before_request_transmit(self.param(), flags)
            self._request_dump(flags)
        except pymysql.MySQLError as exc:
            raise self._lost(exc) from exc
        self.channel.io_connected = True
        self.channel.clear_io_error()
        errorlog.log(
            _log,
            logging.INFO,
            f"Replica I/O thread for channel '{self.channel.name}': connected to source "
            f"'{info.user}@{info.host}:{info.port}',replication started in log "
            f"'{info.log_file or 'FIRST'}' at position {info.log_pos}",
            code=10562,
        )

    def _lost(self, exc: Exception) -> Exception:
        return _failure(*_error_of(exc))

    def _query(self, sql: str) -> list[tuple[Any, ...]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())

    def _check_source(self) -> None:
        info = self.channel.master_info
        ((server_id, server_uuid),) = self._query("SELECT @@GLOBAL.server_id, @@GLOBAL.server_uuid")
        if int(server_id) == self.server.server_id:
            raise MySQLError.of(
                ER_SLAVE_FATAL_ERROR,
                "The replica I/O thread stops because source and replica "
                "have equal MySQL server ids; these ids must be different "
                "for replication to work (or the --replicate-same-server-id "
                "option must be used on replica but this does not always "
                "make sense; please check the manual before using it).",
            )
        if str(server_uuid) == self.server.server_uuid_text:
            raise MySQLError.of(
                ER_SLAVE_FATAL_ERROR,
                "The replica I/O thread stops because source and replica "
                "have equal MySQL server UUIDs; these UUIDs must be different "
                "for replication to work.",
            )
        info.master_server_id, info.master_uuid = int(server_id), str(server_uuid)

    def _prepare_dump(self) -> None:
        info = self.channel.master_info
        self._query(f"SET @master_heartbeat_period = {nanoseconds(info.heartbeat_period)}")
        self._query("SET @master_binlog_checksum = @@global.binlog_checksum")
        ((checksum,),) = self._query("SELECT @master_binlog_checksum")
        self.source_checksum = str(checksum).upper() == "CRC32"
        uuid_text = self.server.server_uuid_text
        self._query(f"SET @slave_uuid = '{uuid_text}', @replica_uuid = '{uuid_text}'")

    def _register(self) -> None:
        self.set_state(STATE_REGISTERING)
        host = str(self.server.variables.get_global("report_host") or "").encode()[:255]
        port = int(self.server.variables.get_global("report_port") or self.server.port)
        payload = (
            struct.pack("<I", self.server.server_id)
            + bytes((len(host),))
            + host
            + b"\x00\x00"
            + struct.pack("<HII", port & 0xFFFF, 0, 0)
        )
        import pymysql

        try:
            self.connection._execute_command(COM_REGISTER_SLAVE, payload)
            self.connection._read_packet()
        except pymysql.err.OperationalError as lost:
            code, message = _error_of(lost)
            if code in NETWORK_ERRORS or code >= 2000:
                raise
            raise MySQLError.of(
                ER_SLAVE_MASTER_COM_FAILURE, "COM_REGISTER_REPLICA", message, code
            ) from lost
        except pymysql.MySQLError as exc:
            code, message = _error_of(exc)
            raise MySQLError.of(
                ER_SLAVE_MASTER_COM_FAILURE, "COM_REGISTER_REPLICA", message, code
            ) from exc

    def _request_dump(self, flags: BinlogDumpFlags) -> None:
        self.set_state(STATE_REQUESTING)
        channel = self.channel
        info = channel.master_info
        if info.auto_position:
            gtids = self.server.binlog.gtids_logged().union(channel.retrieved_gtids)
            data = gtids.encode()
            name = b""
            payload = (
                struct.pack("<HII", int(flags), self.server.server_id, len(name))
                + name
                + struct.pack("<QI", 4, len(data))
                + data
            )
            command = COM_BINLOG_DUMP_GTID
        else:
            info.log_file, info.log_pos = channel.boundary
            name = info.log_file.encode()
            payload = struct.pack("<IHI", info.log_pos, int(flags), self.server.server_id) + name
            command = COM_BINLOG_DUMP
        self._tracker = TransactionTracker()
        self._pending_gtid = None
        self._in_transaction = False
        assert self.link is not None
        self.link.request_dump(command, payload)

    # --------------------------------------------------------------- read
    def _read_loop(self) -> None:
        try:
            self._read_events()
        finally:  # whatever ends the reading, the applier gets every whole transaction
            self.channel.relay_log.publish()

    def _read_events(self) -> None:
        relay = self.server.delegates.binlog_relay_io
        link = self.link
        assert link is not None
        relay_log = self.channel.relay_log
        self._event_param = None  # a new link
        while True:
            if self.stop_requested.is_set():
                raise ReceiverStopped()
            self.set_state(STATE_WAITING)
            try:
                payload = link.read()
            except NetError as lost:
                raise ConnectionLost(2013, f"Lost connection to source: {lost}") from lost
            if payload[:1] == b"\xff":
                raise source_error(payload)
            if payload[:1] == b"\xfe" and len(payload) < 9:
                raise ReceiverStopped()  # end of a non-blocking dump
            self.set_state(STATE_QUEUEING)
            event = payload[1:]
            if not relay.is_empty("after_read_event"):
                event = relay.after_read_event(self.event_param(), event)
            synced = self._queue(event)
            if not relay.is_empty("after_queue_event"):  # the position after this event
                flags = BinlogRelayFlags.BINLOG_RELAY_IS_SYNCED if synced else BinlogRelayFlags.NONE
                relay.after_queue_event(self.event_param(), event, flags)
            if self._in_transaction and self.server.crash.armed:
                self._fault(event)
            if not link.has_packet():  # what arrived is read: the applier may start on it
                relay_log.publish()

    def _fault(self, raw: bytes) -> None:
        """The ``stop_io_inside_transaction`` fault point (see rpl.core.debug): the
        thread ends as a STOP SLAVE IO_THREAD between two events would end it.
        """
        if (
            self._tracker.state == "inside"
            and not (raw[4] == QUERY_EVENT and self._statement(raw).startswith(b"BEGIN"))
            and self.server.crash.fire_once("stop_io_inside_transaction")
        ):
            errorlog.log(
                _log,
                logging.WARNING,
                "Fault point stop_io_inside_transaction: stopping the receiver",
                code=10000,
            )
            raise ReceiverStopped()

    def _queue(self, raw: bytes) -> bool:
        """Relay one event; True when the relay log was synced after it."""
        channel = self.channel
        info = channel.master_info
        if len(raw) < HEADER_LEN:
            raise self._corrupt(f"event header needs {HEADER_LEN} bytes, {len(raw)} arrived")
        _, code, server_id, event_size, log_pos, _ = unpack_header(raw, 0)
        if event_size != len(raw):
            raise self._corrupt(f"event_size {event_size} but {len(raw)} bytes arrived")
        has_crc = self.source_checksum or code == FORMAT_DESCRIPTION_EVENT
        if has_crc and not verify_checksum(raw):
            raise self._corrupt(f"CRC32 mismatch in an event of type {code}")
        if code == HEARTBEAT_LOG_EVENT:
            channel.last_heartbeat = time.time()
            channel.heartbeats += 1
            return False
        if code == FORMAT_DESCRIPTION_EVENT:
            self.source_checksum = event_checksum_alg(raw) == 1
        if code == ROTATE_EVENT:
            _, rotate = decode_event(raw, checksum=self.source_checksum)
            assert isinstance(rotate, RotateEvent)
            info.log_file, info.log_pos = rotate.next_file, rotate.position
        elif log_pos:
            info.log_pos = log_pos
        if not self._in_transaction and code in _FILE_EVENTS:
            channel.boundary = (info.log_file, info.log_pos)
        if code in (PREVIOUS_GTIDS_LOG_EVENT, STOP_EVENT) or (
            server_id == self.server.server_id
            and not channel.replicate_same_server_id
            and code != ROTATE_EVENT
            and code != FORMAT_DESCRIPTION_EVENT
        ):
            self._track(code, raw, write=False)
            return False
        converted = convert_checksum(raw, has_crc=has_crc, want_crc=channel.relay_log.checksum)
        try:
            synced = channel.relay_log.append(converted, publish=False)
        except OSError as os_error:
            raise _write_failure(os_error) from os_error
        if self._track(code, raw, write=True):
            synced = True
        if not self._in_transaction and self._write_relay_log():
            synced = True
        return synced

    def _write_relay_log(self) -> bool:
        """At a transaction boundary: write what the relay log keeps; True when synced.
        The applier sees it once the burst being read is published (:meth:`_read_loop`).
        """
        try:
            return self.channel.relay_log.write()
        except OSError as os_error:
            raise _write_failure(os_error) from os_error

    def _track(self, code: int, raw: bytes, write: bool) -> bool:
        """Follow transaction boundaries: Retrieved_Gtid_Set and the resume position. At
        the end of a relayed transaction, the relay log is written first (True when that
        synced it), then the master info is saved per sync_master_info.
        """
        if code == GTID_LOG_EVENT:
            try:
                self._pending_gtid = event_gtid(raw)
            except EventError as exc:
                raise self._corrupt(str(exc)) from exc
            self._in_transaction = True
            self._tracker.feed(code)
            return False
        if code in (
            ROTATE_EVENT,
            FORMAT_DESCRIPTION_EVENT,
            HEARTBEAT_LOG_EVENT,
            PREVIOUS_GTIDS_LOG_EVENT,
            STOP_EVENT,
        ):
            return False
        synced = False
        if self._tracker.feed(code, self._statement(raw) if code == QUERY_EVENT else b""):
            self._in_transaction = False
            synced = write and self._write_relay_log()
            channel = self.channel
            if self._pending_gtid is not None:
                if write:
                    channel.retrieved_gtids.add(self._pending_gtid.sid, self._pending_gtid.gno)
                self._pending_gtid = None
            info = channel.master_info
            channel.boundary = (info.log_file, info.log_pos)
            channel.relay_log.rotate_if_full(
                channel.retrieved_gtids.copy,
                SourcePosition(info.log_file, info.log_pos, info.master_server_id),
            )
            self._since_save += 1
            crash = self.server.crash
            if write:
                crash.hit("crash_after_relay_log_write_before_master_info")
            if self._since_save >= channel.sync_master_info():
                channel.save_master_info()
                self._since_save = 0
                crash.hit("crash_after_master_info_before_after_queue_event")
        return synced

    def _statement(self, raw: bytes) -> bytes:
        """A QUERY event's statement, found from the layout alone: the tracker needs its
        first word (BEGIN, COMMIT, a DDL), not a decoded event; EventError if the layout
        overruns the event.
        """
        end = len(raw) - (CHECKSUM_LEN if self.source_checksum else 0)
        _, _, _, db_at, db_len = query_layout(raw, HEADER_LEN, end)
        return raw[HEADER_LEN + db_at + db_len + 1 : end]

    def _corrupt(self, detail: str) -> MySQLError:
        return MySQLError.of(
            ER_SLAVE_RELAY_LOG_WRITE_FAILURE, f"could not queue event from source ({detail})"
        )

    def _close_connection(self) -> None:
        connection, self.connection, self.link = self.connection, None, None
        if connection is not None:
            try:
                connection.close()
            except Exception:  # noqa: BLE001 - closing a broken connection may fail
                pass


def _write_failure(os_error: OSError) -> MySQLError:
    return MySQLError.of(
        ER_SLAVE_RELAY_LOG_WRITE_FAILURE, f"could not queue event from source: {os_error}"
    )


def source_error(payload: bytes) -> Exception:
    """What the receiver raises for the ERR packet ``payload`` the source ended the dump
    with: 1236 (the source cannot send the binlog) stops it with
    ER_SERVER_MASTER_FATAL_ERROR_READING_BINLOG; any other code is taken as a client
    error would be (:func:`_failure`).
    """
    code = int.from_bytes(payload[1:3], "little")
    at = 9 if payload[3:4] == b"#" else 3
    message = payload[at:].decode("utf-8", "replace")
    if code == 1236 or code == ER_SERVER_MASTER_FATAL_ERROR_READING_BINLOG.errno:
        return MySQLError.of(ER_SERVER_MASTER_FATAL_ERROR_READING_BINLOG, 1236, message)
    return _failure(code, message)


def _failure(code: int, message: str) -> Exception:
    """A client error as the receiver takes it: a lost connection to reconnect after, or
    an error that stops it.
    """
    if code in NETWORK_ERRORS or code == 0 or code >= 2000:
        return ConnectionLost(code, message)
    return MySQLError(code, "HY000", message)


def _error_of(exc: Exception) -> tuple[int, str]:
    args: tuple[object, ...] = tuple(getattr(exc, "args", ()))
    if len(args) >= 2 and isinstance(args[0], int):
        return int(args[0]), str(args[1])
    return 2013, str(exc)
