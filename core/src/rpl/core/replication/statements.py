"""The replica's SQL: CHANGE MASTER TO, START/STOP/RESET SLAVE, SHOW SLAVE STATUS and
SHOW SLAVE HOSTS, with MySQL's checks, errors and result columns (the REPLICA/SOURCE
spellings of 8.0.22+ give the new column names).

Channels as MySQL 8.0's multi-source replication has them:

* ``CHANGE MASTER TO ... FOR CHANNEL 'name'`` creates channel ``name`` (names are
  case-insensitive, at most 64 characters: 3072 ER_SLAVE_CHANNEL_NAME_INVALID_OR_TOO_LONG).
* ``FOR CHANNEL`` naming a channel that does not exist: 3074
  ER_SLAVE_CHANNEL_DOES_NOT_EXIST.
* Without FOR CHANNEL, CHANGE MASTER, START SLAVE UNTIL and MASTER_POS_WAIT act on
  the default channel while it is the only one, else 3079 ER_SLAVE_MULTIPLE_CHANNELS_CMD;
  START/STOP/RESET SLAVE act on every channel; SHOW SLAVE STATUS shows one row per
  configured channel (Channel_Name), Group Replication's included.
* Group Replication's channels (``group_replication_recovery``,
  ``group_replication_applier``) are the plugin's: START/STOP SLAVE FOR CHANNEL on them,
  and CHANGE MASTER on them with anything but MASTER_USER / MASTER_PASSWORD, are 3139
  ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED; the statements without FOR CHANNEL leave them
  alone (SHOW SLAVE STATUS shows them).
* ``START SLAVE [SQL_THREAD] UNTIL SQL_AFTER_GTIDS = 'set'``: the applier stops once it
  has applied every GTID of the set (at once if they were all executed already).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from decimal import Decimal

from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import file_number
from rpl.core.errors import (
    ER_BAD_SLAVE,
    ER_BAD_SLAVE_AUTO_POSITION,
    ER_MALFORMED_GTID_SET_SPECIFICATION,
    ER_NOT_SUPPORTED_YET,
    ER_SLAVE_CHANNEL_DOES_NOT_EXIST,
    ER_SLAVE_CHANNEL_IO_THREAD_MUST_STOP,
    ER_SLAVE_CHANNEL_NAME_INVALID_OR_TOO_LONG,
    ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED,
    ER_SLAVE_CHANNEL_WAS_NOT_RUNNING,
    ER_SLAVE_CHANNEL_WAS_RUNNING,
    ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE,
    ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX,
    ER_SLAVE_MULTIPLE_CHANNELS_CMD,
    ER_SLAVE_MUST_STOP,
    ER_SLAVE_SQL_THREAD_MUST_STOP,
    ER_WRONG_ARGUMENTS,
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
    MySQLError,
)
from rpl.core.execution.dispatch import Dispatch, plain
from rpl.core.execution.results import Ok, Result, Rows
from rpl.core.execution.session import Session
from rpl.core.net.responses import int_column, text_column
from rpl.core.replication import performance_tables
from rpl.core.replication.channel import (
    GROUP_REPLICATION_CHANNELS,
    ReplicaChannel,
    ReplicaChannels,
    valid_channel_name,
)
from rpl.core.replication.info import MasterInfo
from rpl.core.replication.source import ReplicaHosts
from rpl.core.sql import ast

ADMIN_PRIVILEGES = ("SUPER", "REPLICATION_SLAVE_ADMIN")
U32 = 4294967295
STRING_OPTIONS = {
    "MASTER_HOST": "host",
    "MASTER_USER": "user",
    "MASTER_PASSWORD": "password",
    "MASTER_LOG_FILE": "log_file",
}
INTEGER_OPTIONS = {
    "MASTER_PORT": ("port", 0, 65535),
    "MASTER_LOG_POS": ("log_pos", 0, 2**64 - 1),
    "MASTER_CONNECT_RETRY": ("connect_retry", 1, U32),
    "MASTER_RETRY_COUNT": ("retry_count", 0, U32),
    "MASTER_AUTO_POSITION": ("auto_position", 0, 1),
}
IGNORED_OPTIONS = frozenset(
    ("MASTER_SSL", "GET_MASTER_PUBLIC_KEY", "MASTER_SSL_VERIFY_SERVER_CERT")
)
MOVES_RECEIVER = frozenset(
    ("MASTER_HOST", "MASTER_PORT", "MASTER_LOG_FILE", "MASTER_LOG_POS", "MASTER_AUTO_POSITION")
)


def register(dispatch: Dispatch, channels: ReplicaChannels, hosts: ReplicaHosts) -> None:
    """Put the replica's statements and SHOW kinds in ``dispatch``, run on ``channels``
    and ``hosts`` (the replicas registered with this source).
    """
    dispatch.statement(ast.ChangeMaster, plain(lambda s, st: change_master(channels, s, st)))
    dispatch.statement(ast.StartSlave, plain(lambda s, st: start_slave(channels, s, st)))
    dispatch.statement(ast.StopSlave, plain(lambda s, st: stop_slave(channels, s, st)))
    dispatch.statement(ast.ResetSlave, plain(lambda s, st: reset_slave(channels, s, st)))
    dispatch.show("SLAVE STATUS", lambda s, st: show_slave_status(channels, s, st))
    dispatch.show("SLAVE HOSTS", lambda s, st: show_slave_hosts(hosts, s, st))
    performance_tables.register(dispatch.virtual_tables, channels)


def functions(
    channels: ReplicaChannels,
) -> dict[str, Callable[[Session, list[object]], object]]:
    """The SQL functions the replica provides: MASTER_POS_WAIT and SOURCE_POS_WAIT."""

    def pos_wait(session: Session, args: list[object]) -> object:
        return master_pos_wait(channels, args)

    return {"MASTER_POS_WAIT": pos_wait, "SOURCE_POS_WAIT": pos_wait}


def master_pos_wait(channels: ReplicaChannels, args: list[object]) -> int | None:
    """MASTER_POS_WAIT(file, pos [, timeout [, channel]]): wait until the applier has
    executed the source's events up to ``file``:``pos``. 0 once it has (the function
    does not count the events it waited for), -1 after ``timeout`` seconds (a timeout of
    0 or less waits forever, as MySQL's), NULL when an argument is NULL or the replica is
    not configured or its SQL thread is not running. 1582 for a wrong argument count.
    """
    if not 2 <= len(args) <= 4:
        raise MySQLError.of(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, "MASTER_POS_WAIT")
    if args[0] is None or args[1] is None:
        return None
    channel = _one(channels, str(args[3]) if len(args) == 4 and args[3] is not None else None)
    try:
        target = (file_number(str(args[0])), int(str(args[1])))
    except ValueError:  # no binlog file name, or no position
        return None
    timeout = float(str(args[2])) if len(args) > 2 and args[2] is not None else 0.0
    deadline = time.monotonic() + timeout if timeout > 0 else None
    while True:
        if not channel.master_info.configured or not channel.sql_running:
            return None
        relay = channel.relay_info
        if (
            relay.master_log_file
            and (
                file_number(relay.master_log_file),
                relay.master_log_pos,
            )
            >= target
        ):
            return 0
        if deadline is not None and time.monotonic() >= deadline:
            return -1
        time.sleep(0.01)


def _checked_name(name: str) -> str:
    """A FOR CHANNEL name, lower-cased (names are case-insensitive); 3072 if too long, or
    if it holds a character a file name cannot (the channel's files are named after it).
    """
    if not valid_channel_name(name):
        raise MySQLError.of(ER_SLAVE_CHANNEL_NAME_INVALID_OR_TOO_LONG)
    return name.lower()


def _one(channels: ReplicaChannels, name: str | None) -> ReplicaChannel:
    """The channel a one-channel statement acts on: FOR CHANNEL's (3074 if it does not
    exist), else the default one while it is the only one (3079 if there are several).
    """
    if name is None:
        if channels.count() > 1:
            raise MySQLError.of(ER_SLAVE_MULTIPLE_CHANNELS_CMD)
        return channels.default
    channel = channels.get(_checked_name(name))
    if channel is None:
        raise MySQLError.of(ER_SLAVE_CHANNEL_DOES_NOT_EXIST, name)
    return channel


def _not_group_replications(name: str | None, statement: str) -> None:
    """3139 for ``statement`` FOR CHANNEL on a channel Group Replication reserves."""
    if name is not None and name.lower() in GROUP_REPLICATION_CHANNELS:
        raise MySQLError.of(ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED, statement, name.lower())


# ------------------------------------------------------------------ CHANGE MASTER
GROUP_REPLICATION_RECOVERY_OPTIONS = frozenset(("MASTER_USER", "MASTER_PASSWORD"))
"""What a user's CHANGE MASTER may set on ``group_replication_recovery`` (its
credentials, as MySQL's documentation has users set them)."""


def change_master(channels: ReplicaChannels, session: Session, stmt: ast.ChangeMaster) -> Result:
    """CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO [FOR CHANNEL 'name']: FOR CHANNEL
    creates the channel if it does not exist.
    """
    session.require(*ADMIN_PRIVILEGES)
    options = dict(stmt.options)
    if stmt.channel is None:
        channel = _one(channels, None)
    else:
        name = _checked_name(stmt.channel)
        if name == "group_replication_applier" or (
            name == "group_replication_recovery"
            and not options.keys() <= GROUP_REPLICATION_RECOVERY_OPTIONS
        ):
            raise MySQLError.of(
                ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED,
                "CHANGE MASTER with the given parameters",
                name,
            )
        found = channels.get(name)
        if found is None:  # validated before it is made: nothing half-applied
            _validated(session, MasterInfo(), options)
            found = channels.create(name)
        channel = found
    return _change(session, channel, options)


def _change(session: Session, channel: ReplicaChannel, options: Mapping[str, object]) -> Result:
    with channel.lock:
        if channel.io_running:
            raise MySQLError.of(ER_SLAVE_CHANNEL_IO_THREAD_MUST_STOP, channel.name)
        moves = bool(options.keys() & MOVES_RECEIVER)
        if moves and channel.sql_running:
            raise MySQLError.of(ER_SLAVE_SQL_THREAD_MUST_STOP)
        changes = _validated(session, channel.master_info, options)
        info = channel.master_info
        host_changed = any(k in options for k in ("MASTER_HOST", "MASTER_PORT"))
        if host_changed and "MASTER_LOG_FILE" not in options and "MASTER_LOG_POS" not in options:
            info.log_file, info.log_pos = "", 4
        for field, value in changes.items():
            setattr(info, field, value)
        if "MASTER_LOG_POS" in options:
            info.log_pos = max(4, info.log_pos)
        if moves:
            channel.purge_relay_logs()
        channel.save_master_info()
        channel.save_relay_log_info()
    return Ok()


def _validated(
    session: Session, current: MasterInfo, options: Mapping[str, object]
) -> dict[str, object]:
    changes: dict[str, object] = {}
    for name, value in options.items():
        if name in STRING_OPTIONS:
            if not isinstance(value, str):
                raise MySQLError.of(ER_WRONG_ARGUMENTS, name)
            if name == "MASTER_HOST" and not value.strip():
                raise MySQLError.of(ER_WRONG_ARGUMENTS, name)
            if name in ("MASTER_HOST", "MASTER_USER") and len(value) > 255:
                raise MySQLError.of(ER_WRONG_ARGUMENTS, name)
            changes[STRING_OPTIONS[name]] = value
        elif name in INTEGER_OPTIONS:
            field, low, high = INTEGER_OPTIONS[name]
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise MySQLError.of(ER_WRONG_ARGUMENTS, name)
            if field == "auto_position":  # apart: `bool(v) if ... else v` is typed int
                changes[field] = bool(value)
            else:
                changes[field] = value
        elif name == "MASTER_HEARTBEAT_PERIOD":
            changes["heartbeat_period"] = _heartbeat(session, value)
        elif name in IGNORED_OPTIONS:
            continue
        else:
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"CHANGE MASTER option {name}")
    auto = changes.get("auto_position", current.auto_position)
    if auto and ("log_file" in changes or "log_pos" in changes):
        raise MySQLError.of(ER_BAD_SLAVE_AUTO_POSITION)
    if changes.get("log_file") == "" and "MASTER_LOG_FILE" in options:
        raise MySQLError.of(ER_WRONG_ARGUMENTS, "MASTER_LOG_FILE")
    return changes


