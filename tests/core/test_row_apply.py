"""Rows events applied through the applier's path (RelayTransaction -> apply_transaction ->
RowApplier) in a server running in this process: every DML shape in FULL and MINIMAL,
1032 and 1062 in STRICT and IDEMPOTENT, a statement split over several rows events, and
bad input that must stop the applier with MySQL's error and position, nothing applied.

The events are the ones the source writes: a source session logs the statement, and
its binlog events are read back and fed to a second server's applier session.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from rpl.core.binlog.events import (
    GTID_LOG_EVENT,
    HEADER_LEN,
    ROWS_QUERY_LOG_EVENT,
    STMT_END_F,
    TABLE_MAP_EVENT,
    WRITE_ROWS_EVENT,
    GtidEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    encode_event,
)
from rpl.core.binlog.logfile import read_events
from rpl.core.errors import MySQLError
from rpl.core.execution.session import Session
from rpl.core.instance.server import Server, ServerConfig
from rpl.core.replication.relay_transaction import RelayTransaction, apply_transaction

TABLE = "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), n INT, b BLOB)"


def started_pair(tmp_path: Path, table: str = TABLE) -> Iterator[tuple[Server, Server]]:
    """A server whose binlog gives the events and one that applies them, each with
    database ``d`` and ``table``; shut down when the generator ends.
    """
    servers = [
        Server(ServerConfig(datadir=tmp_path / name, port=0, server_id=i + 1))
        for i, name in enumerate(("source", "replica"))
    ]
    for server in servers:
        server.start()
        run(server, "CREATE DATABASE d", table)
    yield servers[0], servers[1]
    for server in servers:
        server.shutdown()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """:func:`started_pair` with ``d.t`` of :data:`TABLE`."""
    yield from started_pair(tmp_path)


def run(server: Server, *statements: str) -> list[tuple[Any, ...]]:
    connection = pymysql.connect(host="127.0.0.1", port=server.port, user="root", autocommit=True)
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
        result = list(cursor.fetchall())
    connection.close()
    return result


def table(server: Server) -> list[tuple[Any, ...]]:
    return run(server, "SELECT id, v, n, b FROM d.t ORDER BY id")


def last_transaction(server: Server) -> list[tuple[int, bytes, int]]:
    """(type code, body, end log_pos) of each event of the source's last transaction."""
    binlog = server.binlog
    events: list[tuple[int, bytes, int]] = []
    for entry in read_events(binlog.directory / binlog.end.file):
        raw = encode_event(
            entry.event,
            server_id=entry.header.server_id,
            timestamp=entry.header.timestamp,
            checksum=False,
        )
        if entry.header.type_code == GTID_LOG_EVENT:
            events = []
        events.append((entry.header.type_code, raw[HEADER_LEN:], entry.header.log_pos))
    return events


def relay(events: list[tuple[int, bytes, int]], gno: int) -> RelayTransaction:
    """The transaction as the applier reads it, under a GTID of its own."""
    gtid = encode_event(
        GtidEvent(uuid.UUID(int=gno), gno), server_id=1, timestamp=1, checksum=False
    )
    transaction = RelayTransaction(gtid[HEADER_LEN:], 1, 1)
    transaction.source_file = "binlog.000001"
    for code, body, log_pos in events[1:]:
        transaction.add(code, body, log_pos)
    return transaction


def apply(replica: Server, transaction: RelayTransaction) -> None:
    session = Session(replica, None, "", 9999)
    try:
        apply_transaction(session, transaction, 0, lambda: False)
    finally:
        session.close()


class Replication:
    """Statements run on the source; each transaction applied on the replica."""

    def __init__(self, source: Server, replica: Server) -> None:
        self.source, self.replica = source, replica
        self.gno = 0

    def __call__(self, *statements: str) -> list[tuple[int, bytes, int]]:
        run(self.source, *statements)
        events = last_transaction(self.source)
        self.gno += 1
        apply(self.replica, relay(events, self.gno))
        return events

    def same(self) -> bool:
        return table(self.source) == table(self.replica)


