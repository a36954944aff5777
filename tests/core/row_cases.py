"""Column types and values for the row-event tests: a hypothesis strategy per type of the
SQL subset, drawing a column definition and values in the engine's stored form
(:mod:`rpl.core.engine.coercion`), and a fixed table of every type with edge values.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from typing import TypeAlias

from hypothesis import strategies as st

from rpl.core.binlog import events as ev
from rpl.core.engine.schema import ColumnSchema

Value: TypeAlias = ev.RowValue
Case: TypeAlias = tuple[ColumnSchema, tuple[str, ...], st.SearchStrategy[Value]]
"""A column, its ENUM/SET members, and a strategy of its non-NULL values."""

INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 24, "INT": 32, "BIGINT": 64}
TEXT_BYTES = {"TINYTEXT": 255, "TEXT": 65535, "MEDIUMTEXT": 16777215, "LONGTEXT": 2**32 - 1}
BLOB_BYTES = {"TINYBLOB": 255, "BLOB": 65535, "MEDIUMBLOB": 16777215, "LONGBLOB": 2**32 - 1}
TS_MIN = datetime.datetime(1970, 1, 1, 0, 0, 1)
TS_MAX = datetime.datetime(2038, 1, 19, 3, 14, 7, 999999)

CHARS = st.characters(codec="utf-8")
"""Any character UTF-8 can encode (no lone surrogates)."""
TEXT = st.text(CHARS, max_size=40)
ROW_METADATA: tuple[ev.RowMetadata, ...] = ("MINIMAL", "FULL")


def fmt_datetime(moment: datetime.datetime, fsp: int) -> str:
    """A DATETIME/TIMESTAMP as the engine stores it at ``fsp`` digits (truncated)."""
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.year < 1000:
        text = f"{moment.year:04d}" + text[text.index("-") :]
    return text + ("." + f"{moment.microsecond:06d}"[:fsp] if fsp else "")


def fmt_time(seconds: int, micro: int, negative: bool, fsp: int) -> str:
    """A TIME as the engine stores it."""
    micro = int(f"{micro:06d}"[:fsp].ljust(6, "0")) if fsp else 0
    sign = "-" if negative and (seconds or micro) else ""
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + ("." + f"{micro:06d}"[:fsp] if fsp else "")


def _int_case(draw: st.DrawFn, name: str) -> Case:
    kind = draw(st.sampled_from(sorted(INT_BITS)))
    unsigned = draw(st.booleans())
    bits = INT_BITS[kind]
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return ColumnSchema(name, kind, unsigned=unsigned), (), st.integers(low, high)


def _decimal_case(draw: st.DrawFn, name: str) -> Case:
    precision = draw(st.integers(1, 65))
    scale = draw(st.integers(0, min(precision, 30)))
    limit = 10**precision - 1
    values = st.integers(-limit, limit).map(
        lambda n: decimal.Decimal(n).scaleb(-scale, decimal.Context(prec=100))
    )
    return ColumnSchema(name, "DECIMAL", precision, scale=scale), (), values


def _string_case(draw: st.DrawFn, name: str) -> Case:
    kind = draw(st.sampled_from(["CHAR", "BINARY", "VARCHAR", "VARBINARY"]))
    length = draw(st.integers(1, 255 if kind in ("CHAR", "BINARY") else 300))
    column = ColumnSchema(name, kind, length)
    if kind == "CHAR":
        return column, (), st.text(CHARS, max_size=min(length, 40)).map(lambda t: t.rstrip(" "))
    if kind == "BINARY":
        return column, (), st.binary(max_size=length).map(lambda b: b.ljust(length, b"\0"))
    if kind == "VARCHAR":
        return column, (), st.text(CHARS, max_size=min(length, 40))
    return column, (), st.binary(max_size=length)


def _lob_case(draw: st.DrawFn, name: str) -> Case:
    kind = draw(st.sampled_from(sorted(TEXT_BYTES) + sorted(BLOB_BYTES)))
    if kind in TEXT_BYTES:
        return ColumnSchema(name, kind), (), TEXT
    return ColumnSchema(name, kind), (), st.binary(max_size=300)


def _temporal_case(draw: st.DrawFn, name: str) -> Case:
    kind = draw(st.sampled_from(["DATE", "DATETIME", "TIMESTAMP", "TIME", "YEAR"]))
    fsp = draw(st.integers(0, 6))
    if kind == "DATE":
        return (
            ColumnSchema(name, kind),
            (),
            st.dates(datetime.date(1000, 1, 1)).map(
                lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
            ),
        )
    if kind == "DATETIME":
        return (
            ColumnSchema(name, kind, fsp),
            (),
            st.datetimes(datetime.datetime(1000, 1, 1)).map(lambda m: fmt_datetime(m, fsp)),
        )
    if kind == "TIMESTAMP":
        return (
            ColumnSchema(name, kind, fsp),
            (),
            st.datetimes(TS_MIN, TS_MAX).map(lambda m: fmt_datetime(m, fsp)),
        )
    if kind == "TIME":
        return (
            ColumnSchema(name, kind, fsp),
            (),
            st.builds(
                fmt_time,
                st.integers(0, 838 * 3600 + 59 * 60 + 59),
                st.integers(0, 999999),
                st.booleans(),
                st.just(fsp),
            ),
        )
    return ColumnSchema(name, kind), (), st.one_of(st.just(0), st.integers(1901, 2155))


def _members_case(draw: st.DrawFn, name: str) -> Case:
    kind = draw(st.sampled_from(["ENUM", "SET", "BIT"]))
    if kind == "BIT":
        bits = draw(st.integers(1, 64))
        return ColumnSchema(name, kind, bits), (), st.integers(0, 2**bits - 1)
    count = draw(st.integers(1, 300 if kind == "ENUM" else 64))
    members = tuple(f"m{i}" for i in range(count))
    if kind == "ENUM":
        return ColumnSchema(name, kind), members, st.sampled_from(("", *members))
    subsets = st.sets(st.integers(0, count - 1)).map(
        lambda chosen: ",".join(members[i] for i in sorted(chosen))
    )
    return ColumnSchema(name, kind), members, subsets


def _float_case(draw: st.DrawFn, name: str) -> Case:
    if draw(st.booleans()):
        return (
            ColumnSchema(name, "FLOAT"),
            (),
            st.floats(width=32, allow_nan=False, allow_infinity=False),
        )
    return ColumnSchema(name, "DOUBLE"), (), st.floats(allow_nan=False, allow_infinity=False)


FAMILIES: dict[str, Callable[[st.DrawFn, str], Case]] = {
    "int": _int_case,
    "decimal": _decimal_case,
    "string": _string_case,
    "lob": _lob_case,
    "temporal": _temporal_case,
    "members": _members_case,
    "float": _float_case,
}


@st.composite
def cases(draw: st.DrawFn, name: str = "c") -> Case:
    """A column of any type of the subset, its members and its values' strategy."""
    family = draw(st.sampled_from(sorted(FAMILIES)))
    column, members, values = FAMILIES[family](draw, name)
    nullable = draw(st.booleans())
    return (
        ColumnSchema(
            column.name,
            column.type_name,
            column.length,
            column.unsigned,
            nullable,
            scale=column.scale,
        ),
        members,
        values,
    )


