"""The server's own system variables, with MySQL 8.0's types, defaults, ranges and scopes.

Variables that are really properties of the running server (``gtid_executed``,
``server_uuid``, ``port``...) are read-only; their values are filled in at start,
or computed at each read (:data:`COMPUTED`, resolved by the session).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rpl.core.errors import (
    ER_COLLATION_CHARSET_MISMATCH,
    ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_SQL_LOG_BIN,
    ER_UNKNOWN_CHARACTER_SET,
    ER_UNKNOWN_COLLATION,
    ER_UNKNOWN_TIME_ZONE,
    ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE,
    MySQLError,
)
from rpl.core.execution.threadpool import ONE_THREAD_PER_CONNECTION, POOL_OF_THREADS
from rpl.core.execution.virtual_tables import CHARACTER_SET_ROWS, COLLATION_ROWS
from rpl.core.sql import ast
from rpl.core.sql.parser import RESERVED
from rpl.observers import Scope, SystemVariable, VarType

if TYPE_CHECKING:
    from rpl.core.execution.session import Session

SERVER_VERSION = "8.0.36-rpl"
VERSION_COMMENT = "rpl - MySQL replication plugin architecture in Python"
U32 = 4294967295
U64 = 2**64 - 1
ISOLATION_LEVELS = ("READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE")
"""transaction_isolation's values, MySQL's spelling."""


def _ro(
    name: str, type_: VarType, default: object, description: str = "", scope: Scope = Scope.GLOBAL
) -> SystemVariable:
    return SystemVariable(
        name,
        type_,
        default,  # type: ignore[arg-type]
        description,
        scope=scope,
        dynamic=False,
    )


def _int(
    name: str, default: int, low: int, high: int, scope: Scope = Scope.GLOBAL, description: str = ""
) -> SystemVariable:
    return SystemVariable(
        name, VarType.INT, default, description, scope=scope, min_value=low, max_value=high
    )


def _bool(
    name: str, default: bool, scope: Scope = Scope.GLOBAL, description: str = ""
) -> SystemVariable:
    return SystemVariable(name, VarType.BOOL, default, description, scope=scope)


def _str(name: str, default: str, scope: Scope = Scope.BOTH) -> SystemVariable:
    return SystemVariable(name, VarType.STR, default, scope=scope)


def server_variables(
    datadir: str,
    port: int,
    bind_address: str,
    server_id: int,
    server_uuid: str,
    log_bin_basename: str,
    hostname: str,
    checksum: str,
) -> list[SystemVariable]:
    """Every system variable the server core declares."""
    both = Scope.BOTH
    return [
        _ro("version", VarType.STR, SERVER_VERSION),
        _ro("version_comment", VarType.STR, VERSION_COMMENT),
        _ro("protocol_version", VarType.INT, 10),
        _ro("datadir", VarType.STR, datadir + "/"),
        _ro("port", VarType.INT, port),
        _ro("bind_address", VarType.STR, bind_address),
        _ro("hostname", VarType.STR, hostname),
        _int("server_id", server_id, 0, U32, description="This server's id in a topology"),
        _ro("server_uuid", VarType.STR, server_uuid),
        _ro("log_bin", VarType.BOOL, True),
        _ro("log_bin_basename", VarType.STR, log_bin_basename),
        _ro("log_bin_index", VarType.STR, log_bin_basename + ".index"),
        _ro("log_error", VarType.STR, datadir + "/error.log"),
        _ro("log_replica_updates", VarType.BOOL, True),
        _ro("log_slave_updates", VarType.BOOL, True),
        SystemVariable(
            "binlog_format",
            VarType.ENUM,
            "ROW",
            "ROW logs each changed row (TABLE_MAP and rows events); STATEMENT and MIXED "
            "log each change as a deterministic statement",
            scope=both,
            enum_values=("ROW", "STATEMENT", "MIXED"),
        ),
        SystemVariable(
            "binlog_row_image",
            VarType.ENUM,
            "FULL",
            "columns a rows event carries: all (FULL), the key and the changed ones "
            "(MINIMAL), all but unneeded BLOB/TEXT (NOBLOB)",
            scope=both,
            enum_values=("FULL", "MINIMAL", "NOBLOB"),
        ),
        SystemVariable(
            "binlog_row_metadata",
            VarType.ENUM,
            "MINIMAL",
            "TABLE_MAP's optional metadata: signedness and charsets (MINIMAL), plus column "
            "names, primary key, ENUM/SET members (FULL)",
            enum_values=("MINIMAL", "FULL"),
        ),
        _bool(
            "binlog_rows_query_log_events",
            False,
            both,
            "write a ROWS_QUERY event with the statement before its rows events",
        ),
        SystemVariable(
            "binlog_row_event_max_size",
            VarType.INT,
            8192,
            "bytes of rows after which a statement's rows go on in a new event (set at start)",
            dynamic=False,
            min_value=256,
            max_value=U32,
        ),
        SystemVariable(
            "binlog_checksum", VarType.ENUM, checksum, dynamic=False, enum_values=("NONE", "CRC32")
        ),
        SystemVariable(
            "binlog_error_action",
            VarType.ENUM,
            "ABORT_SERVER",
            "a binlog write or sync that fails stops the server (MySQL's "
            "default; IGNORE_ERROR, logging off and going on, is not offered)",
            dynamic=False,
            enum_values=("ABORT_SERVER",),
        ),
        _int(
            "sync_binlog",
            1,
            0,
            U32,
            description="fsync the binlog every N commit groups (0: never)",
        ),
        _int(
            "max_binlog_size",
            1073741824,
            4096,
            1073741824,
            description="rotate the binlog once a file reaches this size",
        ),
        _int(
            "binlog_group_commit_sync_delay",
            0,
            0,
            1000000,
            description="microseconds a group leader waits for more commits before syncing",
        ),
        _int(
            "binlog_group_commit_sync_no_delay_count",
            0,
            0,
            100000,
            description="stop waiting once this many transactions are queued",
        ),
        SystemVariable(
            "binlog_transaction_dependency_tracking",
            VarType.ENUM,
            "WRITESET",
            "how last_committed is computed: the commit group, or the latest "
            "earlier transaction that changed the same rows",
            enum_values=("COMMIT_ORDER", "WRITESET"),
        ),
        SystemVariable(
            "transaction_write_set_extraction",
            VarType.ENUM,
            "XXHASH64",
            "how each changed row's keys become write-set items: 64-bit XXHASH64 "
            "hashes, or OFF (no write set)",
            scope=both,
            enum_values=("OFF", "XXHASH64"),
        ),
        _int(
            "binlog_transaction_dependency_history_size",
            25000,
            1,
            1000000,
            description="row hashes WRITESET remembers before it starts afresh",
        ),
        _ro("gtid_mode", VarType.STR, "ON"),
        _ro("enforce_gtid_consistency", VarType.STR, "ON"),
        _ro("gtid_executed", VarType.STR, ""),
        _ro("gtid_purged", VarType.STR, ""),
        _int("innodb_lock_wait_timeout", 50, 1, 1073741824, both),
        _ro("innodb_rollback_on_timeout", VarType.BOOL, False),
        _int("innodb_flush_log_at_trx_commit", 1, 0, 2),
        _int("max_connections", 151, 1, 100000),
        _int("max_allowed_packet", 67108864, 1024, 1073741824, both),
        _int("net_buffer_length", 16384, 1024, 1048576, both),
        _int("net_read_timeout", 30, 1, 31536000, both),
        _int("net_write_timeout", 60, 1, 31536000, both),
        _int("connect_timeout", 10, 2, 31536000),
        _int("wait_timeout", 28800, 1, 31536000, both),
        _int("interactive_timeout", 28800, 1, 31536000, both),
        _int("auto_increment_increment", 1, 1, 65535, both),
        _int("auto_increment_offset", 1, 1, 65535, both),
        _bool("autocommit", True, both),
        _bool("read_only", False),
        _bool("super_read_only", False),
        _bool(
            "sql_require_primary_key",
            True,
            both,
            "rpl's engine requires a primary key on every table",
        ),
        _bool("sql_log_bin", True, Scope.SESSION),
        _bool(
            "foreign_key_checks",
            True,
            both,
            "FOREIGN KEY constraints are checked and their actions run (OFF: neither)",
        ),
        _bool(
            "unique_checks",
            True,
            both,
            "a hint InnoDB may use to skip unique checks on bulk loads; rpl always checks",
        ),
        _str(
            "sql_mode",
            "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
            "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
        ),
        SystemVariable(
            "transaction_isolation",
            VarType.ENUM,
            "REPEATABLE-READ",
            "the isolation level of the session's transactions (SET TRANSACTION "
            "ISOLATION LEVEL sets it): consistent reads see the transaction's first read "
            "view (REPEATABLE-READ, SERIALIZABLE) or one per statement (READ-COMMITTED, "
            "READ-UNCOMMITTED)",
            scope=both,
            enum_values=ISOLATION_LEVELS,
        ),
        _bool("transaction_read_only", False, both),
        _str("character_set_client", "utf8mb4"),
        _str("character_set_connection", "utf8mb4"),
        _str("character_set_results", "utf8mb4"),
        _str("character_set_server", "utf8mb4"),
        _str("character_set_database", "utf8mb4"),
        _ro("character_set_system", VarType.STR, "utf8mb3"),
        _str("collation_connection", "utf8mb4_0900_ai_ci"),
        _str("collation_server", "utf8mb4_0900_ai_ci"),
        _str("collation_database", "utf8mb4_0900_ai_ci"),
        _str("time_zone", "SYSTEM"),
        _ro("system_time_zone", VarType.STR, "UTC"),
        _ro("lower_case_table_names", VarType.INT, 0),
        _str("default_storage_engine", "InnoDB"),
        _ro("have_ssl", VarType.STR, "DISABLED"),
        _ro("performance_schema", VarType.BOOL, True),
        _ro("license", VarType.STR, "GPL"),
        _ro("skip_name_resolve", VarType.BOOL, True),
        _str("init_connect", "", Scope.GLOBAL),
        *thread_pool_variables(),
        _int("sql_select_limit", 2**64 - 1, 0, 2**64 - 1, both),
        _int("max_execution_time", 0, 0, U32, both),
        *replication_variables(datadir, port),
        *client_session_variables(),
    ]


def thread_pool_variables() -> list[SystemVariable]:
    """thread_handling and the pool's sizes (MariaDB's names, ranges and defaults, but
    thread_pool_size: one, as one interpreter lock runs one thread at a time).
    """
    return [
        SystemVariable(
            "thread_handling",
            VarType.ENUM,
            ONE_THREAD_PER_CONNECTION,
            "one thread per connection, or a pool of threads serving them all",
            dynamic=False,
            enum_values=(ONE_THREAD_PER_CONNECTION, POOL_OF_THREADS),
        ),
        _int(
            "thread_pool_size",
            1,
            1,
            100000,
            description="pool workers that may run commands at once (not counting "
            "workers blocked in a wait)",
        ),
        _int(
            "thread_pool_max_threads",
            65536,
            1,
            65536,
            description="pool worker threads at most, waiting ones included",
        ),
        _int(
            "thread_pool_stall_limit",
            500,
            1,
            U32,
            description="milliseconds after which a running command no longer keeps "
            "other commands waiting",
        ),
        _int(
            "thread_pool_idle_timeout",
            60,
            1,
            U32,
            description="seconds an idle pool worker waits before it ends",
        ),
    ]


ALIASES = {
    "slave_net_timeout": "replica_net_timeout",
    "sync_master_info": "sync_source_info",
    "skip_slave_start": "skip_replica_start",
    "slave_transaction_retries": "replica_transaction_retries",
    "slave_exec_mode": "replica_exec_mode",
}
"""Pre-8.0.26 names MySQL still accepts for the replication variables."""


def replication_variables(datadir: str, port: int) -> list[SystemVariable]:
    """The replica's variables (receiver, relay log, applier)."""
    return [
        _int(
            "replica_net_timeout",
            60,
            1,
            31536000,
            description="seconds without data from the source before the receiver reconnects",
        ),
        _int(
            "sync_relay_log",
            10000,
            0,
            U32,
            description="fsync the relay log every N events (0: never)",
        ),
        _int(
            "sync_source_info",
            10000,
            0,
            U32,
            description="write master.info every N transactions received",
        ),
        _int(
            "sync_relay_log_info",
            10000,
            0,
            U32,
            description="write relay-log.info every N transactions applied",
        ),
        _ro("relay_log", VarType.STR, "relay-bin"),
        _ro("relay_log_basename", VarType.STR, datadir + "/relay-bin"),
        _ro("relay_log_index", VarType.STR, datadir + "/relay-bin.index"),
        _bool(
            "relay_log_purge",
            True,
            description="delete each relay log file once the applier is done with it",
        ),
        _ro("relay_log_recovery", VarType.BOOL, False),
        _int(
            "max_relay_log_size",
            0,
            0,
            1073741824,
            description="rotate the relay log at this size (0: max_binlog_size)",
        ),
        _ro("skip_replica_start", VarType.BOOL, False),
        _int(
            "replica_transaction_retries",
            10,
            0,
            U32,
            description="times the applier retries a transaction after a lock wait "
            "timeout or deadlock",
        ),
        _int(
            "rpl_checkpoint_binlog_bytes",
            128 << 20,
            0,
            1 << 62,
            description="binlog bytes written after which the engine is checkpointed "
            "again between rotations (0: only at rotation, start and "
            "shutdown): bounds what the next start replays",
        ),
        _int(
            "rpl_applier_batch_size",
            64,
            1,
            1024,
            description="independent replicated transactions (same logical-clock window "
            "on the source) the applier commits as one binlog group",
        ),
        SystemVariable(
            "replica_exec_mode",
            VarType.ENUM,
            "STRICT",
            "STRICT stops the applier at a missing row (1032) or a duplicate key (1062) "
            "in a rows event; IDEMPOTENT skips the missing row and overwrites the duplicate",
            enum_values=("STRICT", "IDEMPOTENT"),
        ),
        _ro("report_host", VarType.STR, ""),
        _ro("report_port", VarType.INT, port),
    ]


