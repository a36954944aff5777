"""performance_schema's variable, status and replication tables, and the ``mysql``
schema's account tables, computed at each read (see :mod:`virtual_tables`).

The replication tables are defined here, empty; the replica channel, a higher layer,
fills them at start (``VirtualTables.provide``) from the state SHOW SLAVE STATUS reads.
"""

from __future__ import annotations

import time
import typing
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from rpl.core.accounts import DATABASE_PRIVILEGES
from rpl.core.engine.schema import TableSchema
from rpl.core.execution.virtual_tables import definition, visible_sessions
from rpl.core.sql import ast
from rpl.core.sql.redact import redacted

if TYPE_CHECKING:
    from rpl.core.execution.session import Session
    from rpl.core.execution.virtual_tables import Computed, RowsOf

P_S = "performance_schema"
MYSQL = "mysql"


def _variables_table(name: str) -> TableSchema:
    return definition(
        P_S,
        name,
        """
        VARIABLE_NAME varchar(64) NOT NULL
        VARIABLE_VALUE varchar(1024)
        """,
        ("VARIABLE_NAME",),
    )


THREADS = definition(
    P_S,
    "threads",
    """
    THREAD_ID bigint unsigned NOT NULL
    NAME varchar(128) NOT NULL
    TYPE varchar(10) NOT NULL
    PROCESSLIST_ID bigint unsigned
    PROCESSLIST_USER varchar(32)
    PROCESSLIST_HOST varchar(255)
    PROCESSLIST_DB varchar(64)
    PROCESSLIST_COMMAND varchar(16)
    PROCESSLIST_TIME bigint
    PROCESSLIST_STATE varchar(64)
    PROCESSLIST_INFO longtext
    THREAD_OS_ID bigint unsigned
    """,
    ("THREAD_ID",),
)

_CHANNEL = "CHANNEL_NAME char(64) NOT NULL"
_TS = "timestamp(6)"

REPLICATION_CONNECTION_CONFIGURATION = definition(
    P_S,
    "replication_connection_configuration",
    f"""
    {_CHANNEL}
    HOST char(255) NOT NULL
    PORT int NOT NULL
    USER char(32) NOT NULL
    NETWORK_INTERFACE char(60) NOT NULL
    AUTO_POSITION enum('1','0') NOT NULL
    SSL_ALLOWED enum('YES','NO','IGNORED') NOT NULL
    SSL_CA_FILE varchar(512) NOT NULL
    SSL_CA_PATH varchar(512) NOT NULL
    SSL_CERTIFICATE varchar(512) NOT NULL
    SSL_CIPHER varchar(512) NOT NULL
    SSL_KEY varchar(512) NOT NULL
    SSL_VERIFY_SERVER_CERTIFICATE enum('YES','NO') NOT NULL
    SSL_CRL_FILE varchar(255) NOT NULL
    SSL_CRL_PATH varchar(255) NOT NULL
    CONNECTION_RETRY_INTERVAL int NOT NULL
    CONNECTION_RETRY_COUNT bigint unsigned NOT NULL
    HEARTBEAT_INTERVAL decimal(11,3) unsigned NOT NULL
    TLS_VERSION varchar(255) NOT NULL
    PUBLIC_KEY_PATH varchar(512) NOT NULL
    GET_PUBLIC_KEY enum('YES','NO') NOT NULL
    NETWORK_NAMESPACE varchar(64) NOT NULL
    COMPRESSION_ALGORITHM char(64) NOT NULL
    ZSTD_COMPRESSION_LEVEL int NOT NULL
    TLS_CIPHERSUITES text
    SOURCE_CONNECTION_AUTO_FAILOVER enum('1','0') NOT NULL
    GTID_ONLY enum('1','0') NOT NULL
    """,
    ("CHANNEL_NAME",),
)

