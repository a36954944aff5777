"""The session variables clients and tools set, against a real rpl server process:
MySQL 8.0's defaults and scopes, MySQL's errors for bad values, and their effects where
the server has the behaviour (sql_quote_show_create, sql_notes, sql_log_bin, SET
TRANSACTION, transaction_read_only)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import create_replication_user, replicate, wait_for

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str]:
    """Run ``sql``, which must fail: (errno, message)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    return info.value.args[0], info.value.args[1]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    db = f"svtest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {db}")
    cursor.execute(f"USE {db}")
    cursor.db = db
    yield cursor
    connection.close()


DEFAULTS = [
    ("sql_quote_show_create", 1, "BOTH"),
    ("sql_notes", 1, "BOTH"),
    ("sql_auto_is_null", 0, "BOTH"),
    ("sql_safe_updates", 0, "BOTH"),
    ("big_tables", 0, "BOTH"),
    ("old_alter_table", 0, "BOTH"),
    ("explicit_defaults_for_timestamp", 1, "BOTH"),
    ("lock_wait_timeout", 31536000, "BOTH"),
    ("innodb_lock_wait_timeout", 50, "BOTH"),
    ("transaction_isolation", "REPEATABLE-READ", "BOTH"),
    ("transaction_read_only", 0, "BOTH"),
    ("wait_timeout", 28800, "BOTH"),
    ("interactive_timeout", 28800, "BOTH"),
    ("net_read_timeout", 30, "BOTH"),
    ("net_write_timeout", 60, "BOTH"),
    ("net_buffer_length", 16384, "BOTH"),
    ("max_allowed_packet", 67108864, "BOTH"),
    ("sql_select_limit", 18446744073709551615, "BOTH"),
    ("max_execution_time", 0, "BOTH"),
    ("time_zone", "SYSTEM", "BOTH"),
    ("group_concat_max_len", 1024, "BOTH"),
    ("div_precision_increment", 4, "BOTH"),
    ("default_storage_engine", "InnoDB", "BOTH"),
    ("information_schema_stats_expiry", 86400, "BOTH"),
    ("character_set_client", "utf8mb4", "BOTH"),
    ("character_set_results", "utf8mb4", "BOTH"),
    ("collation_connection", "utf8mb4_0900_ai_ci", "BOTH"),
    ("lower_case_table_names", 0, "GLOBAL"),
    ("version_compile_os", "Linux", "GLOBAL"),
    ("have_ssl", "DISABLED", "GLOBAL"),
    ("innodb_version", "8.0.36", "GLOBAL"),
    ("protocol_version", 10, "GLOBAL"),
    ("license", "GPL", "GLOBAL"),
    ("performance_schema", 1, "GLOBAL"),
    ("sql_log_bin", 1, "SESSION"),
]


@pytest.mark.parametrize(("name", "default", "scope"), DEFAULTS)
def test_default_and_scope(cur: Any, name: str, default: object, scope: str) -> None:
    if scope != "SESSION":
        assert rows(cur, f"SELECT @@GLOBAL.{name}") == [(default,)]
    else:
        assert fail(cur, f"SELECT @@GLOBAL.{name}") == (
            1238,
            f"Variable '{name}' is a SESSION variable",
        )
    if scope != "GLOBAL":
        assert rows(cur, f"SELECT @@SESSION.{name}") == [(default,)]
    else:
        assert fail(cur, f"SELECT @@SESSION.{name}") == (
            1238,
            f"Variable '{name}' is a GLOBAL variable",
        )


def test_optimizer_switch_is_mysqls(cur: Any) -> None:
    switches = rows(cur, "SELECT @@optimizer_switch")[0][0].split(",")
    assert switches[:2] == ["index_merge=on", "index_merge_union=on"]
    assert "hash_join=on" in switches and "batched_key_access=off" in switches


