"""ALTER TABLE and RENAME TABLE against a real rpl server process (PyMySQL): each action,
several in one statement, all or nothing, existing rows rewritten, DISABLE / ENABLE KEYS
answered with InnoDB's note, the statement binlogged as a QUERY, a new table_id for the
new definition's rows events, and the new definition kept across a restart."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str]:
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
    name = f"alter{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.db = name
    yield cursor
    connection.close()


def _create(cur: Any) -> str:
    ((_, text),) = rows(cur, "SHOW CREATE TABLE t")
    return str(text)


def test_add_drop_modify_change_and_rename_columns(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b INT)")
    cur.execute("INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20)")
    cur.execute(
        "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7 AFTER id, ADD d BOOL FIRST, "
        "ADD COLUMN e VARCHAR(5) NOT NULL"
    )
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [
        (None, 1, 7, "x", 10, ""),
        (None, 2, 7, "y", 20, ""),
    ]
    cur.execute(
        "ALTER TABLE t DROP COLUMN d, MODIFY b BIGINT UNSIGNED, CHANGE a name VARCHAR(20) NOT NULL"
    )
    cur.execute("ALTER TABLE t RENAME COLUMN c TO cc, ALTER COLUMN e SET DEFAULT 'z'")
    assert _create(cur) == (
        "CREATE TABLE `t` (\n"
        "  `id` int NOT NULL,\n"
        "  `cc` int NOT NULL DEFAULT '7',\n"
        "  `name` varchar(20) NOT NULL,\n"
        "  `b` bigint unsigned DEFAULT NULL,\n"
        "  `e` varchar(5) NOT NULL DEFAULT 'z',\n"
        "  PRIMARY KEY (`id`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(1, 7, "x", 10, ""), (2, 7, "y", 20, "")]
    cur.execute("INSERT INTO t (id, name) VALUES (3, 'w')")
    assert rows(cur, "SELECT * FROM t WHERE id = 3") == [(3, 7, "w", None, "z")]


def test_all_or_nothing(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
    cur.execute("INSERT INTO t VALUES (1, 1, 'long text'), (2, 1, 'x')")
    before = _create(cur)
    # the first actions are fine, the last fails: nothing changes
    assert fail(cur, "ALTER TABLE t ADD COLUMN z INT, DROP COLUMN nope") == (
        1091,
        "Can't DROP 'nope'; check that column/key exists",
    )
    assert fail(cur, "ALTER TABLE t ADD COLUMN z INT, ADD UNIQUE KEY ua (a)") == (
        1062,
        "Duplicate entry '1' for key 't.ua'",
    )
    assert fail(cur, "ALTER TABLE t ADD COLUMN z INT, MODIFY b VARCHAR(3)")[0] == 1406
    assert fail(cur, "ALTER TABLE t ADD COLUMN a INT") == (1060, "Duplicate column name 'a'")
    assert fail(cur, "ALTER TABLE t DROP COLUMN id, DROP COLUMN a, DROP COLUMN b") == (
        1090,
        "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
    )
    assert fail(cur, "ALTER TABLE nope ADD COLUMN z INT") == (
        1146,
        f"Table '{cur.db}.nope' doesn't exist",
    )
    assert _create(cur) == before
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(1, 1, "long text"), (2, 1, "x")]


def test_indexes_primary_key_and_table_options(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, a INT, b INT)")
    cur.execute("INSERT INTO t (a, b) VALUES (1, 1), (2, 1)")
    cur.execute("ALTER TABLE t ADD INDEX ka (a), ADD KEY (b), AUTO_INCREMENT = 100, ENGINE=InnoDB")
    cur.execute("ALTER TABLE t DISABLE KEYS")
    assert rows(cur, "SHOW WARNINGS") == [
        ("Note", 1031, "Table storage engine for 't' doesn't have this option")
    ]
    cur.execute("ALTER TABLE t ENABLE KEYS, DEFAULT CHARSET=utf8mb4")
    cur.execute("INSERT INTO t (a, b) VALUES (3, 3)")
    assert rows(cur, "SELECT id FROM t ORDER BY id") == [(1,), (2,), (100,)]
    assert "  KEY `ka` (`a`),\n  KEY `b` (`b`)\n) ENGINE=InnoDB AUTO_INCREMENT=101 " in _create(cur)
    cur.execute("ALTER TABLE t DROP INDEX ka, DROP KEY b")
    assert "KEY `" not in _create(cur)
    # the primary key moves to another column; duplicates refuse it
    cur.execute("CREATE TABLE k (id INT PRIMARY KEY, code INT NOT NULL)")
    cur.execute("INSERT INTO k VALUES (1, 5), (2, 5)")
    assert fail(cur, "ALTER TABLE k DROP PRIMARY KEY, ADD PRIMARY KEY (code)") == (
        1062,
        "Duplicate entry '5' for key 'k.PRIMARY'",
    )
    cur.execute("UPDATE k SET code = 6 WHERE id = 2")
    cur.execute("ALTER TABLE k DROP PRIMARY KEY, ADD PRIMARY KEY (code)")
    assert rows(cur, "SELECT * FROM k") == [(1, 5), (2, 6)]
    assert fail(cur, "INSERT INTO k VALUES (3, 6)") == (
        1062,
        "Duplicate entry '6' for key 'k.PRIMARY'",
    )
    assert fail(cur, "ALTER TABLE k ADD PRIMARY KEY (id)") == (1068, "Multiple primary key defined")


def test_rename_table(cur: Any) -> None:
    cur.execute("CREATE TABLE a (id INT PRIMARY KEY)")
    cur.execute("CREATE TABLE b (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO a VALUES (1)")
    assert fail(cur, "RENAME TABLE a TO c, b TO a2, nope TO d") == (
        1146,
        f"Table '{cur.db}.nope' doesn't exist",
    )
    assert fail(cur, "RENAME TABLE a TO b") == (1050, "Table 'b' already exists")
    assert rows(cur, "SHOW TABLES") == [("a",), ("b",)]
    cur.execute("RENAME TABLE a TO tmp, b TO a, tmp TO b")
    assert rows(cur, "SELECT * FROM b") == [(1,)]
    assert rows(cur, "SELECT * FROM a") == []
    cur.execute("ALTER TABLE b RENAME TO c")
    assert rows(cur, "SHOW TABLES") == [("a",), ("c",)]


def test_alter_is_binlogged_and_survives_a_restart(fresh_server: Any) -> None:
    fresh_server.start()
    connection = fresh_server.connect()
    cur = connection.cursor()
    cur.execute("CREATE DATABASE d")
    cur.execute("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO d.t VALUES (1, 1)")
    cur.execute("ALTER TABLE d.t ADD COLUMN w VARCHAR(3) DEFAULT 'abc', ADD UNIQUE KEY uv (v)")
    cur.execute("INSERT INTO d.t VALUES (2, 2, 'x')")
    events = rows(cur, "SHOW BINLOG EVENTS")
    queries = [e[5] for e in events if e[2] == "Query"]
    assert queries[-2] == (
        "ALTER TABLE d.t ADD COLUMN w VARCHAR(3) DEFAULT 'abc', ADD UNIQUE KEY uv (v)"
    )
    maps = [e[5] for e in events if e[2] == "Table_map"]
    assert len(maps) == 2 and maps[0] != maps[1], maps  # a new table_id for the new definition
    connection.close()
    fresh_server.kill()
    fresh_server.start()
    connection = fresh_server.connect()
    cur = connection.cursor()
    assert rows(cur, "SELECT * FROM d.t ORDER BY id") == [(1, 1, "abc"), (2, 2, "x")]
    assert fail(cur, "INSERT INTO d.t VALUES (3, 2, 'y')") == (
        1062,
        "Duplicate entry '2' for key 't.uv'",
    )
    connection.close()
