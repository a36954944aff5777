"""A mutation fuzzer over statements clients send: every mutated statement gets a
result or a MySQL error, never 1105 with Python's text, and the error log never holds a
traceback; the server serves on.

Each example takes a statement of :data:`CORPUS`, splits it into tokens and applies one
to four mutations (drop, repeat or swap tokens, put in a token of :data:`POOL`: extreme
numbers, deep nesting, keywords, odd punctuation and strings, bytes that are not UTF-8).
Hypothesis draws them from a fixed seed (``derandomize``), so a run is the same each
time and a failure replays; ``RPL_FUZZ_EXAMPLES`` sets how many (``tox -e faults`` runs
many more than the suite).
The pool leaves out what would end the test rather than the statement (SHUTDOWN, KILL,
SLEEP, GLOBAL settings).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpl.core.testing.process import ServerProcess

EXAMPLES = int(os.environ.get("RPL_FUZZ_EXAMPLES", "1500"))
SCHEMA = [
    "CREATE DATABASE IF NOT EXISTS f",
    "CREATE TABLE IF NOT EXISTS f.t (id INT PRIMARY KEY, v VARCHAR(20), n DECIMAL(8,2), "
    "d DATETIME, e ENUM('a','b'), j JSON, UNIQUE KEY uv (v))",
    "CREATE TABLE IF NOT EXISTS f.c (id INT PRIMARY KEY, t_id INT, "
    "FOREIGN KEY (t_id) REFERENCES f.t (id) ON DELETE CASCADE)",
]
CORPUS = [
    "SELECT id, v FROM f.t WHERE id = 1",
    "SELECT * FROM f.t WHERE id BETWEEN 1 AND 10 ORDER BY v DESC LIMIT 3",
    "SELECT COUNT(*), SUM(n), MAX(d) FROM f.t GROUP BY e HAVING COUNT(*) > 0",
    "SELECT t.id, c.id FROM f.t t LEFT JOIN f.c c ON c.t_id = t.id",
    "SELECT id FROM f.t WHERE id IN (SELECT t_id FROM f.c) UNION SELECT 7",
    "SELECT CAST(n AS SIGNED), CONCAT(v, 'x'), SUBSTRING(v, 2, 3), COALESCE(n, 0) FROM f.t",
    "SELECT JSON_EXTRACT(j, '$.a'), HEX(v), CRC32(v), LPAD(v, 5, '*') FROM f.t",
    "SELECT 1 + 2 * 3 - 4 / 5, 7 DIV 2, 7 % 3, -(-1), ~0, 1 << 3",
    "SELECT @x := 5, @x + 1, IF(1 > 0, 'a', 'b'), CASE WHEN 1 THEN 2 ELSE 3 END",
    "INSERT INTO f.t (id, v, n, d, e, j) VALUES (1, 'one', 1.50, '2024-01-02 03:04:05', "
    "'a', '{\"a\": 1}')",
    "INSERT INTO f.t VALUES (2, 'two', 2, NULL, 'b', NULL) ON DUPLICATE KEY UPDATE n = n + 1",
    "INSERT IGNORE INTO f.t SET id = 3, v = 'three'",
    "REPLACE INTO f.t (id, v) VALUES (4, 'four')",
    "INSERT INTO f.c VALUES (1, 1), (2, 2)",
    "UPDATE f.t SET n = n * 2, v = CONCAT(v, '!') WHERE id = 1",
    "DELETE FROM f.t WHERE id > 100 ORDER BY id LIMIT 1",
    "ALTER TABLE f.t ADD COLUMN extra INT DEFAULT 0",
    "CREATE TABLE f.tmp (a INT PRIMARY KEY, b CHAR(3))",
    "DROP TABLE IF EXISTS f.tmp",
    "CREATE INDEX iv ON f.t (n)",
    "SHOW TABLES FROM f LIKE 't%'",
    "SHOW CREATE TABLE f.t",
    "SHOW COLUMNS FROM f.t WHERE Field = 'id'",
    "SHOW SESSION VARIABLES LIKE 'sql_mode'",
    "SHOW BINLOG EVENTS FROM 4 LIMIT 2",
    "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'",
    "SET @a = 1, @b = 'x'",
    "SELECT * FROM information_schema.COLUMNS WHERE TABLE_NAME = 't'",
    "EXPLAIN SELECT * FROM f.t WHERE id = 3",
    "CHECKSUM TABLE f.t",
    "PREPARE s FROM 'SELECT ? + 1'",
    "EXECUTE s USING @a",
    "BEGIN",
    "COMMIT",
    "SAVEPOINT p",
    "ROLLBACK TO SAVEPOINT p",
    "SELECT GTID_SUBSET('', ''), UUID() IS NOT NULL, NOW() > '2000-01-01'",
]
POOL = [
    "(", ")", ",", ";", "'", '"', "`", "*", "+", "-", "/", "=", "<=>", "!", "?", ".", "@", "@@",
    "NULL", "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "LIKE", "UNION", "JOIN",
    "GROUP BY", "ORDER BY", "LIMIT", "VALUES", "SET", "INTO", "TABLE", "INDEX", "KEY",
    "PRIMARY", "DEFAULT", "CAST(", "AS", "DECIMAL(70,40)", "VARCHAR(99999)", "INT(300)",
    "0", "-1", "1e400", "-1e400", "18446744073709551616", "9" * 90, "0x", "0xZZ", "X'F'",
    "b'102'", "1.2.3", ".5e", "''", "'\\'", "'\\0'", "_binary 'x'", "N'x'", "'" + "a" * 300 + "'",
    "(" * 120, ")" * 120, "+".join(["1"] * 600), "@@session.", "\t", "\n", "/*", "*/", "--",
    "#", "\\", "\u00e9", "\U0001f600", "\x00", "DUAL", "ALL", "DISTINCT", "ANY", "EXISTS",
    "INTERVAL", "WITH", "OVER", "PARTITION", "COLLATE", "utf8mb4_bin",
    "\udce9", "'caf\udce9'", "\udcff\udcfe", "_binary'\udc80'",  # bytes that are not UTF-8
]  # fmt: skip
FORBIDDEN = re.compile(r"SHUTDOWN|KILL|SLEEP|GLOBAL|BENCHMARK|GET_LOCK", re.IGNORECASE)
TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|\w+|\S")


def tokens(sql: str) -> list[str]:
    return TOKEN.findall(sql)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A statement of the corpus, mutated one to four times. The choices come from a
    seeded :class:`random.Random` that Hypothesis draws, so every token of the pool is
    as likely as any other (Hypothesis's own choices favour the first ones)."""
    rnd = draw(st.randoms(use_true_random=False))
    parts = tokens(rnd.choice(CORPUS))
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.choice(("drop", "repeat", "swap", "insert", "replace"))
        if kind == "insert" or not parts:
            parts.insert(rnd.randint(0, len(parts)), rnd.choice(POOL))
            continue
        at = rnd.randrange(len(parts))
        if kind == "drop":
            del parts[at]
        elif kind == "repeat":
            parts.insert(at, parts[at])
        elif kind == "swap" and at + 1 < len(parts):
            parts[at], parts[at + 1] = parts[at + 1], parts[at]
        else:
            parts[at] = rnd.choice(POOL)
    return " ".join(parts)


