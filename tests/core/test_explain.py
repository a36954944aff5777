"""EXPLAIN [FORMAT=TRADITIONAL] and DESCRIBE of SELECT / UPDATE / DELETE / INSERT through
PyMySQL against a real rpl server process: MySQL 8.0's twelve columns and the plan the
server runs (const, range, eq_ref, ALL), with row counts from the table.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

_names = itertools.count(1)
COLUMNS = [
    "id",
    "select_type",
    "table",
    "partitions",
    "type",
    "possible_keys",
    "key",
    "key_len",
    "ref",
    "rows",
    "filtered",
    "Extra",
]
FULL = Decimal("100.00")


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    name = f"explaintest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20))")
    cursor.execute("CREATE TABLE u (id BIGINT PRIMARY KEY, t_id INT)")
    cursor.execute(
        "INSERT INTO t VALUES " + ",".join(f"({i}, {i % 5}, 'c{i}')" for i in range(1, 101))
    )
    cursor.execute("INSERT INTO u VALUES (1, 5), (2, 7)")
    cursor.db = name
    yield cursor
    connection.close()


def explain(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    assert [d[0] for d in cursor.description] == COLUMNS
    return list(cursor.fetchall())


def test_single_table_plans(cur: Any) -> None:
    assert explain(cur, "EXPLAIN SELECT c FROM t WHERE id = 7") == [
        (1, "SIMPLE", "t", None, "const", "PRIMARY", "PRIMARY", "4", "const", 1, FULL, None)
    ]
    assert explain(
        cur, "EXPLAIN FORMAT=TRADITIONAL SELECT c FROM t WHERE id BETWEEN 10 AND 29"
    ) == [
        (1, "SIMPLE", "t", None, "range", "PRIMARY", "PRIMARY", "4", None, 20, FULL, "Using where")
    ]
    # pt-table-checksum's chunk bounds
    assert explain(cur, "EXPLAIN SELECT * FROM t WHERE id >= 11 AND id <= 15 AND k > 0")[0][
        4:10
    ] == (
        "range",
        "PRIMARY",
        "PRIMARY",
        "4",
        None,
        5,
    )
    assert explain(cur, "EXPLAIN SELECT * FROM t WHERE k = 3") == [
        (1, "SIMPLE", "t", None, "ALL", None, None, None, None, 100, FULL, "Using where")
    ]
    # pt-table-checksum's chunk-size probe reads `rows`
    assert explain(
        cur, "EXPLAIN SELECT COUNT(*) FROM t FORCE INDEX(PRIMARY) WHERE id >= 1 AND id IN (1, 2, 3)"
    )[0][4:10] == ("range", "PRIMARY", "PRIMARY", "4", None, 3)
    assert explain(cur, "DESCRIBE SELECT 1") == [
        (1, "SIMPLE", None, None, None, None, None, None, None, None, None, "No tables used")
    ]


def test_join_and_subquery_plans(cur: Any) -> None:
    assert explain(cur, "EXPLAIN SELECT * FROM u JOIN t ON t.id = u.t_id") == [
        (1, "SIMPLE", "u", None, "ALL", None, None, None, None, 2, FULL, None),
        (
            1,
            "SIMPLE",
            "t",
            None,
            "eq_ref",
            "PRIMARY",
            "PRIMARY",
            "4",
            f"{cur.db}.u.t_id",
            1,
            FULL,
            None,
        ),
    ]
    cur.execute("CREATE TABLE v (t_id INT, u_id BIGINT, PRIMARY KEY (t_id, u_id))")
    assert explain(cur, "EXPLAIN SELECT * FROM u JOIN v ON v.t_id = u.t_id AND v.u_id = u.id")[1][
        2:9
    ] == ("v", None, "eq_ref", "PRIMARY", "PRIMARY", "12", f"{cur.db}.u.t_id,{cur.db}.u.id")
    plan = explain(cur, "DESC SELECT c FROM t WHERE id IN (SELECT t_id FROM u)")
    assert [(r[0], r[1], r[2], r[4]) for r in plan] == [
        (1, "PRIMARY", "t", "ALL"),
        (2, "SUBQUERY", "u", "ALL"),
    ]


def test_write_statement_plans(cur: Any) -> None:
    assert explain(cur, "EXPLAIN UPDATE t SET k = 0 WHERE id = 3") == [
        (1, "UPDATE", "t", None, "const", "PRIMARY", "PRIMARY", "4", "const", 1, FULL, None)
    ]
    assert explain(cur, "EXPLAIN DELETE FROM t WHERE id > 90") == [
        (1, "DELETE", "t", None, "range", "PRIMARY", "PRIMARY", "4", None, 10, FULL, "Using where")
    ]
    assert explain(cur, "EXPLAIN DELETE FROM t WHERE k > 0")[0][4:10] == (
        "ALL",
        None,
        None,
        None,
        None,
        100,
    )
    assert explain(cur, "EXPLAIN INSERT INTO u VALUES (3, 3)") == [
        (1, "INSERT", "u", None, "ALL", None, None, None, None, None, None, None)
    ]
    # EXPLAIN changes nothing
    cur.execute("SELECT k FROM t WHERE id = 3")
    assert cur.fetchall() == ((3,),)


def test_union_plans(cur: Any) -> None:
    plan = explain(cur, "EXPLAIN SELECT id FROM t WHERE id = 1 UNION SELECT id FROM u")
    assert [r[:5] for r in plan] == [
        (1, "PRIMARY", "t", None, "const"),
        (2, "UNION", "u", None, "ALL"),
        (None, "UNION RESULT", "<union1,2>", None, "ALL"),
    ]
    plan = explain(cur, "EXPLAIN SELECT id FROM t WHERE id = 1 UNION ALL SELECT id FROM u")
    assert [r[1] for r in plan] == ["PRIMARY", "UNION"]
