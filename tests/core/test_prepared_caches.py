"""The caches of the point-select path, and that none of them outlives what it was worked
out from:

* a plain select list's result columns and row positions, by table definition and
  select list (``execution.dml``): ALTER TABLE, DROP + CREATE and RENAME TABLE between two
  executions of one prepared statement, and of one text statement (the shape cache hands
  both the same select list), give the new definition's columns and values;
* encoded column definitions, by Column object (``net.responses.column_definition``);
* parameter layouts, by the type bytes a client sent (``net.binary.read_parameters``);
* the integer primary key's point read (``dml._integer_point``) against what the general
  path returns;
* the PREPARE probe, which reads no rows and still describes the columns.

A wrong value returned without an error is the worst bug a cache can make: the tests
below move a column under a cached position (``ADD COLUMN ... FIRST``), so a stale entry
would return another column's value.
"""

from __future__ import annotations

import gc
import struct
from typing import Any

import mysql.connector
import pymysql
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.core.net import binary
from rpl.core.net.packets import PayloadReader
from rpl.core.net.responses import Column, column_definition
from rpl.core.testing.process import ServerProcess

LONG, LONGLONG, VAR_STRING = 0x03, 0x08, 0xFD


@pytest.fixture(scope="module")
def db(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE caches")
    return server


def connector(server: ServerProcess) -> Any:
    return mysql.connector.connect(
        host="127.0.0.1", port=server.port, user="root", database="caches", autocommit=True
    )


def text_client(server: ServerProcess) -> Any:
    return pymysql.connect(
        host="127.0.0.1", port=server.port, user="root", database="caches", autocommit=True
    )


class Prepared:
    """One prepared statement (the binary protocol) executed again and again."""

    def __init__(self, server: ServerProcess, sql: str) -> None:
        self.connection = connector(server)
        self.cursor = self.connection.cursor(prepared=True)
        self.sql = sql

    def run(self, *params: Any) -> tuple[list[tuple[Any, ...]], list[tuple[str, int]]]:
        self.cursor.execute(self.sql, params)
        rows = [tuple(row) for row in self.cursor.fetchall()]
        return rows, [(d[0], d[1]) for d in self.cursor.description]

    def close(self) -> None:
        self.connection.close()


class Text:
    """One text statement (the same text each time: one shape, one select list)."""

    def __init__(self, server: ServerProcess, sql: str) -> None:
        self.connection = text_client(server)
        self.sql = sql

    def run(self, *params: Any) -> tuple[list[tuple[Any, ...]], list[tuple[str, int]]]:
        with self.connection.cursor() as cursor:
            cursor.execute(self.sql, params or None)
            rows = [tuple(row) for row in cursor.fetchall()]
            return rows, [(d[0], d[1]) for d in cursor.description]

    def close(self) -> None:
        self.connection.close()


def ddl(server: ServerProcess, *statements: str) -> None:
    for statement in statements:
        server.query(statement)


KINDS = [("prepared", Prepared), ("text", Text)]


@pytest.mark.parametrize(("kind", "client"), KINDS)
def test_alter_table_between_executions(db: ServerProcess, kind: str, client: Any) -> None:
    table = f"alter_{kind}"
    ddl(
        db,
        f"CREATE TABLE caches.{table} (id INT PRIMARY KEY, c VARCHAR(10), k INT)",
        f"INSERT INTO caches.{table} VALUES (1, 'one', 10), (2, 'two', 20)",
    )
    marker = "?" if kind == "prepared" else "%s"
    plain = client(db, f"SELECT c, k FROM {table} WHERE id = {marker}")
    star = client(db, f"SELECT * FROM {table} WHERE id = {marker}")
    try:
        assert plain.run(1) == ([("one", 10)], [("c", VAR_STRING), ("k", LONG)])
        assert star.run(2)[0] == [(2, "two", 20)]
        # a column before the ones read: every cached position is off by one
        ddl(db, f"ALTER TABLE caches.{table} ADD COLUMN x INT NOT NULL DEFAULT 99 FIRST")
        assert plain.run(1) == ([("one", 10)], [("c", VAR_STRING), ("k", LONG)])
        assert star.run(2) == (
            [(99, 2, "two", 20)],
            [("x", LONG), ("id", LONG), ("c", VAR_STRING), ("k", LONG)],
        )
        # a type changes: the column definition sent changes with it
        ddl(db, f"ALTER TABLE caches.{table} MODIFY k BIGINT")
        assert plain.run(2) == ([("two", 20)], [("c", VAR_STRING), ("k", LONGLONG)])
        # columns swap places
        ddl(db, f"ALTER TABLE caches.{table} MODIFY k BIGINT AFTER x")
        assert plain.run(1) == ([("one", 10)], [("c", VAR_STRING), ("k", LONGLONG)])
        assert star.run(1)[0] == [(99, 10, 1, "one")]
        # a column read goes away: the statement fails, as a new one would
        ddl(db, f"ALTER TABLE caches.{table} DROP COLUMN k")
        with pytest.raises((mysql.connector.Error, pymysql.MySQLError)) as failed:
            plain.run(1)
        assert failed.value.args[0] == 1054 or getattr(failed.value, "errno", None) == 1054
        assert star.run(1)[0] == [(99, 1, "one")]
    finally:
        plain.close()
        star.close()


@pytest.mark.parametrize(("kind", "client"), KINDS)
def test_drop_and_create_between_executions(db: ServerProcess, kind: str, client: Any) -> None:
    table = f"recreated_{kind}"
    marker = "?" if kind == "prepared" else "%s"
    ddl(
        db,
        f"CREATE TABLE caches.{table} (id INT PRIMARY KEY, c VARCHAR(10), k INT)",
        f"INSERT INTO caches.{table} VALUES (1, 'one', 10)",
    )
    statement = client(db, f"SELECT k, c FROM {table} WHERE id = {marker}")
    star = client(db, f"SELECT * FROM {table} WHERE id = {marker}")
    try:
        assert statement.run(1) == ([(10, "one")], [("k", LONG), ("c", VAR_STRING)])
        assert star.run(1)[0] == [(1, "one", 10)]
        ddl(
            db,
            f"DROP TABLE caches.{table}",
            f"CREATE TABLE caches.{table} (c BIGINT, k VARCHAR(10), id INT PRIMARY KEY)",
            f"INSERT INTO caches.{table} VALUES (5, 'five', 1)",
        )
        assert statement.run(1) == ([("five", 5)], [("k", VAR_STRING), ("c", LONGLONG)])
        assert star.run(1) == (
            [(5, "five", 1)],
            [("c", LONGLONG), ("k", VAR_STRING), ("id", LONG)],
        )
    finally:
        statement.close()
        star.close()


@pytest.mark.parametrize(("kind", "client"), KINDS)
def test_rename_between_executions(db: ServerProcess, kind: str, client: Any) -> None:
    table = f"renamed_{kind}"
    marker = "?" if kind == "prepared" else "%s"
    ddl(
        db,
        f"CREATE TABLE caches.{table} (id INT PRIMARY KEY, c VARCHAR(10), k INT)",
        f"INSERT INTO caches.{table} VALUES (1, 'one', 10)",
        f"CREATE TABLE caches.{table}_new (k INT, id INT PRIMARY KEY, c VARCHAR(10))",
        f"INSERT INTO caches.{table}_new VALUES (77, 1, 'new')",
    )
    statement = client(db, f"SELECT c, k FROM {table} WHERE id = {marker}")
    try:
        assert statement.run(1)[0] == [("one", 10)]
        ddl(
            db,
            f"RENAME TABLE caches.{table} TO caches.{table}_old, "
            f"caches.{table}_new TO caches.{table}",
        )
        assert statement.run(1)[0] == [("new", 77)]
        ddl(db, f"ALTER TABLE caches.{table} RENAME TO caches.{table}_gone")
        with pytest.raises((mysql.connector.Error, pymysql.MySQLError)):
            statement.run(1)
        ddl(db, f"RENAME TABLE caches.{table}_old TO caches.{table}")
        assert statement.run(1)[0] == [("one", 10)]
    finally:
        statement.close()


# ---------------------------------------------------------- the point read
@pytest.fixture(scope="module")
def keyed(db: ServerProcess) -> ServerProcess:
    ddl(
        db,
        "CREATE TABLE caches.ints (id BIGINT PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO caches.ints VALUES (-5, 'minus'), (0, 'zero'), (1, 'one'), "
        "(9223372036854775807, 'max')",
        "CREATE TABLE caches.unsigned_ints (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO caches.unsigned_ints VALUES (0, 'zero'), (18446744073709551615, 'max')",
        "CREATE TABLE caches.pair (a INT, b INT, v VARCHAR(10), PRIMARY KEY (a, b))",
        "INSERT INTO caches.pair VALUES (1, 2, 'a1b2'), (2, 1, 'a2b1')",
    )
    return db


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("id = 1", ["one"]),
        ("1 = id", ["one"]),
        ("id = -5", ["minus"]),
        ("id = 0", ["zero"]),
        ("id = 9223372036854775807", ["max"]),
        ("id = 2", []),
        ("id = NULL", []),
        ("id = '1'", ["one"]),
        ("id = 1.0", ["one"]),
        ("id = 1.5", []),
        ("id = TRUE", ["one"]),
        ("ints.id = 1", ["one"]),
        ("FALSE", []),
        ("0", []),
        ("NULL", []),
        ("1", ["minus", "zero", "one", "max"]),
    ],
)
def test_integer_point_reads(keyed: ServerProcess, where: str, expected: list[str]) -> None:
    rows = keyed.query(f"SELECT v FROM caches.ints WHERE {where}")
    assert sorted(r[0] for r in rows) == sorted(expected)