def test_bad_values_get_mysqls_errors(cur: Any) -> None:
    assert fail(cur, "SET sql_notes = 'maybe'") == (
        1231,
        "Variable 'sql_notes' can't be set to the value of 'maybe'",
    )
    assert fail(cur, "SET transaction_isolation = 'SNAPSHOT'") == (
        1231,
        "Variable 'transaction_isolation' can't be set to the value of 'SNAPSHOT'",
    )
    assert fail(cur, "SET lock_wait_timeout = 'x'") == (
        1232,
        "Incorrect argument type to variable 'lock_wait_timeout'",
    )
    assert fail(cur, "SET @@SESSION.version_compile_os = 'x'") == (
        1238,
        "Variable 'version_compile_os' is a read only variable",
    )
    assert fail(cur, "SET SESSION lower_case_table_names = 1")[0] == 1238
    assert fail(cur, "SET GLOBAL sql_log_bin = 0") == (
        1228,
        "Variable 'sql_log_bin' is a SESSION variable and can't be used with SET GLOBAL",
    )
    assert fail(cur, "SET tx_isolation = 'READ-COMMITTED'") == (
        1193,
        "Unknown system variable 'tx_isolation'",
    )
    assert fail(cur, "SET time_zone = 'Mars/Olympus'") == (
        1298,
        "Unknown or incorrect time zone: 'Mars/Olympus'",
    )
    assert fail(cur, "SET time_zone = '+14:01'")[0] == 1298
    assert fail(cur, "SET NAMES klingon") == (1115, "Unknown character set: 'klingon'")
    assert fail(cur, "SET character_set_results = 'klingon'")[0] == 1115
    assert fail(cur, "SET collation_connection = 'utf8mb4_klingon_ci'") == (
        1273,
        "Unknown collation: 'utf8mb4_klingon_ci'",
    )
    cur.execute("SET lock_wait_timeout = 0")
    assert rows(cur, "SHOW WARNINGS") == [
        ("Warning", 1292, "Truncated incorrect lock_wait_timeout value: '0'")
    ]
    assert rows(cur, "SELECT @@lock_wait_timeout") == [(1,)]


def test_set_names_and_character_set(cur: Any) -> None:
    query = (
        "SELECT @@character_set_client, @@character_set_connection, "
        "@@character_set_results, @@collation_connection"
    )
    cur.execute("SET NAMES latin1")
    assert rows(cur, query) == [("latin1", "latin1", "latin1", "latin1_swedish_ci")]
    cur.execute("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci")
    assert rows(cur, query) == [("utf8mb4", "utf8mb4", "utf8mb4", "utf8mb4_unicode_ci")]
    cur.execute("SET NAMES utf8")
    assert rows(cur, query) == [("utf8mb3", "utf8mb3", "utf8mb3", "utf8mb3_general_ci")]
    assert fail(cur, "SET NAMES utf8mb4 COLLATE latin1_bin") == (
        1253,
        "COLLATION 'latin1_bin' is not valid for CHARACTER SET 'utf8mb4'",
    )
    cur.execute("SET CHARACTER SET latin1")
    assert rows(cur, query) == [("latin1", "utf8mb4", "latin1", "utf8mb4_0900_ai_ci")]
    cur.execute("SET NAMES DEFAULT")
    assert rows(cur, query) == [("utf8mb4", "utf8mb4", "utf8mb4", "utf8mb4_0900_ai_ci")]


def test_what_client_tools_send_first(cur: Any) -> None:
    """percona-toolkit's first statements, and mysqldump's / mariadb-dump's header."""
    cur.execute(
        "SET @@SQL_QUOTE_SHOW_CREATE = 1/*!40101, @@SQL_MODE='NO_AUTO_VALUE_ON_ZERO,"
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES'*/"
    )
    cur.execute("SET SESSION wait_timeout=10000")
    for statement in (
        "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */",
        "/*!40101 SET NAMES utf8mb4 */",
        "/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */",
        "/*!40103 SET TIME_ZONE='+00:00' */",
        "/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */",
        "/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */",
        "/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */",
    ):
        cur.execute(statement)
    assert rows(cur, "SELECT @@time_zone, @@sql_notes, @@wait_timeout") == [("SYSTEM", 1, 10000)]


