"""Applier-only channels a plugin feeds (``rpl.observers.ApplierChannel``), and the
receiver channels a plugin drives (``rpl.observers.ReceiverChannel``:
:class:`PluginReceiverChannel`, at the end).

Group Replication hands the server each transaction the group certified; the server
applies it through a named channel (``group_replication_applier``), as MySQL's plugin
queues into that channel's relay log and lets the server's applier thread run it.

What holds:

* Transactions apply one at a time in the order queued, each through
  :func:`~rpl.core.replication.relay_transaction.apply_transaction`, the replica
  applier's own path: the transaction hooks (``thread_kind`` PLUGIN_APPLIER, the
  channel's name), the binary log with the GTID it was queued with, ``gtid_executed``.
* A transaction whose GTID is already executed is skipped.
* A failure stops the applier; the failed transaction stays first in the queue, so a
  restart tries it again. ``last_error`` and the error log say why.
* The queue lives in memory: a restarted server's channel is empty (the plugin recovers
  what it missed from its group). There is no relay log file.
"""

from __future__ import annotations

import collections
import logging
import struct
import threading
import time
from collections.abc import Mapping

from rpl.core import errorlog
from rpl.core.binlog.events import (
    GTID_LOG_EVENT,
    EventError,
    ViewChangeEvent,
    checked_body,
    default_status_vars,
    encode_event,
    encode_gtid,
    encode_query,
    unpack_header,
)
from rpl.core.binlog.events.header import HEADER_LEN
from rpl.core.binlog.gtid import Gtid, GtidSet
from rpl.core.errors import (
    ER_BAD_SLAVE,
    ER_MALFORMED_GTID_SET_SPECIFICATION,
    ER_SLAVE_CHANNEL_IO_THREAD_MUST_STOP,
    ER_SLAVE_MUST_STOP,
    ER_SLAVE_SQL_THREAD_MUST_STOP,
    MySQLError,
)
from rpl.core.execution.session import ServerContext, Session
from rpl.core.replication.applier import STATE_APPLYING, STATE_IDLE
from rpl.core.replication.channel import ReplicaChannel, ReplicaChannels
from rpl.core.replication.relay_transaction import RelayTransaction, apply_transaction
from rpl.core.threads import next_thread_id
from rpl.observers import QueryError, ThreadKind

_log = errorlog.logger("applier")


def relay_transaction(
    gtid: Gtid, events: bytes, *, server_id: int, timestamp_us: int, checksum: bool
) -> RelayTransaction:
    """``events`` (a transaction's body without its GTID event, CRC32 checksums iff
    ``checksum``) as the applier takes it, opened by a GTID event for ``gtid``;
    ValueError if the events do not parse.
    """
    seconds = timestamp_us // 1_000_000
    opening = encode_gtid(
        gtid.sid,
        gtid.gno,
        last_committed=0,
        sequence_number=1,
        immediate_commit_timestamp=timestamp_us,
        original_commit_timestamp=timestamp_us,
        rest_length=len(events),
        server_id=server_id,
        timestamp=seconds,
        checksum=False,
    )
    transaction = RelayTransaction(
        bytes(opening[HEADER_LEN:]), server_id, timestamp_us // 1_000_000
    )
    at = 0
    try:
        while at < len(events):
            _, code, _, size, log_pos, _ = unpack_header(events, at)
            if size < HEADER_LEN or at + size > len(events) or code == GTID_LOG_EVENT:
                raise EventError(f"bad event at byte {at} of {len(events)}")
            transaction.add(
                code, checked_body(events[at : at + size], code, size, checksum=checksum), log_pos
            )
            at += size
    except (EventError, struct.error, IndexError) as exc:
        raise ValueError(f"the transaction's events do not parse: {exc}") from exc
    if not transaction.steps:
        raise ValueError("the transaction has no events")
    return transaction


def view_change_events(
    view_id: str, certification_info: Mapping[str, str], *, server_id: int, timestamp: int
) -> bytes:
    """A view change's transaction body as MySQL logs it: QUERY BEGIN, VIEW_CHANGE (the
    certification info in it), QUERY COMMIT, without CRCs. ValueError for a view id
    that is empty or longer than 39 bytes.
    """
    event = ViewChangeEvent(
        view_id, 0, tuple((k.encode(), v.encode()) for k, v in certification_info.items())
    )
    status = default_status_vars()

    def query(text: str) -> bytearray:
        return encode_query(
            0,
            "",
            text,
            status_vars=status,
            server_id=server_id,
            timestamp=timestamp,
            checksum=False,
        )

    middle = encode_event(event, server_id=server_id, timestamp=timestamp, checksum=False)
    return bytes(query("BEGIN") + middle + query("COMMIT"))


