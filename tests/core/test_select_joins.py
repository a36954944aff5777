"""SELECT over several tables, GROUP BY / HAVING, UNION, CAST/CONVERT, IS TRUE and the
functions pt-table-checksum sends, through PyMySQL against a real rpl server process;
each answer is MySQL's exact one (rows, error code, SQLSTATE, message).
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str | None, str]:
    """Run ``sql``, which must fail: (errno, SQLSTATE, message)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    error = info.value
    return error.args[0], getattr(error, "sqlstate", None), error.args[1]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    """A cursor in a database of its own with tables a (3 rows) and b (4 rows)."""
    connection = server.connect()
    cursor = connection.cursor()
    name = f"jointest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.execute("CREATE TABLE a (id INT PRIMARY KEY, x VARCHAR(10), n INT)")
    cursor.execute("CREATE TABLE b (id INT PRIMARY KEY, a_id INT, y VARCHAR(10))")
    cursor.execute("INSERT INTO a VALUES (1, 'p', 10), (2, 'q', 20), (3, 'r', NULL)")
    cursor.execute("INSERT INTO b VALUES (10, 1, 'u'), (11, 1, 'v'), (12, 2, 'w'), (13, 9, 'z')")
    cursor.db = name
    yield cursor
    connection.close()


def test_inner_joins_in_every_spelling(cur: Any) -> None:
    expected = [("p", "u"), ("p", "v"), ("q", "w")]
    for sql in (
        "SELECT a.x, b.y FROM a JOIN b ON b.a_id = a.id ORDER BY b.id",
        "SELECT a.x, b.y FROM a INNER JOIN b ON b.a_id = a.id ORDER BY b.id",
        "SELECT a.x, b.y FROM a CROSS JOIN b WHERE b.a_id = a.id ORDER BY b.id",
        "SELECT a.x, b.y FROM a, b WHERE a.id = b.a_id ORDER BY b.id",
        "SELECT s.x, t.y FROM a AS s JOIN b t ON t.a_id = s.id ORDER BY t.id",
        f"SELECT {cur.db}.a.x, b.y FROM {cur.db}.a JOIN b ON b.a_id = a.id ORDER BY b.id",
        "SELECT a.x, b.y FROM a FORCE INDEX (PRIMARY) JOIN b USE INDEX () ON b.a_id = a.id "
        "ORDER BY b.id",
    ):
        assert rows(cur, sql) == expected, sql
    assert rows(cur, "SELECT COUNT(*) FROM a, b") == [(12,)]


def test_outer_joins_keep_the_unmatched_side_with_nulls(cur: Any) -> None:
    assert rows(cur, "SELECT a.x, b.y FROM a LEFT JOIN b ON b.a_id = a.id ORDER BY a.id, b.id") == [
        ("p", "u"),
        ("p", "v"),
        ("q", "w"),
        ("r", None),
    ]
    assert rows(
        cur, "SELECT a.x, b.y FROM a RIGHT OUTER JOIN b ON b.a_id = a.id ORDER BY b.id"
    ) == [("p", "u"), ("p", "v"), ("q", "w"), (None, "z")]
    # a WHERE on the inner table after a LEFT JOIN: the NULL row is filtered out
    assert rows(cur, "SELECT a.x FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.y IS NULL") == [("r",)]
    # SELECT * lists the tables as written, even for RIGHT JOIN
    assert rows(cur, "SELECT * FROM a RIGHT JOIN b ON b.a_id = a.id WHERE b.id = 13") == [
        (None, None, None, 13, 9, "z")
    ]


def test_using_and_star_expansion(cur: Any) -> None:
    cur.execute("CREATE TABLE c (id INT PRIMARY KEY, z INT)")
    cur.execute("INSERT INTO c VALUES (1, 100), (3, 300)")
    # USING's column appears once in * and is not ambiguous unqualified
    assert rows(cur, "SELECT * FROM a JOIN c USING (id) ORDER BY id") == [
        (1, "p", 10, 100),
        (3, "r", None, 300),
    ]
    assert rows(cur, "SELECT id, z FROM a LEFT JOIN c USING (id) ORDER BY id") == [
        (1, 100),
        (2, None),
        (3, 300),
    ]
    assert rows(cur, "SELECT c.*, a.x FROM a JOIN c ON a.id = c.id ORDER BY c.id") == [
        (1, 100, "p"),
        (3, 300, "r"),
    ]
    cur.execute("SELECT a.*, b.y FROM a JOIN b ON a.id = b.a_id WHERE b.id = 12")
    assert [d[0] for d in cur.description] == ["id", "x", "n", "y"]
    assert cur.fetchall() == ((2, "q", 20, "w"),)