def _heartbeat(session: Session, value: object) -> float:
    if not isinstance(value, int | Decimal) or isinstance(value, bool):
        raise MySQLError.of(ER_WRONG_ARGUMENTS, "MASTER_HEARTBEAT_PERIOD")
    period = float(value)
    if period < 0 or period > 4294967:
        raise MySQLError.of(ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE)
    if 0 < period < 0.001:
        session.warn(
            MySQLError(
                1703,
                "HY000",
                "The requested value for the heartbeat "
                "period is less than 1 millisecond. The value is reset to 0, "
                "meaning that heartbeating will effectively be disabled.",
            )
        )
        return 0.0
    timeout = session.server.variables.global_float("replica_net_timeout")
    if period > timeout:
        session.warn(MySQLError.of(ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX))
    return period


# ------------------------------------------------------------------ START / STOP / RESET
def _threads(stmt: ast.StartSlave | ast.StopSlave) -> tuple[bool, bool]:
    if not stmt.threads:
        return True, True
    return "IO_THREAD" in stmt.threads, "SQL_THREAD" in stmt.threads


def _targets(channels: ReplicaChannels, name: str | None) -> list[ReplicaChannel]:
    """What START/STOP/RESET SLAVE act on: FOR CHANNEL's channel (3074 if it does not
    exist), else every channel but Group Replication's.
    """
    if name is None:
        return channels.replica_channels()
    return [_one(channels, name)]