REPLICATION_CONNECTION_STATUS = definition(
    P_S,
    "replication_connection_status",
    f"""
    {_CHANNEL}
    GROUP_NAME char(36) NOT NULL
    SOURCE_UUID char(36) NOT NULL
    THREAD_ID bigint unsigned
    SERVICE_STATE enum('ON','OFF','CONNECTING') NOT NULL
    COUNT_RECEIVED_HEARTBEATS bigint unsigned NOT NULL
    LAST_HEARTBEAT_TIMESTAMP {_TS} NOT NULL
    RECEIVED_TRANSACTION_SET longtext NOT NULL
    LAST_ERROR_NUMBER int NOT NULL
    LAST_ERROR_MESSAGE varchar(1024) NOT NULL
    LAST_ERROR_TIMESTAMP {_TS} NOT NULL
    LAST_QUEUED_TRANSACTION char(57)
    LAST_QUEUED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP {_TS} NOT NULL
    LAST_QUEUED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP {_TS} NOT NULL
    LAST_QUEUED_TRANSACTION_START_QUEUE_TIMESTAMP {_TS} NOT NULL
    LAST_QUEUED_TRANSACTION_END_QUEUE_TIMESTAMP {_TS} NOT NULL
    QUEUEING_TRANSACTION char(57)
    QUEUEING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP {_TS} NOT NULL
    QUEUEING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP {_TS} NOT NULL
    QUEUEING_TRANSACTION_START_QUEUE_TIMESTAMP {_TS} NOT NULL
    """,
    ("CHANNEL_NAME",),
)

REPLICATION_APPLIER_CONFIGURATION = definition(
    P_S,
    "replication_applier_configuration",
    f"""
    {_CHANNEL}
    DESIRED_DELAY int NOT NULL
    PRIVILEGE_CHECKS_USER text
    REQUIRE_ROW_FORMAT enum('YES','NO') NOT NULL
    REQUIRE_TABLE_PRIMARY_KEY_CHECK enum('STREAM','ON','OFF','GENERATE') NOT NULL
    ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_TYPE enum('OFF','LOCAL','UUID') NOT NULL
    ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_VALUE text
    """,
    ("CHANNEL_NAME",),
)

REPLICATION_APPLIER_STATUS = definition(
    P_S,
    "replication_applier_status",
    f"""
    {_CHANNEL}
    SERVICE_STATE enum('ON','OFF') NOT NULL
    REMAINING_DELAY int unsigned
    COUNT_TRANSACTIONS_RETRIES bigint unsigned NOT NULL
    """,
    ("CHANNEL_NAME",),
)

_APPLIER_PROGRESS = f"""
    LAST_ERROR_NUMBER int NOT NULL
    LAST_ERROR_MESSAGE varchar(1024) NOT NULL
    LAST_ERROR_TIMESTAMP {_TS} NOT NULL
"""

REPLICATION_APPLIER_STATUS_BY_COORDINATOR = definition(
    P_S,
    "replication_applier_status_by_coordinator",
    f"""
    {_CHANNEL}
    THREAD_ID bigint unsigned
    SERVICE_STATE enum('ON','OFF') NOT NULL
    {_APPLIER_PROGRESS}
    LAST_PROCESSED_TRANSACTION char(57)
    LAST_PROCESSED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP {_TS} NOT NULL
    LAST_PROCESSED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP {_TS} NOT NULL
    LAST_PROCESSED_TRANSACTION_START_BUFFER_TIMESTAMP {_TS} NOT NULL
    LAST_PROCESSED_TRANSACTION_END_BUFFER_TIMESTAMP {_TS} NOT NULL
    PROCESSING_TRANSACTION char(57)
    PROCESSING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP {_TS} NOT NULL
    PROCESSING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP {_TS} NOT NULL
    PROCESSING_TRANSACTION_START_BUFFER_TIMESTAMP {_TS} NOT NULL
    """,
    ("CHANNEL_NAME",),
)

REPLICATION_APPLIER_STATUS_BY_WORKER = definition(
    P_S,
    "replication_applier_status_by_worker",
    f"""
    {_CHANNEL}
    WORKER_ID bigint unsigned NOT NULL
    THREAD_ID bigint unsigned
    SERVICE_STATE enum('ON','OFF') NOT NULL
    {_APPLIER_PROGRESS}
    LAST_APPLIED_TRANSACTION char(57)
    LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP {_TS} NOT NULL
    LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP {_TS} NOT NULL
    LAST_APPLIED_TRANSACTION_START_APPLY_TIMESTAMP {_TS} NOT NULL
    LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP {_TS} NOT NULL
    APPLYING_TRANSACTION char(57)
    APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP {_TS} NOT NULL
    APPLYING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP {_TS} NOT NULL
    APPLYING_TRANSACTION_START_APPLY_TIMESTAMP {_TS} NOT NULL
    LAST_APPLIED_TRANSACTION_RETRIES_COUNT bigint unsigned NOT NULL
    LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER int NOT NULL
    LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE varchar(1024)
    LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_TIMESTAMP {_TS} NOT NULL
    APPLYING_TRANSACTION_RETRIES_COUNT bigint unsigned NOT NULL
    APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER int NOT NULL
    APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE varchar(1024)
    APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_TIMESTAMP {_TS} NOT NULL
    """,
    ("CHANNEL_NAME", "WORKER_ID"),
)