def test_join_errors_are_mysqls(cur: Any) -> None:
    assert fail(cur, "SELECT id FROM a JOIN b ON a.id = b.a_id") == (
        1052,
        "23000",
        "Column 'id' in field list is ambiguous",
    )
    assert fail(cur, "SELECT a.x FROM a JOIN b ON a.id = b.a_id WHERE id = 1") == (
        1052,
        "23000",
        "Column 'id' in where clause is ambiguous",
    )
    assert fail(cur, "SELECT a.nope FROM a JOIN b ON a.id = b.a_id") == (
        1054,
        "42S22",
        "Unknown column 'a.nope' in 'field list'",
    )
    assert fail(cur, "SELECT a.x FROM a JOIN b ON a.id = b.nope") == (
        1054,
        "42S22",
        "Unknown column 'b.nope' in 'on clause'",
    )
    assert fail(cur, "SELECT a.x FROM a JOIN b ON a.id = b.a_id WHERE q.id = 1") == (
        1054,
        "42S22",
        "Unknown column 'q.id' in 'where clause'",
    )
    assert fail(cur, "SELECT * FROM a JOIN a ON 1") == (
        1066,
        "42000",
        "Not unique table/alias: 'a'",
    )
    assert fail(cur, "SELECT q.* FROM a JOIN b ON 1")[:2] == (1051, "42S02")
    assert fail(cur, "SELECT * FROM a NATURAL JOIN b")[0] == 1235
    assert rows(cur, "SELECT 1") == [(1,)]


def test_group_by_having_and_aggregates(cur: Any) -> None:
    assert rows(
        cur,
        "SELECT a.x, COUNT(*) AS c, SUM(a.n), MIN(b.y), MAX(b.y) FROM a JOIN b ON b.a_id = a.id "
        "GROUP BY a.x HAVING c >= 1 ORDER BY c DESC, a.x",
    ) == [("p", 2, Decimal("20"), "u", "v"), ("q", 1, Decimal("20"), "w", "w")]
    assert rows(cur, "SELECT a_id, COUNT(*) FROM b GROUP BY a_id HAVING COUNT(*) > 1") == [(1, 2)]
    assert rows(cur, "SELECT a_id, GROUP_CONCAT(y) FROM b GROUP BY 1 ORDER BY 1") == [
        (1, "u,v"),
        (2, "w"),
        (9, "z"),
    ]
    assert rows(cur, "SELECT BIT_XOR(id), BIT_OR(id), BIT_AND(id), AVG(n) FROM a") == [
        (0, 3, 0, Decimal("15.0000"))
    ]
    assert rows(cur, "SELECT COUNT(*), SUM(n), BIT_XOR(n) FROM a WHERE id > 100") == [(0, None, 0)]
    # grouping by the primary key determines every column of its table
    assert rows(
        cur,
        "SELECT a.id, a.x, COUNT(b.id) FROM a LEFT JOIN b ON b.a_id = a.id "
        "GROUP BY a.id ORDER BY a.id",
    ) == [(1, "p", 2), (2, "q", 1), (3, "r", 0)]
    assert fail(cur, "SELECT y, COUNT(*) FROM b GROUP BY a_id") == (
        1055,
        "42000",
        "Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated "
        f"column '{cur.db}.b.y' which is not functionally dependent on columns in GROUP BY "
        "clause; this is incompatible with sql_mode=only_full_group_by",
    )
    assert fail(cur, "SELECT x, COUNT(*) FROM a")[:2] == (1140, "42000")
    assert fail(cur, "SELECT x FROM a WHERE COUNT(*) > 1") == (
        1111,
        "HY000",
        "Invalid use of group function",
    )


def test_union(cur: Any) -> None:
    assert rows(cur, "SELECT x FROM a UNION SELECT y FROM b ORDER BY 1 DESC LIMIT 3") == [
        ("z",),
        ("w",),
        ("v",),
    ]
    assert rows(cur, "SELECT 1 UNION SELECT 1") == [(1,)]
    assert rows(cur, "SELECT 1 UNION ALL SELECT 1") == [(1,), (1,)]
    assert fail(cur, "SELECT 1 UNION SELECT 1, 2") == (
        1222,
        "21000",
        "The used SELECT statements have a different number of columns",
    )