def start_slave(channels: ReplicaChannels, session: Session, stmt: ast.StartSlave) -> Result:
    """START SLAVE [IO_THREAD] [SQL_THREAD] [UNTIL SQL_AFTER_GTIDS = 'set'] [FOR CHANNEL]."""
    session.require(*ADMIN_PRIVILEGES)
    _not_group_replications(stmt.channel, "START SLAVE")
    until: GtidSet | None = None
    if stmt.until_sql_after_gtids is not None:
        try:
            until = GtidSet.parse(stmt.until_sql_after_gtids)
        except ValueError:
            raise MySQLError.of(
                ER_MALFORMED_GTID_SET_SPECIFICATION, stmt.until_sql_after_gtids
            ) from None
        if stmt.channel is None:
            _one(channels, None)  # UNTIL names one channel's applier: 3079 with several
    io, sql = _threads(stmt)
    targets = [c for c in _targets(channels, stmt.channel) if c.master_info.configured]
    if not targets:
        raise MySQLError.of(ER_BAD_SLAVE)
    for channel in targets:
        with channel.lock:
            started = False
            if sql and not channel.sql_running:
                channel.start_sql(until)
                started = True
            if io and not channel.io_running:
                channel.start_io()
                started = True
            if not started:
                session.warn(MySQLError.of(ER_SLAVE_CHANNEL_WAS_RUNNING, channel.name), "Note")
    return Ok()


