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

import attrs

from rpl.observers.services import ServerNet, SourceConnection, UserVariables


class TransFlags(enum.IntFlag):
    """``Trans_param.flags``."""

    NONE = 0
    TRANS_IS_REAL_TRANS = 1
    """The hook is for a multi-statement transaction (BEGIN ... COMMIT), not an
    autocommitted statement."""


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