def test_cast_convert_and_is_true(cur: Any) -> None:
    assert rows(
        cur,
        "SELECT CAST('12abc' AS UNSIGNED), CAST(-1 AS UNSIGNED), CAST(1.5 AS SIGNED), "
        "CAST(18446744073709551615 AS SIGNED), CAST(123 AS CHAR(2)), CONVERT(7, CHAR), "
        "CAST(1.005 AS DECIMAL(5,2)), CONVERT('x' USING utf8mb4), CAST(NULL AS SIGNED)",
    ) == [(12, 18446744073709551615, 2, -1, "12", "7", Decimal("1.01"), "x", None)]
    cur.execute("SELECT CAST('2020-01-02 03:04:05' AS DATE), CAST('a' AS BINARY(3))")
    ((date, binary),) = cur.fetchall()
    assert (str(date), binary) == ("2020-01-02", b"a\x00\x00")
    assert rows(
        cur,
        "SELECT 1 IS TRUE, 0 IS TRUE, NULL IS TRUE, 0 IS FALSE, NULL IS UNKNOWN, "
        "NULL IS NOT FALSE, 2 IS NOT TRUE",
    ) == [(1, 0, 0, 1, 1, 1, 0)]
    assert rows(cur, "SELECT x FROM a WHERE (n > 10) IS TRUE") == [("q",)]
    assert rows(cur, "SELECT x FROM a WHERE (n > 10) IS NOT TRUE ORDER BY id") == [("p",), ("r",)]


def test_user_variable_assignment_in_select(cur: Any) -> None:
    assert rows(cur, "SELECT @v := 5, @v + 1") == [(5, 6)]
    assert rows(cur, "SELECT @w := x FROM a ORDER BY id") == [("p",), ("q",), ("r",)]
    assert rows(cur, "SELECT @w") == [("r",)]
    cur.execute("SET @z := 40 + 2")
    assert rows(cur, "SELECT @z") == [(42,)]


def test_checksum_functions(cur: Any) -> None:
    assert rows(
        cur,
        "SELECT CRC32('abc'), CONCAT_WS('#', 'a', NULL, 'b'), CONV(255, 10, 16), "
        "CONV('ff', 16, 10), ISNULL(NULL), ISNULL(1), HEX('ab'), HEX(255), MD5('a'), "
        "SHA1('a'), IFNULL(NULL, 3)",
    ) == [
        (
            zlib.crc32(b"abc"),
            "a#b",
            "FF",
            "255",
            1,
            0,
            "6162",
            "FF",
            "0cc175b9c0f1b6a831c399e269772661",
            "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8",
            3,
        )
    ]


CHUNK = (
    "SELECT COUNT(*) AS cnt, COALESCE(LOWER(CONV(BIT_XOR(CAST(CRC32(CONCAT_WS('#', id, x, "
    "CONCAT(ISNULL(n)))) AS UNSIGNED)), 10, 16)), 0) AS crc FROM {db}.a FORCE INDEX(PRIMARY) "
    "WHERE ((id >= {low})) AND ((id <= {high}))"
)


def _python_crc(table: list[tuple[int, str, int | None]], low: int, high: int) -> tuple[int, str]:
    """pt-table-checksum's chunk checksum computed in Python."""
    crc = 0
    count = 0
    for id_, x, n in table:
        if low <= id_ <= high:
            count += 1
            crc ^= zlib.crc32("#".join([str(id_), x, str(int(n is None))]).encode())
    return count, format(crc, "x") if count else "0"


def test_pt_table_checksum_chunk_query(cur: Any) -> None:
    data = [(i, f"v{i * 7}", None if i % 3 == 0 else i * 11) for i in range(1, 60)]
    cur.execute("DELETE FROM a")
    cur.execute(
        "INSERT INTO a VALUES "
        + ",".join(f"({i}, '{x}', {'NULL' if n is None else n})" for i, x, n in data)
    )
    for low, high in ((1, 59), (5, 20), (30, 30), (100, 200)):
        cnt, crc = rows(cur, CHUNK.format(db=cur.db, low=low, high=high))[0]
        assert (cnt, crc) == _python_crc(data, low, high), (low, high)
    cur.execute("SELECT @crc := 'x', @cnt := COUNT(*) FROM a")
    assert rows(cur, "SELECT @crc, @cnt") == [("x", 59)]