def test_sql_quote_show_create(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id int PRIMARY KEY, `order` int, `two words` int, n int)")
    quoted = rows(cur, "SHOW CREATE TABLE t")[0][1]
    assert quoted.startswith(
        "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `order` int DEFAULT NULL,"
    )
    cur.execute("SET sql_quote_show_create = OFF")
    assert rows(cur, "SHOW CREATE TABLE t")[0][1] == (
        "CREATE TABLE t (\n  id int NOT NULL,\n  `order` int DEFAULT NULL,\n"
        "  `two words` int DEFAULT NULL,\n  n int DEFAULT NULL,\n"
        "  PRIMARY KEY (id)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )


SAFE_MODE = (
    1175,
    "You are using safe update mode and you tried to update a table without a WHERE that uses "
    "a KEY column. To disable safe mode, toggle the option in Preferences -> SQL Editor and "
    "reconnect.",
)


def test_sql_safe_updates(cur: Any) -> None:
    """``mysql --safe-updates`` sets it: an UPDATE or DELETE needs a key column in its
    WHERE, or a LIMIT; a refused one changes nothing."""
    cur.execute("CREATE TABLE su (id int PRIMARY KEY, v int, w int, KEY kv (v))")
    cur.execute("INSERT INTO su VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3)")
    cur.execute("SET sql_safe_updates = 1")
    assert fail(cur, "UPDATE su SET w = 0") == SAFE_MODE
    assert fail(cur, "DELETE FROM su WHERE w = 1") == SAFE_MODE
    assert rows(cur, "SELECT w FROM su") == [(1,), (2,), (3,)]
    cur.execute("UPDATE su SET w = 0 WHERE v = 2")
    cur.execute("DELETE FROM su WHERE id = 1")
    cur.execute("DELETE FROM su WHERE w = 3 LIMIT 1")
    assert rows(cur, "SELECT id, w FROM su") == [(2, 0)]
    assert fail(cur, "UPDATE nosuch SET w = 1")[0] == 1146
    cur.execute("SET sql_safe_updates = 0")
    cur.execute("UPDATE su SET w = 9")
    assert rows(cur, "SELECT w FROM su") == [(9,)]


def test_sql_select_limit(cur: Any) -> None:
    cur.execute("CREATE TABLE sl (id int PRIMARY KEY)")
    cur.execute("INSERT INTO sl VALUES (1), (2), (3)")
    cur.execute("SET sql_select_limit = 2")
    assert rows(cur, "SELECT id FROM sl ORDER BY id DESC") == [(3,), (2,)]
    assert rows(cur, "SELECT id FROM sl LIMIT 3") == [(1,), (2,), (3,)]
    assert rows(cur, "SELECT COUNT(*) FROM sl") == [(3,)]
    cur.execute("SET sql_select_limit = 0")
    assert rows(cur, "SELECT 1") == []
    cur.execute("SET sql_select_limit = DEFAULT")
    assert rows(cur, "SELECT id FROM sl") == [(1,), (2,), (3,)]


def test_sql_notes_off_keeps_notes_out_of_warnings(cur: Any) -> None:
    cur.execute("DROP TABLE IF EXISTS nothing_here")
    assert rows(cur, "SHOW WARNINGS") == [("Note", 1051, f"Unknown table '{cur.db}.nothing_here'")]
    assert rows(cur, "SELECT @@warning_count") == [(1,)]
    cur.execute("SET sql_notes = 0")
    cur.execute("DROP TABLE IF EXISTS nothing_here")
    assert rows(cur, "SHOW WARNINGS") == []
    assert rows(cur, "SELECT @@warning_count") == [(0,)]
    cur.execute("SET sql_notes = 1")


def test_set_transaction_scopes(cur: Any) -> None:
    cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert rows(cur, "SELECT @@transaction_isolation, @@GLOBAL.transaction_isolation") == [
        ("READ-COMMITTED", "REPEATABLE-READ")
    ]
    cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
    # the next transaction's level only: the session's variable is unchanged
    assert rows(cur, "SELECT @@transaction_isolation") == [("READ-COMMITTED",)]
    cur.execute("BEGIN")
    assert fail(cur, "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED") == (
        1568,
        "Transaction characteristics can't be changed while a transaction is in progress",
    )
    cur.execute("COMMIT")
    cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    assert rows(cur, "SELECT @@transaction_isolation") == [("REPEATABLE-READ",)]


def test_a_transaction_keeps_its_characteristics(cur: Any) -> None:
    """SET SESSION inside a transaction is for the next one: the open transaction keeps
    READ WRITE (MySQL's rule), so its write goes through; the next one is READ ONLY."""
    cur.execute("CREATE TABLE kc (id int PRIMARY KEY)")
    cur.execute("BEGIN")
    cur.execute("SET SESSION TRANSACTION READ ONLY")
    cur.execute("INSERT INTO kc VALUES (1)")
    cur.execute("COMMIT")
    assert fail(cur, "INSERT INTO kc VALUES (2)")[0] == 1792
    cur.execute("SET SESSION TRANSACTION READ WRITE")
    cur.execute("INSERT INTO kc VALUES (3)")
    assert rows(cur, "SELECT id FROM kc") == [(1,), (3,)]


def test_read_only_transaction_refuses_writes(cur: Any) -> None:
    cur.execute("CREATE TABLE ro (id int PRIMARY KEY)")
    cur.execute("SET TRANSACTION READ ONLY")
    assert fail(cur, "INSERT INTO ro VALUES (1)") == (
        1792,
        "Cannot execute statement in a READ ONLY transaction.",
    )
    cur.execute("INSERT INTO ro VALUES (2)")  # the one-shot applied to one transaction only
    cur.execute("SET SESSION transaction_read_only = ON")
    cur.execute("BEGIN")
    assert rows(cur, "SELECT id FROM ro") == [(2,)]
    assert fail(cur, "DELETE FROM ro")[0] == 1792
    cur.execute("COMMIT")
    cur.execute("SET SESSION transaction_read_only = OFF")
    cur.execute("DELETE FROM ro")
    assert rows(cur, "SELECT COUNT(*) FROM ro") == [(0,)]


def test_sql_log_bin_needs_privilege_and_no_transaction(server: Any, cur: Any) -> None:
    cur.execute("CREATE USER 'nolog'@'%' IDENTIFIED BY 'pw'")
    cur.execute("GRANT INSERT, SELECT ON *.* TO 'nolog'@'%'")
    plain = server.connect(user="nolog", password="pw")
    try:
        errno, message = fail(plain.cursor(), "SET sql_log_bin = 0")
        assert errno == 1227
        assert message.startswith("Access denied; you need (at least one of) the SUPER")
        assert rows(plain.cursor(), "SELECT @@sql_log_bin") == [(1,)]
    finally:
        plain.close()
        cur.execute("DROP USER 'nolog'@'%'")
    cur.execute("CREATE TABLE l (id int PRIMARY KEY)")
    cur.execute("BEGIN")
    cur.execute("INSERT INTO l VALUES (1)")
    assert fail(cur, "SET sql_log_bin = 0") == (
        1694,
        "Cannot modify @@session.sql_log_bin inside a transaction",
    )
    cur.execute("COMMIT")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    source = ServerProcess(tmp_path / "source").start()
    replica = ServerProcess(tmp_path / "replica", options=["--server-id", "2"]).start()
    try:
        yield source, replica
    finally:
        replica.stop()
        source.stop()


def test_sql_log_bin_off_keeps_changes_out_of_the_binlog(
    pair: tuple[ServerProcess, ServerProcess],
) -> None:
    """Rows and DDL written with sql_log_bin=0 stay on the source: not in its binlog,
    not on its replica; logging resumes when it is back on."""
    source, replica = pair
    create_replication_user(source)
    replicate(replica, source)
    connection = source.connect()
    cursor = connection.cursor()
    cursor.execute("CREATE DATABASE lb")
    cursor.execute("CREATE TABLE lb.t (id int PRIMARY KEY, v varchar(10))")
    before = rows(cursor, "SELECT @@GLOBAL.gtid_executed")
    cursor.execute("SET sql_log_bin = 0")
    cursor.execute("INSERT INTO lb.t VALUES (1, 'local')")
    cursor.execute("CREATE TABLE lb.local_only (id int PRIMARY KEY)")
    assert rows(cursor, "SELECT @@GLOBAL.gtid_executed") == before
    cursor.execute("SET sql_log_bin = 1")
    cursor.execute("INSERT INTO lb.t VALUES (2, 'logged')")
    gtids = rows(cursor, "SELECT @@GLOBAL.gtid_executed")[0][0]
    assert gtids != before[0][0]
    wait_for(lambda: replica.query("SELECT @@GLOBAL.gtid_executed")[0][0] == gtids, 20, "apply")
    assert replica.query("SELECT id, v FROM lb.t") == [(2, "logged")]
    assert replica.query("SHOW TABLES FROM lb") == [("t",)]
    assert rows(cursor, "SELECT id, v FROM lb.t") == [(1, "local"), (2, "logged")]
    events = rows(cursor, "SHOW BINLOG EVENTS")
    assert not any("local_only" in str(e[5]) for e in events)
    connection.close()
    source.stop()  # a clean shutdown checkpoints the engine, unlogged rows included
    source.start()
    assert source.query("SELECT id, v FROM lb.t") == [(1, "local"), (2, "logged")]
