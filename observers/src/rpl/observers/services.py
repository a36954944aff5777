"""Server services: what a plugin may ask of the server (WL#4398 part B and more).

Each service is a :class:`typing.Protocol`; the server implements it and hands
it to the plugin, either in a hook parameter (the NET services and user-variable
getters belong to one connection) or at plugin initialisation
(:class:`ServerServices`: variables, threads, error log). A plugin never imports
the server: these Protocols are everything it may rely on.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

import attrs

from rpl.observers.variables import StatusVariable, SystemVariable, SysVarValue


@runtime_checkable
class ServerNet(Protocol):
    """``thd_net_read/write/flush``: the source's side of a replica's dump connection.

    The dump thread writes event packets; a plugin may write its own packets and
    read the replica's replies (semisync ACKs). Payloads are whole MySQL packet
    payloads: the service adds and strips the 4-byte packet header and keeps
    the sequence ids. Writes and reads may come from different threads (the dump
    thread writes while an ACK receiver reads); two writers must not interleave.
    """

    def read(self, timeout: float | None = None) -> bytes:
        """Read one packet payload. Raises :class:`rpl.observers.NetError` when
        the connection fails or ``timeout`` seconds pass without a packet.

        The service may receive more than one payload at once and keep the rest for
        the next read, which then returns at once: a packet already received makes
        the descriptor no more readable to ``select``.
        """
        ...

    def write(self, payload: bytes) -> None:
        """Queue one packet. Raises :class:`rpl.observers.NetError` on failure."""
        ...

    def flush(self) -> None:
        """Send what was written. Raises :class:`rpl.observers.NetError` on failure."""
        ...

    def fileno(self) -> int:
        """The socket's descriptor, for polling several connections at once. Once
        ``select`` reports it readable, call ``read(timeout=0)`` until it times out:
        that takes every payload that has arrived, including ones the service
        received with an earlier read.
        """
        ...


@runtime_checkable
class SourceConnection(Protocol):
    """``mysql_net_read/write/flush`` plus queries: the replica's connection to its source."""

    def read(self, timeout: float | None = None) -> bytes:
        """Read one packet payload from the source (see :meth:`ServerNet.read`)."""
        ...

    def write(self, payload: bytes) -> None:
        """Queue one packet to the source, starting a new command sequence."""
        ...

    def flush(self) -> None:
        """Send what was written."""
        ...

    def query(self, statement: str) -> Sequence[Sequence[object]]:
        """Run a statement on the source and return its rows (empty for a
        statement without a result set). Raises :class:`rpl.observers.QueryError`
        with the source's error, or :class:`rpl.observers.NetError`. Only valid
        before the dump is requested (``before_request_transmit``).
        """
        ...


@runtime_checkable
class UserVariables(Protocol):
    """``get_user_var_int/real/str``: the user variables (``@name``) of one session.

    Each getter returns ``None`` for SQL NULL and raises
    :class:`rpl.observers.UserVariableNotFound` when the variable was never set.
    Values convert as MySQL converts them (``'1'`` is 1, ``1.6`` is 2 as an integer).
    """

    def get_user_var_int(self, name: str) -> int | None:
        """The variable as an integer."""
        ...

    def get_user_var_real(self, name: str) -> float | None:
        """The variable as a double."""
        ...

    def get_user_var_str(self, name: str, precision: int = 6) -> str | None:
        """The variable as a string; ``precision`` digits for a real value."""
        ...


@runtime_checkable
class SystemVariableHandle(Protocol):
    """A registered system variable; ``value`` is its current global value."""

    @property
    def name(self) -> str:
        """The variable's name."""
        ...

    @property
    def value(self) -> SysVarValue:
        """The current global value (bool, int, float, str or None by type)."""
        ...


@runtime_checkable
class VariableRegistry(Protocol):
    """System and status variable registration for one plugin.

    Names must start with the plugin's name (``rpl_semi_sync_master_timeout``,
    ``Rpl_semi_sync_master_status``), as MySQL requires of plugin variables.
    Everything a plugin registers appears in SHOW VARIABLES / SHOW STATUS while
    it is installed and disappears when it is uninstalled; the server removes it.
    """

    def register_system_variable(self, variable: SystemVariable) -> SystemVariableHandle:
        """Add a system variable. Its value starts from a matching startup
        option (``--rpl-semi-sync-master-timeout=500``) or its default.
        """
        ...

    def register_status_variable(self, variable: StatusVariable) -> None:
        """Add a status variable, read through its getter at each SHOW STATUS."""
        ...