SHAPES = [
    "INSERT INTO d.t VALUES (1, 'a', 1, 'x'), (2, 'b', 2, NULL), (3, NULL, 3, 'z')",
    "UPDATE d.t SET id = 10 WHERE id = 1",
    "UPDATE d.t SET n = n + 100 WHERE id > 0",
    "REPLACE INTO d.t VALUES (2, 'replaced', 7, 'r')",
    "UPDATE d.t SET b = 'blob changed' WHERE id = 3",
    "DELETE FROM d.t WHERE id IN (2, 3)",
]


@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
def test_each_dml_shape_applies_to_the_same_rows(pair: tuple[Server, Server], image: str) -> None:
    source, replica = pair
    run(source, f"SET GLOBAL binlog_row_image = {image}")
    replicate = Replication(source, replica)
    for statement in SHAPES:
        events = replicate(statement)
        codes = [code for code, _, _ in events]
        assert TABLE_MAP_EVENT in codes, (statement, codes)
        assert replicate.same(), statement
    assert table(replica) == [(10, "a", 101, b"x")]


def _rows_events(events: list[tuple[int, bytes, int]]) -> list[RowsEvent]:
    return [RowsEvent.decode_body(body) for code, body, _ in events if code in (30, 31, 32)]


def test_minimal_image_logs_the_key_before_and_the_changed_columns_after(
    pair: tuple[Server, Server],
) -> None:
    source, replica = pair
    replicate = Replication(source, replica)
    replicate("INSERT INTO d.t VALUES (1, 'a', 1, 'x')")
    run(source, "SET GLOBAL binlog_row_image = MINIMAL")
    events = replicate("UPDATE d.t SET n = 5 WHERE id = 1")
    (rows,) = _rows_events(events)
    assert rows.columns == (True, False, False, False)
    body = next(body for code, body, _ in events if code == 31)
    assert UpdateRowsEvent.decode_body(body).columns_after == (False, False, True, False)
    events = replicate("DELETE FROM d.t WHERE id = 1")
    (rows,) = _rows_events(events)
    assert rows.columns == (True, False, False, False)
    assert replicate.same()


def test_a_statement_split_over_several_rows_events(tmp_path: Path) -> None:
    source = Server(
        ServerConfig(
            datadir=tmp_path / "source",
            port=0,
            options={"binlog-row-event-max-size": "256"},
        )
    )
    replica = Server(ServerConfig(datadir=tmp_path / "replica", port=0, server_id=2))
    for server in (source, replica):
        server.start()
        run(server, "CREATE DATABASE d", TABLE)
    try:
        values = ",".join(f"({i}, 'value {i}', {i}, NULL)" for i in range(200))
        events = Replication(source, replica)(f"INSERT INTO d.t VALUES {values}")
        rows = _rows_events(events)
        assert len(rows) > 5
        assert [r.flags & STMT_END_F for r in rows] == [0] * (len(rows) - 1) + [STMT_END_F]
        assert all(len(r.rows_data) <= 256 for r in rows)
        assert table(source) == table(replica) and len(table(replica)) == 200
    finally:
        source.shutdown()
        replica.shutdown()