REPLICATION_GROUP_MEMBERS = definition(
    P_S,
    "replication_group_members",
    f"""
    {_CHANNEL}
    MEMBER_ID char(36) NOT NULL
    MEMBER_HOST char(255) NOT NULL
    MEMBER_PORT int
    MEMBER_STATE char(64) NOT NULL
    MEMBER_ROLE char(64) NOT NULL
    MEMBER_VERSION char(64) NOT NULL
    MEMBER_COMMUNICATION_STACK char(64) NOT NULL
    """,
    ("CHANNEL_NAME", "MEMBER_ID"),
)

REPLICATION_TABLES = (
    REPLICATION_CONNECTION_CONFIGURATION,
    REPLICATION_CONNECTION_STATUS,
    REPLICATION_APPLIER_CONFIGURATION,
    REPLICATION_APPLIER_STATUS,
    REPLICATION_APPLIER_STATUS_BY_COORDINATOR,
    REPLICATION_APPLIER_STATUS_BY_WORKER,
    REPLICATION_GROUP_MEMBERS,
)
"""Empty until a feature provides their rows (the replica channel; Group Replication)."""

_PRIV = "enum('N','Y') NOT NULL"

USER_PRIVILEGE_COLUMNS = (
    ("Select_priv", "SELECT"),
    ("Insert_priv", "INSERT"),
    ("Update_priv", "UPDATE"),
    ("Delete_priv", "DELETE"),
    ("Create_priv", "CREATE"),
    ("Drop_priv", "DROP"),
    ("Reload_priv", "RELOAD"),
    ("Shutdown_priv", "SHUTDOWN"),
    ("Process_priv", "PROCESS"),
    ("File_priv", "FILE"),
    ("Grant_priv", "GRANT OPTION"),
    ("References_priv", "REFERENCES"),
    ("Index_priv", "INDEX"),
    ("Alter_priv", "ALTER"),
    ("Show_db_priv", "SHOW DATABASES"),
    ("Super_priv", "SUPER"),
    ("Create_tmp_table_priv", "CREATE TEMPORARY TABLES"),
    ("Lock_tables_priv", "LOCK TABLES"),
    ("Execute_priv", "EXECUTE"),
    ("Repl_slave_priv", "REPLICATION SLAVE"),
    ("Repl_client_priv", "REPLICATION CLIENT"),
    ("Create_view_priv", "CREATE VIEW"),
    ("Show_view_priv", "SHOW VIEW"),
    ("Create_routine_priv", "CREATE ROUTINE"),
    ("Alter_routine_priv", "ALTER ROUTINE"),
    ("Create_user_priv", "CREATE USER"),
    ("Event_priv", "EVENT"),
    ("Trigger_priv", "TRIGGER"),
    ("Create_tablespace_priv", "CREATE TABLESPACE"),
)
"""mysql.user's privilege columns in MySQL 8.0's order, each with the privilege it shows
(Create_role_priv and Drop_role_priv come later in the table)."""

_LINES = "\n".join

