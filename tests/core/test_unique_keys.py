"""UNIQUE secondary indexes against a real rpl server process (PyMySQL): declared every
way MySQL allows, enforced on INSERT, UPDATE, REPLACE and between two transactions, with
MySQL 8.0's error texts (``Duplicate entry 'v' for key 't.name'``), several NULLs allowed,
and the index entries the engine keeps for lookups."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

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
    """A cursor (autocommit) in a database of its own."""
    connection = server.connect()
    cursor = connection.cursor()
    name = f"uniq{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.db = name
    yield cursor
    connection.close()


def test_column_table_and_create_unique_index_are_enforced(cur: Any) -> None:
    cur.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(40) UNIQUE, a INT, b INT, c INT, "
        "UNIQUE KEY ab (a, b))"
    )
    cur.execute("CREATE UNIQUE INDEX uc ON t (c)")
    cur.execute("INSERT INTO t VALUES (1, 'x@y', 1, 1, 10)")
    assert fail(cur, "INSERT INTO t VALUES (2, 'x@y', 1, 2, 20)") == (
        1062,
        "Duplicate entry 'x@y' for key 't.email'",
    )
    assert fail(cur, "INSERT INTO t VALUES (2, 'z@y', 1, 1, 20)") == (
        1062,
        "Duplicate entry '1-1' for key 't.ab'",
    )
    assert fail(cur, "INSERT INTO t VALUES (2, 'z@y', 1, 2, 10)") == (
        1062,
        "Duplicate entry '10' for key 't.uc'",
    )
    assert fail(cur, "INSERT INTO t VALUES (1, 'q', 5, 5, 50)") == (
        1062,
        "Duplicate entry '1' for key 't.PRIMARY'",
    )
    assert rows(cur, "SELECT * FROM t") == [(1, "x@y", 1, 1, 10)]
    # several NULLs in a UNIQUE key are allowed
    cur.execute("INSERT INTO t VALUES (2, NULL, 1, NULL, NULL), (3, NULL, 1, NULL, NULL)")
    assert rows(cur, "SELECT COUNT(*) FROM t") == [(3,)]


def test_update_and_multi_row_insert_are_checked_atomically(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))")
    cur.execute("INSERT INTO t VALUES (1, 1), (2, 2)")
    assert fail(cur, "UPDATE t SET u = 1 WHERE id = 2") == (
        1062,
        "Duplicate entry '1' for key 't.uu'",
    )
    assert fail(cur, "INSERT INTO t VALUES (3, 3), (4, 3)") == (
        1062,
        "Duplicate entry '3' for key 't.uu'",
    )
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(1, 1), (2, 2)]
    # a value freed earlier in the same statement or transaction can be taken
    cur.execute("UPDATE t SET u = u + 10")
    cur.execute("BEGIN")
    cur.execute("DELETE FROM t WHERE id = 1")
    cur.execute("INSERT INTO t VALUES (5, 11)")
    cur.execute("COMMIT")
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(2, 12), (5, 11)]
    cur.execute("INSERT IGNORE INTO t VALUES (6, 12), (7, 13)")
    assert rows(cur, "SHOW WARNINGS") == [("Warning", 1062, "Duplicate entry '12' for key 't.uu'")]
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(2, 12), (5, 11), (7, 13)]


def test_replace_deletes_every_conflicting_row(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT UNIQUE, b INT UNIQUE, v CHAR(1))")
    cur.execute("INSERT INTO t VALUES (1, 1, 1, 'x'), (2, 2, 2, 'y'), (3, 3, 3, 'z')")
    # conflicts with id 1 (PRIMARY), id 2 (a) and id 3 (b): all three go
    assert cur.execute("REPLACE INTO t VALUES (1, 2, 3, 'n')") == 4
    assert rows(cur, "SELECT * FROM t") == [(1, 2, 3, "n")]


def test_create_unique_index_over_repeated_values_changes_nothing(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO t VALUES (1, 7), (2, 7), (3, NULL), (4, NULL)")
    assert fail(cur, "CREATE UNIQUE INDEX uv ON t (v)") == (
        1062,
        "Duplicate entry '7' for key 't.uv'",
    )
    assert fail(cur, "ALTER TABLE t ADD UNIQUE uv (v)") == (
        1062,
        "Duplicate entry '7' for key 't.uv'",
    )
    assert rows(cur, "SHOW INDEX FROM t")[-1][2] == "PRIMARY"
    cur.execute("UPDATE t SET v = 8 WHERE id = 2")
    cur.execute("ALTER TABLE t ADD UNIQUE uv (v)")
    assert fail(cur, "INSERT INTO t VALUES (5, 8)") == (1062, "Duplicate entry '8' for key 't.uv'")
    cur.execute("DROP INDEX uv ON t")
    cur.execute("INSERT INTO t VALUES (5, 8)")
    assert rows(cur, "SELECT COUNT(*) FROM t WHERE v = 8") == [(2,)]


def test_two_transactions_cannot_both_commit_one_value(server: Any, cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, u INT UNIQUE)")
    first = server.connect()
    second = server.connect()
    c1, c2 = first.cursor(), second.cursor()
    c1.execute(f"USE {cur.db}")
    c2.execute(f"USE {cur.db}")
    c1.execute("BEGIN")
    c1.execute("INSERT INTO t VALUES (1, 42)")
    outcome: dict[str, object] = {}

    def insert_second() -> None:
        try:
            c2.execute("INSERT INTO t VALUES (2, 42)")
            outcome["result"] = "inserted"
        except pymysql.err.MySQLError as exc:
            outcome["result"] = exc.args

    thread = threading.Thread(target=insert_second)
    thread.start()
    time.sleep(0.5)
    assert thread.is_alive(), "the second insert must wait for the first transaction"
    c1.execute("COMMIT")
    thread.join(10)
    assert outcome["result"] == (1062, "Duplicate entry '42' for key 't.u'")
    # and when the first rolls back, the second gets the value
    c1.execute("BEGIN")
    c1.execute("INSERT INTO t VALUES (3, 43)")
    thread = threading.Thread(target=lambda: c2.execute("INSERT INTO t VALUES (4, 43)"))
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()
    c1.execute("ROLLBACK")
    thread.join(10)
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(1, 42), (4, 43)]
    first.close()
    second.close()


def test_show_create_table_and_columns_show_unique_keys(cur: Any) -> None:
    cur.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT NOT NULL, c INT, KEY kc (c), "
        "UNIQUE KEY ua (a), UNIQUE INDEX (b))"
    )
    ((_, create),) = rows(cur, "SHOW CREATE TABLE t")
    assert create == (
        "CREATE TABLE `t` (\n"
        "  `id` int NOT NULL,\n"
        "  `a` int DEFAULT NULL,\n"
        "  `b` int NOT NULL,\n"
        "  `c` int DEFAULT NULL,\n"
        "  PRIMARY KEY (`id`),\n"
        "  UNIQUE KEY `b` (`b`),\n"
        "  UNIQUE KEY `ua` (`a`),\n"
        "  KEY `kc` (`c`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )
    assert [r[3] for r in rows(cur, "SHOW COLUMNS FROM t")] == ["PRI", "UNI", "UNI", "MUL"]


def test_engine_lookup_by_secondary_index(tmp_path: Any) -> None:
    from rpl.core.engine import ColumnSchema, Engine, TableSchema

    engine = Engine()
    engine.create_database("d")
    schema = TableSchema(
        "d",
        "t",
        (ColumnSchema("id", "INT"), ColumnSchema("u", "INT"), ColumnSchema("k", "INT")),
        ("id",),
        {"u": ("u",), "k": ("k",)},
        unique={"u"},
    )
    table = engine.create_table(schema)
    assert table is not None
    trx = engine.begin(1)
    for i in range(1, 6):
        trx.insert(table, {"id": i, "u": i * 10, "k": i % 2})
    assert trx.lookup(table, "k", [1]) == [(1, (1, 10, 1)), (3, (3, 30, 1)), (5, (5, 50, 1))]
    assert table.lookup("k", [1]) == []  # nothing committed yet
    trx.commit()
    assert table.lookup("u", [30]) == [(3, (3, 30, 1))]
    assert table.lookup("k", [0]) == [(2, (2, 20, 0)), (4, (4, 40, 0))]
    trx = engine.begin(1)
    trx.update(table, 2, {"k": 1})
    trx.delete(table, 4)
    assert trx.lookup(table, "k", [0]) == []
    trx.commit()
    assert table.lookup("k", [0]) == []
    assert [pk for pk, _ in table.lookup("k", [1])] == [1, 2, 3, 5]
    with pytest.raises(KeyError):
        table.lookup("nope", [1])


def test_engine_snapshot_keeps_keys_and_old_snapshots_load(tmp_path: Any) -> None:
    import io
    import pickle

    from rpl.core.engine import ColumnSchema, Engine, TableSchema
    from rpl.core.engine.schema import ForeignKey
    from rpl.core.engine.storage import SNAPSHOT_MAGIC, SNAPSHOT_VERSION

    engine = Engine()
    engine.create_database("d")
    parent = engine.create_table(TableSchema("d", "p", (ColumnSchema("id", "INT"),), ("id",)))
    fk = ForeignKey("c_ibfk_1", ("pid",), "d", "p", ("id",), "CASCADE", parent_key="PRIMARY")
    child = engine.create_table(
        TableSchema(
            "d",
            "c",
            (ColumnSchema("id", "INT"), ColumnSchema("pid", "INT"), ColumnSchema("u", "INT")),
            ("id",),
            {"uu": ("u",), "pid": ("pid",)},
            unique={"uu"},
            foreign_keys=(fk,),
        )
    )
    assert parent is not None and child is not None
    trx = engine.begin(1)
    trx.insert(parent, {"id": 1})
    trx.insert(child, {"id": 1, "pid": 1, "u": 5})
    trx.commit()
    buffer = io.BytesIO()
    engine.snapshot(buffer)
    buffer.seek(0)
    restored = Engine.restore(buffer)
    table = restored.table("d", "c")
    assert table.schema.unique == {"uu"} and table.schema.foreign_keys == (fk,)
    assert table.lookup("uu", [5]) == [(1, (1, 1, 5))]
    trx = restored.begin(1)
    with pytest.raises(Exception, match="Duplicate entry '5' for key 'c.uu'"):
        trx.insert(table, {"id": 2, "pid": 1, "u": 5})
    trx.delete(restored.table("d", "p"), 1)  # cascades to the child
    trx.commit()
    assert len(table) == 0
    # a snapshot written before UNIQUE and FOREIGN KEY were kept: none of either
    old_state: dict[str, object] = {
        "db": "d",
        "name": "o",
        "columns": (ColumnSchema("id", "INT"), ColumnSchema("v", "BOOL")),
        "primary_key": ("id",),
        "indexes": {"v": ("v",)},
        "auto_increment_column": None,
    }
    schema = TableSchema.__new__(TableSchema)
    schema.__setstate__(old_state)
    old = io.BytesIO()
    old.write(SNAPSHOT_MAGIC)
    pickle.dump((SNAPSHOT_VERSION, {"d": [(schema, 1, [(1, (1, 1))])]}), old)
    old.seek(0)
    loaded = Engine.restore(old).table("d", "o")
    assert loaded.schema.unique == frozenset() and loaded.schema.foreign_keys == ()
    assert loaded.lookup("v", [1]) == [(1, (1, 1))]


def test_insert_on_duplicate_key_update_updates_the_first_conflicting_row(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, u INT UNIQUE, hits INT NOT NULL DEFAULT 0)")
    cur.execute("INSERT INTO t VALUES (1, 10, 0), (2, 20, 0)")
    # a conflict on the UNIQUE key updates that row; VALUES(col) is the value offered
    sql = "INSERT INTO t VALUES (3, 20, 5) ON DUPLICATE KEY UPDATE hits = hits + VALUES(hits)"
    assert cur.execute(sql) == 2
    assert cur.execute("INSERT INTO t VALUES (4, 40, 1) ON DUPLICATE KEY UPDATE hits = 9") == 1
    # the primary key is looked at first: (1, 20) collides with id 1 and with u 20
    assert cur.execute("INSERT INTO t VALUES (1, 20, 0) ON DUPLICATE KEY UPDATE hits = 7") == 2
    # an unchanged row counts 0; assignments run left to right
    assert cur.execute("INSERT INTO t VALUES (1, 0, 0) ON DUPLICATE KEY UPDATE hits = 7") == 0
    cur.execute("INSERT INTO t VALUES (2, 0, 0) ON DUPLICATE KEY UPDATE hits = 1, u = hits + 20")
    assert rows(cur, "SELECT * FROM t ORDER BY id") == [(1, 10, 7), (2, 21, 1), (4, 40, 1)]
    # the update is checked like any other
    assert fail(cur, "INSERT INTO t VALUES (1, 0, 0) ON DUPLICATE KEY UPDATE u = 40") == (
        1062,
        "Duplicate entry '40' for key 't.u'",
    )