def test_rows_query_event_carries_the_statement(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    run(source, "SET GLOBAL binlog_rows_query_log_events = ON")
    events = Replication(source, replica)("INSERT INTO d.t VALUES (1, 'a', 1, NULL)")
    codes = [code for code, _, _ in events]
    assert codes.index(ROWS_QUERY_LOG_EVENT) < codes.index(TABLE_MAP_EVENT)
    body = events[codes.index(ROWS_QUERY_LOG_EVENT)][1]
    assert body[1:] == b"INSERT INTO d.t VALUES (1, 'a', 1, NULL)"


def _fails(replica: Server, transaction: RelayTransaction) -> MySQLError:
    before = table(replica)
    with pytest.raises(MySQLError) as caught:
        apply(replica, transaction)
    assert table(replica) == before, "a failed transaction left changes behind"
    return caught.value


def test_missing_row_is_1032_strict_and_skipped_idempotent(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    replicate = Replication(source, replica)
    replicate("INSERT INTO d.t VALUES (1, 'a', 1, NULL), (2, 'b', 2, NULL)")
    run(replica, "DELETE FROM d.t WHERE id = 2")
    run(source, "UPDATE d.t SET n = n + 1")
    events = last_transaction(source)
    error = _fails(replica, relay(events, 50))
    end_log_pos = next(pos for code, _, pos in events if code == 31)
    assert error.errno == 1032
    assert error.message == (
        "Could not execute Update_rows event on table d.t; Can't find record in 't', "
        "Error_code: 1032; handler error HA_ERR_KEY_NOT_FOUND; the event's master log "
        f"binlog.000001, end_log_pos {end_log_pos}"
    )
    run(replica, "SET GLOBAL replica_exec_mode = IDEMPOTENT")
    apply(replica, relay(events, 51))
    assert table(replica) == [(1, "a", 2, None)]
    run(source, "DELETE FROM d.t WHERE id = 2")
    apply(replica, relay(last_transaction(source), 52))
    run(replica, "SET GLOBAL replica_exec_mode = STRICT")
    run(source, "DELETE FROM d.t WHERE id = 1")
    run(replica, "DELETE FROM d.t WHERE id = 1")
    assert _fails(replica, relay(last_transaction(source), 53)).errno == 1032


def test_duplicate_is_1062_strict_and_overwritten_idempotent(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    run(replica, "INSERT INTO d.t VALUES (2, 'local', 0, NULL)")
    run(source, "INSERT INTO d.t VALUES (1, 'a', 1, NULL), (2, 'source', 2, NULL)")
    events = last_transaction(source)
    error = _fails(replica, relay(events, 60))
    assert error.errno == 1062 and error.sqlstate == "23000"
    assert error.message.startswith(
        "Could not execute Write_rows event on table d.t; Duplicate entry '2' for key "
        "'t.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; the event's "
        "master log binlog.000001, end_log_pos "
    )
    run(replica, "SET GLOBAL slave_exec_mode = 'IDEMPOTENT'")
    apply(replica, relay(events, 61))
    assert table(replica) == table(source)


def _corrupt(events: list[tuple[int, bytes, int]], code: int, change: Any) -> list[Any]:
    return [(c, change(body) if c == code else body, pos) for c, body, pos in events]


def test_unknown_table_id_stops_with_1610(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    run(source, "INSERT INTO d.t VALUES (1, 'a', 1, NULL)")
    events = [e for e in last_transaction(source) if e[0] != TABLE_MAP_EVENT]
    error = _fails(replica, relay(events, 70))
    assert error.errno == 1610
    assert "Could not execute Write_rows event; Corrupted replication event" in error.message
    assert "was not mapped by a TABLE_MAP" in error.message and "end_log_pos" in error.message


def test_truncated_row_stops_with_1610(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    run(source, "INSERT INTO d.t VALUES (1, 'a long enough value', 1, NULL)")
    events = _corrupt(last_transaction(source), WRITE_ROWS_EVENT, lambda body: body[:-6])
    error = _fails(replica, relay(events, 71))
    assert error.errno == 1610 and "on table d.t" in error.message


def test_table_definition_mismatch_stops_with_1535_or_1677(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    run(source, "CREATE TABLE d.u (id INT PRIMARY KEY, v INT)")
    run(replica, "CREATE TABLE d.u (id INT PRIMARY KEY, v VARCHAR(10))")
    run(source, "CREATE TABLE d.w (id INT PRIMARY KEY)")
    run(replica, "CREATE TABLE d.w (id INT PRIMARY KEY, extra INT)")
    run(source, "INSERT INTO d.u VALUES (1, 1)")
    error = _fails(replica, relay(last_transaction(source), 80))
    assert error.errno == 1677
    assert "Column 1 of table 'd.u' cannot be converted from type" in error.message
    run(source, "INSERT INTO d.w VALUES (1)")
    error = _fails(replica, relay(last_transaction(source), 81))
    assert error.errno == 1535
    assert "Table definition on master and slave does not match" in error.message


def test_rows_event_column_count_unlike_its_table_map_stops(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    run(source, "INSERT INTO d.t VALUES (1, 'a', 1, NULL)")

    def narrower(body: bytes) -> bytes:
        table_map = TableMapEvent.decode_body(body)
        return TableMapEvent(
            table_map.table_id, table_map.db, table_map.table, table_map.columns[:3]
        ).encode_body()

    events = _corrupt(last_transaction(source), TABLE_MAP_EVENT, narrower)
    error = _fails(replica, relay(events, 90))
    assert error.errno == 1535


def test_a_failed_row_leaves_nothing_of_its_transaction(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    replicate = Replication(source, replica)
    replicate("INSERT INTO d.t VALUES (1, 'a', 1, NULL), (2, 'b', 2, NULL)")
    run(replica, "DELETE FROM d.t WHERE id = 2")
    run(
        source,
        "BEGIN",
        "INSERT INTO d.t VALUES (3, 'c', 3, NULL)",
        "UPDATE d.t SET v = 'changed' WHERE id = 1",
        "DELETE FROM d.t WHERE id = 2",
        "COMMIT",
    )
    error = _fails(replica, relay(last_transaction(source), 100))
    assert error.errno == 1032 and "Delete_rows" in error.message
    assert table(replica) == [(1, "a", 1, None)]


def test_binlog_format_variables_and_their_errors(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    connection = pymysql.connect(host="127.0.0.1", port=source.port, user="root")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT @@global.binlog_format, @@session.binlog_format, @@binlog_row_image, "
            "@@binlog_row_metadata, @@binlog_rows_query_log_events, "
            "@@binlog_row_event_max_size, @@transaction_write_set_extraction, "
            "@@replica_exec_mode"
        )
        assert cursor.fetchall() == (
            ("ROW", "ROW", "FULL", "MINIMAL", 0, 8192, "XXHASH64", "STRICT"),
        )
        cursor.execute("BEGIN")
        with pytest.raises(pymysql.err.OperationalError) as caught:
            cursor.execute("SET SESSION binlog_format = STATEMENT")
        assert caught.value.args == (
            1679,
            "Cannot modify @@session.binlog_format inside a transaction",
        )
        cursor.execute("COMMIT")
        with pytest.raises(pymysql.err.OperationalError) as caught:
            cursor.execute("SET SESSION transaction_write_set_extraction = OFF")
        assert caught.value.args[0] == 1231
        cursor.execute("SET SESSION binlog_format = STATEMENT")
        cursor.execute("SET SESSION transaction_write_set_extraction = OFF")
        with pytest.raises(pymysql.err.OperationalError) as caught:
            cursor.execute("SET SESSION binlog_format = ROW")
        assert caught.value.args == (
            1231,
            "Variable 'binlog_format' can't be set to the value of 'ROW'",
        )
        with pytest.raises(pymysql.err.OperationalError) as caught:
            cursor.execute("SET GLOBAL binlog_row_event_max_size = 1024")
        assert caught.value.args[0] == 1238
        cursor.execute("SELECT @@session.binlog_format, @@global.binlog_format")
        assert cursor.fetchall() == (("STATEMENT", "ROW"),)
    connection.close()


def test_gtid_flags_say_whether_a_transaction_is_rows_only(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    run(source, "INSERT INTO d.t VALUES (1, 'a', 1, NULL)")
    assert last_transaction(source)[0][1][0] == 0, "rows only: no FLAG_MAY_HAVE_SBR"
    run(source, "SET SESSION binlog_format = STATEMENT", "INSERT INTO d.t VALUES (2, 'b', 2, NULL)")
    assert last_transaction(source)[0][1][0] == 1
    run(source, "CREATE TABLE d.x (id INT PRIMARY KEY)")
    assert last_transaction(source)[0][1][0] == 1, "DDL may have statements"