_small = st.lists(
    st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 4))),
    max_size=6,
    unique_by=lambda r: r[0],
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(left=_small, right=_small)
def test_joins_match_a_python_nested_loop(cur: Any, left: list[Any], right: list[Any]) -> None:
    cur.execute("DROP TABLE IF EXISTS l")
    cur.execute("DROP TABLE IF EXISTS r")
    cur.execute("CREATE TABLE l (id INT PRIMARY KEY, k INT)")
    cur.execute("CREATE TABLE r (id INT PRIMARY KEY, k INT)")
    for name, data in (("l", left), ("r", right)):
        if data:
            values = ",".join(f"({i}, {'NULL' if k is None else k})" for i, k in data)
            cur.execute(f"INSERT INTO {name} VALUES {values}")
    # ON the other table's primary key: the lookup path; ON a plain column: the scan path
    matches: list[tuple[str, Callable[[Any, Any], bool]]] = [
        ("r.id = l.k", lambda lr, rr: lr[1] is not None and rr[0] == lr[1]),
        ("r.k = l.k", lambda lr, rr: None not in (lr[1], rr[1]) and rr[1] == lr[1]),
    ]
    for on, match in matches:
        inner = sorted(lr + rr for lr in left for rr in right if match(lr, rr))
        assert rows(cur, f"SELECT * FROM l JOIN r ON {on} ORDER BY l.id, r.id") == inner
        outer = sorted(
            lr + rr for lr in left for rr in ([r for r in right if match(lr, r)] or [(None, None)])
        )
        got = rows(cur, f"SELECT * FROM l LEFT JOIN r ON {on} ORDER BY l.id, r.id")
        assert got == sorted(outer, key=lambda t: (t[0], -1 if t[2] is None else t[2]))


def test_having_without_grouping_filters_rows(cur: Any) -> None:
    assert rows(cur, "SELECT x, n AS m FROM a HAVING m > 10 ORDER BY x") == [("q", 20)]
    assert rows(cur, "SELECT COUNT(*) FROM a HAVING COUNT(*) > 5") == []
    assert rows(cur, "SELECT COUNT(*) AS c FROM a HAVING c = 3") == [(3,)]


def test_string_and_number_functions(cur: Any) -> None:
    assert rows(
        cur,
        "SELECT SUBSTRING('abcdef', 2, 3), SUBSTR('abcdef', -2), MID('abc', 0), "
        "LPAD('7', 3, '0'), RPAD('ab', 5, 'xy'), LPAD('abcdef', 3, '0'), LPAD('a', 3, ''), "
        "REPLACE('a-b-c', '-', '+'), TRIM('  x  '), LTRIM('  x'), RTRIM('x  '), "
        "LEFT('abc', 2), RIGHT('abc', 2), REVERSE('abc'), NULLIF(1, 1), NULLIF(1, 2), "
        "GREATEST(3, 10, 2), LEAST('b', 'a'), UNHEX('4142'), FLOOR(-1.5), CEILING(1.2), "
        "SUBSTRING(NULL, 1), LPAD('a', NULL, 'x')",
    ) == [
        (
            "bcd",
            "ef",
            "",
            "007",
            "abxyx",
            "abc",
            None,
            "a+b+c",
            "x",
            "x",
            "x",
            "ab",
            "bc",
            "cba",
            None,
            1,
            10,
            "a",
            b"AB",
            -2,
            2,
            None,
            None,
        )
    ]


def test_string_key_joined_by_a_number_compares_as_numbers(cur: Any) -> None:
    cur.execute("CREATE TABLE sk (k VARCHAR(5) PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO sk VALUES ('010', 1), ('20', 2), ('x', 3)")
    assert rows(cur, "SELECT a.x, sk.k FROM a JOIN sk ON sk.k = a.n ORDER BY a.id") == [
        ("p", "010"),
        ("q", "20"),
    ]
    assert rows(cur, "SELECT sk.v FROM sk JOIN sk AS s2 ON s2.k = sk.k ORDER BY sk.v") == [
        (1,),
        (2,),
        (3,),
    ]


def test_group_concat_order_and_separator(cur: Any) -> None:
    assert rows(
        cur,
        "SELECT a_id, GROUP_CONCAT(y ORDER BY y DESC SEPARATOR '|'), "
        "GROUP_CONCAT(DISTINCT a_id, y SEPARATOR '') FROM b GROUP BY a_id ORDER BY a_id",
    ) == [(1, "v|u", "1u1v"), (2, "w", "2w"), (9, "z", "9z")]
    assert rows(cur, "SELECT GROUP_CONCAT(n) FROM a") == [("10,20",)]
    assert rows(cur, "SELECT GROUP_CONCAT(n) FROM a WHERE n IS NULL") == [(None,)]


def test_expression_columns_carry_their_values_type(cur: Any) -> None:
    # a number stays a number on the client (PyMySQL converts by the column's type)
    assert rows(
        cur, "SELECT id + 1, CONCAT(x, '!'), n * 1.5, COALESCE(n - n, 0) FROM a WHERE id = 1"
    ) == [(2, "p!", Decimal("15.0"), 0)]
    assert rows(
        cur, "SELECT this.id * 2 FROM a AS this JOIN b ON b.a_id = this.id WHERE b.id = 12"
    ) == [(4,)]