def stop_slave(channels: ReplicaChannels, session: Session, stmt: ast.StopSlave) -> Result:
    """STOP SLAVE [IO_THREAD] [SQL_THREAD] [FOR CHANNEL]: waits for the threads to end."""
    session.require(*ADMIN_PRIVILEGES)
    _not_group_replications(stmt.channel, "STOP SLAVE")
    io, sql = _threads(stmt)
    for channel in _targets(channels, stmt.channel):
        with channel.lock:
            stopped = False
            if io and channel.io_running:
                channel.stop_io()
                stopped = True
            if sql and channel.sql_running:
                channel.stop_sql()
                stopped = True
            if not stopped:
                session.warn(MySQLError.of(ER_SLAVE_CHANNEL_WAS_NOT_RUNNING, channel.name), "Note")
    return Ok()


def reset_slave(channels: ReplicaChannels, session: Session, stmt: ast.ResetSlave) -> Result:
    """RESET SLAVE [ALL] [FOR CHANNEL]: ALL on a named channel removes it."""
    session.require(*ADMIN_PRIVILEGES)
    targets = _targets(channels, stmt.channel)
    with channels.lock:
        for channel in targets:
            if channel.io_running or channel.sql_running:
                raise MySQLError.of(ER_SLAVE_MUST_STOP)
        for channel in targets:
            with channel.lock:
                reset_channel(channels, channel, stmt.all)
    return Ok()