USER = definition(
    MYSQL,
    "user",
    _LINES(
        [
            "Host char(255) NOT NULL",
            "User char(32) NOT NULL",
            *(f"{column} {_PRIV}" for column, _ in USER_PRIVILEGE_COLUMNS),
            "ssl_type enum('','ANY','X509','SPECIFIED') NOT NULL",
            "ssl_cipher blob NOT NULL",
            "x509_issuer blob NOT NULL",
            "x509_subject blob NOT NULL",
            "max_questions int unsigned NOT NULL",
            "max_updates int unsigned NOT NULL",
            "max_connections int unsigned NOT NULL",
            "max_user_connections int unsigned NOT NULL",
            "plugin char(64) NOT NULL",
            "authentication_string text",
            f"password_expired {_PRIV}",
            "password_last_changed timestamp",
            "password_lifetime smallint unsigned",
            f"account_locked {_PRIV}",
            f"Create_role_priv {_PRIV}",
            f"Drop_role_priv {_PRIV}",
            "Password_reuse_history smallint unsigned",
            "Password_reuse_time smallint unsigned",
            "Password_require_current enum('N','Y')",
            "User_attributes json",
        ]
    ),
    ("Host", "User"),
)

DB_PRIVILEGE_COLUMNS = (
    ("Select_priv", "SELECT"),
    ("Insert_priv", "INSERT"),
    ("Update_priv", "UPDATE"),
    ("Delete_priv", "DELETE"),
    ("Create_priv", "CREATE"),
    ("Drop_priv", "DROP"),
    ("Grant_priv", "GRANT OPTION"),
    ("References_priv", "REFERENCES"),
    ("Index_priv", "INDEX"),
    ("Alter_priv", "ALTER"),
    ("Create_tmp_table_priv", "CREATE TEMPORARY TABLES"),
    ("Lock_tables_priv", "LOCK TABLES"),
    ("Create_view_priv", "CREATE VIEW"),
    ("Show_view_priv", "SHOW VIEW"),
    ("Create_routine_priv", "CREATE ROUTINE"),
    ("Alter_routine_priv", "ALTER ROUTINE"),
    ("Execute_priv", "EXECUTE"),
    ("Event_priv", "EVENT"),
    ("Trigger_priv", "TRIGGER"),
)
"""mysql.db's privilege columns in MySQL 8.0's order."""

assert {p for _, p in DB_PRIVILEGE_COLUMNS} - {"GRANT OPTION"} == DATABASE_PRIVILEGES

DB = definition(
    MYSQL,
    "db",
    _LINES(
        [
            "Host char(255) NOT NULL",
            "Db char(64) NOT NULL",
            "User char(32) NOT NULL",
            *(f"{column} {_PRIV}" for column, _ in DB_PRIVILEGE_COLUMNS),
        ]
    ),
    ("Host", "Db", "User"),
)

_TABLE_PRIVILEGES = ",".join(
    f"'{p}'"
    for p in (
        "Select Insert Update Delete Create Drop Grant References Index Alter".split()
        + ["Create View", "Show view", "Trigger"]
    )
)

TABLES_PRIV = definition(
    MYSQL,
    "tables_priv",
    f"""
    Host char(255) NOT NULL
    Db char(64) NOT NULL
    User char(32) NOT NULL
    Table_name char(64) NOT NULL
    Grantor varchar(288) NOT NULL
    Timestamp timestamp NOT NULL
    Table_priv set({_TABLE_PRIVILEGES}) NOT NULL
    Column_priv set('Select','Insert','Update','References') NOT NULL
    """,
    ("Host", "Db", "User", "Table_name"),
)


HELP_TOPIC = definition(
    MYSQL,
    "help_topic",
    """
    help_topic_id int unsigned NOT NULL
    name char(64) NOT NULL
    help_category_id smallint unsigned NOT NULL
    description text NOT NULL
    example text NOT NULL
    url text NOT NULL
    """,
    ("help_topic_id",),
)

SHOW_TOPICS: tuple[str, ...] = tuple(f"SHOW {kind}" for kind in typing.get_args(ast.ShowKind))
"""mysql.help_topic's rows: one per SHOW statement the server knows (what mycli completes
after SHOW), without help texts."""


def _help_topics(session: Session) -> Iterable[Computed]:
    return [(number, name, 0, "", "", "") for number, name in enumerate(SHOW_TOPICS, 1)]


def _yes(held: bool) -> str:
    return "Y" if held else "N"