class ThreadType(enum.Enum):
    """performance_schema.threads.TYPE."""

    FOREGROUND = "FOREGROUND"
    BACKGROUND = "BACKGROUND"


@runtime_checkable
class ThreadHandle(Protocol):
    """One registered thread, shown in performance_schema.threads."""

    @property
    def thread_id(self) -> int:
        """performance_schema THREAD_ID."""
        ...

    @property
    def name(self) -> str:
        """NAME, e.g. ``thread/semisync/Ack_receiver``."""
        ...

    def set_state(self, state: str | None) -> None:
        """Set PROCESSLIST_STATE (MySQL's thread state text, e.g.
        ``Waiting for semi-sync ACK from slave``).
        """
        ...

    def close(self) -> None:
        """Remove the thread from the registry (it is ending)."""
        ...


@runtime_checkable
class ThreadRegistry(Protocol):
    """Registration of a plugin's own threads for observability."""

    def register_thread(
        self, name: str, thread_type: ThreadType = ThreadType.BACKGROUND
    ) -> ThreadHandle:
        """Register the calling thread under ``name``; close the handle when it ends."""
        ...


@runtime_checkable
class ErrorLog(Protocol):
    """The server's error log (MySQL-style lines in the data directory)."""

    def error(self, message: str) -> None:
        """Log at [ERROR]."""
        ...

    def warning(self, message: str) -> None:
        """Log at [Warning]."""
        ...

    def note(self, message: str) -> None:
        """Log at [Note]."""
        ...


@runtime_checkable
class ServerControl(Protocol):
    """The server itself: who it is, what it has committed, and its write switch.

    Every method may be called from any thread, including from a hook that blocks
    (``begin``, ``before_commit``): none of them takes a lock a hook's caller holds.
    GTID sets are MySQL's text (``"uuid:1-5:7,uuid2:1-3"``); a malformed one raises
    ``ValueError``.
    """

    @property
    def server_uuid(self) -> str:
        """``@@server_uuid``."""
        ...

    @property
    def server_id(self) -> int:
        """``@@server_id``."""
        ...

    @property
    def host(self) -> str:
        """``@@hostname``: the address clients reach this server at."""
        ...

    @property
    def port(self) -> int:
        """``@@port``: the port clients connect to."""
        ...

    @property
    def version(self) -> str:
        """``@@version`` (``8.0.xx``-style: the MySQL version the server speaks)."""
        ...

    @property
    def binlog_checksum(self) -> bool:
        """Whether ``@@binlog_checksum`` is CRC32: then the events of
        ``TransParam.trx_cache`` end in a CRC32 each.
        """
        ...

    def gtid_executed(self) -> str:
        """``@@gtid_executed``: every transaction committed here, now."""
        ...

    def wait_for_gtid_set(self, gtid_set: str, timeout: float) -> bool:
        """Block until every GTID of ``gtid_set`` is committed here (in the
        binlog and visible to every session), or ``timeout`` seconds pass; whether
        they all were. An empty set returns True at once.
        """
        ...

    def thd_wait(self) -> AbstractContextManager[None]:
        """A context for a wait in a hook (MySQL's ``thd_wait_begin`` /
        ``thd_wait_end`` service): while the body blocks, the thread pool
        (``thread_handling=pool-of-threads``) lets another worker serve the other
        connections. Outside a pool worker it does nothing.
        """
        ...

    def set_super_read_only(self, on: bool) -> None:
        """Turn ``super_read_only`` (and with it ``read_only``) on or off, as
        ``SET GLOBAL super_read_only`` would: while on, every client's write
        fails with ER_OPTION_PREVENTS_STATEMENT (1290); appliers still write.
        """
        ...

    @property
    def super_read_only(self) -> bool:
        """``@@super_read_only``."""
        ...

    def execute(self, statement: str) -> Sequence[Sequence[object]]:
        """Run ``statement`` in an internal session of the server (no account: no
        privilege checks, not refused by ``super_read_only``, binlogged as any
        session's) and return its rows (empty for a statement without a result set).
        Raises :class:`rpl.observers.QueryError` with the MySQL error. (A receiver
        channel is driven through :class:`ReceiverChannel`, not statements.)
        Must not be called from a transaction hook.
        """
        ...