OPTIMIZER_SWITCH = (
    "index_merge=on,index_merge_union=on,index_merge_sort_union=on,"
    "index_merge_intersection=on,engine_condition_pushdown=on,index_condition_pushdown=on,"
    "mrr=on,mrr_cost_based=on,block_nested_loop=on,batched_key_access=off,"
    "materialization=on,semijoin=on,loosescan=on,firstmatch=on,duplicateweedout=on,"
    "subquery_materialization_cost_based=on,use_index_extensions=on,"
    "condition_fanout_filter=on,derived_merge=on,use_invisible_indexes=off,skip_scan=on,"
    "hash_join=on,subquery_to_derived=off,prefer_ordering_index=on,"
    "derived_condition_pushdown=on"
)
"""MySQL 8.0's default optimizer_switch (accepted and shown; rpl has one plan)."""


def client_session_variables() -> list[SystemVariable]:
    """The variables clients and tools set or read when they connect (mysqldump,
    percona-toolkit, connectors, ORMs), with MySQL 8.0's scopes, defaults and ranges.
    Those whose behaviour the server has take effect (sql_quote_show_create: SHOW
    CREATE TABLE's quoting; sql_notes: whether notes are kept as warnings); the others
    are kept and shown, as a client that sets them expects.
    """
    both = Scope.BOTH
    return [
        _bool("sql_quote_show_create", True, both, "SHOW CREATE TABLE quotes identifiers"),
        _bool("sql_notes", True, both, "Note-level diagnostics are kept as warnings"),
        _bool("sql_warnings", False, both),
        _bool("sql_auto_is_null", False, both),
        _bool("sql_safe_updates", False, both),
        _bool("sql_big_selects", True, both),
        _bool("sql_buffer_result", False, both),
        _bool("big_tables", False, both),
        _bool("old_alter_table", False, both),
        _bool("explicit_defaults_for_timestamp", True, both),
        _bool("low_priority_updates", False, both),
        _int(
            "lock_wait_timeout",
            31536000,
            1,
            31536000,
            both,
            "seconds a statement waits for a table lock (LOCK TABLES, FLUSH TABLES WITH READ LOCK)",
        ),
        _int("group_concat_max_len", 1024, 4, U64, both),
        _int("div_precision_increment", 4, 0, 30, both),
        _int("information_schema_stats_expiry", 86400, 0, 31536000, both),
        _int("max_join_size", U64, 1, U64, both),
        _int("max_sort_length", 1024, 4, 8388608, both),
        _int("max_heap_table_size", 16777216, 16384, U64, both),
        _int("tmp_table_size", 16777216, 1024, U64, both),
        _int("sort_buffer_size", 262144, 32768, U64, both),
        _int("join_buffer_size", 262144, 128, U64, both),
        _int("read_buffer_size", 131072, 8192, 2147479552, both),
        _int("long_query_time", 10, 0, 31536000, both),
        _int("default_week_format", 0, 0, 7, both),
        _int("net_retry_count", 10, 1, U64, both),
        _str("optimizer_switch", OPTIMIZER_SWITCH),
        _str("character_set_filesystem", "binary"),
        _str("default_tmp_storage_engine", "InnoDB"),
        _str("lc_time_names", "en_US"),
        _str("lc_messages", "en_US"),
        _ro("version_compile_os", VarType.STR, "Linux"),
        _ro("version_compile_machine", VarType.STR, "x86_64"),
        _ro("innodb_version", VarType.STR, SERVER_VERSION.split("-", 1)[0]),
        _ro("have_openssl", VarType.STR, "DISABLED"),
        _ro("have_query_cache", VarType.STR, "NO"),
        _ro("lower_case_file_system", VarType.BOOL, False),
        _ro("default_authentication_plugin", VarType.STR, "mysql_native_password"),
        _ro("max_digest_length", VarType.INT, 1024),
    ]