@pytest.fixture(scope="module")
def connection(server: ServerProcess) -> Iterator[Any]:
    for statement in SCHEMA:
        server.query(statement)
    connection = server.connect()
    yield connection
    connection.close()


def run(connection: Any, sql: str) -> None:
    """Run ``sql``; a MySQL error is an answer, 1105 with Python's text is a failure."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql.encode("utf-8", "surrogateescape"))  # its bytes, as written
            cursor.fetchall()
    except UnicodeDecodeError:  # a result with those bytes, as MySQL sends: PyMySQL fails
        connection.close()
        connection.connect()
    except pymysql.MySQLError as error:
        code, message = error.args[0], str(error.args[-1])
        assert code != 1105 or "internal error" not in message, (sql, message)
        assert code not in (2013, 2006), f"the server dropped the connection: {sql!r}"


def test_corpus_runs_as_written(server: ServerProcess, connection: Any) -> None:
    for sql in CORPUS:
        run(connection, sql)
    assert "Traceback" not in server.error_log()


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sql=mutated())
def test_mutated_statements_get_mysql_errors(
    server: ServerProcess, connection: Any, sql: str
) -> None:
    if FORBIDDEN.search(sql):
        return
    with connection.cursor() as cursor:
        cursor.execute("ROLLBACK")
        cursor.execute("UNLOCK TABLES")
        cursor.execute(SCHEMA[1])
    run(connection, sql)


def test_no_traceback_and_still_serving(server: ServerProcess, connection: Any) -> None:
    run(connection, "SELECT 1")
    log = server.error_log()
    assert "Traceback" not in log, log[log.find("Traceback") - 400 :][:3000]
    assert server.query("SELECT 1") == [(1,)]