class PluginApplierChannel:
    """One applier-only channel (implements ``rpl.observers.ApplierChannel``)."""

    def __init__(self, server: ServerContext, name: str) -> None:
        self.server = server
        self._name = name
        self._queue: collections.deque[RelayTransaction] = collections.deque()
        self._lock = threading.Condition()
        self._received = GtidSet()
        self._thread: threading.Thread | None = None
        self._stop = False
        self._last_error: tuple[int, str] = (0, "")
        self.thread_id = 0
        self.state = ""
        self.applied = 0
        self.high_priority = False
        """Whether its transactions kill the local lock holders they wait for (read at
        each transaction)."""

    @property
    def name(self) -> str:
        """The channel's name."""
        return self._name

    def queue(
        self, gtid: str, events: bytes, *, server_id: int, timestamp_us: int, checksum: bool
    ) -> None:
        """Queue one transaction (see ``rpl.observers.ApplierChannel.queue``)."""
        parsed = Gtid.parse(gtid)
        transaction = relay_transaction(
            parsed, events, server_id=server_id, timestamp_us=timestamp_us, checksum=checksum
        )
        with self._lock:
            self._queue.append(transaction)
            self._received.add(parsed.sid, parsed.gno)
            self._lock.notify_all()

    def queue_view_change(
        self, gtid: str, view_id: str, certification_info: Mapping[str, str]
    ) -> None:
        """Queue a view change (see ``rpl.observers.ApplierChannel.queue_view_change``)."""
        now_us = time.time_ns() // 1000
        server_id = self.server.server_id
        events = view_change_events(
            view_id, certification_info, server_id=server_id, timestamp=now_us // 1_000_000
        )
        self.queue(gtid, events, server_id=server_id, timestamp_us=now_us, checksum=False)

    def start(self) -> None:
        """Start the applier thread unless it runs."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop = False
            self._last_error = (0, "")
            self.thread_id = next_thread_id()
            self._thread = threading.Thread(target=self._run, name=f"rpl-{self._name}", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the applier after its current transaction; wait for it."""
        with self._lock:
            self._stop = True
            self._lock.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    @property
    def running(self) -> bool:
        """Whether the applier thread runs."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def received_gtid_set(self) -> str:
        """Every GTID queued since the channel was made."""
        with self._lock:
            return str(self._received)

    def queue_size(self) -> int:
        """Transactions queued and not applied yet."""
        with self._lock:
            return len(self._queue)

    @property
    def last_error(self) -> tuple[int, str]:
        """What stopped the applier last."""
        return self._last_error

    def close(self) -> None:
        """Stop and drop the queue."""
        self.stop()
        with self._lock:
            self._queue.clear()

    # ------------------------------------------------------------------ thread
    def _next(self) -> RelayTransaction | None:
        """The first queued transaction, waiting for one; None once asked to stop."""
        with self._lock:
            while not self._queue and not self._stop:
                self.state = STATE_IDLE
                self._lock.wait(1.0)
            return None if self._stop else self._queue[0]

    def _run(self) -> None:
        server = self.server
        errorlog.set_thread_id(self.thread_id)
        registered = server.threads.register_thread("thread/sql/replica_sql")
        session = Session(server, None, "", self.thread_id)
        session.thread_kind = ThreadKind.PLUGIN_APPLIER
        session.channel_name = self._name
        session.command = "Connect"
        server.add_session(session, None)
        errorlog.log(
            _log,
            logging.INFO,
            f"Replica SQL thread for channel '{self._name}' initialized",
            code=10686,
        )
        try:
            while (transaction := self._next()) is not None:
                self._apply(session, transaction)
        except MySQLError as exc:
            self._last_error = (exc.errno, exc.message)
            errorlog.log(
                _log,
                logging.ERROR,
                f"Replica SQL for channel '{self._name}': {exc.message}, "
                f"Error_code: MY-{exc.errno:06d}",
                code=10584,
            )
        finally:
            if session.trx is not None:
                session.rollback()
            server.remove_session(session)
            registered.close()
            self.state = ""
            errorlog.log(
                _log,
                logging.INFO,
                f"Replica SQL thread for channel '{self._name}' exiting",
                code=10689,
            )

    def _apply(self, session: Session, transaction: RelayTransaction) -> None:
        """Apply the queue's first transaction, then take it off the queue."""
        self.server.crash.pause("pause_plugin_applier")
        if transaction.gtid not in self.server.binlog.gtid_executed:
            self.state = session.state = STATE_APPLYING
            session.high_priority = self.high_priority
            retries = self.server.variables.global_int("replica_transaction_retries")
            apply_transaction(session, transaction, retries, lambda: self._stop)
            self.applied += 1
        with self._lock:
            self._queue.popleft()
        session.state = ""


class PluginChannels:
    """The applier-only channels plugins made (``rpl.observers.ChannelService``)."""

    def __init__(self, server: ServerContext) -> None:
        self._server = server
        self._channels: dict[str, PluginApplierChannel] = {}
        self._lock = threading.Lock()

    def applier_channel(self, name: str) -> PluginApplierChannel:
        """The channel ``name``, made if new; ValueError for ''."""
        if not name:
            raise ValueError("'' is the asynchronous replica's channel")
        with self._lock:
            channel = self._channels.get(name)
            if channel is None:
                channel = self._channels[name] = PluginApplierChannel(self._server, name)
            return channel

    def all(self) -> list[PluginApplierChannel]:
        """Every channel, by name."""
        with self._lock:
            return [self._channels[n] for n in sorted(self._channels)]

    def remove(self, name: str) -> None:
        """Close and forget channel ``name`` (if it exists)."""
        with self._lock:
            channel = self._channels.pop(name, None)
        if channel is not None:
            channel.close()