@st.composite
def tables(
    draw: st.DrawFn, max_columns: int = 8
) -> tuple[ev.TableMapEvent, list[st.SearchStrategy[Value]]]:
    """A table map of 1..max_columns columns (column 0 the key, NOT NULL) and, per column,
    a strategy of its values, NULL included where the column allows it.
    """
    count = draw(st.integers(1, max_columns))
    drawn = [draw(cases(f"c{i}")) for i in range(count)]
    columns, strategies = [], []
    for i, (column, members, values) in enumerate(drawn):
        if i == 0:
            column = ColumnSchema(
                column.name,
                column.type_name,
                column.length,
                column.unsigned,
                False,
                scale=column.scale,
            )
        columns.append(ev.binlog_column(column, members))
        strategies.append(st.one_of(st.none(), values) if column.nullable else values)
    metadata = draw(st.sampled_from(ROW_METADATA))
    table_map = ev.TableMapEvent(
        draw(st.integers(0, 2**48 - 1)),
        "db",
        "t",
        tuple(columns),
        row_metadata=metadata,
        primary_key=(0,),
    )
    return table_map, strategies


EVERY_TYPE: list[tuple[ColumnSchema, tuple[str, ...]]] = [
    (ColumnSchema("id", "INT", nullable=False), ()),
    (ColumnSchema("ti", "TINYINT"), ()),
    (ColumnSchema("tu", "TINYINT", unsigned=True), ()),
    (ColumnSchema("si", "SMALLINT"), ()),
    (ColumnSchema("su", "SMALLINT", unsigned=True), ()),
    (ColumnSchema("mi", "MEDIUMINT"), ()),
    (ColumnSchema("mu", "MEDIUMINT", unsigned=True), ()),
    (ColumnSchema("ii", "INT"), ()),
    (ColumnSchema("iu", "INT", unsigned=True), ()),
    (ColumnSchema("bi", "BIGINT"), ()),
    (ColumnSchema("bu", "BIGINT", unsigned=True), ()),
    (ColumnSchema("fl", "FLOAT"), ()),
    (ColumnSchema("db", "DOUBLE"), ()),
    (ColumnSchema("d1", "DECIMAL", 10, scale=0), ()),
    (ColumnSchema("d2", "DECIMAL", 65, scale=30), ()),
    (ColumnSchema("d3", "DECIMAL", 5, scale=5), ()),
    (ColumnSchema("d4", "DECIMAL", 20, scale=6), ()),
    (ColumnSchema("ch", "CHAR", 10), ()),
    (ColumnSchema("ch2", "CHAR", 100), ()),
    (ColumnSchema("bn", "BINARY", 4), ()),
    (ColumnSchema("vc", "VARCHAR", 20), ()),
    (ColumnSchema("vc2", "VARCHAR", 300), ()),
    (ColumnSchema("vb", "VARBINARY", 20), ()),
    (ColumnSchema("vb2", "VARBINARY", 300), ()),
    (ColumnSchema("tt", "TINYTEXT"), ()),
    (ColumnSchema("tx", "TEXT"), ()),
    (ColumnSchema("mt", "MEDIUMTEXT"), ()),
    (ColumnSchema("lt", "LONGTEXT"), ()),
    (ColumnSchema("tb", "TINYBLOB"), ()),
    (ColumnSchema("bl", "BLOB"), ()),
    (ColumnSchema("mb", "MEDIUMBLOB"), ()),
    (ColumnSchema("lb", "LONGBLOB"), ()),
    (ColumnSchema("dt", "DATE"), ()),
    (ColumnSchema("dt0", "DATETIME"), ()),
    (ColumnSchema("dt3", "DATETIME", 3), ()),
    (ColumnSchema("dt6", "DATETIME", 6), ()),
    (ColumnSchema("ts0", "TIMESTAMP"), ()),
    (ColumnSchema("ts2", "TIMESTAMP", 2), ()),
    (ColumnSchema("ts6", "TIMESTAMP", 6), ()),
    (ColumnSchema("tm0", "TIME"), ()),
    (ColumnSchema("tm1", "TIME", 1), ()),
    (ColumnSchema("tm4", "TIME", 4), ()),
    (ColumnSchema("tm6", "TIME", 6), ()),
    (ColumnSchema("yr", "YEAR"), ()),
    (ColumnSchema("en", "ENUM"), ("small", "medium", "large")),
    (ColumnSchema("en2", "ENUM"), tuple(f"e{i}" for i in range(300))),
    (ColumnSchema("st", "SET"), ("a", "b", "c", "d")),
    (ColumnSchema("st2", "SET"), tuple(f"s{i}" for i in range(40))),
    (ColumnSchema("bt", "BIT", 10), ()),
    (ColumnSchema("bt64", "BIT", 64), ()),
]
"""One column of each type and size class of the subset (1- and 2-byte lengths, each
fractional-second width, 1- and 2-byte ENUM indexes, 1- and 8-byte SETs)."""