@runtime_checkable
class ApplierChannel(Protocol):
    """A named replication channel that has an applier and no receiver: the plugin
    queues whole transactions, the server applies them in queue order through its
    own commit path (transaction hooks with ``thread_kind`` PLUGIN_APPLIER, the
    binary log, ``gtid_executed``) with the GTID each was queued with.

    What holds: transactions apply one at a time, in the order queued; one whose GTID
    is already executed here is skipped; one that fails stops the channel's applier
    (``last_error`` says why; the error log has MySQL's "Replica SQL for channel"
    line) and it stays queued. What was queued and not yet applied is not durable:
    a restarted server's channel starts empty (Group Replication recovers it from
    the group).
    """

    @property
    def name(self) -> str:
        """The channel's name (``group_replication_applier``)."""
        ...

    def queue(
        self, gtid: str, events: bytes, *, server_id: int, timestamp_us: int, checksum: bool
    ) -> None:
        """Queue one transaction: ``events`` is its body as ``before_commit``'s
        ``TransParam.trx_cache`` holds it (QUERY BEGIN ... XID, or one DDL QUERY),
        without a GTID event; the server adds the GTID event for ``gtid``.
        ``server_id`` and ``timestamp_us`` are its origin's server id and
        original commit timestamp; ``checksum`` says whether its events end in a
        CRC32 (the origin's :attr:`ServerControl.binlog_checksum`). ``ValueError``
        if the events do not parse.
        """
        ...

    def queue_view_change(
        self, gtid: str, view_id: str, certification_info: Mapping[str, str]
    ) -> None:
        """Queue a view change as MySQL's Group Replication logs one: a transaction of
        its own GTID ``gtid`` whose body is QUERY BEGIN, a VIEW_CHANGE event (type 37)
        with ``view_id`` (at most 39 bytes) and ``certification_info`` (text keys and
        values, written in key order), QUERY COMMIT. It applies in queue order like any
        queued transaction and is binlogged here with this server's server_id; replicas
        of this server log it again. ``ValueError`` for an empty or too long view id.
        """
        ...

    def start(self) -> None:
        """Start the applier thread (a no-op while it runs)."""
        ...

    def stop(self) -> None:
        """Stop the applier after the transaction it is applying; wait for it."""
        ...

    @property
    def running(self) -> bool:
        """Whether the applier thread runs."""
        ...

    def received_gtid_set(self) -> str:
        """Every GTID queued since the channel was created (RECEIVED_TRANSACTION_SET)."""
        ...

    def queue_size(self) -> int:
        """Transactions queued and not yet applied."""
        ...

    @property
    def last_error(self) -> tuple[int, str]:
        """The errno and message that stopped the applier last, ``(0, "")`` if none."""
        ...

    def close(self) -> None:
        """Stop the applier and remove the channel (its queue is dropped)."""
        ...