def _user_rows(session: Session) -> Iterable[Computed]:
    """mysql.user: one row per account, a privilege column 'Y' where the account holds it
    globally (GRANT OPTION: the account's grant option).
    """
    for account in session.server.accounts.export():
        held: set[str] = set(account["global_privileges"])  # type: ignore[call-overload]
        if account["grant_option"]:
            held.add("GRANT OPTION")
        yield (
            account["host"],
            account["user"],
            *(_yes(p in held) for _, p in USER_PRIVILEGE_COLUMNS),
            "",
            b"",
            b"",
            b"",
            0,
            0,
            0,
            0,
            "mysql_native_password",
            account["password_hash"],
            "N",
            None,
            None,
            "N",
            _yes("CREATE ROLE" in held),
            _yes("DROP ROLE" in held),
            None,
            None,
            None,
            None,
        )


def _db_rows(session: Session) -> Iterable[Computed]:
    """mysql.db: one row per account and database it holds privileges on."""
    for account in session.server.accounts.export():
        per_db: Mapping[str, set[str]] = account["database_privileges"]  # type: ignore[assignment]
        for db, held in sorted(per_db.items()):
            if held:
                columns = (_yes(p in held) for _, p in DB_PRIVILEGE_COLUMNS)
                yield (account["host"], db, account["user"], *columns)


def _threads(session: Session) -> Iterable[Computed]:
    """performance_schema.threads: the registered threads, and a foreground
    ``thread/sql/one_connection`` row per client session the reader may see that no
    registered thread serves (its PROCESSLIST_* as SHOW PROCESSLIST shows them).
    """
    now = time.monotonic()
    sessions = {s.thread_id: s for s in visible_sessions(session)}
    rows: list[Computed] = []
    for row in session.server.threads.rows():
        served = sessions.pop(row.processlist_id, None) if row.processlist_id else None
        pid, user, host, db, seconds, info = _processlist_columns(served, row.processlist_id, now)
        rows.append(
            (
                row.thread_id,
                row.name,
                row.type,
                pid,
                user,
                host,
                db,
                row.processlist_command,
                seconds,
                row.processlist_state,
                info,
                row.thread_os_id,
            )
        )
    for client in sessions.values():
        pid, user, host, db, seconds, info = _processlist_columns(client, client.thread_id, now)
        rows.append(
            (
                client.perf_thread_id,
                "thread/sql/one_connection",
                "FOREGROUND",
                pid,
                user,
                host,
                db,
                client.command,
                seconds,
                client.state or None,
                info,
                None,
            )
        )
    return sorted(rows, key=lambda r: int(r[0]))  # type: ignore[call-overload]


def _processlist_columns(
    served: Session | None, processlist_id: int | None, now: float
) -> tuple[object, ...]:
    """PROCESSLIST_ID, _USER, _HOST, _DB, _TIME and _INFO of the session ``served``."""
    if served is None:
        return (processlist_id, None, None, None, None, None)
    return (
        processlist_id,
        served.user,
        served.host,
        served.db,
        int(now - served.started),
        redacted(served.info),
    )


def _global_variables(session: Session) -> Iterable[Computed]:
    server = session.server
    rows = dict(server.variables.show())
    for name in server.computed_variables:
        rows[name] = session.display(session.variable(name, "GLOBAL"))
    return sorted(rows.items())


def _session_variables(session: Session) -> Iterable[Computed]:
    """Every variable as this session sees it: its own value of a session variable,
    the global value of the others (as MySQL's session_variables lists them all).
    """
    rows = dict(_global_variables(session))  # type: ignore[arg-type]
    for name, value in session.session_vars.items():
        rows[name] = session.display(value)
    for name in session.server.computed_variables:
        rows[name] = session.display(session.variable(name, None))
    return sorted(rows.items())


def _status(session: Session) -> Iterable[Computed]:
    return session.server.status.show()


def _nothing(session: Session) -> Iterable[Computed]:
    return ()


def tables() -> list[tuple[TableSchema, RowsOf]]:
    """performance_schema's and the mysql schema's tables, with their rows."""
    return [
        (THREADS, _threads),
        (_variables_table("global_variables"), _global_variables),
        (_variables_table("session_variables"), _session_variables),
        (_variables_table("global_status"), _status),
        (_variables_table("session_status"), _status),
        *((schema, _nothing) for schema in REPLICATION_TABLES),
        (USER, _user_rows),
        (DB, _db_rows),
        (TABLES_PRIV, _nothing),
        (HELP_TOPIC, _help_topics),
    ]
