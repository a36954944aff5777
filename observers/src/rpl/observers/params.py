"""Parameters the delegates pass to observer callbacks (frozen attrs classes).

They carry the fields MySQL's ``Trans_param``, ``Binlog_storage_param``,
``Binlog_transmit_param``, ``Binlog_relay_IO_param`` and ``Server_state_param``
carry, with Python types. Parameters are immutable: a callback communicates
back only through its return value (where the hook defines one), the writable
header window of ``before_send_event``, or by raising
:class:`rpl.observers.ObserverError`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from rpl.observers.services import ServerNet, SourceConnection, UserVariables


class TransFlags(enum.IntFlag):
    """``Trans_param.flags``."""

    NONE = 0
    TRANS_IS_REAL_TRANS = 1
    """The hook is for a multi-statement transaction (BEGIN ... COMMIT), not an
    autocommitted statement."""


class ThreadKind(enum.Enum):
    """The kind of thread a transaction hook runs on (``TransParam.thread_kind``).

    A plugin that observes every transaction tells its own appliers' work from a
    client's by it: Group Replication certifies a client's commit but not what its
    ``group_replication_applier`` channel applies.
    """

    CLIENT = "CLIENT"
    """A client connection's session (also the server's own internal sessions)."""
    REPLICA_APPLIER = "REPLICA_APPLIER"
    """The applier (SQL) thread of the asynchronous replica channel (``''``)."""
    PLUGIN_APPLIER = "PLUGIN_APPLIER"
    """The applier of a channel a plugin feeds (``TransParam.channel_name`` names it:
    ``group_replication_applier``); see :class:`rpl.observers.ApplierChannel`."""


class BinlogDumpFlags(enum.IntFlag):
    """Flags of COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID, as the replica sent them."""

    NONE = 0
    BINLOG_DUMP_NON_BLOCK = 1
    """Stop at the end of the binlog instead of waiting for new events."""
    BINLOG_THROUGH_POSITION = 2
    BINLOG_THROUGH_GTID = 4


class BinlogRelayFlags(enum.IntFlag):
    """Flags of ``after_queue_event``."""

    NONE = 0
    BINLOG_RELAY_IS_SYNCED = 1
    """The relay log was synced to disk after this event was written."""


@attrs.frozen
class TableInfo:
    """A table a transaction changes (``Trans_table_info``)."""

    db: str
    table: str
    has_primary_key: bool


@attrs.frozen
class TransParam:
    """``Trans_param``: one session's transaction.

    ``log_file``/``log_pos`` are the end of the transaction's events in the
    binary log: ``("", 0)`` until they are written, and when nothing was
    binlogged (read-only or rolled-back work). ``gtid`` is ``"uuid:gno"`` once a
    GTID is assigned (at the flush stage), or the session's ``gtid_next`` when
    one was set explicitly; ``None`` otherwise.
    """

    server_id: int
    server_uuid: str
    thread_id: int
    flags: TransFlags = TransFlags.NONE
    log_file: str = ""
    log_pos: int = 0
    gtid: str | None = None
    tables: tuple[TableInfo, ...] = ()
    trx_cache: bytes = b""
    """``before_commit`` only: the transaction's binlog events as they will be
    written (QUERY "BEGIN" ... XID), without the GTID event."""
    write_set: frozenset[int] = frozenset()
    """``before_commit`` only: the transaction's write set, one 64-bit XXHASH64
    per unique key of every row image it changed (the ``before_commit`` hook
    says exactly what is hashed); empty with
    ``transaction_write_set_extraction=OFF``."""
    group_replication_consistency: str = "EVENTUAL"
    hold_timeout: int = 28800
    """Seconds a hook may hold the session (the session's ``wait_timeout``)."""
    gtid_executed: str = ""
    """``before_commit`` only: the transaction's snapshot, the server's
    ``gtid_executed`` (a GTID set in MySQL's text) as it is when ``before_commit``
    is called, as MySQL takes it, read while no commit group is between its
    engine commits and its ``gtid_executed`` update: every transaction in it
    committed before this one's commit began, and every transaction whose row
    lock this one waited for is in it. Group Replication certifies against it,
    so a row this transaction changed after a local commit released it is no
    conflict."""
    thread_kind: ThreadKind = ThreadKind.CLIENT
    """The kind of thread the hook runs on."""
    channel_name: str = ""
    """The replication channel whose applier runs the transaction (``''`` for a
    client session and for the asynchronous replica's channel)."""
    binlog_format: str = "ROW"
    """The session's ``binlog_format`` (ROW, STATEMENT or MIXED): how this
    transaction's changes are logged."""


@attrs.frozen
class CommitDecision:
    """What a ``before_commit`` callback may return: commit with this GTID.

    ``gtid`` (``"uuid:gno"``) replaces the GTID the server would assign; the
    transaction is binlogged and added to ``gtid_executed`` with it. The server
    refuses a GTID already in ``gtid_executed`` (the commit fails with
    ER_RUN_HOOK_ERROR and rolls back). ``queued``, when given, is called in the
    committing thread once the transaction holds its place in the binary log's
    commit queue, before it is written: no transaction that enters the queue after
    that call is binlogged before this one. A plugin that must binlog transactions
    in an order of its own (Group Replication: the group's delivery order) lets the
    next one in only after ``queued``. It is called at most once and not at all when
    the commit fails before it reaches the queue.
    """

    gtid: str
    queued: Callable[[], None] | None = None


@attrs.frozen
class BinlogStorageParam:
    """``Binlog_storage_param``: the session whose commit leads the group."""

    server_id: int
    server_uuid: str
    thread_id: int


@attrs.frozen
class TransmitParam:
    """``Binlog_transmit_param``: one binlog dump (one connected replica).

    ``server_id`` is the replica's (from COM_BINLOG_DUMP); ``net`` is the dump
    connection seen from the source (``thd_net_read/write/flush``);
    ``user_vars`` reads the user variables the replica set on this connection
    (``get_user_var_int/real/str``).
    """

    server_id: int
    thread_id: int
    flags: BinlogDumpFlags
    host: str
    user: str
    net: ServerNet
    user_vars: UserVariables


@attrs.frozen
class RelayIOParam:
    """``Binlog_relay_IO_param``: the replica's receiver (IO) or applier (SQL)
    thread for one channel.

    ``server_id`` is this replica's own; ``host``/``port``/``user`` name the
    source; ``master_log_name``/``master_log_pos`` are the receiver's position
    in the source's binlog when the hook is called (``after_read_event``: the
    end of the previous event; ``after_queue_event``: the end of the event just
    queued). ``mysql`` is the replica's connection to the
    source (``mysql_net_read/write/flush`` plus statements), or ``None`` while
    not connected (``thread_start``, ``thread_stop``, the applier hooks,
    ``after_reset_slave``).
    """

    server_id: int
    thread_id: int
    channel_name: str
    host: str
    port: int
    user: str
    master_log_name: str
    master_log_pos: int
    mysql: SourceConnection | None = None


@attrs.frozen
class ServerStateParam:
    """``Server_state_param``."""

    server_id: int
    server_uuid: str