@runtime_checkable
class ReceiverChannel(Protocol):
    """A named receiver channel: the server's asynchronous replica under another name,
    with a receiver (I/O) thread that replicates from a source into the channel's own
    relay log and an applier (SQL) thread that applies it. Group Replication's
    distributed recovery replicates from a donor through ``group_replication_recovery``
    as MySQL's does through its channel service (``channel_create``, ``channel_start``
    with an UNTIL condition, ``channel_stop``, ``channel_purge``).

    Why a service and not ``ServerControl.execute("CHANGE MASTER ... FOR CHANNEL")``:
    the channels Group Replication reserves (``group_replication_*``) are refused to
    users' START/STOP SLAVE and CHANGE MASTER (3139, as in MySQL), so a plugin needs a
    way in that statements do not give; the settings travel as values (no SQL quoting of
    a password); and a plugin gets the facts it decides on typed (the received set, the
    threads' last errors) instead of parsing SHOW SLAVE STATUS.

    What holds, exactly as for the server's default channel ``''`` (it is the same
    code): the relay log files are ``<relay_log>-<name>.NNNNNN`` with their own index,
    the settings and positions ``master-<name>.info`` and ``relay-log-<name>.info`` in
    the data directory; a server that crashes mid-stream recovers the channel's relay log
    at its next start (nothing received is lost, nothing applied twice: the applier
    skips every GTID this server has executed, whichever channel applied it); every
    transaction applied goes through the transaction hooks (``thread_kind``
    REPLICA_APPLIER, ``channel_name`` the channel's name), this server's binary log with
    its original GTID, and ``gtid_executed``. SHOW SLAVE STATUS and performance_schema's
    replication tables show the channel while it is configured. A Group Replication
    channel is not started by the server at boot: it is the plugin's.

    Every method may be called from any thread but a transaction hook's; they are
    serialised with each other and with the statements on the channel. Server refusals
    raise :class:`rpl.observers.QueryError` with MySQL's error (3021 configure while the
    receiver runs, 1198 reset while a thread runs, 1772 a malformed GTID set).
    """

    @property
    def name(self) -> str:
        """The channel's name (``group_replication_recovery``)."""
        ...

    def configure(
        self, *, host: str, port: int, user: str, password: str, auto_position: bool = True
    ) -> None:
        """Point the channel at a source, as ``CHANGE MASTER TO MASTER_HOST=..,
        MASTER_PORT=.., MASTER_USER=.., MASTER_PASSWORD=.., MASTER_AUTO_POSITION=..`` on
        the channel would (created if it does not exist): its relay logs are purged and
        the receiver starts over at the new source (with ``auto_position`` from the
        GTIDs this server executed, else at the source's first binlog). The threads must
        be stopped (QueryError 3021 or 1198 otherwise); settings are saved durably before
        it returns.
        """
        ...

    def start(self, *, until_sql_after_gtids: str | None = None) -> None:
        """Start the receiver and the applier (a thread that runs is left running;
        QueryError 1200 if the channel was never configured). With
        ``until_sql_after_gtids`` (a GTID set) the applier stops by itself once every GTID
        of the set is executed here (at once if they already are), as ``START SLAVE
        UNTIL SQL_AFTER_GTIDS`` does; the receiver goes on until :meth:`stop`. Returns
        once the threads are started, before they connect or apply anything.
        """
        ...

    def wait_until_applier_stops(self, timeout: float) -> bool:
        """Block until the applier thread is not running (its UNTIL condition reached,
        an error, or :meth:`stop`) or the receiver stopped with an error (a source it
        cannot reach after its retries, a source that refused it), or ``timeout`` seconds
        pass; whether one of those happened. The caller tells which from
        :attr:`last_sql_error`, :attr:`last_io_error` and the GTIDs executed.
        """
        ...

    def stop(self) -> None:
        """Stop the receiver, then the applier after the transaction it is applying;
        wait for both (a no-op for a stopped channel or one that does not exist).
        """
        ...

    def reset(self) -> None:
        """Remove the channel, as ``RESET SLAVE ALL`` on it: its relay log files, index
        and info files are deleted, its settings forgotten, its SHOW SLAVE STATUS and
        performance_schema rows gone. The threads must be stopped (QueryError 1198).
        A no-op for a channel that does not exist; :meth:`configure` makes it again.
        """
        ...

    @property
    def io_running(self) -> bool:
        """Whether the receiver thread runs (connected or trying to connect)."""
        ...

    @property
    def sql_running(self) -> bool:
        """Whether the applier thread runs."""
        ...

    def received_gtid_set(self) -> str:
        """The GTIDs the receiver wrote whole to the relay log (Retrieved_Gtid_Set,
        RECEIVED_TRANSACTION_SET), empty for a channel that does not exist.
        """
        ...

    @property
    def last_io_error(self) -> tuple[int, str]:
        """The receiver's last error (Last_IO_Errno, Last_IO_Error), ``(0, "")`` if none."""
        ...

    @property
    def last_sql_error(self) -> tuple[int, str]:
        """The applier's last error (Last_SQL_Errno, Last_SQL_Error), ``(0, "")`` if none."""
        ...


