"""The storage engine: schemas and coercion, visibility, auto-increment, savepoints,
snapshot/restore and checksums.
"""

from __future__ import annotations

import io
import pickle
import threading
from decimal import Decimal

import pytest

from rpl.core.engine import (
    NO_DEFAULT,
    ColumnSchema,
    Engine,
    RowChange,
    Table,
    TableSchema,
    TransactionStateError,
    Value,
    coerce,
)
from rpl.core.engine.memo import SchemaMemo
from rpl.core.errors import MySQLError


def sbtest_schema(db: str = "test", name: str = "sbtest1") -> TableSchema:
    return TableSchema(
        db,
        name,
        (
            ColumnSchema("id", "INT", auto_increment=True, nullable=False),
            ColumnSchema("k", "INT", nullable=False, default=0),
            ColumnSchema("c", "CHAR", length=120, nullable=False, default=""),
            ColumnSchema("pad", "CHAR", length=60, nullable=False, default=""),
        ),
        ("id",),
        {"k_1": ("k",)},
    )


@pytest.fixture
def engine() -> Engine:
    engine = Engine(lambda: 0.2)
    engine.create_database("test")
    return engine


@pytest.fixture
def table(engine: Engine) -> Table:
    table = engine.create_table(sbtest_schema())
    assert table is not None
    return table


def errno(info: pytest.ExceptionInfo[MySQLError]) -> int:
    return info.value.errno


# --- schema ------------------------------------------------------------------------------------


def test_table_without_primary_key_is_refused() -> None:
    with pytest.raises(MySQLError) as info:
        TableSchema("d", "t", (ColumnSchema("a", "INT"),), ())
    assert errno(info) == 3750


def test_schema_validation_errors() -> None:
    a = ColumnSchema("a", "INT")
    with pytest.raises(MySQLError) as info:
        TableSchema("d", "t", (a, a), ("a",))
    assert errno(info) == 1060
    with pytest.raises(MySQLError) as info:
        TableSchema("d", "t", (a,), ("b",))
    assert errno(info) == 1072
    with pytest.raises(MySQLError) as info:  # auto column not the first column of a key
        TableSchema("d", "t", (a, ColumnSchema("b", "INT", auto_increment=True)), ("a",))
    assert errno(info) == 1075
    with pytest.raises(MySQLError) as info:
        TableSchema("d", "t", (a, ColumnSchema("b", "TINYINT", default=300)), ("a",))
    assert errno(info) == 1067


def test_primary_key_columns_become_not_null() -> None:
    schema = TableSchema("d", "t", (ColumnSchema("a", "int"), ColumnSchema("b", "INT")), ("a",))
    assert not schema.columns[0].nullable and schema.columns[1].nullable
    assert schema.columns[0].type_name == "INT"


def test_schema_pickles_with_derived_fields() -> None:
    schema = sbtest_schema()
    copy = pickle.loads(pickle.dumps(schema))
    assert copy == schema and copy.positions == {"id": 0, "k": 1, "c": 2, "pad": 3}
    assert copy.auto_increment_position == 0 and copy.default_row == (None, 0, "", "")
    assert hash(copy) == hash(schema)


def test_add_index_duplicate_name(engine: Engine, table: Table) -> None:
    engine.add_index("test", "sbtest1", "c_1", ["c"])
    assert table.schema.indexes == {"k_1": ("k",), "c_1": ("c",)}
    with pytest.raises(MySQLError) as info:
        engine.add_index("test", "sbtest1", "k_1", ["c"])
    assert errno(info) == 1061 and info.value.message == "Duplicate key name 'k_1'"
    with pytest.raises(MySQLError) as info:
        engine.add_index("test", "sbtest1", "x", ["nope"])
    assert errno(info) == 1072
    engine.drop_index("test", "sbtest1", "c_1")
    assert "c_1" not in table.schema.indexes
    with pytest.raises(MySQLError) as info:
        engine.drop_index("test", "sbtest1", "c_1")
    assert errno(info) == 1091