# ------------------------------------------------------------ values and effects
_CHARSETS = frozenset(str(row[0]) for row in CHARACTER_SET_ROWS) | {"utf8"}
_COLLATIONS = frozenset(str(row[0]) for row in COLLATION_ROWS)
_COLLATIONS |= {name.replace("utf8mb3_", "utf8_") for name in _COLLATIONS}
"""The names SET accepts: information_schema's, and MySQL 8.0's aliases ``utf8`` and
``utf8_*`` of utf8mb3 (dumps and older clients still send them)."""
_OFFSET = re.compile(r"[+-](\d{1,2}):(\d{2})\Z")


_DEFAULT_COLLATIONS = {str(row[0]): str(row[1]) for row in CHARACTER_SET_ROWS}
_CHARSET_OF = {str(row[0]): str(row[1]) for row in COLLATION_ROWS}
DEFAULT_CHARSET = "utf8mb4"


def _canonical_charset(name: str) -> str:
    """A character set's name as MySQL 8.0 reports it (``utf8`` is ``utf8mb3``)."""
    lowered = name.lower()
    return "utf8mb3" if lowered == "utf8" else lowered


def _canonical_collation(name: str) -> str:
    lowered = name.lower()
    return "utf8mb3_" + lowered[5:] if lowered.startswith("utf8_") else lowered