def test_point_reads_of_other_keys(keyed: ServerProcess) -> None:
    assert keyed.query("SELECT v FROM caches.unsigned_ints WHERE id = 18446744073709551615") == [
        ("max",)
    ]
    assert keyed.query("SELECT v FROM caches.unsigned_ints WHERE id = -1") == []
    # a composite key is never read as one integer
    assert keyed.query("SELECT v FROM caches.pair WHERE a = 1") == [("a1b2",)]
    assert keyed.query("SELECT v FROM caches.pair WHERE b = 1") == [("a2b1",)]


def test_prepared_point_reads_with_changing_types(keyed: ServerProcess) -> None:
    statement = Prepared(keyed, "SELECT v FROM ints WHERE id = ?")
    try:
        assert statement.run(1)[0] == [("one",)]
        assert statement.run(-5)[0] == [("minus",)]
        assert statement.run(9223372036854775807)[0] == [("max",)]
        assert statement.run("1")[0] == [("one",)]
        assert statement.run(1.0)[0] == [("one",)]
        assert statement.run(None)[0] == []
        assert statement.run(0)[0] == [("zero",)]
    finally:
        statement.close()


def test_point_read_for_update_reads_the_latest_row(keyed: ServerProcess) -> None:
    ddl(
        keyed,
        "CREATE TABLE caches.locked (id INT PRIMARY KEY, v INT)",
        "INSERT INTO caches.locked VALUES (1, 1)",
    )
    reader, writer = text_client(keyed), text_client(keyed)
    try:
        with reader.cursor() as r, writer.cursor() as w:
            r.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            r.execute("SELECT v FROM locked WHERE id = 1")
            assert r.fetchall() == ((1,),)
            w.execute("UPDATE locked SET v = 2 WHERE id = 1")
            r.execute("SELECT v FROM locked WHERE id = 1")
            assert r.fetchall() == ((1,),)  # the snapshot
            r.execute("SELECT v FROM locked WHERE id = 1 FOR UPDATE")
            assert r.fetchall() == ((2,),)  # a locking read: the latest
            r.execute("COMMIT")
    finally:
        reader.close()
        writer.close()


