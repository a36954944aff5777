"""performance_schema against real rpl server processes: the variable and status tables
agree with SHOW VARIABLES / SHOW STATUS, and the replication tables show a real replica's
channel as SHOW SLAVE STATUS does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import (
    create_replication_user,
    replicate,
    slave_status,
    wait_for,
)


def rows(cursor: Any, sql: str, *args: object) -> list[tuple[Any, ...]]:
    cursor.execute(sql, args or None)
    return list(cursor.fetchall())


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    yield connection.cursor()
    connection.close()


def test_global_variables_match_show_global_variables(cur: Any) -> None:
    table = rows(cur, "SELECT * FROM performance_schema.global_variables")
    assert [d[0] for d in cur.description] == ["VARIABLE_NAME", "VARIABLE_VALUE"]
    shown = rows(cur, "SHOW GLOBAL VARIABLES")
    assert table == shown
    assert rows(
        cur,
        "SELECT VARIABLE_VALUE FROM performance_schema.global_variables "
        "WHERE VARIABLE_NAME = 'transaction_isolation'",
    ) == [("REPEATABLE-READ",)]


def test_session_variables_show_this_sessions_values(cur: Any) -> None:
    cur.execute("SET SESSION sql_quote_show_create = 0, SESSION wait_timeout = 77")
    query = (
        "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.session_variables "
        "WHERE VARIABLE_NAME IN ('sql_quote_show_create', 'wait_timeout', 'server_id') "
        "ORDER BY VARIABLE_NAME"
    )
    assert rows(cur, query) == [
        ("server_id", "1"),
        ("sql_quote_show_create", "OFF"),
        ("wait_timeout", "77"),
    ]
    assert rows(
        cur,
        "SELECT VARIABLE_VALUE FROM performance_schema.global_variables "
        "WHERE VARIABLE_NAME = 'wait_timeout'",
    ) == [("28800",)]


def test_status_tables_match_show_status(cur: Any) -> None:
    got = dict(rows(cur, "SELECT * FROM performance_schema.global_status"))
    assert set(got) == {r[0] for r in rows(cur, "SHOW GLOBAL STATUS")}
    assert "Uptime" in got or "Binlog_commits" in got
    session = dict(rows(cur, "SELECT * FROM performance_schema.session_status"))
    assert set(session) == set(got)


def test_threads_running_counts_sessions_not_sleeping(server: Any, cur: Any) -> None:
    """pt-table-checksum's --max-load reads Threads_running: this session runs, an idle
    one sleeps."""
    idle = server.connect()
    try:
        query = (
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.global_status "
            "WHERE VARIABLE_NAME LIKE 'Threads_%' ORDER BY VARIABLE_NAME"
        )
        got = dict(rows(cur, query))
        assert got["Threads_running"] == "1"
        assert int(got["Threads_connected"]) >= 2
    finally:
        idle.close()


def test_threads_and_use_performance_schema(cur: Any) -> None:
    cur.execute("USE performance_schema")
    tables = [r[0] for r in rows(cur, "SHOW TABLES")]
    assert tables == [
        "global_status",
        "global_variables",
        "replication_applier_configuration",
        "replication_applier_status",
        "replication_applier_status_by_coordinator",
        "replication_applier_status_by_worker",
        "replication_connection_configuration",
        "replication_connection_status",
        "replication_group_members",
        "session_status",
        "session_variables",
        "threads",
    ]
    assert [d[0] for d in cur.description] == ["Tables_in_performance_schema"]
    found = rows(cur, "SELECT * FROM threads")
    assert [d[0] for d in cur.description] == [
        "THREAD_ID",
        "NAME",
        "TYPE",
        "PROCESSLIST_ID",
        "PROCESSLIST_USER",
        "PROCESSLIST_HOST",
        "PROCESSLIST_DB",
        "PROCESSLIST_COMMAND",
        "PROCESSLIST_TIME",
        "PROCESSLIST_STATE",
        "PROCESSLIST_INFO",
        "THREAD_OS_ID",
    ]
    mine = [r for r in found if r[10] == "SELECT * FROM threads"]  # this session
    assert [(r[1], r[2], r[6], r[7]) for r in mine] == [
        ("thread/sql/one_connection", "FOREGROUND", "performance_schema", "Query")
    ]


@pytest.mark.parametrize(
    "table",
    [
        "replication_connection_configuration",
        "replication_connection_status",
        "replication_applier_configuration",
        "replication_applier_status",
        "replication_applier_status_by_coordinator",
        "replication_applier_status_by_worker",
        "replication_group_members",
    ],
)
def test_replication_tables_empty_on_a_server_that_is_no_replica(cur: Any, table: str) -> None:
    assert rows(cur, f"SELECT * FROM performance_schema.{table}") == []


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    source = ServerProcess(tmp_path / "source").start()
    replica = ServerProcess(tmp_path / "replica", options=["--server-id", "2"]).start()
    try:
        yield source, replica
    finally:
        replica.stop()
        source.stop()


def test_replication_tables_of_a_running_replica(pair: tuple[ServerProcess, ServerProcess]) -> None:
    source, replica = pair
    create_replication_user(source)
    replicate(replica, source)
    source.query("CREATE DATABASE ps")
    gtids = source.query("SELECT @@GLOBAL.gtid_executed")[0][0]
    wait_for(lambda: replica.query("SELECT @@GLOBAL.gtid_executed")[0][0] == gtids, 20, "apply")
    status = slave_status(replica)
    connection = replica.connect()
    cursor = connection.cursor()
    assert rows(
        cursor,
        "SELECT CHANNEL_NAME, HOST, PORT, USER, AUTO_POSITION, CONNECTION_RETRY_INTERVAL, "
        "HEARTBEAT_INTERVAL FROM performance_schema.replication_connection_configuration",
    ) == [("", "127.0.0.1", source.port, "repl", "1", 60, pytest.approx(30))]
    wait_for(
        lambda: (
            rows(
                cursor,
                "SELECT SERVICE_STATE FROM performance_schema.replication_connection_status",
            )
            == [("ON",)]
        ),
        20,
        "the receiver to connect",
    )
    got = rows(
        cursor,
        "SELECT SOURCE_UUID, SERVICE_STATE, RECEIVED_TRANSACTION_SET, LAST_ERROR_NUMBER, "
        "LAST_ERROR_TIMESTAMP FROM performance_schema.replication_connection_status",
    )
    assert got == [
        (status["Master_UUID"], "ON", status["Retrieved_Gtid_Set"], 0, _zero_timestamp(got))
    ]
    assert rows(
        cursor,
        "SELECT CHANNEL_NAME, SERVICE_STATE, COUNT_TRANSACTIONS_RETRIES "
        "FROM performance_schema.replication_applier_status",
    ) == [("", "ON", 0)]
    assert rows(
        cursor,
        "SELECT WORKER_ID, SERVICE_STATE, LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE "
        "FROM performance_schema.replication_applier_status_by_worker",
    ) == [(0, "ON", 0, "")]
    # single-threaded, as MySQL with replica_parallel_workers=0: no coordinator
    assert (
        rows(cursor, "SELECT * FROM performance_schema.replication_applier_status_by_coordinator")
        == []
    )
    replica.query("STOP SLAVE")
    assert rows(
        cursor,
        "SELECT SERVICE_STATE, THREAD_ID FROM performance_schema.replication_applier_status_by_"
        "worker",
    ) == [("OFF", None)]
    assert rows(
        cursor, "SELECT SERVICE_STATE FROM performance_schema.replication_connection_status"
    ) == [("OFF",)]
    connection.close()


def _zero_timestamp(got: list[tuple[Any, ...]]) -> Any:
    """The zero timestamp as PyMySQL hands it back (a string it cannot parse as a date)."""
    value = got[0][4]
    assert value in ("0000-00-00 00:00:00.000000", None), value
    return value
