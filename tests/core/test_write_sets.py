"""Write sets as MySQL 8.0 computes them (transaction_write_set_extraction=XXHASH64).

The expected hashes are built here by hand from MySQL's layout in
``sql/rpl_write_set_handler.cc`` (``index½db½len(db)table½len(table)value½len(value)``,
XXH64 with seed 0), not with the module's helpers; two of them are the very numbers
MySQL's own debug checks (``debug_check_for_write_sets``) assert.
"""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors
import pytest
import xxhash

from rpl.core.binlog.dependency import WRITESET, DependencyTracker
from rpl.core.binlog.events import GtidEvent
from rpl.core.binlog.logfile import read_events
from rpl.core.engine import RowChange
from rpl.core.engine.schema import ColumnSchema, TableSchema
from rpl.core.execution.write_sets import write_set
from rpl.core.instance.server import Server, ServerConfig
from rpl.observers import TransParam, hookimpl

HALF = b"\xc2\xbd"
"""MySQL's HASH_STRING_SEPARATOR "½" in UTF-8."""


def xxh64(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data, seed=0)


def item(db: bytes, table: bytes, *values: bytes, index: bytes = b"PRIMARY") -> int:
    """One write-set item, spelled out as MySQL's add_pke builds it."""
    data = index + HALF + db + HALF + str(len(db)).encode() + table + HALF
    data += str(len(table)).encode()
    for value in values:
        data += value + HALF + str(len(value)).encode()
    return xxh64(data)


def table(*columns: ColumnSchema, key: tuple[str, ...] = ("id",), db: str = "test") -> TableSchema:
    return TableSchema(db, "t1", columns, key)


def insert(schema: TableSchema, *row: Any) -> RowChange:
    return RowChange("insert", schema, None, tuple(row))


INT_T = table(ColumnSchema("id", "INT"), ColumnSchema("v", "INT"))


def test_mysql_debug_constants_pin_the_layout_and_seed() -> None:
    """MySQL's debug build asserts these hashes for "PRIMARY½test½4t1½21½1" and
    "c2½test½4t1½22½1": our separator, seed and name/length order give the same."""
    assert item(b"test", b"t1", b"1") == 340395741608101502
    assert item(b"test", b"t1", b"2", index=b"c2") == 12796928550717161120
    binary = table(ColumnSchema("id", "VARBINARY", 10))
    assert write_set([insert(binary, b"1")]) == {340395741608101502}


def test_int_key_hashes_its_sort_key_image() -> None:
    """INT 1 is 80 00 00 01 (big-endian, sign bit flipped), 4 bytes long."""
    assert write_set([insert(INT_T, 1, 7)]) == {item(b"test", b"t1", b"\x80\x00\x00\x01")}
    assert write_set([insert(INT_T, -1, 7)]) == {item(b"test", b"t1", b"\x7f\xff\xff\xff")}
    unsigned = table(ColumnSchema("id", "BIGINT", unsigned=True))
    expected = item(b"test", b"t1", b"\xff" * 8)
    assert write_set([insert(unsigned, 2**64 - 1)]) == {expected}
    tiny = table(ColumnSchema("id", "TINYINT"))
    assert write_set([insert(tiny, 5)]) == {item(b"test", b"t1", b"\x85")}


def test_varchar_key_hashes_its_utf8_bytes() -> None:
    text = table(ColumnSchema("id", "VARCHAR", 20), db="shop")
    expected = item(b"shop", b"t1", "caf\u00e9".encode())
    assert expected == xxh64(b"PRIMARY\xc2\xbdshop\xc2\xbd4t1\xc2\xbd2caf\xc3\xa9\xc2\xbd5")
    assert write_set([insert(text, "caf\u00e9")]) == {expected}


def test_composite_key_parts_in_key_order() -> None:
    schema = table(ColumnSchema("a", "INT"), ColumnSchema("b", "VARCHAR", 8), key=("b", "a"))
    expected = item(b"test", b"t1", b"xy", b"\x80\x00\x00\x03")
    assert write_set([insert(schema, 3, "xy")]) == {expected}


def test_other_key_types() -> None:
    doubles = table(ColumnSchema("id", "DOUBLE"))
    zero = item(b"test", b"t1", b"\x80" + b"\x00" * 7)
    assert write_set([insert(doubles, 0.0), insert(doubles, -0.0)]) == {zero}
    one = item(b"test", b"t1", bytes.fromhex("bff0000000000000"))
    minus_one = item(b"test", b"t1", bytes.fromhex("400fffffffffffff"))
    assert write_set([insert(doubles, 1.0), insert(doubles, -1.0)]) == {one, minus_one}
    dates = table(ColumnSchema("id", "DATE"))
    day = (2024 * 16 * 32 + 5 * 32 + 17).to_bytes(3, "big")
    assert write_set([insert(dates, "2024-05-17")]) == {item(b"test", b"t1", day)}
    decimals = table(ColumnSchema("id", "DECIMAL", 5, scale=2))
    # decimal2bin of 123.45 in DECIMAL(5,2): 3 integer digits in 2 bytes, 2 in 1, sign bit
    image = bytes((0x80, 123, 45))
    assert write_set([insert(decimals, decimal.Decimal("123.45"))]) == {item(b"test", b"t1", image)}