def test_prepare_describes_columns_without_reading_rows(keyed: ServerProcess) -> None:
    statement = Prepared(keyed, "SELECT v, id FROM ints WHERE id = ?")
    try:
        rows, description = statement.run(1)
        assert rows == [("one", 1)]
        assert description == [("v", VAR_STRING), ("id", LONGLONG)]
    finally:
        statement.close()


# ------------------------------------------------------- column definitions
def test_column_definition_is_the_objects_own() -> None:
    """Definitions are kept by Column object: a new Column (whose id may be a dead one's)
    never gets another's encoding.
    """
    for number in range(2000):
        column = Column(f"c{number}", LONG if number % 2 else VAR_STRING, number, table="t")
        assert column_definition(column) == column.definition()
        assert column_definition(column) == column.definition()
        del column
        if number % 100 == 0:
            gc.collect()


# ------------------------------------------------------ parameter layouts
FIXED = [(0x01, "b"), (0x02, "h"), (0x03, "i"), (0x08, "q"), (0x05, "d"), (0x04, "f")]


def _block(types: list[tuple[int, bool]] | None, values: bytes, nulls: bytes) -> bytes:
    typed = b"" if types is None else b"".join(bytes((c, 0x80 if u else 0)) for c, u in types)
    return nulls + (b"\x01" + typed if types is not None else b"\x00") + values


