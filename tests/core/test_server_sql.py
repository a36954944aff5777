"""SQL through PyMySQL against a real rpl server process: DDL, DML, transactions, variables,
accounts, binlog administration and errors, each checked against MySQL's exact answers."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pymysql
import pytest

_names = itertools.count(1)


def _db() -> str:
    return f"sqltest{next(_names)}"


def fail(cursor: Any, sql: str) -> tuple[int, str | None, str]:
    """Run ``sql``, which must fail: (errno, SQLSTATE, message)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    error = info.value
    return error.args[0], getattr(error, "sqlstate", None), error.args[1]


def info(cursor: Any) -> str:
    """The last OK packet's info text. MySQL's net_send_ok writes it length-encoded (as
    libmysqlclient and libmariadb read it); PyMySQL hands over the raw bytes, prefix and all."""
    raw: bytes = cursor.connection._result.message
    assert raw[0] == len(raw) - 1, raw
    return raw[1:].decode()


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    """A cursor on a new connection, in a database of its own."""
    connection = server.connect()
    cursor = connection.cursor()
    name = _db()
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.db = name
    yield cursor
    connection.close()


def _alive(cursor: Any) -> None:
    assert rows(cursor, "SELECT 1 + 1") == [(2,)]


# ------------------------------------------------------------------------ DDL
def test_create_drop_database(cur: Any) -> None:
    name = _db()
    assert cur.execute(f"CREATE DATABASE {name}") == 1
    assert fail(cur, f"CREATE DATABASE {name}") == (
        1007,
        "HY000",
        f"Can't create database '{name}'; database exists",
    )
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {name}")
    assert cur.connection._result.warning_count == 1
    assert rows(cur, "SHOW WARNINGS") == [
        ("Note", 1007, f"Can't create database '{name}'; database exists")
    ]
    assert (name,) in rows(cur, "SHOW DATABASES")
    assert cur.execute(f"DROP DATABASE {name}") == 0
    assert fail(cur, f"DROP DATABASE {name}") == (
        1008,
        "HY000",
        f"Can't drop database '{name}'; database doesn't exist",
    )
    cur.execute(f"DROP DATABASE IF EXISTS {name}")
    assert rows(cur, "SHOW WARNINGS") == [
        ("Note", 1008, f"Can't drop database '{name}'; database doesn't exist")
    ]
    assert (name,) not in rows(cur, "SHOW DATABASES")
    assert fail(cur, f"USE {name}") == (1049, "42000", f"Unknown database '{name}'")


def test_drop_database_drops_its_tables(cur: Any) -> None:
    name = _db()
    cur.execute(f"CREATE DATABASE {name}")
    cur.execute(f"CREATE TABLE {name}.t (id INT PRIMARY KEY)")
    cur.execute(f"INSERT INTO {name}.t VALUES (1), (2)")
    assert cur.execute(f"DROP DATABASE {name}") == 1
    assert fail(cur, f"SELECT * FROM {name}.t")[0] == 1146