# --- coercion -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "value", "stored"),
    [
        (ColumnSchema("c", "INT"), "42", 42),
        (ColumnSchema("c", "INT"), " -7 ", -7),
        (ColumnSchema("c", "INT"), 2.5, 3),
        (ColumnSchema("c", "INT"), "-2.5", -3),
        (ColumnSchema("c", "INT"), True, 1),
        (ColumnSchema("c", "TINYINT", unsigned=True), 255, 255),
        (ColumnSchema("c", "BIGINT"), -(2**63), -(2**63)),
        (ColumnSchema("c", "CHAR", length=5), "ab  ", "ab"),
        (ColumnSchema("c", "VARCHAR", length=3), "ab    ", "ab "),
        (ColumnSchema("c", "VARCHAR", length=10), 12, "12"),
        (ColumnSchema("c", "BINARY", length=3), b"a", b"a\0\0"),
        (ColumnSchema("c", "BLOB"), "é", "é".encode()),
        (ColumnSchema("c", "DOUBLE"), "1.5e3", 1500.0),
        (ColumnSchema("c", "DECIMAL", length=5, scale=2), "3.14159", Decimal("3.14")),
        (ColumnSchema("c", "DECIMAL", length=5, scale=2), 2.005, Decimal("2.01")),
        (ColumnSchema("c", "DATE"), "2024-2-9", "2024-02-09"),
        (ColumnSchema("c", "DATETIME"), "2024-02-09 10:11:12.6", "2024-02-09 10:11:13"),
        (
            ColumnSchema("c", "DATETIME", length=3),
            "2024-02-09T10:11:12.1234",
            "2024-02-09 10:11:12.123",
        ),
        (ColumnSchema("c", "TIMESTAMP"), "20240209101112", "2024-02-09 10:11:12"),
        (ColumnSchema("c", "TIME"), "-12:3:4", "-12:03:04"),
        (ColumnSchema("c", "YEAR"), "99", 1999),
        (ColumnSchema("c", "INT"), None, None),
    ],
)
def test_coerce_stores(column: ColumnSchema, value: object, stored: object) -> None:
    result = coerce(column, value, 1)
    assert result == stored and type(result) is type(stored)


@pytest.mark.parametrize(
    ("column", "value", "code", "message"),
    [
        (
            ColumnSchema("c", "INT"),
            "x",
            1366,
            "Incorrect integer value: 'x' for column 'c' at row 3",
        ),
        (ColumnSchema("c", "INT"), "", 1366, "Incorrect integer value: '' for column 'c' at row 3"),
        (ColumnSchema("c", "INT"), 2**31, 1264, "Out of range value for column 'c' at row 3"),
        (
            ColumnSchema("c", "INT", unsigned=True),
            -1,
            1264,
            "Out of range value for column 'c' at row 3",
        ),
        (ColumnSchema("c", "TINYINT"), "128", 1264, "Out of range value for column 'c' at row 3"),
        (
            ColumnSchema("c", "VARCHAR", length=3),
            "abcd",
            1406,
            "Data too long for column 'c' at row 3",
        ),
        (ColumnSchema("c", "CHAR", length=2), "abc", 1406, "Data too long for column 'c' at row 3"),
        (
            ColumnSchema("c", "VARBINARY", length=2),
            b"abc",
            1406,
            "Data too long for column 'c' at row 3",
        ),
        (ColumnSchema("c", "INT", nullable=False), None, 1048, "Column 'c' cannot be null"),
        (
            ColumnSchema("c", "DOUBLE"),
            "1.2.3",
            1366,
            "Incorrect double value: '1.2.3' for column 'c' at row 3",
        ),
        (
            ColumnSchema("c", "DECIMAL", length=4, scale=2),
            "100",
            1264,
            "Out of range value for column 'c' at row 3",
        ),
        (
            ColumnSchema("c", "DATE"),
            "2024-02-30",
            1292,
            "Incorrect date value: '2024-02-30' for column 'c' at row 3",
        ),
        (
            ColumnSchema("c", "DATETIME"),
            "0000-00-00 00:00:00",
            1292,
            "Incorrect datetime value: '0000-00-00 00:00:00' for column 'c' at row 3",
        ),
        (
            ColumnSchema("c", "TIMESTAMP"),
            "2040-01-01 00:00:00",
            1292,
            "Incorrect timestamp value: '2040-01-01 00:00:00' for column 'c' at row 3",
        ),
    ],
)
def test_coerce_errors(column: ColumnSchema, value: object, code: int, message: str) -> None:
    with pytest.raises(MySQLError) as info:
        coerce(column, value, 3)
    assert errno(info) == code and info.value.message == message


# --- catalogue ----------------------------------------------------------------------------------


