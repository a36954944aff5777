"""ENUM and SET columns as MySQL 8.0 has them: the members kept in the table definition,
values checked as strict mode checks them (WARN_DATA_TRUNCATED, 1265), the type text of
SHOW CREATE TABLE / SHOW COLUMNS / information_schema.COLUMNS, engine snapshots written
before members were kept, and rows events for their tables under ROW: read by
``mariadb-binlog -v``, by python-mysql-replication (FULL metadata) and applied by a replica.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
import xxhash
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
from test_binlog_rows_readers import mariadb_binlog, mariadb_images
from test_row_apply import Replication, run, started_pair

from rpl.core.binlog.events import (
    DELETE_ROWS_EVENT,
    QUERY_EVENT,
    TABLE_MAP_EVENT,
    UPDATE_ROWS_EVENT,
    WRITE_ROWS_EVENT,
    binlog_column,
)
from rpl.core.engine import Engine, RowChange
from rpl.core.engine.coercion import coerce
from rpl.core.engine.schema import ColumnSchema, TableSchema
from rpl.core.errors import MySQLError
from rpl.core.execution.binlogging import row_encodable
from rpl.core.execution.write_sets import sort_key, write_set
from rpl.core.instance.server import Server
from rpl.core.testing.process import ServerProcess

__all__ = ["mariadb_binlog"]  # the fixture, used here by name

SIZE = ColumnSchema("size", "ENUM", members=("small", "Medium", "large", "caf\u00e9"))
TAGS = ColumnSchema("tags", "SET", members=("a", "b", "c", "d"))
TRUNCATED = "Data truncated for column '%s' at row %d"


# --- coercion -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("small", "small"),
        ("medium", "Medium"),  # matched case-insensitively, stored as declared
        ("LARGE", "large"),
        ("small   ", "small"),  # trailing spaces ignored on input
        ("CAFE", "caf\u00e9"),  # utf8mb4_0900_ai_ci: accents too
        (1, "small"),  # an integer is the 1-based index
        (4, "caf\u00e9"),
        ("2", "Medium"),  # a number in a string that is no member: the index
        (3.9, "large"),  # a float's integer part
        (True, "small"),
    ],
)
def test_enum_takes_a_member_or_its_index(value: object, stored: str) -> None:
    assert coerce(SIZE, value) == stored


@pytest.mark.parametrize("value", ["", "x", "smal", 0, 5, -1, "0", "5", "1,2", "123456", 2**70])
def test_enum_refuses_anything_else_with_1265(value: object) -> None:
    with pytest.raises(MySQLError) as caught:
        coerce(SIZE, value, 3)
    error = caught.value
    assert (error.errno, error.sqlstate, error.message) == (1265, "01000", TRUNCATED % ("size", 3))


def test_a_numeric_member_is_the_member_not_the_index() -> None:
    digits = ColumnSchema("n", "ENUM", members=("3", "2", "1"))
    assert coerce(digits, "1") == "1"  # the member '1' (index 3)
    assert coerce(digits, 1) == "3"  # the index 1 (member '3')
    empty = ColumnSchema("e", "ENUM", members=("", "x"))
    assert coerce(empty, "") == ""  # '' declared as a member is a member


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("", ""),
        ("a", "a"),
        ("d,a", "a,d"),  # declaration order
        ("b,B,b", "b"),  # repeats folded, case-insensitively
        ("c ,a", "a,c"),
        (5, "a,c"),  # an integer is the bitmap
        ("9", "a,d"),  # so is a number in a string when no part is a member
        (15, "a,b,c,d"),
        (0, ""),
    ],
)
def test_set_takes_members_in_any_order_or_a_bitmap(value: object, stored: str) -> None:
    assert coerce(TAGS, value) == stored


@pytest.mark.parametrize("value", ["x", "a,x", "a,,b", ",", 16, -1, "16", "a,1"])
def test_set_refuses_an_unknown_member_with_1265(value: object) -> None:
    with pytest.raises(MySQLError) as caught:
        coerce(TAGS, value)
    error = caught.value
    assert (error.errno, error.sqlstate, error.message) == (1265, "01000", TRUNCATED % ("tags", 1))


def test_null_and_defaults() -> None:
    assert coerce(SIZE, None) is None
    with pytest.raises(MySQLError, match="1048"):
        coerce(ColumnSchema("e", "ENUM", nullable=False, members=("a",)), None)
    schema = TableSchema(
        "d",
        "t",
        (
            ColumnSchema("id", "INT"),
            ColumnSchema("e", "ENUM", default="B", members=("a", "b")),
        ),
        ("id",),
    )
    assert schema.default_row == (None, "b")
    with pytest.raises(MySQLError, match="1067"):  # ER_INVALID_DEFAULT
        TableSchema(
            "d",
            "t",
            (ColumnSchema("id", "INT"), ColumnSchema("e", "ENUM", default="c", members=("a",))),
            ("id",),
        )


# --- engine snapshots written before members were kept --------------------------------

# Engine.snapshot() of commit 26d6ab3 (before ColumnSchema had members): d.t (id INT
# PRIMARY KEY, e ENUM, s SET NOT NULL DEFAULT '') holding (1, 'b', 'x,y').
OLD_SNAPSHOT = (
    "UlBMRU5HSU5FCoAFlaMBAAAAAAAASwF9lIwBZJRdlIwWcnBsLmNvcmUuZW5naW5lLnNjaGVtYZSMC1RhYmxl"
    "U2NoZW1hlJOUKYGUfZQojAJkYpRoAYwEbmFtZZSMAXSUjAdjb2x1bW5zlGgDjAxDb2x1bW5TY2hlbWGUk5Qp"
    "gZR9lChoCYwCaWSUjAl0eXBlX25hbWWUjANJTlSUjAZsZW5ndGiUTowIdW5zaWduZWSUiYwIbnVsbGFibGWU"
    "iYwHZGVmYXVsdJRoA4wKX05vRGVmYXVsdJSTlIwKTk9fREVGQVVMVJSFlFKUjA5hdXRvX2luY3JlbWVudJSJ"
    "jAVzY2FsZZROdWJoDSmBlH2UKGgJjAFllGgRjARFTlVNlGgTTmgUiWgViGgWaBtoHIloHU51YmgNKYGUfZQo"
    "aAmMAXOUaBGMA1NFVJRoE05oFIloFYloFowAlGgciWgdTnVih5SMC3ByaW1hcnlfa2V5lGgQhZSMB2luZGV4"
    "ZXOUfZSMFWF1dG9faW5jcmVtZW50X2NvbHVtbpROdWJLAV2USwFLAYwBYpSMA3gseZSHlIaUYYeUYXOGlC4="
)


def test_a_snapshot_written_before_members_loads() -> None:
    data = base64.b64decode(OLD_SNAPSHOT)
    assert b"members" not in data
    engine = Engine.restore(io.BytesIO(data))
    schema = engine.table("d", "t").schema
    assert [(c.name, c.type_name, c.members) for c in schema.columns] == [
        ("id", "INT", ()),
        ("e", "ENUM", ()),
        ("s", "SET", ()),
    ]
    assert schema.columns[2].default == "" and not schema.columns[2].nullable
    assert list(engine.table("d", "t").rows.items()) == [(1, (1, "b", "x,y"))]
    # without its members a column stores text unchecked and has no row encoding
    assert coerce(schema.columns[1], "anything") == "anything"
    with pytest.raises(ValueError, match="without its members"):
        binlog_column(schema.columns[1], schema.columns[1].members)
    assert not row_encodable(schema)
    # and it is written back with the field, and read again
    again = io.BytesIO()
    engine.snapshot(again)
    assert Engine.restore(io.BytesIO(again.getvalue())).table("d", "t").schema == schema


# --- write sets -----------------------------------------------------------------------


def test_enum_and_set_key_parts_hash_their_index_and_bitmap() -> None:
    """Field_enum::make_sort_key: the index / bitmap big-endian in the pack length, the
    rows event's bytes reversed (a SET of 9 members packs in 2 bytes)."""
    assert sort_key(SIZE)("Medium") == b"\x02"
    nine = ColumnSchema("s", "SET", members=tuple("abcdefghi"))
    assert sort_key(nine)("a,i") == b"\x01\x01"
    assert sort_key(nine)("b,i") == b"\x01\x02"
    assert sort_key(TAGS)("a,c") == b"\x05"
    schema = TableSchema("test", "t1", (ColumnSchema("id", "ENUM", members=("x", "y")),), ("id",))
    data = b"PRIMARY\xc2\xbdtest\xc2\xbd4t1\xc2\xbd2\x02\xc2\xbd1"
    expected = xxhash.xxh64_intdigest(data, seed=0)
    assert write_set([RowChange("insert", schema, None, ("y",))]) == {expected}