@runtime_checkable
class ChannelService(Protocol):
    """Named replication channels a plugin creates (``performance_schema`` lists
    them with their names as MySQL lists ``group_replication_applier``).
    """

    def applier_channel(self, name: str, *, high_priority: bool = False) -> ApplierChannel:
        """The applier-only channel ``name``, created if it does not exist.
        ``ValueError`` for ``''`` (the asynchronous replica's channel).

        ``high_priority`` (MySQL's ``Channel_creation_info::thd_tx_priority``, which Group
        Replication sets for its applier) makes the channel's transactions, from its
        next one on, take the row locks they need from local transactions that have not
        begun to commit: such a holder is killed, and its next statement fails with
        ER_LOCK_DEADLOCK (1213) or its COMMIT with ER_ERROR_DURING_COMMIT (1180), its
        transaction rolled back. A transaction already committing is never killed (it
        may be ordered before the applier's), so the applier waits for it as usual.
        """
        ...

    def receiver_channel(self, name: str) -> ReceiverChannel:
        """The receiver channel ``name`` (case-insensitive; it exists once
        :meth:`ReceiverChannel.configure` ran, and for as long as its files do, across
        restarts). ``ValueError`` for ``''`` (the default channel is the users'), for a
        name longer than 64 characters or holding ``/``, ``\\`` or NUL (the channel's
        files are named after it), and for the name of an applier-only channel.
        """
        ...


PluginCommand = Callable[[int], None]
"""A plugin SQL command's body: called in the client's thread with its thread id.
It raises :class:`rpl.observers.ObserverError` with ``errno`` to fail with that
MySQL error; returning means OK."""


@runtime_checkable
class CommandRegistry(Protocol):
    """SQL statements a plugin answers (``START GROUP_REPLICATION``)."""

    def register_command(self, statement: str, body: PluginCommand, privilege: str) -> None:
        """Answer ``statement`` (its keywords, case-insensitive, whitespace-free
        comparison: ``"START GROUP_REPLICATION"``) with ``body``. The client needs
        ``privilege`` (a global static or dynamic privilege, e.g. ``SUPER`` or
        ``GROUP_REPLICATION_ADMIN``) or SUPER, else ER_SPECIFIC_ACCESS_DENIED_ERROR (1227).
        The command leaves with the plugin.
        """
        ...


@attrs.frozen
class PluginTable:
    """A performance_schema table a plugin provides: ``columns`` are (name, MySQL
    column type) pairs (``("MEMBER_PORT", "int")``); ``rows`` returns the rows at
    each read, one tuple of values per row in column order.
    """

    name: str
    columns: tuple[tuple[str, str], ...]
    rows: Callable[[], Iterable[tuple[object, ...]]]


@runtime_checkable
class TableRegistry(Protocol):
    """performance_schema tables a plugin provides."""

    def register_table(self, table: PluginTable) -> None:
        """Add ``performance_schema.<table.name>``; it leaves with the plugin.
        ``ValueError`` if the server already has a table by that name.
        """
        ...


@runtime_checkable
class ServerServices(Protocol):
    """What a plugin receives at initialisation."""

    @property
    def plugin_name(self) -> str:
        """The name the plugin was installed under."""
        ...

    @property
    def variables(self) -> VariableRegistry:
        """System/status variable registration, scoped to this plugin."""
        ...

    @property
    def threads(self) -> ThreadRegistry:
        """Thread registration (performance_schema.threads)."""
        ...

    @property
    def error_log(self) -> ErrorLog:
        """The server's error log."""
        ...

    @property
    def server(self) -> ServerControl:
        """The server: identity, ``gtid_executed`` and its waits, ``super_read_only``."""
        ...

    @property
    def channels(self) -> ChannelService:
        """Named replication channels."""
        ...

    @property
    def commands(self) -> CommandRegistry:
        """The plugin's SQL commands."""
        ...

    @property
    def tables(self) -> TableRegistry:
        """The plugin's performance_schema tables."""
        ...