def test_database_and_table_ddl(engine: Engine) -> None:
    with pytest.raises(MySQLError) as info:
        engine.create_database("test")
    assert errno(info) == 1007
    assert engine.create_database("test", if_not_exists=True) is False
    with pytest.raises(MySQLError) as info:
        engine.create_table(sbtest_schema("nodb"))
    assert errno(info) == 1049
    assert engine.create_table(sbtest_schema()) is not None
    with pytest.raises(MySQLError) as info:
        engine.create_table(sbtest_schema())
    assert errno(info) == 1050
    assert engine.create_table(sbtest_schema(), if_not_exists=True) is None
    engine.create_table(sbtest_schema(name="sbtest2"))
    assert engine.tables("test") == ["sbtest1", "sbtest2"]
    with pytest.raises(MySQLError) as info:
        engine.table("test", "nope")
    assert errno(info) == 1146 and info.value.message == "Table 'test.nope' doesn't exist"
    assert engine.drop_table("test", "sbtest2") is True
    with pytest.raises(MySQLError) as info:
        engine.drop_table("test", "sbtest2")
    assert errno(info) == 1051
    assert engine.drop_table("test", "sbtest2", if_exists=True) is False
    assert engine.drop_database("test") == ["sbtest1"]
    assert not engine.has_database("test") and engine.databases() == []
    with pytest.raises(MySQLError) as info:
        engine.drop_database("test")
    assert errno(info) == 1008
    assert engine.drop_database("test", if_exists=True) == []


# --- visibility ---------------------------------------------------------------------------------


def test_own_writes_visible_others_not_until_commit(engine: Engine, table: Table) -> None:
    t1, t2 = engine.begin(1), engine.begin(2)
    pk = t1.insert(table, {"k": 5, "c": "x"})
    assert pk == 1
    assert t1.get(table, 1) == (1, 5, "x", "")
    assert t2.get(table, 1) is None and t2.scan(table) == []
    t1.update(table, 1, {"k": 6})
    assert t1.scan(table) == [(1, (1, 6, "x", ""))]
    t1.commit()
    assert t2.get(table, 1) == (1, 6, "x", "")
    t3 = engine.begin(3)
    t3.delete(table, 1)
    assert t3.get(table, 1) is None and t3.scan(table) == []
    assert t2.get(table, 1) == (1, 6, "x", "")
    t3.rollback()
    assert t2.get(table, 1) == (1, 6, "x", "")
    assert engine.locks.lock_count() == 0


def test_rollback_leaves_nothing(engine: Engine, table: Table) -> None:
    t1 = engine.begin(1)
    for i in range(5):
        t1.insert(table, {"k": i})
    t1.rollback()
    t2 = engine.begin(2)
    assert t2.scan(table) == [] and len(table) == 0 and engine.locks.lock_count() == 0
    t1.rollback()  # a no-op now
    with pytest.raises(TransactionStateError):
        t1.commit()
    with pytest.raises(TransactionStateError):
        t1.insert(table, {"k": 1})