# --- the server -----------------------------------------------------------------------

TABLE = (
    "CREATE TABLE d.t (id INT PRIMARY KEY, size ENUM('small','Medium','large ') NOT NULL, "
    "tags SET('a','b','c','d','e','f','g','h','i'), note VARCHAR(10))"
)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """A source and a server that applies its events (test_row_apply's helpers)."""
    yield from started_pair(tmp_path, TABLE)


def _error(server: Server, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.MySQLError) as caught:
        run(server, sql)
    code, message = caught.value.args
    return code, message


def test_show_create_table_and_show_columns(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    run(source, "CREATE TABLE d.q (id INT PRIMARY KEY, e ENUM('it''s','a\\\\b') DEFAULT 'it''s')")
    ((_, create),) = run(source, "SHOW CREATE TABLE d.t")
    assert "  `size` enum('small','Medium','large') NOT NULL,\n" in create
    assert "  `tags` set('a','b','c','d','e','f','g','h','i') DEFAULT NULL,\n" in create
    ((_, quoted),) = run(source, "SHOW CREATE TABLE d.q")
    assert "  `e` enum('it''s','a\\\\b') DEFAULT " in quoted
    columns = run(source, "SHOW COLUMNS FROM d.t")
    assert [c[:2] for c in columns] == [
        ("id", "int"),
        ("size", "enum('small','Medium','large')"),
        ("tags", "set('a','b','c','d','e','f','g','h','i')"),
        ("note", "varchar(10)"),
    ]
    rows = run(
        source,
        "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION",
    )
    assert rows[1:3] == [
        ("size", "enum", "enum('small','Medium','large')"),
        ("tags", "set", "set('a','b','c','d','e','f','g','h','i')"),
    ]


def test_create_table_checks_the_members(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    assert _error(source, "CREATE TABLE d.x (id INT PRIMARY KEY, e ENUM('a','b','A'))") == (
        1291,
        "Column 'e' has duplicated value 'A' in ENUM",
    )
    assert _error(source, "CREATE TABLE d.x (id INT PRIMARY KEY, s SET('a','b ','b'))") == (
        1291,
        "Column 's' has duplicated value 'b' in SET",
    )
    assert _error(source, "CREATE TABLE d.x (id INT PRIMARY KEY, s SET('a,b'))") == (
        1367,
        "Illegal set 'a,b' value found during parsing",
    )
    members = ",".join(f"'m{i}'" for i in range(65))
    assert _error(source, f"CREATE TABLE d.x (id INT PRIMARY KEY, s SET({members}))") == (
        1097,
        "Too many strings for column s and SET",
    )


def test_bad_values_are_1265_and_nothing_is_written(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    run(source, "INSERT INTO d.t VALUES (1, 'small', 'a', NULL)")
    assert _error(
        source, "INSERT INTO d.t VALUES (2, 'large', 'a', NULL), (3, 'huge', '', '')"
    ) == (
        1265,
        "Data truncated for column 'size' at row 2",
    )
    assert _error(source, "UPDATE d.t SET tags = 'a,z' WHERE id = 1") == (
        1265,
        "Data truncated for column 'tags' at row 1",
    )
    assert _error(source, "INSERT INTO d.t VALUES (4, '', 'a', NULL)")[0] == 1265
    assert run(source, "SELECT id, size, tags FROM d.t") == [(1, "small", "a")]


STATEMENTS = [
    "INSERT INTO d.t VALUES (1, 'MEDIUM', 'i,a,a', 'x'), (2, 3, 5, NULL), (3, 'small', '', 'z')",
    "UPDATE d.t SET size = 'large', tags = 'b,c' WHERE id = 1",
    "DELETE FROM d.t WHERE id = 3",
]
ROWS = [(1, "large", "b,c", "x"), (2, "large", "a,c", None)]


@pytest.mark.parametrize("metadata", ["FULL", "MINIMAL"])
def test_rows_events_applied_by_a_replica(pair: tuple[Server, Server], metadata: str) -> None:
    source, replica = pair
    run(source, f"SET GLOBAL binlog_row_metadata = {metadata}")
    replicate = Replication(source, replica)
    kinds = []
    for statement in STATEMENTS:
        codes = [code for code, _, _ in replicate(statement)]
        assert TABLE_MAP_EVENT in codes, (statement, codes)
        # one QUERY (BEGIN) then rows: the changes are not logged as statements
        assert codes.count(QUERY_EVENT) == 1, codes
        kinds += [c for c in codes if c in (WRITE_ROWS_EVENT, UPDATE_ROWS_EVENT, DELETE_ROWS_EVENT)]
    assert kinds == [WRITE_ROWS_EVENT, UPDATE_ROWS_EVENT, DELETE_ROWS_EVENT]
    select = "SELECT id, size, tags, note FROM d.t ORDER BY id"
    assert run(source, select) == ROWS
    assert run(replica, select) == ROWS


def test_mariadb_binlog_prints_the_index_and_bitmap(
    pair: tuple[Server, Server], mariadb_binlog: str
) -> None:
    source, _ = pair
    for statement in STATEMENTS:
        run(source, statement)
    binlog = source.binlog
    images = mariadb_images(mariadb_binlog, binlog.directory / binlog.end.file)
    # SET of 9 members: 2 bytes, printed first byte first; 'a,i' = bits 0 and 8
    a_i, a_c, none, b_c = (
        b"b'0000000100000001'",
        b"b'0000010100000000'",
        b"b'0000000000000000'",
        (b"b'0000011000000000'"),
    )
    assert images == [
        {1: b"1", 2: b"2", 3: a_i, 4: b"'x'"},
        {1: b"2", 2: b"3", 3: a_c, 4: b"NULL"},
        {1: b"3", 2: b"1", 3: none, 4: b"'z'"},
        {1: b"1", 2: b"2", 3: a_i, 4: b"'x'"},  # UPDATE's WHERE
        {1: b"1", 2: b"3", 3: b_c, 4: b"'x'"},  # and SET
        {1: b"3", 2: b"1", 3: none, 4: b"'z'"},
    ]


def test_python_mysql_replication_decodes_full_metadata(pair: tuple[Server, Server]) -> None:
    source, _ = pair
    run(source, "SET GLOBAL binlog_row_metadata = FULL")
    for statement in STATEMENTS:
        run(source, statement)
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": source.port, "user": "root"},
        server_id=99,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
    )
    seen: list[tuple[str, list[dict[str, Any]]]] = [(type(e).__name__, e.rows) for e in stream]
    stream.close()
    one = {"id": 1, "size": "Medium", "tags": {"a", "i"}, "note": "x"}
    two = {"id": 2, "size": "large", "tags": {"a", "c"}, "note": None}
    # python-mysql-replication reads the empty SET as None
    three = {"id": 3, "size": "small", "tags": None, "note": "z"}
    assert [name for name, _ in seen] == ["WriteRowsEvent", "UpdateRowsEvent", "DeleteRowsEvent"]
    assert [r["values"] for r in seen[0][1]] == [one, two, three]
    assert [(r["before_values"], r["after_values"]) for r in seen[1][1]] == [
        (one, {**one, "size": "large", "tags": {"b", "c"}})
    ]
    assert [r["values"] for r in seen[2][1]] == [three]


@pytest.mark.parametrize("metadata", ["FULL", "MINIMAL"])
def test_replica_reads_numeric_looking_members_by_number(
    pair: tuple[Server, Server], metadata: str
) -> None:
    """With MINIMAL metadata the replica gets the index, not the name: ENUM('3','2','1')'s
    index 3 must become the member '1', not the member '3'."""
    source, replica = pair
    table = "CREATE TABLE d.n (id INT PRIMARY KEY, e ENUM('3','2','1'), s SET('1','2','4'))"
    for server in pair:
        run(server, table)
    run(source, f"SET GLOBAL binlog_row_metadata = {metadata}")
    replicate = Replication(source, replica)
    replicate("INSERT INTO d.n VALUES (1, '1', '4,1'), (2, 1, 6), (3, '3', '')")
    replicate("UPDATE d.n SET e = '2', s = '2' WHERE id = 3")
    expected = [(1, "1", "1,4"), (2, "3", "2,4"), (3, "2", "2")]
    assert run(source, "SELECT id, e, s FROM d.n ORDER BY id") == expected
    assert run(replica, "SELECT id, e, s FROM d.n ORDER BY id") == expected


def test_crash_recovery_replays_enum_and_set_rows(tmp_path: Path) -> None:
    """kill -9 after a checkpoint: the rows events (MINIMAL metadata: numbers) replay to
    the members."""
    server = ServerProcess(tmp_path / "data").start()
    try:
        server.query("CREATE DATABASE d")
        server.query("CREATE TABLE d.n (id INT PRIMARY KEY, e ENUM('3','2','1'), s SET('x','y'))")
        server.query("INSERT INTO d.n VALUES (1, '1', 'y,x')")
        server.query("FLUSH BINARY LOGS")
        server.query("INSERT INTO d.n VALUES (2, 1, 2)")
        server.query("UPDATE d.n SET e = '2' WHERE id = 1")
        server.kill()
        server.start()
        assert server.query("SELECT id, e, s FROM d.n ORDER BY id") == [
            (1, "2", "x,y"),
            (2, "3", "y"),
        ]
    finally:
        server.stop()