def test_create_table_show_create_and_columns(cur: Any) -> None:
    cur.execute(
        "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT, name VARCHAR(20) NOT NULL, "
        "score BIGINT DEFAULT 5, note TEXT, PRIMARY KEY (id))"
    )
    assert rows(cur, "SHOW TABLES") == [("t",)]
    assert cur.description[0][0] == f"Tables_in_{cur.db}"
    name, create = rows(cur, "SHOW CREATE TABLE t")[0]
    assert name == "t"
    assert create.startswith(
        "CREATE TABLE `t` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  `name` varchar(20) NOT NULL,\n"
    )
    assert "PRIMARY KEY (`id`)" in create
    columns = rows(cur, "SHOW COLUMNS FROM t")
    assert [c[0] for c in columns] == ["id", "name", "score", "note"]
    assert columns[0][1:4] == ("int", "NO", "PRI")
    assert columns[0][5] == "auto_increment"
    assert columns[1][1:3] == ("varchar(20)", "NO")
    assert columns[2][1:5] == ("bigint", "YES", "", "5")
    assert fail(cur, "CREATE TABLE t (id INT PRIMARY KEY)") == (
        1050,
        "42S01",
        "Table 't' already exists",
    )
    cur.execute("CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
    assert rows(cur, "SHOW WARNINGS") == [("Note", 1050, "Table 't' already exists")]
    assert [c[0] for c in rows(cur, "SHOW COLUMNS FROM t")] == ["id", "name", "score", "note"]


def test_create_table_requires_primary_key(cur: Any) -> None:
    errno, state, message = fail(cur, "CREATE TABLE nopk (a INT, b INT)")
    assert (errno, state) == (3750, "HY000")
    assert message.startswith(
        "Unable to create or change a table without a primary key, "
        "when the system variable 'sql_require_primary_key' is set."
    )
    assert fail(cur, "SHOW CREATE TABLE nopk")[0] == 1146
    _alive(cur)


def test_create_index_and_drop_table(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    cur.execute("CREATE INDEX iv ON t (v)")
    assert "KEY `iv` (`v`)" in rows(cur, "SHOW CREATE TABLE t")[0][1]
    assert fail(cur, "CREATE INDEX iv ON t (v)") == (1061, "42000", "Duplicate key name 'iv'")
    assert fail(cur, "CREATE INDEX ix ON t (nope)") == (
        1072,
        "42000",
        "Key column 'nope' doesn't exist in table",
    )
    assert cur.execute("DROP TABLE t") == 0
    assert fail(cur, "DROP TABLE t") == (1051, "42S02", f"Unknown table '{cur.db}.t'")
    cur.execute("DROP TABLE IF EXISTS t")
    assert rows(cur, "SHOW WARNINGS") == [("Note", 1051, f"Unknown table '{cur.db}.t'")]
    assert rows(cur, "SHOW TABLES") == []


def test_drop_table_list_is_atomic(cur: Any) -> None:
    cur.execute("CREATE TABLE a (id INT PRIMARY KEY)")
    cur.execute("CREATE TABLE b (id INT PRIMARY KEY)")
    before = rows(cur, "SHOW MASTER STATUS")[0][4]
    assert fail(cur, "DROP TABLE a, nope, b, gone") == (
        1051,
        "42S02",
        f"Unknown table '{cur.db}.nope,{cur.db}.gone'",
    )
    assert rows(cur, "SHOW TABLES") == [("a",), ("b",)]
    assert rows(cur, "SHOW MASTER STATUS")[0][4] == before
    cur.execute("DROP TABLE IF EXISTS a, nope")
    assert rows(cur, "SHOW WARNINGS") == [("Note", 1051, f"Unknown table '{cur.db}.nope'")]
    assert cur.execute("DROP TABLE b") == 0
    assert rows(cur, "SHOW TABLES") == []


# ------------------------------------------------------------------------ DML
@pytest.fixture
def people(cur: Any) -> Any:
    cur.execute(
        "CREATE TABLE p (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
        "name VARCHAR(10) NOT NULL, age INT)"
    )
    assert (
        cur.execute(
            "INSERT INTO p (name, age) VALUES ('ann', 30), ('bob', 25), "
            "('cid', 35), ('dan', 25), ('eve', NULL)"
        )
        == 5
    )
    return cur


def test_insert_auto_increment_and_last_insert_id(people: Any) -> None:
    cur = people
    assert cur.lastrowid == 1
    assert rows(cur, "SELECT LAST_INSERT_ID()") == [(1,)]
    cur.execute("INSERT INTO p (name) VALUES ('fay')")
    assert cur.lastrowid == 6
    assert rows(cur, "SELECT LAST_INSERT_ID()") == [(6,)]
    cur.execute("INSERT INTO p VALUES (100, 'gus', 1)")
    assert rows(cur, "SELECT LAST_INSERT_ID()") == [(6,)]
    cur.execute("INSERT INTO p (name) VALUES ('hal')")
    assert cur.lastrowid == 101
    assert rows(cur, "SELECT id, name, age FROM p WHERE id = 101") == [(101, "hal", None)]


def test_multi_row_insert_info(people: Any) -> None:
    cur = people
    cur.execute("INSERT INTO p (name) VALUES ('x1'), ('x2')")
    assert info(cur) == "Records: 2  Duplicates: 0  Warnings: 0"


def test_duplicate_key(people: Any) -> None:
    cur = people
    assert fail(cur, "INSERT INTO p VALUES (2, 'dup', 1)") == (
        1062,
        "23000",
        "Duplicate entry '2' for key 'p.PRIMARY'",
    )
    assert rows(cur, "SELECT name FROM p WHERE id = 2") == [("bob",)]


def test_insert_ignore_and_replace(people: Any) -> None:
    cur = people
    assert cur.execute("INSERT IGNORE INTO p VALUES (2, 'dup', 1), (50, 'new', 2)") == 1
    assert rows(cur, "SHOW WARNINGS") == [
        ("Warning", 1062, "Duplicate entry '2' for key 'p.PRIMARY'")
    ]
    assert rows(cur, "SELECT name FROM p WHERE id IN (2, 50) ORDER BY id") == [("bob",), ("new",)]
    assert cur.execute("REPLACE INTO p VALUES (2, 'rep', 9)") == 2
    assert cur.execute("REPLACE INTO p VALUES (60, 'fresh', 9)") == 1
    assert rows(cur, "SELECT name, age FROM p WHERE id = 2") == [("rep", 9)]


def test_update_and_delete(people: Any) -> None:
    cur = people
    assert cur.execute("UPDATE p SET age = 26 WHERE id = 2") == 1
    assert info(cur) == "Rows matched: 1  Changed: 1  Warnings: 0"
    assert cur.execute("UPDATE p SET age = 26 WHERE id = 2") == 0
    assert info(cur) == "Rows matched: 1  Changed: 0  Warnings: 0"
    assert cur.execute("UPDATE p SET age = age + 1 WHERE age >= 30") == 2
    assert info(cur) == "Rows matched: 2  Changed: 2  Warnings: 0"
    assert rows(cur, "SELECT id, age FROM p ORDER BY id") == [
        (1, 31),
        (2, 26),
        (3, 36),
        (4, 25),
        (5, None),
    ]
    assert cur.execute("UPDATE p SET age = 0 WHERE id = 999") == 0
    assert cur.execute("DELETE FROM p WHERE id = 1") == 1
    assert cur.execute("DELETE FROM p WHERE id = 1") == 0
    assert cur.execute("DELETE FROM p WHERE age < 30") == 2
    assert rows(cur, "SELECT id FROM p ORDER BY id") == [(3,), (5,)]
    assert cur.execute("DELETE FROM p WHERE age IS NULL") == 1
    assert cur.execute("DELETE FROM p") == 1
    assert rows(cur, "SELECT COUNT(*) FROM p") == [(0,)]


def test_select_shapes(people: Any) -> None:
    cur = people
    assert rows(cur, "SELECT name FROM p WHERE id = 3") == [("cid",)]
    assert rows(cur, "SELECT id FROM p WHERE id BETWEEN 2 AND 4") == [(2,), (3,), (4,)]
    assert rows(cur, "SELECT id FROM p WHERE age BETWEEN 26 AND 40 ORDER BY id") == [(1,), (3,)]
    assert rows(cur, "SELECT id FROM p WHERE id IN (5, 1, 9) ORDER BY id") == [(1,), (5,)]
    assert rows(cur, "SELECT name FROM p WHERE name IN ('bob', 'eve') ORDER BY name DESC") == [
        ("eve",),
        ("bob",),
    ]
    assert rows(cur, "SELECT id FROM p ORDER BY age DESC, id LIMIT 3") == [(3,), (1,), (2,)]
    assert rows(cur, "SELECT id FROM p ORDER BY id LIMIT 1, 2") == [(2,), (3,)]
    assert rows(cur, "SELECT id FROM p ORDER BY id LIMIT 2 OFFSET 3") == [(4,), (5,)]
    assert rows(cur, "SELECT DISTINCT age FROM p WHERE age IS NOT NULL ORDER BY age") == [
        (25,),
        (30,),
        (35,),
    ]
    assert rows(cur, "SELECT COUNT(*), COUNT(age), SUM(age), MIN(age), MAX(age) FROM p") == [
        (5, 4, 115, 25, 35)
    ]
    assert rows(cur, "SELECT COUNT(DISTINCT age) FROM p") == [(3,)]
    assert rows(cur, "SELECT AVG(age), AVG(id), AVG(1.5) FROM p") == [
        (Decimal("28.7500"), Decimal("3.0000"), Decimal("1.50000"))
    ]
    with pytest.raises(pymysql.MySQLError) as mixed:
        cur.execute("SELECT id, COUNT(*) FROM p")
    assert mixed.value.args == (
        1140,
        "In aggregated query without GROUP BY, expression #1 "
        f"of SELECT list contains nonaggregated column "
        f"'{cur.db}.p.id'; this is incompatible with "
        "sql_mode=only_full_group_by",
    )
    cur.execute("SET SESSION sql_mode = ''")
    assert rows(cur, "SELECT COUNT(*), 'x', @nothing FROM p WHERE id = 1") == [(1, "x", None)]
    assert len(rows(cur, "SELECT name, COUNT(*) FROM p")) == 1
    cur.execute("SET SESSION sql_mode = DEFAULT")
    assert rows(cur, "SELECT COUNT(*), SUM(age), MAX(name) FROM p WHERE id > 100") == [
        (0, None, None)
    ]
    assert rows(cur, "SELECT id AS k, name FROM p WHERE name = 'ann' AND age = 30") == [(1, "ann")]
    assert cur.description[0][0] == "k"
    assert rows(cur, "SELECT * FROM p WHERE id = 4") == [(4, "dan", 25)]


def test_select_without_table(cur: Any) -> None:
    assert rows(cur, "SELECT 1, 'a', NULL, 2 * 3 + 1, 7 / 2, 'x' = 'x'") == [
        (1, "a", None, 7, pytest.approx(3.5), 1)
    ]
    assert [d[0] for d in cur.description] == ["1", "a", "NULL", "2 * 3 + 1", "7 / 2", "'x' = 'x'"]
    assert rows(cur, "SELECT DATABASE()") == [(cur.db,)]
    assert rows(cur, "SELECT 1 LIMIT 0") == []


def test_wrong_values(people: Any) -> None:
    cur = people
    assert fail(cur, "INSERT INTO p VALUES (10, 'zed', 'abc')") == (
        1366,
        "HY000",
        "Incorrect integer value: 'abc' for column 'age' at row 1",
    )
    assert fail(cur, "INSERT INTO p VALUES (10, 'abcdefghijklm', 1)") == (
        1406,
        "22001",
        "Data too long for column 'name' at row 1",
    )
    assert fail(cur, "INSERT INTO p VALUES (10, NULL, 1)") == (
        1048,
        "23000",
        "Column 'name' cannot be null",
    )
    assert fail(cur, "UPDATE p SET name = NULL WHERE id = 1") == (
        1048,
        "23000",
        "Column 'name' cannot be null",
    )
    assert fail(cur, "INSERT INTO p VALUES (10, 'z')") == (
        1136,
        "21S01",
        "Column count doesn't match value count at row 1",
    )
    assert fail(cur, "INSERT INTO p (id, name) VALUES (10, 'a'), (11)") == (
        1136,
        "21S01",
        "Column count doesn't match value count at row 2",
    )
    assert rows(cur, "SELECT COUNT(*) FROM p") == [(5,)]


def test_insert_column_lists(people: Any) -> None:
    """Column lists in any order, DEFAULT, left-out columns; the same list against a table
    dropped and created again with other columns reads the new definition."""
    cur = people
    cur.execute("INSERT INTO p (age, name, id) VALUES (7, 'kim', 40)")
    cur.execute("INSERT INTO p (name, id) VALUES ('lee', 41)")
    cur.execute("INSERT INTO p VALUES (42, 'max', DEFAULT)")
    assert rows(cur, "SELECT id, name, age FROM p WHERE id >= 40") == [
        (40, "kim", 7),
        (41, "lee", None),
        (42, "max", None),
    ]
    no_default = (1364, "HY000", "Field 'name' doesn't have a default value")
    assert fail(cur, "INSERT INTO p (id, age) VALUES (43, 1)") == no_default
    assert fail(cur, "INSERT INTO p (id, name, age) VALUES (43, DEFAULT, 1)") == no_default
    assert fail(cur, "INSERT INTO p VALUES (43, DEFAULT, 1)") == no_default
    cur.execute("CREATE TABLE q (id INT PRIMARY KEY, a INT NOT NULL)")
    cur.execute("INSERT INTO q (id, a) VALUES (1, 2)")
    cur.execute("DROP TABLE q")
    cur.execute("CREATE TABLE q (a INT NOT NULL, id INT PRIMARY KEY, b INT NOT NULL)")
    assert fail(cur, "INSERT INTO q (id, a) VALUES (1, 2)") == (
        1364,
        "HY000",
        "Field 'b' doesn't have a default value",
    )
    cur.execute("INSERT INTO q (id, a, b) VALUES (1, 2, 3)")
    assert rows(cur, "SELECT a, id, b FROM q") == [(2, 1, 3)]


def test_unknown_names(people: Any) -> None:
    cur = people
    assert fail(cur, "SELECT nope FROM p") == (
        1054,
        "42S22",
        "Unknown column 'nope' in 'field list'",
    )
    assert fail(cur, "SELECT id FROM p WHERE nope = 1") == (
        1054,
        "42S22",
        "Unknown column 'nope' in 'where clause'",
    )
    assert fail(cur, "UPDATE p SET nope = 1") == (
        1054,
        "42S22",
        "Unknown column 'nope' in 'field list'",
    )
    assert fail(cur, "INSERT INTO p (nope) VALUES (1)") == (
        1054,
        "42S22",
        "Unknown column 'nope' in 'field list'",
    )
    assert fail(cur, "SELECT * FROM missing") == (
        1146,
        "42S02",
        f"Table '{cur.db}.missing' doesn't exist",
    )
    assert fail(cur, "INSERT INTO missing VALUES (1)")[0] == 1146


def test_no_database_selected(server: Any) -> None:
    connection = server.connect()
    cursor = connection.cursor()
    assert fail(cursor, "SELECT * FROM t") == (1046, "3D000", "No database selected")
    assert fail(cursor, "CREATE TABLE t (id INT PRIMARY KEY)") == (
        1046,
        "3D000",
        "No database selected",
    )
    assert rows(cursor, "SELECT DATABASE()") == [(None,)]
    connection.close()


def test_failed_multi_row_insert_leaves_nothing(people: Any) -> None:
    cur = people
    before = rows(cur, "SHOW MASTER STATUS")[0][4]
    assert fail(cur, "INSERT INTO p VALUES (20, 'ok', 1), (21, 'ok2', 2), (1, 'dup', 3)")[0] == 1062
    assert fail(cur, "INSERT INTO p VALUES (22, 'ok', 1), (23, 'ok2', 'bad')")[0] == 1366
    assert rows(cur, "SELECT COUNT(*) FROM p WHERE id >= 20") == [(0,)]
    assert rows(cur, "SHOW MASTER STATUS")[0][4] == before
    # inside a transaction, only the failed statement is undone
    cur.execute("BEGIN")
    cur.execute("INSERT INTO p VALUES (30, 'keep', 1)")
    assert fail(cur, "INSERT INTO p VALUES (31, 'gone', 1), (30, 'dup', 1)")[0] == 1062
    cur.execute("COMMIT")
    assert rows(cur, "SELECT id FROM p WHERE id >= 30") == [(30,)]


# -------------------------------------------------------------- transactions
@pytest.fixture
def pair(server: Any) -> Iterator[tuple[Any, Any]]:
    """Two cursors on two connections, in one database with table t(id, v)."""
    name = _db()
    first, second = server.connect(), server.connect()
    a, b = first.cursor(), second.cursor()
    a.execute(f"CREATE DATABASE {name}")
    a.execute(f"CREATE TABLE {name}.t (id INT PRIMARY KEY, v INT)")
    a.execute(f"INSERT INTO {name}.t VALUES (1, 10), (2, 20)")
    a.execute(f"USE {name}")
    b.execute(f"USE {name}")
    yield a, b
    first.close()
    second.close()


def test_read_committed_visibility(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    a.execute("INSERT INTO t VALUES (3, 30)")
    a.execute("UPDATE t SET v = 11 WHERE id = 1")
    assert rows(a, "SELECT id, v FROM t ORDER BY id") == [(1, 11), (2, 20), (3, 30)]
    assert rows(b, "SELECT id, v FROM t ORDER BY id") == [(1, 10), (2, 20)]
    a.execute("COMMIT")
    assert rows(b, "SELECT id, v FROM t ORDER BY id") == [(1, 11), (2, 20), (3, 30)]


def test_rollback(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("START TRANSACTION")
    a.execute("DELETE FROM t WHERE id = 1")
    a.execute("INSERT INTO t VALUES (5, 50)")
    assert rows(a, "SELECT id FROM t ORDER BY id") == [(2,), (5,)]
    a.execute("ROLLBACK")
    assert rows(a, "SELECT id FROM t ORDER BY id") == [(1,), (2,)]
    assert rows(b, "SELECT id FROM t ORDER BY id") == [(1,), (2,)]


def test_autocommit_off(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("SET autocommit = 0")
    assert rows(a, "SELECT @@autocommit") == [(0,)]
    a.execute("INSERT INTO t VALUES (3, 30)")
    assert rows(b, "SELECT COUNT(*) FROM t") == [(2,)]
    a.execute("COMMIT")
    assert rows(b, "SELECT COUNT(*) FROM t") == [(3,)]
    a.execute("INSERT INTO t VALUES (4, 40)")
    a.execute("ROLLBACK")
    assert rows(b, "SELECT COUNT(*) FROM t") == [(3,)]
    a.execute("INSERT INTO t VALUES (4, 40)")
    a.execute("SET autocommit = 1")  # commits the open transaction
    assert rows(b, "SELECT COUNT(*) FROM t") == [(4,)]


def test_ddl_commits_implicitly(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    a.execute("INSERT INTO t VALUES (3, 30)")
    a.execute("CREATE TABLE other (id INT PRIMARY KEY)")
    assert rows(b, "SELECT COUNT(*) FROM t") == [(3,)]
    a.execute("ROLLBACK")
    assert rows(b, "SELECT COUNT(*) FROM t") == [(3,)]


def test_lock_wait_timeout(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    a.execute("UPDATE t SET v = 12 WHERE id = 1")
    b.execute("SET SESSION innodb_lock_wait_timeout = 1")
    b.execute("BEGIN")
    b.execute("INSERT INTO t VALUES (7, 70)")
    started = time.monotonic()
    assert fail(b, "UPDATE t SET v = 13 WHERE id = 1") == (
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
    assert 0.9 <= time.monotonic() - started < 5
    # the statement failed, the transaction is still open with its earlier work
    assert rows(b, "SELECT id FROM t WHERE id = 7") == [(7,)]
    a.execute("COMMIT")
    b.execute("COMMIT")
    assert rows(a, "SELECT id, v FROM t ORDER BY id") == [(1, 12), (2, 20), (7, 70)]


def test_deadlock(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    b.execute("BEGIN")
    a.execute("INSERT INTO t VALUES (10, 1)")
    b.execute("INSERT INTO t VALUES (11, 1)")
    a.execute("UPDATE t SET v = 100 WHERE id = 1")
    b.execute("UPDATE t SET v = 200 WHERE id = 2")
    outcome: dict[str, object] = {}

    def first() -> None:
        try:
            a.execute("UPDATE t SET v = 101 WHERE id = 2")
            outcome["a"] = "ok"
        except pymysql.err.Error as exc:
            outcome["a"] = (exc.args[0], exc.sqlstate, exc.args[1])

    thread = threading.Thread(target=first)
    thread.start()
    time.sleep(0.3)
    try:
        b.execute("UPDATE t SET v = 201 WHERE id = 1")
        outcome["b"] = "ok"
    except pymysql.err.Error as exc:
        outcome["b"] = (exc.args[0], exc.sqlstate, exc.args[1])
    if outcome.get("b") == "ok":
        b.execute("COMMIT")
    thread.join(10)
    assert not thread.is_alive()
    if outcome["a"] == "ok":
        a.execute("COMMIT")
    deadlock = (1213, "40001", "Deadlock found when trying to get lock; try restarting transaction")
    assert sorted(map(str, outcome.values())) == sorted(["ok", str(deadlock)])
    victim, winner = ("a", "b") if outcome["a"] != "ok" else ("b", "a")
    final = dict(rows(a, "SELECT id, v FROM t"))
    # the victim's whole transaction is gone, its insert included
    if victim == "a":
        assert final == {1: 201, 2: 200, 11: 1}
    else:
        assert final == {1: 100, 2: 101, 10: 1}
    assert winner in ("a", "b")


# ----------------------------------------------------------------- variables
def test_set_variables_errors(cur: Any) -> None:
    assert fail(cur, "SET nonesuch = 1") == (1193, "HY000", "Unknown system variable 'nonesuch'")
    assert fail(cur, "SET @@global.nonesuch = 1")[0] == 1193
    assert fail(cur, "SET max_connections = 10") == (
        1229,
        "HY000",
        "Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL",
    )
    assert fail(cur, "SET SESSION max_connections = 10")[0] == 1229
    assert fail(cur, "SET GLOBAL sql_log_bin = 0") == (
        1228,
        "HY000",
        "Variable 'sql_log_bin' is a SESSION variable and can't be used with SET GLOBAL",
    )
    assert fail(cur, "SET autocommit = 'maybe'") == (
        1231,
        "42000",
        "Variable 'autocommit' can't be set to the value of 'maybe'",
    )
    assert fail(cur, "SET SESSION innodb_lock_wait_timeout = 'x'") == (
        1232,
        "42000",
        "Incorrect argument type to variable 'innodb_lock_wait_timeout'",
    )
    assert fail(cur, "SET GLOBAL server_uuid = 'x'") == (
        1238,
        "HY000",
        "Variable 'server_uuid' is a read only variable",
    )
    assert fail(cur, "SET GLOBAL version = 'x'")[0] == 1238
    assert fail(cur, "SELECT @@nonesuch") == (1193, "HY000", "Unknown system variable 'nonesuch'")
    assert fail(cur, "SELECT @@session.max_connections") == (
        1238,
        "HY000",
        "Variable 'max_connections' is a GLOBAL variable",
    )
    _alive(cur)


def test_set_and_select_variables(server: Any, cur: Any) -> None:
    cur.execute("SET SESSION innodb_lock_wait_timeout = 7")
    assert rows(
        cur,
        "SELECT @@innodb_lock_wait_timeout, @@session.innodb_lock_wait_timeout, "
        "@@global.innodb_lock_wait_timeout",
    ) == [(7, 7, 50)]
    cur.execute("SET GLOBAL max_connections = 200")
    try:
        assert rows(cur, "SELECT @@max_connections, @@global.max_connections") == [(200, 200)]
        assert rows(cur, "SHOW GLOBAL VARIABLES LIKE 'max_connections'") == [
            ("max_connections", "200")
        ]
        assert server.query("SELECT @@max_connections") == [(200,)]
    finally:
        cur.execute("SET GLOBAL max_connections = DEFAULT")
    assert rows(cur, "SELECT @@global.max_connections") == [(151,)]
    cur.execute("SET GLOBAL innodb_lock_wait_timeout = 9")
    try:
        other = server.connect()
        assert rows(other.cursor(), "SELECT @@innodb_lock_wait_timeout") == [(9,)]
        other.close()
        assert rows(cur, "SELECT @@innodb_lock_wait_timeout") == [(7,)]
    finally:
        cur.execute("SET GLOBAL innodb_lock_wait_timeout = 50")
    cur.execute("SET @@session.auto_increment_increment = 3, @x = 5")
    assert rows(cur, "SELECT @@auto_increment_increment, @x") == [(3, 5)]
    assert rows(cur, "SHOW VARIABLES LIKE 'auto_increment_incr%'") == [
        ("auto_increment_increment", "3")
    ]
    assert [d[0] for d in cur.description] == ["Variable_name", "Value"]
    assert rows(cur, "SHOW VARIABLES LIKE 'no_such_thing'") == []


def test_user_variables(cur: Any) -> None:
    cur.execute("SET @a = 10, @b = 'text', @c = @a * 2")
    assert rows(cur, "SELECT @a, @b, @c, @unset") == [(10, "text", 20, None)]
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))")
    cur.execute("INSERT INTO t VALUES (@a, @b)")
    assert rows(cur, "SELECT s FROM t WHERE id = @a") == [("text",)]


def test_show_status_and_flush_status(cur: Any) -> None:
    ((name, value),) = rows(cur, "SHOW STATUS LIKE 'Uptime'")
    assert name == "Uptime" and int(value) >= 0
    ((_, before),) = rows(cur, "SHOW GLOBAL STATUS LIKE 'Questions'")
    cur.execute("SELECT 1")
    ((_, after),) = rows(cur, "SHOW GLOBAL STATUS LIKE 'Questions'")
    assert int(after) > int(before)
    assert cur.execute("FLUSH STATUS") == 0
    assert rows(cur, "SHOW STATUS LIKE 'Threads_connected'")[0][0] == "Threads_connected"


# ------------------------------------------------------------------ accounts
def test_accounts(server: Any) -> None:
    root = server.connect()
    cursor = root.cursor()
    cursor.execute("CREATE USER 'alice'@'%' IDENTIFIED BY 'secret'")
    assert fail(cursor, "CREATE USER 'alice'@'%' IDENTIFIED BY 'x'") == (
        1396,
        "HY000",
        "Operation CREATE USER failed for 'alice'@'%'",
    )
    alice = server.connect(user="alice", password="secret")
    with alice.cursor() as ac:
        assert rows(ac, "SELECT CURRENT_USER()") == [("alice@%",)]
        assert fail(ac, "SET GLOBAL max_connections = 10") == (
            1227,
            "42000",
            "Access denied; you need (at least one of) the SUPER or "
            "SYSTEM_VARIABLES_ADMIN privilege(s) for this operation",
        )
        assert rows(ac, "SHOW GRANTS") == [("GRANT USAGE ON *.* TO `alice`@`%`",)]
    alice.close()
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.connect(user="alice", password="wrong")
    assert info.value.args[0] == 1045
    assert info.value.args[1] == "Access denied for user 'alice'@'127.0.0.1' (using password: YES)"
    cursor.execute("GRANT REPLICATION SLAVE ON *.* TO 'alice'@'%'")
    assert rows(cursor, "SHOW GRANTS FOR 'alice'@'%'") == [
        ("GRANT REPLICATION SLAVE ON *.* TO `alice`@`%`",)
    ]
    cursor.execute("GRANT ALL ON *.* TO 'alice'@'%'")
    alice = server.connect(user="alice", password="secret")
    with alice.cursor() as ac:
        ac.execute("SET GLOBAL max_connections = 151")
    alice.close()
    cursor.execute("DROP USER 'alice'@'%'")
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.connect(user="alice", password="secret")
    assert info.value.args[0] == 1045
    root.close()


# ------------------------------------------------------------ binlog admin
def _gtid_count(executed: str) -> int:
    if not executed:
        return 0
    _, _, ranges = executed.partition(":")
    total = 0
    for part in ranges.split(":"):
        low, _, high = part.partition("-")
        total += int(high or low) - int(low) + 1
    return total


def test_master_status_and_binlog_events(fresh_server: Any) -> None:
    fresh_server.start()
    connection = fresh_server.connect()
    cur = connection.cursor()
    assert [r[0] for r in rows(cur, "SHOW BINARY LOGS")] == ["binlog.000001"]
    assert [d[0] for d in cur.description][:2] == ["Log_name", "File_size"]
    file, position, _, _, executed = rows(cur, "SHOW MASTER STATUS")[0]
    assert [d[0] for d in cur.description] == [
        "File",
        "Position",
        "Binlog_Do_DB",
        "Binlog_Ignore_DB",
        "Executed_Gtid_Set",
    ]
    assert file == "binlog.000001"
    start = _gtid_count(executed)
    cur.execute("CREATE DATABASE d")
    cur.execute("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(5))")
    assert _gtid_count(rows(cur, "SHOW MASTER STATUS")[0][4]) == start + 2
    cur.execute("INSERT INTO d.t VALUES (1, 'a')")
    _, after, _, _, executed = rows(cur, "SHOW MASTER STATUS")[0]
    assert _gtid_count(executed) == start + 3
    assert after > position
    uuid = executed.partition(":")[0]
    assert executed == f"{uuid}:1-{start + 3}" and len(uuid) == 36
    assert rows(cur, "SELECT @@gtid_executed") == [(executed,)]
    events = rows(cur, "SHOW BINLOG EVENTS IN 'binlog.000001'")
    assert [d[0] for d in cur.description] == [
        "Log_name",
        "Pos",
        "Event_type",
        "Server_id",
        "End_log_pos",
        "Info",
    ]
    assert events[0][2] == "Format_desc" and events[0][1] == 4
    assert events[0][5] == "Server ver: 8.0.36-rpl, Binlog ver: 4"
    assert events[1][2] == "Previous_gtids"
    tail = [(e[2], e[5]) for e in events[-5:]]
    xid = tail[4][1]
    table_id = tail[2][1].split()[1]
    assert tail == [
        ("Gtid", f"SET @@SESSION.GTID_NEXT= '{uuid}:{start + 3}'"),
        ("Query", "BEGIN"),
        ("Table_map", f"table_id: {table_id} (d.t)"),
        ("Write_rows", f"table_id: {table_id} flags: STMT_END_F"),
        ("Xid", xid),
    ]
    assert xid.startswith("COMMIT /* xid=") and xid.endswith(" */")
    cur.execute("SET SESSION binlog_format = STATEMENT")
    cur.execute("INSERT INTO d.t VALUES (2, 'b')")
    events = rows(cur, "SHOW BINLOG EVENTS IN 'binlog.000001'")
    # in STATEMENT format rows are logged as deterministic statements, every column named
    assert (events[-2][2], events[-2][5]) == (
        "Query",
        "use `d`; INSERT INTO `d`.`t` (`id`,`v`) VALUES (2,'b')",
    )
    after = rows(cur, "SHOW MASTER STATUS")[0][1]
    ddl = [(e[2], e[5]) for e in events if e[5].startswith("CREATE DATABASE")]
    assert ddl == [("Query", "CREATE DATABASE d")]
    for before, event in itertools.pairwise(events):
        assert event[1] == before[4]
    assert events[-1][4] == after
    limited = rows(cur, "SHOW BINLOG EVENTS IN 'binlog.000001' LIMIT 2")
    assert limited == events[:2]
    assert fail(cur, "SHOW BINLOG EVENTS IN 'binlog.999999'") == (
        1220,
        "HY000",
        "Error when executing command SHOW BINLOG EVENTS: Could not find target log",
    )
    connection.close()


def test_flush_purge_reset(fresh_server: Any) -> None:
    fresh_server.start()
    connection = fresh_server.connect()
    cur = connection.cursor()
    cur.execute("CREATE DATABASE d")
    cur.execute("FLUSH BINARY LOGS")
    assert [r[0] for r in rows(cur, "SHOW BINARY LOGS")] == ["binlog.000001", "binlog.000002"]
    first = rows(cur, "SHOW BINLOG EVENTS IN 'binlog.000001'")
    assert first[-1][2] == "Rotate"
    assert first[-1][5] == "binlog.000002;pos=4"
    assert rows(cur, "SHOW MASTER STATUS")[0][0] == "binlog.000002"
    cur.execute("CREATE TABLE d.t (id INT PRIMARY KEY)")
    cur.execute("FLUSH LOGS")
    assert (fresh_server.datadir / "binlog.000003").exists()
    assert fail(cur, "PURGE BINARY LOGS TO 'binlog.000042'") == (
        1373,
        "HY000",
        "Target log not found in binlog index",
    )
    cur.execute("PURGE BINARY LOGS TO 'binlog.000003'")
    assert [r[0] for r in rows(cur, "SHOW BINARY LOGS")] == ["binlog.000003"]
    assert not (fresh_server.datadir / "binlog.000001").exists()
    assert not (fresh_server.datadir / "binlog.000002").exists()
    assert rows(cur, "SELECT @@gtid_purged")[0][0] != ""
    cur.execute("RESET MASTER")
    assert [r[0] for r in rows(cur, "SHOW BINARY LOGS")] == ["binlog.000001"]
    assert rows(cur, "SHOW MASTER STATUS")[0][4] == ""
    assert rows(cur, "SELECT @@global.gtid_executed, @@global.gtid_purged") == [("", "")]
    assert not (fresh_server.datadir / "binlog.000003").exists()
    cur.execute("INSERT INTO d.t VALUES (1)")
    uuid = (
        (fresh_server.datadir / "auto.cnf").read_text().split("=")[-1].strip()
        if (fresh_server.datadir / "auto.cnf").exists()
        else ""
    )
    assert rows(cur, "SHOW MASTER STATUS")[0][4] == f"{uuid}:1"
    connection.close()


def test_checksum_table(cur: Any) -> None:
    cur.execute("CREATE TABLE a (id INT PRIMARY KEY, s VARCHAR(5))")
    cur.execute("CREATE TABLE b (id INT PRIMARY KEY, s VARCHAR(5))")
    cur.execute("INSERT INTO a VALUES (1, 'x'), (2, 'y')")
    cur.execute("INSERT INTO b VALUES (2, 'y'), (1, 'x')")
    ((name_a, sum_a),) = rows(cur, "CHECKSUM TABLE a")
    assert [d[0] for d in cur.description] == ["Table", "Checksum"]
    assert name_a == f"{cur.db}.a"
    ((_, sum_b),) = rows(cur, "CHECKSUM TABLE b")
    assert sum_a == sum_b and isinstance(sum_a, int)
    cur.execute("UPDATE b SET s = 'z' WHERE id = 2")
    assert rows(cur, "CHECKSUM TABLE b")[0][1] != sum_a
    assert rows(cur, "CHECKSUM TABLE a, missing") == [
        (f"{cur.db}.a", sum_a),
        (f"{cur.db}.missing", None),
    ]
    cur.execute("CREATE TABLE e (id INT PRIMARY KEY)")
    assert rows(cur, "CHECKSUM TABLE e") == [(f"{cur.db}.e", 0)]


# ------------------------------------------------------------ bad statements
def test_parse_errors(cur: Any) -> None:
    prefix = (
        "You have an error in your SQL syntax; check the manual that corresponds to your "
        "MySQL server version for the right syntax to use near "
    )
    assert fail(cur, "SELEKT 1") == (1064, "42000", prefix + "'SELEKT 1' at line 1")
    assert fail(cur, "SELECT 1 FROM") == (1064, "42000", prefix + "'' at line 1")
    assert fail(cur, "SELECT 1,\n2 FROM t WHERE ) x") == (1064, "42000", prefix + "') x' at line 2")
    _alive(cur)


def test_unsupported_and_empty(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    for sql in ("ALTER TABLE t ORDER BY id", "SELECT * FROM t NATURAL JOIN t AS u"):
        errno, state, message = fail(cur, sql)
        assert (errno, state) == (1235, "42000"), sql
        assert message.startswith("This version of MySQL doesn't yet support '"), message
        _alive(cur)
    assert fail(cur, "") == (1065, "42000", "Query was empty")
    assert fail(cur, "   ") == (1065, "42000", "Query was empty")
    _alive(cur)


def test_server_uuid_variable(server: Any) -> None:
    auto = (server.datadir / "auto.cnf").read_text()
    assert auto.startswith("[auto]\nserver-uuid = ") or "server-uuid" in auto
    uuid = auto.split("=")[-1].strip()
    assert server.query("SELECT @@server_uuid") == [(uuid,)]
    assert server.query("SHOW VARIABLES LIKE 'server_uuid'") == [("server_uuid", uuid)]


def test_gtid_set_functions(cur: Any) -> None:
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    assert rows(
        cur,
        f"SELECT GTID_SUBSET('{uuid}:1-3', '{uuid}:1-5'), "
        f"GTID_SUBSET('{uuid}:1-6', '{uuid}:1-5'), GTID_SUBSET('', '{uuid}:1')",
    ) == [(1, 0, 1)]
    assert rows(
        cur,
        f"SELECT GTID_SUBTRACT('{uuid}:1-10', '{uuid}:3-4'), "
        f"GTID_SUBTRACT('{uuid}:1-3', '{uuid}:1-5'), GTID_SUBSET(NULL, '')",
    ) == [(f"{uuid}:1-2:5-10", "", None)]
    assert rows(cur, "SELECT GTID_SUBSET(@@global.gtid_executed, @@global.gtid_executed)") == [(1,)]
    with pytest.raises(pymysql.MySQLError) as bad:
        cur.execute("SELECT GTID_SUBSET('not a gtid set', '')")
    assert bad.value.args == (1772, "Malformed GTID set specification 'not a gtid set'.")
    _alive(cur)


def test_super_read_only_implies_read_only(cur: Any) -> None:
    try:
        cur.execute("SET GLOBAL super_read_only = ON")
        assert rows(cur, "SELECT @@global.read_only, @@global.super_read_only") == [(1, 1)]
        cur.execute("SET GLOBAL read_only = OFF")
        assert rows(cur, "SELECT @@global.read_only, @@global.super_read_only") == [(0, 0)]
        cur.execute("SET GLOBAL read_only = ON")
        assert rows(cur, "SELECT @@global.read_only, @@global.super_read_only") == [(1, 0)]
    finally:
        cur.execute("SET GLOBAL read_only = OFF")


def test_insert_ignore_adjusts_bad_values_with_warnings(cur: Any) -> None:
    cur.execute(
        "CREATE TABLE ig (id INT PRIMARY KEY, t TINYINT, u INT UNSIGNED, "
        "d DECIMAL(5,2), s VARCHAR(3), n INT NOT NULL)"
    )
    with pytest.raises(pymysql.MySQLError) as strict:
        cur.execute("INSERT INTO ig VALUES (1, 300, 1, 1, 'a', 1)")
    assert strict.value.args[0] == 1264, "without IGNORE the value is refused"
    cur.execute(
        "INSERT IGNORE INTO ig VALUES (1, 300, -5, 12345.678, 'abcdef', NULL), "
        "(2, -300, 'abc', -99999, 'xy', 7)"
    )
    warnings = rows(cur, "SHOW WARNINGS")
    assert [(level, code) for level, code, _ in warnings] == [
        ("Warning", 1264),
        ("Warning", 1264),
        ("Warning", 1264),
        ("Warning", 1265),
        ("Warning", 1048),
        ("Warning", 1264),
        ("Warning", 1366),
        ("Warning", 1264),
    ]
    messages = [m for _, _, m in warnings]
    assert "Data truncated for column 's' at row 1" in messages
    assert "Out of range value for column 't' at row 2" in messages
    assert rows(cur, "SELECT * FROM ig ORDER BY id") == [
        (1, 127, 0, Decimal("999.99"), "abc", 0),
        (2, -128, 0, Decimal("-999.99"), "xy", 7),
    ]
