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
