"""The shape cache (rpl.core.sql.shapes): a statement built from a cached shape is the
tree a full parse gives, whatever its literals; unsafe texts are never shaped."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpl.core.errors import MySQLError
from rpl.core.sql.ast import LiteralValue, Statement, quote_literal
from rpl.core.sql.lexer import unescape_string
from rpl.core.sql.parser import parse_text
from rpl.core.sql.shapes import ShapeCache, _split_in_c, shape_of, split

CORPUS = [
    # sysbench's statements, as a client and as the applier (backquoted) send them
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 5012, '684-964', '221-701')",
    "INSERT INTO `sbtest`.`sbtest1` (`id`, `k`, `c`, `pad`) VALUES (17, 5012, '6-9', '2-7')",
    "SELECT c FROM sbtest1 WHERE id=5",
    "SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109 ORDER BY c",
    "UPDATE sbtest1 SET k=k+1 WHERE id=7",
    "UPDATE sbtest1 SET c='33-44' WHERE id=8",
    "DELETE FROM sbtest1 WHERE id=9",
    "BEGIN",
    "COMMIT",
    # where a literal's spelling or position changes the tree
    "SELECT -5, - 5, 1 - 5, 3",
    "SELECT 1 + 2 AS x, 'a' 'b', 'it''s', 'a\\nb'",
    "SELECT c FROM t LIMIT 5",
    "SELECT c FROM t LIMIT 2, 5",
    "SELECT * FROM t WHERE a IN (1, 2, '3') AND b LIKE 'x%'",
    "SET autocommit = 1",
    "SET SESSION sql_mode = 'STRICT_ALL_TABLES'",
    "CREATE TABLE t (id INT NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, PRIMARY KEY (id))",
    "SHOW VARIABLES LIKE 'gtid%'",
    "PURGE BINARY LOGS TO 'binlog.000002'",
    "CHANGE REPLICATION SOURCE TO SOURCE_PORT = 3307, SOURCE_HOST = '127.0.0.1'",
    "CREATE USER 'u' IDENTIFIED BY 'pw'",
    "KILL 12",
    "SELECT `a'b` FROM `t``1` WHERE x = 'q'",
    "SELECT 1.5, .5, 1e5, 0x1F, 5, t1.a FROM t1",
    "INSERT INTO t VALUES (1, 'x') ON DUPLICATE KEY UPDATE v = 2",
    # texts that must never be shaped
    "SELECT 1 /* 2 */",
    "SELECT 1 -- 2",
    "SELECT 1 # 2",
    "SELECT /*!80000 1 */",
    "SET @a = 1",
    "SELECT _utf8mb4'x'",
    "SELECT X'0A'",
    'SELECT "dq"',
    "SELECT @@autocommit, 5",
]


def render(shape_text: str, values: Sequence[LiteralValue]) -> str:
    """``shape_text`` with its ``?`` replaced by ``values`` spelled as SQL literals."""
    pieces = shape_text.split("?")
    assert len(pieces) == len(values) + 1
    out = [pieces[0]]
    for value, piece in zip(values, pieces[1:], strict=True):
        out += [quote_literal(value), piece]
    return "".join(out)


def outcome(parse: object, sql: str) -> str:
    """The tree's repr, or the error's code and message."""
    try:
        return repr(parse(sql))  # type: ignore[operator]
    except MySQLError as exc:
        return str(exc)


def other_values(values: list[LiteralValue]) -> list[LiteralValue]:
    """Other literals of the same kinds: strings grow a quote and a backslash, numbers change."""
    return [
        f"{v}'\\x"
        if isinstance(v, str)
        else v * 7 + 3
        if isinstance(v, int | float | Decimal)
        else v
        for v in values
    ]


@pytest.mark.parametrize("sql", CORPUS)
def test_a_second_statement_of_a_shape_parses_as_in_full(sql: str) -> None:
    cache = ShapeCache(parse_text)
    assert outcome(cache.parse, sql) == outcome(parse_text, sql)
    found = split(sql)
    if found is None:
        return
    key, values = found
    again = render(key[: key.index("\0")], other_values(values))
    assert outcome(cache.parse, again) == outcome(parse_text, again)
    assert outcome(cache.parse, again) == outcome(parse_text, again)  # now from the cache


@pytest.mark.parametrize(
    "sql",
    [
        s
        for s in CORPUS
        if "/*" in s
        or "#" in s
        or "--" in s
        or "@" in s
        or '"' in s
        or "X'" in s
        or "_utf8mb4" in s
    ],
)
def test_comments_variables_introducers_and_double_quotes_are_never_shaped(sql: str) -> None:
    assert split(sql) is None


def test_the_sysbench_insert_is_built_from_its_shape() -> None:
    cache = ShapeCache(parse_text)
    first = "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 1, 'a', 'b')"
    second = "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 2, 'c', 'd')"
    cache.parse(first)
    assert len(cache) == 1
    calls: list[str] = []

    def counting(sql: str) -> Statement:
        calls.append(sql)
        return parse_text(sql)

    cache._parse_text = counting
    assert cache.parse(second) == parse_text(second)
    assert calls == []


def test_a_shape_whose_tree_differs_is_never_trusted() -> None:
    """``-5`` folds into one literal; ``- ?`` cannot: the shape stays unshaped."""
    cache = ShapeCache(parse_text)
    cache.parse("SELECT -5")
    key, _ = split("SELECT -5") or ("", [])
    assert cache._shapes[key] is None
    assert cache.parse("SELECT -6") == parse_text("SELECT -6")


def test_the_cache_is_bounded() -> None:
    cache = ShapeCache(parse_text, max_shapes=3)
    for n in range(10):
        cache.parse(f"SELECT c{n} FROM t WHERE id = 1")
    assert 1 <= len(cache) <= 3


_TEMPLATES = [
    "INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
    "UPDATE t SET a = ?, b = b + ? WHERE c = ?",
    "SELECT a, ? FROM t WHERE b BETWEEN ? AND ? OR c = ?",
    "SELECT a FROM t WHERE b IN (?, ?) LIMIT ?",
    "SELECT ? - ?, -?, ? ?",
]
_LITERAL = st.one_of(
    st.integers(min_value=0, max_value=2**70), st.text(alphabet="ab'\"\\%_\n `#-/*@?", max_size=8)
)


@given(
    st.sampled_from(_TEMPLATES),
    st.lists(_LITERAL, min_size=8, max_size=8),
    st.lists(_LITERAL, min_size=8, max_size=8),
)
def test_any_literals_give_the_full_parse(
    template: str, first: list[int | str], second: list[int | str]
) -> None:
    cache = ShapeCache(parse_text)
    count = template.count("?")
    for values in (first[:count], second[:count], first[:count]):
        sql = render(template, values)
        assert outcome(cache.parse, sql) == outcome(parse_text, sql)


SPLITTERS = [pytest.param(split, id="python")] + (
    [pytest.param(lambda sql: _split_in_c(sql, unescape_string), id="c")]
    if _split_in_c is not None
    else []
)
"""The splitters this build has: the C scan only in the compiled build
(test_compiled_build checks that it is there)."""

SPLITS = [
    (
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 5012, '684-964', '221-701')",
        (
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)\0nnss",
            [0, 5012, "684-964", "221-701"],
        ),
    ),
    (
        "INSERT INTO `sb``x`.`t1` (`id`) VALUES (17)",
        ("INSERT INTO `sb``x`.`t1` (`id`) VALUES (?)\0n", [17]),
    ),
    ("SELECT 'it''s', 'a\\nb', 'x\\%'", ("SELECT ?, ?, ?\0sss", ["it's", "a\nb", "x\\%"])),
    (
        "SELECT t1.a, 1.5, .5, 1e5, 0x1F, 12a, a12 FROM t1",
        ("SELECT t1.a, 1.5, .5, 1e5, 0x1F, 12a, a12 FROM t1\0", []),
    ),
    ("SELECT 5-3, -4, 7/2", ("SELECT ?-?, -?, ?/?\0nnnnn", [5, 3, 4, 7, 2])),
    (
        "SELECT '\u00e9', c\u00e9 FROM t WHERE x = 3",
        ("SELECT ?, c\u00e9 FROM t WHERE x = ?\0sn", ["\u00e9", 3]),
    ),
    ("SELECT 1\u0663", ("SELECT ?\0n", [13])),  # a decimal digit of another script
    ("SELECT 'a\\\nb'", None),  # a backslash does not escape a newline
    ("SELECT 'open", None),
    ("SELECT `open", None),
    ("SELECT `a``", None),
    ("SELECT x'0A'", None),
    ("SELECT 1 -- c", None),
    ("SELECT 1 /* c */", None),
    ("SELECT 1 # c", None),
    ("SELECT @a", None),
    ('SELECT "a"', None),
    ("SELECT ?", None),
    ("SELECT \\", None),
    ("SELECT 'a''", None),
]


@pytest.mark.parametrize("splitter", SPLITTERS)
@pytest.mark.parametrize(("sql", "expected"), SPLITS)
def test_a_statement_splits_into_its_shape_and_literals(
    splitter: object, sql: str, expected: object
) -> None:
    found = splitter(sql)  # type: ignore[operator]
    assert found == expected
    if found is not None:  # the types of the values too (True == 1)
        assert [type(v) for v in found[1]] == [type(v) for v in expected[1]]  # type: ignore[index]


_PIECES = [
    *"`'\"0123456789 .,;()@#\\?/-*\nabXx_$\u00e9\u0663",
    "''",
    "``",
    "\\'",
    "12",
    "'ab'",
    "`t`",
    "SELECT ",
    "--",
    "/*",
    "'\U0001f600'",
]


if _split_in_c is not None:  # the compiled build: its C scan and split agree on any text

    @settings(max_examples=3000)
    @given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
    def test_the_c_scan_splits_any_text_as_split_does(sql: str) -> None:
        found, expected = shape_of(sql), split(sql)
        assert found == expected
        if found is not None and expected is not None:
            assert [type(v) for v in found[1]] == [type(v) for v in expected[1]]