def set_names(charset: str | None, collation: str | None) -> dict[str, object]:
    """SET NAMES charset [COLLATE collation] (DEFAULT: utf8mb4): the session values of
    character_set_client, _connection, _results and collation_connection (the
    character set's default collation unless one is named). 1115 for an unknown
    character set, 1273 for an unknown collation, 1253 for one of another character set.
    """
    chosen = _canonical_charset(charset or DEFAULT_CHARSET)
    _charset("character_set_client", chosen)
    if collation is None:
        connection_collation = _DEFAULT_COLLATIONS[chosen]
    else:
        _collation("collation_connection", collation)
        connection_collation = _canonical_collation(collation)
        if _CHARSET_OF[connection_collation] != chosen:
            raise MySQLError.of(ER_COLLATION_CHARSET_MISMATCH, collation, charset)
    names = ("character_set_client", "character_set_connection", "character_set_results")
    return {**dict.fromkeys(names, chosen), "collation_connection": connection_collation}


def set_character_set(session: Session, charset: str | None) -> dict[str, object]:
    """SET CHARACTER SET charset (DEFAULT: utf8mb4): character_set_client and _results
    become it; the connection's character set and collation become the database's.
    """
    chosen = _canonical_charset(charset or DEFAULT_CHARSET)
    _charset("character_set_client", chosen)
    return {
        "character_set_client": chosen,
        "character_set_results": chosen,
        "character_set_connection": session.variable("character_set_database", None),
        "collation_connection": session.variable("collation_database", None),
    }