@given(
    st.lists(
        st.tuples(st.sampled_from(FIXED), st.booleans(), st.integers(0, 2**64 - 1)),
        min_size=1,
        max_size=9,
    ),
    st.booleans(),
)
def test_fixed_width_parameters_decode_as_one_at_a_time(
    params: list[tuple[tuple[int, str], bool, int]], bound: bool
) -> None:
    """The one-struct decoding of fixed-width parameters gives what the decoding of each
    parameter gives (the long-data path, which decodes one at a time), with the types sent
    now or the previous execution's.
    """
    types = [(code, unsigned) for (code, _), unsigned, _ in params]
    data = b""
    for (_, fmt), _, raw in params:
        width = struct.calcsize("<" + fmt)
        data += (raw % (1 << (8 * width))).to_bytes(width, "little")
    nulls = bytes((len(params) + 7) // 8)
    previous = tuple(types)
    block = _block(types if bound else None, data, nulls)
    fast = binary.read_parameters(PayloadReader(block), len(params), previous, {})
    one_by_one = binary.read_parameters(
        PayloadReader(block), len(params), previous, {len(params) + 1: b""}
    )
    assert repr(fast) == repr(one_by_one)
    assert fast[1] == previous


def test_parameter_layouts_follow_the_types_sent() -> None:
    int_block = _block([(LONG, False)], struct.pack("<i", -2), b"\x00")
    assert binary.read_parameters(PayloadReader(int_block), 1, None, {}) == (
        [-2],
        ((LONG, False),),
    )
    unsigned_block = _block([(LONG, True)], struct.pack("<I", 2**32 - 2), b"\x00")
    assert binary.read_parameters(PayloadReader(unsigned_block), 1, None, {})[0] == [2**32 - 2]
    # no types sent: the previous ones, whatever was cached for other type bytes
    again = _block(None, struct.pack("<I", 2**32 - 2), b"\x00")
    assert binary.read_parameters(PayloadReader(again), 1, ((LONG, True),), {})[0] == [2**32 - 2]
    assert binary.read_parameters(PayloadReader(again), 1, ((LONG, False),), {})[0] == [-2]
    # a NULL, a string: not the fixed layout
    null_block = _block([(LONG, False)], b"", b"\x01")
    assert binary.read_parameters(PayloadReader(null_block), 1, None, {})[0] == [None]
    text_block = _block([(VAR_STRING, False)], b"\x02ab", b"\x00")
    assert binary.read_parameters(PayloadReader(text_block), 1, None, {})[0] == ["ab"]
    with pytest.raises(binary.ParameterError):  # short
        binary.read_parameters(PayloadReader(int_block[:-1]), 1, None, {})
    with pytest.raises(binary.ParameterError):  # an unknown type byte
        binary.read_parameters(PayloadReader(_block([(0x77, False)], b"", b"\x00")), 1, None, {})