def test_commit_twice_is_an_error(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    trx.insert(table, {"k": 1})
    trx.commit()
    with pytest.raises(TransactionStateError):
        trx.commit()
    assert trx.state == "COMMITTED" and len(table) == 1


def test_scan_merges_own_writes_with_bounds_order_and_limit(engine: Engine, table: Table) -> None:
    setup = engine.begin(1)
    for i in range(1, 11):
        setup.insert(table, {"id": i * 10, "k": i})
    setup.commit()
    trx = engine.begin(2)
    trx.delete(table, 30)
    trx.insert(table, {"id": 35, "k": 0})
    trx.update(table, 50, {"k": 99})
    keys = [pk for pk, _ in trx.scan(table, 20, 60)]
    assert keys == [20, 35, 40, 50, 60]
    assert trx.scan(table, 20, 60)[3][1][1] == 99
    assert [pk for pk, _ in trx.scan(table, 20, 60, inclusive=(False, False))] == [35, 40, 50]
    assert [pk for pk, _ in trx.scan(table, reverse=True, limit=3)] == [100, 90, 80]
    assert [pk for pk, _ in trx.scan(table, limit=3)] == [10, 20, 35]
    assert [pk for pk, _ in trx.scan(table, lo=95)] == [100]
    other = engine.begin(3)
    assert [pk for pk, _ in other.scan(table, 20, 60)] == [20, 30, 40, 50, 60]


def test_reader_never_sees_half_a_transaction(engine: Engine, table: Table) -> None:
    setup = engine.begin(0)
    for i in range(1, 201):
        setup.insert(table, {"id": i, "k": 0})
    setup.commit()
    stop = threading.Event()
    torn: list[set[Value]] = []

    def writer() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            trx = engine.begin(1)
            for i in range(1, 201):
                trx.update(table, i, {"k": n})
            trx.commit()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        reader = engine.begin(2)
        for _ in range(300):
            ks = {row[1] for _, row in reader.scan(table)}
            if len(ks) != 1:
                torn.append(ks)
    finally:
        stop.set()
        thread.join()
    assert torn == []


def test_changes_are_ordered_and_resolved(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    trx.insert(table, {"k": 1})
    trx.insert(table, (None, 2, "b", "p"))
    same = trx.update(table, 1, {"k": 1})
    assert same is not None and same.before == same.after
    trx.update(table, 2, {"c": "z"})
    trx.delete(table, 1)
    schema = table.schema
    assert trx.changes() == [
        RowChange("insert", schema, None, (1, 1, "", "")),
        RowChange("insert", schema, None, (2, 2, "b", "p")),
        RowChange("update", schema, (2, 2, "b", "p"), (2, 2, "z", "p")),
        RowChange("delete", schema, (1, 1, "", ""), None),
    ]
    assert trx.update(table, 1, {"k": 5}) is None and trx.delete(table, 1) is None


def test_update_of_primary_key_moves_the_row(engine: Engine, table: Table) -> None:
    setup = engine.begin(1)
    setup.insert(table, {"id": 1})
    setup.insert(table, {"id": 2})
    setup.commit()
    trx = engine.begin(2)
    with pytest.raises(MySQLError) as info:
        trx.update(table, 1, {"id": 2})
    assert errno(info) == 1062
    change = trx.update(table, 1, {"id": 7})
    assert change is not None
    assert change.before == (1, 0, "", "") and change.after == (7, 0, "", "")
    assert trx.get(table, 1) is None and trx.get(table, 7) == (7, 0, "", "")
    assert trx.lock_count == 3  # 1, 7, and 2 from the failed attempt
    trx.commit()
    assert list(table.rows) == [2, 7]
    assert table.auto_increment == 8


def test_insert_errors(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    with pytest.raises(MySQLError) as info:
        trx.insert(table, {"k": 1, "nope": 2})
    assert errno(info) == 1054 and info.value.message == "Unknown column 'nope' in 'field list'"
    with pytest.raises(MySQLError) as info:
        trx.insert(table, (1, 2), row_number=4)
    assert errno(info) == 1136 and info.value.message.endswith("at row 4")
    with pytest.raises(MySQLError) as info:
        trx.insert(table, {"k": "abc"}, row_number=2)
    assert info.value.message == "Incorrect integer value: 'abc' for column 'k' at row 2"
    with pytest.raises(MySQLError) as info:
        trx.insert(table, {"k": None})
    assert errno(info) == 1048
    strict = engine.create_table(
        TableSchema(
            "test",
            "strict",
            (ColumnSchema("id", "INT"), ColumnSchema("v", "INT", nullable=False)),
            ("id",),
        )
    )
    assert strict is not None
    with pytest.raises(MySQLError) as info:
        trx.insert(strict, {"id": 1})
    assert errno(info) == 1364 and info.value.message == "Field 'v' doesn't have a default value"
    nullable = engine.create_table(
        TableSchema(
            "test",
            "nullable",
            (ColumnSchema("id", "INT"), ColumnSchema("v", "INT", default=NO_DEFAULT)),
            ("id",),
        )
    )
    assert nullable is not None
    trx.insert(nullable, {"id": 1})
    assert trx.get(nullable, 1) == (1, None)


def test_composite_primary_key(engine: Engine) -> None:
    table = engine.create_table(
        TableSchema(
            "test",
            "c",
            (
                ColumnSchema("a", "INT"),
                ColumnSchema("b", "VARCHAR", length=10),
                ColumnSchema("v", "INT"),
            ),
            ("b", "a"),
        )
    )
    assert table is not None
    trx = engine.begin(1)
    assert trx.insert(table, {"a": 1, "b": "x", "v": 0}) == ("x", 1)
    trx.insert(table, {"a": 2, "b": "x", "v": 0})
    with pytest.raises(MySQLError) as info:
        trx.insert(table, {"a": 1, "b": "x", "v": 9})
    assert info.value.message == "Duplicate entry 'x-1' for key 'c.PRIMARY'"
    trx.commit()
    assert list(table.rows) == [("x", 1), ("x", 2)]


# --- auto-increment -----------------------------------------------------------------------------


def test_auto_increment_rules(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    assert trx.insert(table, {"k": 0}) == 1
    assert trx.insert(table, {"id": None}) == 2
    assert trx.insert(table, {"id": 0}) == 3
    assert trx.insert(table, {"id": "0"}) == 4
    assert trx.insert(table, {"id": 10}) == 10
    assert trx.insert(table, {}) == 11
    assert trx.insert(table, {"id": 5}) == 5  # smaller explicit value: counter unchanged
    assert trx.insert(table, {}) == 12
    trx.rollback()
    other = engine.begin(2)
    assert other.insert(table, {}) == 13  # ROLLBACK does not give values back
    with pytest.raises(MySQLError):
        other.insert(table, {"id": 13})
    assert other.insert(table, {}) == 14
    assert table.auto_increment == 15


def test_auto_increment_increment_and_offset(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    trx.auto_increment_increment, trx.auto_increment_offset = 7, 3
    assert [trx.insert(table, {}) for _ in range(3)] == [3, 10, 17]
    trx.insert(table, {"id": 20})
    assert trx.insert(table, {}) == 24


def test_set_auto_increment_not_below_largest(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    trx.insert(table, {"id": 50})
    trx.commit()
    table.set_auto_increment(10)
    assert table.auto_increment == 51
    table.set_auto_increment(100)
    assert table.auto_increment == 100


# --- savepoints ---------------------------------------------------------------------------------


def test_failed_multi_row_statement_is_undone(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    trx.insert(table, {"id": 1, "k": 1})
    before = trx.changes()
    statement = trx.savepoint()
    trx.insert(table, {"id": 2, "k": 2}, row_number=1)
    trx.update(table, 1, {"k": 100})
    trx.delete(table, 1)
    trx.insert(table, {"id": 1, "k": 3}, row_number=3)
    with pytest.raises(MySQLError) as info:
        trx.insert(table, {"id": 2, "k": 4}, row_number=4)
    assert info.value.message == "Duplicate entry '2' for key 'sbtest1.PRIMARY'"
    trx.rollback_to(statement)
    assert trx.changes() == before
    assert trx.scan(table) == [(1, (1, 1, "", ""))]
    assert trx.lock_count == 2  # locks taken by the failed statement stay, as in MySQL
    trx.update(table, 1, {"k": 7})
    trx.commit()
    assert dict(table.rows) == {1: (1, 7, "", "")}
    with pytest.raises(TransactionStateError):
        trx.rollback_to(0)


def test_nested_savepoints(engine: Engine, table: Table) -> None:
    trx = engine.begin(1)
    first = trx.savepoint()
    trx.insert(table, {"id": 1})
    second = trx.savepoint()
    trx.update(table, 1, {"id": 2})
    assert trx.get(table, 2) is not None
    trx.rollback_to(second)
    assert trx.get(table, 1) == (1, 0, "", "") and trx.get(table, 2) is None
    trx.rollback_to(first)
    assert trx.get(table, 1) is None and not trx.has_changes
    with pytest.raises(ValueError, match="not valid"):
        trx.rollback_to(5)


# --- checkpoint and checksum --------------------------------------------------------------------


def fill(engine: Engine, table: Table, n: int = 50) -> None:
    trx = engine.begin(9)
    for i in range(n):
        trx.insert(table, {"k": i * 3, "c": f"row-{i}", "pad": "p" * (i % 7)})
    trx.commit()


def test_snapshot_restore_equality(engine: Engine, table: Table) -> None:
    fill(engine, table)
    engine.create_database("other")
    extra = engine.create_table(
        TableSchema(
            "other",
            "kinds",
            (
                ColumnSchema("id", "BIGINT"),
                ColumnSchema("d", "DECIMAL", length=8, scale=3),
                ColumnSchema("f", "DOUBLE"),
                ColumnSchema("b", "BLOB"),
                ColumnSchema("n", "VARCHAR", length=5),
            ),
            ("id",),
        )
    )
    assert extra is not None
    trx = engine.begin(1)
    trx.insert(extra, {"id": 1, "d": "1.5", "f": 0.1, "b": b"\x00\xff", "n": None})
    trx.commit()
    trx = engine.begin(2)
    trx.insert(table, {"id": 1000})
    trx.rollback()  # the counter keeps the consumed value
    open_trx = engine.begin(3)
    open_trx.insert(table, {"k": -1})  # uncommitted: not in the snapshot
    buffer = io.BytesIO()
    engine.snapshot(buffer)
    buffer.seek(0)
    restored = Engine.restore(buffer, lambda: 0.2)
    assert restored.databases() == ["other", "test"]
    for db in restored.databases():
        for name in restored.tables(db):
            a, b = engine.table(db, name), restored.table(db, name)
            assert a.schema == b.schema and dict(a.rows) == dict(b.rows)
            assert list(a.rows) == list(b.rows)
            assert a.auto_increment == b.auto_increment
            assert a.checksum() == b.checksum()
    assert restored.table("test", "sbtest1").auto_increment == 1002
    assert len(restored.table("test", "sbtest1")) == 50
    new = restored.begin(1)
    assert new.insert(restored.table("test", "sbtest1"), {}) == 1002
    with pytest.raises(ValueError, match="not an engine snapshot"):
        Engine.restore(io.BytesIO(b"garbage"))


def test_checksum_equal_and_different() -> None:
    engines = [Engine(), Engine()]
    tables = []
    for engine in engines:
        engine.create_database("test")
        table = engine.create_table(sbtest_schema())
        assert table is not None
        fill(engine, table)
        tables.append(table)
    assert tables[0].checksum() == tables[1].checksum() != 0
    trx = engines[1].begin(1)
    trx.update(tables[1], 7, {"pad": "q"})
    assert tables[0].checksum() == tables[1].checksum()  # uncommitted changes do not count
    trx.commit()
    assert tables[0].checksum() != tables[1].checksum()
    trx = engines[1].begin(1)
    trx.update(tables[1], 7, {"pad": tables[0].rows[7][3]})
    trx.commit()
    assert tables[0].checksum() == tables[1].checksum()
    trx = engines[1].begin(1)
    trx.delete(tables[1], 50)
    trx.commit()
    assert tables[0].checksum() != tables[1].checksum()


def test_checksum_distinguishes_types_and_boundaries(engine: Engine) -> None:
    table = engine.create_table(
        TableSchema(
            "test",
            "t",
            (
                ColumnSchema("id", "INT"),
                ColumnSchema("a", "VARCHAR", length=10),
                ColumnSchema("b", "VARCHAR", length=10),
            ),
            ("id",),
        )
    )
    assert table is not None
    assert table.checksum() == 0
    sums = set()
    for a, b in (("ab", "c"), ("a", "bc"), (None, "abc"), ("", "abc")):
        trx = engine.begin(1)
        trx.delete(table, 1)
        trx.insert(table, {"id": 1, "a": a, "b": b})
        trx.commit()
        sums.add(table.checksum())
    assert len(sums) == 4


def test_status_counters_named_as_mysql(engine: Engine) -> None:
    status = engine.status()
    assert status["Innodb_row_lock_waits"] == 0 and status["Innodb_deadlocks"] == 0
    assert set(status) >= {
        "Innodb_row_lock_current_waits",
        "Innodb_row_lock_time",
        "Innodb_row_lock_time_avg",
        "Innodb_row_lock_time_max",
    }


# ------------------------------------------------------------------- SchemaMemo
def test_schema_memo_computes_once_per_definition_and_key() -> None:
    calls: list[tuple[str, int]] = []

    def make(schema: TableSchema, key: int) -> str:
        if key < 0:
            raise MySQLError(1054, "42S22", "bad key")
        calls.append((schema.name, key))
        return f"{schema.name}:{key}"

    memo: SchemaMemo[int, str] = SchemaMemo(make, kept=3)
    first, again = sbtest_schema(name="t"), sbtest_schema(name="t")
    assert memo.get(first, 1) == "t:1" and memo.get(first, 1) == "t:1"
    assert calls == [("t", 1)]
    assert memo.get(again, 1) == "t:1" and calls == [("t", 1), ("t", 1)], (
        "an equal definition that is another object (DDL made it) is computed again"
    )
    with pytest.raises(MySQLError):
        memo.get(first, -1)
    assert len(memo) == 2, "a failed computation keeps nothing"
    memo.get(first, 2)
    memo.get(first, 3)
    assert len(memo) == 1, "full at 3 entries: emptied before the fourth"