def _charset(name: str, value: object) -> None:
    if value is not None and str(value).lower() not in _CHARSETS:
        raise MySQLError.of(ER_UNKNOWN_CHARACTER_SET, value)


def _collation(name: str, value: object) -> None:
    if str(value).lower() not in _COLLATIONS:
        raise MySQLError.of(ER_UNKNOWN_COLLATION, value)


def _time_zone(name: str, value: object) -> None:
    """SYSTEM, UTC or an offset from -13:59 to +14:00 (named zones need the time zone
    tables, which the server does not have): ER_UNKNOWN_TIME_ZONE otherwise.
    """
    text = str(value)
    if text.upper() in ("SYSTEM", "UTC"):
        return
    match = _OFFSET.match(text)
    if match is not None and int(match[2]) < 60:
        minutes = (int(match[1]) * 60 + int(match[2])) * (-1 if text[0] == "-" else 1)
        if -(13 * 60 + 59) <= minutes <= 14 * 60:
            return
    raise MySQLError.of(ER_UNKNOWN_TIME_ZONE, text)


VALUE_CHECKS: dict[str, Callable[[str, object], None]] = {
    "character_set_client": _charset,
    "character_set_connection": _charset,
    "character_set_results": _charset,
    "character_set_server": _charset,
    "character_set_database": _charset,
    "character_set_filesystem": _charset,
    "collation_connection": _collation,
    "collation_server": _collation,
    "collation_database": _collation,
    "time_zone": _time_zone,
}
"""Variables whose values are names MySQL checks with its own error (1115, 1273, 1298)
rather than ER_WRONG_VALUE_FOR_VAR; run by SET in both scopes."""


