"""The server's own system variables, with MySQL 8.0's types, defaults, ranges and scopes.

Variables that are really properties of the running server (``gtid_executed``,
``server_uuid``, ``port``...) are read-only; their values are filled in at start,
or computed at each read (:data:`COMPUTED`, resolved by the session).
"""

from __future__ import annotations

from rpl.core.execution.threadpool import ONE_THREAD_PER_CONNECTION, POOL_OF_THREADS
from rpl.observers import Scope, SystemVariable, VarType

SERVER_VERSION = "8.0.36-rpl"
VERSION_COMMENT = "rpl - MySQL replication plugin architecture in Python"
U32 = 4294967295


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
        _int("lock_wait_timeout", 31536000, 1, 31536000, both),
        _ro("innodb_rollback_on_timeout", VarType.BOOL, False),
        _int("innodb_flush_log_at_trx_commit", 1, 0, 2),
        _int("max_connections", 151, 1, 100000),
        _int("max_allowed_packet", 67108864, 1024, 1073741824, both),
        _int("net_buffer_length", 16384, 1024, 1048576, both),
        _int("net_read_timeout", 30, 1, 31536000, both),
        _int("net_write_timeout", 60, 1, 31536000, both),
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
        _str(
            "sql_mode",
            "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
            "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
        ),
        SystemVariable(
            "transaction_isolation",
            VarType.ENUM,
            "REPEATABLE-READ",
            "consistent reads see the transaction's first read view (REPEATABLE-READ, "
            "SERIALIZABLE) or one per statement (READ-COMMITTED, READ-UNCOMMITTED)",
            scope=both,
            enum_values=("READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"),
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
        _ro("performance_schema", VarType.BOOL, False),
        _ro("license", VarType.STR, "GPL"),
        _ro("skip_name_resolve", VarType.BOOL, True),
        _str("init_connect", "", Scope.GLOBAL),
        *thread_pool_variables(),
        _int("sql_select_limit", 2**64 - 1, 0, 2**64 - 1, both),
        _int("max_execution_time", 0, 0, U32, both),
        *replication_variables(datadir, port),
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