def reset_channel(channels: ReplicaChannels, channel: ReplicaChannel, everything: bool) -> None:
    """RESET SLAVE [ALL] of one stopped channel (caller holds its lock); with ALL a named
    channel is gone after it.
    """
    channel.reset(everything)
    if everything and channel.name:
        channels.remove(channel.name)


# ------------------------------------------------------------------ SHOW
STATUS_COLUMNS = (
    "Slave_IO_State",
    "Master_Host",
    "Master_User",
    "Master_Port",
    "Connect_Retry",
    "Master_Log_File",
    "Read_Master_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Master_Log_File",
    "Slave_IO_Running",
    "Slave_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Master_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Master_SSL_Allowed",
    "Master_SSL_CA_File",
    "Master_SSL_CA_Path",
    "Master_SSL_Cert",
    "Master_SSL_Cipher",
    "Master_SSL_Key",
    "Seconds_Behind_Master",
    "Master_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Master_Server_Id",
    "Master_UUID",
    "Master_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Slave_SQL_Running_State",
    "Master_Retry_Count",
    "Master_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Master_SSL_Crl",
    "Master_SSL_Crlpath",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Master_TLS_Version",
    "Master_public_key_path",
    "Get_master_public_key",
    "Network_Namespace",
)
INTEGER_COLUMNS = frozenset(
    (
        "Master_Port",
        "Connect_Retry",
        "Read_Master_Log_Pos",
        "Relay_Log_Pos",
        "Last_Errno",
        "Skip_Counter",
        "Exec_Master_Log_Pos",
        "Relay_Log_Space",
        "Until_Log_Pos",
        "Seconds_Behind_Master",
        "Last_IO_Errno",
        "Last_SQL_Errno",
        "Master_Server_Id",
        "Master_Retry_Count",
        "Auto_Position",
        "Get_master_public_key",
        "SQL_Delay",
    )
)


def new_term(name: str) -> str:
    """A column's 8.0.22+ name (SHOW REPLICA STATUS)."""
    return (
        name.replace("Get_master_public_key", "Get_Source_public_key")
        .replace("Master_public_key_path", "Source_public_key_path")
        .replace("Master", "Source")
        .replace("Slave", "Replica")
    )


def show_slave_status(channels: ReplicaChannels, session: Session, stmt: ast.Show) -> Result:
    """SHOW SLAVE STATUS / SHOW REPLICA STATUS [FOR CHANNEL]: a row per channel CHANGE
    MASTER configured (the default channel first, then by name); FOR CHANNEL: that
    channel's (3074 if it does not exist).
    """
    session.require("SUPER", "REPLICATION CLIENT")
    if stmt.channel is not None and stmt.channel.lower() == "group_replication_applier":
        raise MySQLError.of(
            ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED, "SHOW SLAVE STATUS", "group_replication_applier"
        )
    shown = channels.all() if stmt.channel is None else [_one(channels, stmt.channel)]
    names = [new_term(n) if stmt.new_terms else n for n in STATUS_COLUMNS]
    columns = [
        int_column(new) if old in INTEGER_COLUMNS else text_column(new)
        for old, new in zip(STATUS_COLUMNS, names, strict=True)
    ]
    rows = [
        [values[n] for n in STATUS_COLUMNS]
        for values in (_status(c) for c in shown if c.master_info.configured)
    ]
    return Rows(columns, rows)