def check_value(session: Session, name: str, value: object) -> None:
    """MySQL's error for assigning ``value`` to the variable ``name`` (canonical name),
    beyond its type and range: unknown character sets, collations and time zones, and
    sql_log_bin's rules (SUPER, SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN, and
    never inside a transaction: its events would be half logged).
    """
    check = VALUE_CHECKS.get(name)
    if check is not None:
        check(name, value)
    if name == "sql_log_bin":
        session.require("SUPER", "SYSTEM_VARIABLES_ADMIN", "SESSION_VARIABLES_ADMIN")
        if session.in_transaction:
            raise MySQLError.of(ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_SQL_LOG_BIN)


def apply_session_value(session: Session, name: str, value: object) -> None:
    """The effect of a session variable the session holds as state of its own:
    sql_log_bin switches the session's binlogging (its changes are not logged, so a
    replica never sees them, as with MySQL).
    """
    if name == "sql_log_bin":
        session.binlogging = bool(value)


_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z0-9_$\x80-\U0010ffff]+\Z")


def identifier_quoter(session: Session) -> Callable[[str], str]:
    """How SHOW CREATE TABLE writes a name for ``session``: in backticks while
    sql_quote_show_create is on (the default); else bare, unless the name is a reserved
    word, all digits, or holds a character outside identifiers (as MySQL's
    ``get_quote_char_for_identifier``).
    """
    from rpl.core.sql.ast import quote_identifier

    if session.variable("sql_quote_show_create", None):
        return quote_identifier

    def quote(name: str) -> str:
        bare = _PLAIN_IDENTIFIER.match(name) and not name.isdigit()
        return name if bare and name.upper() not in RESERVED else quote_identifier(name)

    return quote


def check_safe_update(session: Session, statement: ast.Update | ast.Delete) -> None:
    """ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE under sql_safe_updates for an UPDATE or DELETE
    with no LIMIT whose WHERE names no key column (the first column of the primary key
    or of an index): it would change every row by mistake. A table that does not exist
    is left to the statement to report.
    """
    if statement.limit is not None or not session.variable("sql_safe_updates", None):
        return
    db = statement.table.schema or session.db
    engine = session.server.engine
    if db is None or not engine.has_database(db) or statement.table.name not in engine.tables(db):
        return
    schema = engine.table(db, statement.table.name).schema
    keys = {c[0].lower() for c in (schema.primary_key, *schema.indexes.values()) if c}
    named = {c.name.lower() for c in _columns(statement.where)}
    if not keys & named:
        raise MySQLError.of(ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE)


def _columns(node: object) -> Iterator[ast.Column]:
    """The column references in an expression tree (attrs nodes and tuples of them)."""
    if isinstance(node, ast.Column):
        yield node
    elif isinstance(node, tuple):
        for item in node:
            yield from _columns(item)
    else:
        for field in getattr(type(node), "__attrs_attrs__", ()):
            yield from _columns(getattr(node, field.name))