def _query_error(error: MySQLError) -> QueryError:
    return QueryError(error.errno, error.sqlstate, error.message)


class PluginReceiverChannel:
    """A receiver channel a plugin drives (implements ``rpl.observers.ReceiverChannel``):
    a view of channel ``name`` of the server's :class:`ReplicaChannels`, looked up at each
    call (so it stays valid across :meth:`reset` and :meth:`configure`), doing what the
    statements on the channel do (CHANGE MASTER, START SLAVE UNTIL, STOP SLAVE, RESET
    SLAVE ALL) without their checks for users (Group Replication's names are allowed).
    """

    POLL = 0.05
    """Seconds between two looks at the threads in :meth:`wait_until_applier_stops`."""

    def __init__(self, channels: ReplicaChannels, name: str) -> None:
        self._channels = channels
        self._name = name.lower()

    @property
    def name(self) -> str:
        """The channel's name."""
        return self._name

    def _channel(self) -> ReplicaChannel | None:
        return self._channels.get(self._name)

    def configure(
        self, *, host: str, port: int, user: str, password: str, auto_position: bool = True
    ) -> None:
        """CHANGE MASTER TO host, port, user, password, auto-position on the channel."""
        if not host.strip() or not 0 < port <= 65535:
            raise ValueError(f"bad source address {host!r}:{port}")
        channel = self._channels.create(self._name)
        with channel.lock:
            if channel.io_running:
                raise _query_error(MySQLError.of(ER_SLAVE_CHANNEL_IO_THREAD_MUST_STOP, self._name))
            if channel.sql_running:
                raise _query_error(MySQLError.of(ER_SLAVE_SQL_THREAD_MUST_STOP))
            info = channel.master_info
            info.host, info.port, info.user, info.password = host, port, user, password
            info.auto_position = auto_position
            info.log_file, info.log_pos = "", 4
            channel.purge_relay_logs()
            channel.save_master_info()
            channel.save_relay_log_info()

    def start(self, *, until_sql_after_gtids: str | None = None) -> None:
        """START SLAVE [UNTIL SQL_AFTER_GTIDS] on the channel."""
        until = None
        if until_sql_after_gtids is not None:
            try:
                until = GtidSet.parse(until_sql_after_gtids)
            except ValueError:
                raise _query_error(
                    MySQLError.of(ER_MALFORMED_GTID_SET_SPECIFICATION, until_sql_after_gtids)
                ) from None
        channel = self._channel()
        if channel is None or not channel.master_info.configured:
            raise _query_error(MySQLError.of(ER_BAD_SLAVE))
        with channel.lock:
            if not channel.sql_running:
                channel.start_sql(until)
            if not channel.io_running:
                channel.start_io()

    def wait_until_applier_stops(self, timeout: float) -> bool:
        """Wait for the applier to stop, or the receiver to stop with an error."""
        deadline = time.monotonic() + timeout
        while True:
            channel = self._channel()
            if (
                channel is None
                or not channel.sql_running
                or (not channel.io_running and channel.last_io_error[0])
            ):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(self.POLL, left))

    def stop(self) -> None:
        """STOP SLAVE on the channel."""
        channel = self._channel()
        if channel is None:
            return
        with channel.lock:
            channel.stop_io()
            channel.stop_sql()

    def reset(self) -> None:
        """RESET SLAVE ALL on the channel."""
        channel = self._channel()
        if channel is None:
            return
        with self._channels.lock, channel.lock:
            if channel.io_running or channel.sql_running:
                raise _query_error(MySQLError.of(ER_SLAVE_MUST_STOP))
            channel.reset(True)
            self._channels.remove(self._name)

    @property
    def io_running(self) -> bool:
        """Whether the receiver runs."""
        channel = self._channel()
        return channel is not None and channel.io_running

    @property
    def sql_running(self) -> bool:
        """Whether the applier runs."""
        channel = self._channel()
        return channel is not None and channel.sql_running

    def received_gtid_set(self) -> str:
        """Retrieved_Gtid_Set."""
        channel = self._channel()
        return str(channel.retrieved_gtids) if channel is not None else ""

    @property
    def last_io_error(self) -> tuple[int, str]:
        """Last_IO_Errno, Last_IO_Error."""
        channel = self._channel()
        return channel.last_io_error[:2] if channel is not None else (0, "")

    @property
    def last_sql_error(self) -> tuple[int, str]:
        """Last_SQL_Errno, Last_SQL_Error."""
        channel = self._channel()
        return channel.last_sql_error[:2] if channel is not None else (0, "")
