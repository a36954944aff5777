"""Primary-key reads narrowed by WHERE (points, IN, BETWEEN, comparisons and their ANDs)
return exactly what testing every row would, against a real rpl server process: a random
WHERE over an integer and a string key is compared with Python's evaluation of it
(hypothesis), with fractional, negative, NULL and out-of-order bounds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_names = itertools.count(1)
IDS = list(range(-3, 25, 2))
WORDS = ["a", "ab", "b", "ba", "c", "d"]


@pytest.fixture(scope="module")
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    name = f"rangetest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.execute("CREATE TABLE n (id INT PRIMARY KEY, v INT)")
    cursor.execute("INSERT INTO n VALUES " + ",".join(f"({i}, {i * 10})" for i in IDS))
    cursor.execute("CREATE TABLE s (id VARCHAR(10) PRIMARY KEY)")
    cursor.execute("INSERT INTO s VALUES " + ",".join(f"('{w}')" for w in WORDS))
    yield cursor
    connection.close()


Term = tuple[str, Callable[[Any], bool]]
_number = st.one_of(
    st.integers(-6, 28), st.decimals(-6, 28, places=1, allow_nan=False, allow_infinity=False)
)
_ops: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@st.composite
def number_term(draw: st.DrawFn) -> Term:
    kind = draw(st.sampled_from(["cmp", "flipped", "between", "in", "null"]))
    a, b = draw(_number), draw(_number)
    if kind == "null":
        return "id >= NULL", lambda i: False
    if kind == "between":
        return f"id BETWEEN {a} AND {b}", lambda i: Decimal(a) <= i <= Decimal(b)
    if kind == "in":
        return f"id IN ({a}, {b})", lambda i: i in (Decimal(a), Decimal(b))
    op = draw(st.sampled_from(sorted(_ops)))
    test = _ops[op]
    if kind == "flipped":
        return f"{a} {op} id", lambda i: test(Decimal(a), i)
    return f"id {op} {a}", lambda i: test(i, Decimal(a))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(terms=st.lists(number_term(), min_size=1, max_size=3), extra=st.booleans())
def test_integer_key_reads_match_every_row_tested(cur: Any, terms: list[Term], extra: bool) -> None:
    parts = [sql for sql, _ in terms] + (["v > 50"] if extra else [])
    cur.execute("SELECT id FROM n WHERE " + " AND ".join(parts) + " ORDER BY id")
    got = [r[0] for r in cur.fetchall()]
    expected = [
        i for i in IDS if all(test(Decimal(i)) for _, test in terms) and (not extra or i * 10 > 50)
    ]
    assert got == expected, parts
    # the same through the query engine (an aggregate), and UPDATE's read
    cur.execute("SELECT COUNT(*) FROM n WHERE " + " AND ".join(parts))
    assert cur.fetchall() == ((len(expected),),)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    op=st.sampled_from(sorted(_ops)),
    word=st.sampled_from(["", "a", "aa", "b", "bz", "e"]),
    low=st.sampled_from(WORDS),
    high=st.sampled_from(WORDS),
)
def test_string_key_reads_match_every_row_tested(
    cur: Any, op: str, word: str, low: str, high: str
) -> None:
    cur.execute(f"SELECT id FROM s WHERE id {op} '{word}' ORDER BY id")
    assert [r[0] for r in cur.fetchall()] == [w for w in WORDS if _ops[op](w, word)]
    cur.execute(f"SELECT id FROM s WHERE id BETWEEN '{low}' AND '{high}' ORDER BY id")
    assert [r[0] for r in cur.fetchall()] == [w for w in WORDS if low <= w <= high]


def test_writes_read_the_same_ranges(cur: Any) -> None:
    cur.execute("CREATE TABLE w (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO w VALUES " + ",".join(f"({i}, 0)" for i in range(1, 11)))
    assert cur.execute("UPDATE w SET v = 1 WHERE id > 2.5 AND id <= 5") == 3
    assert cur.execute("DELETE FROM w WHERE id BETWEEN 7.5 AND 9") == 2
    cur.execute("SELECT id, v FROM w ORDER BY id")
    assert cur.fetchall() == ((1, 0), (2, 0), (3, 1), (4, 1), (5, 1), (6, 0), (7, 0), (10, 0))


# ------------------------------------------------------------ every key type
# A read narrowed by the primary key must return what the same WHERE returns when every row
# is tested: ``NOT NOT (w)`` has w's truth (NULL stays NULL) and hides the key terms from the
# narrowing, so the server's own scan is the oracle. The values are chosen so that MySQL's
# conversions matter: text that reads as the same number, fractions, dates as numbers.
KEY_TYPES: dict[str, tuple[list[str], list[str]]] = {
    "VARCHAR(10)": (
        ["'5'", "'05'", "' 5'", "'5.0'", "'5x'", "'abc'", "'b'"],
        ["5", "'5'", "5.0", "'05'", "0", "'abc'", "4.5", "'a'", "NULL"],
    ),
    "CHAR(4)": (["'5'", "'05'", "'5.0'", "'x'"], ["5", "'5'", "'05'", "0", "'x'"]),
    "DECIMAL(5,2)": (
        ["1.5", "2", "2.25", "-1"],
        ["1.5", "'1.5'", "2", "'2.00'", "2.25", "2.250", "1.499", "-1", "'x'", "NULL"],
    ),
    "DOUBLE": (["1.5", "2", "-0.5"], ["1.5", "'1.5'", "2", "2.0", "-0.5", "'2'", "0"]),
    "DATE": (
        ["'2020-01-01'", "'2021-06-15'"],
        ["'2020-01-01'", "'2021-06-15'", "'2020-1-1'", "'2020-06-01'", "'x'"],
    ),
    "DATETIME": (
        ["'2020-01-01 10:00:00'", "'2020-01-01 00:00:00'"],
        ["'2020-01-01 10:00:00'", "'2020-01-01'", "'2020-01-01 00:00:00'"],
    ),
    "BIGINT UNSIGNED": (["0", "7", "18446744073709551615"], ["7", "'7'", "7.0", "'07'", "-1"]),
}


@pytest.mark.parametrize("key_type", sorted(KEY_TYPES))
def test_every_key_type_reads_what_a_scan_reads(cur: Any, key_type: str) -> None:
    values, constants = KEY_TYPES[key_type]
    table = "k" + "".join(c for c in key_type if c.isalnum()).lower()
    cur.execute(f"CREATE TABLE {table} (id {key_type} PRIMARY KEY, v INT)")
    cur.execute(
        f"INSERT INTO {table} VALUES " + ",".join(f"({v}, {n})" for n, v in enumerate(values))
    )
    wheres = [f"id = {c}" for c in constants]
    wheres += [f"{c} = id" for c in constants]
    wheres += [f"id IN ({a}, {b})" for a, b in zip(constants, constants[1:], strict=False)]
    wheres += [f"id {op} {c}" for c in constants for op in ("<", ">=")]
    wheres += [f"id BETWEEN {a} AND {b}" for a, b in zip(constants, constants[2:], strict=False)]
    wheres += [f"v >= 0 AND id = {c}" for c in constants]
    for where in wheres:
        cur.execute(f"SELECT v FROM {table} WHERE {where} ORDER BY v")
        narrowed = cur.fetchall()
        cur.execute(f"SELECT v FROM {table} WHERE NOT NOT ({where}) ORDER BY v")
        assert narrowed == cur.fetchall(), (key_type, where)
        # UPDATE and DELETE read through the same narrowing: the same rows, counted
        cur.execute("BEGIN")
        assert cur.execute(f"UPDATE {table} SET v = v + 1000 WHERE {where}") == len(narrowed)
        assert cur.execute(f"DELETE FROM {table} WHERE {where}") == len(narrowed)
        cur.execute("ROLLBACK")


def test_text_key_against_a_number_compares_as_numbers(cur: Any) -> None:
    """MySQL's answers: a string column equals a number when the string reads as it."""
    cur.execute("CREATE TABLE tn (id VARCHAR(10) PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO tn VALUES ('5', 1), ('05', 2), (' 5', 3), ('5.0', 4), ('6', 5)")
    cur.execute("SELECT v FROM tn WHERE id = 5 ORDER BY v")
    assert cur.fetchall() == ((1,), (2,), (3,), (4,))
    cur.execute("SELECT v FROM tn WHERE id = '5' ORDER BY v")
    assert cur.fetchall() == ((1,),)
    assert cur.execute("UPDATE tn SET v = v + 10 WHERE id IN (5, 7)") == 4
    cur.execute("SELECT id, v FROM tn ORDER BY id")
    assert cur.fetchall() == ((" 5", 13), ("05", 12), ("5", 11), ("5.0", 14), ("6", 5))


def test_decimal_and_date_keys_find_their_rows(cur: Any) -> None:
    cur.execute("CREATE TABLE kd (id DECIMAL(5,2) PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO kd VALUES (1.5, 1), (2, 2), (2.25, 3)")
    cur.execute("SELECT v FROM kd WHERE id = 1.5")
    assert cur.fetchall() == ((1,),)
    cur.execute("SELECT v FROM kd WHERE id = '2.25'")
    assert cur.fetchall() == ((3,),)
    assert cur.execute("DELETE FROM kd WHERE id = 1.50") == 1
    cur.execute("CREATE TABLE kt (id DATE PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO kt VALUES ('2020-01-01', 1), ('2021-06-15', 2)")
    cur.execute("SELECT v FROM kt WHERE id = '2020-01-01'")
    assert cur.fetchall() == ((1,),)
    assert cur.execute("UPDATE kt SET v = 9 WHERE id = '2021-06-15'") == 1