EVERY_TYPE_ROWS: list[tuple[Value, ...]] = [
    (
        1,
        -128,
        255,
        -32768,
        65535,
        -8388608,
        16777215,
        -2147483648,
        4294967295,
        -(2**63),
        2**64 - 1,
        1.5,
        -2.25,
        decimal.Decimal("-1234567890"),
        decimal.Decimal("-" + "9" * 35 + "." + "9" * 30),
        decimal.Decimal("0.12345"),
        decimal.Decimal("-12345678901234.123456"),
        "héllo",
        "x" * 100,
        b"ab\0\0",
        "wörld",
        "ü" * 300,
        b"\x00\x01'\\",
        b"\xff" * 300,
        "tiny ✓",
        "text",
        "medium",
        "long",
        b"\x01\x02",
        b"",
        b"\x7f",
        b"lb",
        "1000-01-01",
        "1000-01-01 00:00:00",
        "9999-12-31 23:59:59.999",
        "2024-02-29 12:34:56.123456",
        "1970-01-01 00:00:01",
        "2038-01-19 03:14:07.99",
        "2000-06-15 08:09:10.000001",
        "-838:59:59",
        "-00:00:00.5",
        "838:59:59.9999",
        "-12:34:56.123456",
        0,
        "",
        "e299",
        "",
        "s0,s39",
        0,
        2**64 - 1,
    ),
    (
        2,
        127,
        0,
        32767,
        0,
        8388607,
        0,
        2147483647,
        0,
        2**63 - 1,
        0,
        3.4028234663852886e38,
        1.7976931348623157e308,
        decimal.Decimal("9999999999"),
        decimal.Decimal(0).scaleb(-30),
        decimal.Decimal("-0.00001"),
        decimal.Decimal("0.000001"),
        "",
        "",
        b"\0\0\0\0",
        "",
        "",
        b"",
        b"",
        "",
        "",
        "",
        "",
        b"",
        b"",
        b"",
        b"",
        "9999-12-31",
        "2024-12-31 23:59:58",
        "2000-01-01 00:00:00.000",
        "1000-01-01 00:00:00.000000",
        "2038-01-19 03:14:07",
        "1970-01-01 00:00:01.00",
        "2024-02-29 23:59:59.999999",
        "00:00:00",
        "12:00:00.5",
        "-00:00:00.0001",
        "00:00:00.000000",
        1901,
        "small",
        "e0",
        "a,b,c,d",
        "",
        513,
        1,
    ),
    (3, *([None] * (len(EVERY_TYPE) - 1))),
]
"""Rows of :data:`EVERY_TYPE`: the ranges' ends, negative fractions, empty strings,
bytes below 0x20 and quotes, NULLs."""


def every_type_table(metadata: ev.RowMetadata = "FULL", table_id: int = 77) -> ev.TableMapEvent:
    """The TABLE_MAP of :data:`EVERY_TYPE` (``db1.t1``)."""
    return ev.TableMapEvent(
        table_id,
        "db1",
        "t1",
        tuple(ev.binlog_column(c, m) for c, m in EVERY_TYPE),
        row_metadata=metadata,
        primary_key=(0,),
    )
