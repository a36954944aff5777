"""Subqueries through PyMySQL against a real rpl server process: scalar (select list and
WHERE), IN / NOT IN with NULLs, EXISTS, correlated ones, derived tables, and MySQL's errors
for each misuse (1242, 1241, 1248).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str | None, str]:
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    error = info.value
    return error.args[0], getattr(error, "sqlstate", None), error.args[1]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    name = f"subtest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.execute("CREATE TABLE a (id INT PRIMARY KEY, x VARCHAR(10), n INT)")
    cursor.execute("CREATE TABLE b (id INT PRIMARY KEY, a_id INT, y VARCHAR(10))")
    cursor.execute("INSERT INTO a VALUES (1, 'p', 10), (2, 'q', 20), (3, 'r', NULL)")
    cursor.execute("INSERT INTO b VALUES (10, 1, 'u'), (11, 1, 'v'), (12, 2, 'w'), (13, 9, 'z')")
    cursor.db = name
    yield cursor
    connection.close()


def test_scalar_subqueries(cur: Any) -> None:
    assert rows(cur, "SELECT (SELECT MAX(id) FROM b), (SELECT y FROM b WHERE id = 12)") == [
        (13, "w")
    ]
    assert rows(cur, "SELECT (SELECT y FROM b WHERE id = 99)") == [(None,)]
    assert rows(cur, "SELECT x FROM a WHERE n = (SELECT MAX(n) FROM a)") == [("q",)]
    assert rows(cur, "SELECT x FROM a WHERE id > (SELECT AVG(id) FROM a)") == [("r",)]


def test_in_and_not_in(cur: Any) -> None:
    assert rows(cur, "SELECT x FROM a WHERE id IN (SELECT a_id FROM b) ORDER BY id") == [
        ("p",),
        ("q",),
    ]
    assert rows(cur, "SELECT x FROM a WHERE id NOT IN (SELECT a_id FROM b)") == [("r",)]
    # a NULL in the subquery makes NOT IN unknown for every row not found: no rows
    assert (
        rows(cur, "SELECT x FROM a WHERE id NOT IN (SELECT n FROM a)")
        == [
            ("p",),
            ("q",),
            ("r",),
        ][:0]
    )
    assert rows(cur, "SELECT 2 IN (SELECT id FROM a), 5 IN (SELECT id FROM a)") == [(1, 0)]
    assert rows(cur, "SELECT 5 IN (SELECT n FROM a), 5 NOT IN (SELECT id FROM b WHERE 0)") == [
        (None, 1)
    ]


def test_exists_and_correlated_subqueries(cur: Any) -> None:
    assert rows(
        cur, "SELECT x FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id) ORDER BY id"
    ) == [("p",), ("q",)]
    assert rows(cur, "SELECT x FROM a WHERE NOT EXISTS (SELECT * FROM b WHERE a_id = a.id)") == [
        ("r",)
    ]
    assert rows(
        cur,
        "SELECT x, (SELECT COUNT(*) FROM b WHERE b.a_id = a.id) AS cnt FROM a ORDER BY cnt DESC, x",
    ) == [("p", 2), ("q", 1), ("r", 0)]
    # correlated two levels down: the innermost query reads the outermost row
    assert rows(
        cur,
        "SELECT x FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.id IN "
        "(SELECT b2.id FROM b AS b2 WHERE b2.a_id = a.id AND b2.y = 'w'))",
    ) == [("q",)]


def test_derived_tables(cur: Any) -> None:
    assert rows(cur, "SELECT * FROM (SELECT id, x FROM a WHERE id > 1) AS d ORDER BY id DESC") == [
        (3, "r"),
        (2, "q"),
    ]
    assert rows(
        cur,
        "SELECT d.a_id, d.c, a.x FROM (SELECT a_id, COUNT(*) AS c FROM b GROUP BY a_id) d "
        "JOIN a ON a.id = d.a_id ORDER BY d.a_id",
    ) == [(1, 2, "p"), (2, 1, "q")]
    assert rows(cur, "SELECT COUNT(*) FROM (SELECT 1 AS one UNION ALL SELECT 2) AS u") == [(2,)]


def test_subquery_errors(cur: Any) -> None:
    assert fail(cur, "SELECT (SELECT id FROM b)") == (
        1242,
        "21000",
        "Subquery returns more than 1 row",
    )
    assert fail(cur, "SELECT x FROM a WHERE id = (SELECT a_id FROM b)") == (
        1242,
        "21000",
        "Subquery returns more than 1 row",
    )
    assert fail(cur, "SELECT (SELECT id, y FROM b WHERE id = 10)") == (
        1241,
        "21000",
        "Operand should contain 1 column(s)",
    )
    assert fail(cur, "SELECT * FROM (SELECT id FROM a)") == (
        1248,
        "42000",
        "Every derived table must have its own alias",
    )
    assert fail(cur, "SELECT x FROM a WHERE id IN (SELECT nope FROM b)") == (
        1054,
        "42S22",
        "Unknown column 'nope' in 'field list'",
    )
    assert rows(cur, "SELECT 1") == [(1,)]


def test_subqueries_in_writes(cur: Any) -> None:
    assert cur.execute("UPDATE a SET n = (SELECT COUNT(*) FROM b WHERE b.a_id = a.id)") == 3
    assert rows(cur, "SELECT id, n FROM a ORDER BY id") == [(1, 2), (2, 1), (3, 0)]
    assert cur.execute("DELETE FROM b WHERE a_id NOT IN (SELECT id FROM a)") == 1
    assert rows(cur, "SELECT id FROM b ORDER BY id") == [(10,), (11,), (12,)]
    assert cur.execute("INSERT INTO a VALUES ((SELECT MAX(id) FROM b), 'new', 0)") == 1
    assert rows(cur, "SELECT id, x FROM a WHERE id > 3") == [(12, "new")]
    assert (
        cur.execute("DELETE FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.a_id = a.id AND y = 'w')")
        == 1
    )
    assert rows(cur, "SELECT id FROM a ORDER BY id") == [(1,), (3,), (12,)]
    assert fail(cur, "UPDATE a SET n = 1 WHERE id IN (SELECT id FROM a)") == (
        1093,
        "HY000",
        "You can't specify target table 'a' for update in FROM clause",
    )
    assert rows(cur, "SELECT n FROM a ORDER BY id") == [(2,), (0,), (0,)]


def test_any_all_some(cur: Any) -> None:
    assert rows(cur, "SELECT x FROM a WHERE id > ANY (SELECT a_id FROM b) ORDER BY id") == [
        ("q",),
        ("r",),
    ]
    assert rows(cur, "SELECT x FROM a WHERE id >= ALL (SELECT a_id FROM b WHERE a_id < 9)") == [
        ("q",),
        ("r",),
    ]
    assert rows(cur, "SELECT x FROM a WHERE id = SOME (SELECT a_id FROM b) ORDER BY id") == [
        ("p",),
        ("q",),
    ]
    # over no rows ALL is true and ANY false; a NULL makes an undecided answer NULL
    assert rows(
        cur,
        "SELECT 1 > ALL (SELECT id FROM b WHERE 0), 1 > ANY (SELECT id FROM b WHERE 0), "
        "100 > ALL (SELECT n FROM a), 5 > ANY (SELECT n FROM a), 15 > ANY (SELECT n FROM a)",
    ) == [(1, 0, None, None, 1)]
