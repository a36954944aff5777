"""INSERT / REPLACE ... SELECT and ON DUPLICATE KEY UPDATE: results and OK packets through
PyMySQL against a real rpl server process, and replication in ROW and STATEMENT format
(the binlog carries the inserted rows, never the query, so a replica ends identical).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from test_row_apply import Replication, run, started_pair

from rpl.core.binlog.events import QUERY_EVENT, UPDATE_ROWS_EVENT, WRITE_ROWS_EVENT
from rpl.core.instance.server import Server

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str | None, str]:
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    error = info.value
    return error.args[0], getattr(error, "sqlstate", None), error.args[1]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


def info(cursor: Any) -> str:
    raw: bytes = cursor.connection._result.message
    return raw[1:].decode()


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    name = f"instest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.execute("CREATE TABLE src (id INT PRIMARY KEY, v VARCHAR(10), n INT)")
    cursor.execute("CREATE TABLE dst (id INT PRIMARY KEY, v VARCHAR(10), n INT DEFAULT 7)")
    cursor.execute("INSERT INTO src VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
    yield cursor
    connection.close()


def test_insert_select(cur: Any) -> None:
    assert cur.execute("INSERT INTO dst SELECT * FROM src WHERE id < 3") == 2
    assert info(cur) == "Records: 2  Duplicates: 0  Warnings: 0"
    assert cur.execute("INSERT INTO dst (id, v) SELECT id + 10, UPPER(v) FROM src") == 3
    assert rows(cur, "SELECT * FROM dst ORDER BY id") == [
        (1, "a", 10),
        (2, "b", 20),
        (11, "A", 7),
        (12, "B", 7),
        (13, "C", 7),
    ]
    # reading the target table: the rows are read before any is inserted
    assert cur.execute("INSERT INTO dst SELECT id + 100, v, n FROM dst") == 5
    assert rows(cur, "SELECT COUNT(*) FROM dst") == [(10,)]
    # with a join, a GROUP BY and a subquery
    cur.execute("DELETE FROM dst")
    cur.execute(
        "INSERT INTO dst (id, v, n) SELECT s.id, MAX(s.v), SUM(s.n) FROM src s JOIN src t "
        "ON t.id = s.id WHERE s.id IN (SELECT id FROM src WHERE n > 10) GROUP BY s.id"
    )
    assert rows(cur, "SELECT * FROM dst ORDER BY id") == [(2, "b", 20), (3, "c", 30)]


def test_duplicates_replace_ignore_and_on_duplicate_key_update(cur: Any) -> None:
    cur.execute("INSERT INTO dst VALUES (1, 'old', 1)")
    assert fail(cur, "INSERT INTO dst SELECT * FROM src")[:2] == (1062, "23000")
    assert rows(cur, "SELECT * FROM dst") == [(1, "old", 1)]  # nothing half-applied
    assert cur.execute("INSERT IGNORE INTO dst SELECT * FROM src") == 2
    assert info(cur) == "Records: 3  Duplicates: 1  Warnings: 1"
    assert cur.execute("REPLACE INTO dst (id, v, n) SELECT id, 'r', n FROM src WHERE id <= 2") == 4
    assert rows(cur, "SELECT * FROM dst ORDER BY id") == [(1, "r", 10), (2, "r", 20), (3, "c", 30)]
    assert (
        cur.execute(
            "INSERT INTO dst SELECT id, v, n FROM src ON DUPLICATE KEY UPDATE "
            "n = n + VALUES(n), v = CONCAT(v, '+')"
        )
        == 6
    )
    assert rows(cur, "SELECT * FROM dst ORDER BY id") == [
        (1, "r+", 20),
        (2, "r+", 40),
        (3, "c+", 60),
    ]
    assert cur.execute("INSERT INTO dst VALUES (9, 'n', 1) ON DUPLICATE KEY UPDATE n = 0") == 1
    assert cur.execute("INSERT INTO dst VALUES (9, 'n', 1) ON DUPLICATE KEY UPDATE n = 1") == 0
    assert cur.execute("INSERT INTO dst VALUES (9, 'n', 1) ON DUPLICATE KEY UPDATE n = 5") == 2
    assert rows(cur, "SELECT n FROM dst WHERE id = 9") == [(5,)]


def test_insert_select_errors(cur: Any) -> None:
    assert fail(cur, "INSERT INTO dst SELECT id FROM src") == (
        1136,
        "21S01",
        "Column count doesn't match value count at row 1",
    )
    assert fail(cur, "INSERT INTO dst SELECT nope FROM src")[:2] == (1054, "42S22")
    assert fail(cur, "INSERT INTO dst (id, v) SELECT id, v FROM missing")[:2] == (1146, "42S02")
    assert rows(cur, "SELECT COUNT(*) FROM dst") == [(0,)]


TABLE = "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), n INT)"


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    yield from started_pair(tmp_path, TABLE)


@pytest.mark.parametrize("binlog_format", ["ROW", "STATEMENT"])
def test_insert_select_replicates_as_rows(pair: tuple[Server, Server], binlog_format: str) -> None:
    source, replica = pair
    run(source, f"SET GLOBAL binlog_format = {binlog_format}")
    replicate = Replication(source, replica)
    replicate("INSERT INTO d.t VALUES (1, 'a', 1), (2, 'b', 2)")
    for statement in (
        "INSERT INTO d.t SELECT id + 10, CONCAT(v, '!'), n * 2 FROM d.t",
        "REPLACE INTO d.t (id, v, n) SELECT id, UPPER(v), n + 1 FROM d.t WHERE id < 10",
        "INSERT INTO d.t SELECT id, v, n FROM d.t WHERE id = 1 ON DUPLICATE KEY UPDATE n = 100",
        "INSERT INTO d.t (id, v, n) SELECT 50, @@server_id, COUNT(*) FROM d.t",
    ):
        events = replicate(statement)
        codes = [code for code, _, _ in events]
        queries = [body for code, body, _ in events if code == QUERY_EVENT]
        if binlog_format == "ROW":
            assert {WRITE_ROWS_EVENT, UPDATE_ROWS_EVENT} & set(codes), statement
            assert not any(b"SELECT" in body for body in queries), queries
        elif "@@server_id" in statement:
            # it would compute another value on the replica: logged as the rows it made
            assert any(b"INSERT INTO `d`.`t`" in body for body in queries), queries
            assert not any(b"SELECT" in body for body in queries), queries
        else:
            # replays to the same rows on the replica's equal data: logged as written
            assert any(statement.encode() in body for body in queries), queries
    expected = [
        (1, "A", 100),
        (2, "B", 3),
        (11, "a!", 2),
        (12, "b!", 4),
        (50, "1", 4),
    ]
    query = "SELECT id, v, n FROM d.t ORDER BY id"
    assert run(source, query) == expected
    assert run(replica, query) == expected


CHECKSUMS = (
    "CREATE TABLE d.checksums (db CHAR(64) NOT NULL, tbl CHAR(64) NOT NULL, chunk INT NOT NULL, "
    "this_cnt INT, this_crc CHAR(40), PRIMARY KEY (db, tbl, chunk))"
)
CHUNK = (
    "REPLACE INTO d.checksums (db, tbl, chunk, this_cnt, this_crc) SELECT 'd', 't', {chunk}, "
    "COUNT(*) AS cnt, COALESCE(LOWER(CONV(BIT_XOR(CAST(CRC32(CONCAT_WS('#', id, v, n, "
    "CONCAT(ISNULL(v), ISNULL(n)))) AS UNSIGNED)), 10, 16)), 0) AS crc "
    "FROM d.t FORCE INDEX(PRIMARY) WHERE ((id >= {low})) AND ((id <= {high}))"
)


def test_checksum_chunks_run_on_the_replicas_own_rows(pair: tuple[Server, Server]) -> None:
    """pt-table-checksum's way: in STATEMENT format the REPLACE ... SELECT runs again on
    the replica, so a row changed behind replication's back shows in that chunk only."""
    source, replica = pair
    for server in (source, replica):
        run(server, CHECKSUMS)
    replicate = Replication(source, replica)
    replicate("INSERT INTO d.t VALUES " + ",".join(f"({i}, 'v{i}', {i})" for i in range(1, 21)))
    run(replica, "UPDATE d.t SET v = 'drifted' WHERE id = 15")
    for chunk, (low, high) in enumerate(((1, 10), (11, 20)), 1):
        replicate(
            "SET SESSION binlog_format = 'STATEMENT'",
            CHUNK.format(chunk=chunk, low=low, high=high),
        )
    query = "SELECT chunk, this_cnt, this_crc FROM d.checksums ORDER BY chunk"
    on_source, on_replica = run(source, query), run(replica, query)
    assert [r[:2] for r in on_source] == [(1, 10), (2, 10)] == [r[:2] for r in on_replica]
    assert on_source[0][2] == on_replica[0][2]  # the equal chunk
    assert on_source[1][2] != on_replica[1][2]  # the chunk with the drifted row