def test_unique_and_foreign_keys_give_their_items() -> None:
    """A UNIQUE index is one more key (NULL parts give none); a FOREIGN KEY adds the
    parent's referenced key over the child's values, named by the parent's table."""
    from rpl.core.engine.schema import ForeignKey

    fk = ForeignKey("fk", ("pid",), "shop", "parent", ("id",), parent_key="PRIMARY")
    schema = TableSchema(
        "test",
        "t1",
        (ColumnSchema("id", "INT"), ColumnSchema("u", "INT"), ColumnSchema("pid", "INT")),
        ("id",),
        {"uu": ("u",), "plain": ("pid",)},
        unique={"uu"},
        foreign_keys=(fk,),
    )
    one, two, five = (b"\x80\x00\x00\x01", b"\x80\x00\x00\x02", b"\x80\x00\x00\x05")
    assert write_set([insert(schema, 1, 2, 5)]) == {
        item(b"test", b"t1", one),
        item(b"test", b"t1", two, index=b"uu"),
        item(b"shop", b"parent", five),
    }
    assert write_set([insert(schema, 1, None, None)]) == {item(b"test", b"t1", one)}


def test_update_of_the_key_gives_before_and_after_items() -> None:
    old, new = item(b"test", b"t1", b"\x80\x00\x00\x01"), item(b"test", b"t1", b"\x80\x00\x00\x02")
    moved = RowChange("update", INT_T, (1, 7), (2, 7))
    assert write_set([moved]) == {old, new}
    in_place = RowChange("update", INT_T, (1, 7), (1, 8))
    assert write_set([in_place]) == {old}
    assert write_set([RowChange("delete", INT_T, (1, 7), None)]) == {old}


def test_items_name_the_row_not_the_value() -> None:
    other_db = table(ColumnSchema("id", "INT"), db="prod")
    other_table = TableSchema("test", "t2", (ColumnSchema("id", "INT"),), ("id",))
    items = [write_set([insert(s, 1)]) for s in (INT_T, other_db, other_table)]
    assert len(set().union(*items)) == 3
    assert write_set([insert(INT_T, 1, 1), insert(INT_T, 1, 2)]) == items[0]
    assert all(0 <= i < 2**64 for i in items[0])


def test_writeset_dependency_of_items() -> None:
    clock = DependencyTracker()
    row1, row2 = write_set([insert(INT_T, 1, 0)]), write_set([insert(INT_T, 2, 0)])
    assert clock.next(row1, WRITESET, 100) == (0, 1)
    clock.group_written()
    assert clock.next(row2, WRITESET, 100) == (0, 2), "another row: independent"
    clock.group_written()
    assert clock.next(row1, WRITESET, 100) == (1, 3), "the same row: after its writer"
    clock.group_written()
    assert clock.next(frozenset(), WRITESET, 100) == (3, 4), "no items: commit order"
    clock.group_written()
    assert clock.next(row2, WRITESET, 100) == (4, 5), "and everything after waits for it"


# --- end to end: a server, its before_commit hook and its binlog ---------------------


@pytest.fixture
def live(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = Server(ServerConfig(datadir=tmp_path / "data", port=0))
    server.start()
    yield server
    server.shutdown()


class WriteSets:
    def __init__(self) -> None:
        self.seen: list[frozenset[int]] = []

    @hookimpl
    def before_commit(self, param: TransParam) -> None:
        self.seen.append(param.write_set)


def clock_of(server: Server) -> list[tuple[int, int]]:
    """(last_committed, sequence_number) of each transaction in the current binlog file."""
    current = server.binlog.directory / server.binlog.index.names()[-1]
    return [
        (entry.event.last_committed, entry.event.sequence_number)
        for entry in read_events(current)
        if isinstance(entry.event, GtidEvent)
    ]


def test_server_write_sets_and_writeset_dependencies(live: Server) -> None:
    connection: pymysql.Connection[pymysql.cursors.Cursor] = pymysql.connect(
        host="127.0.0.1", port=live.port, user="root", autocommit=True
    )
    cursor = connection.cursor()
    cursor.execute("CREATE DATABASE g")
    cursor.execute("CREATE TABLE g.t (id INT NOT NULL PRIMARY KEY, v INT)")
    cursor.execute("SET GLOBAL binlog_transaction_dependency_tracking = 'WRITESET'")
    cursor.execute("FLUSH BINARY LOGS")
    recorder = WriteSets()
    live.delegates.registry.register(recorder, "write_sets")
    cursor.execute("INSERT INTO g.t VALUES (1, 0)")
    cursor.execute("INSERT INTO g.t VALUES (2, 0)")
    cursor.execute("UPDATE g.t SET v = 1 WHERE id = 1")
    cursor.execute("UPDATE g.t SET id = 3 WHERE id = 2")
    cursor.execute("SELECT @@SESSION.transaction_write_set_extraction")
    assert cursor.fetchall() == (("XXHASH64",),)
    cursor.execute("SET SESSION binlog_format = 'STATEMENT'")  # OFF needs STATEMENT
    cursor.execute("SET SESSION transaction_write_set_extraction = 'OFF'")
    cursor.execute("UPDATE g.t SET v = 2 WHERE id = 1")
    cursor.execute("SET SESSION transaction_write_set_extraction = 'XXHASH64'")
    cursor.execute("SET SESSION binlog_format = 'ROW'")
    cursor.execute("INSERT INTO g.t VALUES (4, 0)")
    connection.close()

    def row(key: int) -> int:
        return item(b"g", b"t", (key + 2**31).to_bytes(4, "big"))

    assert recorder.seen == [
        {row(1)},
        {row(2)},
        {row(1)},
        {row(2), row(3)},
        frozenset(),
        {row(4)},
    ]
    assert clock_of(live) == [
        (0, 1),
        (0, 2),  # another row: independent of 1
        (1, 3),  # row 1 again: after 1
        (2, 4),  # row 2 moved to 3: after 2
        (4, 5),  # OFF: no items, commit order
        (5, 6),  # everything after an OFF transaction waits for it
    ]