def _running(flag: bool, connecting: bool = False) -> str:
    if flag:
        return "Connecting" if connecting else "Yes"
    return "No"


def _status(channel: ReplicaChannel) -> dict[str, object]:
    info = channel.master_info
    relay = channel.relay_info
    io_errno, io_error, io_when = channel.last_io_error
    sql_errno, sql_error, sql_when = channel.last_sql_error
    io_running = channel.io_running
    until = channel.until_sql_after_gtids if channel.sql_running else None
    values: dict[str, object] = {name: "" for name in STATUS_COLUMNS}
    values.update(
        {
            "Slave_IO_State": channel.io_state(),
            "Master_Host": info.host,
            "Master_User": info.user,
            "Master_Port": info.port,
            "Connect_Retry": info.connect_retry,
            "Master_Log_File": info.log_file,
            "Read_Master_Log_Pos": info.log_pos,
            "Relay_Log_File": relay.relay_log_file,
            "Relay_Log_Pos": relay.relay_log_pos,
            "Relay_Master_Log_File": relay.master_log_file,
            "Slave_IO_Running": _running(io_running, not channel.io_connected),
            "Slave_SQL_Running": _running(channel.sql_running),
            "Last_Errno": sql_errno,
            "Last_Error": sql_error,
            "Skip_Counter": 0,
            "Exec_Master_Log_Pos": relay.master_log_pos,
            "Relay_Log_Space": channel.relay_log.space(),
            "Until_Condition": "SQL_AFTER_GTIDS" if until is not None else "None",
            "Until_Log_Pos": 0,
            "Master_SSL_Allowed": "No",
            "Seconds_Behind_Master": channel.seconds_behind(),
            "Master_SSL_Verify_Server_Cert": "No",
            "Last_IO_Errno": io_errno,
            "Last_IO_Error": io_error,
            "Last_SQL_Errno": sql_errno,
            "Last_SQL_Error": sql_error,
            "Master_Server_Id": info.master_server_id,
            "Master_UUID": info.master_uuid,
            "Master_Info_File": "mysql.slave_master_info",
            "SQL_Delay": 0,
            "SQL_Remaining_Delay": None,
            "Slave_SQL_Running_State": channel.sql_state(),
            "Master_Retry_Count": info.retry_count,
            "Last_IO_Error_Timestamp": io_when,
            "Last_SQL_Error_Timestamp": sql_when,
            "Retrieved_Gtid_Set": str(channel.retrieved_gtids),
            "Executed_Gtid_Set": str(channel.server.binlog.gtid_executed),
            "Auto_Position": int(info.auto_position),
            "Get_master_public_key": 0,
            "Channel_Name": channel.name,
        }
    )
    return values


def show_slave_hosts(hosts: ReplicaHosts, session: Session, stmt: ast.Show) -> Result:
    """SHOW SLAVE HOSTS / SHOW REPLICAS."""
    session.require("REPLICATION SLAVE", "SUPER")
    if stmt.new_terms:
        names = ("Server_Id", "Host", "Port", "Source_Id", "Replica_UUID")
    else:
        names = ("Server_id", "Host", "Port", "Master_id", "Slave_UUID")
    columns = [
        int_column(names[0]),
        text_column(names[1]),
        int_column(names[2]),
        int_column(names[3]),
        text_column(names[4]),
    ]
    rows = [[h.server_id, h.host, h.port, h.master_id, h.replica_uuid] for h in hosts.rows()]
    return Rows(columns, rows)
